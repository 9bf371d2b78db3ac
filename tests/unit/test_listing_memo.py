"""The parsed listings and SASS alignment a watch round makes are reused by the view it builds
for the screen (the pair analysis and the SASS view read the same two listings): the same
objects while their files stay as they are, read again when a text is made again.

Real files: a copy of the bundled sample's saved result (FA4 forward, 4.5.1 vs 4.8.0).
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

from cutediff_tui.core.analysis_pipeline import load_listing, pair_analysis, sass_alignment
from cutediff_tui.core.model.confine import absolutize
from cutediff_tui.samples import SAMPLE_NAME, sample_dirs
from cutediff_tui.ui.model import build_model


def _sample_copy(tmp_path):
    src = next(d / SAMPLE_NAME for d in sample_dirs() if (d / SAMPLE_NAME / "comparison.json").is_file())
    dst = tmp_path / "result"
    shutil.copytree(src, dst)
    return absolutize(json.loads((dst / "comparison.json").read_text()), dst), dst


def test_the_view_for_the_screen_reuses_the_pair_analysis_listings_and_alignment(tmp_path, monkeypatch):
    from cutediff_tui.core.analysis import align as align_mod

    comparison, _ = _sample_copy(tmp_path)
    k = comparison["kernels"][0]
    a, b = k["a"], k["b"]
    la, lb = load_listing(a), load_listing(b)
    assert load_listing(a) is la and load_listing(b) is lb
    made = []
    real = align_mod.align_sass
    monkeypatch.setattr(align_mod, "align_sass", lambda fa, fb: made.append(1) or real(fa, fb))  # counts, runs
    pair_analysis(a, b)
    model = build_model(comparison, 0, "sass")
    assert len(made) == 1  # the view took the pair analysis' alignment
    al = sass_alignment(la.main, lb.main)
    assert len(model.rows) == len(al.rows) and len(made) == 1
    assert load_listing(a) is la


def test_a_text_made_again_is_read_again(tmp_path):
    comparison, dst = _sample_copy(tmp_path)
    a = comparison["kernels"][0]["a"]
    first = load_listing(a)
    text = Path(a["files"]["dir"]) / "sass.txt.gz"
    assert text.is_relative_to(dst)
    data = gzip.decompress(text.read_bytes())
    time.sleep(0.01)
    text.unlink()
    text.write_bytes(gzip.compress(data))  # the same listing, written anew
    again = load_listing(a)
    assert again is not first
    assert [i.text for i in again.main.instrs] == [i.text for i in first.main.instrs]
    assert load_listing(a) is again
