"""The real thing: FA4 compiled under two published DSL versions on this CPU-only machine.

Slow (environments come from PyPI on the first run, compiles take ~20 s a side); CI runs it.
Ground truth (checked by hand with NVIDIA's tools): for FlashAttentionForwardSm100 on sm_103a,
registers 128/128, stack 0/112, spill stores 0/176, spill loads 0/176, STL 0/44, LDL 0/33, and
identical UTCHMMA/MUFU/FFMA2/FMUL2/FADD2 counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]
FWD = ["--kernel", "fa4-fwd", "--arch", "sm_103a", "--varlen", "--causal", "--hdim", "128"]


def cutediff(args: list[str], cache: Path, timeout: float = 1500) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def fwd_result(compile_cache) -> dict:
    proc = cutediff(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _kernel(result: dict, name: str) -> dict:
    (k,) = [k for k in result["kernels"] if k["name"] == name]
    return k


def test_fa4_forward_spills_on_4_8_0_only(fwd_result):
    k = _kernel(fwd_result, "FlashAttentionForwardSm100")
    a, b = k["a"], k["b"]
    assert (a["registers"], b["registers"]) == (128, 128)
    assert (a["stack_bytes"], b["stack_bytes"]) == (0, 112)
    assert (a["spill_store_bytes"], b["spill_store_bytes"]) == (0, 176)
    assert (a["spill_load_bytes"], b["spill_load_bytes"]) == (0, 176)
    assert (a["stl"], b["stl"]) == (0, 44)
    assert (a["ldl"], b["ldl"]) == (0, 33)
    for op, n in {"UTCHMMA": 64, "MUFU": 398, "FFMA2": 192, "FMUL2": 256, "FADD2": 191}.items():
        assert a["opcodes"][op] == b["opcodes"][op] == n, op
    assert k["symbol"]["b"].startswith("kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100")


def test_fa4_forward_side_facts(fwd_result):
    sa, sb = fwd_result["sides"]["a"], fwd_result["sides"]["b"]
    assert fwd_result["schema"] == "cutediff.comparison/2"
    assert sa["versions"]["nvidia-cutlass-dsl"] == "4.5.1" and sb["versions"]["nvidia-cutlass-dsl"] == "4.8.0"
    assert sa["error"] is None and sb["error"] is None
    assert any("ThrMma" in s for s in sb["shims"])  # quack 0.4.1 on DSL 4.8 needs the alias
    k = _kernel(fwd_result, "FlashAttentionForwardSm100")
    assert k["a"]["ptx"]["toolchain"] == "13.1" and k["b"]["ptx"]["toolchain"] == "13.4"
    assert k["a"]["compile_seconds"] > 0 and k["b"]["compile_seconds"] > 0


def test_remark_points_at_tile_scheduler(fwd_result):
    k = _kernel(fwd_result, "FlashAttentionForwardSm100")
    assert k["a"]["remarks"] == []  # 4.5.1 has no remarks{ptx}
    (r,) = [r for r in k["b"]["remarks"] if r["category"] == "ptxas"]
    assert r["file"] == "flash_attn/cute/tile_scheduler.py" and r["line"] == 923


def test_spill_sites_have_source_lines(fwd_result):
    k = _kernel(fwd_result, "FlashAttentionForwardSm100")
    sites = k["b"]["spill_sites"]
    assert len(sites) == 44 + 33
    with_lines = [s for s in sites if s.get("file") and s.get("line")]
    assert len(with_lines) >= 0.9 * len(sites)
    assert any("flash_attn/cute/" in s["file"] for s in with_lines)
    assert k["a"]["spill_sites"] == []
    assert k["a"]["lineinfo"]["perturbed"] is False and k["b"]["lineinfo"]["perturbed"] is False
    assert k["a"]["lineinfo"]["mapped"] is True and k["b"]["lineinfo"]["mapped"] is True


def test_same_compare_again_is_served_from_cache(fwd_result, compile_cache):
    t0 = time.monotonic()
    proc = cutediff(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", "-"], compile_cache)
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = json.loads(proc.stdout)
    assert again["timing"]["from_cache"] is True
    k = _kernel(again, "FlashAttentionForwardSm100")
    assert k["b"]["spill_store_bytes"] == 176
    print(f"warm compare wall {wall:.2f} s (process start included)")


def test_fwdbwd_for_sm90a_compiles_every_kernel(compile_cache):
    """The H100/H200 path: forward plus the three backward kernels, on both versions."""
    proc = cutediff(
        [
            "compare",
            "4.5.1",
            "4.8.0",
            *PINS,
            "--kernel",
            "fa4-fwdbwd",
            "--arch",
            "sm_90a",
            "--no-lineinfo",
            "--json",
            "-",
        ],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    names = [k["name"] for k in result["kernels"]]
    assert names == [
        "FlashAttentionForwardSm90",
        "FlashAttentionBackwardPreprocess",
        "FlashAttentionBackwardSm90",
        "FlashAttentionBackwardPostprocess",
    ]
    assert all(k["a"] and k["b"] for k in result["kernels"])
    assert result["arch"] == "sm_90a" and result["profile"]["num_sms"] == 132


def test_persistent_forward_compiles_without_a_gpu_from_the_profile(compile_cache):
    """Non-causal batched forward uses the persistent scheduler, which asks for the SM count."""
    proc = cutediff(
        [
            "compare",
            "4.5.1",
            "4.8.0",
            *PINS,
            "--kernel",
            "fa4-fwd",
            "--batched",
            "--no-causal",
            "--gpu",
            "b200",
            "--no-lineinfo",
            "--json",
            "-",
        ],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["profile"]["name"] == "b200" and result["profile"]["num_sms"] == 148 and result["arch"] == "sm_100a"
    (k,) = result["kernels"]
    assert k["name"] == "FlashAttentionForwardSm100" and k["a"]["registers"] == 128
    assert any("148 SMs" in s for s in result["sides"]["a"]["shims"])
