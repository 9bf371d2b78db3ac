"""Warm workers for real (DSL 4.8.0, the sample recipe): a local sweep builds its cells on the
warm worker of their toolchain, and a compare disassembles each side as soon as it is built.

Slow (real compiles). Builds go to a cache of this test's own (environments borrowed from the
session cache), so every cell compiles.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutediff_tui.core.executors import LocalExecutor
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.probe import Probe
from cutediff_tui.core.recipes import coerce_params, get_recipe

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "recipes" / "elementwise_add.py"
PIN_LIST = ("flash-attn-4==4.0.0b16", "quack-kernels==0.4.1")


@pytest.fixture
def own_cache(tmp_path, compile_cache, monkeypatch) -> Path:
    """A fresh build cache whose envs/ and tools/ are the session cache's."""
    from cutediff_tui.core.toolchain import create_env, parse_side

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    for version in ("4.5.1", "4.8.0"):
        create_env(parse_side(version, list(PIN_LIST)))  # made once per session cache
    cache = tmp_path / "cache"
    cache.mkdir()
    for sub in ("envs", "tools"):
        (compile_cache / sub).mkdir(parents=True, exist_ok=True)
        (cache / sub).symlink_to(compile_cache / sub, target_is_directory=True)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    return cache


def lines(stamps: list[tuple[str, float, dict]]) -> list[str]:
    """Each stamp as ``message side`` (the side, when the stamp names one)."""
    return [f"{msg} {facts.get('side', '')}".strip() for msg, _, facts in stamps]


def _probes(tmp_path: Path, values: tuple[int, ...]) -> list[Probe]:
    rec = tmp_path / "sweep_add.py"
    rec.write_text(SAMPLE.read_text())
    recipe = get_recipe(str(rec))
    return [
        Probe(
            "4.8.0",
            recipe,
            coerce_params(recipe, {"vec": v}),
            resolve_profile(arch="sm_90a"),
            pins=PIN_LIST,
            axis={"vec": v},
        )
        for v in values
    ]


def _manifest(cache: Path, cell: dict) -> dict:
    return json.loads((cache / "artifacts" / cell["build_key"] / "manifest.json").read_text())


def test_a_local_sweep_builds_every_cell_on_the_warm_worker_of_its_toolchain(own_cache, tmp_path, monkeypatch):
    probes = _probes(tmp_path, (2, 4, 8))
    with LocalExecutor(2) as ex:
        assert ex.warm
        cells = [res for _p, res in ex.map_unordered(probes)]
    assert [c["status"] for c in cells] == ["ok"] * 3, [c.get("why") for c in cells]
    assert ex.warm_started == 1  # one toolchain: its DSL imported once, for all three cells
    assert all(_manifest(own_cache, c)["warm"] for c in cells)
    figures = {c["axis"]["vec"]: c["kernels"][0]["figures"] for c in cells}
    assert figures[8]["instructions"] > figures[2]["instructions"]  # the cells are really different

    # CUTEDIFF_WARM=0: one-shot workers, as on the Dask executor (same figures)
    monkeypatch.setenv("CUTEDIFF_WARM", "0")
    (tmp_path / "cold").mkdir()
    cold = _probes(tmp_path / "cold", (4,))
    with LocalExecutor(2) as ex:
        assert not ex.warm
        (res,) = [res for _p, res in ex.map_unordered(cold)]
    assert res["status"] == "ok" and ex.warm_started == 0
    assert _manifest(own_cache, res)["warm"] is False
    same = {k: v for k, v in res["kernels"][0]["figures"].items() if k != "compile_seconds"}
    assert same == {k: v for k, v in figures[4].items() if k != "compile_seconds"}


