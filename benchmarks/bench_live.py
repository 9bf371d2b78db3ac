"""The live edit loop (issue 19): edit-to-screen under watch, warm-worker memory, the cold FA4
compare at one build per side, whether line info changes the resource figures, and a parameter
sweep on warm workers.

    .venv/bin/python benchmarks/bench_live.py [--stages edit,memory,cold,lineinfo,sweep] [--rounds 3]
        [--baseline OTHER_CHECKOUT] [--edit kernel|comment]

Every figure is a ratio against a reference measured in the same run (the machine is shared:
the load average is recorded with each stage). ``--baseline`` runs stages edit and sweep on
another checkout of cutediff too (e.g. ``git archive main | tar -x -C /tmp/base``), interleaved
with this one. Stage edit records, per save, the timing stamps of :mod:`cutediff_tui.core.trace`
(seconds after the save: change seen, child forked, compiled, each tool, analysed, painted).
Writes benchmarks/results/live.json.
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


#: The line of the sample recipe an edit of kind "kernel" rewrites (a new constant each round,
#: so the kernel and its cubin change and every tool has to run again).
KERNEL_LINE = "            gC[row, col] = gA[row, col] + gB[row, col]\n"


def edited(src: str, kind: str, n: int) -> str:
    """The sample recipe after edit ``n`` of ``kind``: "kernel" changes the kernel's code (a
    constant), "comment" appends a comment (the kernel and, often, its cubin stay the same)."""
    if kind == "comment":
        return src + f"\n# edit {n} {random.random()}\n"
    assert KERNEL_LINE in src
    return src.replace(KERNEL_LINE, KERNEL_LINE.rstrip("\n") + f" * {1 + (n + 1) / 1024!r}\n")


def edit_driver(kind: str) -> None:
    """One tree's side of stage ``edit`` (run with that tree first on PYTHONPATH): a TUI watching
    its own copy of the sample recipe on warm workers; each ``round N`` line on stdin saves edit
    N and answers one JSON line: save → refreshed pane, that round's compile, the timing stamps."""
    import logging

    from cutediff_tui.core import warm
    from cutediff_tui.core.options import compare_options
    from cutediff_tui.core.recipes.sources import plan_sources, run_compare_plan
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.live import LiveBanner, WatchSpec

    try:
        from cutediff_tui.core.watch import source_digests
    except ImportError:  # a baseline tree from before it: its watch starts from what it reads then

        def source_digests(paths):  # type: ignore[misc]
            return None

    stamps: list[tuple[str, float, dict]] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            stamps.append((record.getMessage(), getattr(record, "t", 0.0), getattr(record, "facts", {})))

    timing = logging.getLogger("cutediff.timing")  # absent before the stamps existed: no stamps then
    timing.addHandler(Collect(logging.DEBUG))
    timing.setLevel(logging.DEBUG)
    os.environ["CUTEDIFF_CACHE_DIR"] = str(TEST_CACHE)
    folder = Path(tempfile.mkdtemp(prefix="cutediff-live-"))
    rec = folder / "live_add.py"
    src = SAMPLE.read_text()
    rec.write_text(src)
    kw = {"kernel": str(rec), "arch": "sm_90a", "with_": PIN_LIST}
    opts = compare_options("4.5.1", "4.8.0", kw)
    plan = plan_sources(opts.recipe)

    async def run() -> None:
        with warm.session() as pool:
            seen = source_digests(plan.watched())
            first = run_compare_plan(opts, plan)
            app = CutediffApp(
                first,
                versions=[],
                installed=set(),
                gpu_probe=None,
                watch=WatchSpec(opts, plan, {}, seen) if seen is not None else WatchSpec(opts, plan, {}),
            )
            async with app.run_test(size=(120, 36)) as pilot:
                screen = app.screen
                t_wait = time.monotonic()
                while len(pool.workers) < 2 or not all(w.ready.is_set() for w in pool.workers.values()):
                    await asyncio.sleep(0.1)  # the warm workers start (prewarm)
                    if time.monotonic() - t_wait > 300:
                        raise SystemExit("the warm workers did not start within 300 s")
                while app.live is None or not app.live.running:  # the TUI's watch has started
                    await asyncio.sleep(0.1)
                await asyncio.sleep(1.0)  # and its file watch is set up (a tree without `seen`)
                print(json.dumps({"ready": round(time.monotonic() - t_wait, 2)}), flush=True)
                while line := await asyncio.to_thread(sys.stdin.readline):
                    n = int(line.split()[1])
                    shown = screen.comparison
                    stamps.clear()
                    before = load()
                    t0 = time.monotonic()
                    rec.write_text(edited(src, kind, n))
                    while True:
                        await asyncio.sleep(0.01)
                        # a banner that is not mounted shows nothing: the screen mounts them on the
                        # watch's first news and a recompose may leave them out (waiting for them
                        # hung the driver at random saves)
                        banners = [b.state for s in "ab" for b in screen.query(f"#live-{s}").results(LiveBanner)]
                        if screen.comparison is not shown and screen.model is not None and not any(banners):
                            break
                        if time.monotonic() - t0 > 300:
                            raise SystemExit("no refresh within 300 s")
                    await pilot.pause()
                    screen_s = time.monotonic() - t0
                    sides = screen.comparison["sides"]
                    errors = [sides[s].get("error") for s in "ab" if sides[s].get("error")]
                    out = {
                        "screen": screen_s,
                        "compile": max(float(sides[s]["compile_seconds"] or 0) for s in "ab"),
                        "load": before,
                        "errors": errors,
                        "stamps": [[name, round(t - t0, 4), facts] for name, t, facts in stamps],
                    }
                    print(json.dumps(out, default=str), flush=True)

    asyncio.run(run())
    shutil.rmtree(folder, ignore_errors=True)


