"""report, check, sweep and bisect in a real terminal (issue 37): cold (bars drawn while the
kernels compile), then cached, then with a recipe that raises. Each run leaves no bar on screen,
and its answer (the file written, the check's summary, the sweep's table, bisect's first bad
version, or the error sentence) is the last thing there."""

from __future__ import annotations

from pathlib import Path

import pytest
from faults.helpers import PINS, TINY_RECIPE

from .screen import Terminal, run_in_terminal

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
TARGET = ["--arch", "sm_90a"]


@pytest.fixture
def recipes(tmp_path):
    tiny = tmp_path / "tiny_recipe.py"
    tiny.write_text(TINY_RECIPE.replace("{before}", "pass"))
    bad = tmp_path / "bad_recipe.py"
    bad.write_text("def recipe(ctx):\n    raise ValueError('boom')\n")
    return tiny, bad


def ends_clean(term: Terminal, code: int, run: str) -> None:
    assert term.returncode == code, f"{run}: exit {term.returncode}\n{term}"
    assert not term.bars_left(), f"{run}: bars left on screen:\n{term}"
    assert "Traceback" not in term.text, f"{run}:\n{term}"


def ends_with_error(term: Terminal, *words: str) -> None:
    """The error sentence, wrapped at the window's width, is the last thing on screen."""
    tail = term.from_last("error: ")
    assert tail, str(term)
    for word in words:
        assert word in tail, f"{word!r} not in the last sentence:\n{term}"


def cold_then_cached(args: list[str], size: tuple[int, int], code: int = 0) -> tuple[Terminal, Terminal]:
    cols, rows = size
    cold = run_in_terminal(args, cols=cols, rows=rows)
    ends_clean(cold, code, "cold")
    assert b"elapsed" in cold.raw, f"a cold run draws bars (else this test proves nothing):\n{cold}"
    cached = run_in_terminal(args, cols=cols, rows=rows)
    ends_clean(cached, code, "cached")
    return cold, cached


def test_report_says_what_it_wrote_last(own_cache, recipes, tmp_path):
    tiny, bad = recipes
    out = tmp_path / "r.md"
    args = ["report", "4.8.0", "4.8.0", *PINS, "--kernel", str(tiny), *TARGET, "-o", str(out), "--force"]
    for term in cold_then_cached(args, (120, 36)):
        assert term.last_line.startswith(f"· wrote {out}"), str(term)
    assert "same resources on 4.8.0 and 4.8.0" in out.read_text()
    term = run_in_terminal(["report", "4.8.0", "4.8.0", *PINS, "--kernel", str(bad), *TARGET], cols=80, rows=24)
    ends_clean(term, 2, "error")
    ends_with_error(term, "ValueError: boom")


def test_check_ends_with_its_summary(own_cache, recipes):
    tiny, bad = recipes
    base = ["check", "4.8.0", "4.8.0", *PINS, "--kernel", str(tiny), *TARGET]
    for term in cold_then_cached([*base, "--max-register-delta", "0"], (80, 24)):
        assert term.last_line.startswith("cutediff check: within limits"), str(term)
    broken = run_in_terminal([*base, "--max", "instructions=10"], cols=120, rows=36)
    ends_clean(broken, 1, "a limit broken")
    assert broken.last_line.startswith("cutediff check: 1 limit(s) broken"), str(broken)
    assert broken.lines[-2].startswith("FAIL  tiny_kernel max instructions"), str(broken)
    term = run_in_terminal(["check", "4.8.0", "4.8.0", *PINS, "--kernel", str(bad), *TARGET], cols=120, rows=36)
    ends_clean(term, 2, "error")
    ends_with_error(term, "ValueError: boom")


def test_sweep_ends_with_its_table(own_cache, recipes):
    tiny, bad = recipes
    args = ["sweep", "4.8.0", *PINS, "--kernel", str(tiny), "--arch", "sm_90a,sm_100a"]
    cold, cached = cold_then_cached(args, (120, 36))
    for term in (cold, cached):
        row = [ln for ln in term.lines if ln.lstrip().startswith("4.8.0 ")]
        assert row and "│" in row[-1], str(term)  # the table's row is on screen
        assert "2 cells in" in "".join(term.lines[term.lines.index(row[-1]) :]), str(term)  # then its summary
    assert b"resuming: 2 of 2 cells" in cached.raw, str(cached)
    term = run_in_terminal(["sweep", "4.8.0", *PINS, "--kernel", str(bad), "--arch", "sm_90a"], cols=80, rows=24)
    ends_clean(term, 2, "error")
    assert "ValueError: boom" in "".join(term.lines[-4:]), str(term)


def test_bisect_ends_with_the_first_bad_version(own_cache, recipes, tmp_path):
    """Two published versions (a ``--versions`` file), a recipe that grows on DSL 4.8: bisect
    names 4.8.0 first bad, and says so last."""
    _, bad = recipes
    versions = tmp_path / "versions.txt"
    versions.write_text("4.5.1\n4.8.0\n")
    args = ["bisect", "--good", "4.5.1", "--bad", "4.8.0", "--versions", str(versions), *PINS, *TARGET]
    metric = ["--metric", "instructions>40"]
    for term in cold_then_cached([*args, "--kernel", str(DATA / "versioned_recipe.py"), *metric], (80, 24)):
        assert any(ln.startswith("first bad: 4.8.0 (last good: 4.5.1)") for ln in term.lines[-4:]), str(term)
        assert "".join(term.lines[-3:]).startswith("compare them: cutediff compare 4.5.1 4.8.0"), str(term)
    term = run_in_terminal([*args, "--kernel", str(bad), *metric], cols=120, rows=36)
    ends_clean(term, 2, "error")
    ends_with_error(term, "cannot be tested", "ValueError: boom")
