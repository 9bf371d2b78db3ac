"""The list of kernels in the comparison, with a spill badge per kernel."""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from cutediff_tui.core.sanitize import one_line, truncate

__all__ = ["KernelHighlighted", "KernelList", "VirtualKernelList", "kernel_badge", "kernel_list", "VIRTUAL_FROM"]

VIRTUAL_FROM = 1000
"""From this many kernels on, the list draws only the rows on screen (:class:`VirtualKernelList`)."""
NAME_CHARS = 120
"""Kernel names longer than this are shortened in the list (the header shows more)."""


@dataclass
class KernelHighlighted(Message):
    """A kernel list highlighted the kernel at ``index``."""

    index: int


def _badge_parts(kernel: dict) -> list[tuple[str, str]]:
    """``(text, role)`` pieces of a kernel's row; roles: "", muted, regression, improvement, spill."""
    a, b = kernel.get("a") or {}, kernel.get("b") or {}
    parts = [(one_line(truncate(str(kernel.get("name", "?")), NAME_CHARS)), "")]
    if not kernel.get("a"):
        parts.append(("  B only", "muted"))
    elif not kernel.get("b"):
        parts.append(("  A only", "muted"))
    sa, sb = a.get("spill_store_bytes") or 0, b.get("spill_store_bytes") or 0
    if not isinstance(sa, int) or not isinstance(sb, int):
        return parts
    if sb > sa:
        parts.append((f"  ●{sb}", "regression"))
    elif sa > sb:
        parts.append((f"  ●{sa}→{sb}", "improvement"))
    elif sb:
        parts.append((f"  ●{sb}", "spill"))
    return parts


_ROLE_STYLES = {
    "": "",
    "muted": "$text-muted",
    "regression": "bold $regression",
    "improvement": "$improvement",
    "spill": "$spill",
}


def kernel_badge(kernel: dict) -> Content:
    """``Name  ●176`` with the B-side spill stores (or the side that is missing)."""
    return Content.assemble(*[(text, _ROLE_STYLES[role]) for text, role in _badge_parts(kernel)])


class KernelList(OptionList):
    """Kernels of the comparison; highlighting one shows it.

    | key          | action             |
    |--------------|--------------------|
    | up / down    | highlight a kernel |
    | enter, click | show it            |
    """

    DEFAULT_CSS = """
    KernelList {
        height: auto;
        max-height: 8;
        border: none;
        padding: 0;
        background: $surface;
        &:focus { border: none; background-tint: $foreground 3%; }
    }
    """

    def __init__(self, kernels: list[dict], *, id: str | None = None) -> None:
        super().__init__(*[Option(kernel_badge(k), id=str(i)) for i, k in enumerate(kernels)], id=id)

    def set_kernels(self, kernels: list[dict]) -> None:
        """Show ``kernels`` (a recompiled comparison's) in place, the highlight kept where it can be."""
        if len(kernels) == self.option_count:
            for i, k in enumerate(kernels):
                self.replace_option_prompt_at_index(i, kernel_badge(k))
            return
        keep = self.highlighted
        self.clear_options()
        self.add_options([Option(kernel_badge(k), id=str(i)) for i, k in enumerate(kernels)])
        if keep is not None and kernels:
            self.highlighted = min(keep, len(kernels) - 1)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(KernelHighlighted(event.option_index))


