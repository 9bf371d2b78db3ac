"""Hunk navigation by size and by what a hunk touches, and the "changes" list, for the main screen.

| key   | action                                                                    |
|-------|---------------------------------------------------------------------------|
| r / R | next smaller / larger hunk by size (from outside a hunk: the largest)     |
| m / M | next / previous hunk that touches spill code, an MMA or a register budget |
| w     | what changed: the kernel's ranked changes; enter jumps to where it shows  |

:class:`HunkNavigation` is a mixin of :class:`~.main.MainScreen` (its actions use the screen's
model, cursor and view); :data:`HUNK_BINDINGS` are added to the screen's bindings, so the help
screen and the footer list them. The status bar shows the rank of the hunk under the cursor
(:func:`hunk_status`: ``hunk 2/17 · 34 lines · spill``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding

from cutediff_tui.core.listing import TAGS
from cutediff_tui.core.model.changes import Change, change_items

if TYPE_CHECKING:
    from ..model import PaneModel, RowHunk

__all__ = ["HUNK_BINDINGS", "HunkNavigation", "hunk_status"]

#: In the footer only ``w`` (it fits at 80 columns); all are in the help screen and the palette.
HUNK_BINDINGS = [
    Binding(
        "r",
        "ranked_hunk(1)",
        "Largest",
        show=False,
        id="hunk.largest",
        tooltip="Next hunk by size: the largest first, then the next smaller (status: hunk 2/17)",
    ),
    Binding("R", "ranked_hunk(-1)", "Larger hunk", show=False, id="hunk.larger", tooltip="The next larger hunk"),
    Binding(
        "m",
        "marked_hunk(1)",
        "Marked",
        show=False,
        id="hunk.marked",
        tooltip="Next hunk that changes spill code, an MMA or a register budget (USETMAXREG, setmaxnreg)",
    ),
    Binding(
        "M",
        "marked_hunk(-1)",
        "Prev marked",
        show=False,
        id="hunk.marked-previous",
        tooltip="Previous hunk that changes spill code, an MMA or a register budget",
    ),
    Binding(
        "w",
        "changes",
        "Changes",
        id="hunk.changes",
        tooltip="What changed in this kernel, ranked; enter jumps to the first hunk or spill site that shows it",
    ),
]


def hunk_status(model: PaneModel, h: RowHunk) -> str:
    """``hunk 2/17 · 34 lines · spill/mma``: the hunk's rank by size, its rows and tags."""
    tags = "/".join(t for t in TAGS if t in h.tags)
    if not h.rank:
        return f"renames · {h.size} line{'s' if h.size != 1 else ''}"
    return f"hunk {h.rank}/{len(model.ranked_hunks)} · {h.size} line{'s' if h.size != 1 else ''}" + (
        f" · {tags}" if tags else ""
    )


class HunkNavigation:
    """Actions of :data:`HUNK_BINDINGS` (a mixin of the main screen)."""

    model: PaneModel | None
    cursor: int
    view: str
    comparison: dict
    _pending: tuple[str, int] | None

    if TYPE_CHECKING:  # provided by the screen

        @property
        def kernel(self) -> dict: ...

        app: Any

        def notify(self, message: str, **kw: Any) -> None: ...

        def _land(self, row: int) -> None: ...

        def pane(self, side: str) -> Any: ...

        active_side: str

    def action_ranked_hunk(self, step: int) -> None:
        if self.model is None:
            return
        h = self.model.next_ranked(self.cursor, step)
        if h is None:
            self.notify("No differences in this view.", timeout=3)
            return
        self._land(h.start)

    def action_marked_hunk(self, step: int) -> None:
        if self.model is None:
            return
        h = self.model.next_tagged(self.cursor, step)
        if h is None:
            self.notify("No hunk in this view changes spill code, an MMA or a register budget.", timeout=3)
            return
        self._land(h.start)

    def current_changes(self) -> list[Change]:
        """The ranked changes of the kernel shown (the model's, as every face prints them)."""
        return change_items(self.comparison, self.kernel) if self.kernel else []

    def action_changes(self) -> None:
        from .changes import ChangesScreen

        self.app.push_screen(
            ChangesScreen(str(self.kernel.get("name") or "kernel"), self.current_changes()), self.jump_to_change
        )

    def jump_to_change(self, index: int | None) -> None:
        """Go to the first spill site (a spill change) or the first hunk that shows change
        ``index``, switching to its view (SASS or PTX) first when needed."""
        changes = self.current_changes()
        if index is None or not 0 <= index < len(changes):
            return
        ch = changes[index]
        view = "sass" if ch.spill else ch.view
        if self.view != view or self.model is None:
            self._pending = ("change", index)  # done again once the view's model is there
            self.view = view
            return
        if ch.spill:
            self._first_spill()
            return
        h = self.model.first_hunk_showing(ch.opcodes, ch.classes) or (
            self.model.ranked_hunks[0] if self.model.ranked_hunks else None
        )
        if h is None:
            self.notify("No hunk of this listing shows that change.", timeout=3)
            return
        self._land(h.start)

    def _first_spill(self) -> None:
        """The first spill site of B (of A when only A spills)."""
        model = self.model
        if model is None:
            return
        side = "b" if model.spill_rows("b") else ("a" if model.spill_rows("a") else None)
        if side is None:
            self.notify("Neither side spills in this kernel.", timeout=3)
            return
        row = model.next_spill(side, -1, 1)
        if row is not None:
            self.active_side = side
            self.pane(side).focus()
            self._land(row)
