"""The Python API (``import cutediff``) on the bundled sample: load, records, check, report,
sweep and bisect results, ``python -m cutediff``, and that it stays headless."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cutediff
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample() -> cutediff.Comparison:
    c = cutediff.load(bundled_sample_dir())
    assert isinstance(c, cutediff.Comparison)
    return c


def test_load_a_comparison_folder_or_file(sample):
    assert sample.kernels[0] == "FlashAttentionForwardSm100" and len(sample.kernels) == 4
    assert sample.sides["a"].startswith("4.5.1") and sample.sides["b"].startswith("4.8.0")
    assert sample.errors == []
    again = cutediff.load(bundled_sample_dir() / "comparison.json")
    assert again.kernels == sample.kernels


def test_records_are_the_figure_table(sample):
    rows = sample.records()
    by = {(r["kernel"], r["side"], r["figure"]): r["value"] for r in rows}
    fwd = "FlashAttentionForwardSm100"
    assert by[(fwd, "a", "stack_bytes")] == 0 and by[(fwd, "b", "stack_bytes")] == 112
    assert by[(fwd, "b", "spill_store_bytes")] == 176 and by[(fwd, "a", "registers")] == 128
    assert set(rows[0]) == {"kernel", "side", "toolchain", "figure", "label", "unit", "value"}
    assert all(r["toolchain"] == sample.sides[r["side"]] for r in rows)


def test_to_pandas_pivots_side_by_side(sample):
    pd = pytest.importorskip("pandas")
    df = sample.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == len(sample.records())
    wide = df.pivot_table(index=["kernel", "figure"], columns="side", values="value", aggfunc="first")
    assert wide.loc[("FlashAttentionForwardSm100", "stack_bytes")].tolist() == [0, 112]


def test_to_pandas_without_pandas_is_one_sentence(sample, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(cutediff.CutediffError) as exc:
        sample.to_pandas()
    assert "needs pandas" in str(exc.value) and "pip install pandas" in exc.value.sentence()
    assert sample.records()  # records still work


def test_check_gives_the_cli_exit_codes(sample):
    spill = cutediff.check(sample, max_spill_bytes=0)
    assert spill.exit_code == 1 and not spill.passed
    failed = {r["kernel"] for r in spill.records() if r["status"] == "fail"}
    assert failed == {"FlashAttentionForwardSm100", "FlashAttentionBackwardSm100"}
    assert cutediff.check(sample, max_spill_bytes=1000).passed
    only_pre = cutediff.check(bundled_sample_dir(), max_spill_bytes=0, kernel_filter="Preprocess")
    assert only_pre.passed and "<testcase" in only_pre.junit()
    assert sample.check(max={"registers": 100}).exit_code == 1
    with pytest.raises(cutediff.CutediffError, match="figure"):
        cutediff.check(sample, max={"no_such_figure": 1})


#: The same limits as API keyword arguments and as ``cutediff check`` options.
SAME_LIMITS = [
    ({"max_spill_bytes": 0}, ["--max-spill-bytes", "0"]),
    ({"max_spill_bytes": 1000}, ["--max-spill-bytes", "1000"]),
    ({"max_spill_bytes": 0, "kernel_filter": "Pre"}, ["--max-spill-bytes", "0", "--kernel-filter", "Pre"]),
    ({"max_register_delta": 8, "max_stack_delta": 0}, ["--max-register-delta", "8", "--max-stack-delta", "0"]),
    ({"max": {"registers": 128}, "max_delta": {"instructions": 100}},
     ["--max", "registers=128", "--max-delta", "instructions=100"]),
    ({"max_spill_bytes": 0, "kernel_filter": "NoSuchKernel"}, ["--max-spill-bytes", "0", "--kernel-filter", "NoSuchKernel"]),
]  # fmt: skip


@pytest.mark.parametrize(("api", "cli"), SAME_LIMITS, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_check_api_and_cli_give_the_same_verdict(api, cli, tmp_path):
    """One builder of the check's Limits (``core.report.build_limits``) behind both faces: the same
    exit code and the same outcome per kernel × limit (their JUnit XML is identical)."""
    from click.testing import CliRunner

    from cutediff_tui.cli import main

    junit = tmp_path / "check.xml"
    res = CliRunner().invoke(main, ["check", "--result", str(bundled_sample_dir()), *cli, "--junit", str(junit)])
    report = cutediff.check(bundled_sample_dir(), **api)
    assert res.exit_code == report.exit_code, res.output
    assert junit.read_text() == report.junit()


def test_check_api_and_cli_refuse_the_same_bad_limits():
    from click.testing import CliRunner

    from cutediff_tui.cli import main

    with pytest.raises(cutediff.CutediffError) as api:
        cutediff.check(bundled_sample_dir(), max={"no_such_figure": 1})
    res = CliRunner().invoke(main, ["check", "--result", str(bundled_sample_dir()), "--max", "no_such_figure=1"])
    assert res.exit_code == 2 and str(api.value).replace("max ", "--max ", 1) in res.stderr
    with pytest.raises(cutediff.CutediffError, match="is not a regular expression"):
        cutediff.check(bundled_sample_dir(), kernel_filter="(")


def test_report_in_every_format(sample, tmp_path):
    md = cutediff.report(sample)
    assert md.startswith("#") and "FlashAttentionForwardSm100" in md
    assert "<html" in cutediff.report(sample, "html").lower()
    assert json.loads(cutediff.report(sample, "json"))["schema"].startswith("cutediff.comparison/")
    out = tmp_path / "figures.csv"
    text = cutediff.report(bundled_sample_dir(), "csv", path=out)
    assert out.read_text() == text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(sample.records())
    with pytest.raises(cutediff.CutediffError, match="Unknown report format"):
        cutediff.report(sample, "pdf")


def test_report_kernel_filter_is_the_cli_one(sample, tmp_path):
    from click.testing import CliRunner

    from cutediff_tui.cli import main

    for fmt in ("md", "json", "csv"):
        out = tmp_path / f"r.{fmt}"
        res = CliRunner().invoke(main, ["report", str(bundled_sample_dir()), "--kernel-filter", "Pre", "-o", str(out)])
        assert res.exit_code == 0, res.output
        assert cutediff.report(sample, fmt, kernel_filter="Pre") == out.read_text()
    with pytest.raises(cutediff.CutediffError, match="matches none of the 4 kernel"):
        cutediff.report(sample, kernel_filter="NoSuchKernel")


def _sweep_doc() -> dict:
    cells = []
    for tc, spills in (("4.5.1", [0, 0]), ("4.8.0", [0, 176])):
        for hdim, spill in zip((64, 128), spills):
            cells.append(
                {
                    "side": tc,
                    "toolchain": tc,
                    "arch": "sm_103a",
                    "gpu": "b300",
                    "axis": {"arch": "sm_103a", "hdim": hdim},
                    "status": "ok",
                    "why": None,
                    "kernels": [{"name": "Fwd", "figures": {"spill_store_bytes": spill, "registers": 128}}],
                }
            )
    cells.append(
        {"side": "4.6.0", "arch": "sm_103a", "axis": {"arch": "sm_103a", "hdim": 64}, "status": "failed", "why": "no"}
    )
    return {
        "schema": "cutediff.sweep/1",
        "figure": "spill_store_bytes",
        "toolchains": ["4.5.1", "4.8.0"],
        "cells": cells,
    }


def test_sweep_results_load_as_records_and_grid(tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(_sweep_doc()))
    s = cutediff.load(path)
    assert isinstance(s, cutediff.SweepResult) and cutediff.load_sweep(path).figure == "spill_store_bytes"
    rows = s.records()
    assert len(rows) == 5 and rows[-1]["kernel"] is None and rows[-1]["status"] == "failed"
    assert rows[3] == {
        "toolchain": "4.8.0",
        "arch": "sm_103a",
        "gpu": "b300",
        "hdim": 128,
        "status": "ok",
        "why": None,
        "kernel": "Fwd",
        "spill_store_bytes": 176,
        "registers": 128,
    }
    g = {r["toolchain"]: r for r in s.grid()}
    assert g["4.8.0"]["sm_103a hdim=128"] == 176 and g["4.5.1"]["sm_103a hdim=128"] == 0
    assert "<svg" in s.html() or "<table" in s.html()


def test_bisect_results_load(tmp_path):
    doc = {
        "schema": "cutediff.bisect/1",
        "versions": ["4.5.1", "4.5.2", "4.5.3"],
        "steps": [
            {"version": "4.5.1", "order": 1, "verdict": "good", "why": "x=0", "seconds": 1.0, "from_cache": True},
            {"version": "4.5.3", "order": 2, "verdict": "bad", "why": "x=16", "seconds": 2.0, "from_cache": False},
            {"version": "4.5.2", "order": 3, "verdict": "good", "why": "x=0", "seconds": 2.0, "from_cache": False},
        ],
        "first_bad": "4.5.3",
        "last_good": "4.5.2",
        "first_bad_candidates": ["4.5.3"],
    }
    path = tmp_path / "bisect.json"
    path.write_text(json.dumps(doc))
    b = cutediff.load(path)
    assert isinstance(b, cutediff.BisectResult) and (b.first_bad, b.last_good, b.candidates) == (
        "4.5.3",
        "4.5.2",
        ["4.5.3"],
    )
    assert [r["verdict"] for r in b.records()] == ["good", "good", "bad"]
    with pytest.raises(cutediff.CutediffError, match="not a sweep result"):
        cutediff.load_sweep(path)


def test_bad_paths_are_one_sentence(tmp_path):
    with pytest.raises(cutediff.CutediffError, match="does not exist"):
        cutediff.load(tmp_path / "nothing.json")
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(cutediff.CutediffError):
        cutediff.load(tmp_path / "x.json")
    with pytest.raises(cutediff.CutediffError, match="is not JSON"):
        cutediff.load_bisect(_write(tmp_path, "{"))


def _write(folder: Path, text: str) -> Path:
    p = folder / "broken.json"
    p.write_text(text)
    return p


def test_the_api_is_headless_and_python_dash_m_works(tmp_path):
    code = (
        "import sys, cutediff; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'click') "
        "or m.startswith(('cutediff_tui.ui', 'cutediff_tui.cli'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    out = subprocess.run(
        [sys.executable, "-m", "cutediff", "--version"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"cutediff {cutediff.__version__}"
