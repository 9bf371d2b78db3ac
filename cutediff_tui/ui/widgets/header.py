"""The one-line header: recipe, arch, and the two toolchains (A and B) being compared."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from cutediff_tui.core.model.sides import side_labels

__all__ = ["ComparisonHeader", "side_label"]


def side_label(comparison: dict, s: str) -> str:
    """``DSL 4.8.0``, then what sets this side apart from the other (pins, sources, parameters:
    ``DSL 4.8.0 · bits=128``), from the one function the CLI and the reports use too."""
    label = side_labels(comparison)[s]
    me = (comparison.get("sides") or {}).get(s) or {}
    return f"DSL {label}" if me.get("dsl") and label.startswith(str(me["dsl"])) else label


class ComparisonHeader(Static):
    """Names both toolchains, the recipe and the arch; marks a failed side."""

    DEFAULT_CSS = """
    ComparisonHeader {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    def __init__(self, comparison: dict, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.comparison = comparison
        self.kernel_name = ""
        self.kernel_pos = (0, 0)

    def show_kernel(self, name: str, index: int, count: int) -> None:
        self.kernel_name = name
        self.kernel_pos = (index, count)
        self.update(self.build())

    def on_mount(self) -> None:
        self.update(self.build())

    def set_comparison(self, comparison: dict) -> None:
        """Take a recompiled ``comparison`` (labels and failed sides come from it)."""
        self.comparison = comparison
        self.update(self.build())

    def build(self) -> Content:
        c = self.comparison
        recipe = (c.get("recipe") or {}).get("name", "?")
        arch = c.get("arch") or "?"
        prof = (c.get("profile") or {}).get("name")
        parts: list = [("cutediff", "bold $accent"), ("  ", ""), (recipe, "bold"), (f" · {arch}", "")]
        if prof:
            parts.append((f" ({prof})", "$text-muted"))
        parts.append(("   ", ""))
        for s, sep in (("a", "  vs  "), ("b", "")):
            side = c.get("sides", {}).get(s) or {}
            parts.append((f" {s.upper()} ", f"bold $background on $side-{s}"))
            parts.append((f" {side_label(c, s)}", f"bold $side-{s}"))
            if side.get("error"):
                parts.append((" failed", "bold $error"))
            if sep:
                parts.append((sep, "$text-muted"))
        if self.kernel_name:
            i, n = self.kernel_pos
            parts.append(("   ", ""))
            parts.append((self.kernel_name, "bold"))
            if n > 1:
                parts.append((f" ({i + 1}/{n})", "$text-muted"))
        return Content.assemble(*parts)
