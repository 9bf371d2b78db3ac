"""The bisect search: version lists, bounds, untestable versions stepped around, endpoint checks.

The probe function here answers from a table of figures per version, so the search itself is
tested over many histories; tests/integration/test_bisect_fa4.py runs it on real builds.
"""

import math

import pytest

from cutediff_tui.core.bisect import BisectPlan, bisect_bound, candidate_versions, read_versions_file, run_bisect
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.gpu import resolve_profile
from cutediff_tui.core.metric import parse_metric
from cutediff_tui.core.probe import Probe
from cutediff_tui.core.recipes import get_recipe

PUBLISHED = [
    "0.0.0a0",
    "4.0.0",
    "4.0.0.dev1",
    "4.4.2",
    "4.5.0",
    "4.5.0.dev0",
    "4.5.1",
    "4.5.2",
    "4.5.3",
    "4.6.0",
    "4.6.0.dev0",
    "4.6.1",
    "4.6.2",
    "4.6.3",
    "4.7.0",
    "4.7.1",
    "4.8.0",
    "4.8.0.dev0",
    "4.8.1",
]


def test_candidates_are_final_releases_in_order():
    assert candidate_versions("4.5.1", "4.8.0", PUBLISHED) == [
        "4.5.1",
        "4.5.2",
        "4.5.3",
        "4.6.0",
        "4.6.1",
        "4.6.2",
        "4.6.3",
        "4.7.0",
        "4.7.1",
        "4.8.0",
    ]
    assert "4.8.0.dev0" in candidate_versions("4.5.1", "4.8.0", PUBLISHED, include_pre=True)


@pytest.mark.parametrize(
    "good,bad,needle",
    [
        ("4.8.0", "4.5.1", "not older"),
        ("4.5.9", "4.8.0", "4.5.9 is not among"),
        ("four", "4.8.0", "not a version number"),
    ],
)
def test_bad_endpoints(good, bad, needle):
    with pytest.raises(CutediffError, match=needle):
        candidate_versions(good, bad, PUBLISHED)


