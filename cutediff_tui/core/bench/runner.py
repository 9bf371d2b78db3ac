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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CutediffError
from ..gpu import arch_family, local_gpu
from ..toolchain import Env
from .shapes import Shape
from .stats import DEFAULT_TOLERANCE, compare_samples

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


def check_gpu() -> dict:
    """The local GPU, or a sentence saying why the bench cannot run here."""
    gpu = local_gpu()
    if gpu is None:
        raise CutediffError(
            "No NVIDIA GPU was found (nvidia-smi is missing or lists none), so the benchmark cannot run here.",
            "Compile-only comparisons still work; run cutediff bench on a machine with a GPU.",
        )
    fam = arch_family(gpu["arch"])
    if fam not in SUPPORTED_FAMILIES:
        raise CutediffError(
            f"The local GPU ({gpu['name']}, {gpu['arch']}) has no FA4 kernel path (FA4 runs on sm_90/sm_100/sm_120 GPUs).",
            "Run the benchmark on a Hopper or Blackwell GPU.",
        )
    return gpu


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
    """How to run the bench."""

    shapes: tuple[Shape, ...]
    mode: str = "fwdbwd"
    rounds: int = 10
    warmup: int = 5
    iters: int = 20
    l2_flush: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    extra: dict = field(default_factory=dict)


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


def run_bench(
    envs: tuple[Env, Env], cfg: BenchConfig, listener: Listener = _noop, cancel: threading.Event | None = None
) -> dict:
    """Interleave rounds A, B, A, B… per shape; returns samples, statistics and GPU state."""
    gpu = check_gpu()
    before = gpu_snapshot()
    req = {
        "shapes": [s.to_json() for s in cfg.shapes],
        "mode": cfg.mode,
        "warmup": cfg.warmup,
        "iters": cfg.iters,
        "l2_flush": cfg.l2_flush,
    }
    workers = [SideWorker("a", envs[0]), SideWorker("b", envs[1])]
    samples: list[dict[str, list[float]]] = [{"a": [], "b": []} for _ in cfg.shapes]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cutediff-bench-") as tmp:
        try:
            for w in workers:
                w.start(req, Path(tmp))
            for w in workers:  # compile (JIT) and first call, one shape at a time
                for s in cfg.shapes:
                    ev = _expect(w, "ready")
                    listener({"event": "ready", "side": w.side, "shape": s.label, "seconds": ev.get("seconds")})
                _expect(w, "started")
            for r in range(cfg.rounds):
                order = workers if r % 2 == 0 else workers[::-1]
                for i, s in enumerate(cfg.shapes):
                    for w in order:
                        if cancel is not None and cancel.is_set():
                            raise CutediffError("The benchmark was stopped.", "Partial samples are kept in the pane.")
                        w.command(f"round {i}")
                        ev = _expect(w, "samples")
                        samples[i][w.side].extend(ev["ms"])
                        listener(
                            {
                                "event": "samples",
                                "side": w.side,
                                "shape": s.label,
                                "index": i,
                                "round": r,
                                "ms": ev["ms"],
                            }
                        )
        finally:
            for w in workers:
                w.stop()
    after = gpu_snapshot()
    results = []
    for s, sm in zip(cfg.shapes, samples):
        row = {"shape": s.to_json(), **compare_samples(sm["a"], sm["b"], cfg.tolerance), "samples": sm}
        results.append(row)
    return {
        "gpu": gpu,
        "gpu_before": before,
        "gpu_after": after,
        "mode": cfg.mode,
        "rounds": cfg.rounds,
        "warmup": cfg.warmup,
        "iters": cfg.iters,
        "l2_flush": cfg.l2_flush,
        "seconds": round(time.monotonic() - t0, 2),
        "shapes": results,
    }
