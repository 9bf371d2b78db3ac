"""Nsight Compute evidence for the bench: a fixed metric set per kernel, both sides, A/B rows.

``ncu --csv --page raw --metrics …`` writes one row per profiled launch (after a header row and a
units row; ncu's own ``==PROF==``/``==WARNING==`` lines may sit in between). For line-info builds,
``ncu --import REPORT --page source --csv --print-source sass`` gives, per kernel, one row per SASS
instruction with how often it executed; :func:`parse_source_csv` reads it and
:func:`spill_counts` picks the local-memory instructions (the spill sites).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path
from statistics import median

from .kernels import kernel_name

#: The fixed metric set: (key, ncu metric, unit shown).
METRICS = (
    ("duration_ns", "gpu__time_duration.sum", "ns"),
    ("local_load_bytes", "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "B"),
    ("local_store_bytes", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "B"),
    ("occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "%"),
    ("registers", "launch__registers_per_thread", ""),
    ("smem_static_bytes", "launch__shared_mem_per_block_static", "B"),
    ("smem_dynamic_bytes", "launch__shared_mem_per_block_dynamic", "B"),
)
#: How the tables name each row of :func:`ab_rows`.
LABELS = {
    "duration_ns": "duration (ns)",
    "local_load_bytes": "local load bytes",
    "local_store_bytes": "local store bytes",
    "local_gbps": "local traffic",
    "occupancy_pct": "achieved occupancy %",
    "registers": "registers/thread",
    "smem_static_bytes": "shared mem static B",
    "smem_dynamic_bytes": "shared mem dynamic B",
    "top_stalls": "dominant stalls",
}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
STALL_REGEX = r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
#: What ncu prints when it cannot read the hardware counters, and the sentence for each.
_CANNOT = (
    ("ERR_NVGPUCTRPERM", "this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM)"),
    ("LibraryNotLoaded", "ncu's profiler library could not be loaded (LibraryNotLoaded)"),
    ("Failed to initialize the profiler", "ncu could not initialise its profiler"),
    ("No kernels were profiled", "no kernel matched the filter, so nothing was profiled"),
)


def find_ncu() -> str | None:
    """The ``ncu`` on PATH, else the CUDA toolkit's."""
    found = shutil.which("ncu")
    if found:
        return found
    for cand in (Path("/usr/local/cuda/bin/ncu"),):
        if cand.is_file():
            return str(cand)
    return None


def ncu_command(ncu: str, log: Path, argv: list[str], kernel_filter: str | None = None) -> list[str]:
    """Profile the launches between ``cudaProfilerStart``/``Stop`` of ``argv`` with the fixed set;
    the clocks are left as they are (``--clock-control none``)."""
    metrics = ",".join(m for _, m, _ in METRICS) + "," + STALL_REGEX
    cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none", "--profile-from-start", "off"]
    cmd += ["--metrics", metrics, "--log-file", str(log)]
    if kernel_filter:
        cmd += ["--kernel-name", f"regex:{kernel_filter}", "--kernel-name-base", "function"]
    return cmd + list(argv)


def source_command(ncu: str, report: Path, argv: list[str], kernel_filter: str | None = None) -> list[str]:
    """Collect the per-instruction source counters into ``report`` (``.ncu-rep``)."""
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--section", "SourceCounters"]
    cmd += ["--import-source", "yes", "-f", "-o", str(report)]
    if kernel_filter:
        cmd += ["--kernel-name", f"regex:{kernel_filter}", "--kernel-name-base", "function"]
    return cmd + list(argv)


def source_export_command(ncu: str, report: Path) -> list[str]:
    return [ncu, "--import", str(report), "--page", "source", "--csv", "--print-source", "sass"]


