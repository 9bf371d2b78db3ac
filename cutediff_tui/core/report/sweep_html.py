"""Self-contained HTML heatmap of a sweep (``cutediff.sweep/1``): one file, no script, no network.

Rows are toolchains, columns arch × swept parameters, cells one figure (:func:`~..sweep.grid`).
The colour helpers (:func:`heat`, :func:`ramp_color`, :func:`ink_for`) and :func:`cells_by_place`
are shared with the TUI's sweep screen; nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..metric import RESOURCE_FIGURES
from ..sweep import Grid, cell_column, grid, recipe_name
from .html import CSP, CSS, e, table

__all__ = [
    "RAMP",
    "cells_by_place",
    "executor_text",
    "heat",
    "ink_for",
    "ramp_color",
    "span",
    "sweep_html",
    "timing_text",
]

#: The sequential colour ramp of the heatmap, lowest value first (0 itself stays neutral).
RAMP: tuple[str, ...] = ("#fee8c8", "#fdbb84", "#e34a33", "#b30000")
#: The weakest colour a non-zero value gets, so that it never looks like a 0.
HEAT_FLOOR = 0.12


SWEEP_CSS = """
table.heat { border-collapse: separate; border-spacing: 2px; }
table.heat th, table.heat td { border: 0; }
table.heat thead th { text-align: center; }
table.heat tbody th { background: var(--soft); text-align: left; white-space: nowrap; }
table.heat td { min-width: 72px; text-align: right; font-variant-numeric: tabular-nums; border-radius: 3px; }
table.heat td.zero { background: #fff; color: var(--muted); box-shadow: inset 0 0 0 1px var(--line); }
td.none, .swatch.none { color: var(--muted);
  background: repeating-linear-gradient(45deg, #f6f8fa 0 4px, #e3e7eb 4px 8px); }
.legend { display: flex; align-items: center; gap: 8px; margin: 10px 0; color: var(--muted); font-size: 12px; }
.legend .bar { display: inline-block; width: 180px; height: 12px; border-radius: 3px; }
.swatch { display: inline-block; width: 16px; height: 12px; border-radius: 3px; margin-left: 10px; }
.swatch.zero { background: #fff; box-shadow: inset 0 0 0 1px var(--line); }
"""


# ---------------------------------------------------------------- colour


def span(g: Grid) -> tuple[float, float]:
    """``(min, max)`` of the grid's finite values; ``(0, 0)`` when there are none."""
    finite = [v for v in g.finite if math.isfinite(v)]
    return (min(finite), max(finite)) if finite else (0, 0)


def heat(value: float | None, lo: float, hi: float) -> float | None:
    """How hot ``value`` is on the ramp from ``lo`` to ``hi`` (``HEAT_FLOOR``…1); None for no value or 0."""
    if value is None or value == 0:
        return None
    if not math.isfinite(value):
        t = 1.0 if value > 0 else 0.0
    else:
        t = 1.0 if hi <= lo else (value - lo) / (hi - lo)
    return HEAT_FLOOR + (1 - HEAT_FLOOR) * min(max(t, 0.0), 1.0)


def _rgb(color: str) -> tuple[int, int, int]:
    h = color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def ramp_color(t: float, stops: Sequence[str] = RAMP) -> str:
    """``#rrggbb`` at ``t`` (0…1) along the piecewise-linear ramp through ``stops``."""
    t = min(max(t, 0.0), 1.0)
    if len(stops) == 1:
        return stops[0]
    x = t * (len(stops) - 1)
    i = min(int(x), len(stops) - 2)
    f = x - i
    a, b = _rgb(stops[i]), _rgb(stops[i + 1])
    return "#" + "".join(f"{round(p + (q - p) * f):02x}" for p, q in zip(a, b))


def ink_for(background: str) -> str:
    """Black or white text, whichever reads better on ``background``."""
    r, g, b = _rgb(background)
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


# ---------------------------------------------------------------- result helpers


def cells_by_place(g: Grid) -> dict[tuple[int, int], dict]:
    """The sweep's cells at their ``(row, column)`` index in ``g``."""
    return {(r, k): c for r, row in enumerate(g.cells) for k, c in enumerate(row) if c is not None}


def executor_text(result: dict) -> str:
    """``dask · 2 workers · tcp://…``."""
    ex = result.get("executor") or {}
    bits = [str(ex.get("kind") or "?")]
    if ex.get("workers") is not None:
        bits.append(f"{ex['workers']} worker{'s' if ex['workers'] != 1 else ''}")
    if ex.get("address"):
        bits.append(str(ex["address"]))
    return " · ".join(bits)


def timing_text(result: dict) -> str:
    """``12 cells in 80.1 s (1 resumed, 3 cached builds; 140.2 s of cell time)``."""
    t = result.get("timing") or {}
    cells = result.get("cells", [])
    n = t.get("cells", len(cells))
    wall = t.get("wall_seconds")
    busy = sum(c.get("seconds") or 0 for c in cells)
    head = f"{n} cells" + (f" in {wall:.1f} s" if isinstance(wall, (int, float)) else "")
    return (
        f"{head} ({t.get('resumed', 0)} resumed, {t.get('cached_builds', 0)} cached builds; {busy:.1f} s of cell time)"
    )


def _num(v: float | None) -> str:
    return "—" if v is None else str(v)


# ---------------------------------------------------------------- sections


def _cell_title(g: Grid, r: int, k: int, cell: dict | None) -> str:
    lines = [f"{(cell or {}).get('toolchain') or g.rows[r]} · {g.cols[k]}"]
    v = g.values[r][k]
    if v is None:
        lines.append(g.notes[r][k] or "no value")
    else:
        lines += [f"{g.figure} = {v}", f"kernel {g.kernels[r][k]}"]
    if cell and cell.get("seconds") is not None:
        lines.append(
            f"{cell['seconds']:.1f} s"
            + (" (cached build)" if cell.get("from_cache") else "")
            + (f" on {cell['host']}" if cell.get("host") else "")
        )
    return "\n".join(lines)


def _head(g: Grid) -> str:
    """Two header rows (arch, then parameters) when the sweep has parameters, else one."""
    split = [(c.split(" ", 1) + [""])[:2] for c in g.cols]
    if not any(p for _, p in split):
        return "<tr><th>toolchain</th>" + "".join(f"<th>{e(a)}</th>" for a, _ in split) + "</tr>"
    groups: list[list[Any]] = []
    for arch, _ in split:
        if groups and groups[-1][0] == arch:
            groups[-1][1] += 1
        else:
            groups.append([arch, 1])
    top = '<tr><th rowspan="2">toolchain</th>' + "".join(f'<th colspan="{n}">{e(a)}</th>' for a, n in groups) + "</tr>"
    return top + "<tr>" + "".join(f"<th>{e(p)}</th>" for _, p in split) + "</tr>"


def _heatmap(g: Grid, result: dict) -> str:
    lo, hi = span(g)
    cells = cells_by_place(g)
    full = {r: c["toolchain"] for (r, _), c in cells.items() if c.get("toolchain")}
    body = []
    for r, row in enumerate(g.rows):
        tds = []
        for k in range(len(g.cols)):
            v = g.values[r][k]
            title = e(_cell_title(g, r, k, cells.get((r, k))))
            t = heat(v, lo, hi)
            if v is None:
                tds.append(f'<td class="none" title="{title}">—</td>')
            elif t is None:
                tds.append(f'<td class="zero" title="{title}">{e(_num(v))}</td>')
            else:
                bg = ramp_color(t)
                tds.append(f'<td style="background:{bg};color:{ink_for(bg)}" title="{title}">{e(_num(v))}</td>')
        body.append(f'<tr><th scope="row" title="{e(full.get(r, row))}">{e(row)}</th>{"".join(tds)}</tr>')
    return f'<table class="heat"><thead>{_head(g)}</thead><tbody>{"".join(body)}</tbody></table>'


def _legend(g: Grid) -> str:
    if not g.finite:
        return '<p class="meta">No cell has a value for this figure.</p>'
    stops = ", ".join(ramp_color(HEAT_FLOOR + (1 - HEAT_FLOOR) * i / 4) for i in range(5))
    lo, hi = span(g)
    return (
        f'<div class="legend"><span>min {e(_num(lo))}</span>'
        f'<span class="bar" style="background:linear-gradient(to right, {stops})"></span>'
        f"<span>max {e(_num(hi))}</span>"
        '<span class="swatch zero"></span><span>0</span>'
        '<span class="swatch none"></span><span>no value (hover for why)</span></div>'
    )


def _failed(result: dict) -> str:
    bad = [c for c in result.get("cells", []) if c.get("status") != "ok"]
    if not bad:
        return ""
    rows = []
    for c in bad:
        secs = c.get("seconds")
        rows.append(
            (
                e(c.get("toolchain") or c.get("side") or "?"),
                e(cell_column(c)),
                e(c.get("host") or ""),
                e(f"{secs:.1f}" if isinstance(secs, (int, float)) else "-"),
                e(c.get("why") or "failed"),
            )
        )
    return (
        f"<section><h2>Failed cells ({len(bad)})</h2>"
        + table(["toolchain", "cell", "host", "seconds", "why"], rows, numeric=(3,))
        + "</section>"
    )


def sweep_html(result: dict, figure: str | None = None, kernel_filter: str | None = None) -> str:
    """The sweep as one self-contained HTML heatmap of ``figure`` (default: the sweep's own)."""
    g = grid(result, figure, kernel_filter)
    recipe = recipe_name(result)
    kf = kernel_filter if kernel_filter is not None else result.get("kernel_filter")
    meta = [f"recipe <code>{e(recipe)}</code>", f"figure <code>{e(g.figure)}</code>"]
    if kf:
        meta.append(f"kernels matching <code>{e(kf)}</code>")
    if result.get("created"):
        meta.append(e(result["created"]))
    parts = [
        f"<header><h1>cutediff sweep: {e(recipe)} · {e(g.figure)}</h1>",
        f'<p class="meta">{" · ".join(meta)}</p>',
        f"<pre>{e(result.get('command') or 'cutediff sweep')}</pre>",
        f'<p class="meta">executor {e(executor_text(result))}</p></header>',
        f"<section><h2>{e(g.figure)}</h2>",
    ]
    what = f"{RESOURCE_FIGURES[g.figure]}; " if g.figure in RESOURCE_FIGURES else ""
    parts.append(
        f'<p class="meta">{e(what)}each cell: the largest value among the cell\'s '
        f"{'matching ' if kf else ''}kernels.</p>"
    )
    parts += [
        _heatmap(g, result),
        _legend(g),
        "</section>",
        _failed(result),
        f"<section><h2>Timing</h2><p>{e(timing_text(result))}.</p></section>",
        "<footer>Made by cutediff sweep. Self-contained file: no scripts, no network.</footer>",
    ]
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(f'cutediff sweep: {recipe} · {g.figure}')}</title>\n<style>{CSS}{SWEEP_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
