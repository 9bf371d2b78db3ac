"""The list of kernels in the comparison, with a spill badge per kernel."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from cutediff_tui.core.sanitize import one_line, truncate

__all__ = ["KernelList", "kernel_badge"]


def kernel_badge(kernel: dict) -> Content:
    """``Name  ●176`` with the B-side spill stores (or the side that is missing)."""
    a, b = kernel.get("a") or {}, kernel.get("b") or {}
    parts: list = [(one_line(truncate(str(kernel.get("name", "?")), 120)), "")]
    if not kernel.get("a"):
        parts.append(("  B only", "$text-muted"))
    elif not kernel.get("b"):
        parts.append(("  A only", "$text-muted"))
    sa, sb = a.get("spill_store_bytes") or 0, b.get("spill_store_bytes") or 0
    if sb > sa:
        parts.append((f"  ●{sb}", "bold $regression"))
    elif sa > sb:
        parts.append((f"  ●{sa}→{sb}", "$improvement"))
    elif sb:
        parts.append((f"  ●{sb}", "$spill"))
    return Content.assemble(*parts)


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
