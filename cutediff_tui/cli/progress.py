"""Progress on a terminal: ``rich.progress`` bars with elapsed time and ETA, fed by the typed
events of :mod:`cutediff_tui.core.events`.

One bar per environment being created (resolve → install → ready), per build of each side
(import, then one step per kernel compiled, done when the side is analysed), one for a sweep's
cells (``CellFinished`` carries the total, so the ETA is real) and one for bisect's builds (the
bound ⌈log2 n⌉ + 2 is the total; untestable versions can add a few). Every event is also printed
as a dim line above the bars, so the terminal keeps the same log a pipe gets
(:func:`cutediff_tui.cli.common.progress_printer` prints only the lines when stderr is not a
terminal). The bars are stopped and cleared before anything goes to stdout or an error sentence
is printed (:func:`cutediff_tui.cli.common.stop_progress`), when the command ends (click's context
closes) and before a TUI opens: a redraw never lands over a result, and the dim lines stay as the
log. A ``--watch`` that compiles again starts fresh bars.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..core.events import (
    BisectStep,
    CellFinished,
    DslImporting,
    EnvStage,
    Event,
    KernelCompiled,
    SideAnalysed,
    render_event,
)

__all__ = ["ProgressBars", "stop_all"]

_ACTIVE: list[ProgressBars] = []
_ENV_STEPS = {"resolving": 1, "installing": 2, "ready": 3}


class ProgressBars:
    """A :data:`~cutediff_tui.core.events.Progress` callable that draws bars on ``console``."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.lock = threading.RLock()  # stop() may come from a print made while an event is drawn
        self.bars = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            redirect_stdout=sys.stdout.isatty(),  # stdout into a pipe (--json -) must stay pure
            redirect_stderr=False,
            transient=True,  # cleared when stopped: the results printed next are the last thing on screen
        )
        self.tasks: dict[tuple[Any, ...], TaskID] = {}
        self.started = False

    @classmethod
    def start(cls, console: Console, ctx: click.Context | None) -> ProgressBars:
        """Bars for this command, stopped when its click context closes."""
        bars = cls(console)
        _ACTIVE.append(bars)
        if ctx is not None:
            ctx.find_root().call_on_close(bars.stop)
        return bars

    def stop(self) -> None:
        """Stop and clear the bars; the next event starts fresh ones."""
        with self.lock:
            if self.started:
                self.bars.stop()
                self.started = False
                for task_id in self.tasks.values():
                    self.bars.remove_task(task_id)
                self.tasks.clear()
        if self in _ACTIVE:
            _ACTIVE.remove(self)

    def _task(self, key: tuple[Any, ...], description: str, total: float | None) -> TaskID:
        if not self.started:
            self.bars.start()
            self.started = True
            if self not in _ACTIVE:
                _ACTIVE.append(self)
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(description, total=total)
        return self.tasks[key]

    def __call__(self, event: Event | str) -> None:
        with self.lock:
            self.console.print(f"[dim]·[/] {escape(render_event(event))}", soft_wrap=True, highlight=False)
            if isinstance(event, str):
                return
            self.update(event)

    def update(self, event: Event) -> None:
        """Move the bar an event belongs to (events that belong to no bar only print their line)."""
        side = f"side {event.side.upper()} " if event.side else ""
        if isinstance(event, EnvStage):
            t = self._task(("env", event.side, event.label), f"{side}environment {event.label}", 3)
            self.bars.update(t, completed=_ENV_STEPS[event.stage])
        elif isinstance(event, DslImporting):
            t = self._task(("build", event.side, event.build), f"{side}{event.build} (DSL {event.dsl})", None)
            self.bars.update(t, completed=0)
        elif isinstance(event, KernelCompiled):
            t = self._task(("build", event.side, event.build), f"{side}{event.build}", None)
            self.bars.update(t, completed=event.index)
        elif isinstance(event, SideAnalysed):
            for key, t in self.tasks.items():
                if key[0] == "build" and key[1] == event.side:
                    done = self.bars.tasks[self._index(t)].completed or 1
                    self.bars.update(t, total=done, completed=done)
        elif isinstance(event, CellFinished):
            t = self._task(("sweep",), "sweep cells", event.total)
            self.bars.update(t, completed=event.index, total=event.total)
        elif isinstance(event, BisectStep):
            t = self._task(("bisect",), "bisect builds", event.bound or None)
            done = event.order or self.bars.tasks[self._index(t)].completed + 1
            self.bars.update(t, completed=done, total=max(event.bound, done) if event.bound else None)

    def _index(self, task_id: TaskID) -> int:
        return next(i for i, t in enumerate(self.bars.tasks) if t.id == task_id)


def stop_all() -> None:
    """Stop every bar still drawn (before a TUI takes the terminal)."""
    for bars in list(_ACTIVE):
        bars.stop()
