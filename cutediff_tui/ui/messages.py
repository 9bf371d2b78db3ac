"""Messages shared across the app: small dataclasses posted by thread workers.

Workers never touch widgets; they post one of these and the handler (on the UI thread)
updates state. High-rate progress messages replace their predecessors in the queue
(``can_replace``) so a burst collapses into the latest line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from cutediff_tui.core.events import Event, Side

    from .model import PaneModel

__all__ = [
    "ModelReady",
    "ModelProgress",
    "CompareProgress",
    "CompareFinished",
    "CompareFailed",
    "VersionsLoaded",
    "CrosscheckFinished",
    "ReportWritten",
    "GpuProbed",
    "LiveCompiling",
    "LiveError",
    "LiveResult",
]


@dataclass
class ModelReady(Message):
    """The listings of one view of one kernel are loaded and aligned."""

    kernel_index: int
    view: str
    model: PaneModel
    generation: int = 0
    """The screen's ``generation`` when loading began (a refresh under watch drops older ones)."""


@dataclass
class ModelProgress(Message):
    """How far the loading of a view has got (a big listing aligned in a child process)."""

    kernel_index: int
    view: str
    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ModelProgress) and (message.kernel_index, message.view) == (
            self.kernel_index,
            self.view,
        )


@dataclass
class CompareProgress(Message):
    """A progress event from a running compile (:mod:`cutediff_tui.core.events`)."""

    event: Event

    @property
    def side(self) -> Side | None:
        """The side the event belongs to (None: both, or neither)."""
        return self.event.side

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CompareProgress) and message.side == self.side


@dataclass
class CompareFinished(Message):
    """A new comparison is ready."""

    comparison: dict


@dataclass
class CompareFailed(Message):
    """The compile could not run at all (a sentence to show)."""

    error: str


@dataclass
class VersionsLoaded(Message):
    """DSL versions for the compare dialog."""

    versions: list[str]
    installed: set[str]
    offline: bool
    note: str = ""


@dataclass
class CrosscheckFinished(Message):
    """Cross-check results (ptxas versions x sides)."""

    result: dict


@dataclass
class ReportWritten(Message):
    """The Markdown report is on disk."""

    path: Path


@dataclass
class GpuProbed(Message):
    """What ``nvidia-smi`` said about the local GPU (None: no GPU)."""

    gpu: dict[str, Any] | None


@dataclass
class LiveCompiling(Message, bubble=False):  # the app hands it to each main screen
    """The watched sources changed: these sides are being recompiled."""

    sides: set[str]
    files: str


@dataclass
class LiveResult(Message, bubble=False):  # the app hands it to each main screen
    """A recompile under watch finished (side errors, if any, are in the comparison)."""

    comparison: dict
    change: Any
    models: dict = field(default_factory=dict)
    """Views built off the UI thread for what the screens showed: ``(kernel name, view) -> PaneModel``."""


@dataclass
class LiveError(Message, bubble=False):  # the app hands it to each main screen
    """A recompile under watch could not run (one sentence), for the sides the change feeds."""

    error: str
    change: Any
