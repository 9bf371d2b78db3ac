"""flash-attn-4 4.0.0b16 does not import on CuTe DSL 4.5.3 / 4.6.x (``cute.core.ThrMma`` and friends
moved). cutediff's worker applies compatibility shims first; when an import still fails, the sentence
says which shims were tried.

Real environment (DSL 4.6.3 + flash-attn-4 4.0.0b16 + quack-kernels 0.4.1, from PyPI on the first
run, then from the session cache) and real workers.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cutediff_tui.core.build import BuildRequest, compile_build
from cutediff_tui.core.errors import CompileError
from cutediff_tui.core.gpu import resolve_profile

from .helpers import PIN_LIST, is_sentence, tiny_recipe

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env463(compile_cache):
    from cutediff_tui.core.toolchain import create_env, parse_side

    old = os.environ.get("CUTEDIFF_CACHE_DIR")
    os.environ["CUTEDIFF_CACHE_DIR"] = str(compile_cache)
    try:
        return create_env(parse_side("4.6.3", PIN_LIST))
    finally:
        if old is None:
            os.environ.pop("CUTEDIFF_CACHE_DIR", None)
        else:
            os.environ["CUTEDIFF_CACHE_DIR"] = old


def test_fa4_b16_does_not_import_on_dsl_463_without_shims(env463):
    """The fault itself: a plain ``import flash_attn.cute.interface`` in that environment fails."""
    code = (
        f"import site, sys; site.addsitedir({str(env463.site)!r}); sys.path.insert(0, {str(env463.site)!r}); "
        "import flash_attn.cute.interface"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "has no attribute 'ThrMma'" in proc.stderr


def test_shims_make_it_import_and_compile(env463, own_cache_463, tmp_path):
    recipe = tiny_recipe(tmp_path, before="import flash_attn.cute.interface")
    build = compile_build(BuildRequest(env463, recipe, {}, resolve_profile(arch="sm_100a")), side="B")
    assert len(build.kernels) == 1
    shims = build.manifest["shims"]
    assert "alias cute.core.ThrMma = cute.ThrMma" in shims


def test_import_that_no_shim_covers_is_one_clear_sentence(env463, own_cache_463, tmp_path):
    recipe = tiny_recipe(tmp_path, before="from cutlass.cute.core import ThrMmaRemovedInAFutureDSL  # noqa")
    with pytest.raises(CompileError) as ei:
        compile_build(BuildRequest(env463, recipe, {}, resolve_profile(arch="sm_100a")), side="B")
    s = ei.value.sentence()
    assert is_sentence(s), s
    assert s.startswith(
        "Side B: recipe tiny could not import what it needs (ImportError: cannot import name "
        "'ThrMmaRemovedInAFutureDSL'"
    ), s
    assert "even with cutediff's" in s and "alias cute.core.ThrMma = cute.ThrMma" in s, s
    assert "Pin a matching version" in s
    assert "Traceback" in ei.value.log  # the full story is kept for --debug


@pytest.fixture
def own_cache_463(tmp_path, compile_cache, env463, monkeypatch):
    from .conftest import borrow_envs

    cache = borrow_envs(tmp_path / "cache", compile_cache)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    return cache
