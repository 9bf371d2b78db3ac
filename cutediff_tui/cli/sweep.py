"""``cutediff sweep``: a matrix of toolchains x archs x parameters, one figure as a heatmap."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ..core.errors import CutediffError
from ..core.options import command_line
from .common import (
    ExitCode,
    complete_archs,
    complete_gpus,
    complete_versions,
    emit_json,
    err_console,
    examples,
    exit_with,
    guarded,
    json_option,
    kernel_filter_option,
    needs_line,
    out_console,
    progress_printer,
    recipe_option,
    standard_options,
    stop_progress,
    wrote,
)

# ---------------------------------------------------------------- sweep


@click.command(
    epilog=examples(
        "cutediff sweep 4.5.1 4.5.3 4.8.0 --recipe fa4-fwd --arch sm_100a,sm_103a --param hdim=64,128 --html sweep.html",
        "cutediff sweep 4.5.1 4.8.0 --recipe samples/recipes/elementwise_add.py --gpu h100,b200 --figure registers",
        "cutediff sweep 4.5.1 4.8.0 --recipe fa4-fwd --executor dask --scheduler tcp://10.0.0.5:8786 --json sweep.json",
    )
)
@click.argument("toolchains", nargs=-1, required=True, shell_complete=complete_versions)
@recipe_option
@click.option(
    "--arch",
    "archs",
    multiple=True,
    shell_complete=complete_archs,
    help="Target arch(s): sm_90a,sm_100a (comma list or repeated).",
)
@click.option(
    "--gpu",
    "gpus",
    multiple=True,
    shell_complete=complete_gpus,
    help="Target GPU profile(s): h100,b200 (comma list or repeated).",
)
@click.option("--num-sms", type=int, default=None, help="SM count persistent kernels see while compiling.")
@click.option(
    "--param",
    "params",
    multiple=True,
    help="Recipe parameter NAME=V (fixed) or NAME=V1,V2 / NAME=START:STOP:STEP (swept); values holding "
    "commas are separated by ';' (window=128,0;256,0).",
)
@click.option("--with", "with_", multiple=True, help="Pin shared by every toolchain (NAME==VERSION).")
@click.option("--cuda", type=click.Choice(["12", "13"]), default=None)
@click.option(
    "--figure",
    default="spill_store_bytes",
    show_default=True,
    help="Figure to summarise: spill_store_bytes, registers, stack_bytes, UTCHMMA, mufu, or an expression.",
)
@kernel_filter_option("each cell shows the largest value among these.")
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default=None,
    help="local (default): a process pool on this machine; dask: a Dask cluster (a local one unless --scheduler).",
)
@click.option(
    "--scheduler",
    default=None,
    help="Address of an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --executor dask).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Parallel builds (default: cores, fewer if memory is short).",
)
@click.option(
    "--wheelhouse",
    type=click.Path(path_type=Path),
    default=None,
    help="Build environments offline from this folder (must be readable by every worker).",
)
@click.option("--timeout", type=float, default=1800, show_default=True)
@click.option("--no-cache", is_flag=True, help="Compile every cell again.")
@click.option("--fresh", is_flag=True, help="Ignore cells a stopped run of this sweep finished.")
@json_option()
@click.option(
    "--html", "html_out", type=click.Path(path_type=Path), default=None, help="Write the heatmap as one HTML file."
)
@click.option("--tui", is_flag=True, help="Show the heatmap in the TUI.")
@standard_options
@guarded
def sweep(
    toolchains: tuple[str, ...],
    kernel: str,
    archs: tuple[str, ...],
    gpus: tuple[str, ...],
    num_sms: int | None,
    params: tuple[str, ...],
    with_: tuple[str, ...],
    cuda: str | None,
    figure: str,
    kernel_filter: str | None,
    executor: str | None,
    scheduler: str | None,
    jobs: int | None,
    wheelhouse: Path | None,
    timeout: float,
    no_cache: bool,
    fresh: bool,
    json_out: str | None,
    html_out: Path | None,
    tui: bool,
) -> None:
    """Build a recipe for every TOOLCHAIN × arch × swept parameter and summarise one figure as a heatmap.

    TOOLCHAINS are written like compare's sides: 4.5.1 4.6.3 4.8.0,quack-kernels==0.6.5.
    A stopped sweep resumes: finished cells are kept in the cache.
    """
    from ..core.executors import make_executor
    from ..core.metric import parse_metric
    from ..core.probe import check_kernel_filter
    from ..core.sweep import run_sweep

    parse_metric(figure)
    check_kernel_filter(kernel_filter)
    plan = make_sweep_plan(
        list(toolchains),
        kernel=kernel,
        archs=archs,
        gpus=gpus,
        num_sms=num_sms,
        params=params,
        with_=with_,
        cuda=int(cuda) if cuda else None,
        wheelhouse=wheelhouse,
        timeout=timeout,
        use_cache=not no_cache,
        figure=figure,
        kernel_filter=kernel_filter,
    )
    plan.command = command_line()
    progress = progress_printer()
    needs_line([t.split(",")[0].strip() for t in toolchains], progress)
    try:
        with make_executor(executor or ("dask" if scheduler else "local"), jobs=jobs, address=scheduler) as ex:
            d = ex.describe()
            progress(
                f"sweep {len(plan.probes)} cells ({len(plan.toolchains)} toolchains) on {d['kind']} "
                f"({d.get('workers')} workers{', ' + d['address'] if d.get('address') else ''})"
            )
            result = run_sweep(plan, ex, progress, resume=not (fresh or no_cache))
    except KeyboardInterrupt:
        from ..core.sweep import load_state

        done = len(load_state(plan))
        err_console.print(
            f"interrupted: stopped the workers; {done} of {len(plan.probes)} cells finished and are kept "
            "(run the same command to resume); nothing partial was kept in the cache.",
            soft_wrap=True,
            highlight=False,
        )
        sys.exit(ExitCode.INTERRUPTED)
    emit_sweep(result, json_out, html_out, progress)
    if tui:
        from ..ui.screens.sweep import SweepApp

        stop_progress()
        app = SweepApp(result)
        app.run()
        exit_with(app)
    if any(c.get("status") != "ok" for c in result["cells"]):
        sys.exit(ExitCode.ERROR if all(c.get("status") != "ok" for c in result["cells"]) else ExitCode.OK)


def make_sweep_plan(
    toolchains: list[str],
    *,
    kernel: str,
    archs=(),
    gpus=(),
    num_sms=None,
    params=(),
    with_=(),
    cuda=None,
    wheelhouse=None,
    timeout=1800.0,
    use_cache=True,
    figure="spill_store_bytes",
    kernel_filter=None,
):
    """The sweep's probes, checked before anything is built (recipe, arch, parameter values, versions)."""
    from ..core.build import check_recipe_arch
    from ..core.gpu import resolve_profile
    from ..core.probe import Probe
    from ..core.recipes import coerce_params, get_recipe
    from ..core.sweep import SweepPlan, expand, parse_axis
    from ..core.toolchain import check_published, parse_side

    specs = [parse_side(t, with_, cuda) for t in toolchains]
    if len({s.label for s in specs}) != len(specs):
        raise CutediffError("A toolchain is listed twice.", "List each toolchain once.")
    recipe = get_recipe(kernel, search=[p for s in specs for p in s.local_paths()])
    split = [x.strip() for group in archs for x in group.split(",") if x.strip()]
    gsplit = [x.strip() for group in gpus for x in group.split(",") if x.strip()]
    profiles = [resolve_profile(None, a, num_sms) for a in split] + [resolve_profile(g, None, num_sms) for g in gsplit]
    if not profiles:
        profiles = [resolve_profile(None, None, num_sms)]
    if len({(p.name, p.arch, p.num_sms) for p in profiles}) != len(profiles):
        raise CutediffError("A target is listed twice (--arch/--gpu).", "List each arch or GPU once.")
    for prof in profiles:
        check_recipe_arch(recipe, prof.arch)
    fixed: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    pairs = {p.name for p in recipe.params if p.type == "window"}  # L,R values: only ';' separates them
    for item in params:
        name, values = parse_axis(item)
        if name in pairs and ";" not in item:
            values = [item.split("=", 1)[1].strip()]
        if len(values) == 1:
            fixed[name] = values[0]
        else:
            axes[name] = values
    base_params = coerce_params(recipe, fixed)
    for name, values in axes.items():  # check every swept value now, not halfway through the sweep
        for v in values:
            coerce_params(recipe, {**fixed, name: v})
    if wheelhouse is None:
        for s in specs:
            check_published(s, check_python=False)  # no wheel for this Python: that cell fails, the rest run
    base = Probe(
        side=toolchains[0],
        recipe=recipe,
        params=base_params,
        profile=profiles[0],
        pins=tuple(with_),
        cuda=cuda,
        wheelhouse=str(Path(wheelhouse).resolve()) if wheelhouse else None,
        timeout=timeout,
        use_cache=use_cache,
    )
    probes = expand(list(toolchains), profiles, base, axes, lambda p: coerce_params(recipe, p), by_gpu=bool(gsplit))
    return SweepPlan(
        toolchains=[s.label for s in specs],
        probes=probes,
        figure=figure,
        kernel_filter=kernel_filter,
        axes={"arch": [p.arch for p in profiles], **({"gpu": gsplit} if gsplit else {}), **axes},
    )


