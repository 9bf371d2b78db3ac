"""``--kernel-filter REGEX``: one meaning on every command that shows kernels.

A kernel is kept when the regular expression (Python ``re.search``, case-sensitive) matches its
name or one of its symbols. ``compare``, ``diff``, ``report``, ``check``, ``bench --profile``,
``bisect`` and ``sweep`` all come here: the same matching, the same sentence for an expression
that does not compile, and the same sentence for one that matches no kernel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import CutediffError

K = TypeVar("K", bound=Mapping[str, Any])

#: How many existing kernel names a "matches no kernel" sentence lists.
NAMES_SHOWN = 5


def compile_filter(kernel_filter: str | None) -> re.Pattern[str] | None:
    """The compiled expression (None when no filter is given); one sentence when it is not a
    regular expression."""
    if not kernel_filter:
        return None
    try:
        return re.compile(kernel_filter)
    except re.error as exc:
        raise CutediffError(
            f"--kernel-filter {kernel_filter!r} is not a regular expression ({exc}).",
            "Write a Python regular expression, e.g. FlashAttentionForward or 'Sm100$'.",
        ) from None


def check_kernel_filter(kernel_filter: str | None) -> None:
    """Refuse an expression that does not compile, before any work (one sentence)."""
    compile_filter(kernel_filter)


def kernel_names(kernel: Mapping[str, Any]) -> list[str]:
    """A kernel's name and its symbols (``symbol`` is one string, or one per side)."""
    sym = kernel.get("symbol")
    syms = list(sym.values()) if isinstance(sym, Mapping) else [sym]
    return [str(n) for n in [kernel.get("name"), *syms] if n]


def matches(rx: re.Pattern[str] | None, kernel: Mapping[str, Any]) -> bool:
    """True when ``rx`` (None: no filter) is found in the kernel's name or one of its symbols."""
    return rx is None or any(rx.search(n) for n in kernel_names(kernel))


def select_kernels(kernels: Iterable[K], kernel_filter: str | None) -> list[K]:
    """The kernels whose name or symbol ``kernel_filter`` matches (all of them without a filter)."""
    rx = compile_filter(kernel_filter)
    return [k for k in kernels if matches(rx, k)]


def no_match_sentence(kernel_filter: str, kernels: Sequence[Mapping[str, Any]]) -> str:
    """``--kernel-filter 'X' matches none of the 4 kernels (A, B, C, D)``: what exists, at most
    :data:`NAMES_SHOWN` names."""
    names = [str(k.get("name") or "?") for k in kernels]
    shown = ", ".join(names[:NAMES_SHOWN]) + (
        f", … ({len(names) - NAMES_SHOWN} more)" if len(names) > NAMES_SHOWN else ""
    )
    return f"--kernel-filter {kernel_filter!r} matches none of the {len(names)} kernel(s) ({shown})"


def no_match_error(kernel_filter: str, kernels: Sequence[Mapping[str, Any]]) -> CutediffError:
    """:func:`no_match_sentence` as an error with what to do."""
    return CutediffError(
        no_match_sentence(kernel_filter, kernels) + ".",
        "Pick a pattern from those names (a part of the name is enough), or leave --kernel-filter out.",
    )


def filter_comparison(comparison: Mapping[str, Any], kernel_filter: str | None) -> dict[str, Any]:
    """A shallow copy of ``comparison`` with only the matching kernels (and their ptxas
    cross-check entries), recording ``"kernel_filter": RE`` at top level. Without a filter, the
    comparison itself. A filter that matches none of its kernels raises :func:`no_match_error`,
    unless a side failed (that side's error is the sentence to show, not the filter's)."""
    if not kernel_filter:
        return dict(comparison)
    rx = compile_filter(kernel_filter)
    kernels = [k for k in comparison.get("kernels") or [] if isinstance(k, Mapping)]
    chosen = [k for k in kernels if matches(rx, k)]
    sides = comparison.get("sides")
    failed = isinstance(sides, Mapping) and any(isinstance(v, Mapping) and v.get("error") for v in sides.values())
    if kernels and not chosen and not failed:
        raise no_match_error(kernel_filter, kernels)
    out = dict(comparison)
    out["kernels"] = chosen
    out["kernel_filter"] = kernel_filter
    cross = comparison.get("crosscheck")
    if isinstance(cross, Mapping):
        kept = {str(k.get("name")) for k in chosen}
        out["crosscheck"] = {name: v for name, v in cross.items() if name in kept}
    return out
