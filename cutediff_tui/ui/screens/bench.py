"""The benchmark pane: both toolchains timed on the local GPU, interleaved, live.

| key        | action                                   |
|------------|------------------------------------------|
| r          | start (or restart) the benchmark         |
| space      | stop the running benchmark               |
| [ ]        | previous / next shape in the plot        |
| escape, b  | close                                    |

Without a GPU (or with one the kernels can't run on) the pane says so and why; a bench result
recorded in the comparison (``cutediff bench … --into RESULT``) is shown either way.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from cutediff_tui.core.model.types import SIDES

from ..messages import GpuProbed

__all__ = ["BenchScreen", "BenchState"]

VERDICT_STYLE = {"SLOWER": "$regression", "FASTER": "$improvement", "SAME": "$text-muted", "UNSURE": "$warning"}


@dataclass
class BenchEvent(Message):
    """A bench event from the worker thread (samples, readiness, end or failure)."""

    event: dict


class BenchState:
    """Samples per shape and side, and the statistics the table shows (no Textual here)."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = labels
        self.samples: dict[str, dict[str, list[float]]] = {lab: {"a": [], "b": []} for lab in labels}
        self.status = ""
        self.result: dict | None = None  # the finished (or recorded) result: per-kernel rows, profile

    @classmethod
    def from_result(cls, result: dict) -> BenchState:
        rows = result.get("shapes", [])
        st = cls([r["shape"]["label"] for r in rows])
        for r in rows:
            for side in SIDES:
                st.samples[r["shape"]["label"]][side] = list((r.get("samples") or {}).get(side, []))
        st.result = result
        return st

    def add(self, label: str, side: str, ms: list[float]) -> None:
        self.samples.setdefault(label, {"a": [], "b": []})[side].extend(ms)

    def rows(self) -> list[dict[str, Any]]:
        from cutediff_tui.core.bench.stats import compare_samples, summarize

        out = []
        for lab in self.labels:
            a, b = self.samples[lab]["a"], self.samples[lab]["b"]
            row: dict[str, Any] = {
                "label": lab,
                "a": summarize(a).to_json() if a else None,
                "b": summarize(b).to_json() if b else None,
            }
            if len(a) >= 3 and len(b) >= 3:
                row.update({k: v for k, v in compare_samples(a, b).items() if k not in ("a", "b")})
            out.append(row)
        return out

    def detail(self, comparison: dict) -> list[tuple[str, str]]:
        """Per-kernel rows, Nsight Compute rows, spill sites with execution counts and the verdict
        sentences of the finished result, as (text, style) lines."""
        return detail_lines(self.result or {}, comparison)


def _ms(x: dict | None) -> str:
    return f"{x['median_ms']:.4f}" if x else "-"


