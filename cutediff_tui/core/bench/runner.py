"""Runs the bench: one long-lived worker per side on the local GPU, rounds alternating A and B."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CutediffError
from ..gpu import arch_family, local_gpu
from ..recipes import RecipeInfo
from ..toolchain import Env
from .shapes import Shape
from .stats import DEFAULT_TOLERANCE, compare_samples, summarize

Listener = Callable[[dict], None]
SUPPORTED_FAMILIES = (90, 100, 110, 120)


def _noop(_ev: dict) -> None:
    pass


def gpu_snapshot() -> dict | None:
    """Name, clocks, temperature and power of GPU 0 (nvidia-ml-py, else nvidia-smi), or None."""
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        name = pynvml.nvmlDeviceGetName(h)
        snap = {
            "name": name.decode() if isinstance(name, bytes) else name,
            "driver": pynvml.nvmlSystemGetDriverVersion(),
            "sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
            "mem_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
            "temperature_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
            "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000, 1),
            "source": "nvidia-ml-py",
        }
        if isinstance(snap["driver"], bytes):
            snap["driver"] = snap["driver"].decode()
        return snap
    except Exception:
        pass
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    q = "name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw"
    try:
        line = (
            subprocess.run(
                [smi, f"--query-gpu={q}", "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10
            )
            .stdout.strip()
            .splitlines()[0]
        )
    except (OSError, subprocess.SubprocessError, IndexError):
        return None
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 6:  # an nvidia-smi that answers the query in another shape: no snapshot, no crash
        return None

    def num(x: str) -> float | None:
        try:
            return float(x)
        except ValueError:
            return None

    return {
        "name": parts[0],
        "driver": parts[1],
        "sm_clock_mhz": num(parts[2]),
        "mem_clock_mhz": num(parts[3]),
        "temperature_c": num(parts[4]),
        "power_w": num(parts[5]),
        "source": "nvidia-smi",
    }


def check_gpu(recipe: RecipeInfo | None = None) -> dict:
    """The local GPU, or a sentence saying why the bench cannot run here (no GPU, or a GPU whose
    arch the recipe has no kernel for)."""
    gpu = local_gpu()
    if gpu is None:
        raise CutediffError(
            "No NVIDIA GPU was found (nvidia-smi is missing or lists none), so the benchmark cannot run here.",
            "Compile-only comparisons still work; run cutediff bench on a machine with a GPU.",
        )
    fam = arch_family(gpu["arch"])
    if recipe is None or recipe.name.startswith("fa4-"):
        if fam not in SUPPORTED_FAMILIES:
            raise CutediffError(
                f"The local GPU ({gpu['name']}, {gpu['arch']}) has no FA4 kernel path (FA4 runs on sm_90/sm_100/sm_120 GPUs).",
                "Run the benchmark on a Hopper or Blackwell GPU.",
            )
    elif fam not in recipe.archs:
        supported = ", ".join(f"sm_{a}" for a in recipe.archs)
        raise CutediffError(
            f"The local GPU ({gpu['name']}, {gpu['arch']}) cannot run recipe {recipe.name}, which has kernels for {supported} only.",
            "Run the benchmark on a GPU of one of those archs, or with --scheduler on a Dask worker that has one.",
        )
    return gpu


def check_hook(recipe: RecipeInfo) -> str:
    """The recipe's bench hook entry, or a sentence saying it has none."""
    if not recipe.bench:
        raise CutediffError(
            f"Recipe {recipe.name} has no bench hook, so cutediff cannot run its kernels on the GPU.",
            "Add a bench(ctx) function to the recipe file (or @recipe(..., bench='NAME')) that returns a callable "
            "running the compiled kernels once (docs/recipes.md).",
        )
    return recipe.bench


