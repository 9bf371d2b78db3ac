"""Self-contained result folders: comparison.json plus each kernel's artifacts (opens offline)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from .analysis_pipeline import cache_for, dumps
from .locking import atomic_write

ARTIFACTS = ("kernel.ptx", "kernel.cubin", "kernel.mlir")
TEXTS = ("sass.txt", "sass_g.txt", "lrm.txt", "res.txt")


def _copy_kernel(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for name in ARTIFACTS:
        p = src / name
        if p.is_file():
            if name == "kernel.cubin":
                shutil.copy(p, dst / name)
            else:
                (dst / f"{name}.gz").write_bytes(gzip.compress(p.read_bytes(), 6, mtime=0))
    cache = cache_for(src)
    if cache is not None:
        for name in TEXTS:
            for cand in (cache / name, cache / f"{name}.gz"):
                if cand.is_file():
                    data = cand.read_bytes()
                    if cand.suffix != ".gz":
                        data = gzip.compress(data, 6, mtime=0)
                    (dst / f"{name}.gz").write_bytes(data)
                    break


def _save_source(src: Path, folder: Path, side: str, short: str, copied: dict[tuple[str, str], str]) -> str:
    """Copy one source file into ``src/<side>/``, or reuse side A's copy when it is the same file."""
    other = copied.get(("a", short)) if side == "b" else None
    if other and (folder / other).read_bytes() == src.read_bytes():
        return other
    dst = folder / "src" / side / short
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return f"src/{side}/{short}"


def save_result(comparison: dict, folder: Path) -> dict:
    """Copy artifacts into ``folder`` and write comparison.json with paths relative to it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    result = json.loads(dumps(comparison))
    copied: dict[tuple[str, str], str] = {}  # (side, short path) → saved path, once per file
    for k_index, k in enumerate(result["kernels"]):
        for side in ("a", "b"):
            m = k.get(side)
            if not m:
                continue
            srcs = {}
            for short, original in (m.get("sources") or {}).items():
                src = Path(original)
                if not src.is_file() or Path(short).is_absolute() or ".." in Path(short).parts:
                    continue
                if (side, short) not in copied:
                    copied[(side, short)] = _save_source(src, folder, side, short, copied)
                srcs[short] = copied[(side, short)]
            m["sources"] = srcs
            files = m["files"]
            rel = f"{side}/{k_index:03d}"
            _copy_kernel(Path(files["dir"]), folder / rel)
            files["dir"] = rel
            if files.get("lineinfo_dir"):
                rel_li = f"{side}/{k_index:03d}-lineinfo"
                _copy_kernel(Path(files["lineinfo_dir"]), folder / rel_li)
                files["lineinfo_dir"] = rel_li
    for cc in (result.get("crosscheck") or {}).values():
        if isinstance(cc, dict):
            cc.pop("ptxas_paths", None)  # machine-specific
    atomic_write(folder / "comparison.json", json.dumps(result, indent=1))
    return absolutize(result, folder)


def absolutize(comparison: dict, base: Path) -> dict:
    """Resolve kernel folders saved relative to a result folder."""
    for k in comparison.get("kernels", []):
        for side in ("a", "b"):
            m = k.get(side)
            if not m or "files" not in m:
                continue
            for key in ("dir", "lineinfo_dir"):
                v = m["files"].get(key)
                if v and not Path(v).is_absolute():
                    m["files"][key] = str((base / v).resolve())
            srcs = m.get("sources") or {}
            for short, v in list(srcs.items()):
                if v and not Path(v).is_absolute():
                    srcs[short] = str((base / v).resolve())
    comparison["_base"] = str(base)
    return comparison
