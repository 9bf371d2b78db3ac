"""Checking a comparison read from a file before anything uses it.

A result may come from someone else or be edited by hand: :func:`validate_result` refuses, in one
sentence naming the field, figures that are not non-negative integers (NaN, Infinity, ``1e400``,
strings, lists, booleans, negative numbers), parts of the wrong type, more kernels or longer strings
than :data:`cutediff_tui.core.files.LIMITS` allows. ``null`` stays allowed where a figure may be
missing (the CI gate then fails closed on it). The typed comparison model's loader calls this too.
"""

from __future__ import annotations

import math

from .errors import CutediffError
from .files import LIMITS

__all__ = ["COUNT_FIGURES", "validate_result", "is_count"]

#: Figures of a kernel side that are counts (integers >= 0, or null when not reported).
COUNT_FIGURES = (
    "registers",
    "stack_bytes",
    "shared_bytes",
    "local_bytes",
    "spill_store_bytes",
    "spill_load_bytes",
    "instructions",
    "stl",
    "ldl",
)
_COUNT_MAPS = ("opcodes", "instruction_classes")


def is_count(v: object) -> bool:
    """An integer >= 0 (``True`` is not a count)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _describe(v: object) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity (or a number too large for a float)"
        return f"the fraction {v!r}"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, int):
        return f"the negative number {v}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _bad(source: str, where: str, v: object, want: str) -> CutediffError:
    return CutediffError(
        f"{source} holds {_describe(v)} at {where}, where {want} belongs.",
        "Re-create the result with cutediff (a result edited by hand or by another tool cannot be trusted).",
    )


def _strings(obj: object, where: str, source: str, depth: int = 0) -> None:
    limit = LIMITS.string_chars
    stack = [(obj, where)]
    while stack:
        o, w = stack.pop()
        if isinstance(o, str):
            if len(o) > limit:
                raise CutediffError(
                    f"{source} holds a string of {len(o):,} characters at {w}, more than cutediff reads ({limit:,}).",
                    "Raise the limit with cutediff --max-string N if the result is genuine.",
                )
        elif isinstance(o, dict):
            for k, v in o.items():
                if isinstance(k, str) and len(k) > limit:
                    raise CutediffError(
                        f"{source} holds a key of {len(k):,} characters in {w}, more than cutediff reads ({limit:,}).",
                        "Raise the limit with cutediff --max-string N if the result is genuine.",
                    )
                stack.append((v, f"{w}.{k}" if isinstance(k, str) and len(k) < 60 else f"{w}[…]"))
        elif isinstance(o, list):
            stack.extend((v, f"{w}[{i}]") for i, v in enumerate(o))


def _side_metrics(m: dict, where: str, source: str) -> None:
    for key in COUNT_FIGURES:
        if key in m and m[key] is not None and not is_count(m[key]):
            raise _bad(source, f"{where}.{key}", m[key], "a whole number of 0 or more (or null)")
    for key in _COUNT_MAPS:
        v = m.get(key)
        if v is None:
            continue
        if not isinstance(v, dict):
            raise _bad(source, f"{where}.{key}", v, "an object of counts")
        for name, n in v.items():
            if not is_count(n):
                raise _bad(source, f"{where}.{key}.{name}", n, "a whole number of 0 or more")
    for key in ("files", "sources", "ptx", "pressure", "lineinfo"):
        if m.get(key) is not None and not isinstance(m[key], dict):
            raise _bad(source, f"{where}.{key}", m[key], "an object")
    for key in ("spill_sites", "remarks"):
        v = m.get(key)
        if v is not None and not (isinstance(v, list) and all(isinstance(x, dict) for x in v)):
            raise _bad(source, f"{where}.{key}", v, "a list of objects")
    files = m.get("files") or {}
    for key in ("dir", "lineinfo_dir"):
        if files.get(key) is not None and not isinstance(files[key], str):
            raise _bad(source, f"{where}.files.{key}", files[key], "a path")


def validate_result(data: dict, source: str = "The comparison", *, text_chars: int | None = None) -> dict:
    """Raise a one-sentence ``CutediffError`` naming the first bad field of ``data`` (a comparison
    dict whose schema was already checked); return ``data`` when it is sound.

    ``text_chars``: the length of the JSON text ``data`` was decoded from, when known. No string
    of a document is longer than its text (an escape is never shorter than what it stands for), so
    when that is within the string limit the walk over every string is skipped.
    """
    kernels = data.get("kernels")
    if not isinstance(kernels, list):
        raise _bad(source, "kernels", kernels, "a list of kernels")
    if len(kernels) > LIMITS.kernels:
        raise CutediffError(
            f"{source} holds {len(kernels):,} kernels, more than cutediff opens ({LIMITS.kernels:,}).",
            "Raise the limit with cutediff --max-kernels N if the result is genuine.",
        )
    if text_chars is None or text_chars > LIMITS.string_chars:
        _strings(data, "comparison", source)
    for s in ("a", "b"):
        side = (data.get("sides") or {}).get(s)
        if not isinstance(side, dict):
            raise _bad(source, f"sides.{s}", side, "an object")
        for key in ("label", "dsl", "error", "env"):
            if side.get(key) is not None and not isinstance(side[key], str):
                raise _bad(source, f"sides.{s}.{key}", side[key], "a string (or null)")
        for key in ("notes", "pins", "shims", "repaired"):
            if side.get(key) is not None and not isinstance(side[key], list):
                raise _bad(source, f"sides.{s}.{key}", side[key], "a list")
    for i, k in enumerate(kernels):
        where = f"kernels[{i}]"
        if not isinstance(k, dict):
            raise _bad(source, where, k, "a kernel object")
        if k.get("name") is not None and not isinstance(k["name"], str):
            raise _bad(source, f"{where}.name", k["name"], "a string")
        for s in ("a", "b"):
            m = k.get(s)
            if m is None:
                continue
            if not isinstance(m, dict):
                raise _bad(source, f"{where}.{s}", m, "a kernel side object (or null)")
            _side_metrics(m, f"{where}.{s}", source)
        for key in ("alignment", "ptx_alignment", "deltas", "symbol"):
            if k.get(key) is not None and not isinstance(k[key], dict):
                raise _bad(source, f"{where}.{key}", k[key], "an object")
    return data
