"""Issue 20 without a GPU: bench hooks, the per-kernel table, the ncu CSV parser against a real
recorded output, verdict sentences, the remote route and every "cannot" sentence.

There is no GPU here, so the end-to-end runner tests use stand-ins for what only a GPU machine
has: an ``nvidia-smi`` script, a ``torch`` whose CUDA events, profiler and "kernels" follow a
simulated clock (each fake launch advances it by its duration), and an ``ncu`` script that
replays the recorded H200 output (benchmarks/results/h200/ncu/, captured with the real ncu
2025.3.1 on an H200 by the command in benchmarks/gpu_h200_profile.sh). The real bench worker and
runner run against them unchanged.
"""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from cutediff_tui.core.bench import ncu as N
from cutediff_tui.core.bench.explain import explain, fmt_rate, sentence
from cutediff_tui.core.bench.kernels import kernel_name, merge_rounds, per_call_times
from cutediff_tui.core.bench.runner import BenchConfig, check_gpu, check_hook, kernel_rows, run_bench
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.recipes import BUILTINS, get_recipe

ROOT = Path(__file__).resolve().parents[2]


def is_sentence(text: str) -> bool:
    """One line ending in a full stop, short enough to read (as tests/faults/helpers.py checks)."""
    return "\n" not in text and text.rstrip().endswith((".", ")")) and 20 < len(text) < 900


NCU_DIR = ROOT / "benchmarks" / "results" / "h200" / "ncu"
FA4_FWD = (
    "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm90FlashAttentionForwardSm90_object_at__tensorptrbf16gmemalign16o_0"
)


# ---------------------------------------------------------------- hooks


def test_builtin_recipes_declare_bench_hooks():
    assert BUILTINS["fa4-fwdbwd"].bench == "cutediff_tui.core.recipes.fa4:fa4_fwdbwd_bench"
    assert BUILTINS["quack-gemm"].bench.endswith("quack_kernels:gemm_bench")
    import cutediff_tui.core.recipes.fa4 as fa4
    import cutediff_tui.core.recipes.quack_kernels as qk

    for r in BUILTINS.values():
        module, fn = r.bench.split(":")
        assert callable(getattr(fa4 if module.endswith("fa4") else qk, fn)), r.bench


def test_sample_recipes_have_bench_hooks():
    for name in ("elementwise_add.py", "row_sum.py", "local_array.py"):
        r = get_recipe(str(ROOT / "samples" / "recipes" / name))
        assert r.bench.endswith(".py:bench") and Path(r.bench.rpartition(":")[0]).is_file(), r


def test_declared_hook_and_missing_hook(tmp_path):
    f = tmp_path / "r.py"
    f.write_text(
        "from cutediff_tui.core.recipes import recipe\n\n"
        "@recipe(bench='timed')\ndef k(ctx):\n    pass\n\n"
        "def timed(ctx):\n    return lambda: None\n"
    )
    assert get_recipe(str(f)).bench == f"{f.resolve()}:timed"
    f.write_text("from cutediff_tui.core.recipes import recipe\n\n@recipe(bench='nope')\ndef k(ctx):\n    pass\n")
    with pytest.raises(CutediffError) as e:
        get_recipe(str(f))
    assert "declares bench='nope' for k, but defines no function of that name" in e.value.sentence()
    f.write_text("from cutediff_tui.core.recipes import recipe\n\n@recipe\ndef k(ctx):\n    pass\n")
    with pytest.raises(CutediffError) as e:
        check_hook(get_recipe(str(f)))
    s = e.value.sentence()
    assert "has no bench hook, so cutediff cannot run its kernels on the GPU" in s and is_sentence(s)


# ---------------------------------------------------------------- per-kernel times


