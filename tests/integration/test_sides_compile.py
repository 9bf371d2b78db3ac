"""Issue 15 items 7 and 8 and its acceptance, with real compiles on this CPU-only machine.

Slow: DSL environments come from PyPI on a cold cache (``CUTEDIFF_TEST_CACHE`` can point at a warm
one, e.g. ``~/.cache/cutediff``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
VECTOR_STORE = str(ROOT / "samples" / "recipes" / "vector_store.py")
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]


def cutediff(args: list[str], cache: Path, timeout: float = 1500) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_fa4_forward_sm90a_has_no_resource_change(compile_cache):
    """FA4's SM90 forward does not spill on either DSL: the verdict says so (issue 15 acceptance)."""
    args = ["compare", "4.5.1", "4.8.0", *PINS, "--kernel", "fa4-fwd", "--arch", "sm_90a"]
    args += ["--varlen", "--causal", "--hdim", "128"]
    proc = cutediff([*args, "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    c = json.loads(proc.stdout)
    (k,) = c["kernels"]
    assert k["name"] == "FlashAttentionForwardSm90"
    for fig in ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes"):
        assert k["a"][fig] == k["b"][fig], fig
    text = cutediff(args, compile_cache)  # the same again, from the cache: the terminal tables
    assert text.returncode == 0, text.stderr[-3000:]
    last = " ".join(text.stdout.rsplit("verdict: ", 1)[1].split())
    assert last.startswith("no resource change in 1 kernel"), last
    assert "A 4.5.1" in text.stdout and "B 4.8.0" in text.stdout
    assert "both with flash-attn-4==4.0.0b16, quack-kernels==0.4.1" in " ".join(text.stdout.split())


def test_side_params_compare_two_settings_of_one_recipe(compile_cache, tmp_path):
    """One DSL, ``bits=128`` on A and ``bits=16`` on B: the store width changes, the labels say why."""
    args = ["compare", "4.8.0", "4.8.0", "--kernel", VECTOR_STORE, "--arch", "sm_90a"]
    args += ["--a-param", "bits=128", "--b-param", "bits=16"]
    proc = cutediff([*args, "--json", str(tmp_path / "c.json")], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["sides"]["a"]["params"]["bits"] == 128 and c["sides"]["b"]["params"]["bits"] == 16
    assert c["sides"]["a"]["params"]["elems"] == c["sides"]["b"]["params"]["elems"] == 64
    (k,) = c["kernels"]
    assert k["a"]["instructions"] < k["b"]["instructions"]  # 8 wide stores became 64 narrow ones
    out = " ".join(proc.stdout.split())
    assert "A 4.8.0 · bits=128" in out and "B 4.8.0 · bits=16" in out
    assert "STG.E.128×8" in out and "STG.E.U16×64" in out  # the changed figure, per side
    assert "st.global.v4.b32×8" in out and "st.global.b16×64" in out
    md = cutediff(["report", str(tmp_path / "c.json"), "--format", "md"], compile_cache)
    assert md.returncode == 0, md.stderr
    assert "**A** 4.8.0 · bits=128 · **B** 4.8.0 · bits=16" in md.stdout


def test_a_failing_recipe_shows_its_traceback_with_debug_only(compile_cache, tmp_path):
    """The worker sends the recipe's traceback back; ``--debug`` shows it; no ANSI codes anywhere."""
    recipe = tmp_path / "fails.py"
    recipe.write_text(
        textwrap.dedent(
            '''
            """A recipe that fails with a coloured message."""
            from cutediff_tui.core.recipes import recipe


            def helper_that_fails():
                raise ValueError("\\x1b[31mboom\\x1b[0m at x[i] [bold]kept[/bold]")


            @recipe(params=[], archs=(90,))
            def fails(ctx):
                """Fails before compiling anything."""
                helper_that_fails()
            '''
        )
    )
    args = ["compare", "4.8.0", "4.8.0", "--kernel", str(recipe), "--arch", "sm_90a", "--no-lineinfo"]
    quiet = cutediff([*args, "--json", str(tmp_path / "c.json")], compile_cache)
    assert quiet.returncode == 2
    assert "Traceback" not in quiet.stderr and "\x1b" not in quiet.stderr + quiet.stdout
    errors = [ln for ln in quiet.stderr.splitlines() if ln.startswith("error:")]
    assert errors and "boom at x[i] [bold]kept[/bold]" in errors[0], quiet.stderr
    # the sentence names the line that raised and the kept log (issue 37), not --debug
    assert f"at {recipe}:7: `raise ValueError(" in errors[0] and "The full log: " in errors[0], errors[0]
    assert "--debug" not in errors[0], errors[0]
    c = json.loads((tmp_path / "c.json").read_text())
    for s in ("a", "b"):
        assert "\x1b" not in c["sides"][s]["error"] and "helper_that_fails" in c["sides"][s]["error_log"]
    loud = cutediff([*args, "--debug"], compile_cache)
    assert loud.returncode == 2
    assert "Traceback (most recent call last)" in loud.stderr and "helper_that_fails" in loud.stderr
    assert "\x1b[31m" not in loud.stderr


def test_python_api_takes_per_side_params(compile_cache, monkeypatch):
    """``cutediff.compare(..., a_params=, b_params=)`` is ``--a-param``/``--b-param`` (served from the
    builds of the test above when it ran first)."""
    import cutediff
    from cutediff_tui.core.model import side_labels

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    res = cutediff.compare(
        "4.8.0", "4.8.0", recipe=VECTOR_STORE, arch="sm_90a", a_params={"bits": 128}, b_params={"bits": 16}
    )
    assert not res.errors
    assert side_labels(res.data) == {"a": "4.8.0 · bits=128", "b": "4.8.0 · bits=16"}
    assert "--a-param bits=128 --b-param bits=16" in res.data["command"]
