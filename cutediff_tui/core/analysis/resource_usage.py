"""Parse ``cuobjdump --dump-resource-usage`` output."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ResourceUsage", "parse_resource_usage"]

_FUNC_RE = re.compile(r"^\s*Function\s+(\S+?):\s*$")
_KV_RE = re.compile(r"([A-Z_]+)(?:\[(\d+)\])?:(\d+)")


@dataclass(slots=True)
class ResourceUsage:
    """Per-function resources from cuobjdump.

    Attributes:
        registers: ``REG`` (registers per thread).
        stack: ``STACK`` bytes per thread.
        shared: ``SHARED`` static shared memory bytes.
        local: ``LOCAL`` bytes.
        constant: bank -> bytes (``CONSTANT[0]``...).
        texture, surface, sampler: counts.
        extra: any other ``KEY:value`` pair.
    """

    registers: int = 0
    stack: int = 0
    shared: int = 0
    local: int = 0
    constant: dict = field(default_factory=dict)
    texture: int = 0
    surface: int = 0
    sampler: int = 0
    extra: dict = field(default_factory=dict)


_FIELDS = {
    "REG": "registers",
    "STACK": "stack",
    "SHARED": "shared",
    "LOCAL": "local",
    "TEXTURE": "texture",
    "SURFACE": "surface",
    "SAMPLER": "sampler",
}


def parse_resource_usage(text: str) -> dict[str, ResourceUsage]:
    """Parse cuobjdump resource usage into function name -> :class:`ResourceUsage`.

    A fat binary lists one block per embedded cubin; a name seen twice keeps the last.
    """
    out: dict[str, ResourceUsage] = {}
    cur: ResourceUsage | None = None
    for line in (text or "").splitlines():
        m = _FUNC_RE.match(line)
        if m:
            cur = ResourceUsage()
            out[m.group(1)] = cur
            continue
        if cur is None or ":" not in line:
            continue
        pairs = _KV_RE.findall(line)
        if not pairs:
            continue
        for key, bank, val in pairs:
            v = int(val)
            if key == "CONSTANT":
                cur.constant[int(bank or 0)] = v
            elif key in _FIELDS:
                setattr(cur, _FIELDS[key], v)
            else:
                cur.extra[key + (f"[{bank}]" if bank else "")] = v
    return out