def emit_sweep(result: dict, json_out: str | None, html_out: Path | None, progress) -> None:
    if html_out is not None:
        from ..core.report.sweep_html import sweep_html

        Path(html_out).write_text(sweep_html(result))
        progress(wrote(html_out))
    if emit_json(result, json_out, progress):
        out_console.print(sweep_table(result))
    for c in result["cells"]:
        if c.get("status") != "ok":
            err_console.print(
                Text.assemble(
                    ("failed: ", "bold red"), f"{c.get('toolchain')} {c.get('arch')} {c.get('axis')}: {c.get('why')}"
                ),
                soft_wrap=True,
                highlight=False,
            )


def sweep_table(result: dict, figure: str | None = None) -> Table:
    from ..core.sweep import NO_MATCH, grid

    g = grid(result, figure)
    finite = g.finite
    hi = max(finite) if finite else 0
    pins = ", ".join(result.get("pins") or [])
    t = Table(
        title=f"{result['recipe']['name']}: {g.figure}" + (f" (pins: {pins})" if pins else ""),
        title_justify="left",
        show_edge=False,
    )
    t.add_column("toolchain")
    for c in g.cols:
        t.add_column(c, justify="right")
    for r, row in enumerate(g.rows):
        cells: list[Text] = []
        for k, v in enumerate(g.values[r]):
            if v is None:
                cells.append(Text("-" if g.notes[r][k] == NO_MATCH else "failed", style="yellow"))
            elif v == 0:
                cells.append(Text(str(v), style="dim"))
            else:
                cells.append(Text(str(v), style="bold red" if hi and v >= hi else "red"))
        t.add_row(row, *cells)
    tm = result.get("timing", {})
    ex = result.get("executor", {})
    t.caption = (
        f"{tm.get('cells', 0)} cells in {tm.get('wall_seconds', 0):.1f} s on {ex.get('kind')} "
        f"({ex.get('workers')} workers); {tm.get('resumed', 0)} resumed, {tm.get('cached_builds', 0)} cached builds"
    )
    t.caption_justify = "left"
    return t
