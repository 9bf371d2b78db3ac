"""The help screen: every key of the app, from the bindings themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["HelpScreen", "binding_rows"]


def binding_rows(app: App, bindings: list[Binding]) -> list[tuple[str, str, str]]:
    """(keys, description, tooltip) for each binding, keys shown as typed."""
    rows = []
    seen: set[str] = set()
    for b in bindings:
        key = b.id or b.action
        if key in seen:
            continue
        seen.add(key)
        keys = " ".join(app.get_key_display(Binding(k.strip(), b.action)) for k in b.key.split(","))
        rows.append((keys, b.description or b.action, b.tooltip or ""))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists every binding with its description and tooltip.

    | key              | action |
    |------------------|--------|
    | escape, ?, q     | close  |
    """

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > #help {
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
        & VerticalScroll { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
        & .help-group { color: $accent; text-style: bold; margin-top: 1; height: 1; }
        & Grid { grid-size: 3; grid-columns: 14 18 1fr; grid-rows: auto; height: auto; }
        & .help-keys { color: $accent; text-style: bold; height: auto; }
        & .help-desc { text-style: bold; height: auto; }
        & .help-tip { color: $text-muted; height: auto; }
    }
    """

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close", tooltip="Close the help screen"),
    ]

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups
        self.rows: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="help") as box:
            box.border_title = "cutediff keys"
            box.border_subtitle = "esc closes · ctrl+p: command palette"
            with VerticalScroll():
                for title, bindings in self.groups:
                    rows = binding_rows(self.app, bindings)
                    self.rows.extend(rows)
                    yield Static(title, classes="help-group")
                    with Grid():
                        for keys, desc, tip in rows:
                            yield Static(keys, classes="help-keys", markup=False)
                            yield Static(desc, classes="help-desc", markup=False)
                            yield Static(tip, classes="help-tip", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)

    def text(self) -> str:
        """All rows as plain text (for tests)."""
        return "\n".join(f"{k} {d} {t}" for k, d, t in self.rows)
