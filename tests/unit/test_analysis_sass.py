"""Tests for the SASS parser on the shipped FA4 samples and on small edge-case snippets."""

from __future__ import annotations

import time
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from cutediff_tui.core.analysis import tools
from cutediff_tui.core.analysis.sass import merge_sass, parse_sass
from cutediff_tui.core.errors import CutediffError

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "raw"


@cache
def sass_text(side: str, mode: str = "c") -> str:
    cubin = SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.cubin"
    return tools.disassemble(cubin, line_info=(mode == "g"), live_ranges=(mode == "lrm"))


@cache
def listing(side: str, mode: str = "c"):
    return parse_sass(sass_text(side, mode))


def bases(lst) -> Counter:
    return Counter(i.base for i in lst.instrs())


# ----------------------------------------------------------------------- real samples


def test_spill_instruction_counts():
    b = bases(listing("4.8.0"))
    a = bases(listing("4.5.1"))
    assert (b["STL"], b["LDL"]) == (44, 33)
    assert (a["STL"], a["LDL"]) == (0, 0)


@pytest.mark.parametrize("side", ["4.5.1", "4.8.0"])
def test_math_counts_identical(side):
    c = bases(listing(side))
    assert (c["UTCHMMA"], c["MUFU"], c["FFMA2"], c["FMUL2"], c["FADD2"]) == (64, 398, 192, 256, 191)


def test_listing_structure():
    lst = listing("4.8.0")
    assert lst.arch == "sm_103a"
    assert lst.has_spill_tags and not lst.has_live and not lst.has_line_info and lst.complete
    main = lst.main
    assert main.is_entry and main.name.startswith("kernel_cutlass_kernel_flash_attncute")
    assert [f.is_entry for f in lst.functions].count(True) == 1
    assert any(f.name.startswith("$__internal_") for f in lst.functions)
    first = main.instrs[0]
    assert (first.addr, first.opcode, first.operands) == (0, "LDC", "R1, c[0x0][0x37c]")
    addrs = [i.addr for i in main.instrs]
    assert addrs == sorted(addrs) and len(set(addrs)) == len(addrs)
    assert all(i.index == k for k, i in enumerate(main.instrs))
    # labels point at instruction addresses (or the end of the function)
    end = main.instrs[-1].addr + 16
    ok = {i.addr for i in main.instrs} | {end}
    assert main.labels and all(a in ok for a in main.labels.values())
    assert main.labels[".L_x_0"] == main.at(main.labels[".L_x_0"]).addr


def test_spill_tags_and_is_spill():
    lst = listing("4.8.0")
    spills = [i for i in lst.instrs() if i.is_spill]
    assert len(spills) == 77
    assert all(i.tags == ("SpillRefill",) for i in spills)
    assert {i.base for i in spills} == {"STL", "LDL"}
    assert Counter(i.opcode for i in spills if i.base == "LDL") == {"LDL": 13, "LDL.LU": 9, "LDL.LU.64": 11}
    brx = [i for i in lst.instrs() if i.base == "BRX"]
    assert brx and brx[0].tags[0].startswith("BRANCH_TARGETS .L_x_")


def test_predicates_and_modifiers():
    main = listing("4.8.0").main
    preds = {i.pred for i in main.instrs if i.pred}
    assert {"@P0", "@!P0"} <= preds
    assert any(p.startswith("@UP") or p.startswith("@!UP") for p in preds)
    ldl = next(i for i in main.instrs if i.opcode == "LDL.LU.64")
    assert ldl.base == "LDL" and ldl.modifiers == ("LU", "64")
    assert ldl.text.startswith("LDL.LU.64 ") and ";" not in ldl.text


def test_line_info_listing():
    g = listing("4.8.0-lineinfo", "g")
    assert g.has_line_info
    spills = [i for i in g.instrs() if i.is_spill]
    assert len(spills) == 77
    assert all(i.file.endswith(".py") and isinstance(i.line, int) and i.line > 0 for i in spills)
    assert any("flash_attn/cute/" in i.file for i in spills)
    # same instruction stream as the plain listing of the non-lineinfo build
    plain = listing("4.8.0")
    assert [i.opcode for i in g.main.instrs] == [i.opcode for i in plain.main.instrs]


def test_live_register_listing_and_merge():
    lrm = listing("4.8.0", "lrm")
    assert lrm.has_live
    main = lrm.main
    assert all(i.live is not None and len(i.live) == 4 for i in main.instrs)
    assert main.instrs[0].live == (8, 5, 0, 0)
    assert max(i.live[0] for i in main.instrs) > 128  # GPR count includes wide pairs
    merged = merge_sass(parse_sass(sass_text("4.8.0")), lineinfo=listing("4.8.0-lineinfo", "g"), live=lrm)
    assert merged.merge.mapped
    assert (merged.merge.lineinfo, merged.merge.live) == ("exact", "exact")
    assert merged.has_line_info and merged.has_live
    i = merged.main.instrs[100]
    assert i.live is not None and i.file is not None


def test_merge_reports_unmapped_when_counts_differ():
    plain = parse_sass(sass_text("4.8.0"))
    other = listing("4.5.1", "lrm")
    merged = merge_sass(plain, live=other)
    assert not merged.merge.mapped
    assert merged.merge.live == "unmapped"
    assert all(i.live is None for i in merged.main.instrs)


