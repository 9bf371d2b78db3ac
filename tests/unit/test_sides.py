"""Issue 15 item 7: per-side recipe parameters and side labels that say what differs.

Also the one definition of "SASS match" (matched pairs, both counts) on every face.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.model import side_labels
from cutediff_tui.core.model.match import instruction_match
from cutediff_tui.core.model.sides import shared_pins
from cutediff_tui.core.options import compare_options, parse_side_params
from cutediff_tui.core.report import render_html, render_markdown
from cutediff_tui.render import comparison_tables
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
VECTOR_STORE = str(ROOT / "samples" / "recipes" / "vector_store.py")


def _side(dsl: str, pins: list[str], versions: dict | None = None, params: dict | None = None) -> dict:
    return {
        "dsl": dsl,
        "label": ",".join([dsl, *pins]),
        "pins": pins,
        "versions": {"nvidia-cutlass-dsl": dsl, **(versions or {})},
        "params": params or {},
        "error": None,
    }


def _comparison(a: dict, b: dict, **extra) -> dict:
    return {"sides": {"a": a, "b": b}, "kernels": [], "recipe": {"name": "r", "params": {}}, **extra}


def _tables_text(c: dict) -> str:
    con = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for r in comparison_tables(c):
        con.print(r)
    return con.export_text()


# ---------------------------------------------------------------- labels


def test_labels_name_the_pin_that_differs():
    c = _comparison(
        _side("4.8.0", ["flash-attn-4==4.0.0b16", "quack-kernels==0.6.5"]),
        _side("4.8.0", ["flash-attn-4==4.0.0b36", "quack-kernels==0.6.5"]),
    )
    assert side_labels(c) == {"a": "4.8.0 · flash-attn-4 4.0.0b16", "b": "4.8.0 · flash-attn-4 4.0.0b36"}
    assert shared_pins(c) == ["quack-kernels==0.6.5"]


def test_labels_name_a_pin_one_side_lacks_by_its_installed_version():
    c = _comparison(
        _side("4.8.0", [], versions={"quack-kernels": "0.4.1"}),
        _side("4.8.0", ["quack-kernels==0.6.5"], versions={"quack-kernels": "0.6.5"}),
    )
    assert side_labels(c) == {"a": "4.8.0 · quack-kernels 0.4.1", "b": "4.8.0 · quack-kernels 0.6.5"}


def test_labels_name_the_params_that_differ_only():
    c = _comparison(
        _side("4.8.0", [], params={"bits": 128, "elems": 64, "flag": True}),
        _side("4.8.0", [], params={"bits": 16, "elems": 64, "flag": False}),
    )
    assert side_labels(c) == {"a": "4.8.0 · bits=128 · flag=true", "b": "4.8.0 · bits=16 · flag=false"}


def test_labels_of_two_dsl_versions_and_a_local_source_and_sources():
    c = _comparison(_side("4.5.1", ["flash-attn-4==4.0.0b16"]), _side("4.8.0", ["flash-attn-4==4.0.0b16"]))
    assert side_labels(c) == {"a": "4.5.1", "b": "4.8.0"}
    c = _comparison(_side("4.8.0", ["flash-attn-4@/home/me/src/flash-attention"]), _side("4.8.0", []))
    c["sides"]["b"]["versions"]["flash-attn-4"] = "4.0.0b36"
    assert side_labels(c)["a"] == "4.8.0 · flash-attn-4 flash-attention"
    assert side_labels(c)["b"] == "4.8.0 · flash-attn-4 4.0.0b36"
    c = _comparison(_side("4.8.0", []), _side("4.8.0", []), recipe={"name": "r", "sources": {"a": "git:HEAD~1"}})
    assert side_labels(c) == {"a": "4.8.0 · source git:HEAD~1", "b": "4.8.0 · recipe as given"}


def test_labels_reach_the_cli_the_reports_and_the_tui_header():
    from cutediff_tui.ui.widgets.header import side_label

    c = load_json(bundled_sample_dir() / "comparison.json")
    for s in ("a", "b"):
        c["sides"][s]["params"] = {"hdim": 128 if s == "a" else 64, "causal": True}
    text = _tables_text(c)
    assert "A 4.5.1 · hdim=128" in text and "B 4.8.0 · hdim=64" in text
    assert "both with flash-attn-4==4.0.0b16, quack-kernels==0.4.1" in text
    md = render_markdown(c)
    assert "**A** 4.5.1 · hdim=128 · **B** 4.8.0 · hdim=64" in md
    assert "| resource | A 4.5.1 · hdim=128 | B 4.8.0 · hdim=64 | Δ |" in md
    html = render_html(c)
    assert "<b>A</b>4.5.1 · hdim=128</span>" in html
    assert side_label(c, "b") == "DSL 4.8.0 · hdim=64"


# ---------------------------------------------------------------- per-side params


def _kw(**kw) -> dict:
    return {"kernel": VECTOR_STORE, "arch": "sm_90a", **kw}


def test_side_params_are_coerced_and_recorded_per_side():
    opts = compare_options("4.8.0", "4.8.0", _kw(a_params=("bits=128",), b_params=("bits=16",)), command="x")
    assert opts.side_params == ({"bits": 128}, {"bits": 16})
    assert opts.params["bits"] == 128  # the recipe's default, shared by both sides
    assert opts.params_for(0)["bits"] == 128 and opts.params_for(1)["bits"] == 16
    assert opts.params_for(1)["elems"] == 64


def test_side_param_wins_over_the_shared_param():
    opts = compare_options(
        "4.8.0", "4.8.0", _kw(extra_params=("bits=64",), b_params=("bits=16",), a_params=()), command="x"
    )
    assert opts.params_for(0)["bits"] == 64 and opts.params_for(1)["bits"] == 16


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"a_params": ("bits",)}, "--a-param 'bits' is not NAME=VALUE."),
        ({"b_params": ("nope=1",)}, "has no parameter 'nope'"),
        ({"b_params": ("bits=7",)}, "bits=7 is not one of 16, 32, 64, 128."),
    ],
)
def test_bad_side_params_are_one_sentence(kw, needle):
    with pytest.raises(CutediffError) as exc:
        compare_options("4.8.0", "4.8.0", _kw(**kw), command="x")
    assert needle in exc.value.sentence()


def test_parse_side_params_keeps_values_raw():
    assert parse_side_params(("hdim-v=64", "window=1,2"), "--b-param") == {"hdim_v": "64", "window": "1,2"}


def test_compare_cli_refuses_a_bad_side_param_before_building():
    proc = subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", "compare", "4.8.0", "4.8.0", "--kernel", VECTOR_STORE]
        + ["--arch", "sm_90a", "--b-param", "bits"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "error: --b-param 'bits' is not NAME=VALUE. Write it as e.g. --b-param hdim=64." in proc.stderr


# ---------------------------------------------------------------- SASS match


def test_sass_match_is_pairs_with_both_counts_on_every_face():
    c = load_json(bundled_sample_dir() / "comparison.json")
    fwd = c["kernels"][0]
    m = instruction_match(fwd)
    assert (m.matched, m.a_count, m.b_count) == (3549, 5252, 5750)
    assert m.a_count + m.b_count == fwd["alignment"]["total"]
    text = _tables_text(c)
    assert "SASS match (pairs)" in text and "3549 of 5252" in text and "3549 of 5750" in text
    assert "64.5%" not in text and "3549/11002" not in text
    for doc in (render_markdown(c), render_html(c)):
        assert "SASS: 3549 matched pairs of 5252 A and 5750 B instructions" in doc
        assert "64.5%" not in doc and "of 11002" not in doc


def test_sass_match_prefers_the_alignments_own_counts_and_drops_a_mismatch():
    k = {"alignment": {"matched": 5, "total": 20, "a_count": 8, "b_count": 12}, "a": {}, "b": {}}
    assert instruction_match(k).sentence() == "SASS: 5 matched pairs of 8 A and 12 B instructions"
    k = {"alignment": {"matched": 5, "total": 20}, "a": {"instructions": 3}, "b": {"instructions": 4}}
    assert instruction_match(k) is None  # counts that do not add up to the total are not guessed


# ---------------------------------------------------------------- a failed side


def _failed_b() -> dict:
    c = load_json(bundled_sample_dir() / "comparison.json")
    c = copy.deepcopy(c)
    c["sides"]["b"]["error"] = "Installing CuTe DSL 9.9.9 failed: no such version. Check the version."
    for k in c["kernels"]:
        k["b"] = None
        for key in ("alignment", "ptx_alignment", "deltas", "spill_sites_diff", "lines"):
            k.pop(key, None)
    return c


def test_failed_side_shows_a_dash_never_zero_in_markdown_and_html():
    c = _failed_b()
    md = render_markdown(c)
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and not ln.startswith("| package")]
    figure_rows = [ln for ln in rows if "–" in ln]
    assert figure_rows, md
    for ln in figure_rows:
        cells = [x.strip() for x in ln.strip("|").split("|")]
        if len(cells) == 4 and cells[2] == "–":
            assert cells[3] == "", ln  # no delta against a failed side
    assert "| `UTCHMMA` | 64 | – |" in md
    assert "| Tensor-core MMA | 76 | – |" in md
    assert "-64 |" not in md and "| 0 | -" not in md
    html = render_html(c)
    assert "<td>–</td>" in html or ">–<" in html
    assert ">-64<" not in html


def test_failed_side_shows_a_dash_in_the_cli_and_the_tui_rows():
    from cutediff_tui.ui.widgets.metrics import class_rows, resource_rows

    c = _failed_b()
    text = _tables_text(c)
    assert " – " in text and "-64" not in text
    k = c["kernels"][0]
    assert all(r[3] == "–" and r[4] == "" for r in resource_rows(k))
    for _key, _label, va, vb, d in class_rows(k):
        assert vb is None and d is None and va is not None


def test_side_params_round_trip_through_the_json(tmp_path):
    from cutediff_tui.core.model import dumps, read_comparison, typed

    c = load_json(bundled_sample_dir() / "comparison.json")
    c["sides"]["a"]["params"] = {"bits": 128}
    c["sides"]["b"]["params"] = {"bits": 16}
    p = tmp_path / "c.json"
    p.write_text(dumps(c))
    again = read_comparison(p)
    assert typed(again).sides["b"].params == {"bits": 16}
    assert json.loads(p.read_text())["sides"]["a"]["params"] == {"bits": 128}


def test_report_recipe_row_names_each_sides_own_params():
    from cutediff_tui.core.report import model as M

    c = load_json(bundled_sample_dir() / "comparison.json")
    c["sides"]["a"]["params"] = {**c["recipe"]["params"], "hdim": 128}
    c["sides"]["b"]["params"] = {**c["recipe"]["params"], "hdim": 64}
    (row,) = [v for k, v in M.host_rows(c) if k == "Recipe"]
    assert row.endswith("A: hdim=128; B: hdim=64)") and "hdim=128," not in row
