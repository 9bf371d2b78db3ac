"""A Rich console that never writes a control character it did not make itself.

Kernel names, file names, recipe docstrings and compiler messages reach the terminal through
the CLI's consoles; any C0/C1 control character or ESC in them is shown as ``\\x1b`` and the
like (:func:`cutediff_tui.core.sanitize.visible`), while Rich's own styling still works.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

from .core.sanitize import visible

__all__ = ["SafeConsole"]


class SafeConsole(Console):
    """``rich.console.Console`` whose rendered text has its control characters made visible."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for seg in super().render(renderable, options):
            if seg.control or not seg.text:
                yield seg
            else:
                text = visible(seg.text)
                yield seg if text is seg.text else Segment(text, seg.style, seg.control)
