"""ptxas cross-check: assemble each side's PTX with several ptxas versions.

Tells apart "the DSL emits worse PTX" from "a newer ptxas allocates registers worse":
each side's PTX is compiled with each requested ptxas (installed on demand from the
``nvidia-cuda-nvcc`` wheel into a cache) and the spill figures form a matrix.

PTX ISA support: CUDA 13.N's ptxas accepts PTX ISA up to 9.N, CUDA 12.N's up to 8.N
(in general ISA major = CUDA major - 4). A newer ``.version`` is rewritten down only
when allowed, and such cells are labelled with ``rewritten_from``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cutediff_tui.core.analysis.ptx import ptx_version, rewrite_ptx_version
from cutediff_tui.core.analysis.ptxas_log import parse_ptxas_v_all
from cutediff_tui.core.errors import CutediffError, ToolchainError

__all__ = [
    "Cell",
    "CrossCheck",
    "ensure_ptxas",
    "crosscheck",
    "max_ptx_isa",
    "verdict",
    "run_ptxas",
]

_ENTRY_RE = re.compile(r"\.entry\s+([\w$.]+)")
_UNSUPPORTED_RE = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'")


@dataclass(slots=True)
class Cell:
    """One (side, ptxas) compile.

    Attributes:
        side: key of ``ptx_by_side`` (e.g. ``"4.5.1"``).
        ptx_version: the PTX ``.version`` as emitted.
        ptxas_version: ptxas release used (``"13.0"``).
        rewritten_from: original ``.version`` when it was rewritten down, else None.
        registers, stack, spill_stores, spill_loads: from ``ptxas -v`` (None on error).
        error: one-sentence error, or None.
        log: ptxas's stderr.
    """

    side: str
    ptx_version: str | None
    ptxas_version: str
    rewritten_from: str | None = None
    registers: int | None = None
    stack: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    error: str | None = None
    log: str = ""

    @property
    def spills(self) -> bool | None:
        """True/False when compiled, None on error."""
        if self.error is not None or self.spill_stores is None:
            return None
        return bool(self.spill_stores or self.spill_loads)


@dataclass(slots=True)
class CrossCheck:
    """The matrix of cells and a one-sentence verdict.

    ``cause`` is ``"ptx"``, ``"ptxas"``, ``"both"``, ``"none"`` (no spills, or no
    difference) or ``"unknown"`` (not enough successful cells).
    """

    matrix: list
    verdict: str
    cause: str = "unknown"
    arch: str = ""
    ptxas_paths: dict = field(default_factory=dict)

    def cell(self, side: str, ptxas_version: str) -> Cell | None:
        """Return the cell for a side and ptxas version, or None."""
        for c in self.matrix:
            if c.side == side and c.ptxas_version == ptxas_version:
                return c
        return None


def _release(version: str) -> tuple[int, int]:
    parts = version.strip().split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise CutediffError(f"{version!r} is not a CUDA version like 13.4 or 13.4.92.") from None


def max_ptx_isa(ptxas_version: str) -> str:
    """Newest PTX ISA a ptxas release accepts: CUDA 13.N -> 9.N, 12.N -> 8.N."""
    major, minor = _release(ptxas_version)
    return f"{major - 4}.{minor}"


def _vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def _package_spec(version: str) -> str:
    major, _ = _release(version)
    pkg = "nvidia-cuda-nvcc-cu12" if major == 12 else "nvidia-cuda-nvcc"
    n = len(version.split("."))
    return f"{pkg}=={version}" if n >= 3 else f"{pkg}=={version}.*"


def _find_ptxas(root: Path) -> Path | None:
    exe = "ptxas.exe" if os.name == "nt" else "ptxas"
    for sub in ("nvidia/cu13/bin", "nvidia/cuda_nvcc/bin", "nvidia/cu12/bin"):
        p = root / sub / exe
        if p.is_file():
            return p
    for p in sorted(root.glob(f"nvidia/*/bin/{exe}")):
        return p
    return None


def _uv_bin() -> str | None:
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found]

        return find_uv_bin()
    except Exception:
        return shutil.which("uv")


def ensure_ptxas(version: str, cache_dir: os.PathLike | str) -> Path:
    """Return a ptxas of the given CUDA release, installing it into the cache if needed.

    The ``nvidia-cuda-nvcc`` wheel (``-cu12`` for CUDA 12) is installed without its
    dependencies into ``cache_dir/tools/ptxas-<version>`` with ``uv pip install --target``
    (``pip`` when uv is unavailable), in a temporary folder that is renamed into place.

    Raises:
        ToolchainError: the install failed or the wheel holds no ptxas.
    """
    tools = Path(cache_dir) / "tools"
    target = tools / f"ptxas-{version}"
    found = _find_ptxas(target) if target.is_dir() else None
    if found:
        return found
    tools.mkdir(parents=True, exist_ok=True)
    tmp = tools / f".tmp-ptxas-{version}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    spec = _package_spec(version)
    uv = _uv_bin()
    if uv:
        cmd = [uv, "pip", "install", "--quiet", "--no-deps", "--python", sys.executable, "--target", str(tmp), spec]
    else:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(tmp),
            spec,
        ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ToolchainError(
            f"ptxas {version} could not be installed: {e}.", hint="Check the network access to PyPI."
        ) from None
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        why = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "unknown error")
        raise ToolchainError(
            f"ptxas {version} could not be installed ({spec}): {why}",
            hint="Pick a CUDA release that has an nvidia-cuda-nvcc wheel, e.g. 13.0 or 13.4.",
        )
    if _find_ptxas(tmp) is None:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ToolchainError(f"The wheel {spec} contains no ptxas binary.")
    if not target.exists():
        with contextlib.suppress(OSError):  # another process won the race: use its copy
            os.replace(tmp, target)
    if tmp.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    found = _find_ptxas(target)
    if found is None:
        raise ToolchainError(f"ptxas {version} is missing from {target} after installing it.")
    return found


def run_ptxas(ptxas: os.PathLike | str, ptx_text: str, arch: str, *, timeout: float = 600) -> tuple[int, str]:
    """Assemble PTX text with ``ptxas -arch=<arch> -v``; return (exit status, stderr+stdout)."""
    with tempfile.TemporaryDirectory(prefix="cutediff-ptxas-") as d:
        src = Path(d) / "kernel.ptx"
        src.write_text(ptx_text.rstrip("\x00"), encoding="utf-8")
        try:
            proc = subprocess.run(
                [str(ptxas), f"-arch={arch}", "-v", str(src), "-o", str(Path(d) / "kernel.cubin")],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return 124, f"ptxas did not finish within {timeout:g} s"
        return proc.returncode, (proc.stderr or "") + (proc.stdout or "")


def _first_error(log: str) -> str:
    for ln in log.splitlines():
        if "fatal" in ln or "error" in ln.lower():
            return ln.strip()
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return lines[0] if lines else "ptxas failed"


def _compile_cell(
    side: str, text: str, ptxas: Path | None, pv: str, arch: str, allow_rewrite: bool, install_error: str | None
) -> Cell:
    version = ptx_version(text)
    cell = Cell(side, version, pv)
    if install_error is not None or ptxas is None:
        cell.error = install_error or f"ptxas {pv} is not available"
        return cell
    supported = max_ptx_isa(pv)
    if version is not None and _vtuple(version) > _vtuple(supported):
        if not allow_rewrite:
            cell.error = (
                f"PTX {version} is newer than ptxas {pv} accepts; "
                f"pass --allow-ptx-rewrite to rewrite .version (labelled)"
            )
            return cell
        text = rewrite_ptx_version(text, supported)
        cell.rewritten_from = version
    rc, log = run_ptxas(ptxas, text, arch)
    m = _UNSUPPORTED_RE.search(log)
    if rc != 0 and m and allow_rewrite and cell.rewritten_from is None:
        # the release table was off for this ptxas: use the version it names
        text = rewrite_ptx_version(text, m.group(2))
        cell.rewritten_from = version
        rc, log = run_ptxas(ptxas, text, arch)
    cell.log = log
    if rc != 0:
        if m and cell.rewritten_from is None:
            cell.error = (
                f"PTX {m.group(1)} is newer than ptxas {pv} accepts (at most {m.group(2)}); "
                f"pass --allow-ptx-rewrite to rewrite .version (labelled)"
            )
        else:
            cell.error = _first_error(log)
        return cell
    funcs = [f for f in parse_ptxas_v_all(log) if f.is_entry] or parse_ptxas_v_all(log)
    if not funcs:
        cell.error = "ptxas printed no resource usage"
        return cell
    names = _ENTRY_RE.findall(text)
    pick = [f for f in funcs if f.name in names] or funcs
    f = max(pick, key=lambda x: (x.spill_stores + x.spill_loads, x.registers or 0))
    cell.registers, cell.stack = f.registers, f.stack_frame
    cell.spill_stores, cell.spill_loads = f.spill_stores, f.spill_loads
    return cell


def verdict(matrix: list[Cell], sides: list[str], versions: list[str]) -> tuple[str, str]:
    """Classify the matrix: returns ``(cause, sentence)``.

    The first side is the baseline (A), the second the candidate (B).
    """
    status: dict[str, dict[str, bool]] = {}
    for c in matrix:
        if c.spills is not None:
            status.setdefault(c.side, {})[c.ptxas_version] = c.spills
    if len(sides) < 2 or any(len(status.get(s, {})) == 0 for s in sides[:2]):
        return "unknown", "no verdict: too few ptxas runs succeeded to compare the two sides"
    a, b = sides[0], sides[1]
    common = [v for v in versions if v in status[a] and v in status[b]]
    if not common:
        return "unknown", "no verdict: no ptxas version compiled both sides"
    if not any(status[a][v] or status[b][v] for v in common):
        return "none", f"no spills: neither side spills under ptxas {', '.join(common)}"
    ptx_effect = any(status[a][v] != status[b][v] for v in common)
    ptxas_effect = any(len({status[s][v] for v in common}) > 1 for s in (a, b))

    def spill_list(s: str) -> str:
        vs = [v for v in common if status[s][v]]
        return "ptxas " + ", ".join(vs) if vs else "no ptxas"

    if ptx_effect and not ptxas_effect:
        worse, better = (b, a) if status[b][common[0]] else (a, b)
        word = "regression" if worse == b else "improvement"
        return "ptx", (
            f"{word} is in the PTX the DSL emits: {worse}'s PTX spills under every ptxas "
            f"({', '.join(common)}), {better}'s under none"
        )
    if ptxas_effect and not ptx_effect:
        return "ptxas", (
            f"the difference is in ptxas: the same PTX spills with one ptxas and not another "
            f"({a}: {spill_list(a)}; {b}: {spill_list(b)})"
        )
    if ptx_effect and ptxas_effect:
        return "both", (f"both the PTX and ptxas matter ({a} spills under {spill_list(a)}; {b} under {spill_list(b)})")
    return "none", f"no difference: both sides spill under every ptxas ({', '.join(common)})"


def crosscheck(
    ptx_by_side: dict[str, str], ptxas_versions: list[str], arch: str, cache_dir: os.PathLike | str, allow_rewrite: bool
) -> CrossCheck:
    """Compile every side's PTX with every ptxas version and judge where spills come from.

    Args:
        ptx_by_side: side name -> PTX text; the first side is the baseline.
        ptxas_versions: CUDA releases such as ``["13.0", "13.4"]``.
        arch: ``sm_103a``...
        cache_dir: where ptxas installs are kept (``<cache>/tools/ptxas-<v>``).
        allow_rewrite: rewrite a too-new ``.version`` down to what a ptxas accepts.
    """
    paths: dict[str, Path | None] = {}
    install_errors: dict[str, str] = {}
    for v in ptxas_versions:
        try:
            paths[v] = ensure_ptxas(v, cache_dir)
        except CutediffError as e:
            paths[v] = None
            install_errors[v] = str(e)
    jobs = [(side, text, v) for side, text in ptx_by_side.items() for v in ptxas_versions]
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        matrix = list(
            pool.map(
                lambda j: _compile_cell(j[0], j[1], paths[j[2]], j[2], arch, allow_rewrite, install_errors.get(j[2])),
                jobs,
            )
        )
    cause, sentence = verdict(matrix, list(ptx_by_side), list(ptxas_versions))
    return CrossCheck(matrix, sentence, cause, arch, {v: p for v, p in paths.items() if p is not None})
