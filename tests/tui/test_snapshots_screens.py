"""SVG snapshots of every screen and state, grouped by feature (``--snapshot-update`` to accept).

Deterministic by construction: a fixed terminal size, input cursors that do not blink, workers
awaited instead of slept for; no network, no GPU and no compile (the compiling and failed
states of the compare dialog are the messages a compile posts, rendered by the real dialog).
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from textual.widgets import Input

from cutediff_tui.core import events
from cutediff_tui.core.watch import Change
from cutediff_tui.ui.messages import CompareFailed, CompareProgress, CrosscheckFinished, LiveCompiling, LiveError
from cutediff_tui.ui.screens import compare as compare_screen
from cutediff_tui.ui.screens.compare import CompareScreen
from cutediff_tui.ui.screens.sweep import SweepApp

from .conftest import has_sample, settle
from .test_bench_pane import RECORDED
from .test_sweep_screen import make_result as make_sweep_result

pytestmark = pytest.mark.skipif(not has_sample(), reason="the bundled sample is missing")

WIDE = (120, 36)
SMALL = (80, 24)


def no_blink(pilot) -> None:
    """Input cursors stay put, so a snapshot never catches one mid-blink."""
    for screen in pilot.app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False


def steps(*actions):
    """run_before: settle, then for each action (keys to press, or a callable taking the
    pilot) do it and settle again; cursors are stopped before the picture is taken."""

    async def run(pilot) -> None:
        await settle(pilot)
        for action in actions:
            if callable(action):
                action(pilot)
            else:
                await pilot.press(*action)
            no_blink(pilot)
            await settle(pilot)
        no_blink(pilot)
        await settle(pilot)

    return run


@pytest.fixture
def app(make_app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the working directory is a source search root
    return make_app()


@pytest.fixture
def frozen_clock(monkeypatch):
    """The compare dialog's elapsed-seconds column reads 0 s, whatever the machine's load."""
    monkeypatch.setattr(compare_screen, "time", SimpleNamespace(monotonic=lambda: 1000.0))


class TestMain:
    """The main screen on the bundled sample: themes, a small terminal, a failed side."""

    @pytest.mark.parametrize("theme", ["cutediff-light", "cutediff-high-contrast"])
    def test_theme(self, snap_compare, app, theme):
        app.theme = theme
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("s",)))

    def test_small_terminal_first_screen(self, snap_compare, app):
        assert snap_compare(app, terminal_size=SMALL, run_before=steps())

    def test_failed_side(self, snap_compare, make_app, comparison, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        comparison["sides"]["b"]["error"] = (
            "DSL 4.8.0 could not build fa4-fwdbwd for sm_103a: the recipe raised TypeError in its compile step."
        )
        comparison["kernels"] = []
        comparison["crosscheck"] = None
        assert snap_compare(make_app(comparison), terminal_size=WIDE, run_before=steps())

    def test_failed_side_keeps_the_other_sides_kernels(self, snap_compare, make_app, comparison, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        comparison["sides"]["b"]["error"] = "DSL 4.8.0 could not build FlashAttentionBackwardSm100 for sm_103a."
        assert snap_compare(make_app(comparison), terminal_size=WIDE, run_before=steps())


class TestHelp:
    def test_small_terminal(self, snap_compare, app):
        assert snap_compare(app, terminal_size=SMALL, run_before=steps(("question_mark",)))

    def test_light_theme(self, snap_compare, app):
        app.theme = "cutediff-light"
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("question_mark",)))


class TestHunkKeys:
    """Issue 15: the changes list (w) and the rank of the hunk under the cursor (r)."""

    def test_changes_list(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("w",)))

    def test_changes_list_small_terminal(self, snap_compare, app):
        assert snap_compare(app, terminal_size=SMALL, run_before=steps(("w",)))

    def test_largest_hunk_rank_in_status(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("r",), ("r",)))


class TestPrompt:
    def test_search(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("slash",), ("S", "T", "L")))

    def test_jump(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("colon",)))

    def test_crosscheck_versions(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("x",)))


def dialog(pilot) -> CompareScreen:
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen


def start_compile(pilot) -> None:
    """What ctrl+s does up to the compile itself, which a test cannot run (no network, no CUDA)."""
    screen = dialog(pilot)
    screen.run_compile = lambda opts: None  # the progress below is what the compile would post
    screen.action_compile()


def post(*messages):
    def run(pilot) -> None:
        for message in messages:
            dialog(pilot).post_message(message)

    return run


class TestCompareDialog:
    """The new-comparison dialog, from an empty filter to a failed side."""

    def test_empty(self, snap_compare, app):
        """Filters that match no version: both lists empty, and compile says what to do."""
        assert snap_compare(
            app,
            terminal_size=WIDE,
            run_before=steps(("c",), ("z", "z", "z"), ("tab", "tab", "tab", "z", "z", "z"), ("ctrl+s",)),
        )

    def test_filtered(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("c",), ("4", ".", "8")))

    def test_compiling(self, snap_compare, app, frozen_clock):
        progress = post(
            CompareProgress(events.EnvStage("a", "installing", "4.5.1,flash-attn-4==4.0.0b16", "dsl-4.5.1-cu13")),
            CompareProgress(events.KernelCompiled("b", "build", 2, "flash_attn_bwd", 41.5)),
        )
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("c",), start_compile, progress))

    def test_failed_side(self, snap_compare, app, frozen_clock):
        failed = post(
            CompareProgress(events.Message("a", "build served from the cache")),
            CompareProgress(events.Message("b", "failed: nvidia-cutlass-dsl==4.8.0 has no wheel for this Python.")),
            CompareFailed("Side B could not be built: nvidia-cutlass-dsl==4.8.0 has no wheel for this Python."),
        )
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("c",), start_compile, failed))

    def test_small_terminal(self, snap_compare, app):
        assert snap_compare(app, terminal_size=SMALL, run_before=steps(("c",)))


class TestWatch:
    """The watch's states on the main screen, as the messages a watch posts: "compiling…" on a
    side's title (nothing moves), and a compile error above the last good listing."""

    def test_compiling(self, snap_compare, app):
        def compiling(pilot) -> None:
            pilot.app.post_message(LiveCompiling({"b"}, "recipe.py"))

        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("s",), compiling))

    def test_error(self, snap_compare, app, tmp_path):
        recipe = tmp_path / "my_recipe.py"
        recipe.write_text("import cutlass\n\ndef add(ctx):\n    x = (1 +\n")
        sentence = f"Recipe file {recipe.name} has a syntax error on line 4 (invalid syntax). Fix it and run again."

        def failed(pilot) -> None:
            pilot.app.post_message(LiveError(sentence, Change([recipe], sides={"b"})))

        assert snap_compare(app, terminal_size=SMALL, run_before=steps(("s",), failed))


