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
            by_offset = {s["offset"]: s for s in spills.get("sites", []) if s.get("offset") is not None}
            matched = 0
            for site in kside["spill_sites"]:
                hit = by_offset.get(site.get("addr"))
                if hit and site.get("opcode", "") in hit["sass"]:
                    site["executed"] = hit["executed"]
                    matched += 1
            kside["spill_executed"] = {
                "matched": matched,
                "sites": len(kside["spill_sites"]),
                "ldl_executed": spills.get("ldl_executed"),
                "stl_executed": spills.get("stl_executed"),
            }
            placed += matched
    return placed


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
