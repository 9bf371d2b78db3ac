"""One side of the side-by-side code view: a line-API ScrollView over aligned rows.

Lines are drawn by :meth:`CodePane.render_line` from the shared :class:`~..model.PaneModel`;
tokens come from the SASS/PTX lexers and rendered strips are kept in LRU caches, so a
100k-line listing scrolls as fast as a short one and a cursor move repaints two lines.

The pane has no keys of its own: navigation lives on the screen (see
:class:`~..screens.main.MainScreen`), so both panes move together. Clicking a row posts
:class:`CodePane.RowClicked`.

| gutter | meaning                                             |
|--------|-----------------------------------------------------|
| ``+``  | inserted in B                                       |
| ``-``  | deleted from A                                      |
| ``~``  | changed (opcode, modifiers or immediates)           |
| ``»``  | moved                                               |
| ``·``  | same up to register allocation                      |
| ``●``  | spill store/load (red when B gained it)             |
| ``╱``  | no counterpart row on this side                     |

:data:`GUTTER_LEGEND` holds the same table for the help screen; :meth:`CodePane.column_header`
names the columns (mark, address, live registers, text) for the header above the pane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from cutediff_tui.core.sanitize import visible

from ..lexers import lexer_for
from ..model import normalise_registers

if TYPE_CHECKING:
    from ..model import PaneModel

__all__ = ["GUTTER_LEGEND", "CodePane"]

#: (mark, meaning) of each gutter mark, for the help screen and the README.
GUTTER_LEGEND: tuple[tuple[str, str], ...] = (
    ("+", "inserted in B (no counterpart in A)"),
    ("-", "deleted from A (no counterpart in B)"),
    ("~", "changed: opcode, modifiers or immediates"),
    ("»", "moved: the same instruction elsewhere"),
    ("·", "same up to register allocation (o hides it)"),
    ("●", "spill store/load (STL/LDL); red when B gained it"),
    ("╱╱╱", "filler: the other side has a row here, this one has none"),
)

#: Header of the text column per view.
_TEXT_COLUMN = {"sass": "SASS instruction", "ptx": "PTX", "mlir": "MLIR", "log": "ptxas output"}

_TOKEN_CLASSES: tuple[tuple[str, str], ...] = (
    # (pygments token type prefix, component class), most specific first
    ("Token.Keyword.Declaration", "code-pane--directive"),
    ("Token.Keyword.Type", "code-pane--type"),
    ("Token.Keyword", "code-pane--opcode"),
    ("Token.Name.Attribute", "code-pane--modifier"),
    ("Token.Name.Variable", "code-pane--register"),
    ("Token.Name.Decorator", "code-pane--predicate"),
    ("Token.Name.Constant", "code-pane--constant"),
    ("Token.Name.Label", "code-pane--label"),
    ("Token.Name.Tag", "code-pane--tag"),
    ("Token.Name.Function", "code-pane--label"),
    ("Token.Name.Builtin", "code-pane--modifier"),
    ("Token.Literal.Number", "code-pane--immediate"),
    ("Token.Literal.String", "code-pane--constant"),
    ("Token.Comment", "code-pane--comment"),
)

_ROW_CLASS = {
    "inserted": "code-pane--added",
    "deleted": "code-pane--removed",
    "opcode": "code-pane--changed",
    "immediate": "code-pane--changed",
    "changed": "code-pane--changed",
    "moved": "code-pane--moved",
}
_GUTTER = {
    "inserted": ("+", "code-pane--mark-added"),
    "deleted": ("-", "code-pane--mark-removed"),
    "opcode": ("~", "code-pane--mark-changed"),
    "immediate": ("~", "code-pane--mark-changed"),
    "changed": ("~", "code-pane--mark-changed"),
    "moved": ("»", "code-pane--mark-moved"),
    "regalloc": ("·", "code-pane--dim"),
}


class CodePane(ScrollView, can_focus=True, inherit_bindings=False):
    """Side ``a`` or ``b`` of the current view."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "code-pane--opcode",
        "code-pane--modifier",
        "code-pane--register",
        "code-pane--predicate",
        "code-pane--constant",
        "code-pane--immediate",
        "code-pane--label",
        "code-pane--comment",
        "code-pane--directive",
        "code-pane--type",
        "code-pane--tag",
        "code-pane--dim",
        "code-pane--addr",
        "code-pane--live",
        "code-pane--added",
        "code-pane--removed",
        "code-pane--changed",
        "code-pane--moved",
        "code-pane--filler",
        "code-pane--cursor",
        "code-pane--selected",
        "code-pane--mark-added",
        "code-pane--mark-removed",
        "code-pane--mark-changed",
        "code-pane--mark-moved",
        "code-pane--spill",
        "code-pane--spill-new",
        "code-pane--note",
    }

    DEFAULT_CSS = """
    CodePane {
        background: $surface;
        color: $foreground;
        scrollbar-size: 1 1;
        scrollbar-background: $surface;
        scrollbar-color: $panel-lighten-2;
        &:focus { background-tint: $foreground 2%; }
        & > .code-pane--opcode { color: $code-opcode; }
        & > .code-pane--modifier { color: $code-modifier; }
        & > .code-pane--register { color: $code-register; }
        & > .code-pane--predicate { color: $code-predicate; }
        & > .code-pane--constant { color: $code-constant; }
        & > .code-pane--immediate { color: $code-immediate; }
        & > .code-pane--label { color: $code-label; }
        & > .code-pane--comment { color: $code-comment; text-style: italic; }
        & > .code-pane--directive { color: $code-directive; }
        & > .code-pane--type { color: $code-type; }
        & > .code-pane--tag { color: $code-tag; }
        & > .code-pane--dim { color: $code-dim; }
        & > .code-pane--addr { color: $code-dim; }
        & > .code-pane--live { color: $code-dim; }
        & > .code-pane--added { background: $diff-added 12%; }
        & > .code-pane--removed { background: $diff-removed 12%; }
        & > .code-pane--changed { background: $diff-changed 9%; }
        & > .code-pane--moved { background: $diff-moved 9%; }
        & > .code-pane--filler { color: $panel; background: $surface-darken-1; }
        & > .code-pane--selected { background: $accent 22%; }
        & > .code-pane--cursor { background: $primary 18%; }
        &:focus > .code-pane--cursor { background: $primary 38%; }
        & > .code-pane--mark-added { color: $diff-added; text-style: bold; }
        & > .code-pane--mark-removed { color: $diff-removed; text-style: bold; }
        & > .code-pane--mark-changed { color: $diff-changed; text-style: bold; }
        & > .code-pane--mark-moved { color: $diff-moved; text-style: bold; }
        & > .code-pane--spill { color: $spill; text-style: bold; }
        & > .code-pane--spill-new { color: $regression; text-style: bold; }
        & > .code-pane--note { color: $text-error; }
    }
    """

    cursor: reactive[int] = reactive(0, repaint=False)
    """Row of the cursor (shared with the other pane through the screen)."""
    normalised: reactive[bool] = reactive(False, repaint=False)
    """Show registers without their numbers."""
    selection: reactive[tuple[int, int] | None] = reactive(None, repaint=False)
    """First and last row of the selected rows (``v`` on the screen), or None."""

    @dataclass
    class RowClicked(Message):
        """A row was clicked."""

        pane: CodePane
        row: int

        @property
        def control(self) -> CodePane:
            return self.pane

    def __init__(
        self, side: str, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.side = side
        self.model: PaneModel | None = None
        self.message_text = "Loading…"
        self._lexer = lexer_for("text")
        self._tokens: LRUCache[tuple[int, bool], list[tuple[str, str | None]]] = LRUCache(4096)
        self._strips: LRUCache[tuple[int, bool], tuple[Strip, Style]] = LRUCache(1024)
        self._token_styles: dict[str, Style] = {}

    # ------------------------------------------------------------------ model

    def set_model(self, model: PaneModel | None, message: str = "") -> None:
        """Show ``model`` (None: show ``message`` instead)."""
        self.model = model
        self.message_text = message
        self._lexer = lexer_for(model.language if model else "text")
        self._clear_caches()
        self._update_virtual_size()
        self.refresh()

    @property
    def lines_here(self) -> int:
        """Number of lines of this side in the model."""
        return len(self.model.side(self.side).lines) if self.model else 0

    @property
    def note(self) -> str | None:
        """Why this side has no lines (a side error, a missing artifact)."""
        if self.model is None:
            return self.message_text or None
        return self.model.side(self.side).note

    def _gutter_width(self) -> int:
        m = self.model
        if m is None:
            return 0
        return 2 + m.addr_width + 1 + (4 if m.has_live else 0)

    def column_header(self) -> str:
        """Names of the columns as laid out by :meth:`render_line` (before horizontal scroll)."""
        m = self.model
        if m is None or (self.note and not self.lines_here):
            return ""
        addr = "addr" if m.addr_hex else "line"
        head = f"  {addr:>{m.addr_width}} " + (f"{'GPR':>3} " if m.has_live else "")
        return head + _TEXT_COLUMN.get(m.view, m.view)

    def _update_virtual_size(self) -> None:
        m = self.model
        if m is None or (self.note and not self.lines_here):
            self.virtual_size = Size(0, 0)
            return
        self.virtual_size = Size(self._gutter_width() + m.text_width + 1, len(m.rows))

    def _clear_caches(self) -> None:
        self._tokens.clear()
        self._strips.clear()
        self._token_styles.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._token_styles.clear()

    def on_resize(self) -> None:
        self._strips.clear()  # filler rows are drawn to the pane width

    def on_focus(self) -> None:
        self._strips.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._strips.clear()
        self.refresh()

    # ------------------------------------------------------------------ reactives

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_lines(old)
        self.refresh_lines(new)
        self.scroll_cursor_visible()

    def watch_selection(self) -> None:
        self._strips.clear()
        self.refresh()

    def watch_normalised(self) -> None:
        self._tokens.clear()
        self._strips.clear()
        self.refresh()

    def scroll_cursor_visible(self, animate: bool = False) -> None:
        """Scroll so the cursor row is visible with a little context around it."""
        h = self.scrollable_content_region.height
        if h <= 0:
            return
        y = self.cursor
        top = round(self.scroll_y)
        margin = min(3, max(0, (h - 1) // 2))
        if y < top + margin:
            self.scroll_to(y=max(0, y - margin), animate=animate, immediate=True)
        elif y >= top + h - margin:
            self.scroll_to(y=y - h + margin + 1, animate=animate, immediate=True)

    def center_on(self, row: int) -> None:
        """Scroll so ``row`` sits a third of the way down the pane."""
        h = self.scrollable_content_region.height
        self.scroll_to(y=max(0, row - h // 3), animate=False, immediate=True)

    # ------------------------------------------------------------------ mouse

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.model is None:
            return
        row = offset.y + round(self.scroll_y)
        if 0 <= row < len(self.model.rows):
            self.post_message(self.RowClicked(self, row))

    # ------------------------------------------------------------------ rendering

    def _style(self, *names: str) -> Style:
        return self.get_component_rich_style(*names)

    def _token_style(self, cls: str) -> Style:
        st = self._token_styles.get(cls)
        if st is None:
            st = self._token_styles[cls] = self.get_component_rich_style(cls, partial=True)
        return st

    def _tokenise(self, index: int) -> list[tuple[str, str | None]]:
        key = (index, self.normalised)
        cached = self._tokens.get(key)
        if cached is not None:
            return cached
        assert self.model is not None
        line = self.model.side(self.side).lines[index]
        text = visible(normalise_registers(line.text, self.model.language) if self.normalised else line.text)
        out: list[tuple[str, str | None]] = []
        for ttype, value in self._lexer.get_tokens(text):
            if not value:
                continue
            name = str(ttype)
            cls = None
            for prefix, c in _TOKEN_CLASSES:
                if name.startswith(prefix):
                    cls = c
                    break
            out.append((value, cls))
        self._tokens.set(key, out)
        return out

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        m = self.model
        if m is None or (self.note and not self.lines_here):
            return self._render_note(y, width, base)
        row = scroll_y + y
        if row >= len(m.rows):
            return Strip.blank(width, base)
        is_cursor = row == self.cursor
        key = (row, is_cursor)
        cached = self._strips.get(key)
        if cached is None:
            cached = self._render_row(row, is_cursor)
            self._strips.set(key, cached)
        strip, bg = cached
        return strip.crop_extend(scroll_x, scroll_x + width, bg)

    def _render_note(self, y: int, width: int, base: Style) -> Strip:
        note = self.note or ""
        lines = _wrap(note, max(10, width - 2))
        if 0 < y <= len(lines):
            style = self._style("code-pane--note") if self.model is not None else self._style("code-pane--dim")
            return Strip([Segment(" " + lines[y - 1], style)]).extend_cell_length(width, base)
        return Strip.blank(width, base)

    def _render_row(self, row: int, is_cursor: bool) -> tuple[Strip, Style]:
        m = self.model
        assert m is not None
        r = m.rows[row]
        index = r.index(self.side)
        kind = r.kind
        if m.language not in ("sass", "ptx") and kind == "regalloc":
            kind = "changed"
        if self.normalised and kind == "regalloc":
            kind = "same"
        if index is None:
            return self._render_filler(is_cursor)
        line = m.side(self.side).lines[index]
        row_class = _ROW_CLASS.get(kind)
        if (kind == "inserted" and self.side == "a") or (kind == "deleted" and self.side == "b"):
            row_class = None
        names = [row_class] if row_class else []
        sel = self.selection
        if sel is not None and sel[0] <= row <= sel[1]:
            names.append("code-pane--selected")
        if is_cursor:
            names.append("code-pane--cursor")
        row_style = self._style(*names) if names else self.rich_style
        segs: list[Segment] = []
        # gutter: change mark, or the spill mark which matters more
        if line.spill:
            new = self.side == "b" and kind in ("inserted", "opcode", "changed", "immediate", "moved")
            mark, mark_cls = "●", ("code-pane--spill-new" if new else "code-pane--spill")
        else:
            mark, mark_cls = _GUTTER.get(kind, (" ", "code-pane--dim"))
        segs.append(Segment(mark + " ", row_style + self._token_style(mark_cls)))
        if line.addr is None:
            addr = ""
        else:
            addr = f"{line.addr:0{m.addr_width}x}" if m.addr_hex else f"{line.addr:>{m.addr_width}}"
        segs.append(Segment(f"{addr:>{m.addr_width}} ", row_style + self._token_style("code-pane--addr")))
        if m.has_live:
            live = "" if line.live is None else str(line.live)
            segs.append(Segment(f"{live:>3} ", row_style + self._token_style("code-pane--live")))
        spill_style = self._token_style("code-pane--spill") if line.spill else None
        for value, cls in self._tokenise(index):
            st = row_style
            if cls:
                st = st + self._token_style(cls)
            if spill_style is not None and cls == "code-pane--opcode":
                st = st + spill_style
            segs.append(Segment(value, st))
        return Strip(segs), row_style

    def _render_filler(self, is_cursor: bool) -> tuple[Strip, Style]:
        names = ["code-pane--filler"] + (["code-pane--cursor"] if is_cursor else [])
        style = self._style(*names)
        w = max(self.virtual_size.width, self.scrollable_content_region.width)
        return Strip([Segment("╱" * w, style)]), style


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    out: list[str] = []
    for para in text.splitlines() or [""]:
        out.extend(textwrap.wrap(para, width) or [""])
    return out
