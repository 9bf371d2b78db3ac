"""Reports from a small hand-made comparison (no compile, no CUDA tools): Markdown, HTML, JSON."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.report import model as M
from cutediff_tui.core.report import (
    render_html,
    render_json,
    render_markdown,
    validate_comparison,
    write_report,
)
from cutediff_tui.core.report.markdown import md_code, md_text
from cutediff_tui.core.report.svg import grouped_hbars, line_plot, nice_ticks

EVIL_KERNEL = "Evil<script>alert(1)</script>"
EVIL_FILE = "flash_attn/<img src=x onerror=alert(2)>.py"
EVIL_SOURCE = "x = y  # <img src=x onerror=alert(3)> & more"


def _metrics(spills: bool, *, remarks: list | None = None, sites: list | None = None) -> dict:
    ops = {"UTCHMMA": 64, "MUFU": 398, "FFMA2": 192, "FMUL2": 256, "FADD2": 191, "IMAD": 500}
    classes = {"tensor_mma": 76, "mufu": 398, "fp32_packed": 639, "integer": 1335, "moves": 714}
    if spills:
        ops |= {"STL": 2, "LDL": 1}
        classes |= {"local": 3, "moves": 810}
    if sites is None:
        sites = (
            [
                {
                    "addr": 100,
                    "index": 10,
                    "kind": "store",
                    "opcode": "STL",
                    "width_bytes": 4,
                    "slot": "R1+0x6c",
                    "file": "flash_attn/cute/softmax.py",
                    "line": 267,
                    "loop": {"head_addr": 64, "end_addr": 200, "depth": 1},
                },
                {
                    "addr": 116,
                    "index": 11,
                    "kind": "store",
                    "opcode": "STL.64",
                    "width_bytes": 8,
                    "slot": "R1+0x70",
                    "file": "flash_attn/cute/softmax.py",
                    "line": 267,
                    "loop": {"head_addr": 64, "end_addr": 200, "depth": 1},
                },
                {
                    "addr": 300,
                    "index": 30,
                    "kind": "load",
                    "opcode": "LDL",
                    "width_bytes": 4,
                    "slot": "R1+0x6c",
                    "file": "flash_attn/cute/tile_scheduler.py",
                    "line": 923,
                    "loop": None,
                },
            ]
            if spills
            else []
        )
    return {
        "symbol": "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__t0",
        "sources": {},
        "registers": 128,
        "stack_bytes": 112 if spills else 0,
        "shared_bytes": 1024,
        "local_bytes": 0,
        "spill_store_bytes": 12 if spills else 0,
        "spill_load_bytes": 4 if spills else 0,
        "spill_source": "SASS local-memory accesses (SpillRefill tags)",
        "opcodes": ops,
        "instruction_classes": classes,
        "instructions": 5750 if spills else 5252,
        "stl": 2 if spills else 0,
        "ldl": 1 if spills else 0,
        "spill_sites": sites,
        "pressure": {
            "peaks": {
                "gpr": {
                    "kind": "gpr",
                    "value": 162 if spills else 159,
                    "addr": 38688,
                    "index": 2418,
                    "file": "flash_attn/cute/flash_fwd_sm100.py",
                    "line": 2316,
                }
            },
            "curve_gpr": [10, 40, 120, 160 if spills else 150, 90, 20],
            "curve_ugpr": [4, 8, 16, 16, 8, 4],
        },
        "line_info_mapped": True,
        "ptx": {
            "version": "9.4" if spills else "9.1",
            "target": "sm_103a",
            "toolchain": "13.4" if spills else "13.1",
            "instructions": 7060,
            "local_bytes": 0,
            "opcodes": {"fma.rn.f32x2": 192},
        },
        "cubin_toolchain": {"tool": "ptxas", "version": "13.4.59"},
        "compile_seconds": 5.2 if spills else 8.4,
        "callable": "kernel",
        "remarks": remarks or [],
        "lineinfo": {
            "resources": {"registers": 128, "stack_bytes": 112 if spills else 0},
            "perturbed": False,
            "mapped": True,
        },
        "files": {"dir": "/nonexistent/a/000", "lineinfo_dir": None},
    }


def make_comparison(*, bench: bool = True, crosscheck: bool = True) -> dict:
    remark = {
        "category": "ptxas",
        "message": "ptxas detected register spills | <b>bold</b>",
        "file": "flash_attn/cute/tile_scheduler.py",
        "line": 923,
        "column": 32,
        "function": "_get_num_m_blocks(...)",
        "kernel": None,
        "detail": "112 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads",
    }
    fwd = {
        "name": "FlashAttentionForwardSm100",
        "symbol": {"a": "kernel_fwd_a", "b": "kernel_fwd_b"},
        "a": _metrics(False),
        "b": _metrics(True, remarks=[remark]),
        "alignment": {
            "matched": 3549,
            "total": 11002,
            "match_pct": 64.52,
            "counts": {"same": 591},
            "hunk_count": 1,
            "hunks": [
                {
                    "a_range": [3133, 3133],
                    "b_range": [3219, 3234],
                    "kind": "inserted",
                    "cost": 105.0,
                    "summary": "+10 LDL, +4 uniform",
                    "rows": [1, 2],
                }
            ],
        },
        "deltas": {"opcodes": {"STL": [0, 2, 2]}, "instruction_classes": {"local": [0, 3, 3]}},
        "spill_sites_diff": {
            "added": [{"file": "flash_attn/cute/softmax.py", "line": 267, "kind": "store", "a_count": 0, "b_count": 2}],
            "removed": [],
            "unchanged": [],
        },
    }
    evil_site = {
        "addr": 8,
        "index": 1,
        "kind": "store",
        "opcode": "STL",
        "width_bytes": 4,
        "slot": "R1",
        "file": EVIL_FILE,
        "line": 1,
        "loop": None,
    }
    evil = {
        "name": EVIL_KERNEL,
        "symbol": {"a": EVIL_KERNEL, "b": EVIL_KERNEL},
        "a": _metrics(False) | {"symbol": EVIL_KERNEL},
        "b": _metrics(True, sites=[evil_site]) | {"symbol": EVIL_KERNEL},
    }
    side = {
        "dsl": "4.5.1",
        "cuda": 13,
        "label": "4.5.1 [flash-attn-4==4.0.0b16,quack-kernels==0.4.1]",
        "pins": ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"],
        "env": "dsl-4.5.1-cu13-abc",
        "error": None,
        "versions": {
            "nvidia-cutlass-dsl": "4.5.1",
            "nvidia-cutlass-dsl-libs-cu13": "4.5.1",
            "flash-attn-4": "4.0.0b16",
            "quack-kernels": "0.4.1",
            "apache-tvm-ffi": "0.1.6",
            "numpy": "2.3.0",
        },
        "build_key": "k1",
        "lineinfo_key": "k2",
        "from_cache": True,
        "compile_seconds": 9.0,
        "wall_seconds": 10.0,
        "env_seconds": 0.1,
        "shims": [],
        "notes": [],
        "repaired": [],
        "packages": {},
    }
    side_b = copy.deepcopy(side) | {
        "dsl": "4.8.0",
        "label": "4.8.0 [flash-attn-4==4.0.0b16,quack-kernels==0.4.1]",
        "shims": ["cute.core.ThrMma alias (quack 0.4.1 on DSL 4.8)"],
    }
    side_b["versions"] |= {
        "nvidia-cutlass-dsl": "4.8.0",
        "nvidia-cutlass-dsl-libs-cu13": "4.8.0",
        "apache-tvm-ffi": "0.1.15.post2",
    }
    c = {
        "schema": "cutediff.comparison/1",
        "analysis_version": 1,
        "created": "2026-12-02T16:52:04+0000",
        "command": "cutediff compare 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --with quack-kernels==0.4.1 --kernel fa4-fwd --arch sm_103a",
        "host": {
            "python": "3.11.7",
            "platform": "Linux-x86_64",
            "machine": "x86_64",
            "torch": "2.13.0+cpu",
            "cutediff": "0.1.0",
            "gpu": None,
        },
        "recipe": {"name": "fa4-fwd", "params": {"varlen": True, "causal": True, "hdim": 128, "window": [128, 0]}},
        "arch": "sm_103a",
        "profile": {"name": "b300", "arch": "sm_103a", "num_sms": 148, "smem_per_block": 232448, "note": ""},
        "lineinfo": True,
        "sides": {"a": side, "b": side_b},
        "kernels": [fwd, evil],
        "crosscheck": None,
        "analysis_seconds": 0.6,
        "timing": {"build_seconds": 20.0, "total_seconds": 21.0, "from_cache": True},
    }
    if crosscheck:
        c["crosscheck"] = {
            "FlashAttentionForwardSm100": {
                "matrix": [
                    {
                        "side": "a",
                        "ptx_version": "9.1",
                        "ptxas_version": "13.4",
                        "rewritten_from": None,
                        "registers": 128,
                        "stack": 0,
                        "spill_stores": 0,
                        "spill_loads": 0,
                        "error": None,
                        "log": "",
                    },
                    {
                        "side": "b",
                        "ptx_version": "9.0",
                        "ptxas_version": "13.0",
                        "rewritten_from": "9.4",
                        "registers": 128,
                        "stack": 96,
                        "spill_stores": 120,
                        "spill_loads": 100,
                        "error": None,
                        "log": "",
                    },
                ],
                "verdict": "The spills come from the PTX of B: both ptxas versions spill on it.",
                "cause": "ptx",
                "arch": "sm_103a",
                "ptxas_paths": {},
            }
        }
    if bench:
        c["bench"] = {
            "gpu": {"name": "NVIDIA B300", "arch": "sm_103a"},
            "gpu_before": {"name": "NVIDIA B300", "driver": "580.82"},
            "mode": "fwd",
            "shapes": [
                {
                    "shape": {
                        "total": 8192,
                        "heads": 32,
                        "docs": 4,
                        "hdim": 128,
                        "causal": True,
                        "label": "8192x32h/4",
                    },
                    "a": {"median_ms": 1.0, "iqr_ms": 0.02, "q1_ms": 0.99, "q3_ms": 1.01, "min_ms": 0.97, "n": 5},
                    "b": {"median_ms": 1.1, "iqr_ms": 0.02, "q1_ms": 1.09, "q3_ms": 1.11, "min_ms": 1.07, "n": 5},
                    "ratio": 1.1,
                    "ci_low": 1.08,
                    "ci_high": 1.12,
                    "verdict": "SLOWER",
                    "tolerance": 0.01,
                    "samples": {"a": [0.97, 0.99, 1.0, 1.01, 1.02], "b": [1.07, 1.09, 1.1, 1.11, 1.12]},
                }
            ],
        }
    return c


@pytest.fixture
def comparison() -> dict:
    return make_comparison()


# ---------------------------------------------------------------- Markdown


def test_markdown_has_every_section(comparison):
    md = render_markdown(comparison)
    first = md.splitlines()[0]
    assert first.startswith(
        "### cutediff: FlashAttentionForwardSm100 spills on 4.8.0: stack 0 → 112 B, spill stores 0 → 12 B"
    )
    assert "key opcodes unchanged (UTCHMMA" in first  # classes changed, the key opcodes did not
    assert "| Stack frame (bytes) | 0 | 112 | **+112** |" in md
    assert "| Spill stores (bytes) | 0 | 12 | **+12** |" in md
    for op, n in {"UTCHMMA": 64, "MUFU": 398, "FFMA2": 192, "FMUL2": 256, "FADD2": 191}.items():
        assert f"| `{op}` | {n} | {n} | = |" in md
    assert "| Local memory (spills) | 0 | 3 | +3 |" in md
    assert "`flash_attn/cute/softmax.py:267`" in md and "12 / 0 (2 STL, 0 LDL)" in md
    assert "**Compiler remarks**" in md and "`flash_attn/cute/tile_scheduler.py:923:32`" in md
    assert "#### ptxas cross-check" in md and "Verdict: The spills come from the PTX of B" in md
    assert ".version 9.4 rewritten down for ptxas 13.0" in md and "| A | 9.1 | 13.4 | 128 | 0 | 0 | 0 |" in md
    assert "#### Benchmark" in md and "| 1.100 |" in md and "SLOWER" in md and "580.82" in md
    assert "pip install 'nvidia-cutlass-dsl[cu13]==4.5.1' flash-attn-4==4.0.0b16 quack-kernels==0.4.1" in md
    assert "pip install 'nvidia-cutlass-dsl[cu13]==4.8.0' flash-attn-4==4.0.0b16 quack-kernels==0.4.1" in md
    assert comparison["command"] in md
    assert "| `nvidia-cutlass-dsl` | 4.5.1 | **4.8.0** |" in md
    assert "<details><summary>The other 3 packages of the two environments</summary>" in md
    assert "- side B shim: cute.core.ThrMma alias" in md
    assert md.count("<details>") == md.count("</details>")


def test_markdown_escapes_kernel_names_paths_and_messages(comparison):
    md = render_markdown(comparison)
    assert "<script>" not in md and "<img" not in md and "<b>" not in md
    assert "Evil&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "&lt;img src=x onerror=alert(2)&gt;" in md
    assert "ptxas detected register spills \\| &lt;b&gt;bold&lt;/b&gt;" in md
    # no raw HTML tags but the ones the report itself uses
    tags = set(re.findall(r"</?([a-zA-Z]+)", md))
    assert tags <= {"details", "summary", "sub", "code"}


def test_markdown_helpers_escape():
    assert md_text("a_b*c|d<e>&`") == "a\\_b\\*c\\|d&lt;e&gt;&amp;\\`"
    assert md_code("flash_attn/x.py:3") == "`flash_attn/x.py:3`"
    assert md_code("a|b") == "`a\\|b`"
    assert md_code("if a <= b:") == "<code>if a &lt;= b:</code>"
    assert md_code("`x`") == "<code>\\`x\\`</code>"


def test_markdown_leaves_out_what_is_missing():
    c = make_comparison(bench=False, crosscheck=False)
    for k in c["kernels"]:
        for s in "ab":
            k[s].pop("pressure")
            k[s]["remarks"] = []
        k.pop("alignment", None)
    md = render_markdown(c)
    for absent in (
        "#### Benchmark",
        "#### ptxas cross-check",
        "**Compiler remarks**",
        "Peak live registers",
        "Aligned under",
    ):
        assert absent not in md


def test_markdown_minimal_and_failed_side():
    c = make_comparison(bench=False, crosscheck=False)
    c["sides"]["b"]["error"] = "Installing CuTe DSL 9.9.9 failed: no such version. Check the version."
    c["kernels"] = [c["kernels"][0] | {"b": None}]
    for key in ("timing", "profile", "analysis_seconds", "lineinfo"):
        c.pop(key)
    md = render_markdown(c)
    assert md.startswith("### cutediff: side B (4.8.0) failed: Installing CuTe DSL 9.9.9 failed")
    assert "> **Side B (4.8.0) failed:**" in md
    assert "FlashAttentionForwardSm100 is built only by 4.5.1" in md
    html = render_html(c)
    assert "failed:" in html


def test_markdown_unchanged_kernel_sentence():
    c = make_comparison(bench=False, crosscheck=False)
    k = c["kernels"][0]
    k["b"] = copy.deepcopy(k["a"])
    assert (
        M.kernel_sentence(c, k)
        == "FlashAttentionForwardSm100: same resources on 4.5.1 and 4.8.0; instruction mix unchanged"
    )


def test_markdown_changed_mix_sentence():
    c = make_comparison(bench=False, crosscheck=False)
    k = c["kernels"][0]
    k["b"]["opcodes"]["MUFU"] = 300
    k["b"]["instruction_classes"]["mufu"] = 300
    assert "instruction mix changed (MUFU (SFU) -98, Moves +96)" in M.kernel_sentence(c, k)


def test_spill_source_text_from_the_sources_map(tmp_path, comparison):
    src = tmp_path / "softmax.py"
    src.write_text("\n" * 266 + "acc_S_row[i] = fma(acc)  # line 267\n")
    comparison["kernels"][0]["b"]["sources"] = {"flash_attn/cute/softmax.py": str(src)}
    md = render_markdown(comparison)
    assert "`acc_S_row[i] = fma(acc)  # line 267`" in md


def test_source_text_is_escaped_in_both_formats(tmp_path, comparison):
    src = tmp_path / "evil.py"
    src.write_text(EVIL_SOURCE + "\n")
    comparison["kernels"][1]["b"]["sources"] = {EVIL_FILE: str(src)}
    md, html = render_markdown(comparison), render_html(comparison)
    assert "alert(3)" in md and "alert(3)" in html
    assert "<img" not in md and "<img" not in html
    assert "&lt;img src=x onerror=alert(3)&gt; &amp; more" in html


# ---------------------------------------------------------------- HTML


def test_html_escapes_everything(comparison):
    html = render_html(comparison)
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert "Evil&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "flash_attn/&lt;img src=x onerror=alert(2)&gt;.py:1" in html
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


def test_html_is_self_contained(comparison):
    html = render_html(comparison)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert (
        "<link" not in html and "@import" not in html and "src=" not in html.replace("onerror", "").replace("src=x", "")
    )
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_html_draws_the_plots(comparison):
    html = render_html(comparison)
    assert html.count("<svg") == 5  # classes + pressure per kernel (2 kernels), bench distributions
    assert "Instruction classes of FlashAttentionForwardSm100, A vs B" in html
    assert "Register pressure along FlashAttentionForwardSm100" in html
    assert "Benchmark sample distributions" in html
    assert html.count("<polyline") == 4 and "<circle" in html
    assert "Ticks under the axis: the 3 spill instructions of B." in html


def test_html_without_bench_or_pressure():
    c = make_comparison(bench=False, crosscheck=False)
    for k in c["kernels"]:
        for s in "ab":
            k[s]["pressure"] = {}
    html = render_html(c)
    assert html.count("<svg") == 2 and "Benchmark" not in html and "Register pressure" not in html


def test_svg_helpers():
    assert nice_ticks(0, 1335, 5) == [0, 500, 1000, 1500]
    assert nice_ticks(0.97, 1.12, 4)[0] <= 0.97 and nice_ticks(0.97, 1.12, 4)[-1] >= 1.12
    bars = grouped_hbars(["x<y"], [("A", [1], "#000"), ("B", [2], "#111")], title="t&t")
    assert "x&lt;y" in bars and "t&amp;t" in bars and bars.count("<rect") >= 4
    plot = line_plot([("A", [1, 2, 3], "#000")], title="p", y_label="y", x_label="x", marks=[(0.5, "#f00", "<m>")])
    assert "<polyline" in plot and "&lt;m&gt;" in plot


# ---------------------------------------------------------------- JSON


def test_json_matches_the_schema(comparison):
    text = render_json(comparison)
    data = json.loads(text)
    validate_comparison(data)
    import jsonschema

    schema = json.loads((Path(M.__file__).parents[2] / "data" / "comparison.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_json_schema_refuses_bad_comparisons(comparison):
    bad = copy.deepcopy(comparison)
    bad["kernels"][0]["b"]["registers"] = "many"
    with pytest.raises(CutediffError, match=r"comparison\.kernels\[0\]\.b"):
        validate_comparison(bad)
    old = copy.deepcopy(comparison)
    old["schema"] = "cutediff.comparison/1"  # the writer always writes /2, whatever was read
    assert json.loads(render_json(old))["schema"] == "cutediff.comparison/2"


def test_reports_rebuilt_from_json_are_identical(tmp_path, comparison):
    path = tmp_path / "c.json"
    write_report(comparison, path)
    loaded = load_json(path)
    assert "_base" not in json.loads(path.read_text())
    assert render_markdown(loaded) == render_markdown(comparison)
    assert render_html(loaded) == render_html(comparison)
    assert render_json(loaded) == render_json(comparison)


def test_write_report_picks_the_format(tmp_path, comparison):
    assert write_report(comparison, tmp_path / "r.md").read_text().startswith("### cutediff:")
    assert write_report(comparison, tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert write_report(comparison, tmp_path / "r.txt", "md").read_text().startswith("### cutediff:")
    with pytest.raises(CutediffError, match="Unknown report format"):
        write_report(comparison, tmp_path / "r.pdf", "pdf")


def test_repro_commands_for_artifact_diffs():
    c = make_comparison(bench=False, crosscheck=False)
    for s, p in (("a", "samples/raw/x-4.5.1"), ("b", "samples/raw/x-4.8.0")):
        c["sides"][s] |= {"dsl": p, "label": p, "pins": [], "versions": {}}
    c["command"] = ""
    c["recipe"] = {"name": "artifacts", "params": {}}
    md = render_markdown(c)
    assert "pip install" not in md
    assert "cutediff diff samples/raw/x-4.5.1 samples/raw/x-4.8.0" in md
    assert "spills on x-4.8.0" in md.splitlines()[0]


def test_repro_command_rebuilt_when_missing():
    c = make_comparison(bench=False, crosscheck=False)
    c["command"] = ""
    cmd = M.cutediff_command(c)
    assert cmd.startswith("cutediff compare 4.5.1,flash-attn-4==4.0.0b16,quack-kernels==0.4.1 4.8.0,")
    assert "--recipe fa4-fwd --arch sm_103a --num-sms 148" in cmd and "--param window=128,0" in cmd


def test_mix_sentence_needs_the_tensor_core_math_to_call_the_mix_unchanged():
    c = make_comparison(bench=False, crosscheck=False)
    k = c["kernels"][0]
    for s in "ab":  # a kernel without MMAs (like FA4's backward preprocess): MUFU alone says little
        k[s]["opcodes"] = {"MUFU": 1}
    k["b"]["instruction_classes"]["integer"] = 1000
    assert M.mix_sentence(k) == "instruction mix changed (Integer -335, Moves +96)"
    html = render_html(c)
    assert '<a href="#kernel-1">Evil&lt;script&gt;' in html and 'id="kernel-1"' in html
