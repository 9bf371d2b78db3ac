"""``cutediff bisect`` and ``cutediff sweep``: many toolchains, one figure.

Registered in :mod:`cutediff_tui.cli` like :mod:`cutediff_tui.cli_report`.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from .cli import (
    State,
    build_options,
    err_console,
    exit_with,
    guarded,
    out_console,
    progress_printer,
    recipe_options,
)
from .core.errors import CutediffError

_BISECT_VALUE_OPTS = {
    "--good",
    "--bad",
    "--metric",
    "--kernel-filter",
    "--versions",
    "--json",
    "--over",
    "--executor",
    "--jobs",
    "-j",
    "--scheduler",
}
_BISECT_FLAGS = {"--include-pre", "--tui", "-q", "--quiet"}


# ---------------------------------------------------------------- bisect


@click.command()
@click.argument("toolchain", required=False)
@click.option("--good", required=True, help="A version (or, with --over git:PATH, a commit) where the metric is false.")
@click.option("--bad", required=True, help="A later version (or commit) where the metric is true.")
@click.option(
    "--over",
    default=None,
    help="Walk this package's releases (e.g. flash-attn-4) or git:PATH's commits instead of DSL versions; "
    "TOOLCHAIN (e.g. 4.8.0) is then held fixed.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default=None,
    help="Where probes run with -j > 1: a local process pool (default) or a Dask cluster.",
)
@click.option("--scheduler", default=None, help="Address of an existing Dask scheduler (implies --executor dask).")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Probes per round (k-ary section: about ⌈log_{k+1} n⌉ rounds); 1 bisects one version at a time.",
)
@recipe_options
@click.option(
    "--metric", required=True, help="When a version is bad, e.g. 'spill_store_bytes>0' or 'registers>168 or STL>0'."
)
@click.option("--kernel-filter", default=None, help="Regular expression: judge only these kernels (name or symbol).")
@click.option(
    "--versions",
    "versions_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Bisect the versions listed in this file (one per line) instead of asking the package index.",
)
@click.option("--include-pre", is_flag=True, help="Also try pre-release and dev versions.")
@click.option("--json", "json_out", default=None, help="Write the result as JSON to PATH, or - for stdout.")
@click.option(
    "--tui", is_flag=True, help="Then compare the last good with the first bad version (with line info) in the TUI."
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@guarded
def bisect(
    toolchain: str | None,
    good: str,
    bad: str,
    over: str | None,
    executor: str | None,
    scheduler: str | None,
    jobs: int,
    metric: str,
    kernel_filter: str | None,
    versions_file: Path | None,
    include_pre: bool,
    json_out: str | None,
    tui: bool,
    quiet: bool,
    **kw: Any,
) -> None:
    """Find the first published DSL version where METRIC turns true for the recipe's kernels.

    Builds only ⌈log2 n⌉ + 2 versions (each cached like any compare); versions that cannot be
    built or imported, even with the known shims, are marked untestable and stepped around.
    With --over PACKAGE it walks that package's releases, with --over git:PATH the commits of a
    checkout that touch the kernel source; TOOLCHAIN (DSL version and pins) stays fixed. With
    -j k, k versions are built per round.
    """
    from .cli_report import compare_command
    from .core.bisect import (
        BisectPlan,
        Over,
        bisect_bound,
        bisect_rounds,
        candidate_versions,
        git_over,
        git_versions,
        pair_versions,
        read_versions_file,
        run_bisect,
    )
    from .core.metric import parse_metric
    from .core.probe import Probe, check_kernel_filter
    from .core.toolchain import normalize_name, published_versions

    m = parse_metric(metric, predicate=True)
    check_kernel_filter(kernel_filter)
    if over is not None and not toolchain:
        raise CutediffError(
            f"--over {over} walks {over}'s versions with the DSL held fixed, and no DSL version was given.",
            f"Name it after the options, e.g. cutediff bisect --over {over} --good {good} --bad {bad} ... 4.8.0.",
        )
    if over is None and toolchain:
        raise CutediffError(
            f"TOOLCHAIN {toolchain} only applies with --over; without it bisect walks DSL versions from --good to --bad.",
            "Drop it, or add --over PACKAGE (or --over git:PATH).",
        )
    opts = build_options(toolchain or good, toolchain or bad, kw)
    from .core.compare import preflight

    preflight(opts)  # the recipe takes this arch; both ends are published (unless --wheelhouse)
    plan_over = None
    if over is not None and over.startswith("git:"):
        recipe_path = Path(opts.recipe.path) if opts.recipe.path else None
        plan_over, paths = git_over(Path(over[4:]), toolchain, recipe_path)  # type: ignore[arg-type]
        versions, plan_over.subjects = git_versions(Path(plan_over.repo or "."), good, bad, paths)
    elif over is not None:
        package = normalize_name(over)
        if package == "nvidia-cutlass-dsl":
            raise CutediffError(
                "--over nvidia-cutlass-dsl is what bisect does without --over.", "Drop --over and TOOLCHAIN."
            )
        listed = read_versions_file(versions_file) if versions_file else published_versions(package)
        versions = candidate_versions(good, bad, listed, include_pre=include_pre, package=package)
        plan_over = Over(kind="package", toolchain=toolchain, package=package)  # type: ignore[arg-type]
    elif versions_file is not None:
        versions = candidate_versions(good, bad, read_versions_file(versions_file), include_pre=include_pre)
    else:
        listed = published_versions(offline=opts.wheelhouse is not None)
        versions = candidate_versions(good, bad, listed, include_pre=include_pre)
    progress = progress_printer(quiet)
    spec = opts.specs[0]
    base = Probe(
        side=toolchain or good,
        recipe=opts.recipe,
        params=opts.params,
        profile=opts.profile,
        pins=tuple(kw.get("with_") or ()),
        cuda=spec.cuda,
        python=kw.get("python"),
        wheelhouse=str(opts.wheelhouse) if opts.wheelhouse else None,
        timeout=opts.timeout,
        use_cache=opts.use_cache,
    )
    plan = BisectPlan(versions, base, m, kernel_filter, command=opts.command, over=plan_over, jobs=jobs)
    what = "commits" if plan_over and plan_over.kind == "git" else "versions"
    shown = plan_over.shown if plan_over else (lambda v: v)
    progress(
        f"bisect {len(versions)} {what} ({shown(versions[0])} .. {shown(versions[-1])}) of {opts.recipe.name} for "
        f"{opts.profile.arch}: at most {bisect_bound(len(versions), jobs)} builds in "
        f"{bisect_rounds(len(versions), jobs)} rounds after the ends, without untestable versions"
    )
    if plan_over is None or plan_over.kind != "package":
        needs_line(versions if plan_over is None else [toolchain.split(",")[0]], progress)  # type: ignore[union-attr]
    if jobs > 1:
        from .core.executors import make_executor

        with make_executor(executor or ("dask" if scheduler else "local"), jobs=jobs, address=scheduler) as ex:
            result = run_bisect(plan, progress, executor=ex)
    else:
        result = run_bisect(plan, progress)
    sides = tuple((result.get("sides") or {}).get(v, v) for v in pair_versions(result))
    argv = [a for a in sys.argv[1:] if a != toolchain]
    result["compare_command"] = (
        ""
        if plan_over and plan_over.kind == "git"
        else compare_command(argv, "bisect", value_opts=_BISECT_VALUE_OPTS, flags=_BISECT_FLAGS, sides=sides)  # type: ignore[arg-type]
    )
    if emit_json(result, json_out, progress):
        out_console.print(bisect_table(result))
        out_console.print(Text(bisect_answer(result), style="bold"), soft_wrap=True, highlight=False)
        if result["compare_command"]:
            out_console.print(
                Text(f"compare them: {result['compare_command']}", style="dim"), soft_wrap=True, highlight=False
            )
    if tui:
        open_bisect(result, progress)


def needs_line(versions: list[str], progress) -> None:
    """One progress line naming the DSL versions that need a shim or another Python here."""
    from .core.toolchain import version_needs

    needs = [(v, n) for v in versions if (n := version_needs(v))]
    if needs:
        progress("versions that need more here: " + "; ".join(f"{v} ({n})" for v, n in needs))


def _shown(result: dict, v: str) -> str:
    over = result.get("over") or {}
    if over.get("kind") == "git":
        subject = (over.get("subjects") or {}).get(v)
        return f"{v[:10]}" + (f" ({subject})" if subject else "")
    return v


def bisect_answer(result: dict) -> str:
    over = result.get("over") or {}
    what = f"{over['package']} " if over.get("kind") == "package" else ""
    if result.get("first_bad"):
        return (
            f"first bad: {what}{_shown(result, result['first_bad'])} (last good: {_shown(result, result['last_good'])})"
        )
    cands = [_shown(result, c) for c in result["first_bad_candidates"]]
    return (
        f"first bad: {what}one of {', '.join(cands)} (last good: {_shown(result, result['last_good'])}; "
        f"{', '.join(cands[:-1])} could not be tested)"
    )


def bisect_table(result: dict) -> Table:
    t = Table(
        title=f"bisect {result['recipe']} on {result['arch']}: {result['metric']}"
        + (f" for {result['kernel_filter']}" if result.get("kernel_filter") else ""),
        title_justify="left",
        show_edge=False,
    )
    for c, kw in (
        ("version", {}),
        ("try", {"justify": "right"}),
        ("verdict", {}),
        ("why", {"overflow": "fold"}),
        ("seconds", {"justify": "right"}),
        ("build", {}),
    ):
        t.add_column(c, **kw)
    tried = {s["version"]: s for s in result["steps"]}
    style = {"good": "green", "bad": "bold red", "untestable": "yellow"}
    for v in result["versions"]:
        s = tried.get(v)
        v = _shown(result, v)
        if s is None:
            t.add_row(v, "", Text("not built", style="dim"), "", "", "")
            continue
        shims = shim_summary(s.get("shims") or [])
        why = Text(s["why"] + (f" (shims: {shims})" if shims else ""))
        t.add_row(
            v,
            str(s["order"]),
            Text(s["verdict"], style=style.get(s["verdict"], "")),
            why,
            f"{s['seconds']:.1f}",
            "cached" if s["from_cache"] else "built",
        )
    rounds = f" in {result['rounds']} rounds of up to {result.get('jobs', 1)}" if result.get("rounds") else ""
    t.caption = (
        f"{result['builds']} of {len(result['versions'])} versions tried{rounds} (at most {result['bound']} without "
        f"untestable versions); {result['timing']['cached_builds']} builds came from the cache; "
        f"{result['timing']['wall_seconds']:.1f} s"
    )
    t.caption_justify = "left"
    return t


def shim_summary(shims: list[str]) -> str:
    """The compatibility shims a build needed, shortly (``cute.core.ThrMma/ThrCopy aliases``); the
    compile-only HardwareInfo stand-in every build has is left out."""
    import re

    names = [m.group(1) for s in shims if (m := re.match(r"alias ([\w.]+) = ", s))]
    if not names:
        return ""
    mod = names[0].rpartition(".")[0]
    return f"{mod}.{'/'.join(n.rpartition('.')[2] for n in names)} aliases"


def open_bisect(result: dict, progress) -> None:
    """Compare the bisect's last good with its first bad version (line info on) and open the TUI."""
    from .core.bisect import pair_options
    from .core.compare import run_compare

    opts = pair_options(result)
    progress(f"comparing {opts.specs[0].label} with {opts.specs[1].label}")
    comparison = run_compare(opts, progress)
    from .ui.app import CutediffApp

    app = CutediffApp(comparison)
    app.run()
    exit_with(app)


