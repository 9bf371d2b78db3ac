"""``cutediff recipes``: the recipes and their parameters."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from ..core.errors import CutediffError
from ..core.options import PARAM_KEYS
from .common import emit_json, err_console, examples, guarded, json_option, out_console, standard_options

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
    from ..core.paths import project_root

    folder = project_root() / "samples" / "recipes"
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_")) if folder.is_dir() else []


def show_recipes(refs: tuple[str, ...], json_out: str | None) -> None:
    """List built-in recipes and sample files (no REFs), or the recipes of the files/modules given."""
    from ..core.recipes import BUILTINS
    from ..core.recipes.refs import display, list_file

    out, err = out_console, err_console
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
    if not emit_json([r.to_json() for r in listed], json_out):
        return
    for r in listed:
        out.print(recipe_table(r))
        out.print()
    if not refs:
        out.print(
            "[dim]Pass a recipe to compare with --recipe NAME, --recipe path/to/file.py[:function] or "
            "--recipe package.module[:function]; set parameters with --param NAME=VALUE. "
            "Write your own: docs/recipes.md.[/]"
        )


@click.command(
    epilog=examples(
        "cutediff recipes",
        "cutediff recipes samples/recipes/elementwise_add.py",
        "cutediff recipes my_kernels.recipes --json -",
    )
)
@click.argument("refs", nargs=-1)
@json_option("Write them as JSON to PATH, or - for stdout.")
@standard_options
@guarded
def recipes(refs: tuple[str, ...], json_out: str | None) -> None:
    """List the recipes and their parameters: built-in ones and samples, or those of the files/modules given."""
    show_recipes(refs, json_out)
