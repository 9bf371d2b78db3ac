"""Watch in the TUI, driven by the messages a watch posts (the compile itself: the slow
test in tests/integration/test_recipes_watch.py): per-side compiling and error banners, the
comparison swapped in place with the cursor on the same instruction, changed figures flashed."""

from __future__ import annotations

import copy

from cutediff_tui.core.watch import Change
from cutediff_tui.ui.live import LiveBanner
from cutediff_tui.ui.messages import LiveCompiling, LiveError, LiveResult
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.bars import PaneTitle
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
        offset_y, region = screen.pane("b").scroll_y, screen.pane("b").region

        app.post_message(LiveCompiling({"b"}, "recipe.py"))
        await settle(pilot)
        title_b = screen.query_one("#title-b", PaneTitle)
        assert "compiling…" in str(title_b.render()) and "compiling" not in str(screen.query_one("#title-a").render())
        assert screen.pane("b").scroll_y == offset_y and screen.pane("b").region == region  # nothing moved
        assert banner(screen, "b").state == "" and banner(screen, "a").state == ""

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
        assert banner(screen, "b").state == "" and "compiling" not in str(title_b.render())


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
            assert "Recipe file my_recipe.py has" in text and str(tmp_path) not in text  # named, not pathed
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
        assert not screen.query(LiveBanner)  # "compiling…" is on the title: the panes stay put
        app.post_message(LiveError("Recipe file recipe.py has a syntax error on line 4.", Change([], sides={"b"})))
        await settle(pilot)
        assert screen.live_banner("a") is None
        shown = screen.live_banner("b")
        assert shown is not None and shown.state == "error" and shown.display
        ids = [w.id for w in screen.query_one("#side-b").children]
        assert ids.index("columns-b") < ids.index("live-b") < ids.index("pane-b")
        screen.live_idle()
        await settle(pilot)
        assert screen.live_banner("b") is shown and shown.state == "" and not shown.display


async def test_a_refresh_updates_the_widgets_in_place_from_the_watch_built_view(make_app, comparison):
    """The watch builds the shown view in its thread and the screen swaps it in: the widgets stay
    (focus, scroll) and show the new figures; no listing is loaded on the UI's side."""
    from cutediff_tui.ui.live import LiveWatch
    from cutediff_tui.ui.widgets.header import ComparisonHeader
    from cutediff_tui.ui.widgets.kernel_list import kernel_badge

    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _on_spill(pilot)
        kernel = screen.kernel["name"]
        focused, pane_b, kernels_list = app.focused, screen.pane("b"), screen.query_one("#kernels")
        new = copy.deepcopy(comparison)
        index, k = next((i, k) for i, k in enumerate(new["kernels"]) if k["name"] == kernel)
        k["b"]["spill_store_bytes"] = int(k["b"].get("spill_store_bytes") or 0) + 64
        new["sides"]["b"]["dsl"] = "9.9.9"
        message = LiveWatch(app, None).result(new, Change([]))  # type: ignore[arg-type]
        built = message.models[(kernel, screen.view)]
        loads = []
        screen.load_model = lambda *a: loads.append(a)  # type: ignore[method-assign]
        app.post_message(message)
        await settle(pilot)
        assert screen.model is built and not loads
        assert screen.pane("b") is pane_b and screen.query_one("#kernels") is kernels_list
        assert app.focused is focused
        assert "9.9.9" in str(screen.query_one(ComparisonHeader).render())
        assert str(kernels_list.get_option_at_index(index).prompt) == str(kernel_badge(k))
        assert "spill_store_bytes" in screen.query_one(MetricsPane).flashing


async def test_a_listing_loaded_for_a_replaced_comparison_is_dropped(make_app, comparison):
    from cutediff_tui.ui.messages import ModelReady
    from cutediff_tui.ui.model import build_model

    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _on_spill(pilot)
        stale = build_model(screen.comparison, screen.kernel_index, screen.view)
        app.post_message(LiveResult(copy.deepcopy(comparison), Change([])))
        await settle(pilot)
        shown = screen.model
        assert shown is not None and screen.generation == 1
        screen.post_message(ModelReady(screen.kernel_index, screen.view, stale, generation=0))
        await settle(pilot)
        assert screen.model is shown


async def test_a_refresh_with_fewer_kernels_keeps_the_list_in_step(make_app, comparison):
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _on_spill(pilot)
        kernel = screen.kernel["name"]
        new = copy.deepcopy(comparison)
        new["kernels"] = [k for k in new["kernels"] if k["name"] == kernel]
        app.post_message(LiveResult(new, Change([])))
        await settle(pilot)
        kl = screen.query_one("#kernels")
        assert kl.option_count == 1 and kl.highlighted == 0
        assert screen.kernel_index == 0 and screen.kernel["name"] == kernel and screen.model is not None