def test_kernel_names_match_the_compile_side():
    assert kernel_name(FA4_FWD) == "FlashAttentionForwardSm90"
    # the @cute.kernel function, as the compile side names it (issue 37), not the launcher
    assert kernel_name("kernel_cutlass_gather_kernel_tensorptrf32_0", ["launch_gather"]) == "gather_kernel"
    assert kernel_name("kernel_cutlass__0", ["launch_gather"]) == "launch_gather"  # the symbol names nothing
    assert kernel_name("void at::native::reduce_kernel<512, 1>(int)") == "at::native::reduce_kernel<512, 1>"


def test_per_call_times_sum_launches_per_call():
    ev = []
    for call in range(3):
        t = call * 100.0
        ev += [(FA4_FWD, t, t + 10.0), ("memset", t + 11, t + 12), ("bwd", t + 20, t + 25), ("bwd", t + 30, t + 36)]
    out = per_call_times(ev, 3)
    assert out["FlashAttentionForwardSm90"] == {"ms": [0.01, 0.01, 0.01], "launches": 1}
    assert out["bwd"]["launches"] == 2 and out["bwd"]["ms"] == pytest.approx([0.011] * 3)
    uneven = per_call_times([("k", 0, 3), ("k", 5, 8), ("k", 9, 12)], 2)
    assert uneven["k"] == {"ms": [pytest.approx(0.0045)], "launches": 1.5}
    merged = merge_rounds([out, out])
    assert len(merged["bwd"]["ms"]) == 6 and merged["bwd"]["rounds"] == [3, 3]
    late = merge_rounds([{"k": {"ms": [1.0], "launches": 1}}, out])  # kernels missing in a round keep 0
    assert late["bwd"]["rounds"] == [0, 3] and late["k"]["rounds"] == [1, 0]


def test_profiled_warm_up_calls_are_dropped():
    from cutediff_tui.core.bench.kernels import last_calls

    ev = [("k", t * 10.0, t * 10.0 + (9.0 if t < 2 else 5.0)) for t in range(5)]  # 2 slow warm-up calls
    out = last_calls(per_call_times(ev, 5), 3)
    assert out["k"] == {"ms": [0.005, 0.005, 0.005], "launches": 1}
    odd = last_calls({"m": {"ms": [0.1], "launches": 1.5}}, 3)
    assert odd["m"]["ms"] == [0.1]  # one mean sample stays


def test_kernel_rows_verdicts_and_one_sided_kernels():
    a = {"k1": {"ms": [1.0 + i * 1e-4 for i in range(40)], "launches": 1}, "only_a": {"ms": [0.5], "launches": 1}}
    b = {"k1": {"ms": [1.1 + i * 1e-4 for i in range(40)], "launches": 1}, "only_b": {"ms": [0.2], "launches": 2}}
    rows = {r["kernel"]: r for r in kernel_rows(a, b, 0.01)}
    assert rows["k1"]["verdict"] == "SLOWER" and 1.09 < rows["k1"]["ratio"] < 1.11
    assert rows["only_a"]["verdict"] == "ONLY A" and rows["only_b"]["b"]["median_ms"] == 0.2


# ---------------------------------------------------------------- ncu, against the recorded real output


def test_ncu_raw_csv_parser_on_recorded_h200_output():
    launches = N.parse_raw_csv((NCU_DIR / "ncu_raw.csv").read_text())
    assert len(launches) == 23  # ncu's ==PROF==/==WARNING== lines and the units row are skipped
    spill = [x for x in launches if x["kernel"] == "spill_dyn"]
    assert len(spill) == 4 and spill[0]["registers"] == 29 and spill[0]["duration_ns"] == 3072
    assert spill[0]["stalls"]["long_scoreboard"] == 9.86 and len(spill[0]["stalls"]) == 19
    first = launches[0]
    assert first["duration_ns"] == 181152  # "181,152" with ncu's thousands separator
    s = N.summarize_launches(launches)["spill_dyn"]
    assert s["launches"] == 4 and s["local_bytes"] == 0 and s["local_gbps"] == 0
    assert s["top_stalls"][0][0] == "long_scoreboard"


