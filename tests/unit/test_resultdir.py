"""Saved result folders keep one copy of a source file both sides point at."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.resultdir import save_result
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir() / "comparison.json"


def test_identical_sources_are_saved_once(tmp_path):
    c = load_json(SAMPLE)
    c["kernels"] = c["kernels"][:1]
    k = c["kernels"][0]
    same = tmp_path / "orig" / "same.py"
    same.parent.mkdir()
    same.write_text("x = 1\n")
    changed_a, changed_b = tmp_path / "orig" / "a.py", tmp_path / "orig" / "b.py"
    changed_a.write_text("y = 1\n")
    changed_b.write_text("y = 2\n")
    k["a"]["sources"] = {"pkg/same.py": str(same), "pkg/changed.py": str(changed_a)}
    k["b"]["sources"] = {"pkg/same.py": str(same), "pkg/changed.py": str(changed_b)}
    out = tmp_path / "saved"
    save_result(copy.deepcopy(c), out)
    saved = json.loads((out / "comparison.json").read_text())["kernels"][0]
    assert saved["a"]["sources"]["pkg/same.py"] == saved["b"]["sources"]["pkg/same.py"] == "src/a/pkg/same.py"
    assert saved["b"]["sources"]["pkg/changed.py"] == "src/b/pkg/changed.py"
    assert (out / "src/b/pkg/changed.py").read_text() == "y = 2\n"
    assert not (out / "src/b/pkg/same.py").exists()
    reopened = load_json(out / "comparison.json")["kernels"][0]
    assert Path(reopened["b"]["sources"]["pkg/same.py"]).read_text() == "x = 1\n"
