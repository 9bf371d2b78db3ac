"""The TUI on a result with 50,000 kernels and absurd names (issue 16, case 6).

The comparison is made here from synthetic disassembly (tests/faults/test_ui_faults.py); every
kernel shares one small listing, so the cost measured is the kernel list's, not the analysis's.
Measured here (2 shared cores): first paint about 4 s (17.7 s with the OptionList that laid out
every kernel first), ten ``]`` presses about 3 s, as with 20 kernels.
"""

from __future__ import annotations

import asyncio
import time

from cutediff_tui.ui.widgets.kernel_list import VirtualKernelList

from .test_ui_faults import _app, synthetic_comparison


def _many(tmp_path, n: int, long_name: str | None = None) -> dict:
    c = synthetic_comparison(tmp_path, 200)
    k = c["kernels"][0]
    c["kernels"] = [dict(k, name=f"Kernel{i:05d}") for i in range(n)]
    if long_name is not None:
        c["kernels"][0]["name"] = long_name
    return c


def test_fifty_thousand_kernels_open_and_move_quickly(tmp_path):
    comparison = _many(tmp_path, 50_000)
    timings: dict[str, float] = {}

    async def go() -> None:
        t0 = time.perf_counter()
        app = _app(comparison)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            timings["first paint"] = time.perf_counter() - t0
            screen = app.screen
            kl = screen.query_one("#kernels")
            assert isinstance(kl, VirtualKernelList)
            t0 = time.perf_counter()
            for _ in range(10):
                await pilot.press("right_square_bracket")
            await pilot.pause()
            timings["10 x ]"] = time.perf_counter() - t0
            assert screen.kernel_index == 10 and kl.highlighted == 10
            kl.focus()
            await pilot.press("end")
            await pilot.pause()
            assert screen.kernel_index == 49_999
            assert "Kernel49999" in kl.render_line(kl.scrollable_content_region.height - 1).text

    asyncio.run(go())
    # What keeps this fast on any machine is the virtual list (asserted above: it draws the rows in
    # view, not 50,000 widgets); the times (~4 s and ~3 s here, before it ~18 s) vary by several
    # times on two shared cores under the whole suite, so they are printed, not asserted (issue 36).
    print(f"50,000 kernels (s): { {k: round(v, 2) for k, v in timings.items()} }")


def test_absurd_kernel_names_are_truncated_on_screen(tmp_path):
    name = "Huge" + "x" * 1_000_000
    comparison = _many(tmp_path, 3, long_name=name)

    async def go() -> None:
        app = _app(comparison)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            kl = app.screen.query_one("#kernels")
            row = str(kl.get_option_at_index(0).prompt)
            assert row.startswith("Huge") and len(row) < 200 and "characters)" in row
            t0 = time.perf_counter()
            await pilot.press("q")
            await pilot.pause()
            assert time.perf_counter() - t0 < 5

    asyncio.run(go())
