"""``cutediff bench`` on the command line: compare's recipe options, and each "cannot" as one sentence."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "samples" / "recipes" / "local_array.py")


def _bench(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", "bench", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith("."), proc.stderr
    return lines[0]


def test_recipe_without_a_bench_hook(tmp_path):
    f = tmp_path / "nohook.py"
    f.write_text("from cutediff_tui.core.recipes import recipe\n\n@recipe\ndef k(ctx):\n    pass\n")
    line = _bench("4.8.0", "4.8.0", "--recipe", str(f))
    assert "has no bench hook, so cutediff cannot run its kernels on the GPU" in line


def test_shape_is_for_fa4_only():
    line = _bench("4.8.0", "4.8.0", "--recipe", SAMPLE, "--shape", "8192x32h/4")
    assert "--shape describes FA4 problems" in line and "--param NAME=VALUE" in line


def test_side_parameters_are_checked_against_the_recipe():
    line = _bench("4.8.0", "4.8.0", "--recipe", SAMPLE, "--a-param", "nope=1")
    assert "has no parameter 'nope'" in line
    line = _bench("4.8.0", "4.8.0", "--recipe", SAMPLE, "--b-param", "dynamic")
    assert "--b-param 'dynamic' is not NAME=VALUE." in line
    line = _bench("4.8.0", "4.8.0", "--recipe", SAMPLE, "--b-param", "dynamic=maybe")
    assert "is not true or false" in line


def test_rounds_must_be_positive():
    assert "--rounds and --iters must be at least 1" in _bench("4.8.0", "4.8.0", "--rounds", "0")


@pytest.mark.skipif(__import__("shutil").which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_sample_recipe_without_a_gpu():
    line = _bench("4.8.0", "4.8.0", "--recipe", SAMPLE, "--b-param", "dynamic=true", "--profile")
    assert "No NVIDIA GPU was found" in line
