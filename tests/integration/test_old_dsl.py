"""DSL releases older than 4.5 compiled on this driverless machine through the worker's shims.

Slow: the environments come from PyPI on the first run. 4.4.x checks for a CUDA driver before
its JIT step (skipped); 4.3.x looks up the host function in a JIT engine whose runtime needs
``libcuda.so.1`` (the failed lookup answers None). Both compile the sample as 4.5.1 does.
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
