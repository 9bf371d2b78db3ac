"""The bench without a usable GPU: no driver, a GPU FA4 cannot run on, torch without CUDA, out of
memory for a shape, a kernel built for another arch. Each is one sentence.

There is no GPU here, so the GPU is a stand-in ``nvidia-smi`` on PATH (a script that answers like
the real one) and, for the failures that only a GPU produces, the real bench worker and runner run
against a stand-in ``torch`` / ``flash_attn`` that raise the errors CUDA raises. The same failures on
a real GPU are the tests marked ``gpu`` at the end (skipped, with the reason, where there is none).
The no-GPU sentence and the line protocol are in tests/unit/test_bench.py.
"""

from __future__ import annotations

import shutil
import stat
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from cutediff_tui.core.bench.runner import BenchConfig, run_bench
from cutediff_tui.core.bench.shapes import Shape
from cutediff_tui.core.errors import CutediffError

from .helpers import PINS, cutediff, is_sentence, one_sentence

HAS_GPU = shutil.which("nvidia-smi") is not None


def fake_smi(folder: Path, *, gpu: str | None = "NVIDIA H200, 9.0", fail: bool = False) -> Path:
    """A folder holding an ``nvidia-smi`` that reports ``gpu`` (name, compute capability), or
    fails as it does when the driver is not loaded."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "nvidia-smi"
    if fail:
        body = (
            "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            'Make sure that the latest NVIDIA driver is installed and running."\nexit 9\n'
        )
    else:
        name = gpu.split(",")[0]
        body = (
            f'case "$*" in\n  *compute_cap*) echo "{gpu}" ;;\n'
            f'  *) echo "{name}, 580.82.07, 1980, 3201, 35, 120.50" ;;\nesac\n'
        )
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def _path_with(folder: Path) -> str:
    import os

    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.mark.skipif(HAS_GPU, reason="this machine has a real nvidia-smi")
def test_nvidia_smi_without_a_driver(tmp_path):
    smi = fake_smi(tmp_path / "bin", fail=True)
    line = one_sentence(cutediff(["bench", "4.5.1", "4.8.0"], tmp_path / "cache", PATH=_path_with(smi)))
    assert "No NVIDIA GPU was found" in line and "Compile-only comparisons still work" in line
    # the compile side asks nvidia-smi for a default arch too: it falls back instead of failing
    import os

    from cutediff_tui.core import gpu

    old = os.environ["PATH"]
    os.environ["PATH"] = _path_with(smi)
    try:
        assert gpu.local_gpu() is None and gpu.resolve_profile().arch == gpu.DEFAULT_ARCH
    finally:
        os.environ["PATH"] = old


@pytest.mark.skipif(HAS_GPU, reason="this machine has a real nvidia-smi")
def test_gpu_that_fa4_cannot_run_on(tmp_path):
    smi = fake_smi(tmp_path / "bin", gpu="NVIDIA A100-SXM4-80GB, 8.0")
    line = one_sentence(cutediff(["bench", "4.5.1", "4.8.0"], tmp_path / "cache", PATH=_path_with(smi)))
    assert "The local GPU (NVIDIA A100-SXM4-80GB, sm_80) has no FA4 kernel path" in line
    assert "Hopper or Blackwell" in line


@pytest.mark.slow
@pytest.mark.skipif(HAS_GPU, reason="this machine has a real nvidia-smi")
def test_gpu_listed_but_torch_cannot_use_it(compile_cache, env48, tmp_path):
    """nvidia-smi lists an H200 but the host torch is a CPU build: the real bench workers start in the
    real DSL environments and report it; one sentence."""
    smi = fake_smi(tmp_path / "bin")
    proc = cutediff(
        ["bench", "4.5.1", "4.8.0", *PINS, "--kernel", "fa4-fwd", "--shape", "1024x4h/1", "--rounds", "1", "-q"],
        compile_cache,
        PATH=_path_with(smi),
        timeout=600,
    )
    line = one_sentence(proc)
    assert "the bench failed (torch in this environment sees no CUDA GPU)" in line, line


# ---------------------------------------------------------------- failures only a GPU produces

STUB_TORCH = """
import os

