"""Attach a bench result to a saved comparison, so that reports, checks and the TUI see it.

With ``--profile``, Nsight Compute's per-instruction execution counts land on the comparison's
spill sites: a site (an LDL/STL of the static listing) gets ``executed`` (warp-level count, from
the side's ncu source page) when ncu saw the same opcode at the same byte offset of the kernel.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CutediffError
from ..locking import atomic_write
from ..model import READABLE_SCHEMAS, SCHEMA, decode, dumps


def annotate_spill_sites(comparison: dict, bench: dict) -> int:
    """Put ncu's execution counts on the comparison's spill sites; returns how many sites got one."""
    sides = ((bench.get("profile") or {}).get("sides")) or {}
    placed = 0
    for k in comparison.get("kernels", []):
        for side in ("a", "b"):
            spills = ((sides.get(side) or {}).get("spills") or {}).get(k.get("name"))
            kside = k.get(side) or {}
            if not spills or not kside.get("spill_sites"):
                continue
            matched = _place_counts(kside["spill_sites"], spills.get("sites", []))
            kside["spill_executed"] = {
                "matched": matched,
                "sites": len(kside["spill_sites"]),
                "ldl_executed": spills.get("ldl_executed"),
                "stl_executed": spills.get("stl_executed"),
            }
            placed += matched
    return placed


def _place_counts(static: list[dict], measured: list[dict]) -> int:
    """Copy ncu's ``executed`` onto the static spill sites; returns how many got one.

    A site and an ncu row match at the same offset with the same opcode. ncu profiles the build it
    runs (often the line-info build, whose code sits at other offsets), so when offsets do not match,
    the sites are paired in code order instead, provided both lists hold the same opcodes in the same
    order (the same spill code, moved)."""
    by_offset = {m["offset"]: m for m in measured if m.get("offset") is not None}
    hits = [by_offset.get(site.get("addr")) for site in static]
    if not all(h and site.get("opcode", "") in h.get("sass", "") for h, site in zip(hits, static)):
        ordered = sorted((m for m in measured if m.get("offset") is not None), key=lambda m: m["offset"])
        ops = [str(m.get("sass", "")).split(" ", 1)[0] for m in ordered]
        sites = sorted(static, key=lambda site: site.get("addr") or 0)
        if ops == [site.get("opcode") for site in sites]:
            for site, m in zip(sites, ordered):
                site["executed"] = m["executed"]
            return len(sites)
    matched = 0
    for site, hit in zip(static, hits):
        if hit and site.get("opcode", "") in hit.get("sass", ""):
            site["executed"] = hit["executed"]
            matched += 1
    return matched


def attach_bench(result_path: Path, bench: dict) -> Path:
    """Write ``bench`` into the comparison at ``result_path`` (a comparison.json or its folder)."""
    path = Path(result_path)
    if path.is_dir():
        path = path / "comparison.json"
    try:
        data = decode(path.read_bytes())
    except (OSError, ValueError):
        raise CutediffError(
            f"{path} is not a saved comparison.", "Give a comparison.json written by cutediff compare."
        ) from None
    if not isinstance(data, dict) or data.get("schema") not in READABLE_SCHEMAS:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise CutediffError(f"{path} uses schema {schema!r}, not {SCHEMA!r}.", "Re-create it with this cutediff.")
    data["bench"] = bench
    annotate_spill_sites(data, bench)
    atomic_write(path, dumps(data))  # written back as /2, like every comparison cutediff writes
    return path
