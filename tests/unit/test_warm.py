"""Warm workers without a DSL: the server protocol, a compile that fails in its child, a dead
server replaced, a changed toolchain stopping the old server, shutdown leaving no process.

Real server processes (this Python; the DSL is absent, so each compile ends at the import)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from cutediff_tui.core import warm
from cutediff_tui.core.build import worker_env


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _request(tmp: Path, name: str) -> Path:
    out = tmp / name
    out.mkdir()
    req = {
        "site": str(tmp / "site"),
        "local_paths": [],
        "out_dir": str(out),
        "arch": "sm_90a",
        "num_sms": 132,
        "recipe_entry": "nowhere.py:recipe",
        "params": {},
    }
    path = out / "request.json"
    path.write_text(json.dumps(req))
    return path


def _pool(tmp_path: Path) -> tuple[warm.WarmPool, tuple, dict]:
    """A pool, the key of a plain-build server and its init (this Python; no DSL in its site)."""
    (tmp_path / "site").mkdir()
    init = {"site": str(tmp_path / "site"), "local_paths": [], "lineinfo": False}
    return warm.WarmPool(root=tmp_path / "logs"), ("env-x", "lock-1", "worker", (), False), init


def test_server_runs_a_compile_in_a_child_and_is_replaced_when_it_dies(tmp_path):
    pool, key, init = _pool(tmp_path)
    try:
        w = pool.worker(key, sys.executable, init, worker_env())
        events: list[dict] = []
        job = w.submit(_request(tmp_path, "one"), events.append)
        assert job.done.wait(120)
        assert w.ready_info.get("event") == "ready" and "cutlass" in str(w.ready_info.get("error"))
        assert job.rc == 3 and not job.died and job.pid and job.pid != w.pid
        err = json.loads((tmp_path / "one" / "error.json").read_text())
        assert err["stage"] == "import" and err["type"] in ("ModuleNotFoundError", "ImportError")
        assert any(e.get("event") == "error" and e.get("job") == job.id for e in events), events

        os.kill(w.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while w.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        again = pool.worker(key, sys.executable, init, worker_env())
        assert again is not w and pool.replaced == 1 and again.alive()

        changed = pool.worker(("env-x", "lock-2", "worker", (), False), sys.executable, init, worker_env())
        assert not again.alive() and changed.alive() and "its toolchain changed" in pool.stopped_for
        pids = pool.pids()
        assert pids == [changed.pid]
    finally:
        pool.shutdown()
    assert not pool.pids()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)


def test_a_server_whose_client_goes_away_ends(tmp_path):
    """End of stdin (cutediff died) ends the server: no orphan keeps compiling."""
    (tmp_path / "site").mkdir()
    w = warm.WarmWorker(("k",), sys.executable, {"site": str(tmp_path / "site")}, worker_env(), tmp_path / "s.log")
    w.start()
    assert w.ready.wait(120)
    assert w.proc is not None and w.proc.stdin is not None
    w.proc.stdin.close()
    assert w.proc.wait(timeout=30) == 0


def test_session_is_off_by_default_and_cutediff_warm_0_turns_it_off(monkeypatch):
    assert warm.active() is None
    with warm.session() as pool:
        assert warm.active() is pool
        monkeypatch.setenv("CUTEDIFF_WARM", "0")
        assert warm.active() is None
        monkeypatch.delenv("CUTEDIFF_WARM")
        with warm.session() as inner:
            assert inner is pool
        assert warm.active() is pool
    assert warm.active() is None


def test_a_dsl_a_warm_worker_cannot_reuse_is_compiled_in_a_fresh_worker(tmp_path, monkeypatch):
    """A DSL without the settings singleton a warm child refreshes (old releases): the warm child
    says so, and the compile goes on in a one-shot worker instead of failing (here it then stops
    in the recipe, since this stand-in DSL compiles nothing)."""
    from cutediff_tui.core.build import NOT_REUSABLE, BuildRequest, compile_build
    from cutediff_tui.core.errors import CompileError
    from cutediff_tui.core.events import render_event
    from cutediff_tui.core.gpu import resolve_profile
    from cutediff_tui.core.recipes import coerce_params, get_recipe
    from cutediff_tui.core.toolchain import Env, parse_side

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    env = Env(tmp_path / "env", parse_side("4.8.0"), "stand-in")
    (env.site / "cutlass" / "cute").mkdir(parents=True)
    (env.site / "cutlass" / "__init__.py").write_text("")
    (env.site / "cutlass" / "cute" / "__init__.py").write_text("")
    recipe = get_recipe(str(Path(__file__).resolve().parents[2] / "samples" / "recipes" / "elementwise_add.py"))
    req = BuildRequest(env, recipe, coerce_params(recipe, {}), resolve_profile(arch="sm_90a"))
    notes: list[str] = []
    with warm.session() as pool:
        try:
            compile_build(req, progress=lambda e: notes.append(render_event(e)))
        except CompileError as exc:
            error = exc
        assert pool.started == 1
    assert any(NOT_REUSABLE in n and "compiling in a fresh one" in n for n in notes), notes
    assert NOT_REUSABLE not in error.sentence() and "Traceback" not in error.sentence(), error.sentence()
    # the fresh worker got past the import to where the stand-in lacks cute.compile
    assert "module 'cutlass.cute' has no attribute 'compile'" in error.sentence(), error.sentence()


def test_a_server_the_watch_will_not_use_is_released_only_when_idle(tmp_path):
    pool, key, init = _pool(tmp_path)
    try:
        w = pool.worker(key, sys.executable, init, worker_env())
        assert not pool.release(key, "unused")  # still importing: someone is about to use it
        assert w.ready.wait(60)
        assert pool.worker(key, sys.executable, init, worker_env()) is w
        assert not pool.release(key, "unused", idle_s=5)  # handed out just now
        job = w.submit(_request(tmp_path, "one"), lambda _e: None)
        assert job.done.wait(120)
        pid = w.pid
        assert pool.release(key, "unused", idle_s=0) and "unused" in pool.stopped_for
        assert key not in pool.workers and not pool.pids()
        deadline = time.monotonic() + 10
        while pid and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid and not _alive(pid)
        assert not pool.release(key, "unused", idle_s=0)  # nothing left to stop
    finally:
        pool.shutdown()
