"""``cutediff bench``: interleaved A/B timing on the local GPU."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..core.options import command_line
from .common import guarded, out_console, progress_printer


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--with", "with_", multiple=True, help="Pin shared by both sides.")
@click.option("--cuda", type=click.Choice(["12", "13"]), default=None)
@click.option(
    "--kernel", type=click.Choice(["fa4-fwd", "fa4-bwd", "fa4-fwdbwd"]), default="fa4-fwdbwd", show_default=True
)
@click.option(
    "--shape", "shapes", multiple=True, help="TOTALxHEADSh/DOCS (default: 8192x32h/4, 32768x32h/8, 32768x16h/1)."
)
@click.option("--hdim", type=int, default=128, show_default=True)
@click.option("--causal/--no-causal", default=True, show_default=True)
@click.option("--rounds", type=int, default=10, show_default=True, help="Rounds per side (A and B alternate).")
@click.option("--warmup", type=int, default=5, show_default=True, help="Untimed calls before each round.")
@click.option("--iters", type=int, default=20, show_default=True, help="Timed calls per round (one sample each).")
@click.option("--l2-flush", is_flag=True, help="Clear the L2 cache before each timed call.")
@click.option("--tolerance", type=float, default=0.01, show_default=True, help="Relative change counted as SAME.")
@click.option("--json", "json_out", default=None, help="Write the result as JSON to PATH, or - for stdout.")
@click.option("--wheelhouse", type=click.Path(path_type=Path), default=None)
@click.option(
    "--into",
    type=click.Path(path_type=Path),
    default=None,
    help="Attach the result to a saved comparison (its reports then show the bench).",
)
@click.option("--quiet", "-q", is_flag=True)
@click.option("--debug", is_flag=True)
@guarded
def bench(
    a: str,
    b: str,
    with_: tuple,
    cuda: str | None,
    kernel: str,
    shapes: tuple,
    hdim: int,
    causal: bool,
    rounds: int,
    warmup: int,
    iters: int,
    l2_flush: bool,
    tolerance: float,
    json_out: str | None,
    wheelhouse: Path | None,
    into: Path | None,
    quiet: bool,
    debug: bool,
) -> None:
    """Time both toolchains on the local GPU, interleaved, with medians, a B/A interval and a verdict."""
    from ..core.bench.runner import BenchConfig, check_gpu, run_bench
    from ..core.bench.shapes import DEFAULT_SHAPES, parse_shape
    from ..core.toolchain import create_env, parse_side
    from ..render import bench_table

    check_gpu()
    c = int(cuda) if cuda else None
    specs = (parse_side(a, with_, c), parse_side(b, with_, c))
    progress = progress_printer(quiet)
    envs = tuple(create_env(s, wheelhouse=wheelhouse, progress=progress) for s in specs)
    shp = tuple(parse_shape(x, hdim, causal) for x in shapes) or tuple(
        type(s)(s.total, s.heads, s.docs, hdim, causal) for s in DEFAULT_SHAPES
    )
    cfg = BenchConfig(shp, kernel.removeprefix("fa4-"), rounds, warmup, iters, l2_flush, tolerance)

    def listen(ev: dict) -> None:
        if ev["event"] == "ready":
            progress(f"side {ev['side'].upper()}: {ev['shape']} compiled and ran once ({ev['seconds']} s)")
        elif ev["event"] == "samples" and ev["index"] == len(shp) - 1 and ev["side"] == "b":
            progress(f"round {ev['round'] + 1}/{rounds} done")

    result = run_bench(envs, cfg, listen)
    result["sides"] = {s: {"label": sp.label, "versions": e.versions()} for s, sp, e in zip("ab", specs, envs)}
    result["command"] = command_line()
    if into is not None:
        from ..core.bench.attach import attach_bench

        attach_bench(into, result)
        progress(f"attached the bench to {into}")
    if json_out == "-":
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
        return
    if json_out:
        Path(json_out).write_text(json.dumps(result, indent=1) + "\n")
    out_console.print(bench_table(result))