MODE = open(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "MODE")).read().strip()
bfloat16, float16, int32, uint8 = "bf16", "fp16", "i32", "u8"


class OutOfMemoryError(RuntimeError):
    pass


class _T:
    def __mul__(self, other):
        return self

    __rmul__ = __mul__


class _Cuda:
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def get_device_name(index=0):
        return "stand-in GPU"

    @staticmethod
    def synchronize():
        pass


cuda = _Cuda()


class Generator:
    def __init__(self, device=None):
        pass

    def manual_seed(self, seed):
        return self


def randn(*shape, **kw):
    if MODE == "oom":
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 96.00 GiB. GPU 0 has a total capacity "
                               "of 139.80 GiB of which 40.12 GiB is free.")
    return _T()


def arange(*a, **kw):
    return _T()


def randn_like(x):
    return _T()
"""

STUB_FA = """
def _flash_attn_fwd(*a, **kw):
    raise RuntimeError("CUDA error: no kernel image is available for execution on the device")


def _flash_attn_bwd(*a, **kw):
    raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
"""


def stub_env(folder: Path, mode: str):
    """An environment whose torch / flash_attn / cutlass are stand-ins raising what CUDA raises."""
    site = folder / "site"
    for pkg, body in {
        "torch": STUB_TORCH,
        "cutlass": "",
        "cutlass/cute": "",
        "flash_attn": "",
        "flash_attn/cute": "",
    }.items():
        (site / pkg).mkdir(parents=True, exist_ok=True)
        (site / pkg / "__init__.py").write_text(textwrap.dedent(body))
    (site / "flash_attn" / "cute" / "interface.py").write_text(STUB_FA)
    (folder / "MODE").write_text(mode)
    return SimpleNamespace(site=site, spec=SimpleNamespace(local_paths=list))


@pytest.mark.parametrize(
    "mode, expected, todo",
    [
        (
            "oom",
            "Side A: the GPU ran out of memory for a shape (OutOfMemoryError: CUDA out of memory.",
            "Use smaller shapes",
        ),
        (
            "arch",
            "Side A: the kernel was built for an architecture this GPU cannot run (RuntimeError: CUDA error: "
            "no kernel image is available",
            "Run the bench on a GPU of the arch",
        ),
    ],
    ids=["out-of-memory", "no-kernel-image-for-this-gpu"],
)
@pytest.mark.skipif(HAS_GPU, reason="this machine has a real nvidia-smi")
def test_gpu_only_failures_through_the_real_worker_and_runner(tmp_path, monkeypatch, mode, expected, todo):
    monkeypatch.setenv("PATH", _path_with(fake_smi(tmp_path / "bin")))
    envs = (stub_env(tmp_path / "a", mode), stub_env(tmp_path / "b", mode))
    events: list[dict] = []
    with pytest.raises(CutediffError) as ei:
        run_bench(envs, BenchConfig((Shape(8192, 32, 4),), "fwd", rounds=1, warmup=1, iters=1), events.append)
    s = ei.value.sentence()
    assert s.startswith(expected) and todo in s and is_sentence(s), s
    assert not events  # nothing was timed


# ---------------------------------------------------------------- the same on a real GPU


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (nvidia-smi is not on PATH)")
def test_real_gpu_out_of_memory_for_a_huge_shape(compile_cache):
    proc = cutediff(
        ["bench", "4.5.1", "4.8.0", *PINS, "--kernel", "fa4-fwd", "--shape", "400000000x64h/1", "--rounds", "1", "-q"],
        compile_cache,
        timeout=1200,
    )
    line = one_sentence(proc)
    assert "the GPU ran out of memory for a shape" in line, line
