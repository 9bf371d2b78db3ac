"""The bundled /1 sample reports and checks byte-identically to ``main`` before the typed model.

``tests/golden/v1/`` holds what ``tests/golden/capture.py`` wrote with the code of ``main`` at
44c56f2 (the last commit before :mod:`cutediff_tui.core.model`). The JSON report now says
``cutediff.comparison/2`` and carries each kernel's registry figures and ranked ``changes``;
everything else in it must be the same. ``report.md``/``report.html`` were re-captured for issue 15
(intended additions only): "key opcodes unchanged" where classes changed but the key opcodes did
not, each kernel's ranked changes list, and the new "PTX local depot" figure row; then again for
issue 15 items 3 and 6: the PTX opcodes that changed most (a table per kernel and a last ranked
change) and each regressed kernel's largest SASS hunk as a ```diff block.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "v1"
_spec = importlib.util.spec_from_file_location("golden_capture", GOLDEN.parent / "capture.py")
_capture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_capture)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    return _capture.capture(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("name", ["report.md", "report.html", "check.txt", "check.xml", "sweep.html"])
def test_same_bytes_as_before_the_model(outputs, name):
    assert outputs[name] == (GOLDEN / name).read_text()


def test_json_report_same_content_as_before_the_model(outputs):
    old = json.loads((GOLDEN / "report.json").read_text())
    new = json.loads(outputs["report.json"])
    assert old.pop("schema") == "cutediff.comparison/1"
    assert new.pop("schema") == "cutediff.comparison/2"
    figures = [k.pop("figures") for k in new["kernels"]]
    changes = {k["name"]: k.pop("changes") for k in new["kernels"]}
    ptx_ops = {k["name"]: k.pop("ptx_opcode_deltas") for k in new["kernels"]}
    assert ptx_ops["FlashAttentionBackwardPreprocess"][:2] == [
        {"opcode": "cvt.f32.bf16", "a": 128, "b": 0, "delta": -128},
        {"opcode": "fma.rn.f32", "a": 64, "b": 0, "delta": -64},
    ]
    assert all(len(v) <= 8 for v in ptx_ops.values())
    assert changes["FlashAttentionForwardSm100"][0] == (
        "FlashAttentionForwardSm100 spills on 4.8.0: stack 0 → 112 B, spill stores 0 → 176 B"
    )
    assert changes["FlashAttentionForwardSm100"][1].startswith("spill sites added: flash_attn/cute/softmax.py:267")
    # Paths are written relative to the result and without home folders since issue 16: the
    # content is otherwise the same, and no path in the report is absolute any more.
    for doc in (old, new):
        for k in doc["kernels"]:
            for s in ("a", "b"):
                for key in ("files", "sources"):
                    paths = (k.get(s) or {}).pop(key, None) or {}
                    if doc is new:
                        assert not any(str(v).startswith("/") for v in paths.values()), paths
    assert new == old
    fwd = dict(zip([k["name"] for k in new["kernels"]], figures))["FlashAttentionForwardSm100"]
    assert fwd["stack_bytes"] == [0, 112] and fwd["spill_store_bytes"] == [0, 176] and fwd["UTCHMMA"] == [64, 64]
    assert "UTCOMMA" not in fwd  # an opcode neither side has is left out


def test_sample_saved_again_as_v2_reports_the_same(tmp_path):
    """/1 sample → saved result folder (/2, artifacts copied) → the same Markdown and check."""
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.core.model import SCHEMA, read_comparison
    from cutediff_tui.core.report import Limits, check_comparison, render_markdown
    from cutediff_tui.core.resultdir import save_result

    sample = _capture.SAMPLE / "comparison.json"
    save_result(load_json(sample), tmp_path / "saved")
    assert json.loads((tmp_path / "saved" / "comparison.json").read_text())["schema"] == SCHEMA
    again = read_comparison(tmp_path / "saved" / "comparison.json")
    assert render_markdown(again) == (GOLDEN / "report.md").read_text()
    limits = Limits(max_spill_bytes=0, max_register_delta=0, max_stack_delta=0)
    assert check_comparison(again, limits).outcomes == check_comparison(load_json(sample), limits).outcomes
