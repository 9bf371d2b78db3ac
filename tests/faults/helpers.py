"""Shared pieces of the fault tests: the CLI in a subprocess, the one-sentence check, a cheap recipe."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from cutediff_tui.core.recipes import RecipeInfo
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir()
RAW = ROOT / "samples" / "raw"
CUBIN_451 = RAW / "fa4-fwd-sm103a-4.5.1" / "kernel.cubin"
CUBIN_480 = RAW / "fa4-fwd-sm103a-4.8.0" / "kernel.cubin"
PTX_451 = RAW / "fa4-fwd-sm103a-4.5.1" / "kernel.ptx"
PTX_480 = RAW / "fa4-fwd-sm103a-4.8.0" / "kernel.ptx"
PINS = ["--with", "flash-attn-4==4.0.0b16", "--with", "quack-kernels==0.4.1"]
PIN_LIST = ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"]
FWD_SM100 = ["--kernel", "fa4-fwd", "--arch", "sm_100a"]

#: The cheapest real compile: one tiny CuTe DSL kernel (about 3 s with the worker's start-up).
TINY_RECIPE = """
import cutlass
import cutlass.cute as cute


@cute.kernel
def tiny_kernel(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == n:
        cute.printf("tidx %d\\n", n)


@cute.jit
def tiny_launch(n: cutlass.Int32):
    tiny_kernel(n).launch(grid=[1, 1, 1], block=[32, 1, 1])


def recipe(ctx):
    {before}
    cute.compile(tiny_launch, cutlass.Int32(3))
"""


def tiny_recipe(folder: Path, name: str = "tiny", before: str = "pass") -> RecipeInfo:
    """A recipe file compiling one tiny kernel; ``before`` is a line of Python run first (in ``recipe``)."""
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / f"{name}_recipe.py"
    f.write_text(TINY_RECIPE.replace("{before}", before))
    return RecipeInfo(name, "fault-test recipe", f"{f}:recipe", (), (90, 100, 110, 120))


def recipe_file(folder: Path, body: str, name: str = "misbehaving") -> RecipeInfo:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / f"{name}_recipe.py"
    f.write_text(textwrap.dedent(body))
    return RecipeInfo(name, "fault-test recipe", f"{f}:recipe", (), (90, 100, 110, 120))


def cli_env(cache: Path | None = None, **extra: str) -> dict:
    env = dict(os.environ)
    if cache is not None:
        env["CUTEDIFF_CACHE_DIR"] = str(cache)
    env.update(extra)
    env["COLUMNS"] = "200"
    return env


def cutediff(args, cache: Path | None, *, timeout: float = 600, env: dict | None = None, **extra: str):
    """Run ``cutediff ARGS`` in a subprocess with CUTEDIFF_CACHE_DIR=cache."""
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env or cli_env(cache, **extra),
        timeout=timeout,
        cwd=ROOT,
    )


def one_sentence(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    """The failure's single ``error:`` line; asserts the exit code and that nothing else went to stderr."""
    err = proc.stderr
    assert proc.returncode == code, (proc.returncode, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("·")]
    assert len(lines) == 1, err[-3000:]
    line = lines[0]
    assert line.startswith("error: "), line
    assert is_sentence(line.removeprefix("error: ")), line
    return line


def is_sentence(text: str) -> bool:
    """One line, a capital (or a path/name) first, a full stop last, short enough to read."""
    return "\n" not in text and text.rstrip().endswith((".", ")")) and 20 < len(text) < 900


def tree_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def leftovers(cache: Path, pid: int | None = None) -> list[str]:
    """Temporary folders a run may have left in the cache (there must be none); with ``pid``, only
    those of that process (the session cache may be shared with other test runs)."""
    out = []
    for sub in ("artifacts", "envs", "tools", "imports"):
        d = cache / sub
        if d.is_dir():
            out += [
                f"{sub}/{p.name}"
                for p in d.iterdir()
                if re.match(r"^\.(tmp|nocache)-|.*\.tmp$", p.name)
                and (pid is None or re.search(rf"-{pid}(-|$)|\.{pid}\.tmp$", p.name))
            ]
    return out


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def default_sigint() -> None:
    """``preexec_fn`` for CLI subprocesses that a test interrupts: a shell starting the test run in
    the background (``cmd &`` without job control) leaves SIGINT ignored, which the child would
    inherit and Python would respect; Ctrl-C tests need the default action back."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
