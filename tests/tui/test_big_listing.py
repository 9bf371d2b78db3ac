"""Huge SASS listings (issue 19 item 4): the raw listing first, keys answered while a child process
aligns, then the aligned view, the same as the in-process path makes.

Listings are made from the bundled sample's FA4 forward kernel (:mod:`.big_sass`). Timing figures are
measured by ``benchmarks/bench_big_listing.py``; these tests assert behaviour only.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import time
from pathlib import Path

import pytest

from cutediff_tui.ui.app import CutediffApp
from cutediff_tui.ui.big_listing import PackedPaneModel, RawPaneModel, stage_sass
from cutediff_tui.ui.model import build_model
from cutediff_tui.ui.screens.help import HelpScreen
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.bars import PaneTitle

from .big_sass import fa4_like_comparison

VERSIONS = ["4.5.1", "4.8.0"]


async def _stages(comparison: dict) -> list:
    return [x async for x in stage_sass(comparison, 0)]


def test_the_packed_view_equals_the_in_process_one(tmp_path):
    comparison = fa4_like_comparison(tmp_path, 12_000)
    stages = asyncio.run(_stages(comparison))
    assert isinstance(stages[0], RawPaneModel) and stages[0].pending
    assert any(isinstance(x, str) and "aligning" in x for x in stages)
    got = stages[-1]
    assert isinstance(got, PackedPaneModel) and got.pending is None
    want = build_model(comparison, 0, "sass")
    assert len(got.rows) == len(want.rows) and got.match_pct == want.match_pct
    assert list(got.rows) == list(want.rows)
    for s in ("a", "b"):
        assert list(got.side(s).lines) == list(want.side(s).lines)
        assert got.side(s).labels == want.side(s).labels
        assert list(got.spill_rows(s)) == list(want.spill_rows(s))
        assert got.pressure(s) == want.pressure(s)
    assert [(h.start, h.end, h.kind, h.summary) for h in got.hunks] == [
        (h.start, h.end, h.kind, h.summary) for h in want.hunks
    ]
    assert (got.text_width, got.addr_width, got.has_live) == (want.text_width, want.addr_width, want.has_live)
    assert got.spill_rows("b"), "4.8.0's spills are in the listing"
    for row in (0, 7, len(want.rows) // 3, len(want.rows) - 1):
        for step in (1, -1):
            g, w = got.next_hunk(row, step), want.next_hunk(row, step)
            # the packed hunks carry no aligner cost, rank or tags (the r/m keys rank by them)
            assert (g is None) == (w is None)
            if g is not None and w is not None:
                assert (g.start, g.end, g.kind, g.summary) == (w.start, w.end, w.kind, w.summary)
            assert got.next_spill("b", row, step) == want.next_spill("b", row, step)
        assert got.search("b", "STL", row) == want.search("b", "STL", row)
    addr = want.side("a").lines[5000].addr
    assert addr is not None and got.find_addr("a", addr + 4) == want.find_addr("a", addr + 4)


def test_a_big_listing_answers_keys_while_it_is_aligned(tmp_path):
    comparison = fa4_like_comparison(tmp_path, 200_000)

    async def until(pilot, cond, timeout: float) -> None:
        t0 = time.perf_counter()
        while not cond():
            assert time.perf_counter() - t0 < timeout, "timed out"
            await pilot.pause(0.05)

    async def go() -> None:
        app = CutediffApp(comparison, versions=VERSIONS, installed=set(VERSIONS), gpu_probe=None)
        async with app.run_test(size=(120, 36)) as pilot:
            main = app.screen
            assert isinstance(main, MainScreen)
            await until(pilot, lambda: main.model is not None, 30)
            raw = main.model
            assert isinstance(raw, RawPaneModel) and raw.pending
            # the raw listing is drawn: side B's first instruction, in the pane
            assert "/*" not in main.pane("b").render_line(0).text
            assert main.pane("b").render_line(0).text.strip()
            # keys work while the child process aligns
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), 10)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is main, 10)
            for _ in range(3):
                await pilot.press("j")
            await until(pilot, lambda: main.cursor == 3, 10)
            assert main.model is raw and raw.pending, "the aligned view came before the keys were answered"
            line = raw.line_at(3, "b")
            assert line is not None and line.addr is not None
            await pilot.press("d")  # needs the alignment: says so, moves nothing
            await pilot.pause()
            assert main.cursor == 3
            # then the aligned view, the cursor on the same instruction of side B
            await until(pilot, lambda: isinstance(main.model, PackedPaneModel), 240)
            model = main.model
            assert model.pending is None and len(model.rows) >= 200_000
            assert main.cursor == model.find_addr("b", line.addr)
            assert model.line_at(main.cursor, "b").addr == line.addr
            assert "raw" not in main.query_one("#title-b", PaneTitle).caption
            await pilot.press("d")
            await until(pilot, lambda: model.hunk_at(main.cursor) is not None, 10)
            await pilot.press("G")
            await until(pilot, lambda: main.cursor == len(model.rows) - 1, 10)
            bottom = main.pane("b")
            assert bottom.render_line(bottom.cursor - round(bottom.scroll_y)).text.strip()

    asyncio.run(go())


def test_an_aligner_failure_leaves_the_raw_listing_with_a_sentence(tmp_path):
    comparison = fa4_like_comparison(tmp_path, 3_000)
    kdir = tmp_path / "a" / "000"
    # the raw view reads this text; the aligner refuses it (a label, no function, no instruction)
    (kdir / "sass.txt.gz").write_bytes(gzip.compress(b"        /*0000*/  BRA.U !UP0, 0x10 ;\n"))
    (kdir / "lrm.txt.gz").write_bytes(gzip.compress(b"nothing here\n"))
    stages = asyncio.run(_stages(comparison))
    last = stages[-1]
    assert isinstance(last, RawPaneModel) and last is stages[0]
    assert last.pending.startswith("The aligned view could not be made (")
    assert "no instruction lines" in last.pending and "raw listing" in last.pending
    assert "Traceback" not in last.pending
    assert last.side("a").lines[0].text == "BRA.U !UP0, 0x10"


def _packers() -> list[int]:
    """Processes whose parent is this one and which run the aligner (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"cutediff_tui.core.packed_sass" in cmd:
            out.append(int(d.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_aligner_dies_with_the_view_that_asked_for_it(tmp_path):
    comparison = fa4_like_comparison(tmp_path, 150_000)

    async def go() -> None:
        stages = stage_sass(comparison, 0)
        first = await anext(stages)
        assert isinstance(first, RawPaneModel)
        assert len(_packers()) == 1, "the aligner runs while the raw listing shows"
        await stages.aclose()  # what cancelling the worker does
        assert _packers() == []

    asyncio.run(go())


def test_one_failed_side_packs_the_other_alone(tmp_path):
    comparison = fa4_like_comparison(tmp_path, 3_000)
    comparison["sides"]["a"]["error"] = "the DSL did not import"
    stages = asyncio.run(_stages(comparison))
    got, want = stages[-1], build_model(comparison, 0, "sass")
    assert isinstance(got, PackedPaneModel) and got.pending is None
    assert got.side("a").note == want.side("a").note == "Side A failed: the DSL did not import"
    assert list(got.rows) == list(want.rows) and list(got.side("b").lines) == list(want.side("b").lines)
    assert got.next_hunk(0) is None and list(got.spill_rows("b")) == list(want.spill_rows("b"))
