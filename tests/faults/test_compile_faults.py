"""Faults around toolchains and compiles: each ends in one sentence and leaves nothing partial.

Real environments and real workers (the DSL from PyPI); the recipes that misbehave are small files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cutediff_tui.core.build import BuildRequest, compile_build
from cutediff_tui.core.errors import CompileError
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.recipes import RecipeInfo
from cutediff_tui.core.toolchain import create_env, parse_side

pytestmark = pytest.mark.slow
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]
FWD = ["--kernel", "fa4-fwd", "--arch", "sm_103a", "--varlen", "--causal", "--hdim", "128"]


def cutediff(args, cache, timeout=1200, **env_extra):
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache), **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def one_sentence(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert lines, stderr[-2000:]
    assert "Traceback" not in stderr
    return lines[0]


def test_unknown_dsl_version_lists_nearby(compile_cache):
    proc = cutediff(["compare", "4.5.9", "4.8.0", *PINS, *FWD], compile_cache)
    assert proc.returncode == 2
    line = one_sentence(proc.stderr)
    assert "4.5.9 is not published" in line and "4.5.1" in line


def test_pin_that_does_not_resolve(compile_cache):
    proc = cutediff(["env", "create", "4.8.0,quack-kernels==99.0.0"], compile_cache)
    assert proc.returncode == 2
    line = one_sentence(proc.stderr)
    assert "quack-kernels" in line or "Resolving" in line
    assert not list((compile_cache / "envs").glob(".tmp-*"))


def test_no_network_with_empty_cache(tmp_path):
    proc = cutediff(["env", "create", "4.7.0"], tmp_path, UV_INDEX_URL="http://127.0.0.1:9/simple", UV_OFFLINE="0")
    assert proc.returncode == 2
    line = one_sentence(proc.stderr)
    assert "package index" in line or "network" in line.lower() or "failed" in line
    envs = tmp_path / "envs"
    assert not envs.exists() or not [p for p in envs.iterdir() if p.is_dir()]  # only the lock file


def test_arch_the_recipe_does_not_support(tmp_path):
    proc = cutediff(["compare", "4.5.1", "4.8.0", "--kernel", "fa4-fwd", "--arch", "sm_80"], tmp_path)
    assert proc.returncode == 2
    assert "has no kernel for sm_80" in one_sentence(proc.stderr)
    assert not (tmp_path / "envs").exists()  # refused before building anything


def test_one_side_fails_the_other_is_kept(compile_cache, tmp_path):
    broken = tmp_path / "broken-checkout"
    (broken / "flash_attn" / "cute").mkdir(parents=True)
    (broken / "flash_attn" / "cute" / "__init__.py").write_text("raise RuntimeError('this checkout is broken')\n")
    out = tmp_path / "result.json"
    proc = cutediff(
        ["compare", "4.8.0", f"4.8.0,flash-attn-4={broken}", *PINS, *FWD, "--json", str(out)], compile_cache
    )
    assert proc.returncode == 2
    line = one_sentence(proc.stderr)
    assert line.startswith("error: Side B") and "broken" in line
    result = json.loads(out.read_text())
    assert result["sides"]["b"]["error"] and result["sides"]["a"]["error"] is None
    (k,) = result["kernels"]
    assert k["a"]["spill_store_bytes"] == 176 and k["b"] is None


def _env_48(compile_cache, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    return create_env(parse_side("4.8.0", ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"]))


def _recipe(tmp_path: Path, body: str) -> RecipeInfo:
    f = tmp_path / "misbehaving_recipe.py"
    f.write_text(textwrap.dedent(body))
    return RecipeInfo("misbehaving", "test recipe", f"{f}:recipe", (), (90, 100, 110, 120))


def _no_partial(compile_cache: Path) -> None:
    arts = compile_cache / "artifacts"
    assert not list(arts.glob(".tmp-*")), list(arts.glob(".tmp-*"))


def test_worker_killed_mid_compile(compile_cache, tmp_path, monkeypatch):
    env = _env_48(compile_cache, monkeypatch)
    rec = _recipe(
        tmp_path,
        """
        import os, signal
        def recipe(ctx):
            os.kill(os.getpid(), signal.SIGKILL)
    """,
    )
    req = BuildRequest(env, rec, {}, resolve_profile(arch="sm_100a"))
    with pytest.raises(CompileError, match=r"killed \(SIGKILL\)"):
        compile_build(req, side="B")
    assert not (compile_cache / "artifacts" / req.key()).exists()
    _no_partial(compile_cache)


def test_worker_that_hangs_is_stopped(compile_cache, tmp_path, monkeypatch):
    env = _env_48(compile_cache, monkeypatch)
    rec = _recipe(
        tmp_path,
        """
        import time
        def recipe(ctx):
            time.sleep(600)
    """,
    )
    req = BuildRequest(env, rec, {}, resolve_profile(arch="sm_100a"))
    with pytest.raises(CompileError, match="did not finish within 20 s"):
        compile_build(req, side="A", timeout=20)
    _no_partial(compile_cache)


def test_recipe_that_raises_and_one_that_compiles_nothing(compile_cache, tmp_path, monkeypatch):
    env = _env_48(compile_cache, monkeypatch)
    rec = _recipe(
        tmp_path,
        """
        def recipe(ctx):
            raise ValueError("bad head dim 7")
    """,
    )
    with pytest.raises(CompileError, match="bad head dim 7"):
        compile_build(BuildRequest(env, rec, {}, resolve_profile(arch="sm_100a")), side="A")
    rec2 = _recipe(
        tmp_path / "x" if (tmp_path / "x").mkdir() is None else tmp_path,
        """
        def recipe(ctx):
            pass
    """,
    )
    with pytest.raises(CompileError, match="compiled no kernel"):
        compile_build(BuildRequest(env, rec2, {}, resolve_profile(arch="sm_100a")), side="A")
    _no_partial(compile_cache)
