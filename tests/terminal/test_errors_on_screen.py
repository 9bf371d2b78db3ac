"""Errors that point at the user's code, read off a real 80x24 terminal (issue 37): a recipe whose
helper raises, a recipe with a syntax error and a kernel whose PTX ptxas rejects (a DSL internal
compiler error). The sentence names the file, the line and its text (or what ptxas said) and the
kept log; ``--debug`` shows the traceback and never advises ``--debug``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from faults.helpers import PINS

from .screen import run_in_terminal

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"


def compare(recipe: Path, *more: str) -> list[str]:
    return ["compare", "4.8.0", "4.8.0", *PINS, "--kernel", str(recipe), "--arch", "sm_90a", *more]


def kept_log(sentence: str) -> Path:
    m = re.search(r"The full log: (\S+\.log)\.", sentence)
    assert m, sentence
    return Path(m.group(1))


def test_a_helper_that_raises_is_named_with_its_line_and_the_log_is_kept(own_cache, tmp_path):
    (tmp_path / "tilehelp.py").write_text(
        'def scale(n):\n    if n > 2:\n        raise ValueError(f"scale {n} is too big")\n    return n\n'
    )
    recipe = tmp_path / "helper_recipe.py"
    recipe.write_text("import tilehelp\n\n\ndef recipe(ctx):\n    tilehelp.scale(3)\n")
    term = run_in_terminal(compare(recipe, "--debug"), cols=80, rows=24)
    assert term.returncode == 2, str(term)
    sentence = term.from_last("error: ")
    assert "failed while compiling (ValueError: scale 3 is too big)" in sentence, sentence
    assert f'at {tmp_path / "tilehelp.py"}:3: `raise ValueError(f"scale {{n}} is too big")`' in sentence, sentence
    log = kept_log(sentence)
    assert log.is_relative_to(own_cache) and "tilehelp.py" in log.read_text() and "Traceback" in log.read_text()
    assert b"Traceback" in term.raw  # --debug shows it ...
    assert b"--debug" not in term.raw  # ... and advises nothing it already did


def test_a_syntax_error_shows_the_line(own_cache, tmp_path):
    recipe = tmp_path / "syntax_recipe.py"
    recipe.write_text("def recipe(ctx):\n    x = (1,\n")
    term = run_in_terminal(compare(recipe), cols=80, rows=24)
    assert term.returncode == 2, str(term)
    assert "has a syntax error on line 2 ('(' was never closed): `x = (1,`." in term.from_last("error: "), str(term)


def test_a_ptxas_failure_inside_the_dsl_is_told_by_what_ptxas_said(own_cache):
    term = run_in_terminal(compare(DATA / "ice_recipe.py"), cols=80, rows=24)
    assert term.returncode == 2, str(term)
    sentence = term.from_last("error: ")
    assert re.search(r"ptxas failed on the PTX of recipe \S*ice_recipe.py:recipe \(ptxas ", sentence), sentence
    assert "error : Not a name of any known instruction: 'frobnicate'" in sentence, sentence
    assert f"at {DATA / 'ice_recipe.py'}:" in sentence, sentence
    assert "PTX assembly failed" in kept_log(sentence).read_text()
