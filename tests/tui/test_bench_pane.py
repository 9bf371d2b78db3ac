"""The bench pane: honest without a GPU, shows a recorded bench, computes live statistics."""

from __future__ import annotations

import json
import random

from cutediff_tui.core.paths import project_root
from cutediff_tui.ui.screens.bench import BenchEvent, BenchScreen, BenchState

from .conftest import settle

RECORDED = project_root() / "benchmarks" / "results" / "h200" / "run3" / "bench.json"


def _text(app) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


async def test_no_gpu_says_why_and_the_rest_works(make_app):
    app = make_app(gpu_probe=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, BenchScreen)
        assert "No NVIDIA GPU was found" in _text(app)
        await pilot.press("r")  # refuses, with a notice; nothing starts
        await settle(pilot)
        assert app.screen.state is None
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, BenchScreen)
        await pilot.press("j")  # the main screen still answers


async def test_recorded_bench_is_shown(make_app, comparison):
    comparison["bench"] = json.loads(RECORDED.read_text())
    app = make_app(comparison, gpu_probe=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        text = _text(app)
        for label in ("8192x32h/4", "32768x32h/8", "32768x16h/1"):
            assert label in text
        assert "SAME" in text and "recorded" in text
        screen = app.screen
        await pilot.press("right_square_bracket")
        assert screen.shape_index == 1


async def test_live_events_update_the_table(make_app):
    app = make_app(gpu_probe={"name": "NVIDIA H200", "arch": "sm_90a"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        screen = app.screen
        screen.state = BenchState(["8192x32h/4"])
        rng = random.Random(0)
        for r in range(4):
            for side, base in (("a", 1.00), ("b", 1.05)):
                screen.post_message(
                    BenchEvent(
                        {
                            "event": "samples",
                            "side": side,
                            "shape": "8192x32h/4",
                            "round": r,
                            "ms": [base + rng.gauss(0, 0.002) for _ in range(20)],
                        }
                    )
                )
        await settle(pilot)
        (row,) = screen.state.rows()
        assert row["verdict"] == "SLOWER" and 1.04 < row["ratio"] < 1.06
        assert "SLOWER" in _text(app)


def test_bench_state_from_recorded_result():
    st = BenchState.from_result(json.loads(RECORDED.read_text()))
    rows = st.rows()
    assert [r["label"] for r in rows] == ["8192x32h/4", "32768x32h/8", "32768x16h/1"]
    assert all(r["a"]["n"] == 400 and r["verdict"] == "SAME" for r in rows)
