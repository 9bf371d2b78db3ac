"""Bench pieces that need no GPU: statistics, verdicts, shapes, the worker protocol, no-GPU message."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

from cutediff_tui.core.bench.runner import SideWorker, _expect, check_gpu
from cutediff_tui.core.bench.shapes import DEFAULT_SHAPES, parse_shape
from cutediff_tui.core.bench.stats import compare_samples, quantile, ratio_interval, summarize, verdict
from cutediff_tui.core.errors import CutediffError


def test_summary_median_and_iqr():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.median_ms == 3.0 and s.n == 5 and s.min_ms == 1.0
    assert s.iqr_ms == pytest.approx(quantile([1, 2, 3, 4, 100], 0.75) - quantile([1, 2, 3, 4, 100], 0.25))


def test_verdicts_from_intervals():
    assert verdict(1.02, 1.04) == "SLOWER"
    assert verdict(0.95, 0.97) == "FASTER"
    assert verdict(0.995, 1.005) == "SAME"
    assert verdict(0.999, 1.02) == "UNSURE"


def test_three_percent_slowdown_is_detected_and_noise_is_same():
    rng = random.Random(1)
    a = [10 + rng.gauss(0, 0.05) for _ in range(200)]
    b = [10.3 + rng.gauss(0, 0.05) for _ in range(200)]
    r = compare_samples(a, b)
    assert r["verdict"] == "SLOWER" and 1.025 < r["ratio"] < 1.035 and r["ci_low"] < r["ratio"] < r["ci_high"]
    same = compare_samples(a, [10 + rng.gauss(0, 0.05) for _ in range(200)])
    assert same["verdict"] == "SAME"


def test_bootstrap_is_deterministic():
    a, b = [1.0, 1.1, 0.9, 1.05], [1.2, 1.1, 1.3, 1.25]
    assert ratio_interval(a, b) == ratio_interval(a, b)


def test_shapes():
    assert [s.label for s in DEFAULT_SHAPES] == ["8192x32h/4", "32768x32h/8", "32768x16h/1"]
    s = parse_shape("4096x8h/2", hdim=64)
    assert (s.total, s.heads, s.docs, s.hdim) == (4096, 8, 2, 64)
    with pytest.raises(CutediffError):
        parse_shape("4096x8")
    with pytest.raises(CutediffError):
        parse_shape("2x8h/4")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_no_gpu_gives_one_sentence():
    with pytest.raises(CutediffError) as e:
        check_gpu()
    assert "No NVIDIA GPU was found" in str(e.value)
    proc = subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", "bench", "4.5.1", "4.8.0"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "No NVIDIA GPU was found" in proc.stderr and "Traceback" not in proc.stderr


def test_stream_protocol_events_are_read_and_errors_become_sentences(tmp_path):
    """The runner's side of the line protocol, against a process that writes the same events."""
    r, w = os.pipe()
    script = (
        "import json, os, sys\n"
        f"f = os.fdopen({w}, 'w', buffering=1)\n"
        "f.write(json.dumps({'event': 'ready', 'shape': 's', 'seconds': 1.0}) + '\\n')\n"
        "line = sys.stdin.readline()\n"
        "f.write(json.dumps({'event': 'samples', 'shape': 0, 'ms': [1.0, 2.0]}) + '\\n')\n"
        "f.write(json.dumps({'event': 'error', 'kind': 'oom', 'message': 'CUDA out of memory'}) + '\\n')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, text=True, pass_fds=(w,))
    os.close(w)
    worker = SideWorker("b", env=None)  # type: ignore[arg-type]
    worker.proc, worker.events = proc, os.fdopen(r)
    assert _expect(worker, "ready")["seconds"] == 1.0
    worker.command("round 0")
    assert _expect(worker, "samples")["ms"] == [1.0, 2.0]
    with pytest.raises(CutediffError, match="ran out of memory"):
        _expect(worker, "samples")
    proc.wait(timeout=10)
    with pytest.raises(CutediffError, match="ended unexpectedly"):
        worker.log_path = tmp_path / "none.log"
        worker.log_path.write_text("boom\n")
        _expect(worker, "samples")


def test_recorded_h200_run_agrees_with_standalone_within_two_percent():
    """The recorded H200 acceptance run (benchmarks/results/h200/run3) is consistent."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "h200" / "run3"
    bench = json.loads((root / "bench.json").read_text())
    for side, version in (("a", "4.5.1"), ("b", "4.8.0")):
        ref = json.loads((root / f"standalone-{version}.json").read_text())["shapes"]
        for row in bench["shapes"]:
            ours = row[side]["median_ms"]
            theirs = ref[row["shape"]["label"]]["median_ms"]
            assert abs(ours / theirs - 1) < 0.02, (version, row["shape"]["label"])
        assert all(len(row["samples"][side]) == 400 for row in bench["shapes"])


def test_round_paired_interval_cancels_drift_shared_by_both_sides():
    """GPU clocks that drift between rounds move A and B of a round alike: pairing the rounds keeps
    the interval tight where resampling each side's pooled samples calls it UNSURE."""
    rng = random.Random(3)
    levels = [1.0, 1.08, 0.95, 1.12, 1.0, 0.9, 1.05, 1.1, 0.97, 1.02]
    a = [lv * (1 + rng.gauss(0, 0.002)) for lv in levels for _ in range(20)]
    b = [lv * 1.001 * (1 + rng.gauss(0, 0.002)) for lv in levels for _ in range(20)]
    sizes = [20] * 10
    flat = compare_samples(a, b)
    paired = compare_samples(a, b, rounds=(sizes, sizes))
    assert paired["interval"] == "rounds" and flat["interval"] == "samples"
    assert paired["verdict"] == "SAME" and paired["ci_high"] - paired["ci_low"] < 0.01
    assert flat["ci_high"] - flat["ci_low"] > 3 * (paired["ci_high"] - paired["ci_low"])


def test_round_paired_interval_is_wide_when_one_side_has_slow_rounds():
    """A slowdown that hits one side's rounds only (the first round after a profiler session, seen
    on the H200) is not shared: the paired interval widens instead of hiding it."""
    rng = random.Random(4)
    a = [(1.15 if r in (2, 4, 6, 8) else 1.0) * (1 + rng.gauss(0, 0.002)) for r in range(10) for _ in range(20)]
    b = [(1.15 if r in (1, 3, 7, 9) else 1.0) * (1 + rng.gauss(0, 0.002)) for r in range(10) for _ in range(20)]
    paired = compare_samples(a, b, rounds=([20] * 10, [20] * 10))
    assert paired["verdict"] == "UNSURE"


def test_rounds_are_resampled_in_order_balanced_blocks():
    """The side that runs second in a round is slower (seen on the H200, A/A control): rounds
    alternate the order, and blocks of two rounds cancel it where single rounds cannot."""
    from cutediff_tui.core.bench.stats import round_units

    assert round_units(10) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert round_units(7) == [[0, 1], [2, 3], [4, 5], [6]]
    assert round_units(5) == [[0], [1], [2], [3], [4]]  # fewer than three blocks: single rounds
    rng = random.Random(5)
    a, b = [], []
    for r in range(10):  # A first in even rounds: B pays 2 % there, A pays it in odd rounds
        second_b = 1.02 if r % 2 == 0 else 1.0
        second_a = 1.0 if r % 2 == 0 else 1.02
        a += [second_a * (1 + rng.gauss(0, 0.002)) for _ in range(20)]
        b += [second_b * (1 + rng.gauss(0, 0.002)) for _ in range(20)]
    sizes = ([20] * 10, [20] * 10)
    blocks = compare_samples(a, b, rounds=sizes)
    assert blocks["verdict"] == "SAME" and blocks["ci_high"] - blocks["ci_low"] < 0.01, blocks
    from cutediff_tui.core.bench.stats import round_ratio_interval, split_rounds

    _, lo, hi = round_ratio_interval(split_rounds(a, sizes[0]), split_rounds(b, sizes[1]), block=1)
    assert hi - lo > 2 * (blocks["ci_high"] - blocks["ci_low"])  # single rounds: the order effect widens it


def test_split_rounds_keeps_empty_rounds_in_place():
    from cutediff_tui.core.bench.stats import split_rounds

    assert split_rounds([1.0, 2.0, 3.0], [2, 0, 1]) == [[1.0, 2.0], [], [3.0]]
