"""A figure added to the registry shows in the TUI metrics pane (Pilot)."""

from __future__ import annotations

import contextlib

from cutediff_tui.core.model import figures
from cutediff_tui.core.model.figures import FIGURES, Figure, dig
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.metrics import MetricsPane

from .conftest import kernel_named, settle

FA4 = "FlashAttentionForwardSm100"
DUMMY = Figure(
    "dummy_widgets", "Dummy widgets", short="widgets", worse="higher", extract=lambda m: dig(m, "dummy", "widgets")
)


@contextlib.asynccontextmanager
async def _pane_of(app, index: int):
    """The metrics pane of the app (120x36) showing kernel ``index``."""
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MainScreen)
        screen.kernel_index = index
        await settle(pilot)
        yield screen.query_one(MetricsPane)


async def test_dummy_figure_in_metrics_pane(make_app, comparison, monkeypatch):
    monkeypatch.setattr(figures, "FIGURES", (*FIGURES, DUMMY))
    index, k = kernel_named(comparison, FA4)
    k["a"]["dummy"], k["b"]["dummy"] = {"widgets": 3}, {"widgets": 7}
    async with _pane_of(make_app(comparison), index) as pane:
        rows = {key: (label, a, b, d) for key, label, a, b, d in pane.rows}
        assert rows["dummy_widgets"] == ("widgets", "3", "7", "+4")
        assert "widgets" in pane.text() and "+4" in pane.text()


async def test_values_wider_than_their_column_go_on_lines_of_their_own(make_app, comparison):
    """Seen in review at 120x36 on a recipe with 16-bit loads: ``global loadsLDG.E.U16×16LDG.E.U16×1``."""
    index, k = kernel_named(comparison, FA4)
    for s, n in (("a", 16), ("b", 12)):
        k[s]["memory"] = {"ops": [{"space": "global", "kind": "load", "opcode": "LDG.E.U16", "count": n}]}
    async with _pane_of(make_app(comparison), index) as pane:
        (label, a, b, _d) = next(r[1:] for r in pane.rows if r[0] == "global_loads_by_width")
        assert len(a) >= 8 and len(b) >= 8, (a, b)  # wider than a value column
        lines = pane.text().splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith(label))
        assert a not in lines[at] and b not in lines[at]
        assert lines[at + 1].split() == ["A", *a.split()] and lines[at + 2].split() == ["B", *b.split()]
        assert a + b not in pane.text().replace(" ", "")  # the two values never run together
