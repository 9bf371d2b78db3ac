"""Tests for spill sites, spill bytes, loops (CFG) and register pressure."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

from cutediff_tui.core.analysis import tools
from cutediff_tui.core.analysis.cfg import build_blocks, natural_loops
from cutediff_tui.core.analysis.pressure import peak, peaks, per_line_max, pressure_curve
from cutediff_tui.core.analysis.sass import merge_sass, parse_sass
from cutediff_tui.core.analysis.spills import (
    access_width,
    diff_spill_sites,
    find_loops,
    spill_bytes,
    spill_sites,
)

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "raw"


@cache
def listing(side: str, mode: str = "c"):
    cubin = SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.cubin"
    return parse_sass(tools.disassemble(cubin, line_info=(mode == "g"), live_ranges=(mode == "lrm")))


def test_spill_bytes_from_widths():
    assert spill_bytes(listing("4.8.0").main) == (176, 176)  # = ptxas -v spill stores / loads
    assert spill_bytes(listing("4.5.1").main) == (0, 0)
    loads = [s for s in spill_sites(listing("4.8.0").main) if s.kind == "load"]
    assert Counter((s.opcode, s.width_bytes) for s in loads) == {("LDL", 4): 13, ("LDL.LU", 4): 9, ("LDL.LU.64", 8): 11}


def test_spill_sites_with_line_info():
    sites = spill_sites(listing("4.8.0-lineinfo", "g").main)
    assert len(sites) == 77
    assert Counter(s.kind for s in sites) == {"store": 44, "load": 33}
    assert all(s.file.endswith(".py") and s.line > 0 for s in sites)
    assert any("/flash_attn/cute/" in s.file for s in sites)
    assert all(s.slot.startswith("R1+0x") or s.slot == "R1" for s in sites)
    in_loops = [s for s in sites if s.loop is not None]
    assert in_loops, "the softmax / correction loops hold spill code"
    for s in in_loops:
        assert s.loop.head_addr <= s.loop.end_addr and s.loop.depth >= 1
        assert s.loop.head_line is not None and s.loop.head_line[0].endswith(".py")
    assert spill_sites(listing("4.5.1-lineinfo", "g").main) == []


def test_diff_spill_sites():
    a = spill_sites(listing("4.5.1-lineinfo", "g").main)
    b = spill_sites(listing("4.8.0-lineinfo", "g").main)
    d = diff_spill_sites(a, b)
    assert not d.removed and not d.unchanged
    assert sum(r.b_count for r in d.added) == 77
    assert all(r.a_count == 0 and r.change == r.b_count for r in d.added)
    assert d.added[0].change >= d.added[-1].change
    assert {r.kind for r in d.added} == {"store", "load"}
    back = diff_spill_sites(b, a)
    assert not back.added and sum(r.a_count for r in back.removed) == 77
    same = diff_spill_sites(b, b)
    assert not same.added and not same.removed and len(same.unchanged) == len(d.added)


LOOPS = """\
        .type           k,@function
k:
        /*0000*/                   MOV R0, RZ ;
.L_x_0:
        /*0010*/                   MOV R2, RZ ;
.L_x_1:
        /*0020*/                   STL.64 [R1+0x8], R2 ;
        /*0030*/                   IADD3 R2, R2, 0x1, RZ ;
        /*0040*/                   ISETP.LT.AND P0, PT, R2, 0x4, PT ;
        /*0050*/               @P0 BRA `(.L_x_1) ;
        /*0060*/                   LDL.U16 R3, [R1+0x8] ;
        /*0070*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0080*/                   ISETP.LT.AND P1, PT, R0, 0x4, PT ;
        /*0090*/               @P1 BRA `(.L_x_0) ;
        /*00a0*/                   STL.S8 [R1+0x10], R3 ;
        /*00b0*/                   EXIT ;
"""

OUT_OF_LINE = """\
        .type           k,@function
k:
        /*0000*/                   MOV R0, RZ ;
