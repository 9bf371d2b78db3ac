"""Toolchain environments that cannot be made, or were left half made: one sentence, nothing partial.

Real ``uv`` against PyPI for the resolver cases (slow: network), real ``cutediff env create`` runs
killed part-way. The unknown-version, unresolvable-pin and no-network cases are in
test_compile_faults.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cutediff_tui.core.errors import ToolchainError
from cutediff_tui.core.toolchain import env_key, env_name, parse_side

from .helpers import FWD_SM100, ROOT, cli_env, cutediff, leftovers, one_sentence


@pytest.mark.slow
def test_version_with_no_wheel_for_this_python(tmp_path):
    """nvidia-cutlass-dsl 4.1.0 ships cp312 wheels only; this Python is 3.11 and uv finds no 3.12."""
    import shutil
    from pathlib import Path

    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    found = uv and subprocess.run([uv, "python", "find", "3.12"], capture_output=True).returncode == 0
    if sys.version_info[:2] == (3, 12) or found:
        pytest.skip("a Python 3.12 is available here, so DSL 4.1.0 is not refused")
    proc = cutediff(["env", "create", "4.1.0"], tmp_path)
    line = one_sentence(proc)
    assert "CuTe DSL 4.1.0 publishes wheels only for Python 3.12, and this machine has none" in line, line
    assert f"cutediff runs on Python {sys.version_info.major}.{sys.version_info.minor}" in line
    assert "pass --python PATH, or pick DSL 4.2 or newer" in line
    envs = tmp_path / "envs"  # refused before anything is written
    assert not leftovers(tmp_path) and not (envs.is_dir() and [p for p in envs.iterdir() if p.is_dir()])


@pytest.mark.parametrize(
    "side_a, side_b, with_",
    [
        ("4.8.0,einops==0.8.1,einops==0.8.0", "4.8.0", []),
        ("4.5.1", "4.8.0", ["--with", "quack-kernels==0.4.1", "--with", "quack-kernels==0.6.5"]),
    ],
    ids=["twice-in-one-side", "twice-in---with"],
)
def test_conflicting_pins(tmp_path, side_a, side_b, with_):
    proc = cutediff(["compare", side_a, side_b, *with_, *FWD_SM100], tmp_path / "cache")
    line = one_sentence(proc)
    assert "conflict: both name" in line and "Keep one pin per package" in line, line
    assert not (tmp_path / "cache").exists()  # refused before anything was made


def test_side_pin_still_replaces_a_shared_pin():
    spec = parse_side("4.8.0,quack-kernels==0.6.5", ["quack-kernels==0.4.1"])
    assert [str(p) for p in spec.pins] == ["quack-kernels==0.6.5"]
    with pytest.raises(ToolchainError, match="conflict"):
        parse_side("4.8.0,quack-kernels==0.6.5,quack-kernels==0.6.6")


def test_missing_wheelhouse(tmp_path):
    proc = cutediff(["env", "create", "4.8.0", "--wheelhouse", tmp_path / "no-such-wheelhouse"], tmp_path / "cache")
    line = one_sentence(proc)
    assert "no-such-wheelhouse does not exist" in line and "cutediff env download" in line
    assert not leftovers(tmp_path / "cache")


@pytest.mark.slow
def test_env_create_killed_midway_is_cleaned_up_by_the_next_run(tmp_path):
    """The whole ``cutediff env create`` process group is SIGKILLed while uv installs (a crash, a
    closed terminal): the half-made folder stays; the next run removes it, says so and succeeds."""
    cache = tmp_path / "cache"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cutediff_tui.cli", "env", "create", "4.8.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(cache),
        cwd=ROOT,
        start_new_session=True,
    )
    envs = cache / "envs"
    deadline = time.monotonic() + 300
    half = []
    while time.monotonic() < deadline and not half and proc.poll() is None:
        half = [p for p in envs.glob(".tmp-*") if (p / "site").is_dir()] if envs.is_dir() else []
        time.sleep(0.05)
    if not half:
        proc.kill()
        pytest.fail(f"the install never started (exit {proc.poll()}): {proc.stderr.read()[-2000:]!r}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert half[0].is_dir() and not (half[0] / "env.json").exists()  # what the crash left
    again = cutediff(["env", "create", "4.8.0"], cache)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "removed a half-created environment left by an earlier crash" in again.stderr
    assert not leftovers(cache)
    made = [p for p in envs.iterdir() if p.is_dir()]
    assert len(made) == 1 and json.loads((made[0] / "env.json").read_text())["spec"]["dsl"] == "4.8.0"


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["env.json-removed", "env.json-corrupt"])
def test_half_removed_or_corrupt_environment_is_replaced(tmp_path, damage):
    """An environment folder without a readable env.json (``env remove`` or an old cutediff cut
    short, a disk error) used to make every later ``env create`` fail on the rename."""
    cache = tmp_path / "cache"
    spec = parse_side("4.8.0")
    folder = cache / "envs" / env_name(spec, env_key(spec))
    (folder / "site" / "stale_package").mkdir(parents=True)
    (folder / "site" / "stale_package" / "__init__.py").write_text("x = 1\n")
    if damage == "env.json-corrupt":
        (folder / "env.json").write_text('{"format": 3, "key": ')
    proc = cutediff(["env", "create", "4.8.0"], cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"replacing the incomplete environment {folder.name}" in proc.stderr
    assert json.loads((folder / "env.json").read_text())["spec"]["dsl"] == "4.8.0"
    assert not (folder / "site" / "stale_package").exists()
    assert not leftovers(cache)
