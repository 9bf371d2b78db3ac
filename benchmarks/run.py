"""cutediff's performance suite: one command, figures as ratios against references measured in the
same run, written to benchmarks/RESULTS.md and benchmarks/results/suite.json.

    .venv/bin/python benchmarks/run.py [--repeat 3] [--skip cold,env,tui]

Stages:
  cold     compare FA4 fwd (plain + line-info builds, both sides in parallel) with environments
           present and the build cache empty, against the slower of the two single-side builds
           run alone in the same run (target ratio <= 1.15);
  warm     the same compare again from the cache: CLI to complete JSON (target <= 1 s);
  analysis parse/classify/align of the FA4 pair and of 10x/100x synthetic listings
           (benchmarks/bench_analysis.py; target <= 0.15 s for the pair);
  env      environment creation with a warm uv cache vs plain `pip install --target` of the same
           lock (target <= 5 s), and offline from a wheelhouse with an empty uv cache;
  tui      start to drawn sample and keystroke-to-repaint on a 100k-line listing (benchmarks/bench_tui.py,
           when present);
  bench    the recorded H200 run (benchmarks/results/h200/run3): cutediff medians vs the standalone
           CUDA-event script.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]
FWD = ["--kernel", "fa4-fwd", "--arch", "sm_103a", "--varlen", "--causal", "--hdim", "128"]
TEST_CACHE = ROOT / ".cache" / "test-cache"


def cli(
    args: list[str], cache: Path, extra_env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache), **(extra_env or {}))
    t0 = time.perf_counter()
    proc = subprocess.run([PY, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"cutediff {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return wall, proc


def spread(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": len(xs)}


def fresh_cache_with_envs(base: Path) -> Path:
    """A cache dir holding only the environments (so builds are cold)."""
    d = Path(tempfile.mkdtemp(prefix="cutediff-bench-"))
    (d / "envs").mkdir()
    for env in (base / "envs").iterdir():  # link, not copy: 3 GB of environments per run otherwise
        if env.is_dir() and not env.name.startswith("."):
            (d / "envs" / env.name).symlink_to(env.resolve())
    return d


def stage_cold(repeat: int) -> dict:
    cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", os.devnull], TEST_CACHE)  # make sure envs exist
    sides, both = {"4.5.1": [], "4.8.0": []}, []
    for _ in range(repeat):
        for v in sides:
            d = fresh_cache_with_envs(TEST_CACHE)
            # one side alone: the same two builds (plain + line info), nothing else running
            wall, _ = cli(["compare", v, v, *PINS, *FWD, "--json", os.devnull], d)
            sides[v].append(wall)
            shutil.rmtree(d)
        d = fresh_cache_with_envs(TEST_CACHE)
        wall, _ = cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", os.devnull], d)
        both.append(wall)
        shutil.rmtree(d)
    slower = max(statistics.median(v) for v in sides.values())
    return {
        "single_side_s": {k: spread(v) for k, v in sides.items()},
        "compare_s": spread(both),
        "ratio": statistics.median(both) / slower,
        "target": 1.15,
        "note": "a single side is `compare V V` (identical sides share one build key, so it compiles once)",
    }


def stage_warm(repeat: int) -> dict:
    cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", os.devnull], TEST_CACHE)
    walls = [
        cli(["compare", "4.5.1", "4.8.0", *PINS, *FWD, "--json", os.devnull], TEST_CACHE)[0]
        for _ in range(max(repeat, 5))
    ]
    help_walls = [cli(["--help"], TEST_CACHE)[0] for _ in range(max(repeat, 5))]
    return {"compare_json_s": spread(walls), "cli_start_s": spread(help_walls), "target_s": 1.0}


def stage_env(repeat: int) -> dict:
    from cutediff_tui.core.toolchain import env_key, parse_side  # noqa: F401

    uv_times, pip_times = [], []
    for _ in range(repeat):
        d = Path(tempfile.mkdtemp(prefix="cutediff-env-"))
        t0 = time.perf_counter()
        cli(["env", "create", "4.8.0", *PINS], d)
        uv_times.append(time.perf_counter() - t0)
        lock = next((d / "envs").glob("dsl-4.8.0-*/env.json"))
        pins = [f"{k}=={v['version']}" for k, v in json.loads(lock.read_text())["lock"].items()]
        tgt = d / "pip-target"
        t0 = time.perf_counter()
        subprocess.run(
            [PY, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tgt), *pins],
            check=True,
            capture_output=True,
        )
        pip_times.append(time.perf_counter() - t0)
        shutil.rmtree(d)
    # offline from a wheelhouse (issue 19): no index, an empty uv cache, a fresh cutediff cache
    wh = Path(tempfile.mkdtemp(prefix="cutediff-wh-"))
    cli(["env", "download", "4.8.0", *PINS, "-d", str(wh / "wh"), "-q"], wh)
    wh_times = []
    for _ in range(repeat):
        d = Path(tempfile.mkdtemp(prefix="cutediff-env-"))
        offline = {"UV_OFFLINE": "1", "UV_CACHE_DIR": str(d / "uv"), "PIP_NO_INDEX": "1"}
        t0 = time.perf_counter()
        cli(["env", "create", "4.8.0", *PINS, "--wheelhouse", str(wh / "wh")], d, extra_env=offline)
        wh_times.append(time.perf_counter() - t0)
        shutil.rmtree(d)
    wh_mb = sum(f.stat().st_size for f in (wh / "wh").rglob("*") if f.is_file()) / 2**20
    shutil.rmtree(wh)
    return {
        "cutediff_env_create_s": spread(uv_times),
        "pip_target_same_lock_s": spread(pip_times),
        "ratio": statistics.median(uv_times) / statistics.median(pip_times),
        "wheelhouse_offline_s": spread(wh_times),
        "wheelhouse_mb": round(wh_mb, 1),
        "target_s": 5.0,
    }


def stage_analysis(repeat: int) -> dict:
    subprocess.run(
        [PY, str(ROOT / "benchmarks" / "bench_analysis.py"), "--repeat", str(max(repeat, 5))],
        check=True,
        capture_output=True,
    )
    return json.loads((ROOT / "benchmarks" / "results" / "analysis.json").read_text())


def stage_tui(repeat: int) -> dict | None:
    script = ROOT / "benchmarks" / "bench_tui.py"
    if not script.is_file():
        return None
    subprocess.run([PY, str(script)], check=True, capture_output=True)
    return json.loads((ROOT / "benchmarks" / "results" / "tui.json").read_text())


def stage_bench() -> dict:
    root = ROOT / "benchmarks" / "results" / "h200" / "run3"
    bench = json.loads((root / "bench.json").read_text())
    rows = []
    for side, version in (("a", "4.5.1"), ("b", "4.8.0")):
        ref = json.loads((root / f"standalone-{version}.json").read_text())["shapes"]
        for row in bench["shapes"]:
            label = row["shape"]["label"]
            rows.append(
                {
                    "side": version,
                    "shape": label,
                    "cutediff_ms": row[side]["median_ms"],
                    "standalone_ms": ref[label]["median_ms"],
                    "ratio": row[side]["median_ms"] / ref[label]["median_ms"],
                }
            )
    return {"gpu": "NVIDIA H200", "rows": rows, "target": "within 2%"}


def write_results(res: dict) -> None:
    out = ROOT / "benchmarks" / "results" / "suite.json"
    out.write_text(json.dumps(res, indent=1))
    lines = [
        "# cutediff performance results",
        "",
        f"Machine: {res['machine']['cpus']} cores, Python {res['machine']['python']}, {res['machine']['platform']}; "
        f"date {res['date']}; `python benchmarks/run.py --repeat {res['repeat']}`. Medians (min-max) over the runs.",
        "",
        "| stage | figure | reference (same run) | ratio | target |",
        "|---|---|---|---|---|",
    ]
    c = res.get("cold")
    if c:
        slower = max(v["median"] for v in c["single_side_s"].values())
        lines.append(
            f"| compare, cold (FA4 fwd, plain + line info) | {c['compare_s']['median']:.1f} s ({c['compare_s']['min']:.1f}-{c['compare_s']['max']:.1f}) "
            f"| slower single side {slower:.1f} s | {c['ratio']:.2f} | <= 1.15 |"
        )
    w = res.get("warm")
    if w:
        lines.append(
            f"| compare, warm: CLI to complete JSON | {w['compare_json_s']['median']:.2f} s | CLI start (--help) {w['cli_start_s']['median']:.2f} s | "
            f"{w['compare_json_s']['median'] / w['cli_start_s']['median']:.2f} | <= 1 s |"
        )
    a = res.get("analysis")
    if a:
        p = a["cases"]["pair"]
        lines.append(
            f"| analysis of the FA4 pair (parse+classify+align SASS and PTX) | {p['end_to_end_ms']:.0f} ms | "
            f"FA4 tools/sass_diff.py 930 ms (issue figure) | {p['end_to_end_ms'] / 930:.2f} | <= 150 ms |"
        )
        for scale in ("x10", "x100"):
            if scale in a["cases"]:
                s = a["cases"][scale]
                t = s.get("total_without_ptx_align_ms") or (
                    s.get("parse_sass_ms", 0) + s.get("classify_sass_ms", 0) + s.get("align_sass_ms", 0)
                )
                lines.append(
                    f"| analysis {scale} synthetic SASS (parse+classify+align) | {t:.0f} ms | pair {p['total_without_ptx_align_ms']:.0f} ms | "
                    f"{t / p['total_without_ptx_align_ms']:.1f} | near-linear |"
                )
    e = res.get("env")
    if e:
        lines.append(
            f"| environment creation, warm uv cache (DSL 4.8.0 + pins) | {e['cutediff_env_create_s']['median']:.1f} s | "
            f"pip --target, same lock {e['pip_target_same_lock_s']['median']:.1f} s | {e['ratio']:.2f} | <= 5 s |"
        )
        if "wheelhouse_offline_s" in e:
            w = e["wheelhouse_offline_s"]["median"]
            lines.append(
                f"| environment creation offline, `env create --wheelhouse` ({e['wheelhouse_mb']:.0f} MB of wheels, "
                f"empty uv cache, no index) | {w:.1f} s | warm uv cache {e['cutediff_env_create_s']['median']:.1f} s | "
                f"{w / e['cutediff_env_create_s']['median']:.2f} | recorded |"
            )
    t = res.get("tui")
    if t:
        for k, v in t.get("figures", {}).items():
            lines.append(
                f"| TUI {k} | {v.get('value')} {v.get('unit', '')} | {v.get('reference', '')} | {v.get('ratio', '')} | {v.get('target', '')} |"
            )
    b = res.get("bench")
    if b:
        worst = max(abs(r["ratio"] - 1) for r in b["rows"])
        lines.append(
            f"| bench medians vs standalone CUDA-event script (H200, recorded) | worst {worst * 100:.1f}% | standalone script | - | within 2% |"
        )
    lines.append("")
    path = ROOT / "benchmarks" / "RESULTS.md"
    # the suite owns the table at the top; the sections below it (one per issue) are kept
    rest = path.read_text().partition("\n## ")[2] if path.exists() else ""
    tail = "\n## " + rest if rest else ""
    path.write_text("\n".join(lines) + "\n" + tail)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip", default="")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    res: dict = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "date": time.strftime("%Y-%m-%d"),
        "repeat": args.repeat,
    }
    if "analysis" not in skip:
        res["analysis"] = stage_analysis(args.repeat)
    if "warm" not in skip:
        res["warm"] = stage_warm(args.repeat)
    if "env" not in skip:
        res["env"] = stage_env(args.repeat)
    if "cold" not in skip:
        res["cold"] = stage_cold(args.repeat)
    if "tui" not in skip:
        res["tui"] = stage_tui(args.repeat)
    res["bench"] = stage_bench()
    write_results(res)
    print((ROOT / "benchmarks" / "RESULTS.md").read_text())


if __name__ == "__main__":
    main()
