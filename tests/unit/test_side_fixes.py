"""Issue 15 item 8: fixes found on the way (each test failed before its fix)."""

from __future__ import annotations

from pathlib import Path

from test_report_render import make_comparison  # the hand-made comparison of the report tests

from cutediff_tui.core.report import model as M
from cutediff_tui.core.report import render_html, render_markdown

RECIPES = Path(__file__).resolve().parents[2] / "samples" / "recipes"


def _site(file: str, line: int) -> dict:
    return {"addr": 16, "index": 1, "kind": "store", "opcode": "STL", "width_bytes": 4, "file": file, "line": line}


def test_code_column_quotes_the_side_the_spill_site_belongs_to(tmp_path):
    """Side A's site is quoted from A's file, B's from B's, when the two sides' sources differ."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "softmax.py").write_text("\n" * 4 + "old_a_code(x)  # A line 5\n")
    (tmp_path / "b" / "softmax.py").write_text("\n" * 4 + "new_b_code(y)  # B line 5\n" + "\n" * 3 + "b9()\n")
    c = make_comparison(bench=False, crosscheck=False)
    k = c["kernels"][0]
    k["a"]["spill_sites"] = [_site("flash_attn/cute/softmax.py", 5)]
    k["b"]["spill_sites"] = [_site("flash_attn/cute/softmax.py", 9)]
    k["a"]["sources"] = {"flash_attn/cute/softmax.py": str(tmp_path / "a" / "softmax.py")}
    k["b"]["sources"] = {"flash_attn/cute/softmax.py": str(tmp_path / "b" / "softmax.py")}
    by_line = {g.line: g.source for g in M.spill_lines(k)}
    assert by_line == {5: "old_a_code(x)  # A line 5", 9: "b9()"}
    md = render_markdown(c)
    assert "`old_a_code(x)  # A line 5`" in md and "new_b_code" not in md
    assert "old_a_code(x)" in render_html(c)


# ---------------------------------------------------------------- ANSI colour codes


def test_ansi_colour_codes_never_reach_an_error_sentence_or_its_log():
    from cutediff_tui.core.build import describe_failure
    from cutediff_tui.core.recipes import BUILTINS

    err = {
        "stage": "recipe",
        "type": "DSLRuntimeError",
        "message": "\x1b[31mError:\x1b[0m bad layout \x1b[1;33m(4,8)\x1b[0m",
        "traceback": "Traceback (most recent call last):\n  \x1b[35mFile\x1b[0m x.py\nDSLRuntimeError: bad",
    }
    exc = describe_failure(err, "B", next(iter(BUILTINS.values())))
    assert "\x1b" not in exc.sentence() and "Error: bad layout (4,8)" in exc.sentence()
    assert "\x1b" not in exc.log and "File x.py" in exc.log
    exc.log = "later \x1b[32mgreen\x1b[0m"  # build.py sets the worker's output after the fact
    assert exc.log == "later green"


def test_a_failed_side_keeps_its_log_without_colours_in_the_comparison(tmp_path):
    from cutediff_tui.core.analysis_pipeline import analyze
    from cutediff_tui.core.errors import CompileError
    from cutediff_tui.core.options import SideOutcome, compare_options

    opts = compare_options("4.8.0", "4.8.0", {"kernel": str(RECIPES / "vector_store.py"), "arch": "sm_90a"})
    boom = CompileError(
        "Side A: \x1b[31mboom\x1b[0m.", "Run with --debug.", "Traceback …\n\x1b[31mValueError\x1b[0m: boom"
    )
    a = SideOutcome(spec=opts.specs[0], error=boom.sentence(), error_log=boom.log, params={"bits": 128})
    b = SideOutcome(spec=opts.specs[1], error="Side B: no build.", params={"bits": 16})
    c = analyze([a, b], opts)
    assert c["sides"]["a"]["error"] == "Side A: boom. Run with --debug."
    assert c["sides"]["a"]["error_log"] == "Traceback …\nValueError: boom"
    assert "error_log" not in c["sides"]["b"]  # no log: nothing recorded
    assert c["sides"]["b"]["params"] == {"bits": 16}


def test_debug_prints_each_failed_sides_log_before_the_error_line(capsys):
    import click

    from cutediff_tui.cli.common import CliState
    from cutediff_tui.cli.compare import print_side_errors

    c = {
        "sides": {
            "a": {"error": None},
            "b": {"error": "Side B: recipe r failed (ValueError: x[i]).", "error_log": "Traceback\nValueError: x[i]"},
        }
    }
    with click.Context(click.Command("compare"), obj=CliState(debug=False)):
        print_side_errors(c)
    quiet = capsys.readouterr().err
    assert "Traceback" not in quiet and "error: Side B: recipe r failed (ValueError: x[i])." in quiet
    with click.Context(click.Command("compare"), obj=CliState(debug=True)):
        print_side_errors(c)
    loud = capsys.readouterr().err
    assert "side B: log and traceback" in loud and "Traceback\nValueError: x[i]" in loud
    assert loud.index("Traceback") < loud.index("error: Side B")


# ---------------------------------------------------------------- the verdict


def test_code_changes_without_a_resource_change_keep_the_no_resource_change_verdict():
    """FA4 fwd sm_90a 4.5.1 vs 4.8.0 (measured): same registers, stack, spills and memory ops;
    PTX instructions 3795 → 3710, peak GPRs 176 → 175, some classes moved. That is no resource
    change (it read "no regression; 1 kernel(s) changed" before)."""
    import copy

    from cutediff_tui.core.compare import load_json
    from cutediff_tui.core.model.changes import verdict
    from cutediff_tui.samples import bundled_sample_dir

    c = load_json(bundled_sample_dir() / "comparison.json")
    c["kernels"] = c["kernels"][:1]
    k = c["kernels"][0]
    k["b"] = copy.deepcopy(k["a"])
    for key in ("spill_sites_diff", "deltas"):
        k.pop(key, None)
    assert verdict(c) == "no resource change in 1 kernel"
    k["b"]["ptx"]["instructions"] -= 85
    k["b"]["pressure"]["peaks"]["gpr"]["value"] -= 1
    k["b"]["instruction_classes"]["moves"] -= 28
    k["b"]["instruction_classes"]["control"] = k["b"]["instruction_classes"].get("control", 0) + 28
    v = verdict(c)
    assert v.startswith("no resource change in 1 kernel; other changes: FlashAttentionForwardSm100: ")
    assert "instruction classes changed" in v
    k["b"]["registers"] += 8
    assert verdict(c).startswith("FlashAttentionForwardSm100 regresses: registers")


# ---------------------------------------------------------------- diff of result folders


def test_diff_of_a_result_folder_takes_each_kernel_once_not_its_lineinfo_twin(tmp_path):
    """``cutediff diff SAMPLE/a SAMPLE/b`` paired 8 kernels (4 plus 4 ``#2`` line-info twins)."""
    from cutediff_tui.core.artifacts_diff import without_lineinfo_twins
    from cutediff_tui.samples import bundled_sample_dir

    cubins = sorted((bundled_sample_dir() / "a").rglob("*.cubin"))
    assert len(cubins) == 8
    kept = without_lineinfo_twins(cubins)
    assert [p.parent.name for p in kept] == ["000", "001", "002", "003"]
    (tmp_path / "x-lineinfo").mkdir()
    (tmp_path / "x-lineinfo" / "k.cubin").write_bytes(b"")
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "k.cubin").write_bytes(b"")
    lone = sorted(tmp_path.rglob("*.cubin"))
    assert without_lineinfo_twins(lone) == lone  # a line-info folder without its twin is a kernel


# ---------------------------------------------------------------- Rich markup in the terminal


def test_compiler_text_in_the_terminal_tables_is_never_markup():
    """A ptxas message and a kernel name with brackets print as written (``[i]`` vanished)."""
    from rich.console import Console

    from cutediff_tui.render import comparison_tables

    c = make_comparison(bench=False, crosscheck=True)
    cell = c["crosscheck"]["FlashAttentionForwardSm100"]["matrix"][0]
    cell["error"] = "ptxas fatal: bad operand x[i] in [bold]fma[/bold]"
    con = Console(width=300, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for r in comparison_tables(c):
        con.print(r)
    assert "ptxas fatal: bad operand x[i] in [bold]fma[/bold]" in con.export_text()
