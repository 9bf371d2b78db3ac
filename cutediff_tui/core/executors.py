"""Where probes run: a local process pool sized to the machine, or a Dask cluster.

Why Dask (distributed) and not Ray: a probe is a coarse, independent task (minutes of compile in a
subprocess, a few kB of figures back), which is exactly what ``Client.submit``/``as_completed``
do; Dask is pure Python (one small wheel, no raylet/object-store daemons, no pinned Python
builds), its ``LocalCluster`` gives CI a real multi-process cluster in one line, and an existing
cluster is reached with ``--scheduler tcp://HOST:8786``. Each worker builds the toolchain
environments it needs from the package index or from a wheelhouse every worker can read
(``--wheelhouse``), in its own cutediff cache.

An executor has ``map_unordered(probes)`` yielding ``(probe, result)`` as probes finish,
``describe()`` and ``close()``; it is a context manager.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any

from .errors import CutediffError
from .probe import Probe, run_probe
from .warm import compile_slots


def shares_a_toolchain(probes: list[Probe]) -> bool:
    """Whether two probes build with the same toolchain (then a warm worker pays off)."""
    keys = [(p.side, tuple(p.pins), p.cuda, p.python, p.wheelhouse) for p in probes]
    return len(set(keys)) < len(keys)


def default_jobs() -> int:
    """Parallel probes this machine can take: one per core, fewer when memory is short
    (:func:`.warm.compile_slots`)."""
    return compile_slots()


def _failed(probe: Probe, exc: BaseException) -> dict:
    return {
        "key": probe.key(),
        "side": probe.side,
        "toolchain": probe.side,
        "arch": probe.profile.arch,
        "gpu": probe.profile.name,
        "params": probe.params,
        "axis": probe.axis,
        "status": "failed",
        "why": f"the probe crashed on its worker ({type(exc).__name__}: {str(exc)[:200]})",
        "kernels": [],
        "stage": "executor",
    }


class LocalExecutor:
    """Probes on this machine, ``jobs`` at a time.

    Probes of :func:`~.probe.run_probe` of which two or more share a toolchain (a sweep over
    parameters) build on warm workers (:mod:`.warm`): threads of this process hand each compile
    to the warm server of its toolchain, which imported torch and the DSL once and forks a child
    per compile, so the imports are paid once per toolchain instead of once per cell. Probes of
    as many toolchains as there are probes (bisect rounds) gain nothing from a warm server and
    keep the process pool below. A compile child that dies takes its cell only (the warm
    worker is replaced and the compile retried once, by :mod:`.build`); Ctrl-C cancels the
    compiles in flight and stops the servers. ``warm_started`` counts the servers a run started.

    Any other ``fn`` (and every probe with ``CUTEDIFF_WARM=0``) runs in a pool of worker processes
    (spawned, so no thread state is forked). When a worker process dies (the OOM killer, a segfault
    in a native library) the pool is broken for every probe still in it; the unfinished probes then
    go to a fresh pool, up to ``MAX_RESTARTS`` times, so that one crash does not fail the whole sweep.
    """

    kind = "local"
    MAX_RESTARTS = 2

    def __init__(self, jobs: int | None = None, fn: Callable[[Probe], dict] = run_probe):
        self.jobs = jobs or default_jobs()
        self.fn = fn
        self._pool: ProcessPoolExecutor | None = None
        self.warm_started = 0
        """Warm servers the last run started (one per toolchain; 0 when probes ran in processes)."""

    @property
    def warm(self) -> bool:
        """Whether probes build on warm workers (see the class doc)."""
        return self.fn is run_probe and os.environ.get("CUTEDIFF_WARM", "1") != "0"

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def describe(self) -> dict:
        return {"kind": self.kind, "workers": self.jobs}

    def map_unordered(self, probes: list[Probe]) -> Iterator[tuple[Probe, dict]]:
        if not probes:
            return
        import multiprocessing
        from concurrent.futures.process import BrokenProcessPool

        if self.warm and shares_a_toolchain(probes):
            yield from self._map_warm(probes)
            return
        if self.jobs == 1 or len(probes) == 1:
            for p in probes:  # no pool to start for one probe at a time
                yield p, self.fn(p)
            return
        pending = list(probes)
        for _attempt in range(self.MAX_RESTARTS + 1):
            self._pool = ProcessPoolExecutor(
                max_workers=min(self.jobs, len(pending)), mp_context=multiprocessing.get_context("spawn")
            )
            futures: dict[Future, Probe] = {self._pool.submit(self.fn, p): p for p in pending}
            broken: list[Probe] = []
            try:
                for fut in as_completed(futures):
                    p = futures[fut]
                    try:
                        res = fut.result()
                    except BrokenProcessPool:
                        broken.append(p)
                        continue
                    except Exception as exc:
                        res = _failed(p, exc)
                    yield p, res
            finally:
                self.close()
            if not broken:
                return
            pending = broken
        why = RuntimeError("a worker process died each time this probe ran (killed for memory, or a crash)")
        for p in pending:
            yield p, _failed(p, why)

    def _map_warm(self, probes: list[Probe]) -> Iterator[tuple[Probe, dict]]:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        from . import warm

        cancel = threading.Event()
        with warm.session() as session:
            started = session.started
            pool = ThreadPoolExecutor(max_workers=min(self.jobs, len(probes)), thread_name_prefix="cutediff-probe")
            try:
                futures = {pool.submit(run_probe, p, cancel=cancel): p for p in probes}
                for fut in as_completed(futures):
                    p = futures[fut]
                    try:
                        res = fut.result()
                    except Exception as exc:
                        res = _failed(p, exc)
                    yield p, res
            finally:
                # Ctrl-C (or the caller stopped early): kill the compiles in flight, let their
                # threads remove the half-written builds, then the session stops the servers
                cancel.set()
                pool.shutdown(wait=True, cancel_futures=True)
                self.warm_started = session.started - started

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor:
    """Probes as Dask tasks: on an existing scheduler (``address``) or on a local cluster."""

    kind = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise CutediffError(
                "The Dask executor needs the distributed package, which is not installed.",
                'Install it with pip install "cutediff[distributed]" (or pip install distributed).',
            ) from None
        import logging

        self.address = address
        self.cluster = None
        try:
            if address:
                self.client = Client(address, timeout=10)
            else:
                n = workers or default_jobs()
                self.cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                self.client = Client(self.cluster)
        except OSError as exc:
            if not address:
                raise CutediffError(
                    f"The local Dask cluster did not start ({exc}).",
                    "Run with --executor local, or check for free ports and memory.",
                ) from None
            raise CutediffError(
                f"Could not reach the Dask scheduler at {address} ({exc}).",
                "Check the address (tcp://HOST:8786) and that the scheduler runs.",
            ) from None

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def describe(self) -> dict:
        info = self.client.scheduler_info()
        return {
            "kind": self.kind,
            "address": self.client.scheduler.address,
            "workers": len(info.get("workers", {})),
            "local_cluster": self.cluster is not None,
        }

    def map_unordered(self, probes: list[Probe]) -> Iterator[tuple[Probe, dict]]:
        from distributed import as_completed as dask_completed

        futures = {
            self.client.submit(run_probe_on_worker, p, pure=False, key=f"cutediff-probe-{p.key()}-{i}"): p
            for i, p in enumerate(probes)
        }
        try:
            for fut in dask_completed(list(futures)):
                p = futures[fut]
                try:
                    yield p, fut.result()
                except Exception as exc:
                    yield p, _failed(p, exc)
        finally:
            for f in futures:
                if not f.done():
                    f.cancel()

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def run_probe_on_worker(probe: Probe) -> dict:
    """:func:`run_probe` on a Dask worker, recording which worker ran it."""
    from distributed import get_worker

    res = run_probe(probe)
    try:
        res["worker"] = get_worker().address
    except ValueError:
        pass
    return res


def make_executor(kind: str = "local", *, jobs: int | None = None, address: str | None = None):
    if kind == "local":
        if address:
            raise CutediffError(
                "--scheduler names a Dask scheduler, but --executor local was asked for.",
                "Use --executor dask with --scheduler, or drop --scheduler.",
            )
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(address, jobs)
    raise CutediffError(f"Unknown executor {kind!r}.", "Use --executor local or --executor dask.")
