"""The functions of the Python API: compare, diff, load, check and report (and sweep/bisect loading).

Each is a thin call into :mod:`cutediff_tui.core`, the same code the CLI runs; bad input raises
:class:`cutediff_tui.core.errors.CutediffError` (re-exported as ``cutediff.CutediffError``): ``str()``
says what failed and why, ``.hint`` what to do, ``.sentence()`` both in one line.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.events import Event

from .results import BisectResult, CheckReport, Comparison, SweepResult, read_document, run_check

__all__ = ["check", "compare", "diff", "load", "load_bisect", "load_sweep", "report"]

#: What ``progress=`` takes: called with each typed progress event (or a plain line), from any thread.
ProgressFn = Callable[[Event | str], None]


def _noop(_event: Event | str) -> None:
    pass


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def compare(
    a: str,
    b: str,
    *,
    recipe: str = "fa4-fwd",
    arch: str | None = None,
    gpu: str | None = None,
    num_sms: int | None = None,
    params: Mapping[str, Any] | None = None,
    a_params: Mapping[str, Any] | None = None,
    b_params: Mapping[str, Any] | None = None,
    pins: Sequence[str] = (),
    cuda: int | None = None,
    python: str | None = None,
    lineinfo: bool = True,
    cache: bool = True,
    timeout: float = 1800,
    wheelhouse: str | Path | None = None,
    crosscheck: Sequence[str] = (),
    allow_ptx_rewrite: bool = False,
    progress: ProgressFn | None = None,
) -> Comparison:
    """Compile ``recipe`` under toolchains ``a`` and ``b`` (in parallel) and compare the kernels,
    as ``cutediff compare`` does.

    Args:
        a, b: the toolchains, a DSL version with optional pins: ``"4.5.1"``,
            ``"4.8.0,quack-kernels==0.6.5"``.
        recipe: a built-in recipe (``fa4-fwd``), a recipe file ``path/to/file.py[:function]`` or a
            module ``package.module[:function]`` (``--recipe``).
        arch, gpu, num_sms: the target (``--arch sm_103a``, ``--gpu b200``, ``--num-sms``).
        params: recipe parameters, e.g. ``{"hdim": 128, "causal": True}`` (``--hdim``, ``--param``).
        a_params, b_params: parameters for one side only, over ``params`` (``--a-param``,
            ``--b-param``), e.g. ``a_params={"bits": 128}, b_params={"bits": 16}``.
        pins: pins for both sides, e.g. ``["flash-attn-4==4.0.0b16"]`` (``--with``).
        cuda: the DSL libraries' CUDA flavour, 12 or 13 (default: as the host torch).
        python: the Python for DSL versions with no wheel for this one.
        lineinfo: also build with line info (spill sites mapped to source lines).
        cache: use the build cache (``False`` = ``--no-cache``).
        timeout: seconds before a compile is stopped.
        wheelhouse: build the environments offline from this folder.
        crosscheck: ptxas versions to re-assemble both PTXs with, e.g. ``["13.0", "13.4"]``.
        allow_ptx_rewrite: rewrite PTX ``.version`` down for an older ptxas (labelled).
        progress: called with each progress event (:mod:`cutediff_tui.core.events`).

    A side that fails to build does not raise: its sentence is in :attr:`Comparison.errors`.
    """
    from cutediff_tui.core.compare import run_compare
    from cutediff_tui.core.options import PARAM_KEYS, compare_options

    given = dict(params or {})
    kw: dict[str, Any] = {
        "kernel": recipe,
        "arch": arch,
        "gpu": gpu,
        "num_sms": num_sms,
        "with_": tuple(pins),
        "cuda": str(cuda) if cuda else None,
        "python": python,
        "no_lineinfo": not lineinfo,
        "no_cache": not cache,
        "timeout": timeout,
        "wheelhouse": Path(wheelhouse) if wheelhouse else None,
        "crosscheck": ",".join(crosscheck),
        "allow_ptx_rewrite": allow_ptx_rewrite,
        **{k.replace("-", "_"): v for k, v in given.items() if k.replace("-", "_") in PARAM_KEYS},
        "extra_params": tuple(
            f"{k}={_text(v)}" for k, v in given.items() if k.replace("-", "_") not in PARAM_KEYS and v is not None
        ),
        "a_params": tuple(f"{k}={_text(v)}" for k, v in (a_params or {}).items()),
        "b_params": tuple(f"{k}={_text(v)}" for k, v in (b_params or {}).items()),
    }
    argv = ["compare", a, b, "--recipe", recipe]
    for flag, value in (("--arch", arch), ("--gpu", gpu), ("--num-sms", num_sms), ("--cuda", cuda)):
        if value is not None:
            argv += [flag, str(value)]
    argv += [x for p in pins for x in ("--with", p)]
    argv += [x for k, v in given.items() if v is not None for x in ("--param", f"{k}={_text(v)}")]
    for flag, side in (("--a-param", a_params), ("--b-param", b_params)):
        argv += [x for k, v in (side or {}).items() for x in (flag, f"{k}={_text(v)}")]
    if crosscheck:
        argv += ["--crosscheck", ",".join(crosscheck)]
    opts = compare_options(a, b, kw, command="cutediff " + " ".join(shlex.quote(x) for x in argv))
    return Comparison(run_compare(opts, progress or _noop))


def diff(
    a: str | Path,
    b: str | Path,
    *,
    labels: tuple[str | None, str | None] = (None, None),
    allow_arch_mismatch: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Comparison:
    """Analyse existing artifacts, no compile (``cutediff diff``): per side a ``.cubin`` from any
    compiler, a ``.ptx``, SASS text or a folder of them (``CUTE_DSL_DUMP_DIR``, Triton cache).
    ``warn`` receives the warnings (pairing by hash suffix, …)."""
    from cutediff_tui.core.artifacts_diff import diff_paths

    return Comparison(
        diff_paths(
            Path(a),
            Path(b),
            command="cutediff diff " + " ".join(shlex.quote(str(x)) for x in (a, b)),
            allow_arch_mismatch=allow_arch_mismatch,
            warn=warn or _noop,
            labels=labels,
        )
    )


_SCHEMA_HEAD = re.compile(rb'"schema"\s*:\s*"(cutediff\.[a-z]+)/\d+"')


def load(path: str | Path) -> Comparison | SweepResult | BisectResult:
    """A saved result: a comparison (``comparison.json`` or its folder), a sweep or a bisect
    result, told apart by the schema the file names."""
    path = Path(path)
    if path.is_dir():
        path = path / "comparison.json"
    if path.is_file():
        with open(path, "rb") as fh:
            m = _SCHEMA_HEAD.search(fh.read(4096))
        kind = m.group(1).decode() if m else ""
        if kind == "cutediff.sweep":
            return load_sweep(path)
        if kind == "cutediff.bisect":
            return load_bisect(path)
    from cutediff_tui.core.compare import load_json

    return Comparison(load_json(path), source=path)


def load_sweep(path: str | Path) -> SweepResult:
    """A sweep result written by ``cutediff sweep --json FILE``."""
    from cutediff_tui.core.sweep import SCHEMA

    return SweepResult(read_document(Path(path), SCHEMA, "sweep result", "cutediff sweep --json FILE"), Path(path))


def load_bisect(path: str | Path) -> BisectResult:
    """A bisect result written by ``cutediff bisect --json FILE``."""
    from cutediff_tui.core.bisect import SCHEMA

    return BisectResult(read_document(Path(path), SCHEMA, "bisect result", "cutediff bisect --json FILE"), Path(path))


def _comparison(c: Comparison | Mapping[str, Any] | str | Path) -> Comparison:
    if isinstance(c, Comparison):
        return c
    if isinstance(c, Mapping):
        return Comparison(dict(c))
    loaded = load(c)
    if not isinstance(loaded, Comparison):
        raise CutediffError(f"{c} is a {type(loaded).__name__}, not a comparison.", "Give a saved comparison.")
    return loaded


def check(
    comparison: Comparison | Mapping[str, Any] | str | Path,
    *,
    max_spill_bytes: int | None = None,
    max_register_delta: int | None = None,
    max_stack_delta: int | None = None,
    max_slowdown: float | None = None,
    kernel_filter: str | None = None,
    max: Mapping[str, float] | None = None,
    max_delta: Mapping[str, float] | None = None,
    allow_missing: bool = False,
) -> CheckReport:
    """Check a comparison against limits, as ``cutediff check`` does (``.exit_code``: 0 within
    the limits, 1 when one broke, 2 when a check could not run). ``max``/``max_delta`` map any
    registry figure to the most B (or B − A) may be, e.g. ``max={"peak_gpr": 200}``."""
    return run_check(
        _comparison(comparison).data,
        max_spill_bytes=max_spill_bytes,
        max_register_delta=max_register_delta,
        max_stack_delta=max_stack_delta,
        max_slowdown=max_slowdown,
        kernel_filter=kernel_filter,
        max=max,
        max_delta=max_delta,
        allow_missing=allow_missing,
    )


def report(
    comparison: Comparison | Mapping[str, Any] | str | Path,
    format: str = "md",
    *,
    path: str | Path | None = None,
    keep_paths: bool = True,
    kernel_filter: str | None = None,
) -> str:
    """The report of a comparison in ``format`` (``md``, ``html``, ``json``, ``csv``); with
    ``path``, also written there (atomically; never over an existing file's input).
    ``kernel_filter``: only the kernels whose name or symbol matches (``--kernel-filter``)."""
    text = _comparison(comparison).report(format, keep_paths=keep_paths, kernel_filter=kernel_filter)
    if path is not None:
        from cutediff_tui.core.locking import atomic_write

        atomic_write(Path(path), text)
    return text
