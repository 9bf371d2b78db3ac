"""Issue 20's acceptance on a real GPU (skipped, with the reason, where there is none; on the H200
benchmarks/gpu_h200_profile.sh runs the same commands). Positive control: local-memory traffic on
the dynamic=true side only; negative control: FA4 fwd+bwd SM90, 4.5.1 vs 4.8.0, every kernel SAME
with no local traffic."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from test_recipes_compile import PINS, ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.gpu,
    pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs an NVIDIA GPU (nvidia-smi is not on PATH)"),
]


def bench_json(args: list[str], cache) -> dict:
    env = dict(__import__("os").environ, CUTEDIFF_CACHE_DIR=str(cache))
    proc = subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", "bench", *args, "--json", "-", "-q"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=3000,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs Nsight Compute (ncu) on PATH")
def test_positive_control_local_traffic_on_one_side_only(compile_cache):
    r = bench_json(
        ["4.8.0", "4.8.0", *PINS, "--kernel", "samples/recipes/local_array.py", "--a-param", "dynamic=false"]
        + ["--b-param", "dynamic=true", "--profile", "--rounds", "4"],
        compile_cache,
    )
    (case,) = r["shapes"]
    (k,) = case["kernels"]
    assert k["kernel"] == "gather_kernel" and "ratio" in k and k["ci_low"] <= k["ratio"] <= k["ci_high"]
    sides = r["profile"]["sides"]
    assert sides["a"]["kernels"]["gather_kernel"]["local_bytes"] == 0
    assert sides["b"]["kernels"]["gather_kernel"]["local_bytes"] > 0
    assert sides["b"]["spills"]["gather_kernel"]["stl_executed"] > 0
    assert not sides["a"]["spills"].get("gather_kernel", {}).get("sites")


@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs Nsight Compute (ncu) on PATH")
def test_negative_control_fa4_sm90_every_kernel_same_without_local_traffic(compile_cache):
    r = bench_json(["4.5.1", "4.8.0", *PINS, "--kernel", "fa4-fwdbwd", "--profile"], compile_cache)
    for case in r["shapes"]:
        names = {k["kernel"] for k in case["kernels"]}
        assert len([n for n in names if "FlashAttention" in n]) == 4, names
        assert all(k["verdict"] == "SAME" for k in case["kernels"] if "FlashAttention" in k["kernel"]), case["kernels"]
    for side in ("a", "b"):
        for name, s in r["profile"]["sides"][side]["kernels"].items():
            assert s["local_bytes"] == 0, (side, name)
