"""Tests for the opcode class table and the counting helpers."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from cutediff_tui.core.analysis import tools
from cutediff_tui.core.analysis.classes import (
    classify_ptx,
    classify_sass,
    count_classes,
    count_opcodes,
    default_classes,
    delta,
    load_classes,
    per_line_counts,
    ptx_class_counts,
    ptx_opcode_counts,
)
from cutediff_tui.core.analysis.ptx import parse_ptx
from cutediff_tui.core.analysis.sass import parse_sass
from cutediff_tui.core.errors import CutediffError

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "raw"
#: Opcodes deliberately classified "other" (see the TOML's comments).
DELIBERATE_OTHER = {"NOP", "USETMAXREG", "UVIRTCOUNT"}


@cache
def listing(side: str, line_info: bool = False):
    return parse_sass(tools.disassemble(SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.cubin", line_info=line_info))


@cache
def ptx_entry(side: str):
    return parse_ptx((SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.ptx").read_text()).main


def test_every_fa4_sass_opcode_is_classified():
    t = default_classes()
    ops = {i.opcode for side in ("4.5.1", "4.8.0") for i in listing(side).instrs()}
    assert len(ops) > 100
    unknown = sorted(o for o in ops if not t.is_known_sass(o))
    assert unknown == []
    other = {o.split(".")[0] for o in ops if t.sass_class(o) == "other"}
    assert other <= DELIBERATE_OTHER


def test_every_fa4_ptx_opcode_is_classified():
    ops = {i.opcode for side in ("4.5.1", "4.8.0") for i in ptx_entry(side).instrs}
    other = {o for o in ops if classify_ptx(o) == "other"}
    assert {o.split(".")[0] for o in other} <= {"setmaxnreg"}


@pytest.mark.parametrize(
    "opcode, cls",
    [
        ("UTCHMMA", "tensor_mma"),
        ("HGMMA.64x128x16.F32.BF16", "tensor_mma"),
        ("UTCBAR", "tensor_mma"),
        ("MUFU.EX2", "mufu"),
        ("FFMA2", "fp32_packed"),
        ("FMNMX3", "fp32"),
        ("FSEL", "fp32"),
        ("HFMA2", "fp16_bf16"),
        ("F2FP.BF16.F32.PACK_AB", "fp16_bf16"),
        ("IMAD.WIDE.U32", "integer"),
        ("IMAD.MOV.U32", "moves"),
        ("MOV.SPILL", "moves"),
        ("R2UR.FILL", "moves"),
        ("UIADD3.X", "uniform"),
        ("UFOO", "uniform"),
        ("LDG.E.128", "global"),
        ("STS.128", "shared"),
        ("UTMALDG.3D", "tma"),
        ("LDTM.x16", "tensor_memory"),
        ("UTCATOMSWS.AND", "tensor_memory"),
        ("LDL.LU.64", "local"),
        ("STL", "local"),
        ("SYNCS.PHASECHK.TRANS64.TRYWAIT", "sync"),
        ("BAR.SYNC.DEFER_BLOCKING", "sync"),
        ("BRA.U.ANY", "control"),
        ("BSSY.RECONVERGENT", "control"),
        ("I2F.RP", "conversion"),
        ("LDCU.64", "constant"),
        ("SHFL.IDX", "warp"),
        ("NOP", "other"),
        ("WHATEVER", "other"),
    ],
)
def test_sass_classes(opcode, cls):
    assert classify_sass(opcode) == cls


@pytest.mark.parametrize(
    "opcode, cls",
    [
        ("tcgen05.mma.cta_group::1.kind::f16", "tensor_mma"),
        ("ex2.approx.ftz.f32", "mufu"),
        ("add.rn.f32x2", "fp32_packed"),
        ("fma.rn.f32", "fp32"),
        ("add.s32", "integer"),
        ("setp.neu.f32", "fp32"),
        ("selp.b32", "integer"),
        ("add.rn.bf16x2", "fp16_bf16"),
        ("ld.global.b32", "global"),
        ("ld.shared.v4.b32", "shared"),
        ("ld.param.b64", "constant"),
        ("st.local.b32", "local"),
        ("ld.v4.b32", "global"),
        ("tcgen05.wait::st.sync.aligned", "tensor_memory"),
        ("cp.async.bulk.tensor.3d.shared::cta.global.tile.mbarrier::complete_tx::bytes", "tma"),
        ("prefetch.tensormap", "tma"),
        ("mbarrier.try_wait.parity.shared::cta.b64", "sync"),
        ("mov.b32", "moves"),
        ("cvt.rn.bf16x2.f32", "conversion"),
        ("shfl.sync.idx.b32", "warp"),
        ("bra.uni", "control"),
        ("rcp.rn.f32", "fp32"),
        ("fma.rn.f64", "fp64"),
    ],
)
def test_ptx_classes(opcode, cls):
    assert classify_ptx(opcode) == cls


def test_counts_on_the_pair():
    a, b = listing("4.5.1"), listing("4.8.0")
    oa, ob = count_opcodes(a), count_opcodes(b)
    for op, n in {"UTCHMMA": 64, "MUFU": 398, "FFMA2": 192, "FMUL2": 256, "FADD2": 191}.items():
        assert oa[op] == ob[op] == n
    assert (ob["STL"], ob["LDL"]) == (44, 33) and "STL" not in oa
    assert ob["MUFU.EX2"] + ob["MUFU.RCP"] + ob["MUFU.LG2"] == ob["MUFU"]
    ca, cb = count_classes(a), count_classes(b)
    for cls in ("tensor_mma", "mufu", "fp32_packed", "tensor_memory", "tma"):
        assert ca[cls] == cb[cls]
    assert ca["mufu"] == 398 and ca["fp32_packed"] == 639
    assert cb["local"] == 77 and "local" not in ca
    assert sum(cb.values()) == len(b)
    assert count_classes(b.main) == count_classes(b.main.instrs)


def test_delta():
    d = delta({"STL": 0, "MUFU": 398, "X": 1}, {"STL": 44, "MUFU": 398, "Y": 2})
    assert d["STL"] == (0, 44, 44) and d["MUFU"] == (398, 398, 0)
    assert d["X"] == (1, 0, -1) and d["Y"] == (0, 2, 2)
    assert next(iter(d)) == "STL"
    big = delta(count_opcodes(listing("4.5.1")), count_opcodes(listing("4.8.0")))
    assert big["STL"] == (0, 44, 44) and big["LDL"] == (0, 33, 33)


def test_per_line_counts():
    g = listing("4.8.0-lineinfo", line_info=True)
    per = per_line_counts(g.main)
    assert per and all(isinstance(k[0], str) and isinstance(k[1], int) for k in per)
    assert sum(d.get("local", 0) for d in per.values()) == 77
    assert sum(sum(d.values()) for d in per.values()) == sum(1 for i in g.main.instrs if i.line is not None)
    assert per_line_counts(listing("4.8.0").main) == {}


def test_ptx_counts():
    e = ptx_entry("4.8.0")
    oc = ptx_opcode_counts(e)
    assert "st.global.v4.b32" in oc and "st.shared.v4.b32" in oc and "ld.shared.b32" in oc
    assert sum(oc.values()) == len(e.instrs)
    cc = ptx_class_counts(e)
    assert cc["fp32_packed"] == 639 and cc["tensor_mma"] == 76
    assert sum(cc.values()) == len(e.instrs)


def test_custom_table(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('[classes]\nmine = { label = "Mine", weight = 7 }\n[sass]\nmine = ["FOO.BAR"]\n')
    t = load_classes(p)
    assert t.sass_class("FOO.BAR.X") == "mine" and t.sass_class("FOO") == "other"
    assert t.weight("mine") == 7 and t.label("mine") == "Mine"
    bad = tmp_path / "bad.toml"
    bad.write_text("[classes\n")
    with pytest.raises(CutediffError, match="not valid TOML"):
        load_classes(bad)
    with pytest.raises(CutediffError, match="missing"):
        load_classes(tmp_path / "none.toml")
