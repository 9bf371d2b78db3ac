"""What is in the cache, proving what cutediff made, and removing only that.

The cache root gets a ``CACHEDIR.TAG`` (the standard tag, with a cutediff line) and every entry
cutediff makes gets a marker file (:data:`ENTRY_MARK`). ``cache clear`` removes an entry only
when the root carries the tag and the entry carries its marker (or, for entries made before
markers existed, the record cutediff writes in it: ``integrity.json``, ``env.json``), so a
mis-set ``CUTEDIFF_CACHE_DIR`` cannot make it delete someone else's folders.

Entries with hash records (builds, disassembly, imports) are checked with :func:`verify_record`;
:func:`write_record` makes one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from .errors import CutediffError
from .locking import pid_alive
from .paths import cache_dir

__all__ = [
    "AREAS",
    "ENTRY_MARK",
    "ROOT_TAG",
    "cache_clear",
    "cache_info",
    "clean_stale_temps",
    "disk_usage",
    "human_size",
    "is_ours",
    "mark_entry",
    "mark_root",
    "verify_record",
    "write_record",
]

ROOT_TAG = "CACHEDIR.TAG"
_TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by cutediff (https://github.com/ — cutediff).\n"
    "# cutediff cache clear removes only entries marked as its own below this folder.\n"
)
ENTRY_MARK = ".cutediff-entry"
RECORD = "integrity.json"
#: Cache areas ``cache info`` counts and ``cache clear`` may empty: (folder, what, cleared by default).
AREAS = (
    ("artifacts", "builds", True),
    ("disasm", "disassembly", True),
    ("imports", "imported artifacts", True),
    ("comparisons", "comparisons", True),
    ("logs", "logs of failed builds", True),
    ("sources", "recipe sources", False),
    ("tools", "CUDA tools", False),
    ("envs", "environments", False),
)
_LEGACY_RECORDS = ("integrity.json", "env.json")


def mark_root(root: Path | None = None) -> None:
    """Write the cache root's tag (once)."""
    root = Path(root) if root is not None else cache_dir()
    tag = root / ROOT_TAG
    if not tag.is_file():
        root.mkdir(parents=True, exist_ok=True)
        tag.write_text(_TAG_TEXT)


def mark_entry(entry: Path) -> None:
    """Mark ``entry`` (a folder cutediff just made in the cache) as cutediff's, and its cache root."""
    entry = Path(entry)
    entry.mkdir(parents=True, exist_ok=True)
    (entry / ENTRY_MARK).write_text("made by cutediff\n")
    root = cache_dir()
    try:
        entry.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return
    mark_root(root)


def _root_is_ours(root: Path) -> bool:
    try:
        return (root / ROOT_TAG).read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    except OSError:
        return False


def is_ours(entry: Path) -> bool:
    """Whether ``entry`` carries proof that cutediff made it (a marker, or its own record)."""
    if entry.is_symlink():
        return False
    if entry.is_file():  # comparisons/*.json
        try:
            with open(entry, "rb") as fh:
                return entry.suffix == ".json" and b'"cutediff.' in fh.read(4096)
        except OSError:
            return False
    return entry.is_dir() and any((entry / n).is_file() for n in (ENTRY_MARK, *_LEGACY_RECORDS))


def _entries(area: Path) -> list[Path]:
    """Entries of one area; disassembly is kept per build and kernel (``disasm/KEY/INDEX``)."""
    if not area.is_dir() or area.is_symlink():
        return []
    out = []
    for p in sorted(area.iterdir()):
        if p.name.startswith(".") or p.name.endswith(".lock"):
            continue
        out.append(p)
    return out


def _entry_proven(area_name: str, p: Path) -> bool:
    if area_name == "disasm" and p.is_dir() and not p.is_symlink():  # KEY/ holds INDEX/ entries
        kids = [k for k in p.iterdir() if not k.name.startswith(".")]  # .INDEX.lock files
        return bool(kids) and all(k.is_dir() and is_ours(k) for k in kids)
    return is_ours(p)


def disk_usage(p: Path) -> int:
    """Bytes on disk below ``p`` (allocated blocks, so a sparse file counts what it uses)."""
    total = 0
    try:
        if p.is_symlink() or p.is_file():
            st = p.lstat()
            return st.st_blocks * 512
        for dirpath, dirnames, filenames in os.walk(p):
            for name in filenames + dirnames:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                total += st.st_blocks * 512
    except OSError:
        pass
    return total


