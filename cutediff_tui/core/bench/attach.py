"""Attach a bench result to a saved comparison, so that reports and checks see it."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import CutediffError
from ..locking import atomic_write


def attach_bench(result_path: Path, bench: dict) -> Path:
    """Write ``bench`` into the comparison at ``result_path`` (a comparison.json or its folder)."""
    path = Path(result_path)
    if path.is_dir():
        path = path / "comparison.json"
    from ..compare import SCHEMA

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise CutediffError(
            f"{path} is not a saved comparison.", "Give a comparison.json written by cutediff compare."
        ) from None
    if data.get("schema") != SCHEMA:
        raise CutediffError(
            f"{path} uses schema {data.get('schema')!r}, not {SCHEMA!r}.", "Re-create it with this cutediff."
        )
    data["bench"] = bench
    atomic_write(path, json.dumps(data, indent=1))
    return path
