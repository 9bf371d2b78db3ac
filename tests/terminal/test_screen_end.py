"""What a user is left with on a real terminal (issue 37): the progress bars are gone, the result
or the error sentence is the last thing on screen, at 120x36 and at 80x24, cold and cached."""

from __future__ import annotations

import json
import re

import pytest
from faults.helpers import PINS, TINY_RECIPE

from .screen import run_in_terminal

pytestmark = pytest.mark.slow

SIZES = [pytest.param((120, 36), id="120x36"), pytest.param((80, 24), id="80x24")]
ESC = re.compile(rb"\x1b")


def compare_args(recipe, *more: str) -> list[str]:
    return ["compare", "4.8.0", "4.8.0", *PINS, "--kernel", str(recipe), "--arch", "sm_90a", *more]


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny_recipe.py"
    path.write_text(TINY_RECIPE.replace("{before}", "pass"))
    return path


@pytest.mark.parametrize("size", SIZES)
def test_compare_ends_with_its_verdict_cold_and_cached(own_cache, tiny, size):
    cols, rows = size
    for run in ("cold", "cached"):
        term = run_in_terminal(compare_args(tiny), cols=cols, rows=rows)
        assert term.returncode == 0, f"{run}:\n{term}"
        assert term.last_line.startswith("verdict: no resource change"), f"{run}:\n{term}"
        assert not term.bars_left(), f"{run}: bars left on screen:\n{term}"
        if run == "cold":
            assert b"elapsed" in term.raw, "a cold compile draws bars (else this test proves nothing)"
            # the lines just above the verdict are the table's last rows and the ptxas remarks, intact
            assert any("remark on B" in ln for ln in term.lines), str(term)
        else:
            assert b"analysis served from the cache" in term.raw, str(term)


def test_a_failing_recipe_ends_with_its_error_sentence(own_cache, tmp_path):
    bad = tmp_path / "bad_recipe.py"
    bad.write_text("def recipe(ctx):\n    raise ValueError('boom')\n")
    term = run_in_terminal(compare_args(bad), cols=80, rows=24)
    assert term.returncode == 2, str(term)
    assert not term.bars_left(), f"bars left on screen:\n{term}"
    error = [i for i, ln in enumerate(term.lines) if ln.startswith("error: ")]
    assert error, str(term)
    # the sentence (wrapped at 80 columns) is the end of the screen
    assert "ValueError: boom" in " ".join(term.lines[error[0] :]).replace("\n", ""), str(term)
    assert not any(ln.startswith(("·", "⠋")) for ln in term.lines[error[0] :]), str(term)


def test_stdout_into_a_pipe_holds_only_the_json(own_cache, tiny):
    """``compare … --json - | jq``: bars on the terminal's stderr, pure JSON in the pipe."""
    term = run_in_terminal(compare_args(tiny, "--json", "-"), cols=80, rows=24, stdout_piped=True)
    assert term.returncode == 0, str(term)
    assert not ESC.search(term.stdout), term.stdout[:300]
    assert json.loads(term.stdout)["kernels"], term.stdout[:300]
    assert not term.bars_left(), str(term)
