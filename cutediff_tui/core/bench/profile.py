"""``cutediff bench --profile``: Nsight Compute on both sides, after the timed rounds.

Each side's bench worker runs once more under ``ncu`` (``"once": true``: a warm-up, then a few
calls of each case between ``cudaProfilerStart``/``Stop``), first for the fixed metric set
(:data:`~cutediff_tui.core.bench.ncu.METRICS`), then for the per-instruction source counters,
whose LDL/STL rows say how often each spill instruction executed. When ncu is absent or cannot
read the counters, the result says so in one sentence and the timings stand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..toolchain import Env
from . import ncu as N

NCU_TIMEOUT = 900.0


def worker_env() -> dict[str, str]:
    return dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[3]))


def _run(cmd: list[str], timeout: float) -> tuple[int, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=worker_env())
    except subprocess.TimeoutExpired:
        return 124, f"ncu took longer than {timeout:.0f} s"
    except OSError as exc:
        return 127, str(exc)
    return proc.returncode, proc.stdout + proc.stderr


def profile_side(ncu: str, env: Env, req: dict, kernel_filter: str | None, callables: list[str], tmp: Path) -> dict:
    """One side under ncu: ``{"kernels": per-kernel summary, "spills": per-kernel LDL/STL counts}``
    or ``{"error": sentence}``."""
    side = req["side"]
    path = tmp / f"ncu-{side}.json"
    path.write_text(json.dumps(dict(req, site=str(env.site), local_paths=env.spec.local_paths(), once=True)))
    argv = [sys.executable, "-m", "cutediff_tui.core.bench.worker", str(path)]
    log = tmp / f"ncu-{side}.csv"
    rc, output = _run(N.ncu_command(ncu, log, argv, kernel_filter), NCU_TIMEOUT)
    text = log.read_text(errors="replace") if log.is_file() else ""
    launches = N.parse_raw_csv(text, callables)
    if not launches:
        reason = N.cannot_reason(text + output) or (
            f"ncu ended with status {rc}: {output.strip().splitlines()[-1][:200]}"
            if output.strip()
            else f"ncu ended with status {rc} and profiled no kernel"
        )
        return {
            "error": f"Side {side.upper()}: Nsight Compute gave no counters ({reason}), so the profile rows are missing."
        }
    out: dict = {"kernels": N.summarize_launches(launches)}
    report = tmp / f"src-{side}"
    rc, output = _run(N.source_command(ncu, report, argv, kernel_filter), NCU_TIMEOUT)
    rep = report.with_suffix(".ncu-rep")
    if rep.is_file():
        try:
            proc = subprocess.run(N.source_export_command(ncu, rep), capture_output=True, text=True, timeout=300)
            (tmp / f"src-{side}.csv").write_text(proc.stdout)
            listings = N.parse_source_csv(proc.stdout, callables)
        except (OSError, subprocess.SubprocessError):
            listings = {}
        out["spills"] = {
            name: {**c, "sites": c["sites"][:200]} for name, lst in listings.items() if (c := N.spill_counts(lst))
        }
    else:
        out["spills_error"] = (
            f"Side {side.upper()}: ncu collected no source counters "
            f"({N.cannot_reason(output) or 'status ' + str(rc)}), so spill instructions have no execution counts."
        )
    return out


def profile_sides(
    envs: tuple[Env, Env],
    requests: tuple[dict, dict],
    kernel_filter: str | None,
    callables: dict,
    keep: Path | None = None,
) -> dict:
    """Both sides under ncu, and the A/B rows with deltas (or the sentence saying why not)."""
    ncu = N.find_ncu()
    if ncu is None:
        return {
            "error": "Nsight Compute (ncu) is not on PATH, so --profile has no counters; the timings above are complete. "
            "Install Nsight Compute (it comes with the CUDA toolkit) or put ncu on PATH."
        }
    with tempfile.TemporaryDirectory(prefix="cutediff-ncu-") as tmp:
        sides = {
            r["side"]: profile_side(ncu, env, r, kernel_filter, callables.get(r["side"], []), Path(tmp))
            for env, r in zip(envs, requests)
        }
        if keep is not None:  # ncu's own outputs, for the record
            keep.mkdir(parents=True, exist_ok=True)
            for f in Path(tmp).glob("*.csv"):
                (keep / f.name).write_bytes(f.read_bytes())
    out: dict = {"tool": ncu, "kernel_filter": kernel_filter, "sides": sides}
    errors = [s["error"] for s in sides.values() if "error" in s]
    if errors:
        out["error"] = " ".join(errors)
    if all("kernels" in s for s in sides.values()):
        out["rows"] = N.ab_rows(sides["a"]["kernels"], sides["b"]["kernels"])
    return out
