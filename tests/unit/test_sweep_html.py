"""The HTML heatmap of a sweep result."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser

import pytest

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.report.sweep_html import heat, ink_for, ramp_color, sweep_html

TOOLCHAINS = ["4.5.1", "4.6.3", "4.8.0"]
#: spill_store_bytes per toolchain for (sm_90a 64, sm_90a 128, sm_100a 64, sm_100a 128); None: the cell failed.
SPILLS = {"4.5.1": [0, 0, 0, 0], "4.6.3": [0, 64, 128, None], "4.8.0": [0, 176, 352, 1024]}


def make_result(toolchains: list[str] | None = None) -> dict:
    """12 cells: 3 toolchains × 2 archs × 2 hdims, one failed."""
    names = toolchains or TOOLCHAINS
    cells = []
    for name, side in zip(names, TOOLCHAINS):  # name: the side as typed; side: which row of SPILLS
        for i, (arch, hdim) in enumerate([("sm_90a", 64), ("sm_90a", 128), ("sm_100a", 64), ("sm_100a", 128)]):
            spill = SPILLS[side][i]
            kernel = "FlashAttentionForwardSm90" if arch == "sm_90a" else "FlashAttentionForwardSm100"
            figures = {
                "registers": 160 + 8 * i + TOOLCHAINS.index(side),
                "stack_bytes": spill or 0,
                "spill_store_bytes": spill or 0,
                "spill_load_bytes": spill or 0,
                "stl": (spill or 0) // 16,
                "ldl": (spill or 0) // 16,
                "instructions": 5000 + hdim,
                "mufu": 398,
                "UTCHMMA": 64 if arch == "sm_100a" else 0,
                "MUFU": 398,
            }
            failed = spill is None
            cells.append(
                {
                    "key": f"{side}-{arch}-{hdim}",
                    "side": name,
                    "toolchain": f"{name} [flash-attn-4==4.0.0b16]",
                    "dsl": side,
                    "arch": arch,
                    "gpu": "h100" if arch == "sm_90a" else "b200",
                    "params": {"hdim": hdim},
                    "axis": {"arch": arch, "hdim": hdim},
                    "host": "worker-1",
                    "status": "failed" if failed else "ok",
                    "why": f"DSL {side} cannot build for {arch}: the tcgen05 ops are missing." if failed else None,
                    "kernels": [] if failed else [{"name": kernel, "symbol": f"kernel_{kernel}_0", "figures": figures}],
                    "seconds": 12.3 + i,
                    "from_cache": i == 0,
                }
            )
    return {
        "schema": "cutediff.sweep/1",
        "command": "cutediff sweep 4.5.1 4.6.3 4.8.0 --kernel fa4-fwd",
        "recipe": {"name": "fa4-fwd"},
        "figure": "spill_store_bytes",
        "kernel_filter": None,
        "axes": {"arch": ["sm_90a", "sm_100a"], "hdim": [64, 128]},
        "toolchains": names,
        "executor": {"kind": "dask", "workers": 2, "address": "tcp://10.0.0.5:8786"},
        "created": "2026-12-02T20:00:00+0000",
        "cells": cells,
        "timing": {"wall_seconds": 80.1, "cells": 12, "resumed": 0, "cached_builds": 3},
    }


class _Checker(HTMLParser):
    """Checks tags nest, collects the heatmap's data cells and any script."""

    VOID = {"meta", "br", "img", "hr", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.cells: list[dict[str, str]] = []
        self.scripts = 0
        self.in_heat = False

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "script":
            self.scripts += 1
        if tag == "table" and "heat" in a.get("class", ""):
            self.in_heat = True
        if tag == "td" and self.in_heat:
            self.cells.append(a)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()
        if tag == "table":
            self.in_heat = False


def parse(doc: str) -> _Checker:
    p = _Checker()
    p.feed(doc)
    p.close()
    assert not p.stack, p.stack
    return p


def _bg(cell: dict[str, str]) -> str | None:
    m = re.search(r"background:(#[0-9a-f]{6})", cell.get("style", ""))
    return m.group(1) if m else None


def test_document_is_one_self_contained_page():
    doc = sweep_html(make_result())
    assert doc.startswith("<!DOCTYPE html>") and doc.rstrip().endswith("</html>")
    p = parse(doc)
    assert p.scripts == 0
    assert "Content-Security-Policy" in doc and "default-src 'none'" in doc
    assert "http://" not in doc and "https://" not in doc
    assert "<title>cutediff sweep: fa4-fwd · spill_store_bytes</title>" in doc
    assert "cutediff sweep 4.5.1 4.6.3 4.8.0 --kernel fa4-fwd" in doc
    assert "dask · 2 workers · tcp://10.0.0.5:8786" in doc
    assert "12 cells in 80.1 s (0 resumed, 3 cached builds" in doc
    assert len(p.cells) == 12
    assert '<th scope="row" title="4.5.1 [flash-attn-4==4.0.0b16]">4.5.1</th>' in doc
    assert doc.count('<th colspan="2">sm_90a</th>') == 1 and "<th>hdim=128</th>" in doc


def test_colours_follow_the_values():
    p = parse(sweep_html(make_result()))
    by_title = {c["title"].split("\n")[0]: c for c in p.cells}
    pin = " [flash-attn-4==4.0.0b16]"
    zero = by_title[f"4.5.1{pin} · sm_90a hdim=64"]
    low, mid, top = (by_title[f"4.8.0{pin} · {c}"] for c in ("sm_90a hdim=128", "sm_100a hdim=64", "sm_100a hdim=128"))
    assert zero["class"] == "zero" and _bg(zero) is None  # 0 is neutral
    assert len({_bg(low), _bg(mid), _bg(top)}) == 3
    assert _bg(top) == ramp_color(1.0)
    assert "spill_store_bytes = 1024" in top["title"] and "kernel FlashAttentionForwardSm100" in top["title"]
    assert "min 0" in sweep_html(make_result()) and "max 1024" in sweep_html(make_result())


def test_failed_cell_is_hatched_and_listed():
    doc = sweep_html(make_result())
    p = parse(doc)
    failed = [c for c in p.cells if c.get("class") == "none"]
    assert len(failed) == 1 and "tcgen05 ops are missing" in failed[0]["title"]
    assert "Failed cells (1)" in doc
    section = doc[doc.index("Failed cells") :]
    assert "4.6.3" in section and "sm_100a hdim=128" in section and "DSL 4.6.3 cannot build for sm_100a" in section


def test_no_failed_section_when_all_cells_ran():
    res = make_result()
    res["cells"] = [c for c in res["cells"] if c["status"] == "ok"]
    assert "Failed cells" not in sweep_html(res)


def test_everything_is_escaped():
    evil = "<script>alert(1)</script>"
    res = make_result([evil, "4.6.3", '4.8.0 "quoted" & <b>'])
    res["command"] = f"cutediff sweep '{evil}'"
    res["recipe"]["name"] = evil
    res["cells"][0]["kernels"][0]["name"] = evil
    res["cells"][7]["why"] = evil
    doc = sweep_html(res)
    p = parse(doc)
    assert p.scripts == 0 and "<script" not in doc and "<b>" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    assert any(c["title"].startswith(evil) for c in p.cells)  # unescaped back by the parser: it was an attribute


def test_figure_override_and_kernel_filter():
    res = make_result()
    doc = sweep_html(res, figure="registers")
    assert "<title>cutediff sweep: fa4-fwd · registers</title>" in doc and "registers per thread" in doc
    p = parse(doc)
    assert all(_bg(c) for c in p.cells if c.get("class") != "none")  # no zero registers
    assert "min 160" in doc and "max 186" in doc
    doc = sweep_html(res, figure="UTCHMMA")
    assert "max 64" in doc and sum(1 for c in parse(doc).cells if c.get("class") == "zero") == 6
    doc = sweep_html(res, kernel_filter="Sm100")
    assert doc.count("no kernel matches the filter") == 6
    assert "kernels matching <code>Sm100</code>" in doc
    before = copy.deepcopy(res)
    sweep_html(res, figure="spill_store_bytes+spill_load_bytes")
    assert res == before
    doc = sweep_html(res, figure="registers/stack_bytes")  # inf where the stack is 0: hottest, not in the range
    assert "min 0.182" in doc and "max 2.641" in doc
    assert sum(1 for c in parse(doc).cells if _bg(c) == ramp_color(1.0)) == 6 + 1  # the infs and the max
    with pytest.raises(CutediffError):
        sweep_html(res, figure="spils")


def test_colour_helpers():
    assert heat(None, 0, 10) is None and heat(0, 0, 10) is None
    assert heat(10, 0, 10) == 1.0 and 0 < heat(1, 0, 10) < heat(5, 0, 10) < 1
    assert heat(7, 7, 7) == 1.0
    assert ramp_color(0, ("#000000", "#ffffff")) == "#000000"
    assert ramp_color(0.5, ("#000000", "#ffffff")) == "#808080"
    assert ink_for("#ffffff") == "#000000" and ink_for("#b30000") == "#ffffff"