def test_parse_speed():
    text = sass_text("4.8.0")
    parse_sass(text)
    best = min(_timed(lambda: parse_sass(text)) for _ in range(5))
    assert best < 0.1  # target is < 30 ms on the 2-core CI machine; generous bound


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ----------------------------------------------------------------------- snippets

SNIPPET = """\
\t.target\tsm_90a

//--------------------- .text.k --------------------------
\t.section\t.text.k,"ax",@progbits
        .type           k,@function
        .other          k,@"STO_CUDA_ENTRY STV_DEFAULT"
k:
.text.k:
\t//## File "/src/a.py", line 10 inlined at "/src/b.py", line 20
\t//## File "/src/b.py", line 20 inlined at "/src/c.py", line 30
\t//## File "/src/c.py", line 30
        /*0000*/                   MOV R1, c[0x0][0x28] ;
\t//## File ".nv_debug_ptx_txt", line 19
\t//## File "/src/d.py", line 5
        /*0010*/              @!P0 BRA `(.L_x_1) ;
.L_x_0:
        /*0020*/                   {         IADD3 R2, R2, 0x1, RZ ;
        /*0030*/                             STL.64 [R1+0x8], R2         }
        /*0040*/              @UP1 LDL.U8 R4, [R1+0x8] ;
        /*0050*/                   BRA `(.L_x_0) ;
.L_x_1:
        /*0060*/                   CALL.REL.NOINC `($__internal_0_f) ;
        /*0070*/                   EXIT ;
        .type           $__internal_0_f,@function
$__internal_0_f:
        /*0080*/                   RET.REL.NODEC R20 `(k) ;
.L_x_2:
        /*0090*/                   BRA `(.L_x_2);
.L_x_3:
"""


def test_snippet_functions_labels_and_lines():
    lst = parse_sass(SNIPPET)
    assert lst.arch == "sm_90a"
    assert [f.name for f in lst.functions] == ["k", "$__internal_0_f"]
    k, f = lst.functions
    assert k.is_entry and not f.is_entry
    assert k.labels == {".L_x_0": 0x20, ".L_x_1": 0x60}
    assert f.labels == {".L_x_2": 0x90, ".L_x_3": 0xA0}
    mov = k.instrs[0]
    assert (mov.file, mov.line) == ("/src/a.py", 10)
    assert mov.inline_chain == (("/src/b.py", 20), ("/src/c.py", 30))
    bra = k.instrs[1]
    assert (bra.pred, bra.opcode, bra.operands) == ("@!P0", "BRA", "`(.L_x_1)")
    assert (bra.file, bra.line, bra.inline_chain) == ("/src/d.py", 5, ())
    # dual-issue braces
    assert [i.opcode for i in k.instrs[2:4]] == ["IADD3", "STL.64"]
    assert k.instrs[3].operands == "[R1+0x8], R2"
    assert k.instrs[4].pred == "@UP1" and k.instrs[4].modifiers == ("U8",)
    # no SpillRefill tags anywhere: STL/LDL count as spills
    assert not lst.has_spill_tags
    assert [i.opcode for i in lst.instrs() if i.is_spill] == ["STL.64", "LDL.U8"]
    assert f.instrs[-1].text == "BRA `(.L_x_2)"


def test_snippet_live_columns_with_blanks():
    text = (
        "        /*0000*/                   LDC R1, c[0x0][0x37c] ;          // |   8  |   5    |        |         |\n"
        "        /*0010*/                   S2UR UR12, SR_CgaCtaId ;        // |   9  |        |   1    |    2    |\n"
    )
    lst = parse_sass(text)
    assert [i.live for i in lst.instrs()] == [(8, 5, 0, 0), (9, 0, 1, 2)]
    assert lst.has_live and lst.functions[0].name == "<anonymous>"


def test_cuobjdump_style_listing():
    text = (
        '\tcode for sm_90a\n\t\tFunction : k2\n\t.headerflags\t@"EF_CUDA_SM90"\n'
        "        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x00000a0000017a02 */\n"
        "                                                                          /* 0x000fe40000000f00 */\n"
        "        /*0010*/                   EXIT ;                                 /* 0x000000000000794d */\n"
    )
    lst = parse_sass(text)
    assert [f.name for f in lst.functions] == ["k2"]
    assert [i.text for i in lst.instrs()] == ["MOV R1, c[0x0][0x28]", "EXIT"]


@pytest.mark.parametrize("text", ["", "   \n\n"])
def test_empty_text_is_a_clear_error(text):
    with pytest.raises(CutediffError, match="empty"):
        parse_sass(text)


@pytest.mark.parametrize(
    "text",
    [
        "ptxas info    : Used 128 registers\n",
        "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.4\n.target sm_103a\n",
        "\x7fELF\x02\x01\x01A binary junk",
    ],
)
def test_foreign_text_is_a_clear_error(text):
    with pytest.raises(CutediffError, match="not an nvdisasm SASS listing"):
        parse_sass(text)


def test_truncated_listing_is_flagged():
    text = sass_text("4.8.0")
    cut = text[: len(text) // 2]
    cut = cut[: cut.rfind(";")]  # cut inside an instruction line
    lst = parse_sass(cut)
    assert not lst.complete
    assert 1000 < len(lst) < len(listing("4.8.0"))
