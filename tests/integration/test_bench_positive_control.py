"""The bench's positive control, statically: samples/recipes/local_array.py compiled for sm_90a keeps
its register array in local memory (STL/LDL, a stack frame) with dynamic=true only, on DSL 4.5.1
and 4.8.0. The runtime side (local traffic > 0 on that side only, under ncu) is
benchmarks/gpu_h200_profile.sh on the H200."""

from __future__ import annotations

import pytest
from test_recipes_compile import PINS, compare_json

pytestmark = pytest.mark.slow

KERNEL = ["--kernel", "samples/recipes/local_array.py", "--arch", "sm_90a", "--no-lineinfo"]


def test_run_time_indices_put_the_array_in_local_memory_on_both_dsl_versions(compile_cache):
    result = compare_json(["4.5.1", "4.8.0", *PINS, *KERNEL, "--param", "dynamic=true"], compile_cache)
    (k,) = result["kernels"]
    assert k["name"] == "gather_kernel"  # the @cute.kernel; launch_gather launches it
    for side in "ab":
        assert k[side]["stl"] > 0 and k[side]["ldl"] > 0 and k[side]["stack_bytes"] >= 256, (side, k[side])


def test_constant_indices_keep_it_in_registers(compile_cache):
    result = compare_json(["4.8.0", "4.8.0", *PINS, *KERNEL, "--param", "dynamic=false"], compile_cache)
    (k,) = result["kernels"]
    assert k["b"]["stl"] == 0 and k["b"]["ldl"] == 0 and k["b"]["stack_bytes"] == 0
