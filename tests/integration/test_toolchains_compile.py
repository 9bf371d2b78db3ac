"""Toolchains beyond the seed case, compiled for real on this driverless machine.

Slow: the environments come from PyPI on the first run. 4.4.x checks for a CUDA driver before
its JIT step (skipped); 4.3.x looks up the host function in a JIT engine whose runtime needs
``libcuda.so.1`` (the failed lookup answers None). Both compile the sample as 4.5.1 does.
flash-attn-4 4.0.0b36 with quack-kernels 0.6.5 imports triton (torch's CPU build has none): the
worker's stand-in lets it compile with no extra pin.
"""

from __future__ import annotations

import pytest

from tests.integration.test_recipes_compile import compare_json

pytestmark = pytest.mark.slow

SAMPLE = ["--kernel", "samples/recipes/elementwise_add.py", "--arch", "sm_100a"]


@pytest.mark.parametrize(
    "old, shim",
    [("4.4.2", "CUDA driver check before JIT skipped"), ("4.3.5", "JIT lookup of the host function skipped")],
)
def test_old_dsl_compiles_without_a_driver(compile_cache, old, shim):
    result = compare_json([old, "4.5.1", *SAMPLE], compile_cache)
    sa, sb = result["sides"]["a"], result["sides"]["b"]
    assert sa["error"] is None and sb["error"] is None
    assert sa["versions"]["nvidia-cutlass-dsl"] == old
    assert any(s.startswith(shim) for s in sa["shims"]), sa["shims"]
    assert not any("JIT" in s for s in sb["shims"]), sb["shims"]  # 4.5.1 needs neither shim
    (k,) = result["kernels"]
    assert k["a"]["registers"] == k["b"]["registers"] == 20
    assert k["a"]["instructions"] == k["b"]["instructions"] == 112


def test_fa4_with_quack_065_compiles_without_a_triton_pin(compile_cache):
    old = "4.8.0,flash-attn-4==4.0.0b16,quack-kernels==0.4.1"
    new = "4.8.0,flash-attn-4==4.0.0b36,quack-kernels==0.6.5"
    fa4 = ["--kernel", "fa4-fwd", "--arch", "sm_100a", "--varlen", "--causal", "--hdim", "128"]
    result = compare_json([old, new, *fa4], compile_cache, timeout=1800)
    sa, sb = result["sides"]["a"], result["sides"]["b"]
    assert sa["error"] is None and sb["error"] is None
    assert sb["versions"]["quack-kernels"] == "0.6.5" and "triton" not in sb["versions"]
    assert any(n.startswith("triton is not installed: a stub stands in") for n in sb["notes"])
    assert not any("triton" in n for n in sa["notes"])  # quack 0.4.1 never asks for it
    (k,) = result["kernels"]
    assert k["name"] == "FlashAttentionForwardSm100"
    assert k["a"]["registers"] == k["b"]["registers"] == 128
