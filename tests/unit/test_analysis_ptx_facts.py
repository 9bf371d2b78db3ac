"""PTX figures (.local depot, register declarations, ranked opcode deltas) on real DSL PTX."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

from cutediff_tui.core.analysis.ptx import parse_ptx
from cutediff_tui.core.analysis.ptx_facts import opcode_deltas, ptx_facts

DATA = Path(__file__).resolve().parent / "data" / "recipes"
FA4 = Path(__file__).resolve().parents[2] / "samples" / "raw"


def facts(name: str):
    return ptx_facts(parse_ptx(gzip.decompress((DATA / f"{name}.ptx.gz").read_bytes()).decode()).main)


def test_register_declarations_and_depot():
    wide, narrow = facts("vector_store-bits128"), facts("vector_store-bits16")
    assert wide.reg_decls == {"b32": 102, "b64": 7} and wide.local_bytes == 0
    assert narrow.reg_decls == {"b16": 65, "b32": 70, "b64": 7}
    assert narrow.registers_declared == 142
    assert facts("stack_scratch-dynamic").local_bytes == 256
    js = narrow.to_json()
    assert js["opcodes"]["st.global.b16"] == 64 and js["registers_declared"] == 142


def test_opcode_deltas_ranked_with_type_and_width():
    wide, narrow = facts("vector_store-bits128"), facts("vector_store-bits16")
    ranked = opcode_deltas(wide.opcodes, narrow.opcodes)
    assert [(d.opcode, d.a, d.b) for d in ranked[:4]] == [
        ("cvt.rn.bf16.f32", 0, 64),
        ("st.global.b16", 0, 64),
        ("cvt.rn.bf16x2.f32", 32, 0),
        ("st.global.v4.b32", 8, 0),
    ]
    assert all(abs(x.delta) >= abs(y.delta) for x, y in itertools.pairwise(ranked))
    assert opcode_deltas(wide.opcodes, wide.opcodes) == []
    assert len(opcode_deltas(wide.opcodes, narrow.opcodes, top=2)) == 2


def test_fa4_depot_and_declarations():
    a = ptx_facts(parse_ptx((FA4 / "fa4-fwd-sm103a-4.5.1" / "kernel.ptx").read_text()).main)
    b = ptx_facts(parse_ptx((FA4 / "fa4-fwd-sm103a-4.8.0" / "kernel.ptx").read_text()).main)
    # %r<5311> plus 51 names declared in inline-asm blocks; %p<729> plus 50 (counted with grep/awk too)
    assert b.reg_decls == {"pred": 779, "b16": 10, "b32": 5362, "b64": 1830}
    assert a.reg_decls["b32"] == 5786 and a.registers_declared == 774 + 11 + 5786 + 1464
    assert a.local_bytes == b.local_bytes == 0  # the 4.8.0 spill is made by ptxas, not in the PTX
