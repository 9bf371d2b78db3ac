"""The bench on a GPU that is not local, through Dask (``cutediff bench … --scheduler``), on CPU.

The cluster is a real Dask ``LocalCluster``; its worker stands in for the GPU machine by declaring
``--resources GPU=1`` (there is no GPU here). The task travels, the worker runs the bench route
(recipe file shipped as text, environments built there, the local-GPU check there) and what it
finds comes back as one sentence naming the worker's host. A worker without the GPU resource, an
unreachable scheduler and a missing ``distributed`` each give their sentence.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from cutediff_tui.core.bench.plan import BenchPlan
from cutediff_tui.core.bench.remote import gpu_workers, land_files, run_remote, ship_files
from cutediff_tui.core.bench.runner import BenchConfig
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.recipes import get_recipe
from cutediff_tui.core.toolchain import parse_side

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
LOCAL_ARRAY = ROOT / "samples" / "recipes" / "local_array.py"


def _plan() -> BenchPlan:
    recipe = get_recipe(str(LOCAL_ARRAY))
    cfg = BenchConfig(entry=recipe.bench, params=recipe.defaults(), recipe=recipe.name, mode="call", rounds=1)
    return BenchPlan(specs=(parse_side("4.8.0"), parse_side("4.8.0")), recipe=recipe, cfg=cfg)


def _cluster(**worker_kw):
    return distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
        **worker_kw,
    )


def test_recipe_file_travels_as_text(tmp_path):
    plan = _plan()
    files = ship_files(plan)
    assert list(files) == [str(LOCAL_ARRAY.resolve())] and "def bench(ctx)" in files[str(LOCAL_ARRAY.resolve())]
    landed = land_files(plan, files, tmp_path)
    assert landed.recipe.bench == f"{tmp_path / 'local_array.py'}:bench" == landed.cfg.entry
    assert landed.recipe.entry == f"{tmp_path / 'local_array.py'}:local_array"
    assert (tmp_path / "local_array.py").read_text() == LOCAL_ARRAY.read_text()


def test_gpu_workers_are_those_declaring_the_resource():
    info = {"workers": {"tcp://a:1": {"resources": {"GPU": 1}}, "tcp://b:2": {"resources": {}}, "tcp://c:3": {}}}
    assert gpu_workers(info) == ["tcp://a:1"]


def test_bench_runs_on_the_gpu_worker_and_its_answer_comes_back(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the stand-in GPU machine has no nvidia-smi
    with _cluster(resources={"GPU": 1}) as cluster, pytest.raises(CutediffError) as e:
        run_remote(cluster.scheduler_address, _plan())
    s = e.value.sentence()
    assert s.startswith(f"On the Dask worker {socket.gethostname()}: No NVIDIA GPU was found"), s
    assert "\n" not in s and s.endswith(".")


def test_scheduler_without_a_gpu_worker():
    with _cluster() as cluster, pytest.raises(CutediffError) as e:
        run_remote(cluster.scheduler_address, _plan())
    s = e.value.sentence()
    assert f"No worker of the Dask scheduler at {cluster.scheduler_address} declares a GPU" in s
    assert "--resources GPU=1" in s


def test_unreachable_scheduler(monkeypatch):
    import cutediff_tui.core.bench.remote as remote

    monkeypatch.setattr(remote, "CONNECT_TIMEOUT", 2)
    with pytest.raises(CutediffError) as e:
        run_remote("tcp://127.0.0.1:9", _plan())
    s = e.value.sentence()
    assert s.startswith("Could not reach the Dask scheduler at tcp://127.0.0.1:9") and s.endswith("runs.")


@pytest.mark.slow
def test_worker_builds_the_toolchains_and_runs_the_real_bench_worker(tmp_path, monkeypatch, compile_cache):
    """The stand-in GPU machine lists an H200 (a stand-in nvidia-smi) but its torch is a CPU build:
    the task passes the GPU check there, builds both DSL environments there (the real index), starts
    the real bench workers in them, and their answer comes back as one sentence."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    smi = bin_ / "nvidia-smi"
    smi.write_text(
        '#!/bin/sh\ncase "$*" in\n  *compute_cap*) echo "NVIDIA H200, 9.0" ;;\n  *) echo "NVIDIA H200, 580, 1980, 3201, 35, 120" ;;\nesac\n'
    )
    smi.chmod(0o755)
    import os

    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(compile_cache))
    with _cluster(resources={"GPU": 1}) as cluster, pytest.raises(CutediffError) as e:
        run_remote(cluster.scheduler_address, _plan())
    s = e.value.sentence()
    assert s.startswith(f"On the Dask worker {socket.gethostname()}: Side A: the bench failed"), s
    assert "torch in this environment sees no CUDA GPU" in s
