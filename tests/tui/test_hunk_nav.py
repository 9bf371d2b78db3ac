"""Pilot tests of the hunk keys by size (r/R), by what a hunk touches (m/M) and the "changes"
list (w, enter jumps), on the bundled sample (issue 15 items 4 and 6)."""

from __future__ import annotations

import pytest

from cutediff_tui.core.model.changes import change_items
from cutediff_tui.ui.screens.changes import ChangesScreen
from cutediff_tui.ui.screens.help import HelpScreen
from cutediff_tui.ui.widgets.bars import ViewBar

from .conftest import has_sample, settle
from .test_app import open_fa4

pytestmark = pytest.mark.skipif(not has_sample(), reason="the bundled sample is missing")


def status(screen) -> str:
    return str(screen.query_one(ViewBar).render())


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_largest_hunk_keys_walk_by_rank(make_app, size):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_fa4(pilot)
        ranked = screen.model.ranked_hunks
        assert ranked[0].cost >= ranked[1].cost >= ranked[2].cost
        await pilot.press("r")
        assert screen.cursor == ranked[0].start
        assert f"hunk 1/{len(ranked)} · {ranked[0].size} lines" in status(screen)
        await pilot.press("r")
        assert screen.cursor == ranked[1].start
        assert f"hunk 2/{len(ranked)}" in status(screen)
        await pilot.press("R")
        assert screen.cursor == ranked[0].start
        await pilot.press("R")  # wraps to the smallest
        assert screen.cursor == ranked[-1].start


async def test_marked_hunk_keys_find_spill_mma_budget_changes(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("m")
        first = screen.cursor
        hit = screen.model.hunk_at(first)
        assert hit is not None and hit[1].tags and hit[1].start == first
        await pilot.press("m")
        second = screen.cursor
        assert second > first and screen.model.hunk_at(second)[1].tags
        await pilot.press("M")
        assert screen.cursor == first
        # every hunk m visits touches spill code, an MMA or a budget, and it visits all of them
        tagged = [h.start for h in screen.model.hunks if h.tags]
        assert first == tagged[0] and second == tagged[1]
        assert {"spill", "mma"} <= set().union(*(h.tags for h in screen.model.hunks))


async def test_changes_list_and_enter_jumps_to_spill_site(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("w")
        await settle(pilot)
        changes = app.screen
        assert isinstance(changes, ChangesScreen)
        want = [ch.text for ch in change_items(screen.comparison, screen.kernel)]
        assert changes.text().splitlines() == want
        assert want[0].startswith("FlashAttentionForwardSm100 spills on 4.8.0")
        await pilot.press("enter")  # the headline: spills, so the first spill site of B
        await settle(pilot)
        assert app.screen is screen
        line = screen.current_line("b")
        assert line is not None and line.spill and screen.active_side == "b"
        assert screen.cursor == screen.model.spill_rows("b")[0]


async def test_changes_list_jumps_to_key_opcode_and_ptx_hunks(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        items = change_items(screen.comparison, screen.kernel)
        ops = next(i for i, ch in enumerate(items) if ch.group == "opcodes")  # STL 0 → 44, LDL 0 → 33
        await pilot.press("w", *(["j"] * ops), "enter")
        await settle(pilot)
        hit = screen.model.hunk_at(screen.cursor)
        assert screen.view == "sass" and hit is not None
        texts = [screen.model.line_at(r, "b") for r in range(hit[1].start, hit[1].end)]
        assert any(t is not None and t.opcode in ("STL", "LDL") for t in texts)
        ptx = next(i for i, ch in enumerate(items) if ch.group == "ptx_opcodes")
        await pilot.press("w", *(["j"] * ptx), "enter")
        await settle(pilot)
        assert screen.view == "ptx"
        hit = screen.model.hunk_at(screen.cursor)
        assert hit is not None
        rows = range(hit[1].start, hit[1].end)
        words = {
            (ln.text.split()[1] if ln.text.startswith("@") else ln.text.split()[0])
            for s in "ab"
            for r in rows
            if (ln := screen.model.line_at(r, s)) is not None
        }
        assert words & set(items[ptx].opcodes)


async def test_changes_list_closes_with_escape(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_fa4(pilot)
        cursor = screen.cursor
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, ChangesScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.cursor == cursor


async def test_help_lists_the_new_keys(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.text()
        for needle in ("Next hunk by size", "spill code, an MMA or a register budget", "What changed in this kernel"):
            assert needle in text