def detail_lines(result: dict, comparison: dict) -> list[tuple[str, str]]:
    """What the pane shows under the per-call table (see :meth:`BenchState.detail`)."""
    from cutediff_tui.core.bench.explain import fmt_rate

    out: list[tuple[str, str]] = []
    gpu = result.get("gpu_before") or result.get("gpu") or {}
    remote = result.get("remote")
    if remote:
        where = f"{gpu.get('name', '?')} on Dask worker {remote.get('host')} ({remote.get('scheduler')})"
        out.append((f"measured on {where}\n", "$text-muted"))
    hosts = [(c["shape"]["label"], c["host_ms"]) for c in result.get("shapes", []) if c.get("host_ms")]
    if hosts:
        text = ", ".join(f"{label} {h['a']:.3f}/{h['b']:.3f}" for label, h in hosts)
        out.append((f"host wall ms per call A/B: {text}\n", "$text-muted"))
    kernels = [(c["shape"]["label"], k) for c in result.get("shapes", []) for k in c.get("kernels") or []]
    if kernels:
        out.append(
            (f"{'per kernel (CUPTI)':<40}{'A ms':>10}{'B ms':>10}{'B/A':>8}{'95% interval':>18}  verdict", "bold")
        )
        many = len(result.get("shapes", [])) > 1
        for label, k in kernels:
            name = f"{label} {k['kernel']}" if many else k["kernel"]
            ci = f"[{k['ci_low']:.3f}, {k['ci_high']:.3f}]" if "ci_low" in k else "-"
            ratio = f"{k['ratio']:.4f}" if "ratio" in k else "-"
            out.append((f"{name[:39]:<40}{_ms(k.get('a')):>10}{_ms(k.get('b')):>10}{ratio:>8}{ci:>18}  ", ""))
            out.append((k["verdict"], VERDICT_STYLE.get(k["verdict"], "")))
            out.append(("\n", ""))
    prof = result.get("profile") or {}
    sides = prof.get("sides") or {}
    ka = (sides.get("a") or {}).get("kernels") or {}
    kb = (sides.get("b") or {}).get("kernels") or {}
    if ka or kb:
        out.append(("Nsight Compute: local traffic A → B · registers · occupancy · top stall B", "bold"))
        out.append(("\n", ""))
        for name in list(ka) + [n for n in kb if n not in ka]:
            a, b = ka.get(name) or {}, kb.get(name) or {}
            stall = ", ".join(f"{r} {v:g}" for r, v in (b.get("top_stalls") or a.get("top_stalls") or [])[:2])
            out.append(
                (
                    f"{name[:39]:<40}{fmt_rate(a.get('local_gbps'))} → {fmt_rate(b.get('local_gbps'))} · "
                    f"{a.get('registers', '-')}/{b.get('registers', '-')} regs · "
                    f"{a.get('occupancy_pct', '-')}/{b.get('occupancy_pct', '-')}% · {stall or '-'}\n",
                    "",
                )
            )
    for k in comparison.get("kernels", []):
        for side in ("a", "b"):
            sites = [x for x in (k.get(side) or {}).get("spill_sites") or [] if "executed" in x]
            for site in sites[:8]:
                where = f"{site.get('file')}:{site.get('line')}" if site.get("file") else f"0x{site['addr']:x}"
                out.append(
                    (
                        f"side {side.upper()} {k['name'][:30]} {site['opcode']} {where}: executed {site['executed']:,}\n",
                        "",
                    )
                )
    if prof.get("error"):
        out.append((prof["error"] + "\n", "$warning"))
    for sentence in result.get("verdicts") or []:
        out.append(("• " + sentence + "\n", ""))
    return out


