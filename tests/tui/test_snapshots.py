"""SVG snapshots of the app on the bundled sample (``--snapshot-update`` to accept changes)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from .conftest import has_sample, settle

pytestmark = pytest.mark.skipif(not has_sample(), reason="the bundled sample is missing")


@pytest.fixture
def app(make_app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the working directory is a source search root
    return make_app()


def keys(*press: str):
    """run_before: wait for the listings, press keys, wait again."""

    async def run(pilot) -> None:
        await settle(pilot)
        if press:
            await pilot.press(*press)
            await settle(pilot)
        # A blinking text cursor is drawn or not depending on when the frame is taken (the compare
        # dialog's filter flaked under load): keep it steadily shown.
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    return run


def test_main_screen(snap_compare, app):
    assert snap_compare(app, terminal_size=(120, 36), run_before=keys())


def test_after_next_spill(snap_compare, app):
    assert snap_compare(app, terminal_size=(120, 36), run_before=keys("s"))


def test_help_screen(snap_compare, app):
    assert snap_compare(app, terminal_size=(120, 36), run_before=keys("question_mark"))


def test_compare_dialog(snap_compare, app):
    assert snap_compare(app, terminal_size=(120, 36), run_before=keys("c"))


def test_narrow_layout(snap_compare, app):
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("s"))
