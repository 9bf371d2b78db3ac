"""`cutediff diff` on kernels not made by the CuTe DSL: real nvcc/ptxas builds of a two-kernel `.cu`
(``data/two_kernels.cu``) with and without ``-maxrregcount=32``, so that ``heavy`` spills on one
side. Kernels are paired by (demangled) symbol, the figures agree with ``ptxas -v`` and
``cuobjdump --dump-resource-usage``, and the same holds for SASS text files.

nvcc comes from PATH or CUDA_HOME; without it the checked-in PTX (made by nvcc 13.0 from the same
source) is assembled with ptxas from PATH, CUDA_HOME or the ``nvidia-cuda-nvcc`` wheel (what CI
has); with none of them the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutediff_tui.core.analysis import tools

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
ARCH = "sm_90a"


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    cand = Path(home) / "bin" / name
    return str(cand) if cand.is_file() else None


def _ptxas(cache: Path) -> str:
    found = _tool("ptxas")
    if found:
        return found
    from cutediff_tui.core.analysis.crosscheck import ensure_ptxas
    from cutediff_tui.core.errors import CutediffError

    try:
        return str(ensure_ptxas("13.0", cache))
    except CutediffError as exc:
        pytest.skip(f"no nvcc or ptxas here, and the nvidia-cuda-nvcc wheel could not be installed ({exc})")


@pytest.fixture(scope="module")
def builds(tmp_path_factory, compile_cache) -> dict:
    """Two cubins of data/two_kernels.cu and ptxas -v's figures for each."""
    out = tmp_path_factory.mktemp("nvcc")
    nvcc = _tool("nvcc")
    ptxas_v: dict[str, str] = {}
    for side, flags in (("a", []), ("b", ["-maxrregcount=32"])):
        cubin = out / f"{side}.cubin"
        if nvcc:
            cmd = [nvcc, "-cubin", f"-arch={ARCH}", *flags, "-Xptxas", "-v", str(DATA / "two_kernels.cu")]
            proc = subprocess.run([*cmd, "-o", str(cubin)], capture_output=True, text=True, timeout=300)
        else:
            cmd = [_ptxas(compile_cache), f"-arch={ARCH}", *flags, "-v", str(DATA / "two_kernels.ptx")]
            proc = subprocess.run([*cmd, "-o", str(cubin)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        ptxas_v[side] = proc.stdout + proc.stderr
    return {"dir": out, "ptxas_v": ptxas_v, "how": "nvcc" if nvcc else "ptxas"}


def _ptxas_figures(log: str, kernel: str) -> dict:
    block = log[log.index(f"Function properties for {kernel}") :]
    stack, stores, loads = (
        int(x)
        for x in re.search(
            r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", block
        ).groups()
    )  # type: ignore[union-attr]
    regs = int(re.search(r"Used (\d+) registers", block).group(1))  # type: ignore[union-attr]
    return {"stack_bytes": stack, "spill_store_bytes": stores, "spill_load_bytes": loads, "registers": regs}


def diff(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", "diff", *args], capture_output=True, text=True, env=env, timeout=600
    )


def test_two_cubins_pair_both_kernels_by_symbol_and_show_the_spill(builds, tmp_path):
    d = builds["dir"]
    proc = diff(
        [str(d / "a.cubin"), str(d / "b.cubin"), "--label-a", "O3", "--label-b", "maxrreg32", "--json", "-"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(proc.stdout)
    assert r["sides"]["a"]["label"] == "O3" and r["sides"]["b"]["label"] == "maxrreg32"
    by_name = {k["name"]: k for k in r["kernels"]}
    assert len(by_name) == 2 and "heavy" in by_name and all(k["a"] and k["b"] for k in by_name.values())
    light = next(k for n, k in by_name.items() if n != "heavy")
    assert light["symbol"] == {"a": "_Z5lightPffi", "b": "_Z5lightPffi"}
    assert light["name"].startswith("light")  # demangled, not the file name
    heavy = by_name["heavy"]
    for side in "ab":
        expect = _ptxas_figures(builds["ptxas_v"][side], "heavy")
        got = {key: heavy[side][key] for key in expect}
        assert got == expect, (side, got, expect)
    assert heavy["a"]["spill_store_bytes"] == 0 and heavy["b"]["spill_store_bytes"] > 0
    assert light["a"]["spill_store_bytes"] == light["b"]["spill_store_bytes"] == 0
    # cuobjdump's resource table, per function, agrees as well
    res = tools.resource_usage(d / "b.cubin")
    assert re.search(r"Function heavy:\s+REG:(\d+) STACK:(\d+)", res).groups() == (  # type: ignore[union-attr]
        str(heavy["b"]["registers"]),
        str(heavy["b"]["stack_bytes"]),
    )
    assert "Traceback" not in proc.stderr and "only in side" not in proc.stderr


def test_sass_text_files_pair_and_show_the_spill(builds, tmp_path):
    d = builds["dir"]
    a_txt, b_txt = tmp_path / "a.sass", tmp_path / "b.sass"
    a_txt.write_text(tools.run_tool("cuobjdump", ["-sass", str(d / "a.cubin")]))  # cuobjdump's format
    b_txt.write_text(tools.disassemble(d / "b.cubin"))  # nvdisasm's format
    proc = diff([str(a_txt), str(b_txt), "--json", "-"], tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(proc.stdout)
    by_name = {k["name"]: k for k in r["kernels"]}
    assert len(by_name) == 2 and all(k["a"] and k["b"] for k in by_name.values())
    heavy = by_name["heavy"]
    expect = _ptxas_figures(builds["ptxas_v"]["b"], "heavy")
    assert heavy["b"]["spill_store_bytes"] == expect["spill_store_bytes"] > 0
    assert heavy["b"]["spill_load_bytes"] == expect["spill_load_bytes"]
    assert heavy["a"]["spill_store_bytes"] == 0
    assert heavy["a"].get("registers") is None and heavy["b"].get("stack_bytes") is None  # a cubin-only figure
    table = diff([str(a_txt), str(b_txt)], tmp_path / "cache").stdout
    # unknown on both sides: shown as "-" or left out of the table, never as a number
    assert not re.search(r"(?i)registers\s+│\s+\d", table) and not re.search(r"(?i)stack bytes\s+│\s+\d", table), table


def test_an_unpaired_kernel_gets_one_sentence(builds, tmp_path):
    d = builds["dir"]
    one = tmp_path / "one.sass"
    text = tools.disassemble(d / "b.cubin")
    one.write_text(text[: text.index(".text.heavy:")] if ".text.heavy:" in text else text)
    proc = diff([str(d / "a.cubin"), str(one)], tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln for ln in proc.stderr.splitlines() if "only in side" in ln]
    assert len(lines) == 1 and "Kernel heavy is only in side A" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_names_differing_only_in_a_hash_suffix_are_paired_and_reported(builds, tmp_path):
    d = builds["dir"]
    a_txt, b_txt = tmp_path / "a.sass", tmp_path / "b.sass"
    a_txt.write_text(tools.disassemble(d / "a.cubin").replace("heavy", "heavy_3f9a2c1b"))
    b_txt.write_text(tools.disassemble(d / "b.cubin").replace("heavy", "heavy_77aa00ff"))
    proc = diff([str(a_txt), str(b_txt), "--json", "-"], tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(proc.stdout)
    (k,) = [k for k in r["kernels"] if k["name"].startswith("heavy")]
    assert k["a"] and k["b"] and k["name_b"] == "heavy_77aa00ff"
    assert k["paired_by"] == "heavy_3f9a2c1b (side A) and heavy_77aa00ff (side B)"
    assert k["b"]["spill_store_bytes"] > 0 == k["a"]["spill_store_bytes"]
    lines = [ln for ln in proc.stderr.splitlines() if "hash suffix" in ln]
    assert len(lines) == 1 and "Kernel heavy_3f9a2c1b was paired by name without its hash suffix" in lines[0]


def test_real_triton_cache_folders_pair_kernels_and_keep_their_ir(tmp_path):
    """Two real Triton cache folders (data/make_triton_cache.py, run on the H200: Triton 3.6.0,
    sm_90a), one hash folder per kernel. Kernels pair by name across the hash folders, the figures
    equal cuobjdump's, the .ttgir beside each cubin is the IR the TUI shows; nvdisasm reads these
    cubins only in its "old format" and then refuses data-flow analysis, so the comparison keeps
    the listings without register pressure and says so (before: "the analysis failed" on both sides)."""
    a, b = DATA / "triton-cache-a", DATA / "triton-cache-b"
    proc = diff([str(a), str(b), "--json", "-"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(proc.stdout)
    by_name = {k["name"]: k for k in r["kernels"]}
    assert set(by_name) == {"add_kernel", "softmax_kernel"}
    for side, folder in (("a", a), ("b", b)):
        for name, k in by_name.items():
            (cubin,) = folder.glob(f"*/{name}.cubin")
            res = tools.resource_usage(cubin)
            regs, shared = re.search(rf"Function {name}:\s+REG:(\d+) STACK:\d+ SHARED:(\d+)", res).groups()  # type: ignore[union-attr]
            assert (k[side]["registers"], k[side]["shared_bytes"]) == (int(regs), int(shared)), (side, name)
    soft = by_name["softmax_kernel"]
    assert (soft["a"]["registers"], soft["b"]["registers"]) == (38, 168)  # one warp holds the row: B
    notes = r["sides"]["b"]["notes"]
    assert any(n.startswith("softmax_kernel: no register pressure") for n in notes), notes
    assert "analysis failed" not in proc.stderr and "Traceback" not in proc.stderr
    ir = Path(soft["a"]["files"]["dir"]) / "kernel.mlir"  # the MLIR pane's file: Triton's own .ttgir
    assert "tt.func public @softmax_kernel" in ir.read_text()
