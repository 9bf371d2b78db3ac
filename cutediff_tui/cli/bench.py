"""``cutediff bench``: any recipe with a bench hook, both toolchains on one GPU, per kernel.

Registered in :data:`cutediff_tui.cli.COMMANDS`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..core.errors import CutediffError
from ..core.options import command_line, compare_options
from .common import err_console, guarded, out_console, progress_printer, recipe_options


def _side_params(items: tuple[str, ...], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise CutediffError(f"{flag} {item!r} is not NAME=VALUE.", f"Write it as e.g. {flag} hdim=64.")
        k, v = item.split("=", 1)
        out[k.replace("-", "_")] = v
    return out


@click.command()
@click.argument("a")
@click.argument("b")
@recipe_options
@click.option("--a-param", "a_params", multiple=True, help="Parameter for side A only, NAME=VALUE.")
@click.option("--b-param", "b_params", multiple=True, help="Parameter for side B only, NAME=VALUE.")
@click.option(
    "--shape", "shapes", multiple=True, help="FA4: TOTALxHEADSh/DOCS (default: 8192x32h/4, 32768x32h/8, 32768x16h/1)."
)
@click.option("--rounds", type=int, default=10, show_default=True, help="Rounds per side (A and B alternate).")
@click.option("--warmup", type=int, default=5, show_default=True, help="Untimed calls before each round.")
@click.option("--iters", type=int, default=20, show_default=True, help="Timed calls per round (one sample each).")
@click.option("--l2-flush", is_flag=True, help="Clear the L2 cache before each timed call.")
@click.option("--tolerance", type=float, default=0.01, show_default=True, help="Relative change counted as SAME.")
@click.option("--no-kernels", is_flag=True, help="Skip the per-kernel times (CUPTI through torch.profiler).")
@click.option("--profile", is_flag=True, help="Nsight Compute on both sides: spill traffic, occupancy, stalls.")
@click.option("--kernel-filter", default=None, help="Regular expression: profile only these kernels (--profile).")
@click.option("--profile-dir", type=click.Path(path_type=Path), default=None, help="Keep ncu's CSV outputs here.")
@click.option("--scheduler", default=None, help="Run on a Dask worker with a GPU: tcp://HOST:8786.")
@click.option("--json", "json_out", default=None, help="Write the result as JSON to PATH, or - for stdout.")
@click.option(
    "--into",
    type=click.Path(path_type=Path),
    default=None,
    help="Attach the result to a saved comparison (its reports then show the bench).",
)
@click.option("--quiet", "-q", is_flag=True)
@guarded
def bench(a: str, b: str, **kw: Any) -> None:
    """Time both toolchains on one GPU, interleaved: per call and per kernel, with medians, a B/A
    interval and a verdict; --profile adds Nsight Compute's spill traffic and stalls."""
    from ..core.bench.plan import plan_bench
    from ..core.bench.remote import run_planned
    from ..render_bench import bench_tables

    if kw["rounds"] < 1 or kw["iters"] < 1 or kw["warmup"] < 0:
        raise CutediffError("--rounds and --iters must be at least 1 and --warmup at least 0.")
    opts = compare_options(a, b, kw)
    side_params = (_side_params(kw["a_params"], "--a-param"), _side_params(kw["b_params"], "--b-param"))
    plan = plan_bench(
        opts,
        side_params,
        shapes=kw["shapes"],
        rounds=kw["rounds"],
        warmup=kw["warmup"],
        iters=kw["iters"],
        l2_flush=kw["l2_flush"],
        tolerance=kw["tolerance"],
        kernels=not kw["no_kernels"],
        profile=kw["profile"],
        kernel_filter=kw["kernel_filter"],
        profile_dir=kw["profile_dir"],
        local=kw["scheduler"] is None,
    )
    progress = progress_printer(kw["quiet"])
    result = run_planned(plan, progress, scheduler=kw["scheduler"], wheelhouse=kw.get("wheelhouse"))
    result["command"] = command_line()
    if kw["into"] is not None:
        from ..core.bench.attach import attach_bench

        attach_bench(kw["into"], result)
        progress(f"attached the bench to {kw['into']}")
    json_out = kw["json_out"]
    if json_out == "-":
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
        return
    if json_out:
        Path(json_out).write_text(json.dumps(result, indent=1) + "\n")
    for renderable in bench_tables(result):
        out_console.print(renderable)
    prof = result.get("profile") or {}
    if prof.get("error"):
        err_console.print(f"[yellow]profile:[/] {prof['error']}", soft_wrap=True)


for _p in bench.params:  # the bench's default recipe is FA4 forward + backward (compare's is the forward)
    if _p.name == "kernel":
        _p.default = "fa4-fwdbwd"
