"""TUI start of two or more source trees, interleaved in one script (issue 14 guard).

    .venv/bin/python benchmarks/compare_tui_start.py OLD_TREE NEW_TREE [...] [--reps 8] [--runs 3]

Each repetition starts one fresh process per tree (the order alternates) that imports the tree's
benchmarks/bench_tui.py (``import``: the UI and loader imports) and runs its ``start_to_drawn``
``--runs`` times: the first run is ``cold`` (lazy imports and first-use caches included), the
others ``warm``; ``*_cpu`` is the CPU time of all the process's threads over the same runs
(steadier than wall time on a loaded machine). Medians, their ratio to the first tree, and the
fastest run are printed. ``--steady`` adds figures that hardly move with the load: the
main-thread function calls of a warm start (cProfile) and the best of 5 builds of the first
kernel's SASS view model (the loader thread's work before the first paint).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import asyncio, json, os, sys, tempfile, time
t0 = time.perf_counter()
os.environ.setdefault("CUTEDIFF_CONFIG_DIR", tempfile.mkdtemp(prefix="tui-start-cfg-"))
os.environ.setdefault("CUTEDIFF_CACHE_DIR", tempfile.mkdtemp(prefix="tui-start-cache-"))
sys.path.insert(0, "benchmarks")
import bench_tui
out = {"import": time.perf_counter() - t0, "runs": [], "cpu": []}
for _ in range(int(sys.argv[1])):
    c0 = time.process_time()
    out["runs"].append(asyncio.run(bench_tui.start_to_drawn()))
    out["cpu"].append(time.process_time() - c0)
if sys.argv[2] == "1":
    import cProfile, pstats
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.ui.model import build_model
    pr = cProfile.Profile(); pr.enable(); asyncio.run(bench_tui.start_to_drawn()); pr.disable()
    out["calls"] = pstats.Stats(pr).total_calls
    c = load_json(bench_tui.default_sample())
    best = 9.0
    for _ in range(5):
        t = time.perf_counter(); build_model(c, 0, "sass"); best = min(best, time.perf_counter() - t)
    out["build_model"] = best
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steady", action="store_true")
    a = ap.parse_args()
    keys = ["import", "cold", "warm", "cold_cpu", "warm_cpu"] + (["calls", "build_model"] if a.steady else [])
    res: dict[str, dict[str, list[float]]] = {t: {k: [] for k in keys} for t in a.trees}
    with tempfile.TemporaryDirectory(prefix="tui-start-") as tmp:
        for i in range(a.reps):
            for t in a.trees if i % 2 == 0 else a.trees[::-1]:
                env = dict(os.environ, PYTHONPATH=os.path.abspath(t), TMPDIR=tmp)
                p = subprocess.run(
                    [sys.executable, "-c", CHILD, str(a.runs), "1" if a.steady else "0"],
                    cwd=t, env=env, capture_output=True, text=True, check=False,
                )  # fmt: skip
                if p.returncode:
                    sys.exit(f"{t}: the benchmark failed:\n{p.stderr[-2000:]}")
                d = json.loads(p.stdout.strip().splitlines()[-1])
                r = res[t]
                r["import"].append(d["import"])
                r["cold"].append(d["runs"][0])
                r["warm"] += d["runs"][1:]
                r["cold_cpu"].append(d["cpu"][0])
                r["warm_cpu"] += d["cpu"][1:]
                for k in ("calls", "build_model"):
                    if k in d:
                        r[k].append(d[k])
    print(f"{time.strftime('%Y-%m-%d %H:%M')} loadavg {[round(x, 2) for x in os.getloadavg()]}, {os.cpu_count()} CPUs")
    base = res[a.trees[0]]
    for t in a.trees:
        cells = []
        for k in keys:
            m, b = statistics.median(res[t][k]), statistics.median(base[k])
            fmt = "{:,.0f}" if k == "calls" else "{:.3f}"
            cells.append(f"{k} {fmt.format(m)} (x{m / b:.2f}, min {fmt.format(min(res[t][k]))})")
        print(f"{t}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
