"""The Markdown report written by ``e`` (headless).

Uses :func:`cutediff_tui.core.report.render_markdown` when the core provides it, and a
short summary of resources per kernel otherwise.
"""

from __future__ import annotations

import importlib
from pathlib import Path

__all__ = ["REPORT_NAME", "render_report", "write_report"]

REPORT_NAME = "cutediff-report.md"
_ROWS = (
    ("registers", "registers"),
    ("stack_bytes", "stack bytes"),
    ("spill_store_bytes", "spill stores (bytes)"),
    ("spill_load_bytes", "spill loads (bytes)"),
    ("stl", "STL"),
    ("ldl", "LDL"),
    ("shared_bytes", "shared bytes"),
    ("instructions", "SASS instructions"),
)


def _core_renderer():
    try:
        mod = importlib.import_module("cutediff_tui.core.report")
    except ImportError:
        return None
    return getattr(mod, "render_markdown", None)


def _cell(v) -> str:
    return "–" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))


def summary_markdown(c: dict) -> str:
    """A simple Markdown summary: toolchains, then a resource table per kernel."""
    sa, sb = c["sides"]["a"], c["sides"]["b"]
    out = [
        f"# cutediff: {c.get('recipe', {}).get('name', '?')} on {c.get('arch', '?')}",
        "",
        f"- A: DSL {sa.get('label') or sa.get('dsl')}" + (f" (failed: {sa['error']})" if sa.get("error") else ""),
        f"- B: DSL {sb.get('label') or sb.get('dsl')}" + (f" (failed: {sb['error']})" if sb.get("error") else ""),
        "",
    ]
    for k in c.get("kernels", []):
        a, b = k.get("a") or {}, k.get("b") or {}
        out += [f"## {k.get('name')}", "", f"| | A {sa.get('dsl')} | B {sb.get('dsl')} | Δ |", "|---|---:|---:|---:|"]
        for key, label in _ROWS:
            va, vb = a.get(key), b.get(key)
            if va is None and vb is None:
                continue
            d = vb - va if isinstance(va, (int, float)) and isinstance(vb, (int, float)) else None
            out.append(f"| {label} | {_cell(va)} | {_cell(vb)} | {'' if d is None else f'{d:+}'} |")
        al = k.get("alignment") or {}
        if al.get("match_pct") is not None:
            out.append(f"\nSASS match: {al['match_pct']:.1f}%")
        out.append("")
    return "\n".join(out) + "\n"


def render_report(comparison: dict) -> str:
    render = _core_renderer()
    return render(comparison) if render else summary_markdown(comparison)


def write_report(comparison: dict, folder: Path, *, name: str = REPORT_NAME, force: bool = False) -> Path:
    """Write the report to ``folder/name`` and return its path.

    Raises a one-sentence ``CutediffError`` when that path is a symbolic link, or exists and
    ``force`` is not given (the TUI asks first)."""
    from cutediff_tui.core.files import check_output
    from cutediff_tui.core.locking import atomic_write

    path = check_output(Path(folder) / name, force=force, option="the report")
    atomic_write(path, render_report(comparison))
    return path
