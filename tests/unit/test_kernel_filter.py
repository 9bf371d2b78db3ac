"""``--kernel-filter REGEX``: one meaning on every command that shows kernels (issue 18 leftovers).

On the bundled sample (four FA4 kernels, no compile): ``core/model/kernel_filter.py`` (the one
matcher), ``cutediff diff RESULT`` (tables, verdict, ``--json``), ``compare``'s save/emit path
(``--save`` keeps every kernel), ``report`` in every format, and the one shared sentence for a
filter that matches nothing or is not a regular expression.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from cutediff_tui.cli import main
from cutediff_tui.cli.compare import emit_comparison
from cutediff_tui.core.compare import load_json
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.model.kernel_filter import (
    NAMES_SHOWN,
    filter_comparison,
    no_match_sentence,
    select_kernels,
)
from cutediff_tui.samples import bundled_sample_dir

SAMPLE = bundled_sample_dir()
ALL = ["FlashAttentionForwardSm100", "FlashAttentionBackwardPreprocess", "FlashAttentionBackwardSm100",
       "FlashAttentionBackwardPostprocess"]  # fmt: skip
KEEP_ONE = "Forward"  # the forward kernel only
NONE = "NoSuchKernel"
BAD = "Fwd("


@pytest.fixture(scope="module")
def sample() -> dict:
    return load_json(SAMPLE / "comparison.json")


def run(args: list[str]):
    return CliRunner().invoke(main, args, prog_name="cutediff")


def names(c: dict) -> list[str]:
    return [k["name"] for k in c["kernels"]]


def one_error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output, res.stderr
    return lines[0]


# ---------------------------------------------------------------- core: the one matcher


def test_the_sample_has_the_four_kernels_these_tests_name(sample):
    assert names(sample) == ALL


def test_filter_keeps_matching_kernels_and_their_crosscheck(sample):
    shown = filter_comparison(sample, KEEP_ONE)
    assert names(shown) == ["FlashAttentionForwardSm100"]
    assert shown["kernel_filter"] == KEEP_ONE
    assert list(shown["crosscheck"]) == ["FlashAttentionForwardSm100"]
    assert names(sample) == ALL and "kernel_filter" not in sample  # the input is not touched


def test_filter_is_case_sensitive_re_search_on_name_or_symbol(sample):
    with pytest.raises(CutediffError):
        filter_comparison(sample, "forward")  # case-sensitive: matches nothing
    # 'bwd_preprocess' is in the symbol (kernel_cutlass_kernel_flash_attncuteflash_bwd_preprocess…) only
    assert names(filter_comparison(sample, "bwd_preprocess")) == ["FlashAttentionBackwardPreprocess"]
    assert names(filter_comparison(sample, "Backward")) == ALL[1:]  # search, not match: anywhere in the name


def test_no_filter_keeps_everything(sample):
    assert names(filter_comparison(sample, None)) == ALL
    assert names(filter_comparison(sample, "")) == ALL


def test_no_match_names_the_filter_and_up_to_five_kernels(sample):
    with pytest.raises(CutediffError) as exc:
        filter_comparison(sample, NONE)
    text = exc.value.sentence()
    assert f"--kernel-filter {NONE!r} matches none of the 4 kernel(s)" in text
    assert all(n in text for n in ALL) and exc.value.hint
    many = [{"name": f"K{i}"} for i in range(8)]
    sentence = no_match_sentence("X", many)
    assert "K4" in sentence and "K5" not in sentence and f"({8 - NAMES_SHOWN} more)" in sentence


def test_invalid_regex_is_one_sentence(sample):
    with pytest.raises(CutediffError, match=r"is not a regular expression"):
        filter_comparison(sample, BAD)
    with pytest.raises(CutediffError, match=r"is not a regular expression"):
        select_kernels([], BAD)


def test_a_failed_side_speaks_instead_of_the_filter(sample):
    broken = dict(sample, sides={**sample["sides"], "b": {**sample["sides"]["b"], "error": "boom"}})
    assert names(filter_comparison(broken, NONE)) == []


# ---------------------------------------------------------------- diff RESULT (compare from a result)


def test_diff_result_tables_and_verdict_show_only_matching_kernels():
    res = run(["diff", str(SAMPLE), "--kernel-filter", KEEP_ONE])
    assert res.exit_code == 0, res.output
    assert "FlashAttentionForwardSm100" in res.stdout and "Backward" not in res.stdout
    assert f"--kernel-filter {KEEP_ONE!r}" in res.stdout
    (verdict,) = [ln for ln in res.stdout.splitlines() if ln.startswith("verdict:")]
    assert "FlashAttentionForwardSm100" in verdict
    other = run(["diff", str(SAMPLE), "--kernel-filter", "Postprocess"])
    (verdict,) = [ln for ln in other.stdout.splitlines() if ln.startswith("verdict:")]
    assert "Forward" not in verdict and "Backward" not in other.stdout.replace("FlashAttentionBackwardPostprocess", "")


def test_diff_result_json_carries_only_matching_kernels_and_the_filter():
    res = run(["diff", str(SAMPLE), "--kernel-filter", KEEP_ONE, "--json", "-"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["kernel_filter"] == KEEP_ONE and names(doc) == ["FlashAttentionForwardSm100"]
    whole = json.loads(run(["diff", str(SAMPLE), "--json", "-"]).stdout)
    assert names(whole) == ALL and "kernel_filter" not in whole


@pytest.mark.parametrize("listing", [[], ["--listing"]])
def test_diff_result_filter_matching_nothing_is_one_sentence_exit_2(listing):
    line = one_error_line(run(["diff", str(SAMPLE), *listing, "--kernel-filter", NONE]))
    assert NONE in line and "FlashAttentionForwardSm100" in line


def test_diff_result_invalid_filter_is_one_sentence_exit_2():
    line = one_error_line(run(["diff", str(SAMPLE), "--kernel-filter", BAD]))
    assert BAD in line and "is not a regular expression" in line


# ---------------------------------------------------------------- compare: --save is data


def test_compare_save_keeps_every_kernel_and_json_only_the_filtered(sample, tmp_path):
    saved, out = tmp_path / "saved", tmp_path / "c.json"
    errors = emit_comparison(sample, str(out), saved, lambda _e: None, kernel_filter=KEEP_ONE)
    assert errors == []
    whole = json.loads((saved / "comparison.json").read_text())
    assert names(whole) == ALL and "kernel_filter" not in whole
    shown = json.loads(out.read_text())
    assert names(shown) == ["FlashAttentionForwardSm100"] and shown["kernel_filter"] == KEEP_ONE


def test_compare_help_says_save_keeps_every_kernel():
    res = run(["compare", "--help"])
    assert "--save keeps every kernel" in " ".join(res.stdout.split())


# ---------------------------------------------------------------- report in every format


@pytest.mark.parametrize("fmt", ["md", "html", "json", "csv"])
def test_report_holds_only_matching_kernels(fmt, tmp_path):
    out = tmp_path / f"r.{fmt}"
    res = run(["report", str(SAMPLE), "--kernel-filter", KEEP_ONE, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert KEEP_ONE in res.stderr  # the progress line names the filter (a CSV has no place for it)
    text = out.read_text()
    assert "FlashAttentionForwardSm100" in text
    for other in ALL[1:]:
        assert other not in text, (fmt, other)
    if fmt == "json":
        doc = json.loads(text)
        assert doc["kernel_filter"] == KEEP_ONE and names(doc) == ["FlashAttentionForwardSm100"]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows and {r["kernel"] for r in rows} == {"FlashAttentionForwardSm100"}
    else:
        assert "Only the kernels whose name or symbol matches --kernel-filter" in text
        assert f"{KEEP_ONE}</code>" in text or f"`{KEEP_ONE}`" in text


@pytest.mark.parametrize("fmt", ["md", "html", "json", "csv"])
def test_report_filter_matching_nothing_or_invalid_writes_nothing(fmt, tmp_path):
    out = tmp_path / f"r.{fmt}"
    line = one_error_line(run(["report", str(SAMPLE), "--kernel-filter", NONE, "-o", str(out)]))
    assert NONE in line and "FlashAttentionBackwardSm100" in line
    line = one_error_line(run(["report", str(SAMPLE), "--kernel-filter", BAD, "-o", str(out)]))
    assert "is not a regular expression" in line
    assert not out.exists()


def test_report_without_filter_has_every_kernel_and_no_filter_line(tmp_path):
    out = tmp_path / "r.md"
    assert run(["report", str(SAMPLE), "-o", str(out)]).exit_code == 0
    text = out.read_text()
    assert all(n in text for n in ALL) and "--kernel-filter" not in text


def test_check_json_shows_the_kernels_checked(tmp_path):
    out = tmp_path / "c.json"
    res = run(
        ["check", "--result", str(SAMPLE), "--kernel-filter", "Pre", "--max-spill-bytes", "0", "--json", str(out)]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert names(doc) == ["FlashAttentionBackwardPreprocess"] and doc["kernel_filter"] == "Pre"


def test_check_filter_matching_nothing_uses_the_same_sentence(sample):
    res = run(["check", "--result", str(SAMPLE), "--kernel-filter", NONE, "--max-spill-bytes", "0"])
    assert res.exit_code == 2
    assert no_match_sentence(NONE, sample["kernels"]) in res.stderr
