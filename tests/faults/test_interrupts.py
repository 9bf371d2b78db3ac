"""Stopping a compile from outside: Ctrl-C on ``cutediff compare``, its workers killed, a time limit.

The real CLI in a subprocess compiling FA4 forward under the real DSL 4.5.1 and 4.8.0 environments
(``--no-cache`` so that a compile really runs). Each stop ends in one line on stderr, and neither
artifacts/ nor envs/ keeps a temporary folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import FWD_SM100, PINS, ROOT, cli_env, default_sigint, leftovers, one_sentence
from .test_cache_faults import _alive, worker_pids

pytestmark = pytest.mark.slow


def _start_compare(cache: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cutediff_tui.cli",
            "compare",
            "4.5.1",
            "4.8.0",
            *PINS,
            *FWD_SM100,
            "--no-cache",
            "--no-lineinfo",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(cache),
        cwd=ROOT,
        preexec_fn=default_sigint,
    )


def _wait_for_workers(cache: Path, parent: int, n: int, timeout: float = 180) -> list[int]:
    """Wait until ``parent`` runs ``n`` compile workers (build folders in ``cache``); their pids."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = worker_pids(str(cache / "artifacts" / ".tmp-"), f"-{parent}-")
        if len(pids) >= n:
            return pids
        time.sleep(0.2)
    raise AssertionError("the compile workers never started")


def test_ctrl_c_during_compile_stops_cleanly(compile_cache, env48):
    proc = _start_compare(compile_cache, "-q")
    try:
        workers = _wait_for_workers(compile_cache, proc.pid, 2)
        time.sleep(3)  # inside the DSL import / the compile
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == ["interrupted: stopped the workers; nothing partial was kept in the cache."], err[-2000:]
    assert stopped_in < 20, stopped_in  # the workers are killed, not waited for
    assert not any(_alive(p) for p in workers)
    assert not leftovers(compile_cache, proc.pid), leftovers(compile_cache, proc.pid)


def test_workers_killed_from_outside(compile_cache, env48):
    """``kill -9`` on both compile workers (the OOM killer does this): one sentence, nothing cached."""
    proc = _start_compare(compile_cache, "-q")
    try:
        workers = _wait_for_workers(compile_cache, proc.pid, 2)
        time.sleep(2)
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    line = one_sentence(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert line.startswith("error: Both sides: the compile worker was killed (SIGKILL) before it finished."), line
    assert "Nothing was cached" in line
    assert not leftovers(compile_cache, proc.pid)


def test_time_limit_is_configurable(compile_cache, env48):
    """``--timeout 4``: a compile that runs longer is stopped, with the option named in the sentence."""
    t0 = time.monotonic()
    proc = _start_compare(compile_cache, "--timeout", "4", "-q")
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - t0 < 60
    line = one_sentence(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "the compile did not finish within 4 s and was stopped" in line and "--timeout" in line, line
    assert not leftovers(compile_cache, proc.pid)
