"""CLI faces of recipes: ``cutediff recipes``, ``compare --a-source/--b-source`` and ``compare --watch``.

Kept apart from :mod:`cutediff_tui.cli`, which calls in here with its parsed options.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .core.errors import CutediffError


def _consoles() -> tuple[Console, Console]:
    from .cli import err_console, out_console

    return out_console, err_console


# ---------------------------------------------------------------- cutediff recipes


def _archs(archs: tuple[int, ...]) -> str:
    return ", ".join(f"sm_{a // 10}x" for a in archs)


def recipe_table(r) -> Table:
    t = Table(
        title=escape(f"{r.name}: {r.summary}" if r.summary else r.name),
        title_justify="left",
        show_edge=False,
        caption=f"archs {_archs(r.archs)}"
        + (f" · needs {escape(', '.join(r.needs))}" if r.needs else "")
        + ("" if r.strict else " · parameters not readable on this machine (passed as given)"),
        caption_justify="left",
    )
    t.add_column("parameter")
    t.add_column("type")
    t.add_column("default")
    t.add_column("help")
    from .cli import PARAM_KEYS

    flags = bool(r.params) and all(p.name in PARAM_KEYS for p in r.params)  # FA4's own flags (--hdim …)
    for p in r.params:
        default = (
            "" if p.default is None else (str(p.default).lower() if isinstance(p.default, bool) else str(p.default))
        )
        shown = [str(c) if c != "" else "''" for c in p.choices]
        choices = f" ({'|'.join(shown)})" if p.choices else ""
        opt = "--" + p.name.replace("_", "-") if flags else f"--param {p.name}="
        t.add_row(escape(opt), escape(str(p.type)), escape(default), escape(p.help + choices))
    return t


def sample_recipes() -> list[Path]:
    """Recipe files shipped in ``samples/recipes`` of a source checkout (none when installed)."""
    from .core.paths import project_root

    folder = project_root() / "samples" / "recipes"
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_")) if folder.is_dir() else []


def show_recipes(refs: tuple[str, ...], as_json: bool) -> None:
    """List built-in recipes and sample files (no REFs), or the recipes of the files/modules given."""
    from .core.recipes import BUILTINS
    from .core.recipes.refs import display, list_file

    out, err = _consoles()
    listed = []
    if refs:
        for ref in refs:
            listed += list_file(ref)
    else:
        listed = list(BUILTINS.values())
        for f in sample_recipes():
            try:
                listed += list_file(display(f))
            except CutediffError as exc:  # a broken sample is listed as such, not fatal
                err.print(f"[yellow]warning:[/] {escape(exc.sentence())}", soft_wrap=True)
    if as_json:
        sys.stdout.write(json.dumps([r.to_json() for r in listed], indent=1) + "\n")
        return
    for r in listed:
        out.print(recipe_table(r))
        out.print()
    if not refs:
        out.print(
            "[dim]Pass a recipe to compare with --kernel NAME, --kernel path/to/file.py[:function] or "
            "--kernel package.module[:function]; set parameters with --param NAME=VALUE. "
            "Write your own: docs/recipes.md.[/]"
        )


# ---------------------------------------------------------------- sources


def given_params(kw: dict[str, Any]) -> dict[str, Any]:
    """The recipe parameters the user gave (FA4 flags and --param), unconverted."""
    from .cli import PARAM_KEYS

    given = {k: kw.get(k) for k in PARAM_KEYS}
    for item in kw.get("extra_params", ()) or ():
        if "=" not in item:
            raise CutediffError(f"--param {item!r} is not NAME=VALUE.", "Write it as e.g. --param hdim=64.")
        k, v = item.split("=", 1)
        given[k.strip().replace("-", "_")] = v
    return {k: v for k, v in given.items() if v is not None}


def plan_for(opts, kw: dict[str, Any]):
    """Each side's recipe for ``compare`` (``--a-source`` / ``--b-source``)."""
    from .core.recipes.sources import plan_sources

    locals_ = tuple(tuple(s.local_paths()) for s in opts.specs)
    search = tuple(p for paths in locals_ for p in paths)
    return plan_sources(
        opts.recipe, kw.get("a_source"), kw.get("b_source"), search=search, local_paths=(locals_[0], locals_[1])
    )


# ---------------------------------------------------------------- --watch


def watch_compare(opts, plan, kw: dict[str, Any], *, json_out: str | None, save: Path | None, progress) -> None:
    """``compare --watch``: print the comparison, then again after every edit of the sources, until Ctrl-C."""
    from .cli import emit_comparison
    from .core.watch import CompareWatch

    out, err = _consoles()
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
        emit_comparison(comparison, json_out, save, progress)
        progress(f"watching {len(watch.watched())} file(s); save a change to recompile, Ctrl-C stops")

    def on_error(message: str, change) -> None:
        err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
        progress("still watching; fix the source and save to recompile")

    def on_progress(message: str) -> None:
        if "changed: recompiling" in message:
            started[0] = time.monotonic()
        progress(message)

    watch = CompareWatch(
        opts, plan, given=given_params(kw), on_result=on_result, on_error=on_error, progress=on_progress
    )
    if not watch.watched():
        raise CutediffError(
            f"Recipe {opts.recipe.name} has no source file here to watch.",
            "Use --watch with a recipe file (--kernel path/to/file.py) or a --with source folder.",
        )

    def stop_on_term(_sig, _frame):
        raise KeyboardInterrupt

    previous = (
        signal.signal(signal.SIGTERM, stop_on_term) if threading.current_thread() is threading.main_thread() else None
    )
    watch.start(initial=True)
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        progress("stopping: cancelling any compile in flight")
        watch.stop()
        err.print("stopped watching.")
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
