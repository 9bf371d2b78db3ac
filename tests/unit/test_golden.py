"""The bundled /1 sample reports and checks byte-identically to ``main`` before the typed model.

``tests/golden/v1/`` holds what ``tests/golden/capture.py`` wrote with the code of ``main`` at
44c56f2 (the last commit before :mod:`cutediff_tui.core.model`). The JSON report now says
``cutediff.comparison/2`` and carries each kernel's registry figures; everything else in it must be
the same.
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
    assert new == old
    fwd = dict(zip([k["name"] for k in new["kernels"]], figures))["FlashAttentionForwardSm100"]
    assert fwd["stack_bytes"] == [0, 112] and fwd["spill_store_bytes"] == [0, 176] and fwd["UTCHMMA"] == [64, 64]
    assert "UTCOMMA" not in fwd  # an opcode neither side has is left out
