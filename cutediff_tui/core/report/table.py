"""The figures of a comparison as a table: one record per kernel × side × figure.

The rows come from the figure registry (:data:`cutediff_tui.core.model.figures.FIGURES`, the
figures the JSON report carries), in registry order; a figure neither side of a kernel has is left
out (an opcode absent from both listings, a PTX fact an old toolchain did not give). ``cutediff
report --format csv`` writes these records, and the Python API (``cutediff.Comparison.records``)
returns them.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from ..model.figures import Figure, figures_for

__all__ = ["RECORD_FIELDS", "figure_records", "render_csv"]

#: The columns of a record, in CSV order.
RECORD_FIELDS = ("kernel", "side", "toolchain", "figure", "label", "unit", "value")


def _cell(value: Any) -> Any:
    """A value as a CSV cell: a list (register budgets) as ``176/88``, None as empty, and text that a
    spreadsheet would run as a formula (``=…``, ``+…``, ``@…``; a kernel name comes from the
    compiled file, which may be anyone's) behind a ``'``."""
    if isinstance(value, str):
        return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "/".join(str(v) for v in value)
    return value


def figure_records(comparison: dict, figures: list[Figure] | None = None) -> list[dict[str, Any]]:
    """One dict per kernel × side × figure: kernel, side (``a``/``b``), toolchain (the side's
    label), figure (its registry name), label, unit and value (None when that side lacks it)."""
    figs = figures if figures is not None else figures_for("json")
    sides = comparison.get("sides") or {}
    labels: dict[str, str] = {}
    for s in ("a", "b"):
        side = sides.get(s)
        side = side if isinstance(side, dict) else {}
        labels[s] = str(side.get("label") or side.get("dsl") or s.upper())
    rows: list[dict[str, Any]] = []
    for k in comparison.get("kernels") or []:
        if not isinstance(k, dict):
            continue
        for fig in figs:
            if not any(fig.present(k.get(s)) for s in ("a", "b")):
                continue
            for s in ("a", "b"):
                rows.append(
                    {
                        "kernel": str(k.get("name") or k.get("symbol") or ""),
                        "side": s,
                        "toolchain": labels[s],
                        "figure": fig.name,
                        "label": fig.label,
                        "unit": fig.unit,
                        "value": fig.value(k.get(s)),
                    }
                )
    return rows


def render_csv(comparison: dict) -> str:
    """:func:`figure_records` as CSV with a header row (RFC 4180 quoting, ``\\n`` line ends)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=RECORD_FIELDS, lineterminator="\n")
    w.writeheader()
    for row in figure_records(comparison):
        w.writerow({k: _cell(v) for k, v in row.items()})
    return buf.getvalue()
