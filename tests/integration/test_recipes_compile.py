"""Recipes compiled for real on this CPU-only machine: samples, quack, failures, two sources.

Slow (the DSL environments come from PyPI on the first run; each compile takes a few seconds).
The pins are those of the FA4 tests so that the environments are shared through ``compile_cache``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "recipes"
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]


def cutediff(args: list[str], cache: Path, timeout: float = 900, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=str(cwd),
    )


def compare_json(args: list[str], cache: Path, **kw) -> dict:
    proc = cutediff(["compare", *args, "--no-lineinfo", "--json", "-", "-q"], cache, **kw)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def error_lines(stderr: str) -> list[str]:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert lines, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    return lines


@pytest.mark.parametrize("sample, kernel", [("elementwise_add.py", "add_kernel"), ("row_sum.py", "row_sum_kernel")])
def test_sample_recipe_diffs_across_dsl_versions(compile_cache, sample, kernel):
    result = compare_json(
        ["4.5.1", "4.8.0", *PINS, "--kernel", f"samples/recipes/{sample}", "--arch", "sm_90a"], compile_cache
    )
    sa, sb = result["sides"]["a"], result["sides"]["b"]
    assert sa["error"] is None and sb["error"] is None
    assert sa["versions"]["nvidia-cutlass-dsl"] == "4.5.1" and sb["versions"]["nvidia-cutlass-dsl"] == "4.8.0"
    assert result["recipe"]["name"].startswith(f"samples/recipes/{sample}:")
    (k,) = result["kernels"]
    assert k["name"] == kernel and k["a"] and k["b"]
    assert k["a"]["registers"] > 0 and k["b"]["registers"] > 0 and k["a"]["instructions"] > 0


def test_sample_parameters_reach_the_kernel(compile_cache):
    base = ["4.8.0", "4.8.0", *PINS, "--kernel", "samples/recipes/elementwise_add.py", "--arch", "sm_100a"]
    r = compare_json([*base, "--param", "dtype=bf16", "--param", "vec=8"], compile_cache)
    assert r["recipe"]["params"] == {"dtype": "bf16", "cols": 4096, "threads": 256, "vec": 8}
    (k,) = r["kernels"]
    assert k["a"]["instructions"] == k["b"]["instructions"] > 0


def test_quack_rmsnorm_diffs_across_dsl_versions(compile_cache):
    result = compare_json(
        ["4.5.1", "4.8.0", *PINS, "--kernel", "quack-rmsnorm-fwd", "--arch", "sm_100a"], compile_cache
    )
    assert result["sides"]["a"]["error"] is None and result["sides"]["b"]["error"] is None
    (k,) = result["kernels"]
    assert k["name"] == "RMSNorm" and k["a"]["registers"] > 0 and k["b"]["registers"] > 0
    assert any("ThrMma" in s for s in result["sides"]["b"]["shims"])  # quack 0.4.1 on DSL 4.8


@pytest.mark.parametrize("recipe", ["quack-rmsnorm-fwd", "quack-softmax-bwd"])
def test_line_info_leaves_quack_resources_alone(compile_cache, recipe):
    """Issue 19: one line-info build per side is enough only if line info does not change the
    resource figures. A compare with the plain check builds both and records `perturbed` per
    kernel; on quack's kernels (4.5.1 and 4.8.0, sm_100a) it is False, as on FA4's."""
    proc = cutediff(
        ["compare", "4.5.1", "4.8.0", *PINS, "--kernel", recipe, "--arch", "sm_100a", "--json", "-", "-q"],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    flags = {
        (s, k["name"]): (k.get(s) or {}).get("lineinfo", {}).get("perturbed") for k in result["kernels"] for s in "ab"
    }
    assert flags and all(v is False for v in flags.values()), flags


def test_quack_version_without_the_entry_point(compile_cache):
    proc = cutediff(
        [
            "compare",
            "4.8.0,quack-kernels==0.2.10",
            "4.8.0,quack-kernels==0.4.1",
            "--kernel",
            "quack-softmax-fwd",
            "--arch",
            "sm_90a",
            "--no-lineinfo",
            "-q",
        ],
        compile_cache,
    )
    assert proc.returncode == 2
    (line,) = error_lines(proc.stderr)
    assert line.startswith("error: Side A: recipe quack-softmax-fwd")
    assert "quack-kernels 0.2.10 has no softmax forward compile entry point" in line
    assert "Softmax" in proc.stdout  # side B compiled and is shown


def _recipe(tmp_path: Path, name: str, body: str) -> Path:
    f = tmp_path / name
    f.write_text(textwrap.dedent(body))
    return f


def test_recipes_that_fail_give_one_sentence_naming_them(compile_cache, tmp_path):
    base = ["compare", "4.5.1", "4.8.0", *PINS, "--arch", "sm_90a", "--no-lineinfo", "-q"]
    bad = _recipe(tmp_path, "syntax_recipe.py", "import cutlass.cute as cute\n\ndef recipe(ctx)\n    pass\n")
    proc = cutediff([*base, "--kernel", str(bad)], compile_cache)
    assert proc.returncode == 2
    (line,) = error_lines(proc.stderr)
    assert "syntax_recipe.py has a syntax error on line 3" in line

    empty = _recipe(tmp_path, "empty_recipe.py", "def recipe(ctx):\n    ctx.note('nothing to do')\n")
    proc = cutediff([*base, "--kernel", str(empty)], compile_cache)
    assert proc.returncode == 2
    for line in error_lines(proc.stderr):
        assert "recipe" in line and "empty_recipe.py:recipe ran but compiled no kernel" in line

    raises = _recipe(
        tmp_path,
        "raising_recipe.py",
        """
        def recipe(ctx):
            raise ValueError(f"cols must be a multiple of 8 on {ctx.arch}")
    """,
    )
    proc = cutediff([*base, "--kernel", str(raises)], compile_cache)
    assert proc.returncode == 2
    for line in error_lines(proc.stderr):
        assert (
            "raising_recipe.py:recipe failed while compiling (ValueError: cols must be a multiple of 8 on sm_90a)"
            in line
        )


OLD_KERNELS = """
import cutlass
import cutlass.cute as cute


