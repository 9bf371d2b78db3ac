"""Register budgets (setmaxnreg / USETMAXREG) with warp roles, on real SASS/PTX."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from cutediff_tui.core.analysis.budgets import ptx_register_budgets, sass_register_budgets
from cutediff_tui.core.analysis.ptx import parse_ptx
from cutediff_tui.core.analysis.sass import parse_sass

DATA = Path(__file__).resolve().parent / "data" / "recipes"
FA4 = Path(__file__).resolve().parents[2] / "samples" / "raw"


def load(name: str):
    s = parse_sass(gzip.decompress((DATA / f"{name}.sass.gz").read_bytes()).decode()).main
    p = parse_ptx(gzip.decompress((DATA / f"{name}.ptx.gz").read_bytes()).decode()).main
    return s, p


def test_warp_specialized_budgets_and_roles():
    for name, high, low in (("warp_budgets-176-88", 176, 88), ("warp_budgets-184-80", 184, 80)):
        func, entry = load(name)
        pb = ptx_register_budgets(entry)
        sb = sass_register_budgets(func, pb)
        assert pb.display() == sb.display() == f"{high}/{low}"
        roles = {"warps 0-3": [low], "warps 4-11": [high]}
        assert pb.roles() == sb.roles() == roles
        assert pb.reqntid == sb.reqntid == (384, 1, 1) and pb.minnctapersm == 1 and pb.maxnreg is None
        # the SASS immediates as printed: USETMAXREG.DEALLOC 0x58 / TRY_ALLOC 0xb0 for 88/176
        imms = [i.operands.split(",")[-1].strip() for i in func.instrs if i.base == "USETMAXREG"]
        assert sorted(int(x, 16) for x in imms) == [low, high]
        assert [(c.action, c.registers) for c in sb.changes] == [("dec", low), ("inc", high)]


def test_budgets_differ_between_the_two_settings():
    a = ptx_register_budgets(load("warp_budgets-176-88")[1])
    b = ptx_register_budgets(load("warp_budgets-184-80")[1])
    assert a.display() != b.display()
    assert json.loads(json.dumps(a.to_json()))["display"] == "176/88"
    assert b.to_json()["inc"] == [184] and b.to_json()["dec"] == [80]


def test_ptxas_drops_budgets_without_min_blocks():
    """Without .minnctapersm, ptxas (DSL 4.8.0, sm_90a) emits no USETMAXREG for the PTX's setmaxnreg."""
    func, entry = load("warp_budgets-no-min-blocks")
    pb = ptx_register_budgets(entry)
    sb = sass_register_budgets(func, pb)
    assert pb.display() == "176/88" and pb.minnctapersm is None
    assert sb.display() == "" and sb.changes == ()


def test_kernel_without_budgets():
    func, entry = load("vector_store-bits128")
    pb = ptx_register_budgets(entry)
    assert pb.display() == "" and pb.changes == () and pb.reqntid == (128, 1, 1)
    assert sass_register_budgets(func, pb).to_json()["changes"] == []


def test_fa4_budgets_per_warp():
    from cutediff_tui.core.analysis import tools

    entry = parse_ptx((FA4 / "fa4-fwd-sm103a-4.8.0" / "kernel.ptx").read_text()).main
    pb = ptx_register_budgets(entry)
    assert pb.display() == "176/96/64"
    roles = pb.roles()
    assert roles["warps 0-7"] == [176]
    assert all(roles[f"warp {w}"] == [96] for w in (12, 13, 14, 15))
    assert any(c.registers == 64 and c.role is None for c in pb.changes)  # its branch does not tell
    func = parse_sass(tools.disassemble(FA4 / "fa4-fwd-sm103a-4.8.0" / "kernel.cubin")).main
    sb = sass_register_budgets(func, pb)
    assert sb.display() == "176/96/64"
    assert sb.roles() == {"warps 12-15": [96], "warps 0-7": [176]}
    assert sb.reqntid == (512, 1, 1)


PTX = """
.version 9.0
.target sm_90a
.address_size 64
.visible .entry k()
.maxnreg 168
{
	.reg .pred %p<4>;
	.reg .b32 %r<9>;
	mov.u32 %r1, %tid.x;
	div.u32 %r2, %r1, 32;
	setp.eq.s32 %p1, %r2, 2;
	@%p1 bra $L1;
	setp.lt.u32 %p2, %r2, 2;
	@!%p2 bra $L2;
	setmaxnreg.dec.sync.aligned.u32 40;
	bra.uni $L2;
$L1:
	setmaxnreg.inc.sync.aligned.u32 232;
$L2:
	setmaxnreg.inc.sync.aligned.u32 200;
	ret;
}
"""


def test_roles_from_branches_and_fallthrough():
    pb = ptx_register_budgets(parse_ptx(PTX).main)
    assert [(c.action, c.registers, c.role) for c in pb.changes] == [
        ("dec", 40, "warps 0-1"),  # falls through "@!%p2 bra" with %p2 = warp < 2
        ("inc", 232, "warp 2"),  # reached by "@%p1 bra $L1" with %p1 = warp == 2
        ("inc", 200, None),  # reached from two places
    ]
    assert pb.maxnreg == 168 and pb.display() == "232/200/40"
