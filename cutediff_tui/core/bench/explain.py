"""Verdict sentences that tie a kernel's time to its local-memory (spill) traffic.

A kernel that is SLOWER and whose local traffic grew says so in one sentence, with its B/A
interval and the traffic on both sides; SAME (or FASTER) with more local traffic is reported too,
so that a spill that costs nothing yet is not lost. Traffic comes from ``--profile`` (Nsight
Compute); without it, the sentences say the timing only.
"""

from __future__ import annotations


def fmt_rate(gbps: float | None) -> str:
    if gbps is None:
        return "?"
    if gbps == 0:
        return "0"
    if gbps >= 1:
        return f"{gbps:.1f} GB/s"
    return f"{gbps * 1000:.1f} MB/s"


def _pct(r: float) -> str:
    return f"{(r - 1) * 100:+.1f}%"


def sentence(name: str, row: dict, traffic: tuple[float | None, float | None] | None) -> str | None:
    """One kernel's sentence, or None when there is nothing to say (SAME and no traffic change)."""
    verdict = row.get("verdict")
    if "ratio" not in row:
        return f"{name} runs on side {'A' if verdict == 'ONLY A' else 'B'} only."
    head = f"{name}: {_pct(row['ratio'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"
    ta, tb = traffic if traffic is not None else (None, None)
    if ta is None or tb is None:
        return f"{head}, {verdict}." if verdict in ("SLOWER", "FASTER", "UNSURE") else None
    grew = tb > ta * 1.05 and tb - ta > 1e-6
    moved = f"local traffic {fmt_rate(ta)} → {fmt_rate(tb)}"
    if verdict == "SLOWER" and grew:
        return f"{head}, SLOWER, {moved}: the slowdown comes with more spill traffic on side B."
    if verdict == "SLOWER":
        return f"{head}, SLOWER, {moved}: not explained by spill traffic (look at the stall reasons)."
    if grew:
        return f"{head}, {verdict}, yet {moved}: side B spills more without costing time here."
    if verdict in ("FASTER", "UNSURE"):
        return f"{head}, {verdict}, {moved}."
    if ta > tb * 1.05 and ta - tb > 1e-6:
        return f"{head}, {verdict}, {moved}: side A spills more without costing time here."
    return None


def explain(result: dict) -> list[str]:
    """The verdict sentences of a bench result (per case and kernel; whole call when no kernels)."""
    prof = (result.get("profile") or {}).get("sides") or {}
    ka = (prof.get("a") or {}).get("kernels") or {}
    kb = (prof.get("b") or {}).get("kernels") or {}
    out = []
    many = len(result.get("shapes", [])) > 1
    for case in result.get("shapes", []):
        prefix = f"[{case['shape'].get('label')}] " if many else ""
        rows = case.get("kernels") or []
        for row in rows:
            name = row["kernel"]
            traffic = None
            if name in ka or name in kb:
                traffic = ((ka.get(name) or {}).get("local_gbps", 0.0), (kb.get(name) or {}).get("local_gbps", 0.0))
            s = sentence(name, row, traffic)
            if s:
                out.append(prefix + s)
        if not rows and "ratio" in case:
            s = sentence("whole call", case, None)
            if s:
                out.append(prefix + s)
    return out
