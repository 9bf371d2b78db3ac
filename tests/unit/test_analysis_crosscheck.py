"""Tests for the ptxas cross-check matrix and its verdict.

The real matrix installs ptxas 13.0 and 13.4 from PyPI (``nvidia-cuda-nvcc``) into a
cache folder, so it is marked slow.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cutediff_tui.core.analysis.crosscheck import Cell, crosscheck, ensure_ptxas, max_ptx_isa, verdict
from cutediff_tui.core.errors import CutediffError

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "raw"


def _cache_dir(tmp_path_factory) -> Path:
    """A persistent cache when CUTEDIFF_TEST_CACHE is set (CI), else a temporary one."""
    env = os.environ.get("CUTEDIFF_TEST_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("cutediff-cache")


@pytest.mark.parametrize("ptxas, isa", [("13.0", "9.0"), ("13.4.92", "9.4"), ("12.8", "8.8"), ("12.9", "8.9")])
def test_max_ptx_isa(ptxas, isa):
    assert max_ptx_isa(ptxas) == isa


def test_max_ptx_isa_rejects_garbage():
    with pytest.raises(CutediffError):
        max_ptx_isa("latest")


def _cells(spec: dict) -> list[Cell]:
    out = []
    for (side, v), (st, ld) in spec.items():
        out.append(Cell(side, "9.4", v, None, 128, 0, st, ld))
    return out


def test_verdict_ptx():
    m = _cells({("a", "13.0"): (0, 0), ("a", "13.4"): (0, 0), ("b", "13.0"): (120, 100), ("b", "13.4"): (176, 176)})
    cause, text = verdict(m, ["a", "b"], ["13.0", "13.4"])
    assert cause == "ptx" and text.startswith("regression is in the PTX the DSL emits")


def test_verdict_ptxas():
    m = _cells({("a", "13.0"): (0, 0), ("a", "13.4"): (8, 8), ("b", "13.0"): (0, 0), ("b", "13.4"): (8, 8)})
    cause, text = verdict(m, ["a", "b"], ["13.0", "13.4"])
    assert cause == "ptxas" and "in ptxas" in text


def test_verdict_both_and_none():
    m = _cells({("a", "13.0"): (0, 0), ("a", "13.4"): (0, 0), ("b", "13.0"): (0, 0), ("b", "13.4"): (8, 8)})
    assert verdict(m, ["a", "b"], ["13.0", "13.4"])[0] == "both"
    m = _cells({("a", "13.0"): (0, 0), ("a", "13.4"): (0, 0), ("b", "13.0"): (0, 0), ("b", "13.4"): (0, 0)})
    cause, text = verdict(m, ["a", "b"], ["13.0", "13.4"])
    assert cause == "none" and text.startswith("no spills")


def test_verdict_unknown_when_cells_failed():
    m = [Cell("a", "9.4", "13.0", error="boom"), Cell("b", "9.4", "13.0", error="boom")]
    assert verdict(m, ["a", "b"], ["13.0"])[0] == "unknown"


@pytest.mark.slow
def test_real_matrix_on_the_samples(tmp_path_factory):
    cache = _cache_dir(tmp_path_factory)
    ptx = {side: (SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.ptx").read_text() for side in ("4.5.1", "4.8.0")}
    cc = crosscheck(ptx, ["13.0", "13.4"], "sm_103a", cache, allow_rewrite=True)
    figures = {(c.side, c.ptxas_version): (c.spill_stores, c.spill_loads) for c in cc.matrix}
    assert figures == {
        ("4.5.1", "13.0"): (0, 0),
        ("4.5.1", "13.4"): (0, 0),
        ("4.8.0", "13.0"): (120, 100),
        ("4.8.0", "13.4"): (176, 176),
    }
    c = cc.cell("4.8.0", "13.0")
    assert c.rewritten_from == "9.4" and c.registers == 128 and c.stack == 48
    assert cc.cell("4.8.0", "13.4").rewritten_from is None and cc.cell("4.8.0", "13.4").stack == 112
    assert cc.cell("4.5.1", "13.0").rewritten_from == "9.1"
    assert cc.cause == "ptx" and "PTX" in cc.verdict
    # the install is cached and reused
    p = ensure_ptxas("13.4", cache)
    assert p.is_file() and p == cc.ptxas_paths["13.4"]
    assert p.parent.parent.parent.parent.name == "ptxas-13.4"

    # without permission to rewrite, the 13.0 cells are errors that say how to proceed
    cc2 = crosscheck(ptx, ["13.0", "13.4"], "sm_103a", cache, allow_rewrite=False)
    err = cc2.cell("4.8.0", "13.0").error
    assert err == "PTX 9.4 is newer than ptxas 13.0 accepts; pass --allow-ptx-rewrite to rewrite .version (labelled)"
    assert cc2.cell("4.8.0", "13.4").spill_stores == 176
    assert cc2.cause == "ptx"


@pytest.mark.slow
def test_ensure_ptxas_unknown_release(tmp_path):
    with pytest.raises(CutediffError, match="could not be installed"):
        ensure_ptxas("13.99", tmp_path)
    assert not any((tmp_path / "tools").glob(".tmp-*"))
