"""The CI gate fails closed, and figures are checked when a result is loaded (issue 16, cases 4, 6, 7).

Every result here is the bundled sample copied under ``tmp_path`` and edited the way a hostile or
clumsy hand would: B's figures null or missing, negative, NaN, Infinity, ``1e400``, strings, lists;
JSON nested 100,000 deep; 105 MB kernel names; more kernels than the limit; a FIFO instead of
the comparison; a 4 MB ``.gz`` that would inflate to gigabytes.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from cutediff_tui.core.report import Limits, check_comparison

from .helpers import SAMPLE, cutediff, one_sentence


def _result(tmp_path: Path, edit=None, raw: str | None = None) -> Path:
    dst = tmp_path / "result"
    shutil.copytree(SAMPLE, dst)
    p = dst / "comparison.json"
    if raw is not None:
        p.write_text(raw)
    elif edit is not None:
        data = json.loads(p.read_text())
        edit(data)
        p.write_text(json.dumps(data))
    return dst


def _null_b(data: dict) -> None:
    for k in data["kernels"]:
        for key in ("spill_store_bytes", "spill_load_bytes", "registers", "stack_bytes"):
            k["b"][key] = None


def _missing_b(data: dict) -> None:
    for k in data["kernels"]:
        for key in ("spill_store_bytes", "spill_load_bytes", "registers", "stack_bytes"):
            k["b"].pop(key, None)


LIMITS = ["--max-spill-bytes", "100000", "--max-register-delta", "64", "--max-stack-delta", "100000"]


@pytest.mark.parametrize("edit", [_null_b, _missing_b], ids=["null", "missing"])
def test_gate_fails_closed_on_missing_figures(tmp_path, edit):
    result = _result(tmp_path, edit)
    proc = cutediff(["check", "--result", result, *LIMITS], None)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "FAIL" in proc.stdout and "cannot be checked" in proc.stdout
    assert "Traceback" not in proc.stderr
    proc = cutediff(["check", "--result", result, *LIMITS, "--allow-missing"], None)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "skipped" in proc.stdout


def test_gate_fails_closed_on_a_kernel_missing_on_side_a_and_on_no_benchmark():
    c = json.loads((SAMPLE / "comparison.json").read_text())
    c["kernels"][0]["a"] = None
    res = check_comparison(c, Limits(max_register_delta=64))
    assert res.exit_code == 1 and any("side A" in o.message for o in res.failures)
    res = check_comparison(c, Limits(max_slowdown_pct=5))
    assert res.exit_code == 1 and "not measured" in res.failures[0].message
    assert check_comparison(c, Limits(max_slowdown_pct=5, allow_missing=True)).exit_code == 0


def test_invalid_figures_fail_the_gate_even_unvalidated():
    c = json.loads((SAMPLE / "comparison.json").read_text())
    for k in c["kernels"]:
        k["b"]["spill_store_bytes"] = -176
    res = check_comparison(c, Limits(max_spill_bytes=0))
    assert res.exit_code == 1 and all("invalid" in o.message for o in res.failures)


BAD_VALUES = {
    "negative": "-5",
    "nan": "NaN",
    "infinity": "Infinity",
    "1e400": "1e400",
    "string": '"many"',
    "list": "[1, 2]",
    "fraction": "1.5",
    "bool": "true",
}


@pytest.mark.parametrize("value", BAD_VALUES.values(), ids=BAD_VALUES.keys())
@pytest.mark.parametrize("command", ["check", "report"])
def test_bad_figures_are_one_sentence_naming_the_field(tmp_path, value, command):
    raw = (SAMPLE / "comparison.json").read_text()
    data = json.loads(raw)
    data["kernels"][1]["b"]["registers"] = "@@PLACEHOLDER@@"
    result = _result(tmp_path, raw=json.dumps(data).replace('"@@PLACEHOLDER@@"', value))
    args = ["check", "--result", result, *LIMITS] if command == "check" else ["report", result]
    line = one_sentence(cutediff(args, None))
    assert "kernels[1].b.registers" in line, line
    assert "internal error" not in line


@pytest.mark.parametrize(
    "where",
    ["sides", "kernel", "opcodes", "sources"],
)
def test_wrong_types_elsewhere_are_one_sentence(tmp_path, where):
    def edit(data: dict) -> None:
        if where == "sides":
            data["sides"]["b"]["notes"] = "not a list"
        elif where == "kernel":
            data["kernels"][2] = ["a", "list"]
        elif where == "opcodes":
            data["kernels"][0]["a"]["opcodes"]["FFMA"] = None
        else:
            data["kernels"][0]["a"]["sources"] = [1, 2]

    result = _result(tmp_path, edit)
    for args in (["report", result], ["check", "--result", result, *LIMITS]):
        line = one_sentence(cutediff(args, None))
        assert "internal error" not in line


def test_json_nested_100000_deep_is_one_sentence(tmp_path):
    result = _result(tmp_path, raw="[" * 100_000 + "]" * 100_000)
    line = one_sentence(cutediff(["report", result], None))
    assert "nested deeper" in line or "not a JSON comparison" in line
    result2 = tmp_path / "deep.json"
    result2.write_text('{"schema": "cutediff.comparison/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_sentence(cutediff(["check", "--result", result2, "--max-spill-bytes", "0"], None))


def test_absurd_strings_and_kernel_counts_are_bounded(tmp_path):
    def long_name(data: dict) -> None:
        data["kernels"][0]["name"] = "K" * 5_000_000

    result = _result(tmp_path, long_name)
    line = one_sentence(cutediff(["report", result], None))
    assert "5,000,000 characters" in line and "--max-string" in line
    proc = cutediff(["--max-string", "6000000", "report", result], None)
    assert proc.returncode == 0, proc.stderr[-500:]

    def many(data: dict) -> None:
        data["kernels"] = data["kernels"] * 30

    result = _result(tmp_path / "many", many)
    line = one_sentence(cutediff(["--max-kernels", "100", "report", result], None))
    assert "120 kernels" in line and "--max-kernels" in line


def test_a_fifo_as_the_comparison_is_refused_at_once(tmp_path):
    fifo = tmp_path / "comparison.json"
    os.mkfifo(fifo)
    for args in (["report", fifo], ["check", "--result", fifo, "--max-spill-bytes", "0"], ["open", fifo]):
        line = one_sentence(cutediff(args, None, timeout=60))
        assert "named pipe" in line


def test_a_gzip_bomb_in_a_result_is_refused_without_inflating_it(tmp_path, monkeypatch):
    import tracemalloc

    from cutediff_tui.core.analysis_pipeline import load_listing
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.core.errors import CutediffError
    from cutediff_tui.core.files import LIMITS

    result = _result(tmp_path)
    bomb = result / "b" / "000" / "sass.txt.gz"
    with gzip.open(bomb, "wb", compresslevel=6) as fh:  # ~300 KB on disk, 300 MiB inflated
        block = b"\0" * (1 << 20)
        for _ in range(300):
            fh.write(block)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    monkeypatch.setattr(LIMITS, "file_bytes", 64 * 1024 * 1024)
    comparison = load_json(result / "comparison.json")
    tracemalloc.start()
    try:
        with pytest.raises(CutediffError, match="larger than cutediff reads") as info:
            load_listing(comparison["kernels"][0]["b"])
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 1024 * 1024, peak  # before: the whole 300 MiB (4 GiB for the file)
    assert "--max-file-mb" in info.value.sentence()
