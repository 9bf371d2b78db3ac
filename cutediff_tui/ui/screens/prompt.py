"""A one-line prompt at the bottom of the screen (search, jump, cross-check versions)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

__all__ = ["PromptScreen"]


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with the text, or None on escape.

    | key    | action           |
    |--------|------------------|
    | enter  | accept           |
    | escape | cancel           |
    """

    DEFAULT_CSS = """
    PromptScreen {
        align: left bottom;
        background: $background 0%;
        & > #prompt {
            height: 3;
            width: 1fr;
            dock: bottom;
            background: $panel;
            border-top: solid $primary;
            padding: 0 1;
        }
        & #prompt-label { color: $text-muted; height: 1; }
        & Input { border: none; height: 1; padding: 0; background: $panel; }
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close the prompt without doing anything"),
    ]

    def __init__(self, label: str, *, value: str = "", placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Label(self.label, id="prompt-label", markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input", compact=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
