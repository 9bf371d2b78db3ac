"""Fixtures for the TUI tests: the bundled sample (or, until it exists, a comparison built
from ``samples/raw`` with the core's own functions), settings in a temporary folder.

``async def`` tests run under pytest-asyncio (``asyncio_mode = "auto"`` in pyproject.toml,
Textual's recommended set-up)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from cutediff_tui.core.paths import project_root

RAW = project_root() / "samples" / "raw"
VERSIONS = ["4.2.0", "4.3.5", "4.4.2", "4.5.0", "4.5.1", "4.6.0", "4.7.0", "4.8.0", "4.8.1.dev0"]


@pytest.fixture(scope="session")
def _cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(_cache_dir):
    """One empty cache per session: no user environments (so sources are "not on this
    machine" everywhere) and no writes to the user's cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CUTEDIFF_CACHE_DIR", str(_cache_dir))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, monkeypatch):
    """Settings never touch the user's config folder."""
    monkeypatch.setenv("CUTEDIFF_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


def _raw_metrics(version: str) -> dict:
    from cutediff_tui.core.analysis import classes, spills
    from cutediff_tui.core.analysis.resource_usage import parse_resource_usage
    from cutediff_tui.core.analysis_pipeline import kernel_texts, load_listing

    kdir = RAW / f"fa4-fwd-sm103a-{version}"
    m: dict = {"files": {"dir": str(kdir), "lineinfo_dir": str(RAW / f"fa4-fwd-sm103a-{version}-lineinfo")}}
    func = load_listing(m).main
    res = next(iter(parse_resource_usage(kernel_texts(kdir / "kernel.cubin", None)["res"]).values()))
    st, ld = spills.spill_bytes(func)
    ops = classes.count_opcodes(func)
    m.update(
        symbol=func.name,
        registers=res.registers,
        stack_bytes=res.stack,
        shared_bytes=res.shared,
        local_bytes=res.local,
        spill_store_bytes=st,
        spill_load_bytes=ld,
        opcodes=ops,
        instruction_classes=classes.count_classes(func),
        instructions=len(func.instrs),
        stl=ops.get("STL", 0),
        ldl=ops.get("LDL", 0),
        remarks=[],
        spill_sites=[],
        ptx={"version": "9.4", "target": "sm_103a", "toolchain": "CUDA 13.4"},
    )
    return m


def _raw_comparison() -> dict:
    a, b = _raw_metrics("4.5.1"), _raw_metrics("4.8.0")

    def side(v: str) -> dict:
        return {
            "label": v,
            "dsl": v,
            "pins": [],
            "versions": {},
            "error": None,
            "from_cache": True,
            "compile_seconds": None,
            "shims": [],
            "env": None,
        }

    cls = {
        k: [
            a["instruction_classes"].get(k, 0),
            b["instruction_classes"].get(k, 0),
            b["instruction_classes"].get(k, 0) - a["instruction_classes"].get(k, 0),
        ]
        for k in set(a["instruction_classes"]) | set(b["instruction_classes"])
    }
    return {
        "schema": "cutediff.comparison/1",
        "recipe": {"name": "fa4-fwd", "params": {}},
        "arch": "sm_103a",
        "profile": {"name": "b300", "arch": "sm_103a", "num_sms": 148},
        "sides": {"a": side("4.5.1"), "b": side("4.8.0")},
        "kernels": [
            {
                "name": "FlashAttentionForwardSm100",
                "symbol": {"a": a["symbol"], "b": b["symbol"]},
                "a": a,
                "b": b,
                "deltas": {"instruction_classes": cls},
            }
        ],
        "crosscheck": None,
        "host": {},
    }


@pytest.fixture(scope="session")
def sample_comparison() -> dict:
    """The comparison the app opens with no arguments (read once per session)."""
    from cutediff_tui.core.errors import CutediffError

    try:
        from cutediff_tui.core.compare import load_json
        from cutediff_tui.samples import default_sample

        return load_json(default_sample())
    except CutediffError:
        return _raw_comparison()


@pytest.fixture
def comparison(sample_comparison) -> dict:
    """A fresh copy per test (the app may add cross-check results to it)."""
    return copy.deepcopy(sample_comparison)


def has_sample() -> bool:
    from cutediff_tui.samples import SAMPLE_NAME, sample_dirs

    return any((d / SAMPLE_NAME / "comparison.json").is_file() for d in sample_dirs())


@pytest.fixture
def make_app(comparison):
    """Build the app offline: versions given, no GPU probe."""
    from cutediff_tui.ui.app import CutediffApp

    def make(c: dict | None = None, **kw) -> CutediffApp:
        kw.setdefault("versions", VERSIONS)
        kw.setdefault("installed", {"4.5.1", "4.8.0"})
        kw.setdefault("gpu_probe", None)
        return CutediffApp(c if c is not None else comparison, **kw)

    return make


async def settle(pilot) -> None:
    """Wait until workers are done and their messages handled."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def kernel_named(comparison: dict, name: str) -> tuple[int, dict]:
    for i, k in enumerate(comparison["kernels"]):
        if k["name"] == name:
            return i, k
    raise AssertionError(f"no kernel {name}: {[k['name'] for k in comparison['kernels']]}")