@dataclass
class SideWorker:
    """A bench worker process for one side."""

    side: str
    env: Env
    proc: subprocess.Popen | None = None
    events: Any = None
    log_path: Path | None = None

    def start(self, req: dict, workdir: Path) -> None:
        r, w = os.pipe()
        req = dict(req, site=str(self.env.site), local_paths=self.env.spec.local_paths(), event_fd=w)
        path = workdir / f"bench-{self.side}.json"
        path.write_text(json.dumps(req))
        self.log_path = workdir / f"bench-{self.side}.log"
        env = dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[3]))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cutediff_tui.core.bench.worker", str(path)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(w,),
                env=env,
                text=True,
                start_new_session=True,
            )
        os.close(w)
        self.events = os.fdopen(r, "r")

    def next_event(self) -> dict:
        assert self.events is not None
        line = self.events.readline()
        if not line:
            tail = self.log_path.read_text(errors="replace").strip().splitlines()[-3:] if self.log_path else []
            raise CutediffError(
                f"The bench worker for side {self.side.upper()} ended unexpectedly ({' | '.join(tail)[:300]}).",
                "Run with --debug and look at its log.",
            )
        return json.loads(line)

    def command(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.command("quit")
            self.proc.wait(timeout=20)
        except Exception:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass


@dataclass
class BenchConfig:
    """How to run the bench.

    ``shapes`` are FA4 problem shapes (each a case of the FA4 hook for ``mode``); for any other
    recipe, ``entry`` names its bench hook and ``params`` its parameters (one case), with
    ``side_params`` overriding them per side (``--a-param`` / ``--b-param``).
    """

    shapes: tuple[Shape, ...] = ()
    mode: str = "fwdbwd"
    rounds: int = 10
    warmup: int = 5
    iters: int = 20
    min_round_ms: float = 100.0  # more calls per round (and warm-up) for short cases; 0: exactly iters
    l2_flush: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    extra: dict = field(default_factory=dict)
    entry: str = ""
    params: dict = field(default_factory=dict)
    side_params: tuple[dict, dict] = field(default_factory=lambda: ({}, {}))
    kernels: bool = True  # per-kernel GPU time (CUPTI through torch.profiler), once per round
    profile: bool = False  # Nsight Compute on both sides after the rounds
    kernel_filter: str | None = None
    recipe: str = "fa4-fwdbwd"
    profile_dir: str | None = None  # keep ncu's CSV outputs here

    def hook(self) -> str:
        return self.entry or f"cutediff_tui.core.recipes.fa4:fa4_{self.mode}_bench"

    def cases(self, side: int) -> list[dict]:
        """The cases of one side (0 = A, 1 = B): label and the hook's parameters."""
        base = {**self.params, **self.side_params[side]}
        if self.shapes:
            from ..recipes import BUILTINS

            defaults = BUILTINS["fa4-fwd"].defaults()
            return [
                {
                    "label": s.label,
                    "params": {
                        **defaults,
                        **base,
                        "varlen": True,
                        "total": s.total,
                        "heads": s.heads,
                        "docs": s.docs,
                        "hdim": s.hdim,
                        "causal": s.causal,
                        "dtype": s.dtype,
                    },
                }
                for s in self.shapes
            ]
        return [{"label": self.label(), "params": base}]

    def label(self) -> str:
        if self.shapes:
            return ""
        a, b = self.side_params
        if a or b:
            show = lambda d: " ".join(f"{k}={v}" for k, v in d.items()) or "defaults"  # noqa: E731
            return f"{show(a)} vs {show(b)}"
        return "default"

    def labels(self) -> list[str]:
        return [s.label for s in self.shapes] if self.shapes else [self.label()]


def _expect(worker: SideWorker, want: str) -> dict:
    ev = worker.next_event()
    if ev.get("event") == "error":
        kind = ev.get("kind")
        msg = ev.get("message", "")
        if kind == "oom":
            raise CutediffError(
                f"Side {worker.side.upper()}: the GPU ran out of memory for a shape ({msg}).",
                "Use smaller shapes (--shape TOTALxHEADSh/DOCS).",
            )
        if kind == "arch":
            raise CutediffError(
                f"Side {worker.side.upper()}: the kernel was built for an architecture this GPU cannot run ({msg}).",
                "Run the bench on a GPU of the arch the kernel targets, or use a toolchain that supports this GPU.",
            )
        raise CutediffError(
            f"Side {worker.side.upper()}: the bench failed ({msg}).", "Run with --debug for the worker log."
        )
    if ev.get("event") != want:
        raise CutediffError(f"Side {worker.side.upper()}: unexpected bench event {ev.get('event')!r}.")
    return ev


def request(cfg: BenchConfig, side: int) -> dict:
    """The worker request of one side (without its environment)."""
    return {
        "entry": cfg.hook(),
        "cases": cfg.cases(side),
        "mode": cfg.mode,
        "warmup": cfg.warmup,
        "iters": cfg.iters,
        "min_round_ms": cfg.min_round_ms,
        "l2_flush": cfg.l2_flush,
    }


def kernel_rows(ka: dict[str, dict], kb: dict[str, dict], tolerance: float) -> list[dict]:
    """Per-kernel A/B rows (medians, B/A interval, verdict), kernels of one side only included."""
    rows = []
    for name in list(ka) + [n for n in kb if n not in ka]:
        a, b = ka.get(name), kb.get(name)
        row: dict = {"kernel": name, "launches": {"a": a and a["launches"], "b": b and b["launches"]}}
        if a and b and a["ms"] and b["ms"]:
            paired = (a["rounds"], b["rounds"]) if a.get("rounds") and b.get("rounds") else None
            row.update(compare_samples(a["ms"], b["ms"], tolerance, paired))
            row["samples"] = {"a": a["ms"], "b": b["ms"]}
            if paired:
                row["round_sizes"] = {"a": paired[0], "b": paired[1]}
        else:
            row.update(
                {
                    "a": summarize(a["ms"]).to_json() if a and a["ms"] else None,
                    "b": summarize(b["ms"]).to_json() if b and b["ms"] else None,
                    "verdict": "ONLY A" if a else "ONLY B",
                }
            )
        rows.append(row)
    return rows


def _interleaved(
    workers: list[SideWorker], rounds: int, labels: list[str], cancel: threading.Event | None
) -> Iterator[tuple[int, int, str, SideWorker]]:
    """(round, case index, label, worker) in run order: A then B in even rounds, B then A in odd
    ones, every case in each round; stops with one sentence when ``cancel`` is set."""
    for r in range(rounds):
        order = workers if r % 2 == 0 else workers[::-1]
        for i, label in enumerate(labels):
            for w in order:
                if cancel is not None and cancel.is_set():
                    raise CutediffError("The benchmark was stopped.", "Partial samples are kept in the pane.")
                yield r, i, label, w


def run_bench(
    envs: tuple[Env, Env],
    cfg: BenchConfig,
    listener: Listener = _noop,
    cancel: threading.Event | None = None,
    recipe: RecipeInfo | None = None,
) -> dict:
    """Interleave rounds A, B, A, B… per case; returns samples, statistics and GPU state."""
    from .kernels import merge_rounds

    gpu = check_gpu(recipe)
    before = gpu_snapshot()
    workers = [SideWorker("a", envs[0]), SideWorker("b", envs[1])]
    labels = cfg.labels()
    samples: list[dict[str, list[float]]] = [{"a": [], "b": []} for _ in labels]
    host: list[dict[str, list[float]]] = [{"a": [], "b": []} for _ in labels]
    sizes: list[dict[str, list[int]]] = [{"a": [], "b": []} for _ in labels]
    kernels: list[dict[str, list[dict]]] = [{"a": [], "b": []} for _ in labels]
    notes: dict[str, list[str]] = {"a": [], "b": []}
    callables: dict[str, list[str]] = {"a": [], "b": []}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cutediff-bench-") as tmp:
        try:
            for i, w in enumerate(workers):
                w.start(request(cfg, i), Path(tmp))
            for w in workers:  # compile (JIT) and first call, one case at a time
                for label in labels:
                    ev = _expect(w, "ready")
                    notes[w.side].extend(n for n in ev.get("notes", []) if n not in notes[w.side])
                    callables[w.side] = list(ev.get("callables", callables[w.side]))
                    listener({"event": "ready", "side": w.side, "shape": label, "seconds": ev.get("seconds")})
                _expect(w, "started")
            # whole-call times first: no profiler session runs in between
            for r, i, label, w in _interleaved(workers, cfg.rounds, labels, cancel):
                w.command(f"round {i}")
                ev = _expect(w, "samples")
                samples[i][w.side].extend(ev["ms"])
                sizes[i][w.side].append(len(ev["ms"]))
                if ev.get("host_ms") is not None:
                    host[i][w.side].append(ev["host_ms"])
                listener(
                    {
                        "event": "samples",
                        "side": w.side,
                        "shape": label,
                        "index": i,
                        "round": r,
                        "ms": ev["ms"],
                        "host_ms": ev.get("host_ms"),
                    }
                )
            # Per-kernel times in rounds of their own: measured on the H200, a round timed right after
            # its own process's torch.profiler session ran 5-15% slow, which made whole-call rounds noisy.
            for r, i, label, w in _interleaved(workers, cfg.rounds if cfg.kernels else 0, labels, cancel):
                w.command(f"kernels {i}")
                kev = _expect(w, "kernels")
                kernels[i][w.side].append(kev["kernels"])
                listener({"event": "kernels", "side": w.side, "shape": label, "index": i, "round": r})
        finally:
            for w in workers:
                w.stop()
    after = gpu_snapshot()
    results = []
    for i, (label, sm) in enumerate(zip(labels, samples)):
        row = {
            "shape": cfg.shapes[i].to_json() if cfg.shapes else {"label": label},
            **compare_samples(sm["a"], sm["b"], cfg.tolerance, (sizes[i]["a"], sizes[i]["b"])),
            "samples": sm,
            "round_sizes": sizes[i],
        }
        if host[i]["a"] and host[i]["b"]:
            from statistics import median

            row["host_ms"] = {"a": median(host[i]["a"]), "b": median(host[i]["b"]), "samples": host[i]}
        if cfg.kernels:
            row["kernels"] = kernel_rows(merge_rounds(kernels[i]["a"]), merge_rounds(kernels[i]["b"]), cfg.tolerance)
        results.append(row)
    out: dict[str, Any] = {
        "gpu": gpu,
        "gpu_before": before,
        "gpu_after": after,
        "recipe": cfg.recipe,
        "mode": cfg.mode,
        "rounds": cfg.rounds,
        "warmup": cfg.warmup,
        "iters": cfg.iters,
        "min_round_ms": cfg.min_round_ms,
        "l2_flush": cfg.l2_flush,
        "seconds": round(time.monotonic() - t0, 2),
        "shapes": results,
        "notes": notes,
        "callables": callables,
    }
    if cfg.profile:
        from .profile import profile_sides

        listener({"event": "profile", "kernel_filter": cfg.kernel_filter})
        reqs = (dict(request(cfg, 0), side="a"), dict(request(cfg, 1), side="b"))
        keep = Path(cfg.profile_dir) if cfg.profile_dir else None
        out["profile"] = profile_sides(envs, reqs, cfg.kernel_filter, callables, keep)
    from .explain import explain

    out["verdicts"] = explain(out)
    return out
