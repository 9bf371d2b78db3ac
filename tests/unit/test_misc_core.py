from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.gpu import normalize_arch, resolve_profile
from cutediff_tui.core.naming import kernel_class, unique_names
from cutediff_tui.core.recipes import BUILTINS, coerce_params, get_recipe
from cutediff_tui.core.remarks import parse_remarks

ROOT = Path(__file__).resolve().parents[2]

REMARK_LOG = """\
[W1202 Warning: something from torch
\x1b[96mremark[ptxas]:\x1b[0m ptxas detected register spills

  --> /home/u/.cache/cutediff/envs/dsl-4.8.0-cu13-x/site/flash_attn/cute/tile_scheduler.py:923:32
      in function `\x1b[92m_get_num_m_blocks\x1b[0m(...)`:
   |
  922 |             if batch_idx <= params.num_batch:
> 923 |                 cur_cu_seqlen = params.mCuSeqlensQ[batch_idx]
      |                                ^
  remark: Spilled values are placed in local memory.

          ptxas output:
          ptxas info    : Compiling entry function
          'kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__t0'
          for 'sm_103a'
          ptxas         .     112 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads
compiled in 6.0
"""


def test_parse_remarks_from_log_with_colours():
    (r,) = parse_remarks(REMARK_LOG)
    assert r.category == "ptxas"
    assert r.file == "flash_attn/cute/tile_scheduler.py" and r.line == 923 and r.column == 32
    assert r.function == "_get_num_m_blocks(...)"
    assert r.kernel.endswith("FlashAttentionForwardSm100_object_at__t0")
    assert r.detail == "112 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads"


def test_parse_remarks_none():
    assert parse_remarks("compiled in 4.5\n") == []


def test_kernel_class_names():
    sym = "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor000o1"
    assert kernel_class(sym) == "FlashAttentionForwardSm100"
    assert kernel_class("kernel_cutlass_kernel_my_rmsnorm_tensorptrf32") == "my_rmsnorm"
    # a @cute.kernel function is named after itself, not after the @cute.jit launcher (issue 37)
    add = "kernel_cutlass_add_kernel_tensorptrf32gmemo409640961_tensorptrf32gmemo409640961_4_0"
    assert kernel_class(add, "elementwise_add") == "add_kernel"
    assert kernel_class("kernel_cutlass_tiny_kernel__0", "tiny_launch") == "tiny_kernel"
    assert kernel_class("kernel_cutlass_softmax_kernel_Tensorgmemf32_0", "launch") == "softmax_kernel"
    assert kernel_class("kernel_cutlass__0", "launch") == "launch"  # the symbol names nothing
    assert unique_names(["K", "K", "L", "K"]) == ["K", "K#2", "L", "K#3"]


@pytest.mark.parametrize(
    "given,want", [("90a", "sm_90a"), ("SM_100A", "sm_100a"), ("sm_103a", "sm_103a"), ("sm120a", "sm_120a")]
)
def test_normalize_arch(given, want):
    assert normalize_arch(given) == want


def test_bad_arch_and_profile():
    with pytest.raises(CutediffError, match="not a GPU architecture"):
        normalize_arch("volta")
    with pytest.raises(CutediffError, match="Unknown GPU profile"):
        resolve_profile("h800x")


def test_profiles():
    p = resolve_profile("h200")
    assert (p.arch, p.num_sms) == ("sm_90a", 132)
    p = resolve_profile("b200", num_sms=100)
    assert p.num_sms == 100 and p.arch == "sm_100a" and p.name == "b200*"
    assert resolve_profile(arch="sm_103a").arch == "sm_103a"


def test_recipe_params():
    r = get_recipe("fa4-fwd")
    p = coerce_params(r, {"hdim": "64", "causal": False, "window": "128,0"})
    assert p["hdim"] == 64 and p["causal"] is False and p["window"] == [128, 0] and p["heads"] == 32
    with pytest.raises(CutediffError):
        coerce_params(r, {"dtype": "fp64"})
    with pytest.raises(CutediffError):
        get_recipe("nope")
    assert set(BUILTINS) >= {"fa4-fwd", "fa4-bwd", "fa4-fwdbwd"}


def test_core_never_imports_textual():
    offenders = []
    for path in (ROOT / "cutediff_tui" / "core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "textual" or n.startswith(("textual.", "textual_plotext")) for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_readme_commands_and_ci_agree():
    readme = (ROOT / "README.md").read_text()
    cmds = [ln.strip() for ln in readme.splitlines() if ln.startswith("    python3 -m venv .venv")]
    assert len(cmds) == 2
    assert cmds[0].endswith(".venv/bin/cutediff")
    assert cmds[1].endswith("pytest -q")
    assert "sed -n" in (ROOT / ".ci" / "run").read_text()
