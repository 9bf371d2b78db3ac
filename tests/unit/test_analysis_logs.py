"""Tests for the ptxas -v log parser and the cuobjdump resource-usage parser."""

from __future__ import annotations

from cutediff_tui.core.analysis.ptxas_log import parse_ptxas_v, parse_ptxas_v_all
from cutediff_tui.core.analysis.resource_usage import parse_resource_usage

NAME = "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor0"

RUN_134 = f"""\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '{NAME}' for 'sm_103a'
ptxas info    : Function properties for {NAME}
    112 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads
ptxas info    : Used 128 registers, used 16 barriers, 112 bytes cumulative stack size
ptxas info    : Compile time = 427.271 ms
"""

RUN_130 = f"""\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '{NAME}' for 'sm_103a'
ptxas info    : Function properties for {NAME}
    48 bytes stack frame, 120 bytes spill stores, 100 bytes spill loads
ptxas info    : Used 128 registers, used 16 barriers, 48 bytes cumulative stack size
ptxas info    : Compile time = 409.575 ms
"""

NO_SPILL = f"""\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '{NAME}' for 'sm_103a'
ptxas info    : Function properties for {NAME}
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 16 barriers
ptxas info    : Compile time = 412.324 ms
"""

REMARK = f"""\
remark[ptxas]: ptxas detected register spills
          ptxas output:
          ptxas info    : 0 bytes gmem
          ptxas info    : Compiling entry function
          '{NAME}'
          for 'sm_103a'
          ptxas info    : Function properties for
          {NAME}
          ptxas         .     112 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads
          ptxas info    : Used 128 registers, used 16 barriers, 112 bytes cumulative stack size
          ptxas info    : Compile time = 474.399 ms
"""


def test_one_run():
    (f,) = parse_ptxas_v(RUN_134).values()
    assert (f.name, f.arch, f.is_entry) == (NAME, "sm_103a", True)
    assert (f.registers, f.barriers, f.stack_frame, f.cumulative_stack) == (128, 16, 112, 112)
    assert (f.spill_stores, f.spill_loads, f.compile_ms) == (176, 176, 427.271)
    assert f.spills


def test_no_spill_run():
    (f,) = parse_ptxas_v(NO_SPILL).values()
    assert (f.stack_frame, f.spill_stores, f.spill_loads, f.cumulative_stack) == (0, 0, 0, 0)
    assert not f.spills


def test_two_runs_concatenated_keep_last_and_all():
    text = RUN_134 + RUN_130
    allf = parse_ptxas_v_all(text)
    assert [(f.spill_stores, f.spill_loads) for f in allf] == [(176, 176), (120, 100)]
    assert parse_ptxas_v(text)[NAME].spill_stores == 120


def test_wrapped_remark_log():
    (f,) = parse_ptxas_v(REMARK).values()
    assert (f.name, f.arch, f.registers, f.spill_stores, f.spill_loads, f.stack_frame) == (
        NAME,
        "sm_103a",
        128,
        176,
        176,
        112,
    )


def test_device_function_and_cmem():
    text = (
        "ptxas info    : Function properties for helper\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 40 registers, 24 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n"
    )
    d = parse_ptxas_v(text)
    assert d["helper"].spill_stores == 4 and not d["helper"].is_entry and d["helper"].registers is None
    assert (d["k"].registers, d["k"].smem, d["k"].cmem, d["k"].barriers) == (40, 24, {0: 380, 2: 8}, 0)


def test_empty_log():
    assert parse_ptxas_v("") == {}


def test_resource_usage_snippet():
    text = (
        "\nResource usage:\n Common:\n  GLOBAL:0\n"
        " Function k1:\n"
        "  REG:128 STACK:112 SHARED:1024 LOCAL:0 CONSTANT[2]:12 CONSTANT[0]:1596 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
        " Function k2:\n  REG:32 STACK:0 SHARED:0 LOCAL:16 CONSTANT[0]:900 TEXTURE:1 SURFACE:0 SAMPLER:2 FOO:3\n"
    )
    d = parse_resource_usage(text)
    assert list(d) == ["k1", "k2"]
    assert (d["k1"].registers, d["k1"].stack, d["k1"].shared, d["k1"].constant) == (128, 112, 1024, {2: 12, 0: 1596})
    assert (d["k2"].local, d["k2"].texture, d["k2"].sampler, d["k2"].extra) == (16, 1, 2, {"FOO": 3})
    assert parse_resource_usage("") == {}