def test_versions_file(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("# offline list\n4.5.1\n4.6.3  # shims\n\n4.8.0\n")
    assert read_versions_file(p) == ["4.5.1", "4.6.3", "4.8.0"]
    p.write_text("4.5.1\nlatest\n")
    with pytest.raises(CutediffError, match="'latest', which is not a version"):
        read_versions_file(p)


def _plan(versions, metric="spill_store_bytes>0"):
    base = Probe(side=versions[0], recipe=get_recipe("fa4-fwd"), params={}, profile=resolve_profile(None, "sm_103a"))
    return BisectPlan(versions, base, parse_metric(metric, predicate=True), "Forward")


def _prober(table, calls):
    def probe(p):
        calls.append(p.side)
        v = table[p.side]
        if v is None:
            return {"status": "failed", "why": f"DSL {p.side} fails to import with this FA4.", "seconds": 1.0}
        return {
            "status": "ok",
            "seconds": 2.0,
            "from_cache": False,
            "kernels": [
                {"name": "FlashAttentionForwardSm100", "symbol": "k", "figures": {"spill_store_bytes": v}},
                {"name": "FlashAttentionBackwardSm100", "symbol": "b", "figures": {"spill_store_bytes": 999}},
            ],
        }

    return probe


VS = candidate_versions("4.5.1", "4.8.0", PUBLISHED)


@pytest.mark.parametrize("first_bad", range(1, len(VS)))
def test_finds_every_possible_first_bad_within_the_bound(first_bad):
    table = {v: (176 if i >= first_bad else 0) for i, v in enumerate(VS)}
    calls = []
    res = run_bisect(_plan(VS), probe_fn=_prober(table, calls))
    assert res["first_bad"] == VS[first_bad]
    assert res["last_good"] == VS[first_bad - 1]
    assert (
        len(calls) == len(set(calls)) == res["builds"] <= bisect_bound(len(VS)) == 2 + math.ceil(math.log2(len(VS) - 1))
    )


def test_untestable_versions_are_stepped_around_and_reported():
    # 4.5.3 and 4.6.x do not build; the regression lands in 4.7.0
    table = {v: None if v in ("4.5.3", "4.6.0", "4.6.1", "4.6.2") else (176 if v >= "4.7.0" else 0) for v in VS}
    calls = []
    res = run_bisect(_plan(VS), probe_fn=_prober(table, calls))
    assert res["first_bad"] == "4.7.0" and res["last_good"] == "4.6.3"
    steps = {s["version"]: s for s in res["steps"]}
    assert all(
        steps[v]["verdict"] == "untestable" and "fails to import" in steps[v]["why"] for v in steps if table[v] is None
    )


def test_only_untestable_between_gives_candidates_not_a_guess():
    table = {v: None if v in ("4.6.3", "4.7.0") else (176 if v >= "4.7.1" else 0) for v in VS}
    res = run_bisect(_plan(VS), probe_fn=_prober(table, []))
    assert res["first_bad"] is None
    assert res["last_good"] == "4.6.2" and res["first_bad_candidates"] == ["4.6.3", "4.7.0", "4.7.1"]


def test_a_transient_failure_is_tried_once_more_not_taken_as_an_answer():
    """A version whose environment could not be made (the index or the network failed) or whose
    compile worker was killed is probed again once; a version that fails twice stays untestable."""
    table = {v: (176 if v >= "4.7.0" else 0) for v in VS}
    flaky = {"4.6.3": 1, "4.7.0": 1, "4.6.2": 9}  # failures left per version
    calls = []

    def probe(p):
        if flaky.get(p.side, 0) > 0:
            flaky[p.side] -= 1
            calls.append(p.side)
            why = "the worker was killed (SIGKILL)" if p.side == "4.7.0" else "the package index did not answer."
            return {"status": "failed", "stage": "environment" if p.side != "4.7.0" else "compile", "why": why}
        return _prober(table, calls)(p)

    res = run_bisect(_plan(VS), probe_fn=probe)
    assert res["first_bad"] == "4.7.0" and res["last_good"] == "4.6.3", res["steps"]
    steps = {s["version"]: s for s in res["steps"]}
    assert steps["4.7.0"]["tries"] == 2 and steps["4.6.3"]["tries"] == 2
    assert len([s for s in res["steps"] if s["tries"] == 2]) == len({v for v in calls if calls.count(v) == 2})
    orders = [s["order"] for s in res["steps"]]
    assert orders == sorted(set(orders))  # a retry keeps its place in the order
    if "4.6.2" in steps:  # fails on every try: tried twice, then untestable
        assert steps["4.6.2"]["verdict"] == "untestable" and steps["4.6.2"]["tries"] == 2
    # a failure that is an answer (the version does not import) is not tried again
    table2 = {v: None if v == "4.6.3" else (176 if v >= "4.7.0" else 0) for v in VS}
    calls2 = []
    res2 = run_bisect(_plan(VS), probe_fn=_prober(table2, calls2))
    assert calls2.count("4.6.3") <= 1 and all(s["tries"] == 1 for s in res2["steps"])


def test_endpoint_checks():
    table = {v: 176 for v in VS}
    with pytest.raises(CutediffError, match="true at --good 4.5.1 .*nothing to bisect"):
        run_bisect(_plan(VS), probe_fn=_prober(table, []))
    table = {v: 0 for v in VS}
    with pytest.raises(CutediffError, match="false at --bad 4.8.0"):
        run_bisect(_plan(VS), probe_fn=_prober(table, []))
    table = {v: None for v in VS}
    with pytest.raises(CutediffError, match="The good end 4.5.1 cannot be tested: DSL 4.5.1 fails to import"):
        run_bisect(_plan(VS), probe_fn=_prober(table, []))


def test_kernel_filter_matching_nothing_is_untestable():
    from cutediff_tui.core.bisect import judge

    verdict, why = judge(
        {"status": "ok", "kernels": [{"name": "Foo", "figures": {}}]}, parse_metric("registers>1"), "Forward"
    )
    assert verdict == "untestable" and "--kernel-filter 'Forward' matches none of the 1 kernel(s) (Foo)" in why
    verdict, why = judge({"status": "ok", "kernels": []}, parse_metric("registers>1"), None)
    assert verdict == "untestable" and why == "the build holds no kernel"


def test_versions_compare_as_versions_not_strings():
    listed = ["4.5.1", "4.6", "4.6.0", "4.6.0", "4.7.0", "4.8.0"]
    assert candidate_versions("4.5.1", "4.8", listed) == ["4.5.1", "4.6", "4.7.0", "4.8.0"]  # 4.6 == 4.6.0, once
    with pytest.raises(CutediffError) as e:
        candidate_versions("4.5.1", "4.8.0", [])
    assert "give --versions FILE" in e.value.sentence()


def test_a_figure_a_version_lacks_makes_it_untestable():
    from cutediff_tui.core.bisect import judge

    verdict, why = judge(
        {"status": "ok", "kernels": [{"name": "Fwd", "figures": {"registers": 1}}]}, parse_metric("peak_gpr>100"), None
    )
    assert verdict == "untestable" and "needs peak_gpr" in why


def test_progress_reports_typed_rounds_and_steps():
    """The faces read the rounds and verdicts from the events' fields, not from the text."""
    from cutediff_tui.core.events import BisectRound, BisectStep, render_event

    table = {v: (176 if i >= 3 else 0) for i, v in enumerate(VS)}
    events: list = []
    res = run_bisect(_plan(VS), events.append, probe_fn=_prober(table, []))
    rounds = [e for e in events if isinstance(e, BisectRound)]
    steps = [e for e in events if isinstance(e, BisectStep)]
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)) and rounds[0].versions == (VS[0],)
    assert len(steps) == res["builds"] and {s.verdict for s in steps} == {"good", "bad"}
    assert render_event(steps[0]).startswith(f"{VS[0]}: good (")
    assert render_event(rounds[0]) == f"round 1: testing {VS[0]} ({rounds[0].open} versions still open)"
