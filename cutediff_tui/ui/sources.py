"""Finding the Python source behind an instruction (headless).

Line info names files as compiled: an absolute path inside the side's environment
(``/…/site/flash_attn/cute/tile_scheduler.py``), a path on the machine that compiled it
(``/tmp/ov-4.8.0/flash_attn/cute/…``) or a relative one (``flash_attn/cute/…``). A file is
looked up as given, then by its trailing components under the side's environment
(``site``), under the result folder (``sources/<side>``) and under the working directory.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from cutediff_tui.core.remarks import short_path
from cutediff_tui.core.sanitize import visible

MAX_SOURCE_BYTES = 8_000_000

__all__ = ["SourceRef", "resolve_source", "read_lines", "display_path", "search_roots"]


@dataclass(frozen=True)
class SourceRef:
    """Where a line of source is, and whether it is on this machine."""

    file: str
    line: int
    path: Path | None
    """The file found on disk, or None when it is not on this machine."""

    @property
    def label(self) -> str:
        return f"{display_path(self.file)}:{self.line}"


def display_path(file: str) -> str:
    """The path as a reader wants it: environment prefixes dropped."""
    p = short_path(file)
    if p != file:
        return p
    parts = Path(file).parts
    for anchor in ("flash_attn", "quack", "cutlass", "cutediff_tui"):
        if anchor in parts:
            return str(Path(*parts[parts.index(anchor) :]))
    return file


def search_roots(comparison: dict, side: str) -> tuple[Path, ...]:
    """Folders to look in for side ``side``'s sources, best first.

    A result loaded from a file (it has ``_base``) is searched only inside its own folder: it may
    come from someone else, and its paths must not reach other files of this machine.
    """
    roots: list[Path] = []
    base = comparison.get("_base")
    if base:
        return (Path(base) / "src" / side, Path(base) / "sources" / side)
    env = (comparison.get("sides", {}).get(side) or {}).get("env")
    if env:
        from cutediff_tui.core.paths import envs_dir

        roots.append(envs_dir() / env / "site")
    roots.append(Path.cwd())
    return tuple(roots)


def _inside(cand: Path, root: Path) -> bool:
    try:
        cand.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return cand.is_file()


@functools.lru_cache(maxsize=1024)
def _resolve(file: str, roots: tuple[Path, ...], confined: bool = False) -> Path | None:
    p = Path(file)
    if not confined and p.is_absolute() and p.is_file():
        return p
    parts = [x for x in p.parts if x not in ("/", "", ".", "..")]
    for root in roots:
        if not root.is_dir():
            continue
        for k in range(len(parts) - 1):
            cand = root.joinpath(*parts[k:])
            if _inside(cand, root):
                return cand
        if len(parts) == 1 and _inside(root / parts[0], root):
            return root / parts[0]
    return None


def resolve_source(file: str, line: int, comparison: dict, side: str, known: dict | None = None) -> SourceRef:
    """Find ``file`` for side ``side``; the ref says where, or that it is not here.

    ``known`` is the kernel's ``sources`` map (path as in the line info -> local copy),
    consulted first.
    """
    for key in (file, display_path(file)):
        local = (known or {}).get(key)
        if local and Path(local).is_file():
            return SourceRef(file, line, Path(local))
    confined = bool(comparison.get("_base"))
    return SourceRef(file, line, _resolve(file, search_roots(comparison, side), confined))


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime: float) -> tuple[str, ...]:
    if os.path.getsize(path) > MAX_SOURCE_BYTES or not os.path.isfile(path):
        return ()
    with open(path, encoding="utf-8", errors="replace") as f:
        return tuple(visible(line) for line in f.read().splitlines())


def read_lines(path: Path) -> tuple[str, ...]:
    """The lines of a text file (cached until it changes); empty when unreadable."""
    try:
        return _read(str(path), os.stat(path).st_mtime)
    except OSError:
        return ()
