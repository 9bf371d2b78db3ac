"""A Rich console that never writes a control character it did not make itself.

Kernel names, file names, recipe docstrings and compiler messages reach the terminal through
the CLI's consoles; any C0/C1 control character or ESC in them is shown as ``\\x1b`` and the
like (:func:`cutediff_tui.core.sanitize.visible`), while Rich's own styling still works.

Into a pipe or a file (not a terminal) it is :data:`PIPED_WIDTH` columns wide, so that tables
are not cut to 80 columns (``COLUMNS`` still wins); ``--color`` picks colour with
:meth:`SafeConsole.set_color`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.color import ColorSystem
from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderableType
from rich.segment import Segment

from .core.sanitize import visible

__all__ = ["PIPED_WIDTH", "SafeConsole"]

#: Columns of a console that writes into a pipe or a file: wide enough that no table is cut.
PIPED_WIDTH = 4096


class SafeConsole(Console):
    """``rich.console.Console`` whose rendered text has its control characters made visible."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = Console.size.fget(self)  # type: ignore[attr-defined]
        if self._width is None and not self.is_terminal and not self._environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(PIPED_WIDTH, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def rule(self, title: Any = "", *, characters: str = "─", style: Any = "rule.line", align: Any = "center") -> None:
        """A rule; into a pipe 100 columns wide rather than :data:`PIPED_WIDTH`."""
        if self.size.width != PIPED_WIDTH:
            return super().rule(title, characters=characters, style=style, align=align)
        from rich.rule import Rule

        self.print(Rule(title, characters=characters, style=style, align=align), width=100)

    def set_color(self, mode: str, *, no_color_env: bool = False) -> None:
        """``always``: colour even into a pipe; ``never``: no colour (bold and the like stay);
        ``auto``: colour on a terminal unless ``NO_COLOR`` is set (https://no-color.org)."""
        if mode == "always":
            self._color_system = self._detect_color_system() or ColorSystem.STANDARD
            self.no_color = False
        elif mode == "never":
            self.no_color = True
        else:
            self._color_system = self._detect_color_system()
            self.no_color = no_color_env

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for seg in super().render(renderable, options):
            if seg.control or not seg.text:
                yield seg
            else:
                text = visible(seg.text)
                yield seg if text is seg.text else Segment(text, seg.style, seg.control)
