"""The "changes" list: the current kernel's ranked changes; enter jumps to where a listing shows one.

The sentences are the model's (:func:`cutediff_tui.core.model.changes.change_items`), the same
``changes`` the CLI, the reports and the JSON print, the most important first.

| key            | action                                                     |
|----------------|------------------------------------------------------------|
| j / k, ↓ / ↑   | next / previous change                                     |
| enter          | jump to the first hunk or spill site that shows the change |
| escape, w, q   | close                                                      |
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from cutediff_tui.core.model.changes import Change
from cutediff_tui.core.sanitize import one_line

__all__ = ["ChangesScreen"]


class ChangesScreen(ModalScreen[int | None]):
    """Lists a kernel's ranked changes; dismisses with the index picked, or None."""

    DEFAULT_CSS = """
    ChangesScreen {
        align: center middle;
        & > #changes {
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
        & OptionList { height: auto; max-height: 20; border: none; padding: 0; background: $surface; }
        & #changes-empty { color: $text-muted; height: auto; }
    }
    """

    BINDINGS = [
        Binding("escape,w,q", "close", "Close", id="changes.close", tooltip="Close the changes list"),
        Binding("j", "cursor(1)", "Down", show=False, id="changes.down", tooltip="Next change"),
        Binding("k", "cursor(-1)", "Up", show=False, id="changes.up", tooltip="Previous change"),
    ]

    def __init__(self, kernel: str, changes: list[Change]) -> None:
        super().__init__()
        self.kernel = kernel
        self.changes = changes

    def compose(self) -> ComposeResult:
        with Vertical(id="changes") as box:
            box.border_title = f"what changed · {one_line(self.kernel)[:60]}"
            box.border_subtitle = "enter: jump to it · esc closes"
            if self.changes:
                yield OptionList(
                    *(Option(f"{i}. {one_line(ch.text)}", id=str(i - 1)) for i, ch in enumerate(self.changes, 1)),
                    id="changes-list",
                    markup=False,
                )
            else:
                yield Static("Nothing changed in this kernel.", id="changes-empty", markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def action_cursor(self, step: int) -> None:
        ol = self.query("#changes-list")
        if ol:
            ol.first(OptionList).action_cursor_down() if step > 0 else ol.first(OptionList).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)

    def text(self) -> str:
        """The list as plain text (for tests)."""
        return "\n".join(ch.text for ch in self.changes)
