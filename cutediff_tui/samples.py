"""The bundled sample comparison (made by cutediff itself; see samples/README.md).

It ships inside the package (``cutediff_tui/data/samples/``), so an installed wheel opens it
with no checkout, no network and no CUDA tools.
"""

from __future__ import annotations

from pathlib import Path

from .core.errors import CutediffError
from .core.paths import package_root

__all__ = ["SAMPLE_NAME", "bundled_sample_dir", "default_sample", "is_bundled_sample", "sample_dirs"]

SAMPLE_NAME = "fa4-sm103a-4.5.1-vs-4.8.0"


def sample_dirs() -> list[Path]:
    """Folders that hold bundled samples (only the package's own data folder today)."""
    return [package_root() / "data" / "samples"]


def bundled_sample_dir() -> Path:
    """The bundled sample's folder (``comparison.json`` and its kernel folders)."""
    return sample_dirs()[0] / SAMPLE_NAME


def default_sample() -> Path:
    """The bundled sample's ``comparison.json``."""
    for root in sample_dirs():
        p = root / SAMPLE_NAME / "comparison.json"
        if p.is_file():
            return p
    raise CutediffError(
        f"The bundled sample is missing from this installation ({bundled_sample_dir()} does not exist), "
        "so a broken or partial copy of cutediff is installed.",
        "Install cutediff from a wheel (pip install --force-reinstall cutediff), or open a result with: "
        "cutediff open RESULT.",
    )


def is_bundled_sample(path: Path | None) -> bool:
    """Whether ``path`` (a comparison.json or its folder) is the bundled sample."""
    if path is None:
        return False
    try:
        p = Path(path).resolve()
        here = bundled_sample_dir().resolve()
    except OSError:
        return False
    return p == here or p == here / "comparison.json"
