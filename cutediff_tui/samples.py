"""The bundled sample comparison (made by cutediff itself; see samples/README.md)."""

from __future__ import annotations

from pathlib import Path

from .core.errors import CutediffError
from .core.paths import package_root, project_root

SAMPLE_NAME = "fa4-sm103a-4.5.1-vs-4.8.0"


def sample_dirs() -> list[Path]:
    return [project_root() / "samples", package_root() / "data" / "samples"]


def default_sample() -> Path:
    for root in sample_dirs():
        p = root / SAMPLE_NAME / "comparison.json"
        if p.is_file():
            return p
    raise CutediffError(
        "The bundled sample is missing from this installation.",
        "Reinstall cutediff, or open a result with: cutediff open RESULT.",
    )