def test_a_compare_disassembles_and_measures_each_side_as_soon_as_it_is_built(own_cache, tmp_path, stamps):
    from cutediff_tui.core import warm
    from cutediff_tui.core.compare import run_compare
    from cutediff_tui.core.options import compare_options

    rec = tmp_path / "pair_add.py"
    rec.write_text(SAMPLE.read_text())
    opts = compare_options("4.5.1", "4.8.0", {"kernel": str(rec), "arch": "sm_90a", "with_": PIN_LIST})
    with warm.session():
        comparison = run_compare(opts)
    assert not any(comparison["sides"][s]["error"] for s in "ab")
    stamps = lines(stamps)
    # both sides' tools ran before the analysis began, each right after its own build
    built = stamps.index("compare: both sides built")
    assert stamps.count("analysis: side disassembled") == 2
    assert all(i < built for i, s in enumerate(stamps) if s == "analysis: side disassembled"), stamps
    # and measured there too: the analysis that follows only pairs the sides
    measured = [i for i, s in enumerate(stamps) if s.startswith("analysis: side measured")]
    assert len(measured) == 2 and all(i < built for i in measured), stamps
    # per side (plain check on): sass, res, lrm of the plain cubin; sass_g, res of the line-info
    # one, which gets no plain listing it would not use
    tools = [s.split()[1] for s in stamps if s.startswith("tool: ") and s.endswith("started")]
    assert sorted(tools) == sorted(["sass", "res", "lrm", "sass_g", "res"] * 2), tools
    k = comparison["kernels"][0]
    assert [k[s]["lineinfo"]["perturbed"] for s in "ab"] == [False, False], [k[s]["lineinfo"] for s in "ab"]


def test_with_cores_to_spare_the_plain_check_build_runs_beside_the_line_info_build(
    own_cache, tmp_path, stamps, monkeypatch
):
    from cutediff_tui.core import compare
    from cutediff_tui.core.options import compare_options

    monkeypatch.setattr(compare, "BESIDE_JOBS", 1)  # as on a machine with cores for four compiles
    assert compare.plain_beside()
    rec = tmp_path / "beside_add.py"
    rec.write_text(SAMPLE.read_text())
    opts = compare_options("4.5.1", "4.8.0", {"kernel": str(rec), "arch": "sm_90a", "with_": PIN_LIST})
    comparison = compare.run_compare(opts)
    stamps = lines(stamps)
    for side in "AB":
        mine = [s for s in stamps if s.startswith("build: ") and s.endswith(f" {side}")]
        # both builds of the side were compiling before either was stored
        assert mine.count(f"build: compiling {side}") == 2, mine
        first_stored = mine.index(f"build: stored {side}")
        assert mine[:first_stored].count(f"build: compiling {side}") == 2, mine
    k = comparison["kernels"][0]
    assert [k[s]["lineinfo"]["perturbed"] for s in "ab"] == [False, False]
    assert all(comparison["sides"][s]["build_key"] != comparison["sides"][s]["lineinfo_key"] for s in "ab")


def test_without_the_plain_check_each_side_runs_nvdisasm_once_and_loses_no_line(own_cache, tmp_path, stamps):
    """The edit loop's compare (watch mode, --no-plain-check): each side's only build carries line
    info; its source lines come from the cubin's line table, and the listing, figures and
    per-line attributions are the ones the -g listing gave (made here, after the compare)."""
    from cutediff_tui.core import warm
    from cutediff_tui.core.analysis import spills
    from cutediff_tui.core.analysis.sass import merge_sass, parse_sass
    from cutediff_tui.core.analysis_pipeline import (
        kernel_texts,
        line_deltas,
        load_listing,
        pressure_summary,
        shorten_paths,
    )
    from cutediff_tui.core.compare import run_compare
    from cutediff_tui.core.options import compare_options

    rec = tmp_path / "alone_add.py"
    rec.write_text(SAMPLE.read_text())
    kw = {"kernel": str(rec), "arch": "sm_90a", "with_": PIN_LIST, "no_plain_check": True}
    with warm.session():
        comparison = run_compare(compare_options("4.5.1", "4.8.0", kw))
    assert not any(comparison["sides"][s]["error"] for s in "ab")
    tools = [s.split()[1] for s in lines(stamps) if s.startswith("tool: ") and s.endswith("started")]
    assert sorted(tools) == sorted(["res", "lrm"] * 2), tools  # no -g run
    k = comparison["kernels"][0]
    old = {}
    for s in "ab":
        m = k[s]
        assert m["files"]["lineinfo_dir"] == m["files"]["dir"]
        texts = kernel_texts(Path(m["files"]["dir"]) / "kernel.cubin", None, line_info=True, live=True, plain=False)
        g = texts["sass_g"]
        before = merge_sass(parse_sass(g), parse_sass(g), parse_sass(texts["lrm"]))
        shorten_paths(before)  # as the comparison keeps them
        now = load_listing(m)
        assert now == before
        assert now.main.instrs[0].line is not None
        assert pressure_summary(before.main) == m["pressure"]
        assert spills.spill_sites(before.main) == spills.spill_sites(now.main)
        old[s] = before.main
    assert line_deltas(old["a"], old["b"]) == k["lines"]
