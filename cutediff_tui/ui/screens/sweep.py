"""The sweep heatmap: one figure of a ``cutediff.sweep/1`` result, toolchains × (arch, parameters).

| key         | action                                  |
|-------------|-----------------------------------------|
| f / F       | next / previous figure                  |
| arrows      | move between cells (details below)      |
| escape, q   | close (quit in ``cutediff sweep --tui``) |
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from cutediff_tui.core.report.sweep_html import (
    cells_by_place,
    executor_text,
    heat,
    ink_for,
    ramp_color,
    span,
    timing_text,
)
from cutediff_tui.core.sweep import Grid, figures_in, grid, recipe_name

from ..settings import load_settings
from ..themes import DEFAULT_THEME, domain_defaults, load_themes

__all__ = ["SweepApp", "SweepScreen", "sweep_figures"]


def sweep_figures(result: dict) -> list[str]:
    """The figures ``f`` cycles through: the sweep's own first, then :func:`figures_in`."""
    own = result.get("figure") or "spill_store_bytes"
    return [own, *(f for f in figures_in(result) if f != own)]


class SweepScreen(Screen[None]):
    """A heatmap of one figure over a sweep; ``f`` shows the next figure."""

    DEFAULT_CSS = """
    SweepScreen {
        layout: vertical;
        background: $background;
        & #sweep-head { height: auto; padding: 0 1; background: $surface; }
        & #sweep-heat { height: 1fr; margin: 1 1 0 1; }
        & #sweep-cell { height: auto; min-height: 2; padding: 0 1; background: $surface;
                        border-top: solid $panel-lighten-1; }
    }
    """

    BINDINGS = [
        Binding("f", "figure(1)", "Next figure", id="sweep.next_figure", tooltip="Show the next figure of the sweep"),
        Binding(
            "F",
            "figure(-1)",
            "Previous figure",
            id="sweep.prev_figure",
            tooltip="Show the previous figure of the sweep",
        ),
        Binding("escape,q", "close", "Close", id="sweep.close", tooltip="Close the sweep heatmap"),
    ]

    def __init__(self, result: dict, figure: str | None = None, kernel_filter: str | None = None) -> None:
        """Show ``result`` (a ``cutediff.sweep/1`` dict) by ``figure`` (default: the sweep's own)."""
        super().__init__()
        self.result = result
        self.kernel_filter = kernel_filter
        self.figures = sweep_figures(result)
        if figure and figure not in self.figures:
            self.figures.insert(0, figure)
        self.figure_index = self.figures.index(figure) if figure else 0
        self.grid: Grid = grid(result, self.figure, kernel_filter)
        self.cells = cells_by_place(self.grid)

    @property
    def figure(self) -> str:
        return self.figures[self.figure_index]

    def compose(self) -> ComposeResult:
        yield Static(id="sweep-head")
        yield DataTable(
            id="sweep-heat", cursor_type="cell", cell_padding=0, fixed_columns=1, cursor_background_priority="css"
        )
        yield Static(id="sweep-cell")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()
        self.watch(self.app, "theme", lambda _theme: self.refresh_view(), init=False)

    # ------------------------------------------------------------------ drawing

    def _ramp(self) -> tuple[str, ...]:
        """Theme colours of the ramp: a faint warning, warning, regression."""
        v = self.app.get_css_variables()
        bg, warn = Color.parse(v.get("background", "#000000")), Color.parse(v.get("warning", "#e0af68"))
        reg = Color.parse(v.get("regression", v.get("error", "#f7768e")))
        return bg.blend(warn, 0.35).hex6, warn.hex6, reg.hex6

    def _cell_text(self, value: float | None, lo: float, hi: float, ramp: tuple[str, ...]) -> Text:
        if value is None:
            return Text(" — ", style="dim", justify="center")
        t = heat(value, lo, hi)
        if t is None:
            return Text(f" {value} ", style="dim", justify="right")
        bg = ramp_color(t, ramp)
        return Text(f" {value} ", style=f"bold {ink_for(bg)} on {bg}", justify="right")

    def _head(self, ramp: tuple[str, ...]) -> Content:
        res, g = self.result, self.grid
        recipe = recipe_name(res)
        failed = sum(1 for c in res.get("cells", []) if c.get("status") != "ok")
        parts: list = [
            ("sweep ", "bold"),
            (recipe, "bold $accent"),
            " · figure ",
            (g.figure, "bold"),
            (f" ({self.figure_index + 1}/{len(self.figures)}, f: next)", "$text-muted"),
            " · ",
            executor_text(res),
            "\n",
            timing_text(res),
        ]
        if failed:
            parts += [" · ", (f"{failed} failed", "bold $regression")]
        parts.append("\n")
        if g.finite:
            lo, hi = span(g)
            bar = [("█", ramp_color(i / 11, ramp)) for i in range(12)]
            parts += [
                ("min ", "$text-muted"),
                str(lo),
                " ",
                *bar,
                (" max ", "$text-muted"),
                str(hi),
                ("  · 0: plain · —: no value", "$text-muted"),
            ]
        else:
            parts.append(("No cell has a value for this figure.", "$text-muted"))
        return Content.assemble(*parts)

    def refresh_view(self) -> None:
        """Redraw the header and the table for the current figure, keeping the cursor."""
        g = self.grid = grid(self.result, self.figure, self.kernel_filter)
        self.cells = cells_by_place(g)
        ramp = self._ramp()
        self.query_one("#sweep-head", Static).update(self._head(ramp))
        table = self.query_one("#sweep-heat", DataTable)
        cursor = table.cursor_coordinate
        table.clear(columns=True)
        two = any(" " in c for c in g.cols)
        table.header_height = 2 if two else 1
        table.add_column(Text(" toolchain ", style="bold"), key="toolchain")
        for c in g.cols:
            table.add_column(Text(" " + c.replace(" ", " \n ", 1) + " ", justify="right"), key=c)
        lo, hi = span(g)
        for r, row in enumerate(g.rows):
            table.add_row(Text(f" {row} "), *(self._cell_text(v, lo, hi, ramp) for v in g.values[r]), key=row)
        if g.rows and g.cols:
            table.cursor_coordinate = cursor if cursor.column > 0 else cursor._replace(column=1)
        self.show_cell(table.cursor_coordinate.row, table.cursor_coordinate.column - 1)

    def show_cell(self, r: int, k: int) -> None:
        """Details of cell (row ``r``, column ``k``) in the line under the table."""
        out = self.query_one("#sweep-cell", Static)
        g = self.grid
        if not (0 <= r < len(g.rows) and 0 <= k < len(g.cols)):
            out.update(Content.styled("Move to a cell to see where its value comes from.", "$text-muted"))
            return
        cell = self.cells.get((r, k)) or {}
        v = g.values[r][k]
        parts: list = [(cell.get("toolchain") or g.rows[r], "bold"), " · ", (g.cols[k], "bold"), ": "]
        if v is None:
            failed = cell.get("status") not in (None, "ok")
            parts.append((g.notes[r][k] or "no value", "$regression" if failed else "$text-muted"))
        else:
            parts += [f"{g.figure} = ", (str(v), "bold"), " from ", (g.kernels[r][k], "$accent")]
        where = []
        if cell.get("seconds") is not None:
            where.append(f"{cell['seconds']:.1f} s" + (" (cached build)" if cell.get("from_cache") else ""))
        if cell.get("resumed"):
            where.append("resumed")
        if cell.get("host"):
            where.append(f"on {cell['host']}")
        if where:
            parts += ["\n", (" · ".join(where), "$text-muted")]
        out.update(Content.assemble(*parts))

    # ------------------------------------------------------------------ events and actions

    @on(DataTable.CellHighlighted)
    @on(DataTable.CellSelected)
    def _cell_moved(self, event: DataTable.CellHighlighted | DataTable.CellSelected) -> None:
        self.show_cell(event.coordinate.row, event.coordinate.column - 1)

    def action_figure(self, step: int) -> None:
        self.figure_index = (self.figure_index + step) % len(self.figures)
        self.refresh_view()

    def action_close(self) -> None:
        self.dismiss(None)

    def text(self) -> str:
        """The table as plain text, a line per toolchain (for tests)."""
        g = self.grid
        return "\n".join(
            " ".join([row, *("—" if v is None else str(v) for v in g.values[r])]) for r, row in enumerate(g.rows)
        )


class SweepApp(App[None]):
    """Just the sweep heatmap (``cutediff sweep --tui``); closing it quits."""

    TITLE = "cutediff sweep"

    def __init__(self, result: dict, figure: str | None = None, kernel_filter: str | None = None) -> None:
        super().__init__()
        self.result = result
        self._figure = figure
        self._kernel_filter = kernel_filter
        for theme in load_themes().themes:
            self.register_theme(theme)
        wanted = load_settings().theme
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Domain variables ($regression...) for themes that do not define them."""
        return domain_defaults(self.current_theme)

    def on_mount(self) -> None:
        self.push_screen(SweepScreen(self.result, self._figure, self._kernel_filter), lambda _: self.exit())
