"""Progress events: what long-running core calls report while they work.

Each event is a small frozen dataclass with the facts as fields (side, stage, kernel, seconds …);
a face decides how to show it: the CLI prints :func:`render_event` as a line, the TUI reads the
fields (``event.side`` picks the status line of that side) and never parses the text back.

Every core call that reports takes one :data:`Progress` callable. A plain ``str`` is accepted too,
for one-off lines that carry no facts a face acts on ("wrote report.md"); :func:`as_event` turns
it into a :class:`Message`. :func:`for_side` tags everything one side's work reports with that side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from .model.types import Side

__all__ = [
    "AnalysisCached",
    "BisectRound",
    "BisectStep",
    "CellFinished",
    "CrosscheckStarted",
    "DslImporting",
    "EnvStage",
    "Event",
    "KernelCompiled",
    "Message",
    "Progress",
    "Side",
    "SideAnalysed",
    "as_event",
    "for_side",
    "noop",
    "render_event",
    "side_of",
]


@dataclass(frozen=True)
class Event:
    """Base of all progress events; ``side`` is ``"a"``, ``"b"`` or None (both sides / neither)."""

    side: Side | None

    def text(self) -> str:
        """The line the CLI prints (without the side prefix)."""
        raise NotImplementedError

    def line(self) -> str:
        """The whole line: ``side A: …`` when the event belongs to one side."""
        return f"side {self.side.upper()}: {self.text()}" if self.side else self.text()


@dataclass(frozen=True)
class Message(Event):
    """A free-form line with no facts a face acts on (``wrote report.md``)."""

    message: str

    def text(self) -> str:
        return self.message


@dataclass(frozen=True)
class EnvStage(Event):
    """A toolchain environment is being resolved, installed, or is ready."""

    stage: Literal["resolving", "installing", "ready"]
    label: str  # the toolchain, e.g. 4.8.0,quack-kernels==0.6.5
    env: str = ""  # the environment's folder name
    cuda: int | None = None
    seconds: float | None = None

    def text(self) -> str:
        if self.stage == "resolving":
            return f"resolving {self.label} (cu{self.cuda})"
        if self.stage == "installing":
            return f"installing {self.label} into {self.env}"
        return f"environment ready in {self.seconds or 0:.1f} s: {self.env}"


@dataclass(frozen=True)
class DslImporting(Event):
    """The compile worker of one build started importing the DSL."""

    build: str  # "build" or "line-info build"
    dsl: str

    def text(self) -> str:
        return f"{self.build}: importing DSL {self.dsl}"


@dataclass(frozen=True)
class KernelCompiled(Event):
    """The compile worker finished one ``cute.compile`` call."""

    build: str
    index: int  # 1-based
    callable: str
    seconds: float

    def text(self) -> str:
        return f"{self.build}: compiled kernel {self.index} ({self.callable}) in {self.seconds:.1f} s"


@dataclass(frozen=True)
class SideAnalysed(Event):
    """One side's kernels are disassembled, parsed and measured."""

    kernels: int

    def text(self) -> str:
        return f"analysed {self.kernels} kernel(s)"


@dataclass(frozen=True)
class AnalysisCached(Event):
    """The comparison of these builds was already in the cache."""

    def text(self) -> str:
        return "analysis served from the cache"


@dataclass(frozen=True)
class CrosscheckStarted(Event):
    """One kernel's PTX is being re-assembled with other ptxas versions."""

    kernel: str
    versions: tuple[str, ...]

    def text(self) -> str:
        return f"cross-check {self.kernel}: ptxas {', '.join(self.versions)}"


@dataclass(frozen=True)
class CellFinished(Event):
    """One cell of a sweep is built and measured (or failed: ``why``)."""

    index: int  # 1-based, in finishing order
    total: int
    toolchain: str
    cell: str  # the cell's axes, e.g. sm_100a hdim=64
    seconds: float = 0.0
    from_cache: bool = False
    why: str | None = None

    def text(self) -> str:
        what = f"[{self.index}/{self.total}] {self.toolchain} {self.cell}"
        if self.why is not None:
            return f"{what}: failed: {self.why}"
        return f"{what}: {self.seconds:.1f} s{' (cached build)' if self.from_cache else ''}"


@dataclass(frozen=True)
class BisectRound(Event):
    """A bisect round starts: the versions it builds now, and how many are still undecided."""

    round: int  # 1-based
    versions: tuple[str, ...]
    open: int

    def text(self) -> str:
        return f"round {self.round}: testing {', '.join(self.versions)} ({self.open} versions still open)"


@dataclass(frozen=True)
class BisectStep(Event):
    """One bisect probe is judged: ``verdict`` is good, bad or skip, ``why`` the figure behind it."""

    version: str
    verdict: str
    why: str
    from_cache: bool = False
    order: int = 0  # 1-based: builds so far (0: not given)
    bound: int = 0  # at most this many builds without untestable versions (0: not given)

    def text(self) -> str:
        return f"{self.version}: {self.verdict} ({self.why})" + (" [cached build]" if self.from_cache else "")


#: What a reporting core call takes: called with each event (or a plain line), from any thread.
Progress = Callable[[Event | str], None]


def noop(_event: Event | str) -> None:
    """A :data:`Progress` that shows nothing."""


def as_event(event: Event | str) -> Event:
    """``event`` itself, or a plain line as a :class:`Message` for neither side."""
    return Message(None, event) if isinstance(event, str) else event


def render_event(event: Event | str) -> str:
    """The line a terminal shows for ``event``."""
    return event if isinstance(event, str) else event.line()


def side_of(event: Event | str) -> Side | None:
    """The side an event belongs to (None for a plain line)."""
    return None if isinstance(event, str) else event.side


def for_side(progress: Progress, side: Side) -> Progress:
    """A :data:`Progress` that hands everything on to ``progress`` tagged with ``side`` (events
    that already name a side keep it)."""

    def tagged(event: Event | str) -> None:
        ev = as_event(event)
        progress(ev if ev.side is not None else replace(ev, side=side))

    return tagged
