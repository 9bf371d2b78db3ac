"""A 1M-instruction SASS pair in the TUI: first paint, keys while it loads, time to the aligned view.

    .venv/bin/python benchmarks/bench_big_listing.py [--instructions 1000000] [--rounds 2]

The pair is made from the bundled sample's FA4 forward listings (``tests/tui/big_sass.py``: DSL
4.5.1 repeated on side A, 4.8.0 with its spills on side B, plain and ``-lrm count`` texts). Each
round opens the real app headless (Textual's ``run_test``, 120x36) twice, interleaved:

* ``staged`` — this tree: the raw listing first, the alignment in a child process;
* ``thread`` — the path every listing took before (``build_model`` in a thread worker), forced by
  raising the staging threshold above the listing's size.

Figures per run: *first paint* (app start to the first frame showing side B's instructions);
*keys while loading*: a key is posted every ~80 ms until the aligned view is drawn, and its latency
is the time from posting it to the first frame drawn after it took effect (cursor, scroll or screen
changed), p50/p95 over all keys; the ``thread`` path has no listing to move in while it loads, so
there only ``?``/``escape`` (the help screen) are pressed; *aligned*: start to the first frame of the
complete view; *keys after*: the same keys on the loaded view (the control, same run and load),
then d/d/D (hunk jumps); the TUI process's peak
RSS, and the child's. Frames are observed by wrapping ``App._display`` (headless Textual computes
every frame and then skips the write). Writes benchmarks/results/big_listing.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CUTEDIFF_CONFIG_DIR", tempfile.mkdtemp(prefix="cutediff-cfg-"))
os.environ.setdefault("CUTEDIFF_CACHE_DIR", tempfile.mkdtemp(prefix="cutediff-cache-"))

from textual import events  # noqa: E402

from cutediff_tui.ui import model as ui_model  # noqa: E402
from cutediff_tui.ui.app import CutediffApp  # noqa: E402
from cutediff_tui.ui.screens.main import MainScreen  # noqa: E402
from tests.tui.big_sass import fa4_like_comparison  # noqa: E402

SIZE = (120, 36)
CHARS = {"question_mark": "?", "escape": "\x1b", "ctrl+d": "\x04", "ctrl+u": "\x15"}
LOADING_KEYS = ["j", "j", "k", "ctrl+d", "ctrl+u", "G", "g", "question_mark", "escape"]
HELP_KEYS = ["question_mark", "escape"]


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def med(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


class Frames:
    """Times of the frames the app draws, and a wait for the first frame after a state change."""

    def __init__(self, app: CutediffApp, t0: float) -> None:
        self.app, self.t0 = app, t0
        self.first_listing: float | None = None
        self.aligned: float | None = None
        self._waiter: tuple[object, asyncio.Future] | None = None
        original = app._display

        def display(screen, renderable) -> None:
            original(screen, renderable)
            if renderable is None:
                return
            now = time.perf_counter()
            main = self.main()
            if main is not None and main.model is not None and main.pane("b").lines_here > 0:
                if self.first_listing is None:
                    self.first_listing = now - t0
                if self.aligned is None and main.model.pending is None:
                    self.aligned = now - t0
            if self._waiter is not None:
                before, fut = self._waiter
                if self.state() != before and not fut.done():
                    fut.set_result(now)

        app._display = display  # type: ignore[method-assign]

    def main(self) -> MainScreen | None:
        for screen in self.app.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def state(self) -> tuple:
        main = self.main()
        if main is None:
            return (id(self.app.screen),)
        pane = main.pane("b")
        return (id(self.app.screen), main.cursor, round(pane.scroll_y), main.model is None)

    async def key(self, key: str, timeout: float = 20.0) -> float:
        """Post ``key``; milliseconds to the first frame drawn after it changed the state."""
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiter = (self.state(), fut)
        t = time.perf_counter()
        self.app.post_message(events.Key(key, CHARS.get(key, key if len(key) == 1 else None)))
        try:
            done = await asyncio.wait_for(fut, timeout)
        finally:
            self._waiter = None
        return (done - t) * 1000


async def one_run(comparison: dict, mode: str) -> dict:
    ui_model.BIG_LISTING = 100_000 if mode == "staged" else 10**12
    t0 = time.perf_counter()
    app = CutediffApp(comparison, versions=["4.5.1", "4.8.0"], installed={"4.5.1", "4.8.0"}, gpu_probe=None)
    frames = Frames(app, t0)
    loading: list[float] = []
    after: list[float] = []
    trace: list[tuple] = []
    help_after: list[float] = []
    hunks: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        keys = LOADING_KEYS if mode == "staged" else HELP_KEYS
        while frames.first_listing is None and mode == "staged":
            await asyncio.sleep(0.01)
        k = 0
        while frames.aligned is None:
            key = keys[k % len(keys)]
            if frames.aligned is None:
                at = time.perf_counter() - t0
                try:
                    loading.append(await frames.key(key))
                except TimeoutError:
                    loading.append(float("inf"))
                trace.append(
                    (round(at, 2), key, round(loading[-1], 1), getattr(frames.main(), "model", None) is not None)
                )
                k += 1
            await asyncio.sleep(0.08)
        if isinstance(app.screen, MainScreen) is False:
            await pilot.press("escape")
        await pilot.press("g")  # from the top, so every key of the sequence moves something
        for _ in range(5):  # the same keys with nothing loading: the control for the keys above
            for key in LOADING_KEYS:
                try:
                    took = await frames.key(key)
                except TimeoutError:
                    took = float("inf")
                (help_after if key in HELP_KEYS else after).append(took)
                await asyncio.sleep(0.08)
        for key in ("d", "d", "D"):  # hunk jumps on the aligned view
            hunks.append(await frames.key(key))
            await asyncio.sleep(0.08)
        main = frames.main()
        assert main is not None and main.model is not None and main.model.pending is None
        rows = len(main.model.rows)
    help_l = [x[2] for x in trace if x[1] in HELP_KEYS]
    moves_l = [x[2] for x in trace if x[1] not in HELP_KEYS]
    return {
        "mode": mode,
        "first_paint_s": frames.first_listing,
        "aligned_s": frames.aligned,
        "rows": rows,
        "keys_while_loading_ms": {
            "p50": pct(loading, 0.5),
            "p95": pct(loading, 0.95),
            "max": max(loading, default=None),
            "n": len(loading),
        },
        "keys_after_ms": {"p50": pct(after, 0.5), "p95": pct(after, 0.95), "n": len(after)},
        "help_while_loading_ms": {"p50": pct(help_l, 0.5), "p95": pct(help_l, 0.95), "n": len(help_l)},
        "moves_while_loading_ms": {"p50": pct(moves_l, 0.5), "p95": pct(moves_l, 0.95), "n": len(moves_l)},
        "help_after_ms": {"p50": pct(help_after, 0.5), "p95": pct(help_after, 0.95), "n": len(help_after)},
        "hunk_keys_after_ms": hunks,
        "rss_tui_mb": rss_mb(),
        "trace": trace,
    }


def run_in_child(path: Path, mode: str) -> dict:
    """One run in a fresh process (so each run's peak memory is its own)."""
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, __file__, "--run", mode, "--comparison", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the {mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="thread,staged")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "big_listing.json")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--comparison", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        res = asyncio.run(one_run(json.loads(args.comparison.read_text()), args.run))
        res["rss_child_mb"] = rss_mb(resource.RUSAGE_CHILDREN)
        print(json.dumps(res))
        return
    folder = Path(tempfile.mkdtemp(prefix="cutediff-big-"))
    t = time.perf_counter()
    comparison = fa4_like_comparison(folder, args.instructions)
    made = time.perf_counter() - t
    path = folder / "comparison.json"
    path.write_text(json.dumps(comparison))
    counts = [comparison["kernels"][0][s]["instructions"] for s in ("a", "b")]
    print(f"made a {counts[0]:,} / {counts[1]:,} instruction pair in {made:.1f} s ({folder})", flush=True)
    runs = []
    for r in range(args.rounds):
        for mode in args.modes.split(","):
            load = os.getloadavg()
            res = run_in_child(path, mode)
            res.update(round=r, load_before=load, load_after=os.getloadavg())
            print(json.dumps(res), flush=True)
            runs.append(res)
    summary = {}
    for mode in args.modes.split(","):
        mine = [x for x in runs if x["mode"] == mode]
        summary[mode] = {
            name: med([x[name] for x in mine]) for name in ("first_paint_s", "aligned_s", "rss_tui_mb", "rss_child_mb")
        }
        for name in (
            "keys_while_loading_ms",
            "moves_while_loading_ms",
            "help_while_loading_ms",
            "keys_after_ms",
            "help_after_ms",
        ):
            for q in ("p50", "p95"):
                summary[mode][f"{name}.{q}"] = med([x[name][q] for x in mine])
    out = {"instructions": counts, "cpus": os.cpu_count(), "summary": summary, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
