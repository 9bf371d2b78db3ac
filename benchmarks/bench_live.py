"""The live edit loop (issue 19): edit-to-screen under watch, warm-worker memory, the cold FA4
compare at one build per side, and whether line info changes the resource figures.

    .venv/bin/python benchmarks/bench_live.py [--stages edit,memory,cold,lineinfo] [--rounds 3]

Every figure is a ratio against a reference measured in the same run (the machine is shared:
the load average is recorded with each stage). Writes benchmarks/results/live.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from run import FWD, PINS, TEST_CACHE, cli, fresh_cache_with_envs  # noqa: E402

SAMPLE = ROOT / "samples" / "recipes" / "elementwise_add.py"
PIN_LIST = tuple(PINS[1::2])


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def stage_edit(rounds: int) -> dict:
    """Save → refreshed pane in the TUI watching the sample recipe (warm workers), against the
    compile time of that round and the same recompile through one-shot workers (today's path)."""
    from cutediff_tui.core import warm
    from cutediff_tui.core.options import compare_options
    from cutediff_tui.core.recipes.sources import plan_sources, run_compare_plan
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.live import LiveBanner, WatchSpec

    os.environ["CUTEDIFF_CACHE_DIR"] = str(TEST_CACHE)
    folder = Path(tempfile.mkdtemp(prefix="cutediff-live-"))
    rec = folder / "live_add.py"
    src = SAMPLE.read_text()
    rec.write_text(src)
    kw = {"kernel": str(rec), "arch": "sm_90a", "with_": PIN_LIST}
    opts = compare_options("4.5.1", "4.8.0", kw)
    plan = plan_sources(opts.recipe)
    out: dict = {"screen": [], "compile": [], "cold": [], "load": []}

    async def run() -> None:
        with warm.session():
            first = run_compare_plan(opts, plan)
            app = CutediffApp(first, versions=[], installed=set(), gpu_probe=None, watch=WatchSpec(opts, plan, {}))
            async with app.run_test(size=(120, 36)) as pilot:
                screen = app.screen
                await asyncio.sleep(20)  # the warm workers start (prewarm)
                for _ in range(rounds):
                    shown = screen.comparison
                    out["load"].append(load())
                    rec.write_text(src + f"\n# {random.random()}\n")
                    t0 = time.perf_counter()
                    while True:
                        await asyncio.sleep(0.02)
                        banners = [screen.query_one(f"#live-{s}", LiveBanner).state for s in "ab"]
                        if screen.comparison is not shown and screen.model is not None and banners == ["", ""]:
                            break
                        if time.perf_counter() - t0 > 300:
                            raise SystemExit("no refresh within 300 s")
                    await pilot.pause()
                    out["screen"].append(time.perf_counter() - t0)
                    sides = screen.comparison["sides"]
                    out["compile"].append(max(float(sides[s]["compile_seconds"] or 0) for s in "ab"))
                    # today's path for the same kind of edit: one-shot workers, plain + line-info builds
                    rec_cold = folder / "cold_add.py"
                    rec_cold.write_text(src + f"\n# {random.random()}\n")
                    cold_opts = compare_options("4.5.1", "4.8.0", {**kw, "kernel": str(rec_cold)})
                    os.environ["CUTEDIFF_WARM"] = "0"  # the one-shot path for this one call
                    t1 = time.perf_counter()
                    await asyncio.to_thread(run_compare_plan, cold_opts, plan_sources(cold_opts.recipe))
                    out["cold"].append(time.perf_counter() - t1)
                    os.environ.pop("CUTEDIFF_WARM")

    asyncio.run(run())
    shutil.rmtree(folder, ignore_errors=True)
    return out


def stage_memory() -> dict:
    """RSS of a warm server after its imports and after an FA4 forward compile (fresh build), and
    the peak of the compile child."""
    from cutediff_tui.core import warm
    from cutediff_tui.core.build import BuildRequest, compile_build, warm_key
    from cutediff_tui.core.gpu import resolve_profile
    from cutediff_tui.core.recipes import coerce_params, get_recipe
    from cutediff_tui.core.toolchain import create_env, parse_side
    from cutediff_tui.core.warm import rss_mb

    cache = fresh_cache_with_envs(TEST_CACHE)
    os.environ["CUTEDIFF_CACHE_DIR"] = str(cache)
    env = create_env(parse_side("4.8.0", list(PIN_LIST)))
    recipe = get_recipe("fa4-fwd")
    params = coerce_params(recipe, {"varlen": True, "causal": True, "hdim": 128})
    req = BuildRequest(env, recipe, params, resolve_profile(arch="sm_103a"), lineinfo=True)
    out = {"load": load()}
    with warm.session() as pool:
        t0 = time.perf_counter()
        compile_build(req)
        out["fa4_fwd_warm_first_s"] = time.perf_counter() - t0
        w = pool.workers[warm_key(env, True)]
        out["server_after_imports_mb"] = int(w.ready_info.get("rss_kb", 0)) // 1024
        out["server_after_fa4_mb"] = rss_mb(w.pid)
        out["fa4_child_peak_mb"] = w.peak_child_kb // 1024
        out["available_mb"] = warm.available_mb()
    shutil.rmtree(cache, ignore_errors=True)
    return out


def stage_cold() -> dict:
    """Cold FA4 forward compare, one line-info build per side (--no-plain-check), against one plain
    build of the slower side run alone (compare V V --no-lineinfo: one build), in the same run."""
    out: dict = {"load": load(), "alone": {}}
    for v in ("4.5.1", "4.8.0"):
        d = fresh_cache_with_envs(TEST_CACHE)
        out["alone"][v], _ = cli(["compare", v, v, *PINS, *FWD, "--no-lineinfo", "--json", str(d / "out.json")], d)
        shutil.rmtree(d)
    d = fresh_cache_with_envs(TEST_CACHE)
    out["one_build"], _proc = cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--no-plain-check", "--json", "-"], d)
    shutil.rmtree(d)
    out["load_after"] = load()
    return out


def stage_lineinfo(versions: list[str]) -> dict:
    """Does line info change registers, stack or shared memory? One compare V V per version
    (plain check on: both builds) of the sample recipe in the user cache (its environments: DSL
    alone), and the FA4 forward pair in the test cache."""
    import subprocess

    out: dict = {"load": load(), "sample": {}, "fa4": {}}
    user = Path(os.environ.get("CUTEDIFF_USER_CACHE", Path.home() / ".cache" / "cutediff"))
    for v in versions:
        proc = subprocess.run(
            [sys.executable, "-m", "cutediff_tui.cli", "compare", v, v, "--kernel", str(SAMPLE), "--arch", "sm_90a"]
            + ["--json", "-", "--quiet"],
            capture_output=True,
            text=True,
            env=dict(os.environ, CUTEDIFF_CACHE_DIR=str(user)),
        )
        try:
            c = json.loads(proc.stdout)
        except ValueError:
            out["sample"][v] = "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
            continue
        err = c["sides"]["a"].get("error")
        out["sample"][v] = (
            f"failed: {err}"
            if err
            else [((k.get("a") or {}).get("lineinfo") or {}).get("perturbed") for k in c["kernels"]]
        )
    _wall, proc = cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", "-"], TEST_CACHE)
    c = json.loads(proc.stdout)
    for k in c["kernels"]:
        for s in "ab":
            out["fa4"][f"{c['sides'][s]['dsl']} {k['name']}"] = ((k.get(s) or {}).get("lineinfo") or {}).get(
                "perturbed"
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", default="edit,memory,cold,lineinfo")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--versions", default="4.3.5,4.4.2,4.5.1,4.5.2,4.5.3,4.6.0,4.6.1,4.6.3,4.7.0,4.7.1,4.8.0")
    args = ap.parse_args()
    path = ROOT / "benchmarks" / "results" / "live.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for stage in args.stages.split(","):
        t0 = time.perf_counter()
        if stage == "edit":
            r = stage_edit(args.rounds)
            r["ratio_screen_to_compile"] = statistics.median(s / c for s, c in zip(r["screen"], r["compile"]))
            r["ratio_screen_to_cold"] = statistics.median(s / c for s, c in zip(r["screen"], r["cold"]))
        elif stage == "memory":
            r = stage_memory()
        elif stage == "cold":
            r = stage_cold()
            r["ratio"] = r["one_build"] / max(r["alone"].values())
        elif stage == "lineinfo":
            r = stage_lineinfo(args.versions.split(","))
        else:
            raise SystemExit(f"unknown stage {stage}")
        r["stage_seconds"] = round(time.perf_counter() - t0, 1)
        results[stage] = r
        print(stage, json.dumps(r, indent=1, default=str), flush=True)
        path.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
