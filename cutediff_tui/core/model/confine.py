"""A result read from a folder keeps to that folder: its kernel folders and sources are followed
only where they stay inside it (or name this machine's cutediff cache). A result may come from
someone else: its paths are data, never pointers to files on this machine.

:func:`absolutize` is what :func:`~cutediff_tui.core.model.io.read_comparison` and
:func:`~cutediff_tui.core.resultdir.save_result` hand back; :func:`confined` checks one path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..paths import cache_dir


def confined(base: Path, value: object, *, roots: tuple[str, str] | None = None) -> Path | None:
    """The real path ``value`` names when it stays inside the result folder ``base`` (relative, no
    ``..``, no symlink leading out); an absolute path may also name this machine's cutediff cache
    (a comparison written by ``compare --json`` names its builds there); else None.

    A result may come from someone else: it is data, never a pointer to a file on this machine.
    """
    if not isinstance(value, str) or not value or "\x00" in value:
        return None
    p = Path(value)
    if not p.is_absolute() and ".." in p.parts:
        return None
    real_base, real_cache = roots if roots is not None else real_roots(base)
    try:
        real = os.path.realpath(p if p.is_absolute() else base / p)
    except (OSError, RuntimeError, ValueError):
        return None
    for root in (real_base, real_cache) if p.is_absolute() else (real_base,):
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return Path(real)
    return None


def real_roots(base: Path) -> tuple[str, str]:
    """``base`` and the cache folder with symlinks resolved: the ``roots`` of :func:`confined`,
    worked out once per result rather than once per path."""
    return os.path.realpath(base), os.path.realpath(cache_dir())


def absolutize(comparison: dict[str, Any], base: Path) -> dict[str, Any]:
    """Resolve kernel folders and sources saved relative to a result folder.

    Paths that leave the folder (absolute ones outside the cache, ``..``, symlinks pointing out)
    are not followed: a kernel folder becomes one that does not exist (its listings show as
    missing) and a source is dropped (shown as "source not in the result"). The values as written
    are kept under ``_refused`` so that :func:`~cutediff_tui.core.resultdir.portable` writes them back unchanged.
    """
    base = Path(base)
    roots = real_roots(base)
    refused: list[list[Any]] = []
    for i, k in enumerate(comparison.get("kernels", [])):
        if not isinstance(k, dict):
            continue
        for side in ("a", "b"):
            m = k.get(side)
            if not isinstance(m, dict) or not isinstance(m.get("files"), dict):
                continue
            for key in ("dir", "lineinfo_dir"):
                v = m["files"].get(key)
                if v:
                    real = confined(base, v, roots=roots)
                    if real is None:
                        refused.append([i, side, "files", key, v])
                        m["files"][key] = str(base / ".not-in-result" / f"{i}-{side}-{key}")
                    else:
                        m["files"][key] = str(real)
            srcs = m.get("sources")
            if isinstance(srcs, dict):
                for short, v in list(srcs.items()):
                    real = confined(base, v, roots=roots)
                    if real is None:
                        refused.append([i, side, "sources", short, v])
                        del srcs[short]
                    else:
                        srcs[short] = str(real)
    comparison["_base"] = str(base)
    if refused:
        comparison["_refused"] = refused
    return comparison
