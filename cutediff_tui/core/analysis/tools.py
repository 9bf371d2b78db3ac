"""Locate and run NVIDIA's binary utilities (nvdisasm, cuobjdump, ptxas).

Search order for a tool: ``$CUDA_HOME/bin`` (and ``$CUDA_PATH/bin``), then the
``bin`` folders of the installed ``nvidia`` namespace package (the pip wheels
``nvidia-cuda-nvdisasm``, ``nvidia-cuda-cuobjdump``, ``nvidia-cuda-nvcc``, ...),
then ``$PATH``. Nothing heavy is imported: the namespace package is found with
``importlib.util.find_spec`` and by scanning ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from cutediff_tui.core.errors import CutediffError

__all__ = [
    "ToolMissing",
    "ToolFailed",
    "find_tool",
    "run_tool",
    "disassemble",
    "resource_usage",
    "tool_version",
    "check_cubin",
    "NVIDIA_BIN_SUBDIRS",
]

#: Sub-folders of the ``nvidia`` namespace package that hold CUDA binaries, best first.
NVIDIA_BIN_SUBDIRS: tuple[str, ...] = (
    "cu13",
    "cuda_nvdisasm",
    "cuda_cuobjdump",
    "cuda_nvcc",
    "cu12",
)

#: Which pip package ships each tool (for the hint of ToolMissing).
_TOOL_PACKAGES = {
    "nvdisasm": "nvidia-cuda-nvdisasm",
    "cuobjdump": "nvidia-cuda-cuobjdump",
    "ptxas": "nvidia-cuda-nvcc",
}

_EM_CUDA = 190


class ToolMissing(CutediffError):
    """A CUDA binary utility could not be found."""


class ToolFailed(CutediffError):
    """A CUDA binary utility exited with an error or timed out."""

    def __init__(self, message: str, hint: str | None = None, stderr: str = ""):
        super().__init__(message, hint)
        self.stderr = stderr


def _exe_names(name: str) -> tuple[str, ...]:
    return (name + ".exe", name) if os.name == "nt" else (name,)


def _nvidia_roots() -> list[Path]:
    """Folders that are (part of) the ``nvidia`` namespace package, without importing it."""
    roots: list[Path] = []
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        roots.extend(Path(p) for p in spec.submodule_search_locations)
    for entry in sys.path:
        if entry:
            p = Path(entry) / "nvidia"
            if p.is_dir():
                roots.append(p)
    seen: set[str] = set()
    out: list[Path] = []
    for r in roots:
        key = str(r.resolve()) if r.exists() else str(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _candidates(name: str) -> Iterable[Path]:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            for exe in _exe_names(name):
                yield Path(home) / "bin" / exe
    for root in _nvidia_roots():
        for sub in NVIDIA_BIN_SUBDIRS:
            for exe in _exe_names(name):
                yield root / sub / "bin" / exe
        try:
            others = sorted(p for p in root.iterdir() if p.name not in NVIDIA_BIN_SUBDIRS)
        except OSError:
            others = []
        for other in others:
            for exe in _exe_names(name):
                yield other / "bin" / exe


def find_tool(name: str) -> Path:
    """Return the path of a CUDA binary utility.

    Args:
        name: ``nvdisasm``, ``cuobjdump`` or ``ptxas`` (any name works).

    Raises:
        ToolMissing: when the tool is in none of the searched places.
    """
    for cand in _candidates(name):
        if cand.is_file() and os.access(cand, os.X_OK):
            return cand
    found = shutil.which(name)
    if found:
        return Path(found)
    pkg = _TOOL_PACKAGES.get(name, "nvidia-cuda-" + name)
    raise ToolMissing(
        f"{name} was not found in $CUDA_HOME/bin, the installed nvidia wheels or $PATH, "
        f"so cutediff cannot read compiled kernels.",
        hint=f'Install it with `pip install "cutediff[tools]"` or `pip install {pkg}` '
        "(or set CUDA_HOME to a CUDA toolkit).",
    )


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def run_tool(name: str, args: Sequence[str | os.PathLike], *, timeout: float = 120) -> str:
    """Run a CUDA tool and return its stdout as text.

    Args:
        name: tool name, resolved with :func:`find_tool`; an absolute path is used as is.
        args: command-line arguments.
        timeout: seconds before the tool is killed.

    Raises:
        ToolMissing: the tool is not installed.
        ToolFailed: non-zero exit (message carries the first stderr line) or timeout.
    """
    exe = Path(name) if os.path.isabs(name) else find_tool(name)
    cmd = [str(exe), *(os.fspath(a) for a in args)]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise ToolFailed(
            f"{exe.name} did not finish within {timeout:g} s.",
            hint="Retry with a longer timeout or check the input file.",
        ) from e
    except OSError as e:
        raise ToolFailed(f"{exe.name} could not be started: {e}.") from e
    out = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace")
        line = _first_line(err) or _first_line(out) or f"exit status {proc.returncode}"
        raise ToolFailed(f"{exe.name} failed: {line}", stderr=err)
    return out


def check_cubin(path: os.PathLike | str) -> Path:
    """Check that a file exists and looks like a CUDA cubin (ELF, EM_CUDA).

    Raises:
        CutediffError: missing, empty, not ELF, or ELF for another machine.
    """
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(64)
    except FileNotFoundError:
        raise CutediffError(f"{p} does not exist.", hint="Check the path of the cubin.") from None
    except OSError as e:
        raise CutediffError(f"{p} cannot be read: {e.strerror}.") from None
    if not head:
        raise CutediffError(
            f"{p} is not a CUDA cubin (no ELF header): the file is empty.",
            hint="Recompile the kernel; the compile probably failed while writing it.",
        )
    if not head.startswith(b"\x7fELF"):
        raise CutediffError(
            f"{p} is not a CUDA cubin (no ELF header): it starts with {head[:8]!r}.",
            hint="Pass the .cubin that the compiler wrote (CUTE_DSL_KEEP=cubin), not PTX or a log.",
        )
    if len(head) < 20:
        raise CutediffError(f"{p} is not a CUDA cubin (no ELF header): the file is truncated.")
    order: Literal["little", "big"] = "little" if head[5] != 2 else "big"
    machine = int.from_bytes(head[18:20], order)
    if machine != _EM_CUDA:
        raise CutediffError(
            f"{p} is an ELF file for machine {machine}, not a CUDA cubin (EM_CUDA={_EM_CUDA}).",
            hint="Pass the GPU cubin, not a host object or shared library.",
        )
    if head[4] == 2 and len(head) >= 64:
        shoff = int.from_bytes(head[0x28:0x30], order)
        shentsize = int.from_bytes(head[0x3A:0x3C], order)
        shnum = int.from_bytes(head[0x3C:0x3E], order)
        size = p.stat().st_size
        if shoff + shentsize * shnum > size:
            raise CutediffError(
                f"{p} is a truncated CUDA cubin: its section headers end at byte "
                f"{shoff + shentsize * shnum} but the file has {size} bytes.",
                hint="Recompile the kernel; the file was cut short while being written or copied.",
            )
    if head[4] == 2 and head[5] == 1:  # the section table must hold together (nvdisasm would only fail)
        from ..files import read_bounded
        from .fingerprint import cubin_sections

        try:
            cubin_sections(read_bounded(p))
        except CutediffError as exc:
            why = str(exc.args[0]).removeprefix("The cubin is ").rstrip(".")
            raise CutediffError(
                f"{p} is a damaged CUDA cubin ({why}).",
                hint="Recompile the kernel, or check that the file was copied whole.",
            ) from None
    return p


def disassemble(
    cubin: os.PathLike | str, *, line_info: bool = False, live_ranges: bool = False, timeout: float = 120
) -> str:
    """Disassemble a cubin with ``nvdisasm -c`` (``-g`` for line info, ``-lrm count`` for live registers).

    nvdisasm ignores ``-g`` when ``-lrm`` is given, so ask for the two in separate calls and
    combine them with :func:`cutediff_tui.core.analysis.sass.merge_sass`.
    """
    p = check_cubin(cubin)
    args: list[str] = ["-c"]
    if line_info:
        args.append("-g")
    if live_ranges:
        args += ["-lrm", "count"]
    args.append(str(p))
    return run_tool("nvdisasm", args, timeout=timeout)


def resource_usage(cubin: os.PathLike | str, *, timeout: float = 120) -> str:
    """Return ``cuobjdump --dump-resource-usage`` output for a cubin."""
    p = check_cubin(cubin)
    return run_tool("cuobjdump", ["--dump-resource-usage", str(p)], timeout=timeout)


_VERSION_RE = re.compile(r"release\s+(\d+\.\d+),\s*V(\d+(?:\.\d+)+)")


def tool_version(name: str) -> str:
    """Return a tool's version, e.g. ``"13.5.37"`` (the full ``--version`` line if unparsable)."""
    out = run_tool(name, ["--version"], timeout=30)
    m = _VERSION_RE.search(out)
    if m:
        return m.group(2)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""
