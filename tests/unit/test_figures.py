"""The figure registry: one entry reaches every face (CLI table, Markdown, HTML, JSON, check,
metrics); each label is declared once; list figures and nested extractors work."""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.metric import RESOURCE_FIGURES, figures_of, parse_metric
from cutediff_tui.core.model import figures
from cutediff_tui.core.model.figures import FIGURES, Figure, dig
from cutediff_tui.core.report import Limits, check_comparison, render_html, render_json, render_markdown
from cutediff_tui.core.report.check import figure_limit
from cutediff_tui.render import comparison_tables
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir() / "comparison.json"
FA4 = "FlashAttentionForwardSm100"

DUMMY = Figure(
    "dummy_widgets",
    "Dummy widgets",
    short="widgets",
    unit="bytes",
    worse="higher",
    description="widgets a dummy analysis counted",
    extract=lambda m: dig(m, "dummy", "widgets"),
)
BUDGETS = Figure(
    "dummy_budgets", "Dummy budgets", short="budgets", kind="list", extract=lambda m: dig(m, "dummy", "budgets")
)


@pytest.fixture(scope="module")
def sample() -> dict:
    return load_json(SAMPLE)


@pytest.fixture
def with_dummy(sample, monkeypatch) -> dict:
    """The sample with a dummy figure in the registry, nested in each side of the FA4 kernel."""
    monkeypatch.setattr(figures, "FIGURES", (*FIGURES, DUMMY, BUDGETS))
    c = copy.deepcopy(sample)
    k = next(k for k in c["kernels"] if k["name"] == FA4)
    k["a"]["dummy"] = {"widgets": 3, "budgets": [176, 88]}
    k["b"]["dummy"] = {"widgets": 7, "budgets": [168, 96]}
    return c


def cli_text(c: dict) -> str:
    console = Console(file=io.StringIO(), width=160, record=True, color_system=None)
    for r in comparison_tables(c):
        console.print(r)
    return console.export_text()


def test_dummy_figure_in_cli_table(with_dummy):
    text = cli_text(with_dummy)
    assert re.search(r"Dummy widgets \(bytes\)\s+│\s+3 │\s+7 │\s+\+4", text)
    assert re.search(r"Dummy budgets\s+│\s+176/88 │\s+168/96 │", text)


def test_dummy_figure_in_markdown_and_html(with_dummy):
    md = render_markdown(with_dummy)
    assert "| Dummy widgets (bytes) | 3 | 7 | **+4** |" in md  # worse when higher: bold
    assert "| Dummy budgets | 176/88 | 168/96 |   |" in md  # a list has no Δ
    html = render_html(with_dummy)
    assert "Dummy widgets (bytes)" in html and '<span class="worse">+4</span>' in html


def test_dummy_figure_in_json(with_dummy):
    doc = json.loads(render_json(with_dummy))
    assert doc["schema"] == "cutediff.comparison/2"
    k = next(k for k in doc["kernels"] if k["name"] == FA4)
    assert k["figures"]["dummy_widgets"] == [3, 7]
    assert k["figures"]["dummy_budgets"] == [[176, 88], [168, 96]]
    other = next(k for k in doc["kernels"] if k["name"] != FA4)
    assert "dummy_widgets" not in other["figures"]  # neither side has it


def test_dummy_figure_in_check_and_metrics(with_dummy):
    name, limit = figure_limit("dummy_widgets=2", "--max-delta")
    res = check_comparison(with_dummy, Limits(max_deltas=((name, limit),), max_figures=(("dummy_widgets", 10),)))
    fwd = {o.limit: o for o in res.outcomes if o.kernel == FA4}
    assert fwd["max-delta dummy_widgets"].status == "fail"
    assert fwd["max-delta dummy_widgets"].message == "widgets 3 → 7 B (+4) exceeds --max-delta dummy_widgets=2"
    assert fwd["max dummy_widgets"].status == "pass"
    assert res.exit_code == 1
    assert "dummy_widgets" in RESOURCE_FIGURES and "dummy_budgets" not in RESOURCE_FIGURES  # lists: no metric
    k = next(k for k in with_dummy["kernels"] if k["name"] == FA4)
    assert parse_metric("dummy_widgets>5").holds(figures_of(k["b"]))
    assert not parse_metric("dummy_widgets>5").holds(figures_of(k["a"]))


def test_figure_limit_refuses_unknown_names():
    with pytest.raises(CutediffError, match="not a figure") as exc:
        figure_limit("registrs=4", "--max")
    assert "registers" in exc.value.sentence()
    with pytest.raises(CutediffError, match="NAME=LIMIT"):
        figure_limit("registers", "--max")
    with pytest.raises(CutediffError, match="not a number"):
        figure_limit("registers=many", "--max")


def test_check_cli_takes_registry_limits(tmp_path):
    from click.testing import CliRunner

    from cutediff_tui.cli import main

    res = CliRunner().invoke(
        main, ["check", "--result", str(SAMPLE), "--max", "peak_gpr=160", "--max-delta", "instructions=100"]
    )
    assert res.exit_code == 1, res.output
    assert "max peak_gpr: peak GPRs 162 on B exceeds --max peak_gpr=160" in res.output
    assert "max-delta instructions: SASS instr 5252 → 5750 (+498) exceeds --max-delta instructions=100" in res.output
    bad = CliRunner().invoke(main, ["check", "--result", str(SAMPLE), "--max", "spils=1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_each_label_is_declared_once():
    """``grep`` finds each figure's label in one place of the package: the registry."""
    for fig in FIGURES:
        if fig.label == fig.name:
            continue  # an opcode: its name is its label (and a word every SASS parser knows)
        out = subprocess.run(
            ["grep", "-rlF", "--include=*.py", f'"{fig.label}"', str(ROOT / "cutediff_tui")],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert [Path(p).name for p in out] == ["figures.py"], (fig.label, out)


def test_each_short_name_of_several_words_is_declared_once():
    """Short names used in sentences and narrow columns (``spill stores``) live in the registry too."""
    for fig in FIGURES:
        if " " not in fig.word:
            continue  # one word (``stack``, ``STL``) is also a JSON key or an opcode elsewhere
        out = subprocess.run(
            ["grep", "-rlF", "--include=*.py", f'"{fig.word}"', str(ROOT / "cutediff_tui")],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert [Path(p).name for p in out] == ["figures.py"], (fig.word, out)


def test_registry_is_consistent():
    names = [f.name for f in FIGURES]
    assert len(names) == len(set(names))
    by = {f.name: f for f in FIGURES}
    assert by["local_bytes"].worse == "higher"  # decided in issue 14 (only the TUI said so before)
    assert by["UTCOMMA"].key and by["UTCOMMA"].group == "opcode"
    assert by["peak_gpr"].value({"pressure": {"peaks": {"gpr": {"value": 159}}}}) == 159
    assert by["ptx_instructions"].value({"ptx": {"instructions": 7060}}) == 7060
    assert by["MUFU"].value({"opcodes": {}}) == 0 and not by["MUFU"].present({"opcodes": {}})
