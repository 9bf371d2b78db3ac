"""Bisect beyond DSL versions: another package's releases (pre-releases when the endpoints are),
the k-ary parallel search on a real process pool, and the commits of a local git checkout."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from cutediff_tui.core.bisect import (
    BisectPlan,
    Over,
    bisect_bound,
    bisect_rounds,
    candidate_versions,
    git_over,
    git_versions,
    next_probes,
    run_bisect,
)
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.executors import LocalExecutor
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.metric import parse_metric
from cutediff_tui.core.probe import Probe
from cutediff_tui.core.recipes import get_recipe

sys.path.insert(0, str(Path(__file__).parent))
import table_probe

FA4 = [f"4.0.0b{i}" for i in (3, 4, 5, 7, 8, 9, *range(10, 37))]


def test_package_releases_include_pre_releases_when_the_endpoints_are():
    vs = candidate_versions("4.0.0b16", "4.0.0b36", FA4, package="flash-attn-4")
    assert vs[0] == "4.0.0b16" and vs[-1] == "4.0.0b36" and len(vs) == 21
    assert vs == sorted(vs, key=lambda v: int(v.split("b")[1]))  # b3 < b10 as versions, not strings


def test_a_package_with_no_release_between_the_endpoints_gets_one_sentence():
    with pytest.raises(CutediffError) as e:
        candidate_versions("4.0.0b16", "4.0.0b17", FA4, package="flash-attn-4")
    assert e.value.sentence().startswith("flash-attn-4 publishes no release between 4.0.0b16 and 4.0.0b17")


def test_package_probes_hold_the_toolchain_and_other_pins():
    base = Probe(
        side="4.8.0",
        recipe=get_recipe("fa4-fwd"),
        params={},
        profile=resolve_profile(None, "sm_100a"),
        pins=("flash-attn-4==4.0.0b16", "quack-kernels==0.6.5"),
    )
    over = Over(kind="package", toolchain="4.8.0", package="flash-attn-4")
    probe = over.probe(base, "4.0.0b20")
    spec = probe.spec()
    assert spec.dsl == "4.8.0"
    assert {str(p) for p in spec.pins} == {"flash-attn-4==4.0.0b20", "quack-kernels==0.6.5"}  # side pin wins


@pytest.mark.parametrize("n, k", [(10, 1), (10, 2), (21, 2), (21, 3), (100, 4)])
def test_rounds_are_log_base_k_plus_one(n, k):
    assert bisect_rounds(n, k) == math.ceil(math.log(n - 1, k + 1) - 1e-9)
    assert bisect_bound(n, 1) == 2 + math.ceil(math.log2(n - 1))


def test_k_probes_cut_the_range_into_k_plus_one_parts():
    assert next_probes(0, 20, {}, 2) == [7, 13]
    assert next_probes(0, 20, {}, 3) == [5, 10, 15]
    assert next_probes(0, 3, {}, 4) == [1, 2]  # fewer open versions than workers


VS = [f"1.{i}" for i in range(21)]


@pytest.mark.parametrize("first_bad", [1, 7, 12, 20])
def test_parallel_bisect_on_a_process_pool(tmp_path, monkeypatch, first_bad):
    table = {v: (16 if i >= first_bad else 0) for i, v in enumerate(VS)}
    table["1.5"] = None  # untestable: stepped around
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    monkeypatch.setenv("CUTEDIFF_PROBE_TABLE", str(path))
    base = Probe(side=VS[0], recipe=get_recipe("fa4-fwd"), params={}, profile=resolve_profile(None, "sm_100a"))
    plan = BisectPlan(VS, base, parse_metric("spill_store_bytes>0", predicate=True), jobs=2)
    with LocalExecutor(2, fn=table_probe.run) as ex:
        res = run_bisect(plan, executor=ex)
    expect = VS[first_bad]
    assert res["first_bad"] == expect
    assert res["last_good"] == VS[first_bad - 1]
    assert res["jobs"] == 2
    # the ends in one round, then about ⌈log3 20⌉ = 3 rounds (one more when an untestable one is hit)
    assert res["rounds"] <= 1 + bisect_rounds(len(VS), 2) + 1
    sequential = run_bisect(BisectPlan(VS, base, plan.metric), probe_fn=table_probe.run)
    assert sequential["first_bad"] == expect and sequential["rounds"] > res["rounds"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "kernels"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    _git(r, "config", "user.email", "t@example.com")
    _git(r, "config", "user.name", "t")
    (r / "README.md").write_text("kernels\n")
    (r / "add.py").write_text("# v1\n")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "first")
    return r


def test_git_range_walks_only_commits_touching_the_source(repo):
    good = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("docs only\n")
    _git(repo, "commit", "-qam", "docs")
    (repo / "add.py").write_text("# v2\n")
    _git(repo, "commit", "-qam", "kernel v2")
    touching = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("docs again\n")
    _git(repo, "commit", "-qam", "docs again")
    bad = _git(repo, "rev-parse", "HEAD")
    over, paths = git_over(repo, "4.8.0", repo / "add.py")
    assert paths == ["add.py"] and over.recipe_rel == "add.py"
    versions, subjects = git_versions(repo, good, "HEAD", paths)
    assert versions == [good, touching, bad]
    assert subjects[touching] == "kernel v2"


def test_git_range_with_no_commit_touching_the_source_gets_one_sentence(repo):
    good = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("docs only\n")
    _git(repo, "commit", "-qam", "docs")
    with pytest.raises(CutediffError) as e:
        git_versions(repo, good, "HEAD", ["add.py"])
    assert "No commit between" in e.value.sentence() and "touches add.py" in e.value.sentence()
    with pytest.raises(CutediffError, match="not an ancestor"):
        git_versions(repo, "HEAD", good, ["add.py"])
    with pytest.raises(CutediffError, match="is not a commit"):
        git_versions(repo, "nope", "HEAD", ["add.py"])