def test_ncu_source_page_parser_on_recorded_h200_output():
    listings = N.parse_source_csv((NCU_DIR / "ncu_source.csv").read_text())
    assert set(listings) == {"spill_dyn", "spill_none"}
    first = listings["spill_dyn"][0]
    assert first["sass"] == "LDC R1, c[0x0][0x28]" and first["executed"] == 128
    assert N.spill_counts(listings["spill_dyn"])["sites"] == []  # nvcc kept this array in registers


def test_spill_counts_pick_local_memory_instructions():
    lst = [
        {"address": "0x0", "sass": "STL [R1+0x10], R4", "executed": 256},
        {"address": "0x10", "sass": "@P0 LDL.64 R2, [R1+0x8]", "executed": 100},
        {"address": "0x20", "sass": "LDG.E R2, desc[UR4][R2.64]", "executed": 7},
        {"address": "0x30", "sass": "LDS R2, [R3]", "executed": 7},
    ]
    c = N.spill_counts(lst)
    assert (c["ldl_executed"], c["stl_executed"], len(c["sites"])) == (100, 256, 2)


def test_ncu_cannot_sentences():
    assert "ERR_NVGPUCTRPERM" in N.cannot_reason("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert "LibraryNotLoaded" in N.cannot_reason("Failed to initialize the profiler: LibraryNotLoaded")
    assert N.cannot_reason("==WARNING== No kernels were profiled.") == (
        "no kernel matched the filter, so nothing was profiled"
    )
    assert N.cannot_reason("all fine") is None


def test_ab_rows_with_deltas():
    a = {"k": {"duration_ns": 100.0, "local_load_bytes": 0.0, "local_gbps": 0.0, "top_stalls": [["wait", 1.0]]}}
    b = {"k": {"duration_ns": 110.0, "local_load_bytes": 64.0, "local_gbps": 0.5, "top_stalls": []}}
    rows = {r["metric"]: r for r in N.ab_rows(a, b)}
    assert rows["duration_ns"]["delta"] == 10 and rows["local_load_bytes"]["delta"] == 64
    assert rows["top_stalls"]["a"] == [["wait", 1.0]]


# ---------------------------------------------------------------- verdict sentences


def test_verdict_sentences_tie_slowdowns_to_local_traffic():
    slower = {"ratio": 1.031, "ci_low": 1.024, "ci_high": 1.039, "verdict": "SLOWER"}
    s = sentence("FlashAttentionForwardSm100", slower, (0.0, 1.2))
    assert s == (
        "FlashAttentionForwardSm100: +3.1% [+2.4%, +3.9%], SLOWER, local traffic 0 → 1.2 GB/s: "
        "the slowdown comes with more spill traffic on side B."
    )
    same = {"ratio": 1.0, "ci_low": 0.998, "ci_high": 1.002, "verdict": "SAME"}
    assert "side B spills more without costing time here" in sentence("k", same, (0.0, 0.004))
    assert sentence("k", same, (0.0, 0.0)) is None
    assert "not explained by spill traffic" in sentence("k", slower, (0.0, 0.0))
    assert fmt_rate(0.0042) == "4.2 MB/s"
    result = {
        "shapes": [{"shape": {"label": "default"}, "kernels": [dict(slower, kernel="k")], **same}],
        "profile": {
            "sides": {"a": {"kernels": {"k": {"local_gbps": 0.0}}}, "b": {"kernels": {"k": {"local_gbps": 2.0}}}}
        },
    }
    assert explain(result) == [
        "k: +3.1% [+2.4%, +3.9%], SLOWER, local traffic 0 → 2.0 GB/s: the slowdown comes with more spill traffic on side B."
    ]


# ---------------------------------------------------------------- the runner end to end, on stand-ins

STANDIN_TORCH = '''
"""Stand-in torch: a simulated GPU clock; launches advance it; events and the profiler read it."""
import types

bfloat16, float16, float32, int32, uint8 = "bf16", "fp16", "fp32", "i32", "u8"
CLOCK = [0.0]  # microseconds
LAUNCHES = []  # (name, start_us, end_us)


def launch(name, us):
    LAUNCHES.append((name, CLOCK[0], CLOCK[0] + us))
    CLOCK[0] += us + 1.0


class Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = CLOCK[0]

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) / 1000.0


class _Props:
    L2_cache_size = 1 << 20


class _Profiler:
    @staticmethod
    def start():
        pass

    @staticmethod
    def stop():
        pass


class cuda:
    Event = Event
    profiler = _Profiler

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def get_device_name(index=0):
        return "stand-in H200"

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_properties(index):
        return _Props()


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, seed):
        return self
'''

STANDIN_PROFILER = """
import types

import torch


class ProfilerActivity:
    CUDA = "cuda"


class _Ev:
    def __init__(self, name, start, end):
        self.name = name
        self.time_range = types.SimpleNamespace(start=start, end=end)
        self.device_type = types.SimpleNamespace(name="CUDA")


class profile:
    def __init__(self, activities=()):
        pass

    def __enter__(self):
        self.first = len(torch.LAUNCHES)
        return self

    def __exit__(self, *exc):
        self.last = len(torch.LAUNCHES)

    def events(self):
        return [_Ev(*x) for x in torch.LAUNCHES[self.first : self.last]]
"""

HOOK_RECIPE = """
from cutediff_tui.core.recipes import Param, recipe

FWD = "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm90FlashAttentionForwardSm90_object_at__t_0"
BWD = "kernel_cutlass_kernel_flash_attncuteflash_bwd_sm90FlashAttentionBackwardSm90_object_at__t_0"


@recipe(params=[Param("slow_bwd", "bool", False)], archs=(90,))
def pair(ctx):
    pass


def bench(ctx):
    import torch

    bwd_us = 130.0 if ctx.params["slow_bwd"] else 100.0

    def call():
        torch.launch(FWD, 50.0)
        torch.launch(BWD, bwd_us)

    return call
"""


def _exe(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def standin_env(folder: Path):
    site = folder / "site"
    for pkg, body in {
        "torch": STANDIN_TORCH,
        "torch/profiler": STANDIN_PROFILER,
        "cutlass": "",
        "cutlass/cute": "",
    }.items():
        (site / pkg).mkdir(parents=True, exist_ok=True)
        (site / pkg / "__init__.py").write_text(textwrap.dedent(body))
    return SimpleNamespace(site=site, spec=SimpleNamespace(local_paths=list))


@pytest.fixture
def gpu_path(tmp_path, monkeypatch):
    """PATH with a stand-in nvidia-smi (an H200) and a stand-in ncu replaying the recorded output."""
    bin_ = tmp_path / "bin"
    _exe(
        bin_ / "nvidia-smi",
        'case "$*" in\n  *compute_cap*) echo "NVIDIA H200, 9.0" ;;\n'
        '  *) echo "NVIDIA H200, 580.159.04, 1980, 3201, 35, 120.50" ;;\nesac\n',
    )
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return bin_


def _ncu_replay(
    bin_: Path, *, fail: str | None = None, raw: str = "ncu_raw.csv", source: str = "ncu_source.csv"
) -> None:
    if fail:
        _exe(bin_ / "ncu", f'echo "{fail}" >&2\nexit 1\n')
        return
    # write the recorded raw CSV to --log-file; the source pass and its export get the recorded page
    _exe(
        bin_ / "ncu",
        'log=""; out=""; prev=""\nfor a in "$@"; do\n'
        '  [ "$prev" = "--log-file" ] && log="$a"; [ "$prev" = "-o" ] && out="$a"; prev="$a"\ndone\n'
        f'if [ -n "$log" ]; then cp "{NCU_DIR / raw}" "$log"; exit 0; fi\n'
        'if [ -n "$out" ]; then : > "$out.ncu-rep"; exit 0; fi\n'
        f'cat "{NCU_DIR / source}"\n',
    )


def _recipe(tmp_path: Path):
    f = tmp_path / "pair.py"
    f.write_text(HOOK_RECIPE)
    return get_recipe(str(f))


def test_runner_gives_per_kernel_rows_host_time_and_verdicts(tmp_path, gpu_path):
    recipe = _recipe(tmp_path)
    envs = (standin_env(tmp_path / "a"), standin_env(tmp_path / "b"))
    cfg = BenchConfig(
        rounds=2, warmup=1, iters=6, entry=recipe.bench, params={"slow_bwd": False},
        side_params=({}, {"slow_bwd": True}), recipe=recipe.name, mode="call", min_round_ms=0,
    )  # fmt: skip
    events: list[dict] = []
    result = run_bench(envs, cfg, events.append, recipe=recipe)
    (case,) = result["shapes"]
    assert case["shape"]["label"] == "defaults vs slow_bwd=True"
    assert case["verdict"] == "SLOWER" and case["a"]["n"] == 12 and case["host_ms"]["a"] >= 0
    rows = {k["kernel"]: k for k in case["kernels"]}
    assert set(rows) == {"FlashAttentionForwardSm90", "FlashAttentionBackwardSm90"}
    assert rows["FlashAttentionForwardSm90"]["verdict"] == "SAME"
    assert rows["FlashAttentionBackwardSm90"]["verdict"] == "SLOWER"
    assert rows["FlashAttentionBackwardSm90"]["ratio"] == pytest.approx(1.3)
    assert rows["FlashAttentionBackwardSm90"]["a"]["n"] == 12  # one sample per profiled call
    assert result["verdicts"] == ["FlashAttentionBackwardSm90: +30.0% [+30.0%, +30.0%], SLOWER."]
    assert sum(e["event"] == "kernels" for e in events) == 4  # each side, each round
    assert "profile" not in result


def test_short_rounds_are_repeated_up_to_the_minimum_round_time(tmp_path, gpu_path):
    """A stand-in call takes 152 us on side A and 182 us on side B (simulated clock): 6 calls make
    a 0.9 / 1.1 ms round, so a 10 ms minimum repeats them 11 / 10 times, timing and per-kernel."""
    recipe = _recipe(tmp_path)
    envs = (standin_env(tmp_path / "a"), standin_env(tmp_path / "b"))
    cfg = BenchConfig(
        rounds=2, warmup=1, iters=6, entry=recipe.bench, params={"slow_bwd": False},
        side_params=({}, {"slow_bwd": True}), recipe=recipe.name, mode="call", min_round_ms=10,
    )  # fmt: skip
    (case,) = run_bench(envs, cfg, recipe=recipe)["shapes"]
    assert (case["a"]["n"], case["b"]["n"]) == (2 * 66, 2 * 60)
    assert case["round_sizes"] == {"a": [66, 66], "b": [60, 60]}
    assert case["verdict"] == "SLOWER"
    rows = {k["kernel"]: k for k in case["kernels"]}
    assert rows["FlashAttentionBackwardSm90"]["a"]["n"] == 132 and rows["FlashAttentionBackwardSm90"]["b"]["n"] == 120


def test_profile_reads_ncu_on_both_sides(tmp_path, gpu_path):
    _ncu_replay(gpu_path)
    recipe = _recipe(tmp_path)
    envs = (standin_env(tmp_path / "a"), standin_env(tmp_path / "b"))
    cfg = BenchConfig(
        rounds=1, warmup=0, iters=2, entry=recipe.bench, params={"slow_bwd": False}, recipe=recipe.name, mode="call", kernels=False,
        profile=True, profile_dir=str(tmp_path / "keep"),
    )  # fmt: skip
    prof = run_bench(envs, cfg, recipe=recipe)["profile"]
    assert "error" not in prof, prof
    assert prof["sides"]["a"]["kernels"]["spill_dyn"]["registers"] == 29
    rows = [r for r in prof["rows"] if r["kernel"] == "spill_dyn" and r["metric"] == "local_load_bytes"]
    assert rows == [{"kernel": "spill_dyn", "metric": "local_load_bytes", "a": 0.0, "b": 0.0, "delta": 0.0}]
    assert prof["sides"]["b"]["spills"]["spill_dyn"]["sites"] == []
    assert sorted(p.name for p in (tmp_path / "keep").iterdir()) == ["ncu-a.csv", "ncu-b.csv", "src-a.csv", "src-b.csv"]


def test_profile_when_ncu_cannot_read_counters_or_is_absent(tmp_path, gpu_path, monkeypatch):
    _ncu_replay(
        gpu_path,
        fail="==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters",
    )
    recipe = _recipe(tmp_path)
    envs = (standin_env(tmp_path / "a"), standin_env(tmp_path / "b"))
    cfg = BenchConfig(
        rounds=1,
        warmup=0,
        iters=2,
        entry=recipe.bench,
        params={"slow_bwd": False},
        recipe=recipe.name,
        mode="call",
        profile=True,
    )
    result = run_bench(envs, cfg, recipe=recipe)
    err = result["profile"]["error"]
    assert err.startswith("Side A: Nsight Compute gave no counters (this user may not read the GPU's performance")
    assert result["shapes"][0]["kernels"]  # the rest of the bench ran
    from cutediff_tui.core.bench.profile import profile_sides

    monkeypatch.setenv("PATH", str(gpu_path.parent / "empty"))
    monkeypatch.setattr(N, "find_ncu", lambda: None)
    s = profile_sides(envs, ({"side": "a"}, {"side": "b"}), None, {})["error"]
    assert s.startswith("Nsight Compute (ncu) is not on PATH, so --profile has no counters") and is_sentence(s)


def test_local_gpu_that_cannot_run_the_recipe(tmp_path, monkeypatch):
    bin_ = tmp_path / "bin"
    _exe(bin_ / "nvidia-smi", 'case "$*" in\n  *compute_cap*) echo "NVIDIA A100-SXM4-80GB, 8.0" ;;\nesac\n')
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(CutediffError) as e:
        check_gpu(_recipe(tmp_path))
    s = e.value.sentence()
    assert (
        s.startswith("The local GPU (NVIDIA A100-SXM4-80GB, sm_80) cannot run recipe ")
        and "which has kernels for sm_90 only" in s
    )
    assert is_sentence(s)


def test_ncu_parsers_on_recorded_local_memory_traffic():
    """A kernel that keeps a register array in local memory (spill_dyn) and one that does not,
    profiled on the H200 with exactly the flags cutediff passes (ncu_command, source_command)."""
    s = N.summarize_launches(N.parse_raw_csv((NCU_DIR / "ncu_local_raw.csv").read_text()))
    assert s["spill_dyn"]["launches"] == 3  # --profile-from-start off: only the calls between start/stop
    assert s["spill_dyn"]["local_load_bytes"] == 63590400 and s["spill_dyn"]["local_store_bytes"] == 33554432
    assert s["spill_none"]["local_bytes"] == 0 and s["spill_none"]["local_gbps"] == 0
    assert s["spill_dyn"]["top_stalls"][0][0] == "long_scoreboard"
    listings = N.parse_source_csv((NCU_DIR / "ncu_local_source.csv").read_text())
    dyn, none = N.spill_counts(listings["spill_dyn"]), N.spill_counts(listings["spill_none"])
    assert (dyn["ldl_executed"], dyn["stl_executed"], len(dyn["sites"])) == (65536, 65536, 21)
    assert dyn["sites"][0]["sass"].startswith("STL.128 [R1]")
    assert (none["ldl_executed"], none["stl_executed"], none["sites"]) == (0, 0, [])
    rows = {(r["kernel"], r["metric"]): r for r in N.ab_rows({"spill_dyn": s["spill_none"]}, s)}
    assert rows[("spill_dyn", "local_store_bytes")]["delta"] == 33554432


def test_reports_show_per_kernel_rows_ncu_rows_and_verdicts():
    import json

    from cutediff_tui.core.report.markdown import render_markdown
    from cutediff_tui.samples import bundled_sample_dir

    comparison = json.loads((bundled_sample_dir() / "comparison.json").read_text())
    bench = json.loads((ROOT / "benchmarks" / "results" / "h200" / "run3" / "bench.json").read_text())
    row = bench["shapes"][0]
    slower = {"ratio": 1.031, "ci_low": 1.024, "ci_high": 1.039, "verdict": "SLOWER"}
    row["kernels"] = [{"kernel": "FlashAttentionForwardSm100", "a": row["a"], "b": row["b"], **slower}]
    a = {"local_gbps": 0.0, "registers": 128.0, "top_stalls": [["wait", 1.5]]}
    b = {"local_gbps": 1.2, "registers": 128.0, "top_stalls": [["long_scoreboard", 3.25]]}
    bench["profile"] = {"rows": N.ab_rows({"FlashAttentionForwardSm100": a}, {"FlashAttentionForwardSm100": b})}
    bench["profile"]["sides"] = {
        "a": {"kernels": {"FlashAttentionForwardSm100": a}},
        "b": {"kernels": {"FlashAttentionForwardSm100": b}},
    }
    bench["verdicts"] = explain(bench)
    comparison["bench"] = bench
    md = render_markdown(comparison)
    assert "Per kernel (GPU time per call, CUPTI):" in md and "| 8192x32h/4 | FlashAttentionForwardSm100 |" in md
    assert "| FlashAttentionForwardSm100 | local traffic | 0 | 1.2 GB/s |" in md
    assert "| FlashAttentionForwardSm100 | dominant stalls | wait 1.5 | long\\_scoreboard 3.25 |" in md
    assert "local traffic 0 → 1.2 GB/s: the slowdown comes with more spill traffic on side B." in md
    from cutediff_tui.core.report.html import render_html

    page = render_html(comparison)
    assert "<h3>Per kernel (GPU time per call, CUPTI)</h3>" in page and "<h3>Nsight Compute" in page
    assert "1.2 GB/s" in page and "long_scoreboard 3.25" in page and "the slowdown comes with more spill" in page


def test_cli_tables_show_kernels_ncu_rows_spill_counts_and_verdicts(tmp_path, gpu_path):
    from rich.console import Console

    from cutediff_tui.render_bench import bench_tables

    _ncu_replay(gpu_path, raw="ncu_local_raw.csv", source="ncu_local_source.csv")
    recipe = _recipe(tmp_path)
    envs = (standin_env(tmp_path / "a"), standin_env(tmp_path / "b"))
    cfg = BenchConfig(
        rounds=2, warmup=0, iters=4, entry=recipe.bench, params={"slow_bwd": False},
        side_params=({}, {"slow_bwd": True}), recipe=recipe.name, mode="call", profile=True,
    )  # fmt: skip
    result = run_bench(envs, cfg, recipe=recipe)
    result["sides"] = {"a": {"label": "4.8.0"}, "b": {"label": "4.8.0"}}
    console = Console(record=True, width=200)
    for renderable in bench_tables(result):
        console.print(renderable)
    text = console.export_text()
    assert "pair on stand-in" not in text and "on NVIDIA H200: A 4.8.0 vs B 4.8.0" in text
    assert "per kernel (GPU time per call, CUPTI)" in text and "FlashAttentionBackwardSm90" in text
    assert "Nsight Compute (--clock-control none)" in text and "local load bytes" in text
    assert "63,590,400" in text and "side A LDL/STL executed" in text and "65,536/65,536" in text
    assert "• FlashAttentionBackwardSm90: +30.0%" in text
