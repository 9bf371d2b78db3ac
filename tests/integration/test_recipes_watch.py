"""--watch for real: edit a recipe while cutediff watches it, see the view refreshed.

Slow (real compiles: a few seconds per round on this CPU-only machine). The watched file lives in
the persistent test cache at a fixed path, so the first round is a cache hit after the first run
and only the edited round compiles (its content carries a fresh token each run).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "recipes" / "elementwise_add.py"
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]
ADD = "gC[row, col] = gA[row, col] + gB[row, col]"


def _stable_copy(compile_cache: Path, name: str) -> Path:
    folder = compile_cache / "watch-recipes"
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / name
    f.write_text(SAMPLE.read_text())
    return f


def _lines(stream, q: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def test_editing_the_recipe_refreshes_the_view(compile_cache):
    recipe_file = _stable_copy(compile_cache, "watched_add.py")
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(compile_cache), COLUMNS="120")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cutediff_tui.cli",
            "compare",
            "4.5.1",
            "4.8.0",
            *PINS,
            "--kernel",
            str(recipe_file),
            "--arch",
            "sm_90a",
            "--no-lineinfo",
            "--watch",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(ROOT),
    )
    out: queue.Queue = queue.Queue()
    err: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    seen_out: list[str] = []
    seen_err: list[str] = []

    def wait_for(pred, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for q, seen in ((out, seen_out), (err, seen_err)):
                try:
                    while True:
                        line = q.get_nowait()
                        if line is not None:
                            seen.append(line)
                except queue.Empty:
                    pass
            if pred():
                return True
            if proc.poll() is not None:
                return pred()
            time.sleep(0.1)
        return False

    tables = lambda: sum("SASS match" in ln for ln in seen_out)  # noqa: E731
    try:
        assert wait_for(lambda: any("watching" in ln for ln in seen_err) and tables() >= 1, 300), "".join(seen_err)[
            -3000:
        ]
        t0 = time.monotonic()
        token = uuid.uuid4().hex[:8]
        recipe_file.write_text(recipe_file.read_text().replace(ADD, f"{ADD.replace('+', '-')}  # {token}"))
        assert wait_for(lambda: tables() >= 2, 120), "".join(seen_err)[-3000:]
        refresh = time.monotonic() - t0
        assert any("watched_add.py changed" in ln for ln in seen_out)  # the rule over the new tables
        assert any("recompiling side A and B" in ln for ln in seen_err)
        print(f"edit → second table: {refresh:.1f} s")
        assert refresh < 90
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    wait_for(lambda: False, 0.5)
    assert proc.returncode == 0, "".join(seen_err)[-2000:]
    assert "Traceback" not in "".join(seen_err)
    assert not list((compile_cache / "artifacts").glob(".tmp-*watched*"))


def test_cursor_stays_on_the_source_line_after_an_edit(compile_cache, monkeypatch):
    """In-process: CompareWatch recompiles with line info, keep_cursor finds the same statement."""
    from cutediff_tui.core.options import compare_options as build_options
    from cutediff_tui.core.recipes.sources import plan_sources
    from cutediff_tui.core.watch import CompareWatch, cursor_anchor, keep_cursor
    from cutediff_tui.ui.model import build_model

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    recipe_file = _stable_copy(compile_cache, "cursor_add.py")
    text = recipe_file.read_text()
    add_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ADD in ln)
    opts = build_options("4.8.0", "4.8.0", {"kernel": str(recipe_file), "arch": "sm_90a", "with_": tuple(PINS[1::2])})
    results: list = []
    errors: list = []
    got = threading.Event()
    watch = CompareWatch(
        opts,
        plan_sources(opts.recipe),
        interval=0.1,
        on_result=lambda c, ch: (results.append((c, ch)), got.set()),
        on_error=lambda m, ch: (errors.append(m), got.set()),
    )
    watch.start(initial=True)
    try:
        assert got.wait(300) and not errors, errors
        got.clear()
        old_model = build_model(results[0][0], 0, "sass")
        row = next(
            r for r in range(len(old_model)) if (ln := old_model.line_at(r, "b")) is not None and ln.line == add_line
        )
        anchor = cursor_anchor(old_model, "b", row)
        assert anchor is not None and anchor.line == add_line and anchor.file.endswith("cursor_add.py")
        token = uuid.uuid4().hex[:8]
        recipe_file.write_text(f"# edited {token}\n# two more lines\n# above the kernel\n" + text)
        assert got.wait(300) and not errors, errors
    finally:
        watch.stop()
    comparison, change = results[-1]
    assert change is not None and change.map_line(anchor.file, add_line) == add_line + 3
    new_model = build_model(comparison, 0, "sass")
    new_row = keep_cursor(new_model, "b", anchor, change)
    assert new_row is not None
    moved = new_model.line_at(new_row, "b")
    assert moved.line == add_line + 3 and moved.file == anchor.file


async def test_tui_watch_compiles_a_save_made_while_the_first_result_compiled(compile_cache, monkeypatch):
    """`compare --watch --tui` takes the sources' digests before the first compile; a save made
    before the TUI's watch started (here: after the first compile, before the app) is compiled
    as soon as the watch starts, with no further save (it used to wait for the next one)."""
    import asyncio

    from cutediff_tui.core import warm
    from cutediff_tui.core.options import compare_options as build_options
    from cutediff_tui.core.recipes.sources import plan_sources, run_compare_plan
    from cutediff_tui.core.watch import source_digests
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.live import WatchSpec

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    recipe_file = _stable_copy(compile_cache, "early_save_add.py")
    opts = build_options("4.5.1", "4.8.0", {"kernel": str(recipe_file), "arch": "sm_90a", "with_": tuple(PINS[1::2])})
    plan = plan_sources(opts.recipe)
    with warm.session():
        seen = source_digests(plan.watched())
        first = run_compare_plan(opts, plan)
        token = uuid.uuid4().hex[:8]
        recipe_file.write_text(recipe_file.read_text() + f"\n# saved while compiling {token}\n")
        app = CutediffApp(
            first,
            versions=["4.5.1", "4.8.0"],
            installed={"4.5.1", "4.8.0"},
            gpu_probe=None,
            watch=WatchSpec(opts, plan, {}, seen),
        )
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            deadline = time.monotonic() + 180
            while screen.comparison is first and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert screen.comparison is not first, "the save made before the watch started was not compiled"
            await pilot.pause()


async def test_tui_watch_refreshes_in_place_and_keeps_the_last_good_result(compile_cache, monkeypatch):
    """The acceptance test of the TUI watch: edit the recipe while the TUI watches it (real
    compiles on warm workers); the pane refreshes with the cursor on the same instruction; a
    syntax error shows in the panes with its line while the previous result stays."""
    import asyncio

    from cutediff_tui.core import warm
    from cutediff_tui.core.options import compare_options as build_options
    from cutediff_tui.core.recipes.sources import plan_sources, run_compare_plan
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.live import LiveBanner, WatchSpec

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    recipe_file = _stable_copy(compile_cache, "tui_add.py")
    opts = build_options("4.5.1", "4.8.0", {"kernel": str(recipe_file), "arch": "sm_90a", "with_": tuple(PINS[1::2])})
    plan = plan_sources(opts.recipe)

    async def until(pred, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return True
            await asyncio.sleep(0.1)
        return pred()

    with warm.session():
        first = run_compare_plan(opts, plan)
        app = CutediffApp(
            first,
            versions=["4.5.1", "4.8.0"],
            installed={"4.5.1", "4.8.0"},
            gpu_probe=None,
            watch=WatchSpec(opts, plan, {}),
        )
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            assert await until(lambda: screen.model is not None, 60)
            text = recipe_file.read_text()
            add_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ADD in ln)
            screen.active_side = "b"
            screen.jump(str(add_line))
            await pilot.pause()
            before = screen.current_line("b")
            assert before is not None and before.line == add_line
            shown = screen.comparison
            await asyncio.sleep(0.3)  # a person's pause: the first compare's servers are idle by the save
            # two lines above the statement: the same instruction is now two lines further down
            token = uuid.uuid4().hex[:8]
            recipe_file.write_text(text.replace("import cutlass\n", f"import cutlass\n# {token}\n# edit\n", 1))
            assert await until(lambda: screen.comparison is not shown and screen.model is not None, 180)
            await pilot.pause()
            after = screen.current_line("b")
            assert after is not None and after.line == add_line + 2 and after.opcode == before.opcode
            assert all((screen.live_banner(s) or LiveBanner(s)).state == "" for s in "ab")
            # line-info servers only: a first compare that built with the plain check (not one
            # served from the cache) started plain ones, stopped now; the watch builds once per side
            pool = warm.active()
            assert pool is not None and [k[4] for k in pool.workers] == [True, True], (
                list(pool.workers),
                pool.stopped_for,
            )
            good = screen.comparison
            recipe_file.write_text(recipe_file.read_text().replace("    m, n = gA.shape\n", "    m, n = gA.shape +\n"))
            assert await until(lambda: (screen.live_banner("b") or LiveBanner("b")).state == "error", 60)
            banner = str(screen.query_one("#live-b", LiveBanner).render())
            assert "syntax error" in banner and "m, n = gA.shape +" in banner
            assert screen.comparison is good and screen.model is not None
        assert app.live is None or not app.live.running
