"""``cutediff bench``: any recipe with a bench hook, both toolchains on one GPU, per kernel.

Registered in :data:`cutediff_tui.cli.COMMANDS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from ..core.errors import CutediffError
from ..core.options import command_line, compare_options, parse_side_params
from .common import (
    complete_versions,
    emit_json,
    err_console,
    examples,
    guarded,
    json_option,
    kernel_filter_option,
    out_console,
    progress_printer,
    recipe_options,
    side_param_options,
    standard_options,
)


@click.command(
    epilog=examples(
        "cutediff bench 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 --recipe fa4-fwdbwd",
        "cutediff bench 4.8.0 4.8.0 --recipe samples/recipes/local_array.py --a-param dynamic=false --b-param dynamic=true --profile",
        "cutediff bench 4.5.1 4.8.0 --recipe fa4-fwd --into result/ --json bench.json",
    )
)
@click.argument("a", shell_complete=complete_versions)
@click.argument("b", shell_complete=complete_versions)
@recipe_options
@side_param_options
@click.option(
    "--shape", "shapes", multiple=True, help="FA4: TOTALxHEADSh/DOCS (default: 8192x32h/4, 32768x32h/8, 32768x16h/1)."
)
@click.option("--rounds", type=int, default=10, show_default=True, help="Rounds per side (A and B alternate).")
@click.option("--warmup", type=int, default=5, show_default=True, help="Untimed calls before each round.")
@click.option("--iters", type=int, default=20, show_default=True, help="Timed calls per round (one sample each).")
@click.option(
    "--min-round-ms",
    type=float,
    default=100.0,
    show_default=True,
    help="Repeat a short case's calls until a round lasts this long on the GPU (0: exactly --iters).",
)
@click.option("--l2-flush", is_flag=True, help="Clear the L2 cache before each timed call.")
@click.option("--tolerance", type=float, default=0.01, show_default=True, help="Relative change counted as SAME.")
@click.option("--no-kernels", is_flag=True, help="Skip the per-kernel times (CUPTI through torch.profiler).")
@click.option("--profile", is_flag=True, help="Nsight Compute on both sides: spill traffic, occupancy, stalls.")
@kernel_filter_option("--profile measures only these.")
@click.option("--profile-dir", type=click.Path(path_type=Path), default=None, help="Keep ncu's CSV outputs here.")
@click.option("--scheduler", default=None, help="Run on a Dask worker with a GPU: tcp://HOST:8786.")
@json_option()
@click.option(
    "--into",
    type=click.Path(path_type=Path),
    default=None,
    help="Attach the result to a saved comparison (its reports then show the bench).",
)
@standard_options
@guarded
def bench(a: str, b: str, **kw: Any) -> None:
    """Time both toolchains on one GPU, interleaved: per call and per kernel, with medians, a B/A
    interval and a verdict; --profile adds Nsight Compute's spill traffic and stalls."""
    from ..core.bench.plan import plan_bench
    from ..core.bench.remote import run_planned
    from ..render_bench import bench_tables

    if kw["rounds"] < 1 or kw["iters"] < 1 or kw["warmup"] < 0 or not 0 <= kw["min_round_ms"] <= 60_000:
        raise CutediffError(
            "--rounds and --iters must be at least 1, --warmup at least 0 and --min-round-ms between 0 and 60000."
        )
    opts = compare_options(a, b, kw)
    side_params = (parse_side_params(kw["a_params"], "--a-param"), parse_side_params(kw["b_params"], "--b-param"))
    plan = plan_bench(
        opts,
        side_params,
        shapes=kw["shapes"],
        rounds=kw["rounds"],
        warmup=kw["warmup"],
        iters=kw["iters"],
        min_round_ms=kw["min_round_ms"],
        l2_flush=kw["l2_flush"],
        tolerance=kw["tolerance"],
        kernels=not kw["no_kernels"],
        profile=kw["profile"],
        kernel_filter=kw["kernel_filter"],
        profile_dir=kw["profile_dir"],
        local=kw["scheduler"] is None,
    )
    progress = progress_printer()
    result = run_planned(plan, progress, scheduler=kw["scheduler"], wheelhouse=kw.get("wheelhouse"))
    result["command"] = command_line()
    if kw["into"] is not None:
        from ..core.bench.attach import attach_bench

        attach_bench(kw["into"], result)
        progress(f"attached the bench to {kw['into']}")
    if not emit_json(result, kw["json_out"], progress):
        return
    for renderable in bench_tables(result):
        out_console.print(renderable)
    prof = result.get("profile") or {}
    if prof.get("error"):
        err_console.print(f"[yellow]profile:[/] {escape(str(prof['error']))}", soft_wrap=True)


for _p in bench.params:  # the bench's default recipe is FA4 forward + backward (compare's is the forward)
    if _p.name == "kernel":
        _p.default = "fa4-fwdbwd"
