"""The comparison model: one reader (/1 and /2) and writer (/2), lossless; the typed view."""

from __future__ import annotations

import json
import re

import pytest

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.model import (
    SCHEMA,
    SIDES,
    document,
    dumps,
    load_comparison_bytes,
    read_comparison,
    typed,
)
from cutediff_tui.samples import bundled_sample_dir

SAMPLE = bundled_sample_dir() / "comparison.json"


def test_sides_are_declared_once():
    assert SIDES == ("a", "b")


def test_v1_sample_reads_and_writes_v2_losslessly():
    raw = SAMPLE.read_bytes()
    doc = load_comparison_bytes(raw)
    assert doc == json.loads(raw)  # nothing dropped, nothing changed on the way in
    out = json.loads(dumps(doc))
    assert out["schema"] == SCHEMA == "cutediff.comparison/2"
    for k in out["kernels"]:
        assert k.pop("figures")
        assert k.pop("changes")  # every sample kernel changed: its ranked changes (issue 15)
        assert k.pop("ptx_opcode_deltas")  # and its PTX opcodes
    out["schema"] = "cutediff.comparison/1"
    assert out == json.loads(raw)


def test_unknown_keys_round_trip(tmp_path):
    doc = json.loads(SAMPLE.read_bytes())
    doc["from_the_future"] = {"x": [1, 2]}
    doc["kernels"][0]["a"]["new_fact"] = 42
    doc["sides"]["b"]["extra"] = "kept"
    path = tmp_path / "comparison.json"
    path.write_text(dumps(doc))
    again = read_comparison(path)
    assert again["from_the_future"] == {"x": [1, 2]}
    assert again["kernels"][0]["a"]["new_fact"] == 42 and again["sides"]["b"]["extra"] == "kept"
    assert again["schema"] == SCHEMA
    # a /2 file written again is the same document
    assert dumps(json.loads(path.read_text())) == path.read_text()


def test_typed_view():
    c = typed(load_comparison_bytes(SAMPLE.read_bytes()))
    fwd = next(k for k in c.kernels if k.name == "FlashAttentionForwardSm100")
    assert fwd.b is not None and fwd.side("b") is fwd.b
    assert (fwd.a.stack_bytes, fwd.b.stack_bytes, fwd.b.spill_store_bytes) == (0, 112, 176)
    assert fwd.b.opcodes["UTCHMMA"] == 64 and fwd.b.ptx is not None and fwd.b.ptx.instructions == 7060
    assert c.sides["b"].dsl == "4.8.0" and isinstance(fwd.b.compile_seconds, float)
    assert fwd.alignment is not None and fwd.alignment.matched == 3549
    assert c.crosscheck and all(e.verdict for e in c.crosscheck.values())


def test_document_adds_figures_without_touching_the_input():
    doc = json.loads(SAMPLE.read_bytes())
    out = document(doc)
    assert "figures" not in doc["kernels"][0] and doc["schema"] == "cutediff.comparison/1"
    assert out["kernels"][0]["figures"]["registers"] == [128, 128]


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.update(schema="cutediff.comparison/9"), "newer cutediff"),
        (lambda d: d.update(schema="something/1"), "Re-create it"),
        (lambda d: d.pop("kernels"), "lacks its sides or kernels"),
        (lambda d: d["kernels"][0]["b"].update(registers="many"), r"field cutediff cannot read.*registers"),
    ],
)
def test_bad_documents_get_one_sentence(tmp_path, edit, match):
    doc = json.loads(SAMPLE.read_bytes())
    edit(doc)
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CutediffError) as exc:
        read_comparison(path)
    assert re.search(match, exc.value.sentence()) and "\n" not in exc.value.sentence()


def test_not_json_and_missing(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_bytes(b"\xff{not json")
    with pytest.raises(CutediffError, match="does not parse"):
        read_comparison(bad)
    with pytest.raises(CutediffError, match="does not exist"):
        read_comparison(tmp_path / "nope.json")


def test_nan_in_a_saved_file_still_reads(tmp_path):
    doc = json.loads(SAMPLE.read_bytes())
    doc["kernels"][0]["b"]["compile_seconds"] = float("nan")
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(doc))
    got = read_comparison(path)
    assert got["kernels"][0]["b"]["compile_seconds"] != got["kernels"][0]["b"]["compile_seconds"]


def test_bench_attaches_to_a_saved_v1_comparison(tmp_path):
    from cutediff_tui.core.bench.attach import attach_bench

    (tmp_path / "comparison.json").write_bytes(SAMPLE.read_bytes())
    attach_bench(tmp_path, {"mode": "fwd", "shapes": []})
    doc = json.loads((tmp_path / "comparison.json").read_text())
    assert doc["schema"] == SCHEMA and doc["bench"] == {"mode": "fwd", "shapes": []}
    assert doc["kernels"][0]["a"]["files"] == json.loads(SAMPLE.read_bytes())["kernels"][0]["a"]["files"]
