"""Bad files handed to ``cutediff diff``, ``open``, ``report`` and ``check``.

Empty, non-ELF and truncated cubins and a missing path are in tests/integration/test_diff_cli.py;
this file adds cubins for two architectures, names and text that are not UTF-8, comparison JSON of
other schema versions or cut short, and a 1M-instruction listing through the parser and the aligner.
"""

from __future__ import annotations

import json
import random
import shutil
import time

import pytest

from cutediff_tui.core.analysis.align import align_sass
from cutediff_tui.core.analysis.sass import parse_sass
from cutediff_tui.core.build import BuildRequest, compile_build
from cutediff_tui.core.gpu import resolve_profile

from .helpers import CUBIN_451, CUBIN_480, PTX_451, cutediff, leftovers, one_sentence, tiny_recipe

# ---------------------------------------------------------------- two architectures


@pytest.mark.slow
def test_cubins_for_two_archs_are_refused_unless_allowed(own_cache, env48, tmp_path):
    """sm_90a vs sm_103a: the SASS of two instruction sets cannot be lined up, so ``diff`` refuses with
    one sentence; ``--allow-arch-mismatch`` compares the figures with a warning and a note per side."""
    recipe = tiny_recipe(tmp_path / "recipe")
    cubins = {}
    for arch in ("sm_90a", "sm_103a"):
        build = compile_build(BuildRequest(env48, recipe, {}, resolve_profile(arch=arch)))
        cubins[arch] = tmp_path / f"tiny-{arch}.cubin"
        shutil.copy(build.kernels[0] / "kernel.cubin", cubins[arch])
    proc = cutediff(["diff", cubins["sm_90a"], cubins["sm_103a"]], own_cache)
    line = one_sentence(proc)
    assert "cubins for different GPU architectures: side A is built for sm_90a and side B for sm_103a" in line
    assert "--allow-arch-mismatch" in line
    allowed = cutediff(["diff", cubins["sm_90a"], cubins["sm_103a"], "--allow-arch-mismatch", "--json", "-"], own_cache)
    assert allowed.returncode == 0, allowed.stderr
    warnings = [ln for ln in allowed.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: Side A is built for sm_90a and side B for sm_103a")
    result = json.loads(allowed.stdout)
    assert any("architectures differ" in n for n in result["sides"]["b"]["notes"])
    for s in "ab":  # each side's figures are there (the kernels may not pair up by name across archs)
        assert any(k[s] and k[s]["registers"] for k in result["kernels"]), s
    same = cutediff(["diff", cubins["sm_103a"], cubins["sm_103a"]], own_cache)
    assert same.returncode == 0 and not same.stderr.strip()


# ---------------------------------------------------------------- not UTF-8


def test_file_names_that_are_not_utf8(tmp_path):
    a = tmp_path / "k\udcff\udcfe.cubin"  # the bytes b"k\xff\xfe.cubin" as Python names them
    shutil.copy(CUBIN_451, a)
    proc = cutediff(["diff", a, CUBIN_480], tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "k\ufffd\ufffd.cubin" in proc.stdout and "Traceback" not in proc.stderr
    as_json = cutediff(["diff", a, CUBIN_480, "--json", "-"], tmp_path / "cache")
    assert json.loads(as_json.stdout)["sides"]["a"]["label"].endswith("k\ufffd\ufffd.cubin")
    bad = tmp_path / "bad\udcff.cubin"
    bad.write_bytes(b"not a cubin at all\n")
    line = one_sentence(cutediff(["diff", bad, CUBIN_480], tmp_path / "cache"))
    assert "bad\ufffd.cubin is not a CUDA cubin (no ELF header)" in line
    assert not leftovers(tmp_path / "cache")


def test_ptx_and_logs_that_are_not_utf8(tmp_path):
    side = tmp_path / "dump"
    side.mkdir()
    shutil.copy(CUBIN_451, side / "kernel.cubin")
    ptx = PTX_451.read_bytes()
    (side / "kernel.ptx").write_bytes(ptx.replace(b"\n", b"\n// caf\xe9 \xff\xfe\n", 1))  # Latin-1 in a comment
    (side / "compile.log").write_bytes(b"ptxas info: r\xe9sum\xe9 \x80\x81\n")
    proc = cutediff(["diff", side, CUBIN_480, "--json", "-"], tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-2000:]
    k = json.loads(proc.stdout)["kernels"][0]
    assert k["a"]["ptx"]["instructions"] > 1000 and k["a"]["registers"] == 128


def test_comparison_json_that_is_not_utf8(tmp_path):
    f = tmp_path / "latin1.json"
    f.write_bytes(b'{"schema": "cutediff.comparison/1", "command": "caf\xe9"}')
    for cmd in (["open", f], ["report", f]):
        line = one_sentence(cutediff(cmd, tmp_path / "cache"))
        assert "latin1.json is not a JSON comparison" in line


# ---------------------------------------------------------------- other schemas, cut short

BAD_JSON = {
    "older-schema": (
        {"schema": "cutediff.comparison/0", "sides": {}, "kernels": []},
        "uses schema 'cutediff.comparison/0', and this cutediff reads 'cutediff.comparison/1'",
        "Re-create it",
    ),
    "newer-schema": (
        {"schema": "cutediff.comparison/3", "sides": {}, "kernels": []},
        "uses schema 'cutediff.comparison/3'",
        "newer cutediff",
    ),
    "no-schema": ({"kernels": []}, "uses schema None", "Re-create it"),
    "not-an-object": ([1, 2, 3], "uses schema None", "Re-create it"),
    "cut-short": (
        '{"schema": "cutediff.comparison/1", "sides": {"a": {',
        "is not a JSON comparison",
        "cutediff compare",
    ),
    "schema-but-no-sides": ({"schema": "cutediff.comparison/1"}, "lacks its sides or kernels", "Re-create it"),
}


@pytest.mark.parametrize("case", list(BAD_JSON))
@pytest.mark.parametrize("command", ["open", "report", "check"])
def test_comparison_json_of_another_schema_or_cut_short(tmp_path, case, command):
    content, what, todo = BAD_JSON[case]
    f = tmp_path / "comparison.json"
    f.write_text(content if isinstance(content, str) else json.dumps(content))
    args = {
        "open": ["open", f],
        "report": ["report", f, "-o", tmp_path / "r.html"],
        "check": ["check", "--result", f, "--max-spill-bytes", "0"],
    }[command]
    line = one_sentence(cutediff(args, tmp_path / "cache"))
    assert what in line and todo in line, line
    assert not (tmp_path / "r.html").exists()


def test_folder_without_artifacts(tmp_path):
    (tmp_path / "empty-dump").mkdir()
    (tmp_path / "empty-dump" / "notes.txt").write_text("no kernels here\n")
    line = one_sentence(cutediff(["diff", tmp_path / "empty-dump", CUBIN_480], tmp_path / "cache"))
    assert "holds no .cubin, .ptx or .sass file" in line


# ---------------------------------------------------------------- a 1M-instruction listing

OPS = [
    "IADD3 R{a}, PT, PT, R{b}, 0x{c:x}, RZ",
    "LDG.E R{a}, desc[UR4][R{b}.64]",
    "FFMA2 R{a}, R{b}, R2, R3",
    "STL [R1+0x{c:x}], R{b}",
    "LDL R{a}, [R1+0x{c:x}]",
    "MUFU.EX2 R{a}, R{b}",
    "ISETP.GE.AND P0, PT, R{a}, R{b}, PT",
    "@!P0 BRA `(.L_x_{d})",
    "UTCHMMA gdesc[UR{a}], gdesc[UR{b}], tmem[UR8], tmem[UR10], idesc[UR11], UPT",
]


def synthetic_sass(n: int, seed: int = 1, arch: str = "sm_100a") -> str:
    """``nvdisasm -c`` style text of one entry function with ``n`` instructions and a label every 64."""
    rng = random.Random(seed)
    lines = [
        f"\t.target\t{arch}",
        "",
        "//--------------------- .text.big --------------------------",
        '\t.section\t.text.big,"ax",@progbits',
        "        .type           big,@function",
        '        .other          big,@"STO_CUDA_ENTRY STV_DEFAULT"',
        "big:",
        ".text.big:",
    ]
    for i in range(n):
        if i % 64 == 0:
            lines.append(f".L_x_{i // 64}:")
        op = OPS[rng.randrange(len(OPS))].format(
            a=rng.randrange(200), b=rng.randrange(200), c=rng.randrange(4096) * 4, d=rng.randrange(max(1, n // 64))
        )
        lines.append(f"        /*{16 * i:04x}*/                   {op} ;")
    lines.append(f"        /*{16 * n:04x}*/                   EXIT ;")
    return "\n".join(lines) + "\n"


def test_one_million_instruction_listing_parses_and_aligns(tmp_path):
    """Measured on the 2-core CI machine: ~3 s to parse 1M instructions, ~8 s to align 1M against 1M
    (bounds below are 5x that). The figures go to tmp_path/timings.json and the test's output."""
    n = 1_000_000
    text_a = synthetic_sass(n)
    text_b = text_a.replace("MUFU.EX2", "MUFU.RCP").replace("STL [R1+0x1", "STL.64 [R1+0x1")
    t0 = time.perf_counter()
    la = parse_sass(text_a)
    parse_s = time.perf_counter() - t0
    lb = parse_sass(text_b)
    assert len(la.main.instrs) == len(lb.main.instrs) == n + 1
    t0 = time.perf_counter()
    al = align_sass(la.main, lb.main)
    align_s = time.perf_counter() - t0
    assert al.total == 2 * (n + 1) and 0.5 * n < al.matched <= n + 1 and al.hunks
    timings = {"instructions": n, "parse_seconds": round(parse_s, 2), "align_seconds": round(align_s, 2)}
    (tmp_path / "timings.json").write_text(json.dumps(timings))
    # The speeds are measured in benchmarks/bench_big_listing.py, not asserted: on two shared cores
    # under the whole suite they vary by several times (issue 36).
    print(f"1M-instruction listing: {timings}")
