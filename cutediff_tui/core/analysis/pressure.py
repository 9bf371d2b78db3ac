"""Register pressure from ``nvdisasm -lrm count`` live-register columns."""

from __future__ import annotations

from dataclasses import dataclass

from cutediff_tui.core.analysis.sass import SassFunction

__all__ = ["KINDS", "Peak", "live_counts", "peak", "peaks", "per_line_max", "pressure_curve"]

#: The live-register kinds, in the order of ``SassInstr.live``.
KINDS = ("gpr", "pred", "ugpr", "upred")


@dataclass(frozen=True, slots=True)
class Peak:
    """The highest live count of one register kind and where it first occurs."""

    kind: str
    value: int
    addr: int
    index: int
    file: str | None
    line: int | None


def _kind_index(kind: str) -> int:
    try:
        return KINDS.index(kind)
    except ValueError:
        raise ValueError(f"unknown register kind {kind!r}; expected one of {KINDS}") from None


def live_counts(func: SassFunction) -> list[tuple[int, int, int, int] | None]:
    """Per instruction ``(gpr, pred, ugpr, upred)``, or None where no live info exists."""
    return [i.live for i in func.instrs]


def peaks(func: SassFunction) -> dict[str, Peak]:
    """Peak live count per kind (``gpr``, ``pred``, ``ugpr``, ``upred``); empty without live info."""
    out: dict[str, Peak] = {}
    for k, kind in enumerate(KINDS):
        best = None
        for i in func.instrs:
            if i.live is not None and (best is None or i.live[k] > best.live[k]):
                best = i
        if best is not None:
            out[kind] = Peak(kind, best.live[k], best.addr, best.index, best.file, best.line)
    return out


def peak(func: SassFunction, kind: str = "gpr") -> Peak | None:
    """Peak live count of one kind, or None without live info."""
    _kind_index(kind)
    return peaks(func).get(kind)


def per_line_max(func: SassFunction, kind: str = "gpr") -> dict[tuple, int]:
    """Max live count of one kind per source line ``{(file, line): n}`` (needs -g and -lrm)."""
    k = _kind_index(kind)
    out: dict[tuple, int] = {}
    for i in func.instrs:
        if i.live is None or i.line is None:
            continue
        key = (i.file, i.line)
        v = i.live[k]
        if v > out.get(key, -1):
            out[key] = v
    return out


def pressure_curve(func: SassFunction, buckets: int = 200, kind: str = "gpr") -> list[int]:
    """Down-sample the live count of one kind to at most ``buckets`` values (max per bucket).

    Instructions without live info count 0. Returns ``[]`` for an empty function.
    """
    k = _kind_index(kind)
    vals = [i.live[k] if i.live is not None else 0 for i in func.instrs]
    n = len(vals)
    if n == 0 or buckets <= 0:
        return []
    if n <= buckets:
        return vals
    out = []
    for b in range(buckets):
        lo = b * n // buckets
        hi = (b + 1) * n // buckets
        out.append(max(vals[lo:hi]) if hi > lo else 0)
    return out
