"""Sweep axes, plan expansion and the summary grid."""

import pytest

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.sweep import grid, parse_values


@pytest.mark.parametrize(
    "text,values",
    [
        ("64,128", [64, 128]),
        ("64:256:64", [64, 128, 192, 256]),
        ("64:128", list(range(64, 129))),
        ("true,false", [True, False]),
        ("bf16,fp16", ["bf16", "fp16"]),
    ],
)
def test_values(text, values):
    assert parse_values(text) == values


@pytest.mark.parametrize("text", ["", "128:64", "a:b", "1:2:0"])
def test_bad_values(text):
    with pytest.raises(CutediffError):
        parse_values(text)


def test_plan_expands_the_matrix_and_checks_values_first():
    from cutediff_tui.cli.sweep import make_sweep_plan

    plan = make_sweep_plan(
        ["4.5.1", "4.8.0"],
        kernel="fa4-fwd",
        archs=("sm_90a,sm_100a",),
        params=("hdim=64,128", "causal=true"),
        with_=("flash-attn-4==4.0.0b16",),
        wheelhouse=None,
    )
    assert len(plan.probes) == 2 * 2 * 2
    assert {p.params["hdim"] for p in plan.probes} == {64, 128}
    assert all(p.params["causal"] is True for p in plan.probes)
    assert len({p.key() for p in plan.probes}) == 8
    assert plan.axes == {"arch": ["sm_90a", "sm_100a"], "hdim": [64, 128]}
    with pytest.raises(CutediffError, match="no kernel for sm_80"):
        make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_80",))
    with pytest.raises(CutediffError, match="no parameter 'hdmi'"):
        make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_90a",), params=("hdmi=64,128",))
    with pytest.raises(CutediffError, match="not published"):
        make_sweep_plan(["4.5.9"], kernel="fa4-fwd", archs=("sm_90a",))


def _cell(side, arch, hdim, spill, status="ok"):
    return {
        "side": side,
        "toolchain": side,
        "arch": arch,
        "axis": {"arch": arch, "hdim": hdim},
        "status": status,
        "why": None if status == "ok" else "DSL 4.6.0 fails to import.",
        "kernels": [
            {
                "name": f"Fwd{arch}",
                "symbol": "s",
                "figures": {"spill_store_bytes": spill, "registers": 128, "UTCHMMA": 64},
            },
            {"name": "Bwd", "symbol": "t", "figures": {"spill_store_bytes": 1, "registers": 255}},
        ],
    }


def test_grid():
    res = {
        "schema": "cutediff.sweep/1",
        "figure": "spill_store_bytes",
        "kernel_filter": "Fwd",
        "cells": [
            _cell("4.5.1", "sm_90a", 64, 0),
            _cell("4.5.1", "sm_90a", 128, 0),
            _cell("4.8.0", "sm_90a", 64, 176),
            _cell("4.8.0", "sm_90a", 128, 0, status="failed"),
        ],
    }
    g = grid(res)
    assert g.rows == ["4.5.1", "4.8.0"] and g.cols == ["sm_90a hdim=64", "sm_90a hdim=128"]
    assert g.values == [[0, 0], [176, None]] and "fails to import" in g.notes[1][1]
    assert g.kernels[1][0] == "Fwdsm_90a"
    assert grid(res, "registers", kernel_filter="").values[0] == [255, 255]  # no filter: the largest kernel value
    assert grid(res, "spill_store_bytes + UTCHMMA").values[1][0] == 240
    with pytest.raises(CutediffError, match="not a cutediff sweep"):
        grid({"schema": "cutediff.comparison/1"})


def test_two_gpus_of_one_arch_are_two_columns():
    from cutediff_tui.cli.sweep import make_sweep_plan

    plan = make_sweep_plan(["4.5.1"], kernel="fa4-fwd", gpus=("h100,h20",))
    assert [p.axis for p in plan.probes] == [{"arch": "sm_90a", "gpu": "h100"}, {"arch": "sm_90a", "gpu": "h20"}]
    assert [p.profile.num_sms for p in plan.probes] == [132, 78]
    cells = [
        {
            "side": "4.5.1",
            "axis": p.axis,
            "status": "ok",
            "kernels": [{"name": "k", "figures": {"registers": p.profile.num_sms}}],
        }
        for p in plan.probes
    ]
    g = grid({"schema": "cutediff.sweep/1", "figure": "registers", "cells": cells})
    assert g.cols == ["sm_90a gpu=h100", "sm_90a gpu=h20"] and g.values == [[132, 78]]
    with pytest.raises(CutediffError, match="listed twice"):
        make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_90a,sm_90a",))


def test_values_holding_commas_and_empty_lists():
    from cutediff_tui.cli.sweep import make_sweep_plan

    assert parse_values("128,0;256,0") == ["128,0", "256,0"]
    plan = make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_90a",), params=("window=128,0;256,0",))
    assert [p.params["window"] for p in plan.probes] == [[128, 0], [256, 0]]
    fixed = make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_90a",), params=("window=128,0",))
    assert [p.params["window"] for p in fixed.probes] == [[128, 0]]
    with pytest.raises(CutediffError, match="not two integers"):
        make_sweep_plan(["4.5.1"], kernel="fa4-fwd", archs=("sm_90a",), params=("window=128",))
    with pytest.raises(CutediffError, match="are empty"):
        parse_values(",")
