"""The local process pool: a worker process that dies does not fail the other probes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cutediff_tui.core.executors import LocalExecutor
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.probe import Probe
from cutediff_tui.core.recipes import get_recipe

sys.path.insert(0, str(Path(__file__).parent))
import crashy_probe


def _probes(*sides):
    r, prof = get_recipe("fa4-fwd"), resolve_profile(None, "sm_90a")
    return [Probe(side=s, recipe=r, params={"i": i}, profile=prof) for i, s in enumerate(sides)]


@pytest.fixture
def marker(tmp_path, monkeypatch):
    m = tmp_path / "crashed"
    monkeypatch.setenv("CUTEDIFF_CRASH_MARKER", str(m))
    return m


def test_a_dead_worker_is_replaced_and_the_other_probes_finish(marker):
    probes = _probes("a", "crash-once", "b", "c", "d")
    with LocalExecutor(2, fn=crashy_probe.run) as ex:
        got = {p.side: r for p, r in ex.map_unordered(probes)}
    assert marker.exists()
    assert sorted(got) == ["a", "b", "c", "crash-once", "d"]
    assert all(r["status"] == "ok" for r in got.values())


def test_a_probe_that_always_kills_its_worker_fails_alone(marker):
    probes = _probes("a", "crash-always", "b")
    with LocalExecutor(2, fn=crashy_probe.run) as ex:
        got = {p.side: r for p, r in ex.map_unordered(probes)}
    assert got["crash-always"]["status"] == "failed"
    assert "a worker process died each time" in got["crash-always"]["why"]
    assert got["a"]["status"] == got["b"]["status"] == "ok"


def test_warm_workers_only_for_probes_that_share_a_toolchain(monkeypatch):
    """A sweep over parameters (cells of one toolchain) builds on warm workers; a bisect round
    (one cell per version) keeps the process pool; CUTEDIFF_WARM=0 and other probe functions too."""
    from cutediff_tui.core.executors import shares_a_toolchain

    assert shares_a_toolchain(_probes("4.8.0", "4.8.0", "4.5.1"))
    assert not shares_a_toolchain(_probes("4.5.1", "4.6.0", "4.8.0"))
    assert not shares_a_toolchain(_probes("4.8.0,quack-kernels==0.4.1", "4.8.0"))
    assert LocalExecutor(2).warm and not LocalExecutor(2, fn=crashy_probe.run).warm
    monkeypatch.setenv("CUTEDIFF_WARM", "0")
    assert not LocalExecutor(2).warm
