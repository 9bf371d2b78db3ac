"""Warm workers: one long-lived compile server per toolchain, so a compile skips the imports.

A cold compile starts a worker process that imports torch and the DSL (~4 s here) before a
0.2–0.7 s compile. A :class:`WarmWorker` starts :mod:`cutediff_tui.core.warm_server` once per
(toolchain environment, line-info switch); the server imports torch and the DSL and forks a child
per compile (the recipe and its helpers are imported afresh in each child, so an edit is always
seen; a crashing compile takes down its child only).

A :class:`WarmPool` holds the servers of one cutediff session (watch mode, the TUI, a sweep over
parameters). It is off unless a caller turns it on with :func:`session` (or :func:`enable`);
:func:`active` is what :mod:`cutediff_tui.core.build` asks. Servers are stopped when the session
ends (and by the server itself when this process dies: its stdin closes), when the pool holds
more than ``max_workers`` toolchains (least recently used first), when free memory runs low
(below :data:`MIN_AVAILABLE_MB`) or a server grew past :data:`RSS_CAP_MB`, and when its
toolchain's lock or cutediff's worker code changed. A server that died is replaced, and the
compile it was running is retried once (by :mod:`cutediff_tui.core.build`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .trace import stamp

__all__ = [
    "COMPILE_MEMORY_BYTES",
    "MIN_AVAILABLE_MB",
    "RSS_CAP_MB",
    "WarmDied",
    "WarmJob",
    "WarmPool",
    "WarmWorker",
    "active",
    "compile_slots",
    "disable",
    "enable",
    "session",
]

#: A server whose resident memory passes this is stopped after its compile. Measured
#: (benchmarks/bench_live.py, DSL 4.8.0): a warm server holds 365 MiB after importing torch and
#: the DSL and still 365 MiB after an FA4 forward compile, which runs in a child (peak 511 MiB);
#: the cap is ~3x that, for a server that grows anyway.
RSS_CAP_MB = 1024
#: Idle servers are stopped when the machine has less memory available than this.
MIN_AVAILABLE_MB = 1536
#: Seconds a server may take to import torch and the DSL before it is given up on.
READY_TIMEOUT = 180.0


class WarmDied(Exception):
    """The warm server went away (killed, crashed) while it held a compile."""


def available_mb() -> int | None:
    """MemAvailable of this machine in MiB (None where /proc/meminfo is not there)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


#: Memory one FA4-sized compile may take at its peak (measured ~1.6 GB; kept with room).
COMPILE_MEMORY_BYTES = 3 * 1024**3


def compile_slots() -> int:
    """Compiles this machine can run at once: one per core, fewer when memory is short."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        by_mem = max(1, avail // COMPILE_MEMORY_BYTES)
    except (ValueError, OSError, AttributeError):
        by_mem = cpus
    return max(1, min(cpus, by_mem))


def rss_mb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


@dataclass
class WarmJob:
    """One compile running in a warm server's child."""

    id: str
    on_event: Callable[[dict], Any]
    done: threading.Event = field(default_factory=threading.Event)
    rc: int | None = None
    pid: int | None = None
    maxrss_kb: int = 0
    died: bool = False


