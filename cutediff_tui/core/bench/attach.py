"""Attach a bench result to a saved comparison, so that reports and checks see it."""

from __future__ import annotations

from pathlib import Path

from ..errors import CutediffError
from ..locking import atomic_write
from ..model import READABLE_SCHEMAS, SCHEMA, decode, dumps


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
    atomic_write(path, dumps(data))  # written back as /2, like every comparison cutediff writes
    return path
