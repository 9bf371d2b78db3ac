"""Shared test set-up: an isolated config dir; a persistent cache for the real compiles."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def compile_cache() -> Path:
    """Cache dir shared by the slow tests of one session (real environments and builds)."""
    path = Path(os.environ.get("CUTEDIFF_TEST_CACHE", ROOT / ".cache" / "test-cache"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def stamps():
    """The timing stamps (:func:`cutediff_tui.core.trace.stamp`) made during a test, as
    ``(message, time, facts)``, collected from the real timing log (no mock)."""
    import logging

    from cutediff_tui.core.trace import TIMING_LOG

    got: list[tuple[str, float, dict]] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.append((record.getMessage(), record.t, record.facts))  # type: ignore[attr-defined]

    handler = Collect(logging.DEBUG)
    level = TIMING_LOG.level
    TIMING_LOG.addHandler(handler)
    TIMING_LOG.setLevel(logging.DEBUG)
    try:
        yield got
    finally:
        TIMING_LOG.removeHandler(handler)
        TIMING_LOG.setLevel(level)


# ---------------------------------------------------------------- where the suite's time goes

_FOLDER_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Add each test's setup, call and teardown time to its folder (tests/faults, tests/tui, …)."""
    parts = report.nodeid.split("/")
    folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0].split("::")[0]
    _FOLDER_SECONDS[folder] = _FOLDER_SECONDS.get(folder, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """After the 20 slowest tests (``--durations=20``), the minutes per test folder: CI must stay
    under 35 minutes on two cores (CONTRIBUTING.md), and this says where to look first."""
    if not _FOLDER_SECONDS:
        return
    terminalreporter.section("time per test folder")
    for folder, seconds in sorted(_FOLDER_SECONDS.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds / 60:6.1f} min  {folder}")
