"""The code panes stay fast on a 100k-line listing: cached strips, two-line cursor repaints."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult

from cutediff_tui.ui.model import CodeLine, PaneModel, Row, RowHunk, SideLines
from cutediff_tui.ui.themes import domain_defaults
from cutediff_tui.ui.widgets.code_pane import CodePane

N = 100_000


def big_model() -> PaneModel:
    ops = [
        "IADD3 R{0}, PT, PT, R{1}, 0x{0:x}, RZ",
        "LDG.E R{0}, desc[UR4][R{1}.64]",
        "FFMA2 R{0}, R{1}, R2, R3",
        "STL [R1+0x{0:x}], R{1}",
    ]
    a = [
        CodeLine(
            ops[i % 4].format(i % 200, (i * 7) % 200),
            addr=16 * i,
            spill=i % 4 == 3,
            live=i % 160,
            opcode=ops[i % 4].split()[0],
        )
        for i in range(N)
    ]
    b = list(a)
    rows = [Row("same" if i % 50 else "regalloc", i, i) for i in range(N)]
    hunks = [RowHunk(i, i + 1, "regalloc") for i in range(0, N, 50)]
    return PaneModel("sass", "sass", SideLines(a), SideLines(b), rows, hunks, 99.0, has_live=True)


class PaneApp(App[None]):
    def __init__(self, model: PaneModel) -> None:
        super().__init__()
        self.model = model

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return domain_defaults(self.current_theme)  # the domain variables the pane's CSS uses

    def compose(self) -> ComposeResult:
        yield CodePane("b", id="pane")

    def on_mount(self) -> None:
        self.query_one(CodePane).set_model(self.model)


async def test_big_listing_cursor_moves_repaint_two_lines():
    t0 = time.perf_counter()
    model = big_model()
    build = time.perf_counter() - t0
    app = PaneApp(model)
    async with app.run_test(size=(100, 40)) as pilot:
        pane = app.query_one(CodePane)
        pane.focus()
        await pilot.pause()
        calls: list[int] = []
        original = pane._render_row

        def counting(row: int, is_cursor: bool):
            calls.append(row)
            return original(row, is_cursor)

        pane._render_row = counting  # type: ignore[method-assign]
        # a cursor move inside the view re-renders the old and the new cursor rows only
        pane.cursor = 5
        await pilot.pause()
        assert sorted(set(calls)) == [0, 5]
        # far jumps scroll; each frame renders at most a screenful
        calls.clear()
        t1 = time.perf_counter()
        for row in range(0, N, N // 50):
            pane.cursor = row
            await pilot.pause()
        elapsed = time.perf_counter() - t1
        assert pane.cursor == N - N // 50
        # what keeps far jumps fast on any machine: each renders a screenful, not the listing (the
        # time, printed here, is measured in benchmarks/bench_tui.py, not asserted: issue 36)
        assert len(calls) <= 50 * (pane.size.height + 2)
        print(f"50 far jumps: {elapsed:.2f} s")
        # the bottom of the listing renders like the top
        pane.cursor = N - 1
        await pilot.pause()
        assert f"{16 * (N - 1):x}" in pane.render_line(pane.cursor - round(pane.scroll_y)).text
    print(f"model of {N} rows built in {build:.2f} s")
