"""Pick a format and write a report file."""

from __future__ import annotations

from pathlib import Path

from ..errors import CutediffError
from ..locking import atomic_write

FORMATS = ("md", "html", "json", "csv")
_SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json", ".csv": "csv"}


def format_for_path(path: Path | str | None, default: str = "md") -> str:
    """The format a file name asks for (``.md``, ``.html``, ``.json``, ``.csv``), else ``default``."""
    if path is None:
        return default
    return _SUFFIXES.get(Path(path).suffix.lower(), default)


def render(comparison: dict, fmt: str, *, keep_paths: bool = True) -> str:
    """The report text in ``fmt`` (md, html, json, or csv: one row per kernel × side × figure);
    ``keep_paths=False`` removes home folders and the user name from the JSON."""
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown(comparison)
    if fmt == "html":
        from .html import render_html

        return render_html(comparison)
    if fmt == "json":
        from .jsonout import render_json

        return render_json(comparison, keep_paths=keep_paths)
    if fmt == "csv":
        from .table import render_csv

        return render_csv(comparison)
    raise CutediffError(f"Unknown report format {fmt!r}.", f"Use one of: {', '.join(FORMATS)}.")


def write_report(comparison: dict, path: Path | str, fmt: str | None = None) -> Path:
    """Render the report and write it atomically to ``path``; the format defaults to the suffix."""
    path = Path(path)
    text = render(comparison, fmt or format_for_path(path))
    atomic_write(path, text)
    return path