class BenchScreen(ModalScreen[None]):
    """Live A/B timings on the local GPU with medians, a B/A interval and a verdict per shape."""

    DEFAULT_CSS = """
    BenchScreen {
        align: center middle;
        & > #bench {
            width: 100; max-width: 100%; height: auto; max-height: 100%;
            background: $surface; border: round $primary; padding: 0 1;
        }
        & #gpu, & #status { color: $text-muted; }
        & #table { margin: 1 0; }
        & PlotextPlot { height: 14; min-height: 8; }
    }
    """

    BINDINGS = [
        Binding("escape,b,q", "close", "Close", id="bench.close", tooltip="Close the bench pane"),
        Binding("r", "start", "Run", id="bench.start", tooltip="Start or restart the benchmark on the local GPU"),
        Binding("space", "stop", "Stop", id="bench.stop", tooltip="Stop the running benchmark"),
        Binding("right_square_bracket", "shape(1)", "Next shape", id="bench.next_shape", tooltip="Plot the next shape"),
        Binding(
            "left_square_bracket",
            "shape(-1)",
            "Previous shape",
            id="bench.prev_shape",
            tooltip="Plot the previous shape",
        ),
    ]

    def __init__(self, gpu: dict | Literal[False] | None = False, comparison: dict | None = None) -> None:
        """``gpu``: a probe result (None = no GPU) or False to probe now; ``comparison``: the open one."""
        super().__init__()
        self._given = gpu
        self.comparison = comparison or {}
        recorded = self.comparison.get("bench")
        self.state: BenchState | None = BenchState.from_result(recorded) if recorded else None
        self.gpu: dict | None = None
        self.gpu_error: str | None = None
        self.shape_index = 0
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        with Vertical(id="bench") as box:
            box.border_title = "benchmark · A vs B on the local GPU"
            yield Static(Content.styled("Looking for a GPU…", "$text-muted"), id="gpu")
            yield Static(id="table")
            yield Static(id="kernels")
            yield PlotextPlot(id="plot")
            yield Static(id="status")

    def on_mount(self) -> None:
        if self._given is False:
            self.probe()
        else:
            self.post_message(GpuProbed(self._given or None))
        self.refresh_view()

    # ------------------------------------------------------------------ GPU probe

    @work(thread=True, exclusive=True, exit_on_error=False, group="gpu", description="probe the GPU")
    def probe(self) -> None:
        from cutediff_tui.core.gpu import local_gpu

        self.post_message(GpuProbed(local_gpu()))

    def bench_config(self):
        """The bench of the open comparison's recipe: FA4's default shapes, or the recipe's hook
        with the comparison's parameters (a sentence when it has none)."""
        from cutediff_tui.core.bench.plan import FA4_MODES
        from cutediff_tui.core.bench.runner import BenchConfig, check_hook
        from cutediff_tui.core.bench.shapes import DEFAULT_SHAPES
        from cutediff_tui.core.recipes import coerce_params, get_recipe

        rec = self.comparison.get("recipe") or {}
        name = rec.get("name", "fa4-fwdbwd")
        if name in FA4_MODES:
            return BenchConfig(DEFAULT_SHAPES, FA4_MODES[name], recipe=name), None
        info = get_recipe(name)
        params = coerce_params(info, rec.get("params") or {})
        return BenchConfig(entry=check_hook(info), params=params, recipe=name, mode="call"), info

    @on(GpuProbed)
    def show_gpu(self, message: GpuProbed) -> None:
        from cutediff_tui.core.bench.runner import SUPPORTED_FAMILIES
        from cutediff_tui.core.errors import CutediffError
        from cutediff_tui.core.gpu import arch_family

        self.gpu = message.gpu
        gpu = message.gpu
        name = (self.comparison.get("recipe") or {}).get("name", "fa4-fwdbwd")
        hook_error: str | None
        try:
            info = self.bench_config()[1]
        except CutediffError as exc:
            info, hook_error = None, exc.sentence()
        else:
            hook_error = None
        archs = info.archs if info is not None else SUPPORTED_FAMILIES
        if not gpu:
            self.gpu_error = (
                "No NVIDIA GPU was found (nvidia-smi is missing or lists none), so the benchmark "
                "cannot run here; the compile-only views still work."
            )
        elif hook_error:
            self.gpu_error = hook_error
        elif arch_family(gpu.get("arch", "sm_00")) not in archs:
            what = "has no FA4 kernel path" if info is None else f"cannot run recipe {name}"
            self.gpu_error = (
                f"The local GPU ({gpu.get('name')}, {gpu.get('arch')}) {what}, so the benchmark cannot run here."
            )
        else:
            self.gpu_error = None
        if self.gpu_error or not gpu:  # no GPU always has a gpu_error
            text = Content.assemble(("GPU: ", "bold"), (self.gpu_error or "", "$warning"))
        else:
            text = Content.assemble(
                ("GPU: ", "bold"),
                (f"{gpu.get('name')} ({gpu.get('arch')})", "$improvement"),
                " — press r to time A and B, interleaved.",
            )
        if self.state and not self.state.status:
            text = Content.assemble(text, "\n", ("Showing the bench recorded in this comparison.", "$text-muted"))
        self.query_one("#gpu", Static).update(text)

    # ------------------------------------------------------------------ running

    def action_start(self) -> None:
        if self.gpu_error or not self.gpu:
            self.notify(self.gpu_error or "No GPU found yet.", severity="warning")
            return
        self._cancel = threading.Event()
        self.state = BenchState(self.bench_config()[0].labels())
        self.state.status = "starting: building both toolchains and compiling on the GPU…"
        self.refresh_view()
        self.run_bench(self._cancel)

    def action_stop(self) -> None:
        self._cancel.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group="bench", description="benchmark A vs B")
    def run_bench(self, cancel: threading.Event) -> None:
        from cutediff_tui.core.bench.runner import run_bench
        from cutediff_tui.core.errors import CutediffError
        from cutediff_tui.core.events import Event, render_event
        from cutediff_tui.core.toolchain import create_env, parse_side

        def progress(m: Event | str) -> None:
            self.post_message(BenchEvent({"event": "status", "text": render_event(m)}))

        def listener(ev: dict) -> None:
            self.post_message(BenchEvent(ev))

        sides = self.comparison.get("sides", {})
        try:
            cfg, info = self.bench_config()
            env_a, env_b = (
                create_env(
                    parse_side(",".join([sides[s]["dsl"], *sides[s].get("pins", [])]), cuda=sides[s].get("cuda")),
                    progress=progress,
                )
                for s in SIDES
            )
            result = run_bench((env_a, env_b), cfg, listener, cancel, recipe=info)
            self.post_message(BenchEvent({"event": "done", "result": result}))
        except CutediffError as exc:
            self.post_message(BenchEvent({"event": "failed", "text": exc.sentence()}))

    @on(BenchEvent)
    def on_bench_event(self, message: BenchEvent) -> None:
        ev = message.event
        st = self.state
        if st is None:
            return
        kind = ev.get("event")
        if kind == "samples":
            st.add(ev["shape"], ev["side"], ev["ms"])
            st.status = f"round {ev['round'] + 1}: {ev['shape']} side {ev['side'].upper()}"
        elif kind == "ready":
            st.status = f"side {ev['side'].upper()}: {ev['shape']} compiled and ran once ({ev['seconds']} s)"
        elif kind == "status":
            st.status = ev["text"]
        elif kind == "done":
            st.status = f"finished in {ev['result'].get('seconds')} s"
            st.result = ev["result"]
            self.comparison["bench"] = ev["result"]
        elif kind == "failed":
            st.status = ev["text"]
        self.refresh_view()

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.group == "bench" and self.state:
            self.state.status = f"the benchmark stopped: {event.worker.error}"
            self.refresh_view()

    # ------------------------------------------------------------------ drawing

    def action_shape(self, step: int) -> None:
        if self.state and self.state.labels:
            self.shape_index = (self.shape_index + step) % len(self.state.labels)
            self.refresh_view()

    def refresh_view(self) -> None:
        table = self.query_one("#table", Static)
        status = self.query_one("#status", Static)
        plot = self.query_one("#plot", PlotextPlot)
        st = self.state
        if st is None:
            table.update(Content.styled("No bench yet for this comparison.", "$text-muted"))
            self.query_one("#kernels", Static).display = False
            status.update("")
            plot.display = False
            return
        plot.display = True
        sides = self.comparison.get("sides", {})
        la = f"A {sides.get('a', {}).get('dsl', '')}"
        lb = f"B {sides.get('b', {}).get('dsl', '')}"
        head = (
            f"{'shape':<14}{la + ' median (IQR)':>22}{lb + ' median (IQR)':>22}{'B/A':>8}{'95% interval':>18}  verdict"
        )
        parts: list[Any] = [(head, "bold"), "\n"]
        for row in st.rows():

            def cell(x: dict | None) -> str:
                return f"{x['median_ms']:.3f} ({x['iqr_ms']:.3f})" if x else "-"

            ratio = f"{row['ratio']:.4f}" if "ratio" in row else "-"
            ci = f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]" if "ci_low" in row else "-"
            verdict = row.get("verdict", "…")
            parts += [
                f"{row['label']:<14}{cell(row['a']):>22}{cell(row['b']):>22}{ratio:>8}{ci:>18}  ",
                (verdict, VERDICT_STYLE.get(verdict, "")),
                "\n",
            ]
        table.update(Content.assemble(*parts))
        detail = st.detail(self.comparison)
        kernels = self.query_one("#kernels", Static)
        kernels.display = bool(detail)
        kernels.update(Content.assemble(*[(t, style) if style else t for t, style in detail]))
        status.update(Content(st.status))  # recipe and worker text: never markup
        self._plot(plot, st)

    def _plot(self, plot: PlotextPlot, st: BenchState) -> None:
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        if not st.labels:
            return
        label = st.labels[self.shape_index % len(st.labels)]
        plt.title(f"{label}: samples (ms) in order, A and B  ·  [ ] other shapes")
        for side, colour in (("a", "blue"), ("b", "magenta")):
            ys = st.samples[label][side]
            if ys:
                plt.scatter(
                    list(range(len(ys))),
                    ys,
                    label=f"{side.upper()} {self.comparison.get('sides', {}).get(side, {}).get('dsl', '')}",
                    color=colour,
                    marker="braille",
                )
        plot.refresh()

    def action_close(self) -> None:
        self._cancel.set()
        self.dismiss(None)