def cannot_reason(text: str) -> str | None:
    """Why ncu produced no counters, from its output, or None."""
    for marker, reason in _CANNOT:
        if marker in text:
            return reason
    return None


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    if not t or t in ("n/a", "N/A", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def _csv_rows(text: str) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def parse_raw_csv(text: str, callables: list[str] | tuple[str, ...] = ()) -> list[dict]:
    """One dict per profiled launch: ``kernel`` (table name), ``raw_name``, the :data:`METRICS`
    keys and ``stalls`` (reason → warps stalled per issued instruction)."""
    rows = _csv_rows(text)
    if not rows or "Kernel Name" not in rows[0]:
        return []
    head = rows[0]
    col = {n: i for i, n in enumerate(head)}
    stall_cols = {
        n[len(STALL_PREFIX) : -len(STALL_SUFFIX)]: i
        for n, i in col.items()
        if n.startswith(STALL_PREFIX) and n.endswith(STALL_SUFFIX)
    }
    out = []
    for r in rows[1:]:
        if len(r) < len(head) or not r[col["ID"]].strip():  # the units row has no ID
            continue
        raw = r[col["Kernel Name"]]
        launch: dict = {"kernel": kernel_name(raw, callables), "raw_name": raw}
        for key, metric, _ in METRICS:
            launch[key] = _number(r[col[metric]]) if metric in col else None
        launch["stalls"] = {k: v for k, i in stall_cols.items() if (v := _number(r[i])) is not None}
        out.append(launch)
    return out


def summarize_launches(launches: list[dict]) -> dict[str, dict]:
    """Per kernel: the median of each metric over its launches, local traffic in GB/s and the
    three dominant stall reasons."""
    by: dict[str, list[dict]] = {}
    for la in launches:
        by.setdefault(la["kernel"], []).append(la)
    out: dict[str, dict] = {}
    for name, las in by.items():
        s: dict = {"launches": len(las)}
        for key, _, _ in METRICS:
            vals = [la[key] for la in las if la.get(key) is not None]
            s[key] = median(vals) if vals else None
        ld, st, dur = s["local_load_bytes"] or 0.0, s["local_store_bytes"] or 0.0, s["duration_ns"]
        s["local_bytes"] = ld + st
        s["local_gbps"] = (ld + st) / dur if dur else None  # bytes per ns = GB/s
        stalls: dict[str, list[float]] = {}
        for la in las:
            for k, v in la["stalls"].items():
                stalls.setdefault(k, []).append(v)
        med = {k: median(v) for k, v in stalls.items()}
        s["top_stalls"] = [[k, round(v, 3)] for k, v in sorted(med.items(), key=lambda kv: -kv[1])[:3] if v > 0]
        out[name] = s
    return out


def ab_rows(a: dict[str, dict], b: dict[str, dict]) -> list[dict]:
    """One row per kernel and metric present on either side, with the B−A delta."""
    rows = []
    names = list(a) + [n for n in b if n not in a]
    keys = [k for k, _, _ in METRICS] + ["local_gbps"]
    for name in names:
        sa, sb = a.get(name, {}), b.get(name, {})
        for key in keys:
            va, vb = sa.get(key), sb.get(key)
            if va is None and vb is None:
                continue
            delta = vb - va if va is not None and vb is not None else None
            rows.append({"kernel": name, "metric": key, "a": va, "b": vb, "delta": delta})
        rows.append(
            {
                "kernel": name,
                "metric": "top_stalls",
                "a": sa.get("top_stalls"),
                "b": sb.get("top_stalls"),
                "delta": None,
            }
        )
    return rows


def parse_source_csv(text: str, callables: list[str] | tuple[str, ...] = ()) -> dict[str, list[dict]]:
    """``--page source --csv --print-source sass`` → per kernel (each profiled launch once: the
    first), the instructions in order with ``address``, ``sass`` and ``executed`` (warp-level)."""
    out: dict[str, list[dict]] = {}
    current: list[dict] | None = None
    head: list[str] = []
    for r in csv.reader(io.StringIO(text)):
        if not r:
            continue
        if r[0] == "Kernel Name" and len(r) >= 2:
            name = kernel_name(r[1], callables)
            current = [] if name not in out else None
            if current is not None:
                out[name] = current
            head = []
            continue
        if r[0] == "Address":
            head = r
            continue
        if current is None or not head:
            continue
        row = dict(zip(head, r))
        current.append(
            {
                "address": row.get("Address", ""),
                "sass": row.get("Source", "").strip(),
                "executed": int(_number(row.get("Instructions Executed", "")) or 0),
            }
        )
    return out


def _address(text: str) -> int | None:
    try:
        return int(text, 16)
    except (TypeError, ValueError):
        return None


_LOCAL = re.compile(r"(^|\s)(@!?U?P\w+\s+)?(LDL|STL)(\.|\s|$)")


def spill_counts(listing: list[dict]) -> dict:
    """The local-memory instructions (LDL/STL) of one kernel's listing and how often each ran."""
    base = _address(listing[0]["address"]) if listing else None
    sites = []
    for ins in listing:
        if _LOCAL.search(ins["sass"]):
            addr = _address(ins["address"])
            offset = addr - base if addr is not None and base is not None else None
            sites.append({**ins, "offset": offset})  # byte offset in the kernel, as cuobjdump counts
    return {
        "sites": sites,
        "ldl_executed": sum(i["executed"] for i in sites if "LDL" in i["sass"]),
        "stl_executed": sum(i["executed"] for i in sites if "STL" in i["sass"]),
    }