class TestCrosscheck:
    def test_results(self, snap_compare, app, comparison):
        result = copy.deepcopy(comparison["crosscheck"])
        assert result, "the bundled sample carries a cross-check"

        def finished(pilot) -> None:
            pilot.app.screen.post_message(CrosscheckFinished(result))

        assert snap_compare(app, terminal_size=WIDE, run_before=steps(finished))


class TestBench:
    def test_no_gpu(self, snap_compare, app):
        assert snap_compare(app, terminal_size=WIDE, run_before=steps(("b",)))

    def test_recorded_run(self, snap_compare, make_app, comparison, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        comparison["bench"] = json.loads(RECORDED.read_text())
        assert snap_compare(make_app(comparison), terminal_size=WIDE, run_before=steps(("b",)))

    def test_recorded_run_next_shape(self, snap_compare, make_app, comparison, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        comparison["bench"] = json.loads(RECORDED.read_text())
        assert snap_compare(
            make_app(comparison), terminal_size=WIDE, run_before=steps(("b",), ("right_square_bracket",))
        )


class TestSweep:
    def test_heatmap(self, snap_compare):
        assert snap_compare(SweepApp(make_sweep_result()), terminal_size=WIDE, run_before=steps())

    def test_small_terminal(self, snap_compare):
        assert snap_compare(SweepApp(make_sweep_result()), terminal_size=SMALL, run_before=steps())
