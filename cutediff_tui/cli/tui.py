"""``cutediff`` (no command) and ``cutediff open``: results in the TUI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from ..core.errors import CutediffError
from .common import (
    examples,
    exit_with,
    guarded,
    kernel_filter_option,
    open_bisect,
    open_comparison,
    progress_printer,
    standard_options,
    stop_progress,
)


def open_tui(path: Path | None, kernel_filter: str | None = None) -> None:
    """Open a saved comparison (the bundled sample when ``path`` is None) in the TUI, with only
    the kernels ``kernel_filter`` keeps."""
    from ..samples import default_sample

    @guarded
    def go() -> None:
        from ..core.compare import load_json
        from ..core.model.kernel_filter import filter_comparison

        target = path or default_sample()
        open_comparison(filter_comparison(load_json(target), kernel_filter), source=target)

    go()


@click.command(
    "open",
    epilog=examples(
        "cutediff open result/",
        "cutediff open comparison.json --kernel-filter Forward",
        "cutediff open sweep.json",
    ),
)
@click.argument("result", type=click.Path(path_type=Path))
@click.option(
    "--yes", is_flag=True, help="Build a bisect result's two toolchains without asking (opening one compiles its pair)."
)
@kernel_filter_option("a sweep's cells show the largest value among these.")
@standard_options
@guarded
def open_cmd(result: Path, yes: bool = False, kernel_filter: str | None = None) -> None:
    """Open a saved comparison (a comparison.json or its folder), a sweep or a bisect result in the TUI."""
    if result.is_dir():
        result = result / "comparison.json"
    other = sweep_or_bisect(result)
    if other is not None:
        if other.get("schema") == "cutediff.bisect/1":
            confirm_bisect_build(other, yes)
        return open_many(other, kernel_filter)
    open_tui(result, kernel_filter)


def confirm_bisect_build(result: dict, yes: bool) -> None:
    """A bisect result opens as a fresh compile of its two versions: the packages and the recipe
    it names come from whoever wrote the file, so say what will be built and run, and go on only
    when the user agrees (``--yes``, or "y" at the prompt on a terminal)."""
    import sys

    from ..core.bisect import pair_versions
    from ..core.sanitize import one_line

    try:
        good, bad = pair_versions(result)
    except (KeyError, IndexError, TypeError):
        return  # pair_options says what is missing, in one sentence, before anything is built
    pins = ", ".join(one_line(p) for p in result.get("pins") or []) or "no other pins"
    what = (
        f"Opening this bisect result compiles DSL {one_line(good)} and {one_line(bad)} ({pins}) with the recipe "
        f"{one_line(result.get('recipe'))}: the packages come from the package index and the recipe runs as code "
        "with your rights."
    )
    if yes:
        return
    if sys.stdin.isatty() and sys.stderr.isatty():
        stop_progress()
        if click.confirm(what + " Build them?", default=False, err=True):
            return
        raise CutediffError("Nothing was built.", "Pass --yes to build them, or compare the versions you choose.")
    raise CutediffError(
        what, "Pass --yes if you trust the file, or compare the versions yourself with cutediff compare."
    )


def sweep_or_bisect(path: Path) -> dict | None:
    """The sweep or bisect result in ``path``, read once; None for anything else (a comparison, or a
    file that is not a JSON object: the comparison loader then says why in one sentence). A
    comparison written by cutediff names its schema first, so it is recognised from its first bytes
    and its MBs are parsed only once, on their way to the TUI."""
    if not Path(path).is_file():  # a FIFO or a device is refused by the comparison loader
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
        if re.match(rb'\s*\{\s*"schema"\s*:\s*"cutediff\.comparison/\d+"', head):
            return None
        from ..core.files import read_bounded

        data = json.loads(read_bounded(Path(path)))
    except (OSError, ValueError, RecursionError, CutediffError):  # UnicodeDecodeError is a ValueError too
        return None
    if isinstance(data, dict) and data.get("schema") in ("cutediff.sweep/1", "cutediff.bisect/1"):
        from ..core.model.results import check_bisect, check_sweep

        (check_sweep if data["schema"] == "cutediff.sweep/1" else check_bisect)(data, str(path))
        return data
    return None


@guarded
def open_many(result: dict, kernel_filter: str | None = None) -> None:
    """A sweep opens as its heatmap; a bisect as the comparison of its last good and first bad versions."""
    if result.get("schema") == "cutediff.sweep/1":
        from ..core.sweep import grid
        from ..ui.screens.sweep import SweepApp

        grid(result, kernel_filter=kernel_filter)  # refuses a damaged result in one sentence before the app starts
        stop_progress()
        app = SweepApp(result, kernel_filter=kernel_filter)
        app.run()
        exit_with(app)
        return
    open_bisect(result, progress_printer(), kernel_filter)
