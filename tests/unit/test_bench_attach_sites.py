"""ncu's per-instruction counts land on every spill site, even when ncu profiled a build whose code
sits at other offsets (recorded on the H200: benchmarks/results/h200/issue20/pos)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cutediff_tui.core.bench.attach import annotate_spill_sites

DATA = json.loads((Path(__file__).parent / "data" / "bench" / "h200_spill_sites.json").read_text())


def _comparison() -> dict:
    side = {"spill_sites": copy.deepcopy(DATA["static_sites"])}
    return {"kernels": [{"name": DATA["kernel"], "a": {}, "b": side}]}


def _bench(spills: dict) -> dict:
    return {"profile": {"sides": {"b": {"spills": spills}}}}


def test_moved_spill_code_is_paired_in_code_order():
    c = _comparison()
    # the real recording: 32 sites, none at the offset of the plain build's site
    offsets = {m["offset"] for m in DATA["ncu_spills"][DATA["kernel"]]["sites"]}
    assert sum(s["addr"] in offsets for s in DATA["static_sites"]) < len(DATA["static_sites"])
    assert annotate_spill_sites(c, _bench(DATA["ncu_spills"])) == 32
    sites = c["kernels"][0]["b"]["spill_sites"]
    assert all(s["executed"] == 131072 for s in sites)
    assert c["kernels"][0]["b"]["spill_executed"]["matched"] == 32


def test_different_spill_code_is_not_paired_by_order():
    c = _comparison()
    spills = copy.deepcopy(DATA["ncu_spills"])
    rows = spills[DATA["kernel"]]["sites"]
    rows[0]["sass"] = "LDL.64 R2, [R1+0x8]"  # another instruction: the order proves nothing
    placed = annotate_spill_sites(c, _bench(spills))
    assert placed < 32
    assert all(
        s.get("executed") is None or s["addr"] in {m["offset"] for m in rows}
        for s in c["kernels"][0]["b"]["spill_sites"]
    )
