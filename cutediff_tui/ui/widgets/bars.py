"""Thin one-line bars: the view switcher with its status, and each pane's title."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from ..model import VIEW_TITLES, VIEWS

__all__ = ["ColumnHeader", "PaneTitle", "ViewBar"]


class ViewBar(Static):
    """``1 SASS  2 PTX  3 MLIR  4 ptxas log`` (click to switch) and a status on the right."""

    DEFAULT_CSS = """
    ViewBar {
        height: 1;
        width: 1fr;
        background: $surface-darken-1;
        color: $text-muted;
        link-style: none;
        link-color: $text-muted;
        link-background: $surface-darken-1 0%;
        link-style-hover: bold;
        link-color-hover: $foreground;
        link-background-hover: $panel;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = "sass"
        self.status = Content("")

    def show(self, view: str, status: Content | str = "") -> None:
        self.view = view
        self.status = status if isinstance(status, Content) else Content(status)
        self.update(self.build(), layout=False)  # one fixed line: no layout pass on cursor moves

    def on_resize(self) -> None:
        self.update(self.build(), layout=False)

    def build(self) -> Content:
        parts: list = []
        for n, v in enumerate(VIEWS, 1):
            label = f" {n} {VIEW_TITLES[v]} "
            style = "bold $foreground on $panel" if v == self.view else "$text-muted"
            parts.append(Content.from_markup(f"[@click=screen.view('{v}')]$label[/]", label=label).stylize(style))
        left = Content.assemble(*parts)
        right = self.status
        pad = max(1, self.size.width - left.cell_length - right.cell_length - 1)
        return Content.assemble(left, " " * pad, right, " ")


class PaneTitle(Static):
    """``A  DSL 4.5.1 · 5,680 instructions · 0 spills   addr 0x6630``."""

    DEFAULT_CSS = """
    PaneTitle {
        height: 1;
        width: 1fr;
        background: $surface;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    PaneTitle.-active { background: $panel; }
    """

    def __init__(self, side: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.side = side
        self.label = ""
        self.caption = ""
        self.where = ""
        self.spills = 0
        self.busy = ""
        """The watch's word on this side ("⟳ compiling…", "⚠ previous save: B failed"), or ""."""
        self.busy_style = "bold $text-accent"
        self._shown: Content | None = None

    def set_busy(self, text: str, style: str = "bold $text-accent") -> None:
        """Show (or clear, with "") the watch's word on this side in its title: a title keeps its
        height, so the listing below neither moves nor is laid out again on every save."""
        if (text, style) != (self.busy, self.busy_style):
            self.busy, self.busy_style = text, style
            self.show(self.label, self.caption, self.spills, self.where)

    def show(self, label: str, caption: str = "", spills: int = 0, where: str = "") -> None:
        self.label, self.caption, self.spills, self.where = label, caption, spills, where
        s = self.side
        parts: list = [(f" {s.upper()} ", f"bold $background on $side-{s}"), (f" {label}", f"bold $side-{s}")]
        if self.busy:
            parts.append((f"  {self.busy}", self.busy_style))
        if caption:
            parts.append((f" · {caption}", "$text-muted"))
        if spills:
            parts.append((f" · {spills} spills", "bold $spill"))
        if where:
            parts.append((f"  {where}", "$foreground"))
        content = Content.assemble(*parts)
        if content != self._shown:
            self._shown = content
            self.update(content, layout=False)


class ColumnHeader(Static):
    """The column names of a code pane (``  addr GPR SASS instruction``), scrolled with it."""

    DEFAULT_CSS = """
    ColumnHeader {
        height: 1;
        width: 1fr;
        background: $surface;
        color: $text-muted;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.text = ""
        self.scroll_x = 0

    def show(self, text: str, scroll_x: int = 0) -> None:
        if (text, scroll_x) != (self.text, self.scroll_x):
            self.text, self.scroll_x = text, scroll_x
            self.update(text[scroll_x:], layout=False)
