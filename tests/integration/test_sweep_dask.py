"""A real sweep on a Dask local cluster: 3 published DSL versions × 2 head dims of FA4's forward
kernel for sm_103a (B300, the arch of the original report), compiled on this CPU-only machine; then resumed from the cache, then the same
matrix on the local process pool."""

from __future__ import annotations

import json

import pytest
from test_fa4_compare import PINS, cutediff

pytestmark = pytest.mark.slow

SWEEP = [
    "sweep",
    "4.5.1",
    "4.5.3",
    "4.8.0",
    *PINS,
    "--kernel",
    "fa4-fwd",
    "--arch",
    "sm_103a",  # one arch: the matrix is what the cluster runs, 6 cells keep CI's minutes down
    "--param",
    "hdim=64,128",
    "--param",
    "varlen=true",
    "--param",
    "causal=true",
    "--kernel-filter",
    "Forward",
]


@pytest.fixture(scope="module")
def dask_sweep(compile_cache, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    proc = cutediff(
        [
            *SWEEP,
            "--executor",
            "dask",
            "--jobs",
            "2",
            "--fresh",
            "--json",
            str(out / "s.json"),
            "--html",
            str(out / "s.html"),
        ],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "s.json").read_text()), proc, out


def test_runs_every_cell_on_the_dask_cluster(dask_sweep):
    res, proc, _ = dask_sweep
    assert res["schema"] == "cutediff.sweep/1"
    ex = res["executor"]
    assert ex["kind"] == "dask" and ex["local_cluster"] and ex["workers"] == 2
    assert len(res["cells"]) == 6 and all(c["status"] == "ok" for c in res["cells"])
    workers = {c["worker"] for c in res["cells"]}
    assert workers and all(w.startswith("tcp://") for w in workers)
    assert "[6/6]" in proc.stderr


def test_heatmap_values(dask_sweep):
    from cutediff_tui.core.sweep import grid

    res, proc, out = dask_sweep
    g = grid(res)
    assert g.rows == ["4.5.1", "4.5.3", "4.8.0"]
    assert g.cols == ["sm_103a hdim=64", "sm_103a hdim=128"]
    by = {(r, c): g.values[i][j] for i, r in enumerate(g.rows) for j, c in enumerate(g.cols)}
    assert all(by[("4.5.1", c)] == 0 for c in g.cols)
    assert by[("4.8.0", "sm_103a hdim=128")] == 176  # the FA4 regression of the original report
    assert by[("4.5.3", "sm_103a hdim=128")] == 16  # where bisect says it starts
    assert grid(res, "registers").values[0][0] > 0
    assert "176" in proc.stdout  # the terminal table
    html = (out / "s.html").read_text()
    assert "<table" in html and "176" in html and "<script" not in html


def test_resumes_from_the_cache(dask_sweep, compile_cache):
    proc = cutediff([*SWEEP, "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["timing"]["resumed"] == 6
    assert "resuming: 6 of 6 cells were finished before" in proc.stderr


def test_local_pool_gives_the_same_matrix(dask_sweep, compile_cache):
    from cutediff_tui.core.sweep import grid

    proc = cutediff([*SWEEP, "--executor", "local", "--jobs", "2", "--fresh", "--json", "-"], compile_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["executor"] == {"kind": "local", "workers": 2}
    assert res["timing"]["cached_builds"] == 6  # built by the Dask workers, same cache
    assert grid(res).values == grid(dask_sweep[0]).values


def test_existing_scheduler(dask_sweep, compile_cache, monkeypatch):
    """--scheduler joins a cluster someone else started (here: one started by the test)."""
    import logging

    from distributed import LocalCluster

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))  # the workers inherit it
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as cluster:
        proc = cutediff(
            [*SWEEP, "--executor", "dask", "--scheduler", cluster.scheduler_address, "--fresh", "--json", "-"],
            compile_cache,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["executor"]["address"] == cluster.scheduler_address and not res["executor"]["local_cluster"]
    assert all(c["status"] == "ok" and c["from_cache"] for c in res["cells"])


def test_a_cell_that_cannot_build_is_reported_and_the_rest_kept(compile_cache):
    """DSL 4.1.0 publishes no wheel for this Python (cp312 only): its cell fails with the reason, the
    4.5.1 cells are built, and the sweep exits 0 because some cells have figures."""
    from cutediff_tui.core.paths import project_root

    recipe = str(project_root() / "samples" / "recipes" / "elementwise_add.py")
    proc = cutediff(
        [
            "sweep",
            "4.1.0",
            "4.5.1",
            "--kernel",
            recipe,
            "--arch",
            "sm_90a",
            "--param",
            "vec=2,4",
            "--figure",
            "registers",
            "--json",
            "-",
            "--fresh",
        ],
        compile_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    failed = [c for c in res["cells"] if c["status"] != "ok"]
    assert {c["side"] for c in failed} == {"4.1.0"} and len(failed) == 2
    assert all("4.1.0" in c["why"] and "Traceback" not in c["why"] for c in failed)
    assert all(c["kernels"] for c in res["cells"] if c["side"] == "4.5.1")
    assert "failed: 4.1.0" in proc.stderr


def test_default_pool_size_fits_the_machine():
    import os

    from cutediff_tui.core.executors import default_jobs

    assert 1 <= default_jobs() <= (os.cpu_count() or 1)


def test_dask_workers_build_environments_from_a_shared_wheelhouse(compile_cache, tmp_path):
    """Workers with an empty cache build the toolchain they need offline, from a wheelhouse every
    worker can read (filled once with `cutediff env download`)."""
    from cutediff_tui.core.paths import project_root

    wh = compile_cache / "wheelhouse-4.5.1"
    if not list(wh.glob("cutediff-lock-*.txt")):
        proc = cutediff(["env", "download", "4.5.1", "-d", str(wh)], compile_cache)
        assert proc.returncode == 0, proc.stderr[-3000:]
    worker_cache = tmp_path / "worker-cache"  # empty: nothing to reuse
    recipe = str(project_root() / "samples" / "recipes" / "elementwise_add.py")
    proc = cutediff(
        [
            "sweep",
            "4.5.1",
            "--kernel",
            recipe,
            "--arch",
            "sm_90a",
            "--param",
            "vec=2,4",
            "--executor",
            "dask",
            "--jobs",
            "2",
            "--wheelhouse",
            str(wh),
            "--figure",
            "registers",
            "--json",
            "-",
        ],
        worker_cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["executor"]["kind"] == "dask" and all(c["status"] == "ok" for c in res["cells"])
    (env,) = [p for p in (worker_cache / "envs").iterdir() if not p.name.startswith(".")]
    made = json.loads((env / "env.json").read_text())
    assert made["wheelhouse"] == str(wh.resolve()) and made["spec"]["dsl"] == "4.5.1"
    assert all(c["kernels"][0]["figures"]["registers"] > 0 for c in res["cells"])