class VirtualKernelList(ScrollView, can_focus=True):
    """The kernel list for many kernels: only the rows on screen are drawn, so 50,000 kernels
    open as fast as 5 (an ``OptionList`` lays out every option first).

    | key              | action             |
    |------------------|--------------------|
    | up / down        | highlight a kernel |
    | pageup/pagedown  | a page at a time   |
    | home / end       | first / last       |
    | click            | show it            |
    """

    COMPONENT_CLASSES = {
        "kernel-list--highlight",
        "kernel-list--muted",
        "kernel-list--regression",
        "kernel-list--improvement",
        "kernel-list--spill",
    }

    DEFAULT_CSS = """
    VirtualKernelList {
        height: 8;
        border: none;
        padding: 0;
        background: $surface;
        &:focus { background-tint: $foreground 3%; }
        & > .kernel-list--highlight { background: $block-cursor-blurred-background; }
        &:focus > .kernel-list--highlight { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .kernel-list--muted { color: $text-muted; }
        & > .kernel-list--regression { color: $regression; text-style: bold; }
        & > .kernel-list--improvement { color: $improvement; }
        & > .kernel-list--spill { color: $spill; }
    }
    """

    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="kernels.up", tooltip="Highlight the previous kernel"),
        Binding("down", "move(1)", "Down", show=False, id="kernels.down", tooltip="Highlight the next kernel"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="kernels.pageup", tooltip="A page of kernels up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="kernels.pagedown", tooltip="A page down"),
        Binding("home", "jump(0)", "First", show=False, id="kernels.first", tooltip="The first kernel"),
        Binding("end", "jump(-1)", "Last", show=False, id="kernels.last", tooltip="The last kernel"),
    ]

    highlighted: reactive[int | None] = reactive(None, always_update=False)
    """Index of the highlighted kernel."""

    def __init__(self, kernels: list[dict], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kernels = kernels
        self._rows: dict[int, list[tuple[str, str]]] = {}

    def on_mount(self) -> None:
        self.virtual_size = Size(NAME_CHARS + 16, len(self.kernels))

    def set_kernels(self, kernels: list[dict]) -> None:
        """Show ``kernels`` (a recompiled comparison's) in place, the highlight kept where it can be."""
        self.kernels = kernels
        self._rows.clear()
        self.virtual_size = Size(NAME_CHARS + 16, len(kernels))
        self.highlighted = self.validate_highlighted(self.highlighted)
        self.refresh()

    @property
    def option_count(self) -> int:
        return len(self.kernels)

    def _parts(self, index: int) -> list[tuple[str, str]]:
        parts = self._rows.get(index)
        if parts is None:
            if len(self._rows) > 4096:
                self._rows.clear()
            parts = self._rows[index] = _badge_parts(self.kernels[index])
        return parts

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = scroll_y + y
        if index >= len(self.kernels):
            return Strip.blank(width, base)
        row_style = base + (
            self.get_component_rich_style("kernel-list--highlight") if index == self.highlighted else Style()
        )
        segs = []
        for text, role in self._parts(index):
            st = row_style + self.get_component_rich_style(f"kernel-list--{role}", partial=True) if role else row_style
            segs.append(Segment(text, st))
        return Strip(segs).crop_extend(scroll_x, scroll_x + width, row_style)

    def watch_highlighted(self, old: int | None, new: int | None) -> None:
        if new is None:
            return
        self.scroll_to_region_for(new)
        self.refresh()
        self.post_message(KernelHighlighted(new))

    def scroll_to_region_for(self, index: int) -> None:
        h = max(1, self.scrollable_content_region.height)
        top = round(self.scroll_y)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True)
        elif index >= top + h:
            self.scroll_to(y=index - h + 1, animate=False, immediate=True)

    def validate_highlighted(self, value: int | None) -> int | None:
        if value is None or not self.kernels:
            return None
        return max(0, min(value, len(self.kernels) - 1))

    def action_move(self, step: int) -> None:
        self.highlighted = (self.highlighted or 0) + step

    def action_page(self, step: int) -> None:
        self.highlighted = (self.highlighted or 0) + step * max(1, self.scrollable_content_region.height)

    def action_jump(self, index: int) -> None:
        self.highlighted = index if index >= 0 else len(self.kernels) - 1

    def on_click(self, event: events.Click) -> None:
        self.highlighted = round(self.scroll_y) + event.y


def kernel_list(kernels: list[dict], *, id: str | None = None) -> KernelList | VirtualKernelList:
    """The kernel list widget for ``kernels``: an ``OptionList`` for a few, a virtual list for many."""
    return VirtualKernelList(kernels, id=id) if len(kernels) >= VIRTUAL_FROM else KernelList(kernels, id=id)
