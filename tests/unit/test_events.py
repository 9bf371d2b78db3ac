"""Progress events: typed facts, one line each for the CLI, the side carried as a field."""

from __future__ import annotations

import threading

from cutediff_tui.core.events import (
    AnalysisCached,
    CrosscheckStarted,
    DslImporting,
    KernelCompiled,
    Message,
    SideAnalysed,
    as_event,
    for_side,
    render_event,
    side_of,
)


def test_lines_read_as_before():
    assert render_event(KernelCompiled("a", "build", 2, "fwd", 3.14159)) == (
        "side A: build: compiled kernel 2 (fwd) in 3.1 s"
    )
    assert render_event(DslImporting("b", "line-info build", "4.8.0")) == "side B: line-info build: importing DSL 4.8.0"
    assert render_event(SideAnalysed("b", 3)) == "side B: analysed 3 kernel(s)"
    assert render_event(AnalysisCached(None)) == "analysis served from the cache"
    assert render_event(CrosscheckStarted(None, "K", ("13.0", "13.4"))) == "cross-check K: ptxas 13.0, 13.4"
    assert render_event("wrote x.md") == "wrote x.md"


def test_for_side_tags_lines_and_events_but_keeps_a_given_side():
    seen: list = []
    on_b = for_side(seen.append, "b")
    on_b("resolving 4.8.0 (cu13)")
    on_b(KernelCompiled(None, "build", 1, "k", 1.0))
    on_b(SideAnalysed("a", 1))
    assert [side_of(e) for e in seen] == ["b", "b", "a"]
    assert seen[0] == Message("b", "resolving 4.8.0 (cu13)")
    assert render_event(seen[0]) == "side B: resolving 4.8.0 (cu13)"
    assert side_of("plain") is None and as_event("plain") == Message(None, "plain")


def test_run_compare_reports_typed_events_per_side(tmp_path, monkeypatch):
    """run_side tags everything a side's environment and builds report with that side, and the
    cancel flag it is given reaches the builds."""
    from cutediff_tui.core import compare
    from cutediff_tui.core.options import CompareOptions

    class Env:
        name = "env-x"

        def versions(self):
            return {}

    def fake_env(spec, wheelhouse=None, progress=None):
        progress(f"resolving {spec.label}")
        return Env()

    seen_cancel = []

    def fake_build(req, side, use_cache, timeout, progress, cancel):
        seen_cancel.append(cancel)
        progress(KernelCompiled(None, "build", 1, "k", 0.5))
        raise compare.CutediffError(f"Side {side}: stop here.", "")

    monkeypatch.setattr(compare, "create_env", fake_env)
    monkeypatch.setattr(compare, "compile_build", fake_build)
    monkeypatch.setattr(compare, "BuildRequest", lambda *a, **k: None)
    from cutediff_tui.core.toolchain import parse_side

    spec = parse_side("4.8.0", (), 13)
    opts = CompareOptions(specs=(spec, spec), recipe=None, params={}, profile=None)  # type: ignore[arg-type]
    events: list = []
    cancel = threading.Event()
    out = compare.run_side("b", spec, opts, events.append, cancel)
    assert out.error == "Side B: stop here."
    assert [type(e).__name__ for e in events] == ["Message", "KernelCompiled"]
    assert {side_of(e) for e in events} == {"b"}
    assert seen_cancel == [cancel]


def test_environment_stages_read_as_before():
    from cutediff_tui.core.events import EnvStage

    assert render_event(EnvStage("a", "resolving", "4.8.0", cuda=13)) == "side A: resolving 4.8.0 (cu13)"
    assert (
        EnvStage(None, "installing", "4.8.0", "dsl-4.8.0-cu13-ab").line() == "installing 4.8.0 into dsl-4.8.0-cu13-ab"
    )
    assert EnvStage(None, "ready", "4.8.0", "e", seconds=2.345).text() == "environment ready in 2.3 s: e"


def test_sweep_cells_read_as_before():
    from cutediff_tui.core.events import CellFinished

    assert CellFinished(None, 2, 8, "4.8.0", "sm_100a hdim=64", 3.21, True).line() == (
        "[2/8] 4.8.0 sm_100a hdim=64: 3.2 s (cached build)"
    )
    assert CellFinished(None, 3, 8, "4.1.0", "sm_90a", why="no such version").line() == (
        "[3/8] 4.1.0 sm_90a: failed: no such version"
    )
