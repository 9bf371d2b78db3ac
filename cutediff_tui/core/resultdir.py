"""Self-contained result folders: comparison.json plus each kernel's artifacts (opens offline)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from pathlib import Path

from .analysis_pipeline import cache_for, dumps
from .locking import atomic_write
from .model.confine import absolutize

ARTIFACTS = ("kernel.ptx", "kernel.cubin", "kernel.mlir", "kernel.sass")
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


def _save_recipe(files: list[Path], folder: Path, side: str, copied: dict[tuple[str, str], str]) -> dict[str, str]:
    """Copy a side's recipe file and the helpers its build key covers into ``src/<side>/recipe/``
    (laid out as beside the recipe; a helper elsewhere goes to ``recipe/_outside/N-NAME``):
    real path of each file → its saved path."""
    out: dict[str, str] = {}
    files = [f for f in files if f.is_file() and not f.is_symlink()]
    if not files:
        return out
    base = files[0].resolve().parent
    for i, f in enumerate(files):
        real = f.resolve()
        rel = real.relative_to(base) if real.is_relative_to(base) else Path("_outside") / f"{i}-{real.name}"
        short = f"recipe/{rel.as_posix()}"
        if (side, short) not in copied:
            copied[(side, short)] = _save_source(real, folder, side, short, copied)
        out[str(real)] = copied[(side, short)]
    return out


def save_result(
    comparison: dict, folder: Path, keep_paths: bool = False, recipe_files: dict[str, list[Path]] | None = None
) -> dict:
    """Copy artifacts into ``folder`` and write comparison.json with paths relative to it (home
    folders and the user name removed from the other strings unless ``keep_paths``).

    ``recipe_files``: per side, the recipe file and its helpers this run compiled (the caller's
    :meth:`~cutediff_tui.core.recipes.RecipeInfo.files`); they are saved too, and a kernel source
    named by its absolute path is kept only when it is one of them. Paths read from the comparison
    itself are never a reason to copy a file from this machine."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    result = json.loads(dumps(comparison))
    copied: dict[tuple[str, str], str] = {}  # (side, short path) → saved path, once per file
    own = {side: _save_recipe(list(files), folder, side, copied) for side, files in (recipe_files or {}).items()}
    for k_index, k in enumerate(result["kernels"]):
        for side in ("a", "b"):
            m = k.get(side)
            if not m:
                continue
            srcs = {}
            for short, original in (m.get("sources") or {}).items():
                src = Path(original)
                if Path(short).is_absolute():  # the recipe's own files (a kernel in the recipe or a helper)
                    saved = own.get(side, {}).get(os.path.realpath(src))
                    if saved is not None:
                        srcs[short] = saved
                    continue
                if not src.is_file() or ".." in Path(short).parts:
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
    scrubbed = scrub_paths(result, keep_paths)
    atomic_write(folder / "comparison.json", json.dumps(scrubbed, indent=1))
    return absolutize(scrubbed, folder)  # type: ignore[arg-type]  # a dict scrubs to a dict


def _home_and_user() -> tuple[str, str]:
    import getpass
    import os

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid
        user = ""
    return os.path.expanduser("~").rstrip("/"), user


def scrub_paths(obj: object, keep_paths: bool = False) -> object:
    """Every string in ``obj`` with the home folder written ``~`` and the user name as ``<user>``
    (unless ``keep_paths``): results that travel do not name the people who made them."""
    if keep_paths:
        return obj
    home, user = _home_and_user()
    user_re = re.compile(rf"(?<![\w.-]){re.escape(user)}(?![\w.-])") if len(user) >= 3 else None

    def fix(s: str) -> str:
        if home and home != "/" and home in s:
            s = s.replace(home, "~")
        if user_re is not None and user in s:
            s = user_re.sub("<user>", s)
        return s

    def walk(o: object) -> object:
        if isinstance(o, str):
            return fix(o)
        if isinstance(o, dict):
            return {fix(k) if isinstance(k, str) else k: walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        return o

    return walk(obj)


def portable(comparison: dict, keep_paths: bool = False) -> dict:
    """A JSON-ready copy whose kernel folders and sources are relative to the result folder it was
    loaded from (when they are inside it), with home folders and user names removed."""
    data = json.loads(dumps(comparison))
    base = data.pop("_base", None)
    refused = data.pop("_refused", None) or []
    if base:
        root = Path(base).resolve()
        for k in data.get("kernels") or []:
            for side in ("a", "b"):
                m = k.get(side) if isinstance(k, dict) else None
                if not isinstance(m, dict):
                    continue
                places = [(m.get("files") or {}, key) for key in ("dir", "lineinfo_dir")]
                places += [(m.get("sources") or {}, key) for key in list(m.get("sources") or {})]
                for holder, key in places:
                    v = holder.get(key)
                    if isinstance(v, str) and Path(v).is_absolute():
                        try:
                            holder[key] = str(Path(v).relative_to(root))
                        except ValueError:
                            pass
    for i, side, where, key, value in refused:  # written back as they came
        try:
            data["kernels"][i][side].setdefault(where, {})[key] = value
        except (IndexError, KeyError, TypeError, AttributeError):
            continue
    return scrub_paths(data, keep_paths)  # type: ignore[return-value]
