"""Issue 15 items 7 and 8 in the TUI: side labels, a failed side's figures, text never markup."""

from __future__ import annotations

import dataclasses

import pytest
from textual.widgets import Static

from cutediff_tui.ui.widgets.header import ComparisonHeader
from cutediff_tui.ui.widgets.metrics import MetricsPane

from .conftest import has_sample, settle

pytestmark = pytest.mark.skipif(not has_sample(), reason="the bundled sample is missing")


def _plain(widget: Static) -> str:
    return str(widget.render())


async def test_header_names_what_differs_between_the_sides(make_app, comparison):
    comparison["sides"]["a"]["params"] = {"hdim": 128, "causal": True}
    comparison["sides"]["b"]["params"] = {"hdim": 64, "causal": True}
    app = make_app(comparison)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        text = str(app.screen.query_one(ComparisonHeader).build())
        assert "DSL 4.5.1 · hdim=128" in text and "DSL 4.8.0 · hdim=64" in text


async def test_failed_side_shows_dashes_not_zero_in_the_metrics_pane(make_app, comparison):
    comparison["sides"]["b"]["error"] = "Side B: recipe fa4-fwd failed while compiling (ValueError: boom)."
    for k in comparison["kernels"]:
        k["b"] = None
        for key in ("alignment", "ptx_alignment", "deltas", "spill_sites_diff", "lines"):
            k.pop(key, None)
    app = make_app(comparison)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        pane = app.screen.query_one(MetricsPane)
        classes = _plain(pane.query_one("#classes", Static))
        resources = _plain(pane.query_one("#resources", Static))
        assert "–" in classes and "–" in resources
        assert "-64" not in classes and "-398" not in classes  # no delta against a failed side
        for line in classes.splitlines()[1:]:
            assert not line.rstrip().endswith(("0", "=")) or "–" not in line, line


async def test_recipe_summary_with_brackets_is_shown_as_written(make_app, comparison, monkeypatch):
    import html
    import re

    from cutediff_tui.core import recipes

    name = comparison["recipe"]["name"]  # the dialog starts on the comparison's recipe
    info = dataclasses.replace(recipes.BUILTINS[name], summary="sum x[i] over [b]rows[/b]")
    monkeypatch.setitem(recipes.BUILTINS, name, info)
    app = make_app(comparison)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        svg = app.export_screenshot()
        text = html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
        assert "sum x[i] over [b]rows[/b]" in text
