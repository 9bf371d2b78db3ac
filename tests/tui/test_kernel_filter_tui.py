"""``cutediff open|compare|diff --kernel-filter RE --tui``: the TUI opens the filtered comparison
(the kernels that match, their cross-check entries) and works on it as on a whole one."""

from __future__ import annotations

from click.testing import CliRunner

from cutediff_tui.cli import main
from cutediff_tui.core.model.kernel_filter import filter_comparison
from cutediff_tui.samples import bundled_sample_dir
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.metrics import MetricsPane

from .conftest import settle


async def test_a_filtered_comparison_opens_with_only_its_kernels(make_app, comparison):
    shown = filter_comparison(comparison, "Forward")
    app = make_app(shown)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MainScreen)
        assert [k["name"] for k in screen.comparison["kernels"]] == ["FlashAttentionForwardSm100"]
        assert screen.kernel_index == 0
        rows = {key: (a, b) for key, _label, a, b, _d in screen.query_one(MetricsPane).rows}
        assert rows["stack_bytes"] == ("0", "112")
        await pilot.press("s")  # the next-spill key works on the filtered comparison too
        await settle(pilot)
        line = screen.current_line("b")
        assert line is not None and line.spill


def test_open_refuses_a_filter_that_keeps_nothing_before_the_tui_starts():
    res = CliRunner().invoke(main, ["open", str(bundled_sample_dir()), "--kernel-filter", "NoSuchKernel"])
    assert res.exit_code == 2 and "matches none of the 4 kernel(s)" in res.output
    res = CliRunner().invoke(main, ["open", str(bundled_sample_dir()), "--kernel-filter", "Fwd("])
    assert res.exit_code == 2 and "is not a regular expression" in res.output