# ---------------------------------------------------------------- sweep


@click.command()
@click.argument("toolchains", nargs=-1, required=True)
@click.option("--kernel", default="fa4-fwd", show_default=True, help="Recipe to compile (cutediff recipes lists them).")
@click.option("--arch", "archs", multiple=True, help="Target arch(s): sm_90a,sm_100a (comma list or repeated).")
@click.option("--gpu", "gpus", multiple=True, help="Target GPU profile(s): h100,b200 (comma list or repeated).")
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
@click.option(
    "--kernel-filter", default=None, help="Regular expression: summarise only these kernels (the largest value wins)."
)
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
@click.option("--json", "json_out", default=None, help="Write the result as JSON to PATH, or - for stdout.")
@click.option(
    "--html", "html_out", type=click.Path(path_type=Path), default=None, help="Write the heatmap as one HTML file."
)
@click.option("--tui", is_flag=True, help="Show the heatmap in the TUI.")
@click.option("--quiet", "-q", is_flag=True)
@click.option("--debug", is_flag=True)
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
    quiet: bool,
    debug: bool,
) -> None:
    """Build a recipe for every TOOLCHAIN × arch × swept parameter and summarise one figure as a heatmap.

    TOOLCHAINS are written like compare's sides: 4.5.1 4.6.3 4.8.0,quack-kernels==0.6.5.
    A stopped sweep resumes: finished cells are kept in the cache.
    """
    State.debug = State.debug or debug
    from .core.executors import make_executor
    from .core.metric import parse_metric
    from .core.probe import check_kernel_filter
    from .core.sweep import run_sweep

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
    plan.command = "cutediff " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    progress = progress_printer(quiet)
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
        from .core.sweep import load_state

        done = len(load_state(plan))
        err_console.print(
            f"interrupted: stopped the workers; {done} of {len(plan.probes)} cells finished and are kept "
            "(run the same command to resume); nothing partial was kept in the cache.",
            soft_wrap=True,
            highlight=False,
        )
        sys.exit(130)
    emit_sweep(result, json_out, html_out, progress)
    if tui:
        from .ui.screens.sweep import SweepApp

        app = SweepApp(result)
        app.run()
        exit_with(app)
    if any(c.get("status") != "ok" for c in result["cells"]):
        sys.exit(2 if all(c.get("status") != "ok" for c in result["cells"]) else 0)


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
    from .core.build import check_recipe_arch
    from .core.gpu import resolve_profile
    from .core.probe import Probe
    from .core.recipes import coerce_params, get_recipe
    from .core.sweep import SweepPlan, expand, parse_axis
    from .core.toolchain import check_published, parse_side

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
            check_published(s)
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


def emit_json(result: dict, json_out: str | None, progress) -> bool:
    """Write ``result`` as JSON to stdout (``-``) or a file; True when the tables should be printed
    too (stdout is not taken by the JSON)."""
    text = json.dumps(result, indent=1) + "\n"
    if json_out == "-":
        sys.stdout.write(text)
        return False
    if json_out:
        Path(json_out).write_text(text)
        progress(f"wrote {json_out}")
    return True


def emit_sweep(result: dict, json_out: str | None, html_out: Path | None, progress) -> None:
    if html_out is not None:
        from .core.report.sweep_html import sweep_html

        Path(html_out).write_text(sweep_html(result))
        progress(f"wrote {html_out}")
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
    from .core.sweep import NO_MATCH, grid

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


def _register() -> None:
    from .cli import main as _main

    for command in (bisect, sweep):
        if command.name not in _main.commands:
            _main.add_command(command)


_register()
