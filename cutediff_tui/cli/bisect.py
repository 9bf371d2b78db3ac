"""``cutediff bisect``: the first published DSL version where a metric turns true."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ..core.options import compare_options
from .common import compare_command, emit_json, guarded, open_bisect, out_console, progress_printer, recipe_options

_BISECT_VALUE_OPTS = {"--good", "--bad", "--metric", "--kernel-filter", "--versions", "--json"}
_BISECT_FLAGS = {"--include-pre", "--tui", "-q", "--quiet"}


# ---------------------------------------------------------------- bisect


@click.command()
@click.option("--good", required=True, help="A DSL version where the metric is false.")
@click.option("--bad", required=True, help="A later DSL version where the metric is true.")
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
    good: str,
    bad: str,
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
    """
    from ..core.bisect import (
        BisectPlan,
        bisect_bound,
        candidate_versions,
        pair_versions,
        read_versions_file,
        run_bisect,
    )
    from ..core.metric import parse_metric
    from ..core.probe import Probe, check_kernel_filter
    from ..core.toolchain import published_versions

    m = parse_metric(metric, predicate=True)
    check_kernel_filter(kernel_filter)
    opts = compare_options(good, bad, kw)
    from ..core.compare import preflight

    preflight(opts)  # the recipe takes this arch; both ends are published (unless --wheelhouse)
    if versions_file is not None:
        listed = read_versions_file(versions_file)
    else:
        listed = published_versions(offline=opts.wheelhouse is not None)
    versions = candidate_versions(good, bad, listed, include_pre=include_pre)
    progress = progress_printer(quiet)
    spec = opts.specs[0]
    base = Probe(
        side=good,
        recipe=opts.recipe,
        params=opts.params,
        profile=opts.profile,
        pins=tuple(kw.get("with_") or ()),
        cuda=spec.cuda,
        wheelhouse=str(opts.wheelhouse) if opts.wheelhouse else None,
        timeout=opts.timeout,
        use_cache=opts.use_cache,
    )
    plan = BisectPlan(versions, base, m, kernel_filter, command=opts.command)
    progress(
        f"bisect {len(versions)} versions ({versions[0]} .. {versions[-1]}) of {opts.recipe.name} for "
        f"{opts.profile.arch}: at most {bisect_bound(len(versions))} builds without untestable versions"
    )
    result = run_bisect(plan, progress)
    sides = pair_versions(result)
    result["compare_command"] = compare_command(
        sys.argv[1:], "bisect", value_opts=_BISECT_VALUE_OPTS, flags=_BISECT_FLAGS, sides=sides
    )
    if emit_json(result, json_out, progress):
        out_console.print(bisect_table(result))
        out_console.print(Text(bisect_answer(result), style="bold"), soft_wrap=True, highlight=False)
        out_console.print(
            Text(f"compare them: {result['compare_command']}", style="dim"), soft_wrap=True, highlight=False
        )
    if tui:
        open_bisect(result, progress)


def bisect_answer(result: dict) -> str:
    if result.get("first_bad"):
        return f"first bad: {result['first_bad']} (last good: {result['last_good']})"
    cands = result["first_bad_candidates"]
    return (
        f"first bad: one of {', '.join(cands)} (last good: {result['last_good']}; "
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
    t.caption = (
        f"{result['builds']} of {len(result['versions'])} versions tried (at most {result['bound']} without "
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
