"""The Python source behind the instruction under the cursor.

Shows the line with a few lines of context when the file is on this machine (found as
:mod:`..sources` explains), else ``file:line`` and a sentence saying the source is not
here. Inlined-at frames are listed under the excerpt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pygments.token import Comment, Keyword, Name, Number, Operator, String
from textual.content import Content
from textual.widgets import Static

from ..lexers import lexer_for
from ..sources import display_path, read_lines, resolve_source

if TYPE_CHECKING:
    from ..model import CodeLine

__all__ = ["SourcePane", "highlight_python"]

_PY_STYLES = (
    (Keyword, "$code-opcode"),
    (Name.Decorator, "$code-predicate"),
    (Name.Function, "$code-label"),
    (Name.Class, "$code-label"),
    (Name.Builtin, "$code-modifier"),
    (String, "$code-constant"),
    (Number, "$code-immediate"),
    (Comment, "italic $code-comment"),
    (Operator.Word, "$code-opcode"),
)


def _py_style(ttype) -> str:
    for t, style in _PY_STYLES:
        if ttype in t:
            return style
    return ""


def highlight_python(lines: list[str]) -> list[Content]:
    """Highlight consecutive source lines (one Content per line) with theme variables."""
    lexer = lexer_for("python")
    out: list[list] = [[]]
    for ttype, value in lexer.get_tokens("\n".join(lines)):
        style = _py_style(ttype)
        chunks = value.split("\n")
        for k, chunk in enumerate(chunks):
            if k:
                out.append([])
            if chunk:
                out[-1].append((chunk.expandtabs(4), style))
    while len(out) < len(lines):
        out.append([])
    return [Content.assemble(*parts) for parts in out[: len(lines)]]


class SourcePane(Static):
    """Source line of the instruction under the cursor (side given by the focused pane)."""

    DEFAULT_CSS = """
    SourcePane {
        height: 10;
        width: 1fr;
        background: $surface;
        border-top: solid $panel-lighten-1;
        border-title-color: $text-muted;
        border-title-align: left;
        padding: 0 1;
        overflow: hidden;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, comparison: dict, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.comparison = comparison
        self.file: str | None = None
        self.line: int | None = None
        self.found: bool = False
        self.side = "b"
        self._key: tuple | None = None
        self._last: tuple[str, CodeLine | None, dict | None] | None = None

    def show(self, side: str, code: CodeLine | None, known: dict | None = None) -> None:
        """Show the source behind ``code`` (an instruction of side ``side``).

        ``known``: the kernel's ``sources`` map (line-info path -> local copy).
        """
        self._last = (side, code, known)
        where = (code.file, code.line, code.chain) if code else (None, None, ())
        key = (side, id(known), where, self.size.height)
        if key == self._key:
            return
        self._key = key
        self.side = side
        tag = Content.assemble((f" {side.upper()} ", f"bold $background on $side-{side}"))
        if code is None or not code.file or not code.line:
            self.file = self.line = None
            self.found = False
            self.border_title = Content.assemble("source ", tag)
            self.update(
                Content.styled(
                    "No line info for this line (compile with line info to see the Python behind each instruction).",
                    "$text-muted",
                ),
                layout=False,
            )
            return
        ref = resolve_source(code.file, code.line, self.comparison, side, known)
        self.file, self.line, self.found = code.file, code.line, ref.path is not None
        self.border_title = Content.assemble("source ", tag, (f" {ref.label}", "bold $foreground"))
        body: list[Content] = []
        chain = [f"{display_path(f)}:{n}" for f, n in code.chain]
        height = max(1, self.size.height - (1 if chain else 0)) if self.size.height else 7
        if ref.path is None:
            body.append(
                Content.styled(
                    "The source is not on this machine: not found as given, in the side's environment "
                    "or in the result folder.",
                    "$text-muted",
                )
            )
        else:
            lines = read_lines(ref.path)
            n = code.line
            before = max(0, min(n - 1 - (height - 1) // 2, len(lines) - height))
            start = max(0, before)
            end = min(len(lines), start + height)
            excerpt = list(lines[start:end])
            width = len(str(end))
            for k, content in enumerate(highlight_python(excerpt)):
                no = start + k + 1
                if no == n:
                    mark = (f"{no:>{width}} ▶ ", "bold $accent")
                    body.append(Content.assemble(mark, content.stylize("on $primary 20%")))
                else:
                    body.append(Content.assemble((f"{no:>{width}}   ", "$text-muted"), content))
            if not excerpt:
                body.append(Content.styled(f"{ref.path} has no line {n}.", "$text-muted"))
        if chain:
            body.append(Content.styled("inlined at " + " ← ".join(chain), "$text-muted"))
        self.update(Content("\n").join(body), layout=False)

    def set_comparison(self, comparison: dict) -> None:
        """Take a recompiled ``comparison`` (the next :meth:`show` draws from it)."""
        self.comparison = comparison
        self._key = None

    def on_resize(self) -> None:
        self._key = None
        if self._last is not None:
            self.show(*self._last)
