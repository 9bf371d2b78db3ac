"""Readable kernel names from the DSL's mangled symbols."""

from __future__ import annotations

import re

_CLASS = re.compile(r"([A-Z][A-Za-z0-9]*?)_object_at_")


def kernel_class(symbol: str, fallback: str | None = None) -> str:
    """``kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__…``
    → ``FlashAttentionForwardSm100``."""
    m = _CLASS.search(symbol)
    if m:
        # the module path is glued to the class name: take from the first capital letter
        return m.group(1)
    if fallback:
        return fallback
    s = re.sub(r"^(kernel_cutlass_kernel_|kernel_cutlass_|cutlass_)", "", symbol)
    s = re.split(r"_(?:tensor|Tensor|ptr)", s, maxsplit=1)[0]
    return s[:60] or symbol[:60]


def unique_names(names: list[str]) -> list[str]:
    """Suffix repeats ``#2``, ``#3`` so that each kernel has its own name."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out
