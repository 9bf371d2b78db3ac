"""Pilot tests of the keys people expect: ctrl+c, help scrolling and legend, search repeat with
a match counter, hunks on d/D, selection and the clipboard, the export dialog, column headers
and the bundled sample's first line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutediff_tui.ui.screens.export import ExportScreen
from cutediff_tui.ui.screens.help import HelpScreen
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.bars import ColumnHeader, ViewBar
from cutediff_tui.ui.widgets.code_pane import GUTTER_LEGEND

from .conftest import has_sample, kernel_named, settle

pytestmark = pytest.mark.skipif(not has_sample(), reason="the bundled sample is missing")
FA4 = "FlashAttentionForwardSm100"


async def open_fa4(pilot) -> MainScreen:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen)
    index, _ = kernel_named(screen.comparison, FA4)
    if screen.kernel_index != index:
        screen.kernel_index = index
        await settle(pilot)
    return screen


def screenshot_text(app) -> str:
    return app.export_screenshot().replace("&#160;", " ")


async def test_ctrl_c_quits(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit  # the app is leaving, not asking for ctrl+q
    assert app.return_code == 0


async def test_help_shows_legend_and_scrolls(make_app):
    app = make_app()
    async with app.run_test(size=(100, 24)) as pilot:
        await open_fa4(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        shot = screenshot_text(app)
        assert "gutter marks" in shot and "╱╱╱" in shot and "spill store/load" in shot
        assert {m for m, _ in GUTTER_LEGEND} == {"+", "-", "~", "»", "·", "●", "╱╱╱"}
        scroller = help_screen.scroller
        assert scroller.max_scroll_y > 10
        await pilot.press("j", "j", "j")
        await pilot.pause()
        assert round(scroller.scroll_y) == 3
        await pilot.press("k")
        await pilot.pause()
        assert round(scroller.scroll_y) == 2
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert round(scroller.scroll_y) > 6
        await pilot.press("G")
        await pilot.pause()
        assert round(scroller.scroll_y) == scroller.max_scroll_y
        await pilot.press("g")
        await pilot.pause()
        assert round(scroller.scroll_y) == 0
        # the help lists the new keys
        text = help_screen.text()
        for key in ("d ", "n ", "y ", "Y ", "v "):
            assert any(line.startswith(key) for line in text.splitlines()), key


async def test_help_follows_a_theme_change_and_hides_the_screen_below(make_app):
    """The help is one widget of Rich tables coloured from the theme: a theme switched while it is
    open recolours it; its background is opaque (the main screen is not re-rendered under it)."""
    from textual.color import Color

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert help_screen.styles.background.a == 1

        from textual.widgets import Static

        def title_colour() -> str:  # as shown, not as it would be built now
            return help_screen.query_one("#help-body", Static).content.renderables[0].style.color.name

        before = title_colour()
        assert before.lower() == Color.parse(app.get_css_variables()["accent"]).hex.lower()
        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await pilot.pause()
        after = title_colour()
        assert after != before and after.lower() == Color.parse(app.get_css_variables()["accent"]).hex.lower()
        assert "gutter marks" in screenshot_text(app)


async def test_search_then_n_repeats_with_counter(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("n")  # nothing searched yet: the cursor stays, a hint is shown
        assert screen.cursor == 0 and screen.search_status == ""
        await pilot.press("slash", *"STL", "enter")
        await settle(pilot)
        matches = screen.search_matches("b", "STL")
        assert len(matches) > 10  # 4.8.0 spills: 44 STL
        assert screen.cursor == matches[0]
        assert screen.search_status == f"/STL  match 1/{len(matches)}"
        await pilot.press("n", "n")
        assert screen.cursor == matches[2] and f"match 3/{len(matches)}" in screen.search_status
        await pilot.press("N")
        assert screen.cursor == matches[1] and f"match 2/{len(matches)}" in screen.search_status
        assert f"match 2/{len(matches)}" in screen.query_one(ViewBar).status.plain
        # hunks moved to d / D
        await pilot.press("d")
        hit = screen.model.hunk_at(screen.cursor)
        assert hit is not None and hit[1].start == screen.cursor
        first = screen.cursor
        await pilot.press("d", "D")
        assert screen.cursor == first


async def test_copy_rows_selection_and_hunk(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("j")
        await pilot.press("y")
        line = screen.current_line("b")
        assert line is not None and app.clipboard == line.text + "\n"
        await pilot.press("v", "j", "j")
        assert screen.selected_rows() == (1, 3)
        assert screen.pane("a").selection == (1, 3) == screen.pane("b").selection
        await pilot.press("y")
        expected = [screen.model.line_at(r, "b") for r in (1, 2, 3)]
        assert app.clipboard == "\n".join(ln.text for ln in expected if ln) + "\n"
        assert screen.selected_rows() is None  # copying ends the selection
        await pilot.press("d")
        await pilot.press("Y")
        _, hunk = screen.model.hunk_at(screen.cursor)
        lines = app.clipboard.splitlines()
        assert lines[0].startswith(f"@@ {FA4} SASS rows {hunk.start + 1}-{hunk.end}")
        assert all(ln[:1] in "+-" for ln in lines[1:]) and len(lines) > 1


async def test_export_dialog_asks_and_never_overwrites_silently(make_app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await settle(pilot)
        report = tmp_path / "cutediff-report.md"
        assert FA4 in report.read_text()
        report.write_text("mine")
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert "exists" in str(dialog.query_one("#export-status").render())
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog and report.read_text() == "mine"  # told, not written
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen) and FA4 in report.read_text()
        # another format, chosen by the file name
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path").value = "out/report.html"
        await pilot.pause()
        assert app.screen.fmt == "html"
        await pilot.press("enter")
        await settle(pilot)
        assert (tmp_path / "out" / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
        # or the clipboard
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path").value = "clipboard"
        await pilot.pause()
        app.screen.query_one("#export-formats").render()
        await pilot.press("enter")
        await settle(pilot)
        assert app.clipboard.startswith("#") and FA4 in app.clipboard
    assert sorted(p.name for p in Path(tmp_path).rglob("*") if p.is_file()) == ["cutediff-report.md", "report.html"]


async def test_column_headers_follow_the_view(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        header = screen.query_one("#columns-b", ColumnHeader)
        assert "addr" in header.text and "SASS instruction" in header.text
        assert header.text.index("SASS") == screen.pane("b")._gutter_width()
        await pilot.press("2")
        await settle(pilot)
        assert header.text.rstrip().endswith("PTX")


async def test_bundled_sample_says_what_it_is(make_app):
    from cutediff_tui.samples import default_sample

    app = make_app(source=default_sample())
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await open_fa4(pilot)
        shown = toasts(app)
        assert any("bundled sample" in t and "cutediff compare" in t and "quickstart" in t for t in shown), shown
    other = make_app(source=Path("elsewhere.json"))
    async with other.run_test(size=(120, 36), notifications=True) as pilot:
        await open_fa4(pilot)
        assert not any("bundled sample" in t for t in toasts(other))


def toasts(app) -> list[str]:
    """The text of the notifications on screen (title and message)."""
    return [" ".join(str(t.render()).split()) for t in app.screen.query("Toast")]
