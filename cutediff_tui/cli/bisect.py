"""``cutediff bisect``: the first version (of the DSL, another package or a git checkout's commits)
where a metric turns true."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ..core.errors import CutediffError
from ..core.options import compare_options
from .common import (
    compare_command,
    complete_versions,
    emit_json,
    examples,
    guarded,
    json_option,
    kernel_filter_option,
    needs_line,
    open_bisect,
    out_console,
    progress_printer,
    recipe_options,
    standard_options,
)

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
_BISECT_FLAGS = {"--include-pre", "--tui"}


# ---------------------------------------------------------------- bisect


@click.command(
    epilog=examples(
        "cutediff bisect --good 4.5.1 --bad 4.8.0 --recipe fa4-fwd --arch sm_103a --metric 'spill_store_bytes>0'",
        "cutediff bisect --good 4.5.1 --bad 4.8.0 --metric 'registers>168' --kernel-filter Forward -j 3 --json -",
        "cutediff bisect 4.8.0 --over flash-attn-4 --good 4.0.0b10 --bad 4.0.0b16 --metric 'STL>0'",
    )
)
@click.argument("toolchain", required=False, shell_complete=complete_versions)
@click.option(
    "--good",
    required=True,
    shell_complete=complete_versions,
    help="A version (or, with --over git:PATH, a commit) where the metric is false.",
)
@click.option(
    "--bad",
    required=True,
    shell_complete=complete_versions,
    help="A later version (or commit) where the metric is true.",
)
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
@kernel_filter_option("the metric is judged on these.")
@click.option(
    "--versions",
    "versions_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Bisect the versions listed in this file (one per line) instead of asking the package index.",
)
@click.option("--include-pre", is_flag=True, help="Also try pre-release and dev versions.")
@json_option()
@click.option(
    "--tui", is_flag=True, help="Then compare the last good with the first bad version (with line info) in the TUI."
)
@standard_options
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
    **kw: Any,
) -> None:
    """Find the first published DSL version where METRIC turns true for the recipe's kernels.

    Builds only ⌈log2 n⌉ + 2 versions (each cached like any compare); versions that cannot be
    built or imported, even with the known shims, are marked untestable and stepped around.
    With --over PACKAGE it walks that package's releases, with --over git:PATH the commits of a
    checkout that touch the kernel source; TOOLCHAIN (DSL version and pins) stays fixed. With
    -j k, k versions are built per round.
    """
    from ..core.bisect import (
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
    from ..core.metric import parse_metric
    from ..core.probe import Probe, check_kernel_filter
    from ..core.toolchain import normalize_name, published_versions

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
    opts = compare_options(toolchain or good, toolchain or bad, kw)
    from ..core.compare import preflight

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
    progress = progress_printer()
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
        from ..core.executors import make_executor

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
    t.add_column("version")
    t.add_column("try", justify="right")
    t.add_column("verdict")
    t.add_column("why", overflow="fold")
    t.add_column("seconds", justify="right")
    t.add_column("build")
    tried = {s["version"]: s for s in result["steps"]}
    style = {"good": "green", "bad": "bold red", "untestable": "yellow"}
    for v in result["versions"]:
        s = tried.get(v)
        v = _shown(result, v)
        if s is None:
            t.add_row(v, "", Text("not built", style="dim"), "", "", "")
            continue
        shims = shim_summary(s.get("shims") or [])
        again = (
            " (tried twice: the first try failed in a way another may not)"
            if isinstance(s.get("tries"), int) and s["tries"] > 1
            else ""
        )
        why = Text(s["why"] + (f" (shims: {shims})" if shims else "") + again)
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
