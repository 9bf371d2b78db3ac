"""Typed checks of sweep and bisect results read from a file (``cutediff open``, ``report``).

A result may come from someone else: before anything reads it, its shape is checked once against
the fields cutediff uses, and a wrong one is named in one sentence (``$.cells[3].kernels``), as
:mod:`.io` does for comparisons. Unknown fields are kept and ignored.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from ..errors import CutediffError

__all__ = ["check_bisect", "check_sweep"]

Scalar = str | int | float | bool | None


class SweepKernel(msgspec.Struct, kw_only=True):
    name: str
    symbol: str | None = None
    figures: dict[str, Scalar]


class SweepCell(msgspec.Struct, kw_only=True):
    key: str | None = None
    seconds: int | float | None = None
    side: str | None = None
    toolchain: str | None = None
    arch: str | None = None
    gpu: str | None = None
    params: dict[str, Scalar | list[Scalar]] = {}
    axis: dict[str, Scalar] = {}
    host: str | None = None
    status: str | None = None
    why: str | None = None
    kernels: list[SweepKernel] = []


class SweepExecutor(msgspec.Struct, kw_only=True):
    kind: str | None = None
    address: str | None = None
    workers: int | None = None


class SweepTiming(msgspec.Struct, kw_only=True):
    wall_seconds: int | float | None = None
    cells: int | None = None
    resumed: int | None = None
    cached_builds: int | None = None


class SweepResult(msgspec.Struct, kw_only=True):
    schema: str
    executor: SweepExecutor | None = None
    timing: SweepTiming | None = None
    toolchains: list[str] = []
    pins: list[str] = []
    axes: dict[str, list[Scalar]] | None = None
    command: str | None = None
    created: str | None = None
    recipe: dict[str, Any] | str | None = None
    figure: str | None = None
    kernel_filter: str | None = None
    cells: list[SweepCell] = []


class BisectResult(msgspec.Struct, kw_only=True):
    schema: str
    last_good: str | None = None
    first_bad_candidates: list[str] = []
    recipe: str | None = None
    params: dict[str, Scalar | list[Scalar]] = {}
    profile: dict[str, Scalar] = {}
    sides: dict[str, str] = {}
    pins: list[str] = []
    cuda: int | str | None = None
    over: dict[str, Any] | None = None
    compare_command: str | None = None


def _check(doc: Any, kind: type, what: str, where: str) -> None:
    try:
        msgspec.convert(doc, kind, strict=False)
    except msgspec.ValidationError as exc:
        raise CutediffError(
            f"{where} is a {what} result with a field cutediff cannot read ({exc}).",
            f"Re-create it with cutediff {what} --json FILE, or fix that field.",
        ) from None


def check_sweep(doc: Any, where: str = "The sweep result") -> None:
    """Raise one sentence when ``doc`` is not shaped like a sweep result; figures must be numbers
    (or null: not measured), finite and not negative."""
    _check(doc, SweepResult, "sweep", where)
    for i, cell in enumerate(doc.get("cells") or []):
        for j, kernel in enumerate(cell.get("kernels") or []):
            for name, value in (kernel.get("figures") or {}).items():
                if (
                    isinstance(value, str)  # a metric would read it as a number
                    or (isinstance(value, float) and not math.isfinite(value))
                    or (isinstance(value, int | float) and not isinstance(value, bool) and value < 0)
                ):
                    raise CutediffError(
                        f"{where} holds {repr(value)[:40]} as {name if name.isidentifier() else repr(name)[:40]} "
                        f"at $.cells[{i}].kernels[{j}], where a count or a size belongs.",
                        "Re-create it with cutediff sweep --json FILE, or fix that field.",
                    )


def check_bisect(doc: Any, where: str = "The bisect result") -> None:
    """Raise one sentence when ``doc`` is not shaped like a bisect result."""
    _check(doc, BisectResult, "bisect", where)
