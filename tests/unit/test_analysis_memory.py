"""Memory operations by address space and width, on real SASS/PTX of the sample recipes and FA4."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cutediff_tui.core.analysis.memory import ptx_memory_ops, sass_memory_ops
from cutediff_tui.core.analysis.ptx import parse_ptx
from cutediff_tui.core.analysis.sass import parse_sass

DATA = Path(__file__).resolve().parent / "data" / "recipes"
FA4 = Path(__file__).resolve().parents[2] / "samples" / "raw"


def sass(name: str):
    return parse_sass(gzip.decompress((DATA / f"{name}.sass.gz").read_bytes()).decode()).main


def ptx(name: str):
    return parse_ptx(gzip.decompress((DATA / f"{name}.ptx.gz").read_bytes()).decode()).main


def opcodes(mem, space: str, kind: str) -> dict[str, int]:
    return {r.opcode: r.count for r in mem.rows if r.space == space and r.kind == kind}


def test_vector_store_width_is_kept_in_sass_and_ptx():
    wide_s, narrow_s = sass_memory_ops(sass("vector_store-bits128")), sass_memory_ops(sass("vector_store-bits16"))
    wide_p, narrow_p = ptx_memory_ops(ptx("vector_store-bits128")), ptx_memory_ops(ptx("vector_store-bits16"))
    assert opcodes(wide_s, "global", "store") == {"STG.E.128": 8}
    assert opcodes(narrow_s, "global", "store") == {"STG.E.U16": 64}
    assert opcodes(wide_p, "global", "store") == {"st.global.v4.b32": 8}
    assert opcodes(narrow_p, "global", "store") == {"st.global.b16": 64}
    assert wide_s.widths("global", "store") == {128: 8} and narrow_s.widths("global", "store") == {16: 64}
    # the same 128 bytes per thread leave either way; only the number and width of stores change
    for mem in (wide_s, narrow_s, wide_p, narrow_p):
        assert mem.total("global", "store")[1] == 128
    assert wide_s.total("global", "load") == narrow_s.total("global", "load") == (16, 256)


def test_stack_reached_through_ldl_stl_is_local():
    mem = sass_memory_ops(sass("stack_scratch-dynamic"))
    assert opcodes(mem, "local", "load") == {"LDL": 64}
    assert opcodes(mem, "local", "store") == {"STL.128": 16}
    assert mem.total("local") == (80, 512)
    entry = ptx("stack_scratch-dynamic")
    assert entry.local_bytes == 256
    pm = ptx_memory_ops(entry)
    assert opcodes(pm, "local", "load") == {"ld.local.b32": 64}
    assert opcodes(pm, "local", "store") == {"st.local.v4.b32": 16}


def test_stack_reached_through_generic_loads_and_stores_is_local():
    """ptxas forms the generic address as R1 + the local window (c[0x0][0x20]) in R2:R3."""
    func = sass("stack_scratch-generic")
    assert any(i.base == "ST" and "[R2.64+0x30]" in i.operands for i in func.instrs)
    mem = sass_memory_ops(func)
    assert opcodes(mem, "local", "load") == {"LD.E [stack]": 64}
    assert opcodes(mem, "local", "store") == {"ST.E.128 [stack]": 16}
    assert "generic" not in mem.by_space()
    # the same figures as the LDL/STL build of the same kernel
    assert mem.total("local") == sass_memory_ops(sass("stack_scratch-dynamic")).total("local")
    pm = ptx_memory_ops(ptx("stack_scratch-generic"))
    assert opcodes(pm, "local", "load") == {"ld.b32": 64} and opcodes(pm, "local", "store") == {"st.v4.b32": 16}


def test_dsl_kernel_reading_its_stack_through_generic_loads():
    """stack_scratch.py index=generic: 272 B stack, 0 LDL, 64 generic LD.E at R1 + local window."""
    func = sass("stack_scratch-generic-dsl")
    assert not any(i.base == "LDL" for i in func.instrs)
    mem = sass_memory_ops(func)
    assert opcodes(mem, "local", "load") == {"LD.E [stack]": 64}
    assert opcodes(mem, "local", "store") == {"STL.128": 16}
    assert "generic" not in mem.by_space()
    pm = ptx_memory_ops(ptx("stack_scratch-generic-dsl"))  # inline asm: cvta.local.u64 g, a; ld.f32 $0, [g]
    assert opcodes(pm, "local", "load") == {"ld.f32": 64}
    assert opcodes(pm, "local", "store") == {"st.local.v4.b32": 16}


SNIPPET = """
        .text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;
        /*0020*/                   LD.E R0, desc[UR4][R2.64] ;
        /*0030*/                   IADD3 R4, P0, R1, UR6, RZ ;
        /*0040*/                   ST.E desc[UR4][R4.64+0x8], R0 ;
        /*0050*/                   IMAD.WIDE R4, R0, 0x4, R2 ;
        /*0060*/                   ST.E.64 desc[UR4][R4.64], R6 ;
        /*0070*/                   LD.E.U16 R8, [R1+0x10] ;
        /*0080*/                   LDGSTS.E.BYPASS.LTC128B.128 [R5], desc[UR4][R2.64] ;
        /*0090*/                   RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R0 ;
        /*00a0*/                   EXIT ;
