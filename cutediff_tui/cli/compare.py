"""``cutediff compare`` (with ``--watch`` and ``--a-source/--b-source``) and ``cutediff diff``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from ..core.errors import CutediffError
from ..core.events import Progress, render_event
from ..core.options import CompareOptions, command_line, compare_options, given_params
from .common import (
    ExitCode,
    complete_versions,
    err_console,
    examples,
    exit_with,
    guarded,
    json_option,
    kernel_filter_option,
    open_comparison,
    out_console,
    progress_printer,
    recipe_options,
    side_error_lines,
    side_param_options,
    standard_options,
    state,
    stops_on_interrupt,
    write_output,
    write_stdout,
)

# ---------------------------------------------------------------- --listing (issue 15 item 6)


def listing_options(func: Any) -> Any:
    """``--listing [-C N] [--top K] [--kernel-filter RE] [--ptx]`` of ``compare`` and ``diff``."""
    opts = [
        click.option(
            "--listing", is_flag=True, help="Print the aligned SASS hunks as a unified diff, largest first."
        ),
        click.option(
            "-C", "--context", "context", type=click.IntRange(min=0), default=3, show_default=True,
            help="Lines of context around each hunk (--listing).",
        ),
        click.option("--top", type=click.IntRange(min=1), default=None, help="Only the K largest hunks (--listing)."),
        kernel_filter_option("the tables, the verdict, --json, --listing and --tui show only these (compare --save keeps every kernel)."),
        click.option("--ptx", is_flag=True, help="Diff the PTX instead of the SASS (--listing)."),
    ]  # fmt: skip
    for o in reversed(opts):
        func = o(func)
    return func


def check_listing_options(kw: dict[str, Any]) -> None:
    """One sentence when a ``--listing`` option comes without ``--listing`` (or with ``--watch``)."""
    if kw.get("listing"):
        if kw.get("watch"):
            raise CutediffError(
                "--listing prints one diff and --watch reprints the tables after each edit: not both.",
                "Drop --watch, or run --listing again after an edit (it is served from the cache).",
            )
        return
    given = [opt for opt, key in (("--top", "top"), ("--ptx", "ptx")) if kw.get(key)]
    if given:
        raise CutediffError(
            f"{', '.join(given)} only {'shapes' if len(given) == 1 else 'shape'} the --listing output, "
            "and --listing was not given.",
            "Add --listing to print the aligned hunks as a unified diff.",
        )


def print_listing(comparison: dict, kw: dict[str, Any]) -> int:
    """Print the ``--listing`` diff on stdout (colour on a terminal or with ``--color always``,
    plain text when piped); returns the number of hunks."""
    from rich.text import Text

    from ..core.listing import listing_hunks, unified_diff

    hunks = listing_hunks(
        comparison,
        view="ptx" if kw.get("ptx") else "sass",
        context=int(kw.get("context") or 0),
        top=kw.get("top"),
        kernel_filter=kw.get("kernel_filter"),
    )
    lines = unified_diff(comparison, hunks)
    styles = {"---": "bold", "+++": "bold", "@@": "cyan", "-": "red", "+": "green"}
    try:
        if out_console.color_system is not None and not out_console.no_color:  # --color, NO_COLOR, a tty
            for line in lines:
                style = next((v for k, v in styles.items() if line.startswith(k)), "")
                out_console.print(Text(line, style=style), soft_wrap=True, highlight=False)
        else:
            write_stdout("".join(line + "\n" for line in lines))
    except BrokenPipeError:  # `| head`, or less quit early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush is quiet
    if not hunks:
        err_console.print("no changed hunks (register renames aside) in the selected kernels", soft_wrap=True)
    return len(hunks)


def emit_listing(
    comparison: dict,
    kw: dict[str, Any],
    *,
    json_out: str | None,
    save: Path | None,
    progress: Progress,
    recipe_files: dict[str, list[Path]] | None = None,
) -> list[str]:
    """``--listing``: save or write the JSON as asked, then the diff instead of the tables."""
    from ..core.analysis_pipeline import dumps
    from ..core.resultdir import save_result

    if save:
        comparison = save_result(comparison, save, bool(kw.get("keep_paths")), recipe_files)
        progress(f"saved to {save}")
    comparison = shown(comparison, kw)
    if json_out and json_out != "-":
        write_output(Path(json_out), dumps(comparison) + "\n", option="--json")
        progress(f"wrote {json_out}")
    elif json_out == "-":
        raise CutediffError("--listing and --json - both write to stdout.", "Give --json a file, or drop one of them.")
    errors = print_side_errors(comparison)
    if not errors:
        print_listing(comparison, kw)
    return errors


@click.command(
    epilog=examples(
        "cutediff compare 4.5.1 4.8.0 --recipe fa4-fwd --arch sm_103a --varlen --causal --hdim 128",
        "cutediff compare 4.5.1 4.8.0 --recipe samples/recipes/elementwise_add.py --gpu h200 --json -",
        "cutediff compare 4.8.0 4.8.0,quack-kernels==0.6.5 --recipe fa4-fwd --save result/ --tui",
    )
)
@click.argument("a", shell_complete=complete_versions)
@click.argument("b", shell_complete=complete_versions)
@recipe_options
@json_option("Write the comparison as JSON to PATH, or - for stdout.")
@click.option(
    "--save", type=click.Path(path_type=Path), default=None, help="Save a self-contained result folder (opens offline)."
)
@click.option("--crosscheck", default=None, help="Re-assemble both PTXs with these ptxas versions, e.g. 13.0,13.4.")
@click.option("--allow-ptx-rewrite", is_flag=True, help="Rewrite PTX .version down for an older ptxas (labelled).")
@click.option("--tui", is_flag=True, help="Open the result in the TUI.")
@click.option("--keep-paths", is_flag=True, help="Keep home folders and user names in a --save result.")
@click.option(
    "--a-source",
    default=None,
    help="Side A compiles the recipe file from here: a PATH (file, or a checkout holding it) or git:REV.",
)
@click.option("--b-source", default=None, help="Side B compiles the recipe file from here: a PATH or git:REV.")
@side_param_options
@click.option(
    "--watch", is_flag=True, help="Recompile and reprint when the recipe's source files change (Ctrl-C stops)."
)
@click.option(
    "--no-plain-check",
    is_flag=True,
    help="Build each side once, with line info, and skip the plain build that confirms its resource figures.",
)
@standard_options
@listing_options
@guarded
def compare(a: str, b: str, json_out: str | None, save: Path | None, tui: bool, **kw: Any) -> None:
    """Compile a recipe under toolchains A and B (in parallel) and compare the kernels.

    A and B are DSL versions with optional pins, e.g. 4.5.1 or 4.8.0,quack-kernels==0.6.5.
    --a-param/--b-param set a recipe parameter on one side only (two settings, one toolchain).
    --recipe takes a built-in recipe or a recipe file/module (cutediff recipes lists them).
    """
    from ..core.recipes.sources import run_compare_plan

    check_listing_options(kw)
    opts = compare_options(a, b, kw)
    plan = plan_for(opts, kw)
    progress = progress_printer()
    progress(
        f"compare {opts.specs[0].label} vs {opts.specs[1].label}: {opts.recipe.name} for {opts.profile.arch} ({opts.profile.name}, {opts.profile.num_sms} SMs)"
    )
    if kw.get("watch"):
        if tui:
            if kw.get("kernel_filter"):
                raise CutediffError(
                    "--kernel-filter and --watch --tui: the TUI's watch shows every kernel it recompiles.",
                    "Drop --kernel-filter (pick the kernel in the TUI), or drop --tui to watch the filtered tables.",
                )
            return watch_tui(opts, plan, kw, progress)
        return watch_compare(opts, plan, kw, json_out=json_out, save=save, progress=progress)
    comparison = run_compare_plan(opts, plan, progress)
    if kw.get("listing"):
        errors = emit_listing(
            comparison, kw, json_out=json_out, save=save, progress=progress, recipe_files=plan.recipe_files()
        )
    else:
        errors = emit_comparison(
            comparison,
            json_out,
            save,
            progress,
            keep_paths=bool(kw.get("keep_paths")),
            kernel_filter=kw.get("kernel_filter"),
            recipe_files=plan.recipe_files(),
        )
    if tui and not errors:
        open_comparison(shown(comparison, kw))
    if errors:
        sys.exit(ExitCode.ERROR)


def shown(comparison: dict, kw: dict[str, Any]) -> dict:
    """What the tables, the verdict line, ``--json``, ``--listing`` and ``--tui`` show: the
    kernels ``--kernel-filter`` keeps (``"kernel_filter"`` recorded at top level). One sentence
    when it keeps none. A ``--save`` folder is data and keeps every kernel."""
    from ..core.model.kernel_filter import filter_comparison

    return filter_comparison(comparison, kw.get("kernel_filter"))


def emit_comparison(
    comparison: dict,
    json_out: str | None,
    save: Path | None,
    progress: Progress,
    *,
    keep_paths: bool = False,
    kernel_filter: str | None = None,
    recipe_files: dict[str, list[Path]] | None = None,
) -> list[str]:
    """Save, write or print one comparison as ``compare`` does, and print its side errors; returns
    them. ``--save`` keeps every kernel (and ``recipe_files``, the sides' recipes); the JSON and the
    tables only those ``kernel_filter`` keeps."""
    from ..core.resultdir import save_result

    if save:
        comparison = save_result(comparison, save, keep_paths, recipe_files)
        progress(f"saved to {save}")
    comparison = shown(comparison, {"kernel_filter": kernel_filter})
    write_or_print(comparison, json_out, progress)
    return print_side_errors(comparison)


def write_or_print(
    comparison: dict, json_out: str | None, progress: Progress | None = None, *, inputs: tuple = ()
) -> None:
    """The comparison as JSON on stdout (``-``), or its tables (and the JSON in a file)."""
    from ..core.analysis_pipeline import dumps
    from ..render import comparison_tables

    if json_out == "-":
        write_stdout(dumps(comparison) + "\n")
        return
    if json_out:
        write_output(Path(json_out), dumps(comparison) + "\n", inputs=inputs, option="--json")
        if progress is not None:
            progress(f"wrote {json_out}")
    for renderable in comparison_tables(comparison):
        out_console.print(renderable)


def print_side_errors(comparison: dict) -> list[str]:
    """Print the sides' errors as ``error:`` lines (with ``--debug``, each failed side's log and
    the recipe's traceback first); returns them."""
    from ..core.files import display

    errors = [s["error"] for s in comparison["sides"].values() if s.get("error")]
    if errors and state().debug:
        for name, side in comparison["sides"].items():
            if side.get("error"):
                log = side.get("error_log") or "(this side left no log: it failed before its compile started)"
                err_console.rule(f"side {name.upper()}: log and traceback", style="red")
                err_console.print(escape(display(log)), soft_wrap=True, highlight=False)
    for e in side_error_lines(errors):
        err_console.print(f"[bold red]error:[/] {escape(e)}", soft_wrap=True)
    sys.stdout.flush()
    return errors


def plan_for(opts: CompareOptions, kw: dict[str, Any]):
    """Each side's recipe for ``compare`` (``--a-source`` / ``--b-source``)."""
    from ..core.recipes.sources import plan_sources

    locals_ = tuple(tuple(s.local_paths()) for s in opts.specs)
    search = tuple(p for paths in locals_ for p in paths)
    return plan_sources(
        opts.recipe, kw.get("a_source"), kw.get("b_source"), search=search, local_paths=(locals_[0], locals_[1])
    )


def watch_tui(opts: CompareOptions, plan, kw: dict[str, Any], progress: Progress) -> None:
    """``compare --watch --tui``: the first comparison, then the TUI, which recompiles on every
    save of the sources and refreshes in place (warm workers keep the DSL imported)."""
    from ..core import warm
    from ..core.recipes.sources import run_compare_plan
    from ..ui.app import CutediffApp
    from ..ui.live import WatchSpec

    if not plan.watched():
        raise CutediffError(
            f"Recipe {opts.recipe.name} has no source file here to watch.",
            "Use --watch with a recipe file (--recipe path/to/file.py) or a --with source folder.",
        )
    from ..core.watch import source_digests

    with stops_on_interrupt(), warm.session():
        seen = source_digests(plan.watched())  # before the compile: a save during it counts
        comparison = run_compare_plan(opts, plan, progress)
        app = CutediffApp(comparison, watch=WatchSpec(opts, plan, given_params(kw), seen))
        app.run()
    exit_with(app)


def watch_compare(
    opts: CompareOptions, plan, kw: dict[str, Any], *, json_out: str | None, save: Path | None, progress: Progress
) -> None:
    """``compare --watch``: print the comparison, then again after every edit of the sources, until Ctrl-C."""
    from ..core import warm
    from ..core.watch import CompareWatch

    warm.enable()  # recompiles skip the imports; stopped below

    out, err = out_console, err_console
    started = [time.monotonic()]

    def on_result(comparison: dict, change) -> None:
        if change is not None:
            screen = err if json_out == "-" else out  # keep stdout pure JSON with --json -
            if screen.is_terminal:
                screen.clear()
            secs = time.monotonic() - started[0]
            sides = " and ".join(s.upper() for s in sorted(change.sides)) or "A and B"
            screen.rule(
                f"{time.strftime('%H:%M:%S')} · {change.names()} changed · side {sides} rebuilt in {secs:.1f} s",
                style="cyan",
            )
        try:
            emit_comparison(
                comparison,
                json_out,
                save,
                progress,
                kernel_filter=kw.get("kernel_filter"),
                recipe_files=plan.recipe_files(),
            )
        except CutediffError as exc:  # a filter that matches none of this build's kernels: keep watching
            return on_error(exc.sentence(), change)
        progress(f"watching {len(watch.watched())} file(s); save a change to recompile, Ctrl-C stops")

    def on_error(message: str, change) -> None:
        err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
        progress("still watching; fix the source and save to recompile")

    def on_progress(message) -> None:
        if "changed: recompiling" in render_event(message):
            started[0] = time.monotonic()
        progress(message)

    watch = CompareWatch(
        opts, plan, given=given_params(kw), on_result=on_result, on_error=on_error, progress=on_progress
    )
    if not watch.watched():
        raise CutediffError(
            f"Recipe {opts.recipe.name} has no source file here to watch.",
            "Use --watch with a recipe file (--recipe path/to/file.py) or a --with source folder.",
        )

    with stops_on_interrupt():
        watch.start(initial=True)
        try:
            while True:
                time.sleep(0.2)
        except KeyboardInterrupt:
            progress("stopping: cancelling any compile in flight")
            watch.stop()
            err.print("stopped watching.")
        finally:
            warm.disable()


@click.command(
    epilog=examples(
        "cutediff diff before.cubin after.cubin",
        "cutediff diff dump-4.5.1/ dump-4.8.0/ --label-a 4.5.1 --label-b 4.8.0 --tui",
        "cutediff diff a.sass b.sass --json diff.json",
    )
)
@click.argument("path_a", type=click.Path(path_type=Path))
@click.argument("path_b", type=click.Path(path_type=Path), required=False)
@json_option("Write the comparison as JSON to PATH, or - for stdout.")
@click.option(
    "--allow-arch-mismatch", is_flag=True, help="Compare cubins built for different GPU architectures (figures only)."
)
@click.option("--label-a", default=None, help="Name of side A in tables and reports (default: its file name).")
@click.option("--label-b", default=None, help="Name of side B in tables and reports (default: its file name).")
@click.option("--tui", is_flag=True, help="Open the result in the TUI.")
@standard_options
@listing_options
@guarded
def diff(
    path_a: Path,
    path_b: Path | None,
    json_out: str | None,
    allow_arch_mismatch: bool,
    label_a: str | None,
    label_b: str | None,
    tui: bool,
    **kw: Any,
) -> None:
    """Analyse existing artifacts, no compile: per side a .cubin (any compiler; several kernels are
    split per function and paired by symbol), a .ptx, SASS text (.sass: nvdisasm, cuobjdump -sass,
    Compiler Explorer) or a folder of them (CUTE_DSL_DUMP_DIR, Triton cache). With one PATH, a
    saved comparison (its folder or comparison.json), e.g. for --listing without a recompile."""
    from ..core.artifacts_diff import diff_paths

    check_listing_options(kw)
    if path_b is None:
        return diff_saved(path_a, json_out, tui, kw)

    def warn(msg: str) -> None:
        err_console.print(f"[bold yellow]warning:[/] {escape(msg)}", soft_wrap=True)

    comparison = diff_paths(
        path_a,
        path_b,
        command=command_line(),
        allow_arch_mismatch=allow_arch_mismatch,
        warn=warn,
        labels=(label_a, label_b),
    )
    if kw.get("listing"):
        failed = emit_listing(comparison, kw, json_out=json_out, save=None, progress=progress_printer(False))
        sys.exit(ExitCode.ERROR if failed else ExitCode.OK)
    comparison = shown(comparison, kw)
    write_or_print(comparison, json_out, inputs=(path_a, path_b))
    failed = print_side_errors(comparison)
    if tui and not failed:
        open_comparison(comparison)
    if failed:
        sys.exit(ExitCode.ERROR)


def diff_saved(path: Path, json_out: str | None, tui: bool, kw: dict[str, Any]) -> None:
    """``cutediff diff RESULT``: a saved comparison's tables, or its ``--listing``, no compile."""
    from ..core.model import read_comparison

    if not path.exists():
        raise CutediffError(
            f"{path} does not exist.", "Give a saved comparison (a --save folder or comparison.json), or two paths."
        )
    if path.is_dir() and not (path / "comparison.json").is_file():
        raise CutediffError(
            f"{path} is a folder without a comparison.json, and diff got one path.",
            "Give two artifact paths (cutediff diff PATH_A PATH_B), or a saved comparison folder.",
        )
    comparison = read_comparison(path / "comparison.json" if path.is_dir() else path)
    if kw.get("listing"):
        failed = emit_listing(comparison, kw, json_out=json_out, save=None, progress=progress_printer(False))
    else:
        comparison = shown(comparison, kw)
        write_or_print(comparison, json_out, inputs=(path,))
        failed = print_side_errors(comparison)
    if tui and not failed:
        open_comparison(shown(comparison, kw))
    if failed:
        sys.exit(ExitCode.ERROR)
