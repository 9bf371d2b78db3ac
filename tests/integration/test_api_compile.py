"""One real compile through the Python API: ``cutediff.compare`` on the elementwise_add sample
recipe, DSL 4.5.1 vs 4.8.0 (the environments and builds of test_recipes_compile.py, so the cache
is warm after that file has run)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cutediff

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PINS = ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"]


def test_compare_two_toolchains_through_the_api(compile_cache, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    events = []
    c = cutediff.compare(
        "4.5.1",
        "4.8.0",
        recipe=str(ROOT / "samples" / "recipes" / "elementwise_add.py"),
        arch="sm_90a",
        pins=PINS,
        lineinfo=False,
        progress=events.append,
    )
    assert c.errors == [], c.errors
    assert c.data["sides"]["a"]["versions"]["nvidia-cutlass-dsl"] == "4.5.1"
    assert c.data["sides"]["b"]["versions"]["nvidia-cutlass-dsl"] == "4.8.0"
    assert "add_kernel" in c.kernels, c.kernels  # the @cute.kernel, not its launcher elementwise_add
    regs = {r["side"]: r["value"] for r in c.records() if r["figure"] == "registers"}
    assert set(regs) == {"a", "b"} and all(isinstance(v, int) and v > 0 for v in regs.values())
    assert events, "progress= received no event"
    assert c.data["command"].startswith("cutediff compare 4.5.1 4.8.0 --recipe ")
    assert cutediff.check(c, max_spill_bytes=0).passed
    assert "add_kernel" in c.report("csv")
