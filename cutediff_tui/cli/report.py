"""``cutediff report`` and ``cutediff check``: reports of a comparison and the CI gate.

Both take either a saved comparison or the arguments of ``cutediff compare`` (then they compile).
Registered in :data:`cutediff_tui.cli.COMMANDS`.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.text import Text

from ..core.errors import CutediffError
from ..core.options import compare_options
from .common import (
    ExitCode,
    compare_command,
    complete_versions,
    emit_text,
    err_console,
    examples,
    fail,
    guarded,
    json_option,
    kernel_filter_option,
    out_console,
    output_option,
    progress_printer,
    recipe_options,
    standard_options,
    state,
    write_stdout,
    wrote,
)

_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([a-z]+\d*|\.post\d+|\.dev\d+)*(,|$)")


def _crosscheck_options(func):
    for o in reversed(
        [
            click.option(
                "--crosscheck", default=None, help="Re-assemble both PTXs with these ptxas versions, e.g. 13.0,13.4."
            ),
            click.option(
                "--allow-ptx-rewrite", is_flag=True, help="Rewrite PTX .version down for an older ptxas (labelled)."
            ),
            standard_options,
        ]
    ):
        func = o(func)
    return func


def _load_result(path: Path) -> dict:
    from ..core.compare import load_json

    path = Path(path)
    if path.is_dir():
        path = path / "comparison.json"
    return load_json(path)


def obtain_comparison(args: tuple[str, ...], kw: dict[str, Any], quiet: bool, command: str) -> dict:
    """A comparison from ``RESULT`` (file or folder), two artifact paths, or ``A B`` to compile."""
    if len(args) == 1:
        return _load_result(Path(args[0]))
    if len(args) != 2:
        raise CutediffError(
            f"Expected RESULT or A B, got {len(args)} argument(s).",
            "Give a saved comparison (comparison.json or its folder), or two toolchains such as 4.5.1 4.8.0.",
        )
    a, b = args
    if all(not _VERSION_RE.match(x) and Path(x).exists() for x in (a, b)):
        from ..core.artifacts_diff import diff_paths

        return diff_paths(Path(a), Path(b), command="cutediff diff " + " ".join(shlex.quote(x) for x in (a, b)))
    from ..core.compare import run_compare

    opts = compare_options(a, b, kw, command=command)
    progress = progress_printer(quiet)
    progress(
        f"compare {opts.specs[0].label} vs {opts.specs[1].label}: {opts.recipe.name} for {opts.profile.arch} "
        f"({opts.profile.name}, {opts.profile.num_sms} SMs)"
    )
    return run_compare(opts, progress)


def _side_errors(comparison: dict) -> list[str]:
    return [
        f"Side {s.upper()}: {v['error']}" if not str(v["error"]).startswith(("Side", "side")) else str(v["error"])
        for s, v in (comparison.get("sides") or {}).items()
        if isinstance(v, dict) and v.get("error")
    ]


def _save_json(comparison: dict, path: str, inputs: tuple = (), keep_paths: bool = True) -> None:
    from ..core.files import check_output
    from ..core.locking import atomic_write
    from ..core.report.jsonout import render_json

    if path == "-":
        emit_text(render_json(comparison, validate=False, keep_paths=keep_paths), "-")
        return
    check_output(Path(path), inputs=inputs, force=True, option="--json")
    atomic_write(Path(path), render_json(comparison, validate=False, keep_paths=keep_paths))


def _inputs(args: tuple[str, ...] | None, result: Path | None = None) -> tuple[Path, ...]:
    """Files and folders a report/check command reads (its outputs may not be one of them)."""
    paths = [Path(a) for a in (args or ()) if Path(a).exists()]
    if result is not None:
        paths.append(Path(result))
    return tuple(paths)


def _write_safely(comparison: dict, path: Path, fmt: str | None, inputs, force: bool, keep_paths: bool, option: str):
    from ..core.files import check_output
    from ..core.locking import atomic_write
    from ..core.report import format_for_path, render

    check_output(path, inputs=inputs, force=force, option=option)
    atomic_write(path, render(comparison, fmt or format_for_path(path), keep_paths=keep_paths))


# ---------------------------------------------------------------- report


@click.command(
    epilog=examples(
        "cutediff report my-result/ -o report.md",
        "cutediff report comparison.json --format csv -o figures.csv",
        "cutediff report my-result/ --kernel-filter Forward -o forward.html",
        "cutediff report 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --recipe fa4-fwd --arch sm_103a -o report.html",
    )
)
@click.argument("args", nargs=-1, required=True, metavar="RESULT | A B", shell_complete=complete_versions)
@recipe_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json", "csv"]),
    default=None,
    help="Report format; csv: one row per kernel × side × figure (default: from the -o suffix, else md).",
)
@output_option("Write the report to FILE (default: stdout).")
@json_option("Also save the comparison as JSON to PATH, or - for stdout (then the report needs -o).")
@click.option("--force", is_flag=True, help="Replace an existing output file.")
@click.option("--keep-paths", is_flag=True, help="Keep home folders and user names in a JSON report.")
@kernel_filter_option("the report (and --json) holds only these and names the filter.")
@_crosscheck_options
@guarded
def report(
    args: tuple[str, ...],
    fmt: str | None,
    output: Path | None,
    json_out: str | None,
    force: bool,
    keep_paths: bool,
    kernel_filter: str | None,
    **kw: Any,
) -> None:
    """Write a report of a comparison: Markdown for a GitHub issue, self-contained HTML, JSON, or
    CSV (the figures, one row per kernel × side × figure).

    RESULT is a comparison.json (or the folder holding one); A B are two toolchains, as for
    cutediff compare (then both sides are compiled), or two artifact folders, as for cutediff diff.
    """
    from ..core.files import check_output
    from ..core.model.kernel_filter import filter_comparison
    from ..core.report import format_for_path, render

    quiet = state().quiet
    if json_out == "-" and output is None:
        fail(
            "--json - and the report both want stdout. Write the report to a file with -o FILE, or the JSON with --json PATH."
        )
    inputs = _inputs(args)
    for out in (output, json_out):  # refused before any compile
        if out and out != "-":
            check_output(Path(out), inputs=inputs, force=force, option="-o" if out is output else "--json")
    comparison = obtain_comparison(args, kw, quiet, compare_command(sys.argv[1:], "report"))
    comparison = filter_comparison(comparison, kernel_filter)
    fmt = fmt or format_for_path(output)
    if json_out:
        _save_json(comparison, json_out, inputs, keep_paths)
    if output is None:
        write_stdout(render(comparison, fmt, keep_paths=keep_paths))
    else:
        _write_safely(comparison, output, fmt, inputs, True, keep_paths, "-o")
        progress_printer(quiet)(wrote(output, fmt + (f", kernels matching {kernel_filter!r}" if kernel_filter else "")))
    errors = _side_errors(comparison)
    for err in errors:
        err_console.print(f"[bold red]error:[/] {escape(err)}", soft_wrap=True, markup=True, highlight=False)
    if errors:
        sys.exit(ExitCode.ERROR)


# ---------------------------------------------------------------- check


_STATUS_STYLE = {
    "fail": ("FAIL ", "bold red"),
    "error": ("ERROR", "bold red"),
    "skip": ("skip ", "yellow"),
    "pass": ("ok   ", "green"),
}


@click.command(
    epilog=examples(
        "cutediff check 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --recipe fa4-fwd --max-spill-bytes 0",
        "cutediff check comparison.json --max-register-delta 8 --junit check.xml",
        "cutediff check result/ --max peak_gpr=200 --kernel-filter Forward --json -",
    )
)
@click.argument("sides", nargs=-1, metavar="RESULT | A B", shell_complete=complete_versions)
@recipe_options
@click.option(
    "--result",
    type=click.Path(path_type=Path),
    default=None,
    help="The same as RESULT (kept for older scripts): a saved comparison to check instead of compiling.",
)
@click.option(
    "--max-spill-bytes",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Most spill-store and most spill-load bytes side B may have, per kernel.",
)
@click.option(
    "--max-register-delta", type=int, default=None, metavar="N", help="Most registers B may add over A (B − A)."
)
@click.option(
    "--max-stack-delta", type=int, default=None, metavar="N", help="Most stack-frame bytes B may add over A (B − A)."
)
@click.option(
    "--max-slowdown",
    type=float,
    default=None,
    metavar="PCT",
    help="Most percent B may be slower than A per bench shape (when the comparison has bench timings).",
)
@kernel_filter_option("the others are not checked.")
@click.option(
    "--max",
    "max_figures",
    multiple=True,
    metavar="FIGURE=N",
    help="Most side B's FIGURE may be (any figure a metric names, e.g. peak_gpr=200); repeatable.",
)
@click.option(
    "--max-delta",
    "max_deltas",
    multiple=True,
    metavar="FIGURE=N",
    help="Most B − A of FIGURE may be (e.g. instructions=100); repeatable.",
)
@click.option(
    "--junit", type=click.Path(path_type=Path), default=None, help="Write JUnit XML (one testcase per kernel × limit)."
)
@json_option("Also save the comparison as JSON to PATH, or - for stdout (the check lines then go to stderr).")
@click.option(
    "--report",
    "report_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write a report to FILE (.md, .html or .json).",
)
@click.option("--force", is_flag=True, help="Replace an existing --report file.")
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Skip a limit whose figure is missing, null or invalid (by default that fails the check).",
)
@_crosscheck_options
@guarded
def check(
    sides: tuple[str, ...],
    result: Path | None,
    max_spill_bytes: int | None,
    max_register_delta: int | None,
    max_stack_delta: int | None,
    max_slowdown: float | None,
    kernel_filter: str | None,
    max_figures: tuple[str, ...],
    max_deltas: tuple[str, ...],
    junit: Path | None,
    json_out: str | None,
    report_out: Path | None,
    force: bool,
    allow_missing: bool,
    **kw: Any,
) -> None:
    """Gate CI on a comparison: exit 0 within the limits, 1 when one broke, 2 on an error.

    Reads RESULT (a saved comparison: comparison.json or its folder, as report and open take it), or
    compiles A and B as cutediff compare does. Limits apply per kernel to side B
    (spill bytes) or to B − A (registers, stack); --max-slowdown uses bench timings when present.
    Under GitHub Actions (GITHUB_ACTIONS=true) each broken limit is also an ::error annotation.
    """
    from ..core.files import check_output
    from ..core.model.kernel_filter import filter_comparison
    from ..core.report import CheckOutcome, CheckResult, build_limits, check_comparison, junit_xml

    one = sides[0] if len(sides) == 1 else ""
    if one and result is None and (Path(one).exists() or not _VERSION_RE.match(one)):  # as `report RESULT`
        result, sides = Path(one), ()
    inputs = _inputs(None, result)
    quiet = state().quiet
    for out, opt, must_be_new in (
        (report_out, "--report", True),
        (json_out, "--json", False),
        (junit, "--junit", False),
    ):
        if out and out != "-":
            check_output(Path(out), inputs=inputs, force=force or not must_be_new, option=opt)
    try:
        limits = build_limits(
            max_spill_bytes=max_spill_bytes,
            max_register_delta=max_register_delta,
            max_stack_delta=max_stack_delta,
            max_slowdown=max_slowdown,
            kernel_filter=kernel_filter,
            max_figures=max_figures,
            max_deltas=max_deltas,
            allow_missing=allow_missing,
        )
        if result is not None and sides:
            raise CutediffError(
                "Give either a saved comparison (RESULT or --result) or the two toolchains A B, not both.",
                "cutediff check RESULT checks a saved comparison without compiling.",
            )
        if result is None and len(sides) != 2:
            raise CutediffError(
                f"cutediff check needs a saved comparison RESULT or two toolchains A B (got {len(sides)} arguments).",
                "For example: cutediff check result/ --max-spill-bytes 0, or cutediff check 4.5.1 4.8.0 --max-spill-bytes 0.",
            )
        comparison = (
            _load_result(result)
            if result is not None
            else obtain_comparison(sides, kw, quiet, compare_command(sys.argv[1:], "check"))
        )
    except CutediffError as exc:
        if junit is not None:
            bad = CheckResult([CheckOutcome("cutediff", "input", "error", exc.sentence())])
            junit.write_text(junit_xml(bad))
        raise
    res = check_comparison(comparison, limits)
    try:  # --json and --report show the kernels checked, as every --kernel-filter does
        comparison = filter_comparison(comparison, kernel_filter)
    except CutediffError:  # the filter matched nothing: that is the check's error, said below
        pass
    if json_out:
        _save_json(comparison, json_out, inputs)
    if report_out is not None:
        _write_safely(comparison, report_out, None, inputs, True, True, "--report")
    if junit is not None:
        junit.write_text(junit_xml(res))
    lines = err_console if json_out == "-" else out_console  # stdout holds only the JSON then
    for o in res.outcomes:
        if o.status == "error":
            continue
        tag, style = _STATUS_STYLE.get(o.status, (o.status, ""))
        line = Text.assemble((tag, style), " ", (o.kernel, "bold"), f" {o.limit}: {o.message}")
        lines.print(line, soft_wrap=True, highlight=False)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        annotate(res, sys.stderr if json_out == "-" else sys.stdout)
    for note in res.notes:
        err_console.print(Text(f"note: {note}", style="dim"), soft_wrap=True)
    if res.exit_code == 2:
        for o in res.errors:
            msg = o.message[:1].upper() + o.message[1:]
            err_console.print(
                Text.assemble(("error: ", "bold red"), msg if msg.endswith(".") else msg + "."),
                soft_wrap=True,
                highlight=False,
            )
        sys.exit(ExitCode.ERROR)
    lines.print(
        Text(res.summary(), style="bold red" if res.exit_code else "bold green"), soft_wrap=True, highlight=False
    )
    sys.exit(ExitCode(res.exit_code))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotate(res, stream) -> None:
    """GitHub Actions workflow commands: one ``::error`` per broken limit or check that could not
    run, so that each shows on the run's summary and the pull request."""
    for o in res.outcomes:
        if o.status not in ("fail", "error"):
            continue
        title = _escape_property(f"cutediff check: {o.kernel} {o.limit}")
        stream.write(f"::error title={title}::{_escape_data(o.message)}\n")
    stream.flush()
