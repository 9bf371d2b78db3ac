"""The issue-15 analysis facts on real compiles of the sample recipes (DSL 4.8.0, two parameter settings).

Each recipe is compiled twice on one toolchain with a parameter set differently (``compare 4.8.0
4.8.0 --param ...``, both sides alike), then the two builds' artifacts are compared with
``cutediff diff``, so one comparison holds both settings as sides A and B.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]


def cutediff(args: list[str], cache: Path) -> dict:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
    proc = subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args, "--json", "-"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def build(cache: Path, recipe: str, params: list[str], arch: str = "sm_90a") -> dict:
    """Compile one setting; return side A's kernel metrics."""
    args = ["compare", "4.8.0", "4.8.0", *PINS, "--kernel", f"samples/recipes/{recipe}", "--arch", arch]
    for p in params:
        args += ["--param", p]
    result = cutediff([*args, "--no-lineinfo", "-q"], cache)
    (k,) = result["kernels"]
    assert result["sides"]["a"]["error"] is None
    return k["a"]


def pair(cache: Path, a: dict, b: dict) -> dict:
    result = cutediff(["diff", a["files"]["dir"], b["files"]["dir"]], cache)
    (k,) = result["kernels"]
    return k


def stores(m: dict, isa: str = "sass") -> dict[str, int]:
    mem = m["memory"] if isa == "sass" else m["ptx"]["memory"]
    return {r["opcode"]: r["count"] for r in mem["ops"] if r["space"] == "global" and r["kind"] == "store"}


def test_store_width_changes_between_settings(compile_cache):
    wide = build(compile_cache, "vector_store.py", ["bits=128"])
    narrow = build(compile_cache, "vector_store.py", ["bits=16"])
    assert stores(wide) == {"STG.E.128": 8} and stores(narrow) == {"STG.E.U16": 64}
    assert stores(wide, "ptx") == {"st.global.v4.b32": 8} and stores(narrow, "ptx") == {"st.global.b16": 64}
    k = pair(compile_cache, wide, narrow)
    assert stores(k["a"]) == {"STG.E.128": 8} and stores(k["b"]) == {"STG.E.U16": 64}
    top = {d["opcode"]: (d["a"], d["b"]) for d in k["ptx_opcode_ranking"][:4]}
    assert top["st.global.b16"] == (0, 64) and top["st.global.v4.b32"] == (8, 0)
    assert k["b"]["ptx"]["reg_decls"].get("b16", 0) > k["a"]["ptx"]["reg_decls"].get("b16", 0)


def test_stack_array_counts_as_local(compile_cache):
    dyn = build(compile_cache, "stack_scratch.py", ["index=dynamic"])
    static = build(compile_cache, "stack_scratch.py", ["index=static"])
    assert dyn["stack_bytes"] == 272 and static["stack_bytes"] == 0
    assert (dyn["local_loads"], dyn["local_stores"]) == (64, 16)
    assert (dyn["local_load_bytes"], dyn["local_store_bytes"]) == (256, 256)
    assert (static["local_loads"], static["local_stores"]) == (0, 0)
    generic = build(compile_cache, "stack_scratch.py", ["index=generic"])
    assert generic["stack_bytes"] == 272 and generic["ldl"] == 0  # no LDL: the loads are generic LD.E
    assert (generic["local_loads"], generic["local_load_bytes"]) == (64, 256)
    loads = {r["opcode"]: r["count"] for r in generic["memory"]["ops"] if r["space"] == "local" and r["kind"] == "load"}
    assert loads == {"LD.E [stack]": 64}
    assert dyn["ptx"]["local_bytes"] == 256
    assert dyn["ptx"]["memory"]["by_space"]["local"] == {
        "load": {"count": 64, "bytes": 256},
        "store": {"count": 16, "bytes": 256},
    }


def test_register_budgets_differ_between_settings(compile_cache):
    a = build(compile_cache, "warp_budgets.py", ["high=176", "low=88"])
    b = build(compile_cache, "warp_budgets.py", ["high=184", "low=80"])
    k = pair(compile_cache, a, b)
    ba, bb = k["a"]["budgets"], k["b"]["budgets"]
    assert (ba["display"], bb["display"]) == ("176/88", "184/80")
    assert ba["roles"] == {"warps 0-3": [88], "warps 4-11": [176]}
    assert bb["roles"] == {"warps 0-3": [80], "warps 4-11": [184]}
    assert k["b"]["ptx"]["budgets"]["display"] == "184/80" and bb["reqntid"] == [384, 1, 1]
    assert k["a"]["opcodes"] == k["b"]["opcodes"]  # no opcode count shows the change
    dropped = build(compile_cache, "warp_budgets.py", ["min_blocks=0"])
    assert dropped["ptx"]["budgets"]["display"] == "176/88" and dropped["budgets"]["display"] == ""
