"""`cutediff diff` over artifacts on disk gives the same figures as the compile path (no compile)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir()


def run(args, tmp_path, **kw):
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, **kw
    )


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads((SAMPLE / "comparison.json").read_text())


def _cubin_dir(tmp_path: Path, src: Path, name: str) -> Path:
    """A dump-style folder holding only the sample kernel's cubin."""
    d = tmp_path / name
    d.mkdir()
    shutil.copy(src / "kernel.cubin", d / "kernel.cubin")
    return d


def test_diff_of_cubins_matches_compare(tmp_path, sample):
    fwd = next(k for k in sample["kernels"] if k["name"] == "FlashAttentionForwardSm100")
    a = _cubin_dir(tmp_path, SAMPLE / fwd["a"]["files"]["lineinfo_dir"], "a")
    b = _cubin_dir(tmp_path, SAMPLE / fwd["b"]["files"]["lineinfo_dir"], "b")
    proc = run(["diff", str(a / "kernel.cubin"), str(b), "--json", "-"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    (k,) = got["kernels"]
    assert k["name"] == "FlashAttentionForwardSm100"
    for side in "ab":
        for key in ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes", "stl", "ldl", "shared_bytes"):
            assert k[side][key] == fwd[side][key], (side, key)
        for op in ("UTCHMMA", "MUFU", "FFMA2", "FMUL2", "FADD2"):
            assert k[side]["opcodes"][op] == fwd[side]["opcodes"][op]
        assert k[side]["instruction_classes"] == fwd[side]["instruction_classes"]
    # the line-info cubin carries source lines, so the spill sites come with them
    assert len(k["b"]["spill_sites"]) == 77 and all(s["file"] for s in k["b"]["spill_sites"])


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"", "empty"),
        (b"hello, not a cubin\n", "ELF"),
        (b"\x7fELF\x02\x01\x01" + b"\x00" * 20, "cubin"),
    ],
)
def test_diff_bad_inputs_give_one_sentence(tmp_path, content, needle):
    bad = tmp_path / "bad.cubin"
    bad.write_bytes(content)
    good = SAMPLE / "a" / "000" / "kernel.cubin"
    proc = run(["diff", str(bad), str(good)], tmp_path)
    assert proc.returncode == 2
    assert needle.lower() in proc.stderr.lower() and "Traceback" not in proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) <= 3


def test_diff_missing_path(tmp_path):
    proc = run(["diff", str(tmp_path / "nope"), str(tmp_path / "nope2")], tmp_path)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_open_refuses_other_schema(tmp_path):
    f = tmp_path / "old.json"
    f.write_text(json.dumps({"schema": "cutediff.comparison/0"}))
    proc = run(["open", str(f)], tmp_path)
    assert proc.returncode == 2 and "schema" in proc.stderr and "Traceback" not in proc.stderr


def test_json_carries_per_line_and_ptx_deltas(tmp_path, sample):
    fwd = next(k for k in sample["kernels"] if k["name"] == "FlashAttentionForwardSm100")
    lines = fwd["lines"]["by_instruction_delta"]
    assert lines and all(r["file"].endswith(".py") and r["line"] > 0 for r in lines)
    assert any(r["peak_gpr"][1] is not None for r in fwd["lines"]["by_pressure_delta"])
    assert fwd["deltas"]["ptx_opcodes"] and all(v[2] != 0 for v in fwd["deltas"]["ptx_opcodes"].values())
    assert fwd["ptx_alignment"]["match_pct"] > 50
    assert fwd["a"]["pressure"]["peaks"]["gpr"]["value"] > 0 and fwd["b"]["pressure"]["peaks"]["gpr"]["value"] > 0
    cc = sample["crosscheck"]["FlashAttentionForwardSm100"]
    cells = {(c["side"][0], c["ptxas_version"]): (c["spill_stores"], c["spill_loads"]) for c in cc["matrix"]}
    assert cells == {("A", "13.0"): (0, 0), ("A", "13.4"): (0, 0), ("B", "13.0"): (120, 100), ("B", "13.4"): (176, 176)}
    assert "PTX the DSL emits" in cc["verdict"]
