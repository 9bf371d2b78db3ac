"""Bad input to bisect and sweep: one sentence, exit 2, nothing built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PINS = ["--with", "flash-attn-4==4.0.0b16"]


def run(args, tmp_path, timeout=60):
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.mark.parametrize(
    "args,needle",
    [
        (["sweep", "4.5.1", "--arch", "sm_90a", "--figure", "spil_store_bytes"], "Did you mean spill_store_bytes"),
        (["sweep", "4.5.1", "--arch", "sm_90a", "--param", "hdim=256:64"], "is empty or malformed"),
        (["sweep", "4.5.1", "--arch", "sm_90a", "--param", "hdim"], "is not NAME=VALUES"),
        (["sweep", "4.5.1", "--arch", "sm_90a", "--param", "dtype=bf16,fp8"], "is not one of"),
        (["sweep", "4.5.1", "4.5.1", "--arch", "sm_90a"], "listed twice"),
        (["sweep", "4.5.1", "--arch", "sm_90a", "--kernel-filter", "(("], "is not a regular expression"),
        (["sweep", "4.5.1", "--arch", "sm_80"], "no kernel for sm_80"),
        (
            ["sweep", "4.5.1", "--arch", "sm_90a", "--executor", "local", "--scheduler", "tcp://127.0.0.1:1"],
            "--executor local was asked for",
        ),
        (
            ["bisect", "--good", "4.8.0", "--bad", "4.5.1", "--arch", "sm_100a", "--metric", "stack_bytes>0"],
            "is not older",
        ),
        (
            [
                "bisect",
                "--good",
                "4.5.1",
                "--bad",
                "4.8.0",
                "--arch",
                "sm_100a",
                "--metric",
                "stack_bytes>0",
                "--versions",
                "/nonexistent/v.txt",
            ],
            "cannot be read",
        ),
    ],
)
def test_one_sentence(args, needle, tmp_path):
    proc = run(args, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "cache" / "artifacts").exists() or not any((tmp_path / "cache" / "artifacts").iterdir())


def test_unreachable_scheduler(tmp_path):
    proc = run(["sweep", "4.5.1", "--arch", "sm_90a", "--scheduler", "tcp://127.0.0.1:1"], tmp_path)
    assert proc.returncode == 2
    assert "Could not reach the Dask scheduler at tcp://127.0.0.1:1" in proc.stderr and "Traceback" not in proc.stderr


def test_damaged_sweep_result_does_not_open(tmp_path):
    p = tmp_path / "s.json"
    p.write_text('{"schema": "cutediff.sweep/1", "cells": [')
    proc = run(["open", str(p)], tmp_path)
    assert proc.returncode == 2 and "is not a JSON comparison (it does not parse" in proc.stderr
    assert "sweep and bisect" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_ctrl_c_during_a_sweep_stops_every_worker(compile_cache):
    """Ctrl-C (SIGINT to the terminal's process group) while the pool compiles FA4: exit 130, one
    line, no compile worker left and no half-written build."""
    import signal
    import time

    from .helpers import ROOT, cli_env, default_sigint

    art = compile_cache / "artifacts"
    before = {p.name for p in art.iterdir()} if art.is_dir() else set()

    def workers() -> set[str]:
        return set(
            subprocess.run(["pgrep", "-f", "cutediff_tui.core.worker"], capture_output=True, text=True).stdout.split()
        )

    # workers of other processes (a test before this one, a run beside it) are not this sweep's
    others = workers()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cutediff_tui.cli",
            "sweep",
            "4.5.1",
            "4.8.0",
            *PINS,
            "--with",
            "quack-kernels==0.4.1",
            "--kernel",
            "fa4-fwd",
            "--arch",
            "sm_90a",
            "--param",
            "hdim=64,128",
            "--no-cache",
            "--jobs",
            "2",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(compile_cache),
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
            art.is_dir() and any(p.name.startswith(".tmp-") for p in art.iterdir())
        ):
            time.sleep(0.2)
        time.sleep(3)
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-2000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: stopped the workers; 0 of 4 cells finished"), err[
        -3000:
    ]
    assert "run the same command to resume" in lines[0]
    time.sleep(1)
    left = {p.name for p in art.iterdir()} - before
    assert not [n for n in left if n.startswith(".tmp-")], left
    left_workers = workers() - others
    assert not left_workers, left_workers
    # the cells compiled on warm workers: their servers (logging to warm/server-<our pid>-…) are gone
    servers = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and f"/server-{proc.pid}-" in os.readlink(p / "fd" / "2"):
                servers.append(int(p.name))
        except OSError:
            continue
    assert not servers, servers


@pytest.mark.parametrize(
    "content,needle",
    [
        (b'{"schema": "cutediff.bisect/1", "recipe": "fa4-fwd"}', "lacks last_good"),
        (b"[1, 2]", "cutediff"),
        (b'\xff\xfe{"schema": "cutediff.sweep/1"}', "cutediff"),
        (b'{"cells": [], "schema": "cutediff.sweep/1", "figure": "global>0"}', None),
    ],
)
def test_odd_results_given_to_open(content, needle, tmp_path):
    """A bisect result without its versions, a JSON list, bytes that are not UTF-8, a sweep whose
    schema key comes last: one sentence each (the last one opens, so it is only parsed here)."""
    from cutediff_tui.cli.tui import sweep_or_bisect

    p = tmp_path / "r.json"
    p.write_bytes(content)
    if needle is None:
        assert sweep_or_bisect(p)["schema"] == "cutediff.sweep/1"
        return
    proc = run(["open", str(p)], tmp_path)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


SWEEP_CELL = {
    "key": "k",
    "side": "4.5.1",
    "arch": "sm_90a",
    "axis": {"arch": "sm_90a", "hdim": 64},
    "status": "ok",
    "kernels": [{"name": "K", "figures": {"spill_store_bytes": 0}}],
}


@pytest.mark.parametrize(
    "cells,needle",
    [
        ("x", "$.cells"),
        ([None], "$.cells[0]"),
        ([dict(SWEEP_CELL, axis="x")], "$.cells[0].axis"),
        ([dict(SWEEP_CELL, kernels=None)], "$.cells[0].kernels"),
        ([dict(SWEEP_CELL, kernels=[{"name": "K", "figures": {"spill_store_bytes": [1]}}])], "figures"),
        (
            [dict(SWEEP_CELL, kernels=[{"name": "K", "figures": {"spill_store_bytes": -16}}])],
            "-16 as spill_store_bytes",
        ),
        ([dict(SWEEP_CELL, kernels=[{"name": "K", "figures": {"registers": float("nan")}}])], "nan as registers"),
    ],
)
def test_a_sweep_result_of_the_wrong_shape_is_named_in_one_sentence(cells, needle, tmp_path):
    """Found by feeding mutated sweeps to `open`: these were internal errors (AttributeError,
    TypeError in the heatmap's grid) or opened with a negative or NaN figure."""
    import json

    p = tmp_path / "s.json"
    p.write_text(json.dumps({"schema": "cutediff.sweep/1", "figure": "spill_store_bytes", "cells": cells}))
    proc = run(["open", str(p)], tmp_path)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3


def test_a_bisect_result_from_someone_else_builds_nothing_unasked(tmp_path):
    """Opening a bisect result compiles its pair: the pins (any package) and the recipe (code) come
    from the file's author. Without --yes and without a terminal to ask on, nothing is installed
    or run, and the sentence names what would have been."""
    import json

    marker = tmp_path / "ran"
    recipe = tmp_path / "evil.py"
    recipe.write_text(
        f"open({str(marker)!r}, 'w').write('x')\nfrom cutediff_tui.core.recipes import recipe\n\n"
        "@recipe()\ndef evil(ctx):\n    pass\n"
    )
    doc = {
        "schema": "cutediff.bisect/1",
        "last_good": "4.5.1",
        "first_bad_candidates": ["4.8.0"],
        "recipe": str(recipe),
        "params": {"x": 1},
        "profile": {"arch": "sm_90a"},
        "pins": ["some-package-from-a-stranger==6.6.6"],
    }
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc))
    proc = run(["open", str(p)], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "some-package-from-a-stranger==6.6.6" in proc.stderr and "--yes" in proc.stderr
    assert "runs as code with your rights" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists() and not (tmp_path / "cache" / "envs").exists()
