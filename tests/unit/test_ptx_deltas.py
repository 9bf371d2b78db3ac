"""PTX opcode deltas on every face (issue 15 item 3), from the model's one ranking
(:func:`cutediff_tui.core.model.changes.ptx_opcode_deltas`): the CLI after the table, the
Markdown and HTML reports, the JSON and the TUI metrics pane; on the real PTX of the
``vector_store`` sample recipe (bits128 vs bits16, ``tests/unit/data/recipes/``)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from rich.console import Console

from cutediff_tui.core.analysis.ptx import parse_ptx
from cutediff_tui.core.analysis.ptx_facts import ptx_facts
from cutediff_tui.core.model import dumps
from cutediff_tui.core.model.changes import change_items, kernel_changes, ptx_opcode_deltas
from cutediff_tui.core.report import render_html, render_markdown
from cutediff_tui.render import comparison_tables
from cutediff_tui.ui.widgets.metrics import ptx_rows

DATA = Path(__file__).resolve().parent / "data" / "recipes"


def side(name: str) -> dict:
    entry = parse_ptx(gzip.decompress((DATA / f"{name}.ptx.gz").read_bytes()).decode()).main
    facts = ptx_facts(entry)
    return {
        "registers": 32,
        "stack_bytes": 0,
        "spill_store_bytes": 0,
        "spill_load_bytes": 0,
        "ptx": {"instructions": facts.instructions, "local_bytes": facts.local_bytes, "opcodes": facts.opcodes},
    }


def comparison() -> dict:
    k = "store_kernel"
    return {
        "schema": "cutediff.comparison/2",
        "arch": "sm_90a",
        "recipe": {"name": "vector_store"},
        "sides": {"a": {"dsl": "4.8.0", "label": "4.8.0 bits=128"}, "b": {"dsl": "4.8.0", "label": "4.8.0 bits=16"}},
        "kernels": [
            {"name": k, "symbol": {"a": k, "b": k}, "a": side("vector_store-bits128"), "b": side("vector_store-bits16")}
        ],
    }


def test_ranking_keeps_type_and_width():
    c = comparison()
    rows = ptx_opcode_deltas(c["kernels"][0])
    assert ("st.global.b16", 0, 64) in rows and ("st.global.v4.b32", 8, 0) in rows
    changes = [abs(b - a) for _, a, b in rows]
    assert changes == sorted(changes, reverse=True) and len(rows) <= 8
    # a stored ranking (what the analysis writes) wins over recounting
    k = dict(c["kernels"][0], ptx_opcode_ranking=[{"opcode": "st.global.b16", "a": 0, "b": 64, "delta": 64}])
    assert ptx_opcode_deltas(k) == [("st.global.b16", 0, 64)]


def test_on_every_face():
    c = comparison()
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    for r in comparison_tables(c):
        console.print(r)
    cli = console.export_text()
    assert "PTX opcode deltas" in cli and "st.global.b16 0 → 64  (+64)" in cli
    assert cli.index("PTX opcode deltas") > cli.index("Registers")  # after the table
    md = render_markdown(c)
    assert "| `st.global.b16` | 0 | 64 | +64 |" in md and "| `st.global.v4.b32` | 8 | 0 | -8 |" in md
    html = render_html(c)
    assert "PTX opcodes that changed most" in html and "st.global.b16" in html
    doc = json.loads(dumps(c))
    assert {"opcode": "st.global.b16", "a": 0, "b": 64, "delta": 64} in doc["kernels"][0]["ptx_opcode_deltas"]
    assert ("st.global.b16", 0, 64, 64) in ptx_rows(c["kernels"][0])
    last = kernel_changes(c, c["kernels"][0])[-1]
    assert last.startswith("PTX opcodes changed: ") and "st.global.b16 0 → 64" in last


def test_change_items_say_where_a_listing_shows_them():
    c = comparison()
    item = change_items(c, c["kernels"][0])[-1]
    assert item.group == "ptx_opcodes" and item.view == "ptx" and "st.global.b16" in item.opcodes


def test_no_ptx_no_deltas():
    k = {"name": "k", "a": {"registers": 1}, "b": {"registers": 1}}
    assert ptx_opcode_deltas(k) == []
    assert ptx_rows(k) == []
