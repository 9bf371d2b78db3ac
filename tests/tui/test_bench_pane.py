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


def _profiled_result() -> dict:
    """A bench result with per-kernel rows and Nsight Compute sides (as cutediff bench --profile writes)."""
    result = json.loads(RECORDED.read_text())
    row = result["shapes"][0]
    row["kernels"] = [
        {"kernel": "FlashAttentionForwardSm100", "launches": {"a": 1, "b": 1}, **{k: row[k] for k in ("a", "b")},
         "ratio": 1.031, "ci_low": 1.024, "ci_high": 1.039, "verdict": "SLOWER"},
    ]  # fmt: skip
    result["profile"] = {
        "sides": {
            "a": {"kernels": {"FlashAttentionForwardSm100": {"local_gbps": 0.0, "registers": 128, "occupancy_pct": 12.4}}},
            "b": {
                "kernels": {
                    "FlashAttentionForwardSm100": {
                        "local_gbps": 1.2, "registers": 128, "occupancy_pct": 12.1,
                        "top_stalls": [["long_scoreboard", 3.2]],
                    }
                },
                "spills": {
                    "FlashAttentionForwardSm100": {
                        "sites": [{"address": "0x1", "sass": "STL [R1+0x6c], R3", "executed": 4096, "offset": 26160}],
                        "ldl_executed": 0, "stl_executed": 4096,
                    }
                },
            },
        }
    }  # fmt: skip
    from cutediff_tui.core.bench.explain import explain

    result["verdicts"] = explain(result)
    row["host_ms"] = {"a": 1.151, "b": 1.149}
    result["remote"] = {"scheduler": "tcp://10.0.0.7:8786", "host": "gpu-box"}
    return result


async def test_per_kernel_rows_profile_and_spill_counts_are_shown(make_app, comparison):
    from cutediff_tui.core.bench.attach import annotate_spill_sites

    result = _profiled_result()
    comparison["bench"] = result
    kernel = next(k for k in comparison["kernels"] if k["name"] == "FlashAttentionForwardSm100")
    kernel["b"]["spill_sites"][0]["addr"] = 26160  # the recorded sample's first B site sits there
    assert annotate_spill_sites(comparison, result) == 1
    app = make_app(comparison, gpu_probe=None)
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        text = _text(app)
        assert "per kernel (CUPTI)" in text and "FlashAttentionForwardSm100" in text and "SLOWER" in text
        assert "0 → 1.2 GB/s" in text and "long_scoreboard 3.2" in text
        assert "side B FlashAttentionForwardSm100 STL" in text and "executed 4,096" in text
        assert "the slowdown comes with more spill traffic on side B" in text
        assert "on Dask worker gpu-box (tcp://10.0.0.7:8786)" in text and "8192x32h/4 1.151/1.149" in text


def test_spill_instructions_show_their_execution_counts_in_the_sass_pane(comparison):
    from cutediff_tui.core.bench.attach import annotate_spill_sites
    from cutediff_tui.ui.model import build_sass

    result = _profiled_result()
    kernel = next(k for k in comparison["kernels"] if k["name"] == "FlashAttentionForwardSm100")
    kernel["b"]["spill_sites"][0]["addr"] = 26160
    assert annotate_spill_sites(comparison, result) == 1
    pane = build_sass(comparison, kernel)
    shown = [ln.text for ln in pane.b.lines if "executed" in ln.text]
    assert len(shown) == 1 and shown[0].endswith("// executed 4,096x (ncu)") and "STL" in shown[0]
    assert not any("executed" in ln.text for ln in pane.a.lines)
