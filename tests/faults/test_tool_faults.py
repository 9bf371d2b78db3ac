"""NVIDIA's binary utilities missing or too old, and PTX newer than the ptxas asked for.

No mocks: the tools are looked up as cutediff always does (``$CUDA_HOME/bin`` first, then the
``nvidia`` wheels on ``sys.path``, then ``$PATH``). "Missing" is a Python that cannot see the
wheels (``python -S`` with a copy of site-packages that leaves ``nvidia/`` out) and a bare PATH;
"too old" is a ``$CUDA_HOME/bin`` whose tool is a script that answers like an old release.
"""

from __future__ import annotations

import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cutediff_tui.core.analysis import tools

from .helpers import CUBIN_451 as CUBIN_A
from .helpers import CUBIN_480 as CUBIN_B
from .helpers import PTX_451, PTX_480, ROOT, cutediff, one_sentence


def _site_without_nvidia(dest: Path) -> Path:
    """Links to everything in site-packages but the ``nvidia`` namespace (the tool wheels)."""
    dest.mkdir()
    roots = {Path(p) for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]] if Path(p).is_dir()}
    for root in roots:
        for entry in root.iterdir():
            if entry.name == "nvidia" or entry.suffix == ".pth" or (dest / entry.name).exists():
                continue
            (dest / entry.name).symlink_to(entry)
    return dest


def _diff_without_wheels(tmp_path: Path, cuda_home: Path | None, *args: str) -> subprocess.CompletedProcess:
    sp = _site_without_nvidia(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "PYTHONPATH")}
    env.update(
        PATH="/usr/bin:/bin",
        PYTHONPATH=f"{sp}{os.pathsep}{ROOT}",
        CUTEDIFF_CACHE_DIR=str(tmp_path / "cache"),
        COLUMNS="200",
    )
    if cuda_home is not None:
        env["CUDA_HOME"] = str(cuda_home)
    assert shutil.which("nvdisasm", path=env["PATH"]) is None and shutil.which("cuobjdump", path=env["PATH"]) is None
    return subprocess.run(
        [sys.executable, "-S", "-m", "cutediff_tui.cli", "diff", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def _cuda_home(tmp_path: Path, **tools_: str | Path) -> Path:
    """A $CUDA_HOME whose bin/ holds the given tools: a Path is linked, a str is a shell script."""
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    for name, what in tools_.items():
        exe = home / "bin" / name
        if isinstance(what, Path):
            exe.symlink_to(what)
        else:
            exe.write_text("#!/bin/sh\n" + what)
            exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return home


def _old_tool(name: str, release: str = "11.8", build: str = "11.8.89") -> str:
    """A script that answers ``--version`` like an old release and fails on a newer cubin as it does."""
    return (
        f'if [ "$1" = "--version" ]; then\n'
        f'  echo "{name}: NVIDIA (R) CUDA {name}"\n  echo "Copyright (c) 2005-2022 NVIDIA Corporation"\n'
        f'  echo "Cuda compilation tools, release {release}, V{build}"\n  exit 0\nfi\n'
        f'echo "{name} fatal   : Unsupported ELF file: the file was made by a newer toolkit" >&2\nexit 1\n'
    )


def test_nvdisasm_missing_everywhere(tmp_path):
    proc = _diff_without_wheels(tmp_path, None, str(CUBIN_A), str(CUBIN_B))
    line = one_sentence(proc)
    assert line.startswith(
        "error: Both sides: the analysis failed: nvdisasm was not found in $CUDA_HOME/bin, "
        "the installed nvidia wheels or $PATH"
    ), line
    assert "pip install nvidia-cuda-nvdisasm" in line


def test_cuobjdump_missing_while_nvdisasm_is_found(tmp_path):
    home = _cuda_home(tmp_path, nvdisasm=tools.find_tool("nvdisasm"))
    proc = _diff_without_wheels(tmp_path, home, str(CUBIN_A), str(CUBIN_B))
    line = one_sentence(proc)
    assert "cuobjdump was not found" in line and "pip install nvidia-cuda-cuobjdump" in line, line


@pytest.mark.parametrize("tool", ["nvdisasm", "cuobjdump"])
def test_tool_too_old_in_cuda_home(tmp_path, tool):
    """CUDA_HOME wins over the wheels; an old tool there is named with its version and the way out."""
    other = "cuobjdump" if tool == "nvdisasm" else "nvdisasm"
    home = _cuda_home(tmp_path, **{tool: _old_tool(tool), other: tools.find_tool(other)})
    proc = cutediff(["diff", CUBIN_A, CUBIN_B], tmp_path / "cache", CUDA_HOME=str(home))
    line = one_sentence(proc)
    assert f"{tool} 11.8.89 ({home / 'bin' / tool}) could not read" in line, line
    assert "Unsupported ELF file" in line and "sm_103a" in line
    assert "unset CUDA_HOME" in line or "newer CUDA" in line


def test_ptx_newer_than_the_ptxas_asked_for(compile_cache):
    """Cross-check with ptxas 13.0 on PTX 9.x that DSL 4.8.0 wrote, without --allow-ptx-rewrite: each
    cell says so in one sentence, the verdict is "unknown", nothing is rewritten behind the user's back."""
    from cutediff_tui.core.analysis.crosscheck import crosscheck, max_ptx_isa
    from cutediff_tui.core.analysis.ptx import ptx_version

    ptx = {"a": PTX_451.read_text(), "b": PTX_480.read_text()}
    version = ptx_version(ptx["b"])
    assert tuple(map(int, version.split("."))) > tuple(map(int, max_ptx_isa("13.0").split(".")))
    cc = crosscheck(ptx, ["13.0"], "sm_103a", compile_cache, allow_rewrite=False)
    cell = cc.cell("b", "13.0")
    assert cell.error == (
        f"PTX {version} is newer than ptxas 13.0 accepts; pass --allow-ptx-rewrite to rewrite .version (labelled)"
    )
    assert cell.rewritten_from is None and cell.registers is None
    assert cc.cause == "unknown"


def test_ptx_whose_ptxas_release_cannot_be_installed(tmp_path):
    """`cutediff diff` of PTX files asks for the ptxas that matches their .version; none exists for 9.9."""
    import re

    ptx = re.sub(r"^\.version \d+\.\d+", ".version 9.9", PTX_451.read_text(), count=1, flags=re.M)
    for s in "ab":
        (tmp_path / f"{s}.ptx").write_text(ptx)
    proc = cutediff(
        ["diff", tmp_path / "a.ptx", tmp_path / "b.ptx"],
        tmp_path / "cache",
        UV_INDEX_URL="http://127.0.0.1:9/simple",
        PIP_INDEX_URL="http://127.0.0.1:9/simple",
    )
    line = one_sentence(proc)
    assert "ptxas 13.9 could not be installed" in line, line
    assert not [p for p in (tmp_path / "cache" / "tools").glob(".tmp-*")]
