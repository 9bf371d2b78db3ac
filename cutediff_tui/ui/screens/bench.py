"""Placeholder for the benchmark pane (it comes with the bench issue)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from ..messages import GpuProbed

__all__ = ["BenchScreen"]


class BenchScreen(ModalScreen[None]):
    """Says honestly what the bench pane will do and whether this machine has a GPU.

    | key        | action |
    |------------|--------|
    | escape, b  | close  |
    """

    DEFAULT_CSS = """
    BenchScreen {
        align: center middle;
        & > #bench {
            width: 72; max-width: 100%; height: auto;
            background: $surface; border: round $primary; padding: 1 2;
        }
        & #gpu { margin-top: 1; }
    }
    """

    BINDINGS = [Binding("escape,b,q", "close", "Close", id="bench.close", tooltip="Close the bench pane")]

    def __init__(self, gpu: dict | None | bool = False) -> None:
        """``gpu``: a probe result to show (None = no GPU), or False to probe now."""
        super().__init__()
        self._given = gpu

    def compose(self) -> ComposeResult:
        with Vertical(id="bench") as box:
            box.border_title = "benchmark"
            yield Static(Content.from_markup(
                "The benchmark pane is not built yet: it comes with the bench issue. "
                "It will time both kernels on a GPU and show their runtimes side by side.\n"
                "Nothing here runs a kernel."
            ))
            yield Static(Content.styled("Looking for a GPU…", "$text-muted"), id="gpu")

    def on_mount(self) -> None:
        if self._given is False:
            self.probe()
        else:
            self.post_message(GpuProbed(self._given or None))

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu", description="probe the GPU")
    def probe(self) -> None:
        from cutediff_tui.core.gpu import local_gpu

        self.post_message(GpuProbed(local_gpu()))

    @on(GpuProbed)
    def show_gpu(self, message: GpuProbed) -> None:
        gpu = message.gpu
        if gpu:
            text = Content.assemble(("GPU: ", "bold"), (f"{gpu.get('name')} ({gpu.get('arch')})", "$improvement"),
                                    " — benchmarks could run here once the pane exists.")
        else:
            text = Content.assemble(("GPU: ", "bold"), ("none found", "$warning"),
                                    " (nvidia-smi is missing or lists no device), so benchmarks could not"
                                    " run on this machine.")
        self.query_one("#gpu", Static).update(text)

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.post_message(GpuProbed(None))

    def action_close(self) -> None:
        self.dismiss(None)
