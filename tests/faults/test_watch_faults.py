"""Faults of the live loop: warm workers and watch mode (real DSL 4.8.0 environment, real compiles).

A warm worker killed mid-compile is replaced and the compile retried once; a watched recipe that
is deleted gives one sentence and is picked up again when it comes back; two quick saves give one
result, of the last content; Ctrl-C ends ``--watch`` with one sentence and leaves no process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cutediff_tui.core import warm
from cutediff_tui.core.build import BuildRequest, compile_build, warm_key
from cutediff_tui.core.events import render_event
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.recipes import coerce_params, get_recipe

from .helpers import PIN_LIST, PINS, ROOT, default_sigint

pytestmark = pytest.mark.slow
SAMPLE = ROOT / "samples" / "recipes" / "elementwise_add.py"
BODY = '    """Elementwise add C = A + B on a (dynamic rows x cols) row-major tensor."""\n'


def recipe_copy(folder: Path, name: str, *, sleep: float = 0.0, vec: int = 4) -> Path:
    """The sample recipe, optionally sleeping before its compile, with another default ``vec``."""
    text = SAMPLE.read_text().replace('Param("vec", "int", 4,', f'Param("vec", "int", {vec},')
    if sleep:
        text = text.replace(BODY, BODY + f"    import time\n    time.sleep({sleep})\n")
    f = folder / name
    f.write_text(text)
    return f


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_warm_worker_killed_mid_compile_is_replaced_and_the_compile_retried(own_cache, env48, tmp_path):
    rec_file = recipe_copy(tmp_path, "sleepy_add.py", sleep=4)
    recipe = get_recipe(str(rec_file))
    req = BuildRequest(env48, recipe, coerce_params(recipe, {}), resolve_profile(arch="sm_90a"))
    notes: list[str] = []
    result: dict = {}
    with warm.session() as pool:

        def run() -> None:
            try:
                result["build"] = compile_build(req, progress=lambda e: notes.append(render_event(e)))
            except Exception as exc:  # reported below
                result["error"] = exc

        t = threading.Thread(target=run)
        t.start()
        deadline = time.monotonic() + 300
        server = None
        while time.monotonic() < deadline and server is None:  # wait until a child compiles
            w = pool.workers.get(warm_key(req.env, req.lineinfo))
            if w is not None and any(j.pid for j in list(w.jobs.values())):
                server = w.pid
            time.sleep(0.05)
        assert server is not None, notes
        os.kill(server, signal.SIGKILL)
        t.join(300)
        assert "build" in result, result.get("error")
        assert len(result["build"].kernels) == 1
        assert any("warm compile worker died" in n and "compiling again" in n for n in notes), notes
        assert pool.replaced == 1 and pool.pids() and server not in pool.pids()
    assert not pool.pids()  # the session stopped its servers
    assert not list((own_cache / "artifacts").glob(".tmp-*"))


def _watch(opts_file: Path, **kw):
    from cutediff_tui.core.options import compare_options
    from cutediff_tui.core.recipes.sources import plan_sources
    from cutediff_tui.core.watch import CompareWatch

    opts = compare_options("4.8.0", "4.8.0", {"kernel": str(opts_file), "arch": "sm_90a", "with_": tuple(PIN_LIST)})
    results: list = []
    errors: list = []
    watch = CompareWatch(
        opts,
        plan_sources(opts.recipe),
        interval=0.05,
        on_result=lambda c, ch: results.append((c, ch)),
        on_error=lambda msg, ch: errors.append(msg),
        **kw,
    )
    return watch, results, errors


def _until(pred, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_recipe_deleted_while_watched_then_back(own_cache, env48, tmp_path):
    rec_file = recipe_copy(tmp_path, "gone_add.py")
    watch, results, errors = _watch(rec_file)
    with warm.session():
        watch.start(initial=False)
        try:
            time.sleep(0.3)
            rec_file.unlink()
            assert _until(lambda: errors, 60), "no error after the recipe was deleted"
            assert "gone_add.py does not exist" in errors[0] and "Traceback" not in errors[0]
            assert not results
            recipe_copy(tmp_path, "gone_add.py", vec=2)
            assert _until(lambda: results, 300), errors
            assert results[-1][0]["recipe"]["params"]["vec"] == 2
        finally:
            watch.stop()


def test_two_quick_saves_give_one_result_of_the_last_content(own_cache, env48, tmp_path):
    rec_file = recipe_copy(tmp_path, "twice_add.py")
    started: list = []
    watch, results, errors = _watch(rec_file, on_start=started.append)
    with warm.session():
        watch.start(initial=False)
        try:
            time.sleep(0.3)
            recipe_copy(tmp_path, "twice_add.py", vec=8)
            time.sleep(0.02)
            recipe_copy(tmp_path, "twice_add.py", vec=2)
            assert _until(lambda: results, 300), errors
            time.sleep(3)  # nothing else arrives
        finally:
            watch.stop()
    assert len(results) == 1, [r[0]["recipe"]["params"] for r in results]
    assert results[0][0]["recipe"]["params"]["vec"] == 2
    assert not errors


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    out, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "(gone)"


class WatchProcess:
    """``cutediff compare 4.8.0 4.8.0 --kernel RECIPE --watch`` in a subprocess; its stderr is
    collected as it comes (a thread reads it, so a full pipe never blocks the watch)."""

    def __init__(self, cache: Path, recipe: Path, *, background: bool = False) -> None:
        env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cutediff_tui.cli", "compare", "4.8.0", "4.8.0", *PINS]
            + ["--kernel", str(recipe), "--arch", "sm_90a", "--watch"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            # SIGINT as a terminal's foreground job has it, or ignored, as a shell leaves it for a
            # job it starts in the background (`cutediff ... &` in a script, CI under nohup ... &)
            preexec_fn=_ignore_sigint if background else default_sigint,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def err(self) -> str:
        return "".join(self.lines)

    def compiling(self) -> bool:
        """A compile runs now: a warm server has forked a child for it."""
        return any(children(s) for s in children(self.proc.pid))

    def interrupt(self, within: float = 10) -> tuple[str, list[int]]:
        """Ctrl-C; returns stderr and the processes that were below cutediff. Fails, with a dump of
        cutediff's threads (SIGUSR1) and of its processes, when it has not exited ``within`` s."""
        below = descendants(self.proc.pid)
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=within)
        except subprocess.TimeoutExpired:
            tree = "\n".join(f"{p} {_cmdline(p)}" for p in [self.proc.pid, *descendants(self.proc.pid)])
            self.proc.send_signal(signal.SIGUSR1)  # faulthandler: every thread's stack, on stderr
            time.sleep(2)
            self.proc.kill()
            self.proc.wait(30)
            self._reader.join(10)
            pytest.fail(f"still running {within} s after Ctrl-C; processes:\n{tree}\nstderr:\n{self.err[-6000:]}")
        self._reader.join(10)
        return self.err, below

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


