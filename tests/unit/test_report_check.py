"""The CI gate on hand-made comparisons: limits, exit codes, JUnit XML and the click commands."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from cutediff_tui.cli.common import compare_command
from cutediff_tui.cli.report import check, report
from cutediff_tui.core.report import CheckResult, Limits, check_comparison, junit_xml


def _m(registers: int, stack: int, st: int, ld: int) -> dict:
    return {
        "symbol": "sym",
        "registers": registers,
        "stack_bytes": stack,
        "spill_store_bytes": st,
        "spill_load_bytes": ld,
        "opcodes": {},
        "instruction_classes": {},
        "instructions": 10,
        "stl": 0,
        "ldl": 0,
        "spill_sites": [],
        "files": {"dir": "/nonexistent"},
    }


def make(b_fwd=(128, 112, 176, 176), bench_ratio: float | None = None) -> dict:
    side = {"label": "4.5.1", "dsl": "4.5.1", "cuda": 13, "pins": [], "versions": {}, "error": None}
    c = {
        "schema": "cutediff.comparison/1",
        "analysis_version": 1,
        "created": "2026-01-01T00:00:00+0000",
        "command": "",
        "host": {"python": "3.11", "platform": "linux"},
        "recipe": {"name": "fa4-fwd", "params": {}},
        "arch": "sm_103a",
        "sides": {"a": side, "b": side | {"label": "4.8.0", "dsl": "4.8.0"}},
        "kernels": [
            {
                "name": "FlashAttentionForwardSm100",
                "symbol": {"a": "fwd_a", "b": "fwd_b"},
                "a": _m(128, 0, 0, 0),
                "b": _m(*b_fwd),
            },
            {
                "name": "FlashAttentionBackwardSm100",
                "symbol": {"a": "bwd_a", "b": "bwd_b"},
                "a": _m(168, 0, 0, 0),
                "b": _m(168, 0, 0, 0),
            },
        ],
        "crosscheck": None,
    }
    if bench_ratio is not None:
        c["bench"] = {
            "shapes": [
                {
                    "shape": {"label": "8192x32h/4"},
                    "a": {"median_ms": 1.0, "n": 5},
                    "b": {"median_ms": bench_ratio, "n": 5},
                    "ratio": bench_ratio,
                    "ci_low": bench_ratio - 0.01,
                    "ci_high": bench_ratio + 0.01,
                    "verdict": "SLOWER",
                }
            ]
        }
    return c


def _by(res: CheckResult) -> dict:
    return {(o.kernel, o.limit): o for o in res.outcomes}


def test_spill_limit_breaks_on_b_only():
    res = check_comparison(make(), Limits(max_spill_bytes=0))
    assert res.exit_code == 1
    o = _by(res)[("FlashAttentionForwardSm100", "max-spill-bytes")]
    assert o.status == "fail" and o.value == 176 and o.threshold == 0
    assert o.message == "spill stores 176 B and spill loads 176 B on B exceed --max-spill-bytes 0"
    assert _by(res)[("FlashAttentionBackwardSm100", "max-spill-bytes")].status == "pass"
    assert check_comparison(make(), Limits(max_spill_bytes=176)).exit_code == 0
    res = check_comparison(make(b_fwd=(128, 112, 100, 200)), Limits(max_spill_bytes=150))
    assert _by(res)[("FlashAttentionForwardSm100", "max-spill-bytes")].message.startswith(
        "spill loads 200 B on B exceed"
    )


def test_register_and_stack_deltas_are_b_minus_a():
    c = make(b_fwd=(136, 112, 0, 0))
    res = check_comparison(c, Limits(max_register_delta=8, max_stack_delta=64))
    by = _by(res)
    assert by[("FlashAttentionForwardSm100", "max-register-delta")].status == "pass"
    stack = by[("FlashAttentionForwardSm100", "max-stack-delta")]
    assert (
        stack.status == "fail"
        and stack.value == 112
        and stack.message == "stack 0 → 112 B (+112) exceeds --max-stack-delta 64"
    )
    res = check_comparison(c, Limits(max_register_delta=7))
    assert _by(res)[("FlashAttentionForwardSm100", "max-register-delta")].status == "fail"
    # fewer registers on B never break a limit of 0
    c2 = make(b_fwd=(120, 0, 0, 0))
    assert check_comparison(c2, Limits(max_register_delta=0, max_stack_delta=0)).exit_code == 0


def test_slowdown_uses_bench_ratio_or_says_not_measured():
    res = check_comparison(make(b_fwd=(128, 0, 0, 0)), Limits(max_slowdown_pct=5))
    (o,) = [o for o in res.outcomes if o.limit == "max-slowdown"]
    assert o.status == "fail" and "not measured" in o.message  # the gate fails closed
    assert res.exit_code == 1
    res = check_comparison(make(b_fwd=(128, 0, 0, 0)), Limits(max_slowdown_pct=5, allow_missing=True))
    (o,) = [o for o in res.outcomes if o.limit == "max-slowdown"]
    assert o.status == "skip" and "not measured" in o.message
    assert res.exit_code == 0
    res = check_comparison(make(b_fwd=(128, 0, 0, 0), bench_ratio=1.1), Limits(max_slowdown_pct=5))
    o = _by(res)[("bench 8192x32h/4", "max-slowdown")]
    assert o.status == "fail" and res.exit_code == 1 and "10.00% slower" in o.message
    res = check_comparison(make(b_fwd=(128, 0, 0, 0), bench_ratio=1.03), Limits(max_slowdown_pct=5))
    assert res.exit_code == 0


def test_kernel_filter():
    res = check_comparison(make(), Limits(max_spill_bytes=0, kernel_filter="Backward"))
    assert res.exit_code == 0 and {o.kernel for o in res.outcomes} == {"FlashAttentionBackwardSm100"}
    assert res.notes == ["1 kernel(s) left out by --kernel-filter"]
    res = check_comparison(make(), Limits(max_spill_bytes=0, kernel_filter="fwd_b"))  # symbols match too
    assert res.exit_code == 1
    res = check_comparison(make(), Limits(max_spill_bytes=0, kernel_filter="Nope"))
    assert res.exit_code == 2 and "matches none of the 2 kernel(s)" in res.errors[0].message
    res = check_comparison(make(), Limits(max_spill_bytes=0, kernel_filter="("))
    assert res.exit_code == 2 and "is not a regular expression" in res.errors[0].message


def test_errors_exit_2():
    c = make()
    c["sides"]["b"]["error"] = "Installing CuTe DSL 9.9.9 failed: no such version."
    res = check_comparison(c, Limits(max_spill_bytes=0))
    assert res.exit_code == 2 and res.errors[0].kernel == "side B"
    c = make()
    c["kernels"][0]["b"] = None
    res = check_comparison(c, Limits(max_spill_bytes=1000))
    assert res.exit_code == 2 and "missing on side B" in res.errors[0].message
    c["kernels"] = []
    assert check_comparison(c, Limits(max_spill_bytes=0)).exit_code == 2


def test_no_limits_only_checks_that_both_compiled():
    res = check_comparison(make(), Limits())
    assert res.exit_code == 0 and res.outcomes == [] and "no limits given" in res.notes[0]


def test_junit_one_testcase_per_kernel_and_limit():
    c = make(bench_ratio=1.2)
    c["kernels"][1]["name"] = 'Bwd<&>"x'
    res = check_comparison(c, Limits(max_spill_bytes=0, max_register_delta=0, max_slowdown_pct=5))
    root = ET.fromstring(junit_xml(res))
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "2"
    cases = root.findall("./testsuite/testcase")
    assert [(t.get("classname"), t.get("name")) for t in cases] == [
        ("cutediff.FlashAttentionForwardSm100", "max-spill-bytes"),
        ("cutediff.FlashAttentionForwardSm100", "max-register-delta"),
        ('cutediff.Bwd<&>"x', "max-spill-bytes"),
        ('cutediff.Bwd<&>"x', "max-register-delta"),
        ("cutediff.bench 8192x32h/4", "max-slowdown"),
    ]
    assert cases[0].find("failure").get("message").startswith("spill stores 176 B")
    assert cases[1].find("failure") is None and cases[4].find("failure") is not None
    res = check_comparison(make(), Limits(max_slowdown_pct=1, allow_missing=True))
    root = ET.fromstring(junit_xml(res))
    assert root.get("skipped") == "1" and root.find("./testsuite/testcase/skipped") is not None


# ---------------------------------------------------------------- click commands (no compile)


@pytest.fixture
def saved(tmp_path):
    def save(c: dict, name: str = "c.json"):
        p = tmp_path / name
        p.write_text(json.dumps(c))
        return p

    return save


def test_check_command_exit_codes(saved, tmp_path):
    runner = CliRunner()
    bad = saved(make())
    r = runner.invoke(check, ["--result", str(bad), "--max-spill-bytes", "0", "--junit", str(tmp_path / "j.xml")])
    assert r.exit_code == 1, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("FAIL")]
    assert lines == [
        "FAIL  FlashAttentionForwardSm100 max-spill-bytes: spill stores 176 B and spill loads 176 B on B "
        "exceed --max-spill-bytes 0"
    ]
    assert ET.parse(tmp_path / "j.xml").getroot().get("failures") == "1"
    good = saved(make(b_fwd=(128, 0, 0, 0)), "good.json")
    r = runner.invoke(check, ["--result", str(good), "--max-spill-bytes", "0", "--max-register-delta", "0"])
    assert r.exit_code == 0 and "within limits" in r.output
    r = runner.invoke(check, ["--result", str(tmp_path), "--max-spill-bytes", "0"])  # a folder without comparison.json
    assert r.exit_code == 2 and "does not exist" in r.output


def test_check_command_bad_input_exits_2(saved, tmp_path):
    runner = CliRunner()
    p = saved(make())
    r = runner.invoke(check, ["--result", str(p), "4.5.1", "4.8.0"])
    assert r.exit_code == 2 and "not both" in r.output
    r = runner.invoke(check, ["4.5.1"])
    assert r.exit_code == 2 and "needs a saved comparison RESULT or two toolchains" in r.output
    old = make()
    old["schema"] = "cutediff.comparison/0"
    r = runner.invoke(check, ["--result", str(saved(old, "old.json")), "--junit", str(tmp_path / "e.xml")])
    assert r.exit_code == 2 and "uses schema" in r.output
    assert ET.parse(tmp_path / "e.xml").getroot().get("errors") == "1"
    failed = make()
    failed["sides"]["b"]["error"] = "Compiling side B failed: ptxas crashed."
    r = runner.invoke(check, ["--result", str(saved(failed, "f.json")), "--max-spill-bytes", "0"])
    assert r.exit_code == 2 and "Side B (4.8.0) failed: Compiling side B failed: ptxas crashed." in r.output
    r = runner.invoke(check, ["--result", str(p), "--max-spill-bytes", "-1"])
    assert r.exit_code == 2


def test_report_command_writes_each_format(saved, tmp_path):
    runner = CliRunner()
    p = saved(make())
    r = runner.invoke(report, [str(p)])
    assert r.exit_code == 0 and r.output.startswith("### cutediff: FlashAttentionForwardSm100 spills on 4.8.0")
    for name, start in (("r.md", "### cutediff:"), ("r.html", "<!DOCTYPE html>"), ("r.json", "{")):
        r = runner.invoke(report, [str(p), "-o", str(tmp_path / name), "-q"])
        assert r.exit_code == 0, r.output
        assert (tmp_path / name).read_text().startswith(start)
    r = runner.invoke(report, [str(p), "--format", "html"])
    assert r.output.startswith("<!DOCTYPE html>")
    r = runner.invoke(report, ["a", "b", "c"])
    assert r.exit_code == 2 and "Expected RESULT or A B" in r.output


def test_compare_command_drops_report_and_check_options():
    argv = [
        "report",
        "4.5.1",
        "4.8.0",
        "--with",
        "flash-attn-4==4.0.0b16",
        "-o",
        "r.md",
        "--format=md",
        "-q",
        "--kernel",
        "fa4-fwd",
        "--json",
        "x.json",
    ]
    assert (
        compare_command(argv, "report") == "cutediff compare 4.5.1 4.8.0 --with flash-attn-4==4.0.0b16 --kernel fa4-fwd"
    )
    argv = ["--debug", "check", "4.5.1", "4.8.0", "--max-spill-bytes", "0", "--junit", "j.xml", "--arch", "sm_103a"]
    assert compare_command(argv, "check") == "cutediff compare 4.5.1 4.8.0 --arch sm_103a"
    assert compare_command(["pytest"], "check") == ""


def test_check_result_is_a_copy_safe_operation():
    c = make()
    before = copy.deepcopy(c)
    check_comparison(c, Limits(max_spill_bytes=0, max_slowdown_pct=1))
    assert c == before


def test_docs_ci_uses_only_real_options():
    """Every option the CI guide passes to cutediff check/report exists (the guide stays runnable)."""
    import re
    import shlex
    from pathlib import Path

    from cutediff_tui.cli import main

    text = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text()
    commands = {"check": check, "report": report, "compare": main.get_command(None, "compare")}
    seen = 0
    for block in re.findall(r"```(?:sh|yaml)\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            m = re.search(r"\bcutediff (check|report|compare)\b(.*)", line)
            if not m:
                continue
            cmd = commands[m.group(1)]
            known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
            args = shlex.split(m.group(2).split(";")[0].replace("${{ github.workspace }}", "/ws"))
            for tok in args:
                if tok.startswith("-"):
                    assert tok.split("=", 1)[0] in known, (m.group(1), tok)
            seen += 1
    assert seen >= 5


def test_check_takes_the_result_as_report_and_open_do(saved):
    """``check RESULT`` (issue 37), the same as the older ``check --result RESULT``."""
    runner = CliRunner()
    p = saved(make())
    positional = runner.invoke(check, [str(p), "--max-register-delta", "0"])
    option = runner.invoke(check, ["--result", str(p), "--max-register-delta", "0"])
    assert positional.exit_code == option.exit_code and positional.exit_code in (0, 1), positional.output
    assert positional.output == option.output
    r = runner.invoke(check, [str(p.parent / "missing.json"), "--max-spill-bytes", "0"])
    assert r.exit_code == 2 and "missing.json" in r.output, r.output