def stage_edit(rounds: int, baseline: Path | None, kind: str) -> dict:
    """Save → refreshed pane in the TUI watching the sample recipe (warm workers), against the
    compile time of that round; with ``baseline`` (another checkout of cutediff) the same rounds
    on that tree, interleaved (A B B A ...), each tree in its own driver process."""
    import subprocess

    trees = {"new": ROOT} | ({"base": baseline.resolve()} if baseline else {})
    procs = {}
    for name, tree in trees.items():
        env = dict(os.environ, PYTHONPATH=str(tree))
        procs[name] = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--edit-driver", "--edit", kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    out: dict = {"kind": kind, "trees": {k: str(v) for k, v in trees.items()}}
    try:
        for name, proc in procs.items():
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            if not ready:
                raise SystemExit(f"the {name} driver ended before it was ready")
            out.setdefault("ready", {})[name] = json.loads(ready)["ready"]
        order = list(procs)
        for r in range(rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                proc = procs[name]
                assert proc.stdin is not None and proc.stdout is not None
                # each tree saves its own constants: no cubin of one reaches the other through the
                # disassembly cache, which keeps texts per cubin content (disasm/cubin/SHA)
                proc.stdin.write(f"round {len(trees) * r + list(trees).index(name)}\n")
                proc.stdin.flush()
                res = json.loads(proc.stdout.readline())
                out.setdefault(name, []).append(res)
                print(
                    f"{name} round {r}: screen {res['screen']:.2f} s, compile {res['compile']:.2f} s, load {res['load']}",
                    flush=True,
                )
    finally:
        for proc in procs.values():
            if proc.stdin:
                proc.stdin.close()
        for proc in procs.values():
            proc.wait(timeout=120)
    for name in procs:
        rows = out[name]
        out[f"{name}_screen"] = [round(x["screen"], 3) for x in rows]
        out[f"{name}_compile"] = [round(x["compile"], 3) for x in rows]
        out[f"{name}_over_compile"] = [round(x["screen"] - x["compile"], 3) for x in rows]
    if "base" in procs:
        out["ratio_new_to_base"] = statistics.median(n / b for n, b in zip(out["new_screen"], out["base_screen"]))
    return out


def stage_sweep(rounds: int, baseline: Path | None) -> dict:
    """A 4-cell parameter sweep of the sample recipe on one toolchain (``--param vec=1,2,4,8``,
    every cell compiled: ``--no-cache``), wall time of the whole command; with ``baseline`` the
    same command on that checkout, interleaved (A B B A ...)."""
    import subprocess

    trees = {"new": ROOT} | ({"base": baseline.resolve()} if baseline else {})
    args = ["sweep", "4.8.0", *PINS, "--kernel", str(SAMPLE), "--arch", "sm_90a", "--param", "vec=1,2,4,8"]
    args += ["--no-cache", "--jobs", "2", "-q", "--json", os.devnull]
    out: dict = {"command": "cutediff " + " ".join(args), "trees": {k: str(v) for k, v in trees.items()}}
    order = list(trees)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(TEST_CACHE), PYTHONPATH=str(trees[name]))
            before = load()
            t0 = time.perf_counter()
            proc = subprocess.run(  # cwd: `python -m` puts it before PYTHONPATH
                [sys.executable, "-m", "cutediff_tui.cli", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=trees[name],
            )
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise SystemExit(f"{name}: cutediff {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
            out.setdefault(name, []).append(round(wall, 2))
            out.setdefault(f"{name}_load", []).append(before)
            print(f"{name} round {r}: {wall:.1f} s, load {before}", flush=True)
    if "base" in trees:
        out["ratio_new_to_base"] = statistics.median(n / b for n, b in zip(out["new"], out["base"]))
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
    ap.add_argument("--stages", default="edit,memory,cold,lineinfo,sweep")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--versions", default="4.3.5,4.4.2,4.5.1,4.5.2,4.5.3,4.6.0,4.6.1,4.6.3,4.7.0,4.7.1,4.8.0")
    ap.add_argument("--baseline", type=Path, help="stage edit: another checkout of cutediff to interleave with")
    ap.add_argument(
        "--edit", choices=("kernel", "comment"), default="kernel", help="stage edit: what each save changes"
    )
    ap.add_argument("--edit-driver", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.edit_driver:
        return edit_driver(args.edit)
    path = ROOT / "benchmarks" / "results" / "live.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for stage in args.stages.split(","):
        t0 = time.perf_counter()
        if stage == "edit":
            r = stage_edit(args.rounds, args.baseline, args.edit)
        elif stage == "sweep":
            r = stage_sweep(args.rounds, args.baseline)
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
        if stage == "edit" and args.edit == "comment":
            stage = "edit_comment"
        results[stage] = r
        print(stage, json.dumps(r, indent=1, default=str), flush=True)
        path.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