@pytest.mark.parametrize(
    ("when", "background"),
    [("first compile", False), ("watching", False), ("recompile", False), ("watching", True)],
    ids=["first-compile", "watching", "recompile", "watching-started-in-background"],
)
def test_ctrl_c_stops_watch_with_one_sentence_and_no_process_left(own_cache, env48, tmp_path, when, background):
    """Ctrl-C ends ``--watch`` within 10 s wherever it lands: during the first compile, while
    watching, during a recompile; one sentence, no traceback, no process left behind. Also when
    cutediff was started with SIGINT ignored (how a shell starts a background job: the CI hang of
    issue 36, where the watch went on after Ctrl-C)."""
    rec_file = recipe_copy(tmp_path, "interrupted_add.py", sleep=60 if when == "first compile" else 0)
    watch = WatchProcess(own_cache, rec_file, background=background)
    try:
        if when == "first compile":
            assert _until(lambda: watch.compiling() or watch.proc.poll() is not None, 300), watch.err[-2000:]
        else:
            assert _until(lambda: watch.proc.poll() is not None or "watching 1 file" in watch.err, 300)
            if when == "recompile":
                recipe_copy(tmp_path, "interrupted_add.py", sleep=60, vec=2)
                assert _until(lambda: "changed: recompiling" in watch.err and watch.compiling(), 120), watch.err[-2000:]
        assert watch.proc.poll() is None, watch.err[-2000:]
        err, below = watch.interrupt(within=10)
    finally:
        watch.kill()
    assert "stopped watching." in err and "Traceback" not in err, err[-2000:]
    assert watch.proc.returncode == 0, (watch.proc.returncode, err[-2000:])  # stopping a watch is no failure
    assert below and _until(lambda: not any(alive(p) for p in below), 10), [p for p in below if alive(p)]