class WarmWorker:
    """A warm server for one toolchain environment and line-info switch (see the module doc)."""

    def __init__(self, key: tuple, executable: str, init: dict[str, Any], env: dict[str, str], log: Path) -> None:
        self.key = key
        self.executable = executable
        self.init = init
        self.env = env
        self.log_path = log
        self.proc: subprocess.Popen | None = None
        self.ready = threading.Event()
        self.ready_info: dict[str, Any] = {}
        self.jobs: dict[str, WarmJob] = {}
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.compiles = 0
        self.peak_child_kb = 0
        """The largest resident memory a compile child of this server reached (KiB)."""
        self._counter = 0
        self._reader: threading.Thread | None = None

    # -------------------------------------------------------------- lifetime

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [self.executable, "-m", "cutediff_tui.core.warm_server", json.dumps(self.init)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.env,
                cwd=str(self.log_path.parent),
                start_new_session=True,
            )
        self._reader = threading.Thread(target=self._read, name="cutediff-warm-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def busy(self) -> bool:
        with self.lock:
            return bool(self.jobs)

    def stop(self) -> None:
        """Kill the server and any child compiling (its process group), and fail their jobs."""
        proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        self._fail_all()

    def _fail_all(self) -> None:
        with self.lock:
            jobs, self.jobs = list(self.jobs.values()), {}
        for job in jobs:
            job.died = True
            job.done.set()
        self.ready.set()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            kind = ev.get("event")
            if kind == "ready":
                self.ready_info = ev
                self.ready.set()
                continue
            with self.lock:
                job = self.jobs.get(str(ev.get("job")))
            if job is None:
                continue
            if kind == "started":
                job.pid = int(ev["pid"])
                stamp("warm: child forked", t=ev.get("t"))
            elif kind == "exit":
                stamp("warm: child exited", t=ev.get("t"))
                job.rc = int(ev["rc"])
                job.maxrss_kb = int(ev.get("maxrss_kb") or 0)
                self.peak_child_kb = max(self.peak_child_kb, job.maxrss_kb)
                with self.lock:
                    self.jobs.pop(job.id, None)
                job.done.set()
            else:
                with contextlib.suppress(Exception):
                    job.on_event(ev)
        self._fail_all()  # end of output: the server is gone

    # -------------------------------------------------------------- compiles

    def submit(self, request_path: Path, on_event: Callable[[dict], Any]) -> WarmJob:
        """Start a compile of the request at ``request_path``; raises WarmDied if the server is gone."""
        if not self.ready.wait(READY_TIMEOUT) or not self.alive():
            raise WarmDied("the warm worker did not start")
        with self.lock:
            self._counter += 1
            job = WarmJob(f"{os.getpid()}-{self._counter}", on_event)
            self.jobs[job.id] = job
        req = json.loads(request_path.read_text())
        req["job"] = job.id
        request_path.write_text(json.dumps(req, indent=1))
        try:
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write((json.dumps({"job": job.id, "request": str(request_path)}) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError, AssertionError):
            with self.lock:
                self.jobs.pop(job.id, None)
            raise WarmDied("the warm worker is gone") from None
        self.last_used = time.monotonic()
        self.compiles += 1
        return job

    def cancel(self, job: WarmJob) -> None:
        """Kill the child running ``job`` (the server reports its exit)."""
        deadline = time.monotonic() + 5
        while job.pid is None and not job.done.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        if job.pid is not None and not job.done.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(job.pid, signal.SIGKILL)
        job.done.wait(10)


class WarmPool:
    """The warm servers of one session, keyed by toolchain environment and line-info switch."""

    def __init__(self, *, max_workers: int = 4, root: Path | None = None) -> None:
        self.max_workers = max_workers
        self.workers: dict[tuple, WarmWorker] = {}
        self.lock = threading.Lock()
        self.root = root
        self.started = 0
        self.replaced = 0
        self.stopped_for: list[str] = []

    def _log_dir(self) -> Path:
        if self.root is not None:
            return self.root
        from .paths import cache_dir

        return cache_dir() / "warm"

    def worker(self, key: tuple, executable: str, init: dict[str, Any], env: dict[str, str]) -> WarmWorker:
        """The warm server for ``key`` (started when there is none, replaced when it died)."""
        with self.lock:
            w = self.workers.get(key)
            if w is not None and not w.alive():
                self.workers.pop(key, None)
                self.replaced += 1
                w.stop()
                w = None
            if w is None:
                # key = (env name, lock digest, worker code, ..., line info, ...): the same env with
                # another lock or worker code is a changed toolchain, another line-info switch is not
                for old_key in [k for k in self.workers if k[0] == key[0] and k[1:4] != key[1:4]]:
                    self._stop_locked(old_key, "its toolchain changed")
                log = self._log_dir() / f"server-{os.getpid()}-{len(self.workers)}-{self.started}.log"
                w = WarmWorker(key, executable, init, env, log)
                w.start()
                self.started += 1
                self.workers[key] = w
                self._trim_locked(keep=key)
            w.last_used = time.monotonic()
            return w

    def _stop_locked(self, key: tuple, why: str) -> None:
        w = self.workers.pop(key, None)
        if w is not None:
            self.stopped_for.append(why)
            w.stop()

    def _trim_locked(self, keep: tuple | None = None) -> None:
        idle = sorted((w for k, w in self.workers.items() if k != keep and not w.busy()), key=lambda w: w.last_used)
        while len(self.workers) > self.max_workers and idle:
            self._stop_locked(idle.pop(0).key, "too many toolchains are warm")
        avail = available_mb()
        while avail is not None and avail < MIN_AVAILABLE_MB and idle:
            self._stop_locked(idle.pop(0).key, f"memory is low ({avail} MiB available)")
            avail = available_mb()

    def release(self, key: tuple, why: str, *, idle_s: float = 0.25) -> bool:
        """Stop the server of ``key`` now (a watch that will not use it) unless it is starting,
        compiling or was handed out in the last ``idle_s`` seconds; True when one was stopped.
        A later compile starts it again."""
        with self.lock:
            w = self.workers.get(key)
            if w is None or w.busy() or not w.ready.is_set() or time.monotonic() - w.last_used < idle_s:
                return False
            self._stop_locked(key, why)
            return True

    def holds(self, key: tuple) -> bool:
        """Whether a server for ``key`` is kept (running or starting)."""
        with self.lock:
            return key in self.workers

    def after_compile(self, worker: WarmWorker) -> None:
        """Apply the memory cap once a compile has ended."""
        with self.lock:
            pid = worker.pid
            if pid is not None and rss_mb(pid) > RSS_CAP_MB and not worker.busy():
                self._stop_locked(worker.key, f"its memory passed {RSS_CAP_MB} MiB")
            self._trim_locked()

    def shutdown(self) -> None:
        with self.lock:
            for key in list(self.workers):
                self._stop_locked(key, "the session ended")

    def pids(self) -> list[int]:
        with self.lock:
            return [w.pid for w in self.workers.values() if w.pid is not None and w.alive()]


_ACTIVE: WarmPool | None = None
_ACTIVE_LOCK = threading.Lock()


def active() -> WarmPool | None:
    """The session's pool, or None when compiles run in one-shot workers."""
    if os.environ.get("CUTEDIFF_WARM", "1") == "0":
        return None
    return _ACTIVE


def enable(pool: WarmPool | None = None) -> WarmPool:
    """Turn warm workers on for this process (returns the pool; :func:`disable` stops it)."""
    global _ACTIVE
    with _ACTIVE_LOCK:
        if _ACTIVE is None:
            _ACTIVE = pool or WarmPool()
        return _ACTIVE


def disable() -> None:
    """Stop every warm server and go back to one-shot workers."""
    global _ACTIVE
    with _ACTIVE_LOCK:
        pool, _ACTIVE = _ACTIVE, None
    if pool is not None:
        pool.shutdown()


@contextlib.contextmanager
def session() -> Iterator[WarmPool]:
    """Warm workers for the duration of a ``with`` block (nested blocks share the outer pool)."""
    outer = _ACTIVE is not None
    pool = enable()
    try:
        yield pool
    finally:
        if not outer:
            disable()
