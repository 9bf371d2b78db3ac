"""The help screen: every key of the app, from the bindings themselves, and the gutter legend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.code_pane import GUTTER_LEGEND

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["HelpScreen", "binding_rows"]

_LEGEND_TITLE = "gutter marks"


def binding_rows(app: App, bindings: list[Binding]) -> list[tuple[str, str, str]]:
    """(keys, description, tooltip) for each binding, keys shown as typed."""
    rows = []
    seen: set[str] = set()
    for b in bindings:
        key = b.id or b.action
        if key in seen:
            continue
        seen.add(key)
        keys = " ".join(app.get_key_display(Binding(k.strip(), b.action)) for k in b.key.split(","))
        rows.append((keys, b.description or b.action, b.tooltip or ""))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists every binding with its description and tooltip.

    | key              | action                 |
    |------------------|------------------------|
    | escape, ?, q     | close                  |
    | j / k, ↓ / ↑     | scroll a line          |
    | ctrl+d / ctrl+u  | scroll half a page     |
    | g / G            | top / bottom           |
    """

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        /* opaque: a see-through modal re-renders the whole main screen, tinted, under every frame */
        background: $background;
        & > #help {
            width: 100;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            background: $surface;
            border: round $primary;
            border-title-color: $foreground;
            border-subtitle-color: $text-muted;
            padding: 0 1;
        }
        & VerticalScroll { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
        & #help-body { height: auto; }
    }
    """

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close", tooltip="Close the help screen"),
        Binding("j,down", "scroll(1)", "Down", show=False, id="help.down", tooltip="Scroll down a line"),
        Binding("k,up", "scroll(-1)", "Up", show=False, id="help.up", tooltip="Scroll up a line"),
        Binding("ctrl+d,pagedown", "half_page(1)", "Half page down", show=False, id="help.half-page-down"),
        Binding("ctrl+u,pageup", "half_page(-1)", "Half page up", show=False, id="help.half-page-up"),
        Binding("g,home", "edge('top')", "Top", show=False, id="help.top", tooltip="Scroll to the top"),
        Binding("G,end", "edge('bottom')", "Bottom", show=False, id="help.bottom", tooltip="Scroll to the bottom"),
    ]

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups
        self.rows: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        # One widget drawing Rich tables: a widget per cell (about 200) took 0.6-0.8 s to open and
        # 0.2 s to close on the sample (benchmarks/bench_big_listing.py, `?` while loading).
        with Vertical(id="help") as box:
            box.border_title = "cutediff keys"
            box.border_subtitle = "esc closes · j/k ctrl+d/u scroll · ctrl+p: command palette"
            with VerticalScroll(id="help-scroll"):
                yield Static(self.body(), id="help-body")

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._restyle, init=False)

    def _restyle(self) -> None:
        self.query_one("#help-body", Static).update(self.body())

    def body(self) -> Group:
        """The legend and every group of keys, styled with the theme's accent and muted colours."""
        v = self.app.get_css_variables()
        surface = Color.parse(v.get("surface", "#000000"))
        accent = Color.parse(v.get("accent", "#ffa62b")).rich_color
        muted = surface.blend(Color.parse(v.get("foreground", "#e0e0e0")), 0.6).rich_color
        title = Style(color=accent, bold=True)
        keys, desc, tip = Style(color=accent, bold=True), Style(bold=True), Style(color=muted)
        parts: list = [Text(_LEGEND_TITLE, style=title)]
        legend = Table.grid(expand=True)
        legend.add_column(width=14, style=keys)
        legend.add_column(ratio=1, style=tip)
        for mark, meaning in GUTTER_LEGEND:
            legend.add_row(Text(mark), Text(meaning))
        parts.append(legend)
        self.rows = []
        for name, bindings in self.groups:
            rows = binding_rows(self.app, bindings)
            self.rows.extend(rows)
            table = Table.grid(expand=True)
            table.add_column(width=14, style=keys)
            table.add_column(width=18, style=desc)
            table.add_column(ratio=1, style=tip)
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))
            parts += [Text(""), Text(name, style=title), table]
        return Group(*parts)

    def action_close(self) -> None:
        self.dismiss(None)

    @property
    def scroller(self) -> VerticalScroll:
        return self.query_one("#help-scroll", VerticalScroll)

    def action_scroll(self, lines: int) -> None:
        self.scroller.scroll_relative(y=lines, animate=False)

    def action_half_page(self, direction: int) -> None:
        self.scroller.scroll_relative(y=direction * max(1, self.scroller.size.height // 2), animate=False)

    def action_edge(self, where: str) -> None:
        if where == "top":
            self.scroller.scroll_home(animate=False)
        else:
            self.scroller.scroll_end(animate=False)

    def legend_text(self) -> str:
        """The gutter legend as plain text (for tests)."""
        return "\n".join(f"{mark} {meaning}" for mark, meaning in GUTTER_LEGEND)

    def text(self) -> str:
        """All rows as plain text (for tests)."""
        return "\n".join(f"{k} {d} {t}" for k, d, t in self.rows)
