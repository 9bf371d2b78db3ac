"""Watch in the TUI, driven by the messages a watch posts (the compile itself: the slow
test in tests/integration/test_recipes_watch.py): per-side compiling and error banners, the
comparison swapped in place with the cursor on the same instruction, changed figures flashed."""

from __future__ import annotations

import copy

from cutediff_tui.core.watch import Change
from cutediff_tui.ui.live import LiveBanner
from cutediff_tui.ui.messages import LiveCompiling, LiveError, LiveResult
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.metrics import MetricsPane

from .conftest import settle


def banner(screen: MainScreen, side: str) -> LiveBanner:
    """The side's banner; one never shown counts as an idle (hidden) banner."""
    return screen.live_banner(side) or LiveBanner(side)


async def _on_spill(pilot) -> MainScreen:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen)
    await pilot.press("s")  # a spill store of B, with its source line
    await settle(pilot)
    return screen


async def test_refresh_keeps_the_cursor_on_the_same_instruction_and_flashes(make_app, comparison):
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _on_spill(pilot)
        before = screen.current_line("b")
        assert before is not None and before.file and before.spill
        row, kernel = screen.cursor, screen.kernel["name"]
        offset = row - round(screen.pane("b").scroll_y)

        app.post_message(LiveCompiling({"b"}, "recipe.py"))
        await settle(pilot)
        assert banner(screen, "b").state == "compiling" and "compiling" in str(banner(screen, "b").render())
        assert banner(screen, "a").state == ""

        new = copy.deepcopy(comparison)
        k = next(k for k in new["kernels"] if k["name"] == kernel)
        k["b"]["registers"] = int(k["b"]["registers"]) + 8
        app.post_message(LiveResult(new, Change([])))
        await settle(pilot)
        assert app.screen is screen and screen.comparison is not comparison
        assert screen.kernel["name"] == kernel and screen.kernel["b"]["registers"] == k["b"]["registers"]
        after = screen.current_line("b")
        assert after is not None
        assert (after.file, after.line, after.text) == (before.file, before.line, before.text)
        assert screen.cursor == row and screen.cursor - round(screen.pane("b").scroll_y) == offset
        assert "registers" in screen.query_one(MetricsPane).flashing
        assert "stack_bytes" not in screen.query_one(MetricsPane).flashing
        assert banner(screen, "b").state == ""


async def test_a_syntax_error_shows_its_line_and_the_last_good_result_stays(make_app, comparison, tmp_path):
    recipe = tmp_path / "my_recipe.py"
    recipe.write_text("import cutlass\n\ndef add(ctx):\n    x = (1 +\n")
    sentence = f"Recipe file {recipe} has a syntax error on line 4 (invalid syntax). Fix it and run again."
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _on_spill(pilot)
        shown, row, model = screen.comparison, screen.cursor, screen.model
        change = Change([recipe], sides={"a", "b"})
        app.post_message(LiveError(sentence, change))
        await settle(pilot)
        for s in ("a", "b"):
            text = str(banner(screen, s).render())
            assert banner(screen, s).state == "error"
            assert "my_recipe.py:4: x = (1 +" in text and "syntax error on line 4" in text
        assert screen.comparison is shown and screen.model is model and screen.cursor == row

        failed = copy.deepcopy(comparison)
        failed["sides"]["b"]["error"] = (
            "Side B: recipe add failed while compiling (NameError: name 'y' is not defined)."
        )
        app.post_message(LiveResult(failed, Change([recipe], sides={"b"})))
        await settle(pilot)
        assert screen.comparison is shown and screen.model is model  # the last good result stays
        assert banner(screen, "b").state == "error" and "NameError" in str(banner(screen, "b").render())
        assert banner(screen, "a").state == ""


async def test_watch_key_without_a_recipe_says_why(make_app, comparison):
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("W")
        await settle(pilot)
        assert app.live is None or not app.live.running
        shown = [" ".join(str(t.render()).split()) for t in app.screen.query("Toast")]
        assert any("--watch --tui" in t for t in shown), shown


async def test_banners_are_mounted_only_when_the_watch_has_news(make_app, comparison):
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert not screen.query(LiveBanner)  # opening a result carries no hidden banners
        app.post_message(LiveCompiling({"b"}, "recipe.py"))
        await settle(pilot)
        assert screen.live_banner("a") is None
        shown = screen.live_banner("b")
        assert shown is not None and shown.state == "compiling" and shown.display
        ids = [w.id for w in screen.query_one("#side-b").children]
        assert ids.index("columns-b") < ids.index("live-b") < ids.index("pane-b")
        screen.live_idle()
        await settle(pilot)
        assert screen.live_banner("b") is shown and shown.state == "" and not shown.display
