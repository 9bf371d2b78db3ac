"""The sweep heatmap screen (``cutediff sweep --tui``)."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import DataTable, Static

from cutediff_tui.ui.screens.sweep import SweepApp, SweepScreen, sweep_figures

from .conftest import settle

TOOLCHAINS = ["4.5.1", "4.6.3", "4.8.0"]
#: spill_store_bytes per toolchain for (sm_90a 64, sm_90a 128, sm_100a 64, sm_100a 128); None: the cell failed.
SPILLS = {"4.5.1": [0, 0, 0, 0], "4.6.3": [0, 64, 128, None], "4.8.0": [0, 176, 352, 1024]}
PLACES = [("sm_90a", 64), ("sm_90a", 128), ("sm_100a", 64), ("sm_100a", 128)]


def make_result() -> dict:
    """12 cells: 3 toolchains × 2 archs × 2 hdims, one failed."""
    cells = []
    for t, side in enumerate(TOOLCHAINS):
        for i, (arch, hdim) in enumerate(PLACES):
            spill = SPILLS[side][i]
            kernel = "FlashAttentionForwardSm90" if arch == "sm_90a" else "FlashAttentionForwardSm100"
            figures = {
                "registers": 160 + 8 * i + t,
                "stack_bytes": spill or 0,
                "spill_store_bytes": spill or 0,
                "spill_load_bytes": spill or 0,
                "stl": (spill or 0) // 16,
                "ldl": (spill or 0) // 16,
                "instructions": 5000 + hdim,
                "mufu": 398,
                "UTCHMMA": 64 if arch == "sm_100a" else 0,
                "MUFU": 398,
            }
            failed = spill is None
            cells.append(
                {
                    "key": f"{side}-{arch}-{hdim}",
                    "side": side,
                    "toolchain": f"{side} [flash-attn-4==4.0.0b16]",
                    "dsl": side,
                    "arch": arch,
                    "gpu": "h100" if arch == "sm_90a" else "b200",
                    "params": {"hdim": hdim},
                    "axis": {"arch": arch, "hdim": hdim},
                    "host": "worker-1",
                    "status": "failed" if failed else "ok",
                    "why": f"DSL {side} cannot build for {arch}: the tcgen05 ops are missing." if failed else None,
                    "kernels": [] if failed else [{"name": kernel, "symbol": f"kernel_{kernel}_0", "figures": figures}],
                    "seconds": 12.3 + i,
                    "from_cache": i == 0,
                }
            )
    return {
        "schema": "cutediff.sweep/1",
        "command": "cutediff sweep 4.5.1 4.6.3 4.8.0 --kernel fa4-fwd",
        "recipe": {"name": "fa4-fwd"},
        "figure": "spill_store_bytes",
        "kernel_filter": None,
        "axes": {"arch": ["sm_90a", "sm_100a"], "hdim": [64, 128]},
        "toolchains": TOOLCHAINS,
        "executor": {"kind": "dask", "workers": 2, "address": "tcp://10.0.0.5:8786"},
        "created": "2026-12-02T20:00:00+0000",
        "cells": cells,
        "timing": {"wall_seconds": 80.1, "cells": 12, "resumed": 0, "cached_builds": 3},
    }


def _static(screen: SweepScreen, ident: str) -> str:
    return str(screen.query_one(ident, Static).render())


def test_figures_start_with_the_sweeps_own():
    figs = sweep_figures(make_result())
    assert figs[0] == "spill_store_bytes" and len(figs) == len(set(figs))
    assert {"registers", "stack_bytes", "mufu", "UTCHMMA", "MUFU"} <= set(figs)


async def test_opens_with_values_and_header():
    app = SweepApp(make_result())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 3 and len(table.columns) == 5
        lines = screen.text().splitlines()
        assert [line.split()[0] for line in lines] == TOOLCHAINS
        assert [line.split()[-4:] for line in lines] == [
            ["0", "0", "0", "0"],
            ["0", "64", "128", "—"],
            ["0", "176", "352", "1024"],
        ]
        head = _static(screen, "#sweep-head")
        assert "fa4-fwd" in head and "spill_store_bytes" in head and "dask · 2 workers" in head
        assert "12 cells in 80.1 s" in head and "1 failed" in head and "min 0" in head
        # different values, different backgrounds; 0 and the failed cell carry none
        cells = [table.get_cell_at((2, k)) for k in (2, 3, 4)]
        backgrounds = {Style.parse(c.style).bgcolor for c in cells}
        assert len(backgrounds) == 3 and None not in backgrounds
        assert Style.parse(table.get_cell_at((2, 1)).style).bgcolor is None
        assert table.get_cell_at((1, 4)).plain.strip() == "—"


async def test_moving_shows_the_cell_and_its_why():
    app = SweepApp(make_result())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("down", "down", "right", "right", "right")
        await settle(pilot)
        info = _static(screen, "#sweep-cell")
        assert "4.8.0" in info and "sm_100a hdim=128" in info and "spill_store_bytes = 1024" in info
        assert "FlashAttentionForwardSm100" in info and "15.3 s" in info and "worker-1" in info
        await pilot.press("up")
        await settle(pilot)
        assert "tcgen05 ops are missing" in _static(screen, "#sweep-cell")


async def test_f_cycles_the_figure():
    app = SweepApp(make_result())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        before = screen.text()
        await pilot.press("f")
        await settle(pilot)
        assert screen.figure == screen.figures[1] != "spill_store_bytes"
        assert screen.text() != before and screen.figure in _static(screen, "#sweep-head")
        for _ in range(len(screen.figures) - 1):
            await pilot.press("f")
        await settle(pilot)
        assert screen.figure == "spill_store_bytes" and screen.text() == before
        await pilot.press("F")
        await settle(pilot)
        assert screen.figure == screen.figures[-1]


async def test_colours_follow_the_theme():
    app = SweepApp(make_result())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        dark = Style.parse(table.get_cell_at((2, 4)).style).bgcolor
        app.theme = "cutediff-light"
        await settle(pilot)
        assert Style.parse(table.get_cell_at((2, 4)).style).bgcolor != dark


async def test_escape_quits_the_standalone_app():
    app = SweepApp(make_result())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.return_code is None
        await pilot.press("escape")
        await pilot.pause()
        assert app.return_code == 0


def test_snapshot(snap_compare):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("down", "right", "right")
        await settle(pilot)

    assert snap_compare(SweepApp(make_result()), terminal_size=(110, 24), run_before=run_before)


async def test_the_real_sweep_sample():
    """samples/sweeps: FA4 fwd from a real Dask sweep (3 DSL versions × sm_100a/sm_103a × hdim 64/128)."""
    import json

    from cutediff_tui.cli.tui import sweep_or_bisect
    from cutediff_tui.core.paths import project_root

    path = project_root() / "samples" / "sweeps" / "fa4-fwd-sm100a-sm103a.json"
    assert sweep_or_bisect(path)["schema"] == "cutediff.sweep/1"  # `cutediff open` shows it as a heatmap
    app = SweepApp(json.loads(path.read_text()))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        lines = app.screen.text().splitlines()
        assert [line.split()[0] for line in lines] == ["4.5.1", "4.5.3", "4.8.0"]
        assert lines[2].split()[-4:] == ["0", "0", "0", "176"]
        assert lines[1].split()[-4:] == ["0", "16", "0", "16"]
