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


def _git(repo, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_bisect_over_git_commits_of_a_local_recipe(compile_cache, tmp_path):
    """A checkout of our own recipe whose third commit turns the add into a multiply-add (FFMA):
    bisect walks only the commits that touch the recipe and names that commit."""
    import json

    from tests.integration.test_recipes_compile import SAMPLES, cutediff

    repo = tmp_path / "kernels"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    src = (SAMPLES / "elementwise_add.py").read_text()
    (repo / "add.py").write_text(src)
    (repo / "README.md").write_text("v1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "add kernel")
    good = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("v2\n")
    _git(repo, "commit", "-qam", "docs")
    fma = "gC[row, col] = gA[row, col] * gB[row, col] + gA[row, col]"
    (repo / "add.py").write_text(src.replace("gC[row, col] = gA[row, col] + gB[row, col]", fma))
    _git(repo, "commit", "-qam", "multiply-add")
    culprit = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("v3\n")
    _git(repo, "commit", "-qam", "more docs")
    args = ["bisect", "--over", f"git:{repo}", "--good", good, "--bad", "HEAD", "4.8.0"]
    args += ["--kernel", f"{repo}/add.py", "--arch", "sm_100a", "--metric", "FFMA>0", "--json", "-", "-q"]
    proc = cutediff(args, compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["first_bad"] == culprit and result["last_good"] == good
    assert len(result["versions"]) == 3  # the docs-only commits are not walked (the bad end is kept)
    assert result["over"]["subjects"][culprit] == "multiply-add"


def test_bisect_over_flash_attn_4_releases(compile_cache):
    """flash-attn-4 4.0.0b33 adds 91 SASS instructions to the forward kernel on DSL 4.8.0 with
    quack-kernels 0.6.5 (5684 -> 5775 for sm_100a): bisect finds it among the releases."""
    import json

    from tests.integration.test_recipes_compile import cutediff

    args = ["bisect", "--over", "flash-attn-4", "--good", "4.0.0b30", "--bad", "4.0.0b34", "4.8.0,quack-kernels==0.6.5"]
    args += ["--kernel", "fa4-fwd", "--arch", "sm_100a", "--varlen", "--causal", "--hdim", "128"]
    args += ["--metric", "instructions>5700", "-j", "2", "--json", "-", "-q"]
    proc = cutediff(args, compile_cache, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["first_bad"] == "4.0.0b33" and result["last_good"] == "4.0.0b32", (
        result["steps"],
        proc.stderr[-3000:],
    )
    assert result["over"] == {**result["over"], "kind": "package", "package": "flash-attn-4"}
    assert result["sides"]["4.0.0b33"] == "4.8.0,quack-kernels==0.6.5,flash-attn-4==4.0.0b33"
    assert "flash-attn-4==4.0.0b33" in result["compare_command"]