@cute.kernel
def sub_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    m, n = gA.shape
    i = bidx * bdim + tidx
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] - gB[i // n, i % n]


@cute.jit
def elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, threads: cutlass.Constexpr):
    m, n = mA.shape
    sub_kernel(mA, mB, mC).launch(grid=((m * n + threads - 1) // threads, 1, 1), block=(threads, 1, 1))
"""

OLD_RECIPE = '''
import cutlass.cute as cute

from cutediff_tui.core.recipes import recipe
from kernels_v1 import elementwise_add   # a helper module next to the recipe


@recipe(params=[{"name": "cols", "default": 4096}, {"name": "dtype", "default": "fp32"},
                {"name": "threads", "default": 256}])
def add(ctx):
    """The same recipe, older kernel, built with cutediff's fake-tensor helpers."""
    assert ctx.dsl_version >= (4, 5) and ctx.arch_number == 90
    dt = ctx.cute_dtype(ctx.params["dtype"])
    a, b, c = (ctx.fake_tensor(dt, (None, ctx.params["cols"])) for _ in range(3))
    cute.compile(elementwise_add, a, b, c, ctx.params["threads"])
'''


def test_two_sources_on_one_toolchain(compile_cache, tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "kernels_v1.py").write_text(OLD_KERNELS)
    (old / "add_v1.py").write_text(OLD_RECIPE)
    result = compare_json(
        [
            "4.8.0",
            "4.8.0",
            *PINS,
            "--kernel",
            "samples/recipes/elementwise_add.py",
            "--a-source",
            str(old / "add_v1.py"),
            "--arch",
            "sm_90a",
        ],
        compile_cache,
    )
    sa, sb = result["sides"]["a"], result["sides"]["b"]
    assert sa["error"] is None and sb["error"] is None
    assert sa["label"].endswith(f"[{old / 'add_v1.py'}]") and "[" not in sb["label"].split("]")[-1]
    assert result["recipe"]["sources"] == {"a": str(old / "add_v1.py"), "b": None}
    (k,) = result["kernels"]  # sub_kernel (A) and add_kernel (B): paired by their launcher, elementwise_add
    assert k["name"] == "sub_kernel" and k["name_b"] == "add_kernel" and k["a"] and k["b"]
    assert k["a"]["callable"] == k["b"]["callable"] == "elementwise_add"
    assert k["a"]["instructions"] != k["b"]["instructions"]  # one add per thread vs four


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_working_copy_against_a_git_revision(compile_cache, tmp_path):
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    recipe_file = repo / "kernels" / "add.py"
    shutil.copy(SAMPLES / "elementwise_add.py", recipe_file)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "add"], cwd=repo, check=True)
    recipe_file.write_text(
        recipe_file.read_text().replace("gA[row, col] + gB[row, col]", "gA[row, col] * gB[row, col]")
    )
    result = compare_json(
        ["4.8.0", "4.8.0", *PINS, "--kernel", "kernels/add.py", "--b-source", "git:HEAD", "--arch", "sm_100a"],
        compile_cache,
        cwd=repo,
    )
    assert result["sides"]["b"]["label"].endswith("[git:HEAD]")
    (k,) = result["kernels"]
    assert k["a"] and k["b"] and k["alignment"]["match_pct"] < 100  # + became *


HELPER_KERNEL = """
import cutlass
import cutlass.cute as cute


@cute.kernel
def tiny_kernel(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == n:
        cute.printf("tidx %d\\n", n)
"""

KERNEL_IN_HELPER_RECIPE = """
import cutlass
import cutlass.cute as cute

from tilekern import tiny_kernel   # the kernel lives in a helper module next to the recipe


@cute.jit
def tiny_launch(n: cutlass.Int32):
    tiny_kernel(n).launch(grid=[1, 1, 1], block=[32, 1, 1])


def recipe(ctx):
    cute.compile(tiny_launch, cutlass.Int32(3))
"""


def test_a_saved_result_keeps_the_recipe_and_its_helpers(compile_cache, tmp_path):
    """``--save`` copies the recipe file and the helper its kernel lives in (issue 37): opened
    where the originals are gone, every source line-info names is found inside the result."""
    from cutediff_tui.core.model.confine import absolutize
    from cutediff_tui.core.model.io import read_comparison
    from cutediff_tui.ui.sources import resolve_source

    work = tmp_path / "work"
    work.mkdir()
    (work / "tilekern.py").write_text(HELPER_KERNEL)
    (work / "kern_recipe.py").write_text(KERNEL_IN_HELPER_RECIPE)
    res = tmp_path / "res"
    proc = cutediff(
        ["compare", "4.8.0", "4.8.0", *PINS, "--kernel", str(work / "kern_recipe.py"), "--arch", "sm_90a"]
        + ["--save", str(res), "-q"],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (res / "src/a/recipe/kern_recipe.py").read_text() == KERNEL_IN_HELPER_RECIPE
    assert (res / "src/a/recipe/tilekern.py").read_text() == HELPER_KERNEL
    assert not (res / "src/b").exists()  # side B's files are the same: saved once
    shutil.rmtree(work)
    comparison = absolutize(read_comparison(res / "comparison.json"), res)
    (k,) = comparison["kernels"]
    assert k["name"] == "tiny_kernel"
    for side in ("a", "b"):
        assert set(k[side]["sources"]) == {str(work / "tilekern.py"), str(work / "kern_recipe.py")}
        ref = resolve_source(str(work / "tilekern.py"), 9, comparison, side, k[side]["sources"])
        assert ref.path is not None and ref.path.is_relative_to(res.resolve()), ref