"""


def test_generic_accesses_elsewhere_stay_generic():
    mem = sass_memory_ops(parse_sass(SNIPPET).main)
    assert opcodes(mem, "generic", "load") == {"LD.E": 1}
    assert opcodes(mem, "generic", "store") == {"ST.E.64": 1}  # R4 was overwritten from R0/R2
    assert opcodes(mem, "local", "store") == {"ST.E [stack]": 1}
    assert opcodes(mem, "local", "load") == {"LD.E.U16 [stack]": 1}
    assert mem.total("local", "load") == (1, 2)
    assert opcodes(mem, "global", "load") == {"LDGSTS.E.BYPASS.LTC128B.128": 1}
    assert mem.widths("global", "load") == {128: 1}
    assert opcodes(mem, "generic", "atomic") == {"RED.E.ADD.STRONG.GPU": 1}


def test_fa4_spaces_and_local_bytes_match_the_spill_figures():
    from cutediff_tui.core.analysis import tools

    cubin = FA4 / "fa4-fwd-sm103a-4.8.0" / "kernel.cubin"
    try:
        func = parse_sass(tools.disassemble(cubin)).main
    except tools.ToolFailed as exc:  # pragma: no cover - nvdisasm missing
        pytest.skip(str(exc))
    mem = sass_memory_ops(func)
    assert mem.total("local", "store") == (44, 176) and mem.total("local", "load") == (33, 176)
    assert opcodes(mem, "tmem", "load") == {"LDTM.x16": 32, "LDTM.x32": 12}
    assert mem.widths("tmem", "load") == {512: 32, 1024: 12}
    assert opcodes(mem, "global", "store") == {"STG.E.128": 32, "STG.E": 2}
    pm = ptx_memory_ops(parse_ptx((FA4 / "fa4-fwd-sm103a-4.8.0" / "kernel.ptx").read_text()).main)
    assert pm.total("tmem") == mem.total("tmem") == (72, 5376)
    assert opcodes(pm, "global", "store") == {"st.global.v4.b32": 32, "st.global.b32": 2}
    js = json.loads(json.dumps(mem.to_json()))
    assert js["by_space"]["local"]["store"] == {"count": 44, "bytes": 176}
    assert list(js["by_space"]) == ["local", "global", "shared", "tmem", "const"]


def test_ptx_spaces_from_opcodes():
    text = """
.version 9.0
.target sm_90a
.address_size 64
.visible .entry k()
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<4>;
	st.shared::cluster.b32 [%r1], %r2;
	ld.shared::cta.v2.b32 {%r3, %r4}, [%r1];
	ld.const.b32 %r5, [%rd1];
	atom.global.add.u32 %r6, [%rd2], 1;
	red.shared.add.u32 [%r1], 1;
	ld.b64 %rd3, [%rd2];
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r2}], [%r3];
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.bulk.prefetch.L2.global [%rd1], 64;
	ret;
}
"""
    pm = ptx_memory_ops(parse_ptx(text).main)
    got = {(r.space, r.kind, r.opcode): r.width_bits for r in pm.rows}
    assert got == {
        ("dsmem", "store", "st.shared::cluster.b32"): 32,
        ("shared", "load", "ld.shared::cta.v2.b32"): 64,
        ("shared", "load", "ldmatrix.sync.aligned.m8n8.x4.shared.b16"): 128,
        ("shared", "atomic", "red.shared.add.u32"): 32,
        ("const", "load", "ld.const.b32"): 32,
        ("global", "atomic", "atom.global.add.u32"): 32,
        ("global", "store", "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"): 0,
        ("generic", "load", "ld.b64"): 64,
        ("global", "load", "cp.async.cg.shared.global"): 128,
    }


def test_ptx_local_addresses_follow_code_order():
    """Inline-asm blocks reuse register names: a name re-set from a global pointer is no longer local."""
    text = """
.version 9.0
.target sm_90a
.address_size 64
.visible .entry k()
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<3>;
	.reg .b64 %SP;
	.reg .b64 %SPL;
	.local .align 8 .b8 __local_depot0[64];
	mov.b64 %SPL, __local_depot0;
	add.u64 %rd1, %SPL, 0;
	{
	.reg .u64 a, g;
	cvt.u64.u32 a, %r1;
	cvta.local.u64 g, a;
	ld.f32 %r2, [g];
	}
	{
	.reg .u64 g;
	mov.u64 g, %rd2;
	ld.f32 %r2, [g];
	}
	cvta.local.u64 %SP, %SPL;
	st.u32 [%SP+8], %r1;
	ld.local.u32 %r1, [%rd1+4];
	ret;
}
"""
    entry = parse_ptx(text).main
    assert entry.local_bytes == 64
    pm = ptx_memory_ops(entry)
    got = sorted((r.space, r.kind, r.opcode, r.count) for r in pm.rows)
    assert got == [
        ("generic", "load", "ld.f32", 1),
        ("local", "load", "ld.f32", 1),
        ("local", "load", "ld.local.u32", 1),
        ("local", "store", "st.u32", 1),
    ]
