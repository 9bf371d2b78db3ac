"""Bisect for real: published DSL versions from PyPI, FA4 4.0.0b16 compiled on this CPU-only machine.

The acceptance command of the bisect issue. Found (and checked with a full compare of 4.5.2 vs
4.5.3): FlashAttentionForwardSm100 on sm_103a spills from DSL 4.5.3 (stack 8 B, 16 B of spill
stores), grows to 192 B in 4.6.0/4.6.1 and is 176 B in 4.8.0.
"""

from __future__ import annotations

import json
import re

import pytest
from test_fa4_compare import FWD, PINS, cutediff

pytestmark = pytest.mark.slow

BISECT = [
    "bisect",
    "--good",
    "4.5.1",
    "--bad",
    "4.8.0",
    *PINS,
    *FWD,
    "--metric",
    "spill_store_bytes>0",
    "--kernel-filter",
    "FlashAttentionForwardSm100",
]


@pytest.fixture(scope="module")
def first_run(compile_cache):
    proc = cutediff([*BISECT, "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def test_names_the_first_version_that_spills(first_run):
    res, stderr = first_run
    assert res["schema"] == "cutediff.bisect/1"
    assert res["first_bad"] == "4.5.3" and res["last_good"] == "4.5.2"
    steps = {s["version"]: s for s in res["steps"]}
    assert steps["4.5.1"]["verdict"] == "good" and steps["4.8.0"]["verdict"] == "bad"
    assert steps["4.5.2"]["verdict"] == "good"
    assert steps["4.5.3"]["verdict"] == "bad" and "spill_store_bytes=16" in steps["4.5.3"]["why"]
    # only log2(n)+2 builds, far fewer than the 10 versions between 4.5.1 and 4.8.0
    assert len(res["versions"]) == 10 and res["builds"] <= res["bound"] == 6
    assert res["compare_command"].startswith("cutediff compare 4.5.2 4.5.3 --with flash-attn-4==4.0.0b16")
    assert "--metric" not in res["compare_command"]


def test_second_run_is_served_from_the_cache_and_prints_the_table(first_run, compile_cache):
    proc = cutediff(BISECT, compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "first bad: 4.5.3 (last good: 4.5.2)" in out
    for v in ("4.5.1", "4.5.2", "4.5.3", "4.8.0"):
        assert v in out
    assert "not built" in out  # the versions it skipped are listed too
    assert f"{first_run[0]['builds']} builds came from the cache" in re.sub(r"\s+", " ", out)


def test_untestable_version_is_reported_not_guessed(first_run, compile_cache, tmp_path):
    """A listed version that cannot be installed is untestable; with only it between the last good
    and the first bad, bisect names both candidates instead of picking one."""
    versions = tmp_path / "versions.txt"
    versions.write_text("4.5.1\n4.5.2\n4.5.2.post7  # not on PyPI\n4.5.3\n4.8.0\n")
    proc = cutediff([*BISECT, "--versions", str(versions), "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    steps = {s["version"]: s for s in res["steps"]}
    assert steps["4.5.2.post7"]["verdict"] == "untestable"
    assert "4.5.2.post7 is not published" in steps["4.5.2.post7"]["why"]
    assert res["first_bad"] is None and res["first_bad_candidates"] == ["4.5.2.post7", "4.5.3"]
    assert res["last_good"] == "4.5.2"


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--metric", "spill_store_bytes>"], "is not an expression"),
        (["--metric", "registers"], "is a value, not a predicate"),
        (["--metric", "spill_store_bytes>0", "--kernel-filter", "("], "is not a regular expression"),
    ],
)
def test_bad_input_is_one_sentence_before_any_build(args, needle, compile_cache):
    base = ["bisect", "--good", "4.5.1", "--bad", "4.8.0", *PINS, *FWD]
    if "--kernel-filter" not in args:
        args = [*args]
    proc = cutediff([*base, *args], compile_cache, timeout=60)
    assert proc.returncode == 2
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3


def test_the_tui_opens_last_good_vs_first_bad(first_run, compile_cache, monkeypatch):
    """`cutediff bisect … --tui` / `cutediff open bisect.json`: the pair as a comparison, in the app."""
    import asyncio

    from cutediff_tui.core.bisect import pair_options
    from cutediff_tui.core.compare import run_compare
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.widgets.header import ComparisonHeader

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    opts = pair_options(first_run[0])
    assert [s.dsl for s in opts.specs] == ["4.5.2", "4.5.3"] and opts.lineinfo
    comparison = run_compare(opts)
    (k,) = [k for k in comparison["kernels"] if k["name"] == "FlashAttentionForwardSm100"]
    assert (k["a"]["spill_store_bytes"], k["b"]["spill_store_bytes"]) == (0, 16)
    assert k["b"]["stack_bytes"] == 8

    async def drive() -> str:
        app = CutediffApp(comparison)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            await pilot.press("s")  # first spill site of the first bad version
            await pilot.pause()
            return str(app.screen.query_one(ComparisonHeader).render())

    header = asyncio.run(drive())
    assert "DSL 4.5.2" in header and "DSL 4.5.3" in header