.L_x_0:
        /*0010*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0020*/                   STL [R1+0x4], R0 ;
        /*0030*/              @!P0 BRA `(.L_x_9) ;
.L_x_1:
        /*0040*/                   ISETP.GE.AND P1, PT, R0, 0x10, PT ;
        /*0050*/              @!P1 BRA `(.L_x_0) ;
        /*0060*/                   LDL R2, [R1+0x4] ;
        /*0070*/                   EXIT ;
.L_x_9:
        /*0080*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [R4], R5 ;
        /*0090*/              @!P2 BRA `(.L_x_9) ;
        /*00a0*/                   BRA `(.L_x_1) ;
"""


def test_nested_loops():
    f = parse_sass(LOOPS).main
    sites = spill_sites(f)
    assert [(s.opcode, s.kind, s.width_bytes, s.slot) for s in sites] == [
        ("STL.64", "store", 8, "R1+0x8"),
        ("LDL.U16", "load", 2, "R1+0x8"),
        ("STL.S8", "store", 1, "R1+0x10"),
    ]
    inner, outer, after = (s.loop for s in sites)
    assert (inner.head_addr, inner.end_addr, inner.depth) == (0x20, 0x50, 2)
    assert (outer.head_addr, outer.end_addr, outer.depth) == (0x10, 0x90, 1)
    assert after is None
    assert spill_bytes(f) == (9, 2)
    assert [(lp.head_addr, lp.depth) for lp in find_loops(f)] == [(0x10, 1), (0x20, 2)]


def test_out_of_line_retry_block_is_not_a_loop_of_its_own():
    f = parse_sass(OUT_OF_LINE).main
    blocks, block_of = build_blocks(f)
    assert len(blocks) == 6
    loops, _ = natural_loops(f)
    heads = sorted((lp.head_addr, lp.depth) for lp in loops)
    # the main loop (head 0x10) contains the out-of-line wait; the wait's self-loop nests
    # inside it; the jump back from 0xa0 to 0x40 is not a loop (0x40 does not dominate 0xa0)
    assert heads == [(0x10, 1), (0x80, 2)]
    st, ld = spill_sites(f)
    assert st.loop.head_addr == 0x10 and st.loop.depth == 1
    assert ld.loop is None


def test_access_width_defaults():
    f = parse_sass(
        "        /*0000*/                   STL.128 [R1], R4 ;\n"
        "        /*0010*/                   LDL.S16 R4, [R1] ;\n"
        "        /*0020*/                   LDL R4, [R1] ;\n"
    ).main
    assert [access_width(i) for i in f.instrs] == [16, 2, 4]


def test_pressure_from_live_counts():
    lrm = listing("4.8.0", "lrm").main
    pk = peaks(lrm)
    assert set(pk) == {"gpr", "pred", "ugpr", "upred"}
    gpr = pk["gpr"]
    assert gpr.value == max(i.live[0] for i in lrm.instrs)
    assert lrm.instrs[gpr.index].addr == gpr.addr
    curve = pressure_curve(lrm, buckets=200)
    assert len(curve) == 200 and max(curve) == gpr.value
    assert pressure_curve(lrm, buckets=10**6) == [i.live[0] for i in lrm.instrs]
    assert peak(lrm) == gpr and peak(lrm, "upred").value == pk["upred"].value
    assert peaks(listing("4.8.0").main) == {} and peak(listing("4.8.0").main) is None
    assert per_line_max(lrm) == {}


def test_per_line_max_with_merged_listing():
    merged = merge_sass(
        parse_sass(tools.disassemble(SAMPLES / "fa4-fwd-sm103a-4.8.0-lineinfo" / "kernel.cubin")),
        lineinfo=listing("4.8.0-lineinfo", "g"),
        live=listing("4.8.0-lineinfo", "lrm"),
    )
    assert merged.merge.mapped
    per = per_line_max(merged.main)
    assert per and max(per.values()) == peaks(merged.main)["gpr"].value
    pk = peaks(merged.main)["gpr"]
    assert pk.file is not None and pk.file.endswith(".py")