def human_size(n: int) -> str:
    """``n`` bytes as ``12.3 MB`` (powers of 1024, one decimal)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def cache_info() -> dict:
    """Every area of the cache: entries and bytes (also readable), and the total."""
    root = cache_dir()
    areas = {}
    total = 0
    for name, what, _default in AREAS:
        folder = root / name
        entries = _entries(folder)
        b = disk_usage(folder) if folder.is_dir() else 0
        total += b
        areas[name] = {"what": what, "entries": len(entries), "bytes": b, "size": human_size(b)}
    other = 0
    if root.is_dir():
        known = {a[0] for a in AREAS}
        for p in root.iterdir():
            if p.name not in known:
                other += disk_usage(p)
    total += other
    return {
        "root": str(root),
        "marked": _root_is_ours(root),
        "areas": areas,
        "other_bytes": other,
        "total_bytes": total,
        "total": human_size(total),
    }


def cache_clear(what: str = "builds") -> dict:
    """Remove the entries cutediff can prove it made: builds, disassembly, imports and
    comparisons (``what="builds"``), and environments, tools and sources too (``"all"``).

    Returns {"removed": n, "kept": [paths without proof], "bytes": freed}. Refuses in one sentence
    when the root carries no cutediff tag.
    """
    root = cache_dir()
    if not root.is_dir():
        return {"removed": 0, "kept": [], "bytes": 0}
    if not _root_is_ours(root):
        raise CutediffError(
            f"{root} does not carry the {ROOT_TAG} that cutediff writes in its cache, so cutediff clears "
            "nothing there (CUTEDIFF_CACHE_DIR may point at the wrong folder).",
            "Check CUTEDIFF_CACHE_DIR; a cache made by an older cutediff gets the tag with its next build.",
        )
    removed, freed, kept = 0, 0, []
    for name, _what, default in AREAS:
        if not (default or what == "all"):
            continue
        for p in _entries(root / name):
            if not _entry_proven(name, p):
                kept.append(str(p))
                continue
            b = disk_usage(p)
            try:
                if p.is_dir():
                    trash = p.with_name(f".tmp-clear-{p.name}-{os.getpid()}")
                    os.replace(p, trash)  # a removal cut short leaves no half entry under its name
                    shutil.rmtree(trash, ignore_errors=True)
                else:
                    p.unlink()
            except OSError:
                kept.append(str(p))
                continue
            removed += 1
            freed += b
    return {"removed": removed, "kept": kept, "bytes": freed}


# ---------------------------------------------------------------- integrity records


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.name not in (RECORD, ENTRY_MARK):
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            out[str(p.relative_to(root))] = h.hexdigest()
    return out


def write_record(entry: Path) -> None:
    """Record the hash of every file in ``entry`` (and mark it as cutediff's)."""
    mark_entry(entry)
    tmp = entry / f".{RECORD}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"files": _hashes(entry)}))
    os.replace(tmp, entry / RECORD)


def verify_record(entry: Path) -> str | None:
    """None when every file of ``entry`` matches its record, else why not (a missing record, a
    changed, missing or added file)."""
    try:
        expected = json.loads((entry / RECORD).read_text())["files"]
        if not isinstance(expected, dict):
            raise TypeError
    except FileNotFoundError:
        return "its integrity record is missing"
    except (ValueError, KeyError, TypeError, OSError):
        return "its integrity record is corrupt"
    actual = _hashes(entry)
    for rel, digest in expected.items():
        if rel not in actual:
            return f"{rel} is missing"
        if actual[rel] != digest:
            return f"{rel} does not match its recorded hash"
    extra = sorted(set(actual) - set(expected))
    if extra:
        return f"{extra[0]} was added after it was made"
    return None


def clean_stale_temps(folder: Path) -> int:
    """Remove temporary files and folders that a dead cutediff process left in ``folder``
    (``NAME.PID.tmp``, ``.NAME.tmpPID-TID``, ``.tmp-…-PID…``); those of live processes stay."""
    import re

    removed = 0
    if not folder.is_dir():
        return 0
    for p in folder.iterdir():
        m = (
            re.match(r".*\.(\d+)\.tmp$", p.name)
            or re.match(r"^\..*\.tmp(\d+)-\d+$", p.name)
            or re.match(r"^\.tmp-(?:clear-)?.*?-(\d+)(?:-\d+)?$", p.name)
        )
        if not m or pid_alive(int(m.group(1))):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                p.unlink()
            except OSError:
                continue
        removed += 1
    return removed