def test_ctrl_c_in_the_tui_watch_during_a_recompile_quits_and_leaves_no_process(own_cache, env48, tmp_path):
    """``compare --watch --tui`` in a real pseudo-terminal (120x36): Ctrl-C while a save recompiles
    quits within 10 s; the compile in flight, its warm server and every child are gone."""
    import fcntl
    import pty
    import struct
    import termios

    rec_file = recipe_copy(tmp_path, "tui_add.py")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(own_cache), TERM="xterm-256color", COLUMNS="120", LINES="36")
    proc = subprocess.Popen(
        [sys.executable, "-m", "cutediff_tui.cli", "compare", "4.8.0", "4.8.0", *PINS]
        + ["--kernel", str(rec_file), "--arch", "sm_90a", "--watch", "--tui"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        preexec_fn=default_sigint,
    )
    os.close(slave)
    screen = bytearray()

    def drain() -> None:  # the terminal's side: read all the app draws, so that it never blocks
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            screen.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert _until(lambda: b"Watching" in screen or proc.poll() is not None, 300), bytes(screen[-2000:])
        assert proc.poll() is None, bytes(screen[-2000:])
        recipe_copy(tmp_path, "tui_add.py", sleep=60, vec=2)
        assert _until(lambda: any(children(s) for s in children(proc.pid)), 120), "no recompile started"
        below = descendants(proc.pid)
        os.write(master, b"\x03")  # Ctrl-C as the terminal sends it to an app in raw mode
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tree = "\n".join(f"{p} {_cmdline(p)}" for p in [proc.pid, *descendants(proc.pid)])
            proc.send_signal(signal.SIGUSR1)
            time.sleep(2)
            pytest.fail(f"the TUI still runs 10 s after Ctrl-C; processes:\n{tree}\nscreen:\n{bytes(screen[-4000:])!r}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        os.close(master)
    assert proc.returncode == 0, bytes(screen[-2000:])
    assert b"Traceback" not in screen
    assert below and _until(lambda: not any(alive(p) for p in below), 10), [p for p in below if alive(p)]


def test_a_compile_waiting_for_another_cutediffs_lock_gives_way_to_ctrl_c(own_cache, env48, tmp_path):
    """Another cutediff holds this build's lock (it compiles the same build): the watch's compile
    waits for it, and a cancel (Ctrl-C of the watch) ends the wait within a second, not when the
    other one is done."""
    from cutediff_tui.core.errors import CompileError
    from cutediff_tui.core.paths import artifacts_dir

    recipe = get_recipe(str(recipe_copy(tmp_path, "locked_add.py")))
    req = BuildRequest(env48, recipe, coerce_params(recipe, {}), resolve_profile(arch="sm_90a"))
    lock = artifacts_dir() / f".{req.key()}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from filelock import FileLock\n"
            "held = FileLock(sys.argv[1]); held.acquire(); print('held', flush=True); time.sleep(300)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        cancel = threading.Event()
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["build"] = compile_build(req, cancel=cancel)
            except CompileError as exc:
                outcome["error"] = exc.sentence()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        time.sleep(1.5)
        assert t.is_alive() and not outcome, outcome  # waiting for the other holder
        t0 = time.monotonic()
        cancel.set()
        t.join(10)
        assert not t.is_alive(), "the compile still waits for the lock after the cancel"
        print(f"cancel to end of the wait: {time.monotonic() - t0:.2f} s")
    finally:
        holder.kill()
        holder.wait(10)
    assert "the compile was cancelled" in outcome.get("error", ""), outcome
    assert not list((own_cache / "artifacts").glob(".tmp-*"))
