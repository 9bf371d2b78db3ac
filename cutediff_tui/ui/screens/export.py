"""The export dialog (``e``): which format, and where — a file or the clipboard.

The file name picks the format (``.md``, ``.html``, ``.json``); ``clipboard`` copies the
Markdown report instead (OSC 52, so it works over SSH).

| key          | action                                                             |
|--------------|--------------------------------------------------------------------|
| enter        | export; a file that exists is named first, enter again overwrites  |
| escape       | cancel                                                             |
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

__all__ = ["ExportChoice", "ExportScreen", "FORMAT_NAMES"]

#: Formats the dialog offers: key, suffix, name.
FORMAT_NAMES: dict[str, str] = {"md": "Markdown", "html": "HTML", "json": "JSON"}
_SUFFIX_FORMAT = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


@dataclass(frozen=True)
class ExportChoice:
    """What to export: ``fmt`` to ``path``, or to the clipboard when ``path`` is None."""

    fmt: str
    path: Path | None


class ExportScreen(ModalScreen[ExportChoice | None]):
    """Ask for the report's format and file; never overwrites a file without saying so."""

    DEFAULT_CSS = """
    ExportScreen {
        align: center middle;
        & > #export {
            width: 72;
            max-width: 100%;
            height: auto;
            background: $surface;
            border: round $primary;
            border-title-color: $foreground;
            padding: 0 1;
        }
        & #export-formats { height: 1; color: $text-muted; }
        & Input { margin: 1 0 0 0; }
        & #export-status { height: auto; color: $text-muted; }
        & #export-status.-warning { color: $text-warning; text-style: bold; }
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="Close without exporting"),
    ]

    def __init__(self, folder: Path, fmt: str = "md") -> None:
        super().__init__()
        self.folder = Path(folder)
        self.fmt = fmt
        self.confirmed: Path | None = None
        """A file that exists and that the user was told about (enter again overwrites it)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="export") as box:
            box.border_title = "export the report"
            yield Label(self._formats_line(), id="export-formats")
            yield Input(value=f"cutediff-report.{self.fmt}", id="export-path", select_on_focus=False)
            yield Static("", id="export-status")

    def on_mount(self) -> None:
        self._check()

    def _formats_line(self) -> Content:
        parts: list = [("format: ", "$text-muted")]
        for key, name in FORMAT_NAMES.items():
            style = "bold $foreground on $panel" if key == self.fmt else "$text-muted"
            parts += [(f" {name} ", style), (" ", "")]
        parts.append(("· the file name picks it (.md .html .json); type 'clipboard' to copy", "$text-muted"))
        return Content.assemble(*parts)

    def target(self) -> Path | None:
        """The file the report goes to (relative names are in the dialog's folder); None: clipboard."""
        text = self.query_one("#export-path", Input).value.strip()
        if text.lower() in ("clipboard", "copy", "-"):
            return None
        path = Path(text).expanduser()
        return path if path.is_absolute() else self.folder / path

    @on(Input.Changed, "#export-path")
    def _changed(self) -> None:
        path = self.target()
        if path is not None:
            self.fmt = _SUFFIX_FORMAT.get(path.suffix.lower(), self.fmt)
        self.confirmed = None
        self.query_one("#export-formats", Label).update(self._formats_line())
        self._check()

    def _check(self) -> None:
        status = self.query_one("#export-status", Static)
        path = self.target()
        if path is None:
            status.update(
                Content(f"enter copies the {FORMAT_NAMES[self.fmt]} report to the clipboard (OSC 52 over SSH)")
            )
            status.set_class(False, "-warning")
        elif path.is_symlink():
            status.update(
                Content(f"{path} is a symbolic link: cutediff does not write through links; change the name.")
            )
            status.set_class(True, "-warning")
        elif path.is_dir():
            status.update(Content(f"{path} is a folder: add a file name."))
            status.set_class(True, "-warning")
        elif path.exists():
            status.update(Content(f"{path} exists: enter overwrites it (or change the name)."))
            status.set_class(True, "-warning")
        elif not path.parent.is_dir():
            status.update(Content(f"{path.parent} does not exist: enter creates it."))
            status.set_class(False, "-warning")
        else:
            status.update(Content(f"enter writes {FORMAT_NAMES[self.fmt]} to {path}"))
            status.set_class(False, "-warning")

    @on(Input.Submitted, "#export-path")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        path = self.target()
        if path is None:
            self.dismiss(ExportChoice(self.fmt, None))
            return
        if path.is_symlink() or path.is_dir() or not path.name:
            self._check()
            return
        if path.exists() and self.confirmed != path:
            self.confirmed = path
            status = self.query_one("#export-status", Static)
            status.update(Content(f"{path} exists. Press enter again to overwrite it, or change the name."))
            status.set_class(True, "-warning")
            return
        self.dismiss(ExportChoice(self.fmt, path))

    def action_cancel(self) -> None:
        self.dismiss(None)
