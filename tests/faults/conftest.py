"""Fixtures of the fault tests: a real DSL environment (shared, from the session cache) and caches
that borrow its environments but keep their own builds (so that corrupting them harms no other test)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .helpers import PIN_LIST


@pytest.fixture(scope="session")
def env48(compile_cache):
    """DSL 4.8.0 with FA4 4.0.0b16 / quack 0.4.1, created (or reused) in the session cache."""
    from cutediff_tui.core.toolchain import create_env, parse_side

    old = os.environ.get("CUTEDIFF_CACHE_DIR")
    os.environ["CUTEDIFF_CACHE_DIR"] = str(compile_cache)
    try:
        return create_env(parse_side("4.8.0", PIN_LIST))
    finally:
        if old is None:
            os.environ.pop("CUTEDIFF_CACHE_DIR", None)
        else:
            os.environ["CUTEDIFF_CACHE_DIR"] = old


def borrow_envs(cache: Path, compile_cache: Path) -> Path:
    """A cache at ``cache`` whose envs/ and tools/ are the session cache's (builds stay separate)."""
    cache.mkdir(parents=True, exist_ok=True)
    for sub in ("envs", "tools"):
        (compile_cache / sub).mkdir(parents=True, exist_ok=True)
        link = cache / sub
        if not link.exists():
            link.symlink_to(compile_cache / sub, target_is_directory=True)
    return cache


@pytest.fixture
def own_cache(tmp_path, compile_cache, env48, monkeypatch) -> Path:
    """A fresh build cache (environments borrowed), set as CUTEDIFF_CACHE_DIR for this test."""
    cache = borrow_envs(tmp_path / "cache", compile_cache)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs (root only); yields a function ``mount(size, ro=False) -> Path``."""
    mounted: list[Path] = []

    def mount(size: str, name: str = "mnt") -> Path:
        point = tmp_path / name
        point.mkdir()
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(point)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            pytest.skip(
                f"cannot mount a tmpfs here ({proc.stderr.strip() or proc.returncode}); "
                "the disk-full and read-only cases need one"
            )
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def remount_ro(point: Path) -> None:
    proc = subprocess.run(["mount", "-o", "remount,ro", str(point)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot remount the tmpfs read-only ({proc.stderr.strip()})")
