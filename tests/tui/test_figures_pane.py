"""A figure added to the registry shows in the TUI metrics pane (Pilot)."""

from __future__ import annotations

from cutediff_tui.core.model import figures
from cutediff_tui.core.model.figures import FIGURES, Figure, dig
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.metrics import MetricsPane

from .conftest import kernel_named, settle

FA4 = "FlashAttentionForwardSm100"
DUMMY = Figure(
    "dummy_widgets", "Dummy widgets", short="widgets", worse="higher", extract=lambda m: dig(m, "dummy", "widgets")
)


async def test_dummy_figure_in_metrics_pane(make_app, comparison, monkeypatch):
    monkeypatch.setattr(figures, "FIGURES", (*FIGURES, DUMMY))
    index, k = kernel_named(comparison, FA4)
    k["a"]["dummy"], k["b"]["dummy"] = {"widgets": 3}, {"widgets": 7}
    app = make_app(comparison)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MainScreen)
        screen.kernel_index = index
        await settle(pilot)
        pane = screen.query_one(MetricsPane)
        rows = {key: (label, a, b, d) for key, label, a, b, d in pane.rows}
        assert rows["dummy_widgets"] == ("widgets", "3", "7", "+4")
        assert "widgets" in pane.text() and "+4" in pane.text()
