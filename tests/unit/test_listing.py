"""Listing diffs outside the TUI (issue 15 item 6): ``core/listing.py`` and ``--listing`` of
``compare``/``diff``, on the bundled FA4 sample (saved folder, no compile) and on the real SASS/PTX
of the sample recipes ``warp_budgets`` and ``vector_store`` (``tests/unit/data/recipes/``)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.listing import kernel_hunks, line_tags, listing_hunks, unified_diff
from cutediff_tui.samples import bundled_sample_dir

SAMPLE = bundled_sample_dir()
DATA = Path(__file__).resolve().parent / "data" / "recipes"
HEADER = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@ hunk (\d+)/(\d+) · (\d+) lines · ")


@pytest.fixture(scope="module")
def sample() -> dict:
    return load_json(SAMPLE / "comparison.json")


def run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def check_hunk_counts(text: str) -> int:
    """Every ``@@`` header counts exactly the lines under it (as ``patch`` and ``delta`` read it)."""
    lines = text.splitlines()
    seen = 0
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if not m:
            continue
        seen += 1
        body = []
        for nxt in lines[i + 1 :]:
            if nxt.startswith(("@@", "--- ", "+++ ")):
                break
            body.append(nxt)
        old = sum(1 for b in body if b[:1] in (" ", "-"))
        new = sum(1 for b in body if b[:1] in (" ", "+"))
        assert (old, new) == (int(m.group(2)), int(m.group(4))), line
        # the hunk's own size; context rows of a neighbouring change add their -/+ lines
        assert int(m.group(7)) <= sum(1 for b in body if b[:1] in "-+")
    return seen


def test_top_hunks_of_the_sample_largest_first(sample):
    hunks = listing_hunks(sample, top=3, context=2)
    assert len(hunks) == 3
    costs = [h.cost for h in hunks]
    assert costs == sorted(costs, reverse=True)
    # the global ranking agrees with each kernel's own: no kernel was skipped wrongly
    every = sorted((h.cost for h in listing_hunks(sample, context=0)), reverse=True)
    assert costs == every[:3]
    for h in hunks:
        assert 1 <= h.rank <= h.of
        assert h.size <= sum(1 for ln in h.lines if ln.mark in "-+")
        assert sum(1 for ln in h.lines if ln.mark == " ") <= 2 * 2
    text = "\n".join(unified_diff(sample, hunks))
    assert check_hunk_counts(text) == 3
    assert text.startswith("--- a/")
    assert "(A 4.5.1, SASS)" in text and "(B 4.8.0, SASS)" in text


def test_forward_kernel_hunks_rank_spill_code_first(sample):
    fwd = next(i for i, k in enumerate(sample["kernels"]) if k["name"] == "FlashAttentionForwardSm100")
    hunks = kernel_hunks(sample["kernels"][fwd], fwd, context=0, top=3)
    assert [h.rank for h in hunks] == [1, 2, 3]
    # the largest change of 4.8.0's forward kernel is the new spill reload block (+10 LDL)
    assert "LDL" in hunks[0].summary and "spill" in hunks[0].tags
    assert all(ln.mark == "+" for ln in hunks[0].lines) and any("LDL" in ln.text for ln in hunks[0].lines)


def test_kernel_filter_and_bad_regex(sample):
    hunks = listing_hunks(sample, top=5, kernel_filter="Postprocess$")
    assert hunks and {h.kernel for h in hunks} == {"FlashAttentionBackwardPostprocess"}
    with pytest.raises(CutediffError, match="not a regular expression"):
        listing_hunks(sample, kernel_filter="(")


def test_ptx_listing_of_the_sample(sample):
    hunks = listing_hunks(sample, view="ptx", top=2, context=1, kernel_filter="Forward")
    assert len(hunks) == 2 and all(h.view == "ptx" for h in hunks)
    assert check_hunk_counts("\n".join(unified_diff(sample, hunks))) == 2


def test_line_tags():
    assert line_tags("STL.64") == {"spill"}
    assert line_tags("LDL", spill=False) == {"spill"}
    assert line_tags("st.local.v4.b32") == {"spill"}
    assert line_tags("UTCHMMA.2CTA") == {"mma"}
    assert line_tags("tcgen05.mma.cta_group::1.kind::f16") == {"mma"}
    assert line_tags("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == {"mma"}
    assert line_tags("USETMAXREG.DEALLOC.CTAPOOL") == {"budget"}
    assert line_tags("setmaxnreg.inc.sync.aligned.u32") == {"budget"}
    assert line_tags("FFMA") == frozenset()


def test_cli_listing_of_a_saved_result_is_plain_when_piped(tmp_path):
    proc = run(["diff", str(SAMPLE), "--listing", "--top", "3"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout
    assert check_hunk_counts(proc.stdout) == 3
    assert proc.stdout.count("\n@@ ") + proc.stdout.startswith("@@ ") == 3


def test_cli_diff_one_path_without_listing_prints_the_tables(tmp_path):
    proc = run(["diff", str(SAMPLE / "comparison.json")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "FlashAttentionForwardSm100" in proc.stdout and "verdict:" in proc.stdout


def test_cli_diff_one_folder_without_result_is_one_sentence(tmp_path):
    proc = run(["diff", str(tmp_path), "--listing"], tmp_path)
    assert proc.returncode == 2
    assert "without a comparison.json" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_bad_kernel_filter_is_one_sentence(tmp_path):
    proc = run(["diff", str(SAMPLE), "--listing", "--kernel-filter", "("], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "(" in lines[0]


def test_cli_listing_options_without_listing_are_one_sentence(tmp_path):
    proc = run(["diff", str(SAMPLE), "--top", "3", "--ptx"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--top, --ptx only shape the --listing output" in proc.stderr


def _unzip(tmp_path: Path, name: str, ext: str) -> Path:
    p = tmp_path / f"{name}.{ext}"
    p.write_bytes(gzip.decompress((DATA / f"{name}.{ext}.gz").read_bytes()))
    return p


def test_cli_listing_of_register_budgets_sass(tmp_path):
    """A case the listing was not built for: warp_budgets 176/88 vs 184/80 as SASS text."""
    a, b = _unzip(tmp_path, "warp_budgets-176-88", "sass"), _unzip(tmp_path, "warp_budgets-184-80", "sass")
    proc = run(["diff", str(a), str(b), "--listing", "-C", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert check_hunk_counts(proc.stdout) == 2
    assert "-USETMAXREG.DEALLOC.CTAPOOL 0x58\n+USETMAXREG.DEALLOC.CTAPOOL 0x50" in proc.stdout
    assert "+USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xb8" in proc.stdout
    assert proc.stdout.count("· budget ·") == 2


def test_cli_listing_of_vector_store_ptx(tmp_path):
    """vector_store bits128 vs bits16 as PTX: the de-vectorised stores, one hunk."""
    a, b = _unzip(tmp_path, "vector_store-bits128", "ptx"), _unzip(tmp_path, "vector_store-bits16", "ptx")
    proc = run(["diff", str(a), str(b), "--listing", "--ptx", "--top", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert check_hunk_counts(proc.stdout) == 1
    assert proc.stdout.count("\n-st.global.v4.b32 ") == 8
    assert proc.stdout.count("\n+st.global.b16 ") == 64
