"""Readable kernel names from the DSL's mangled symbols."""

from __future__ import annotations

import re

_CLASS = re.compile(r"([A-Z][A-Za-z0-9]*?)_object_at_")


def kernel_class(symbol: str, fallback: str | None = None) -> str:
    """The kernel's own name, read from the DSL's symbol: a kernel method's class
    (``kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__…``
    → ``FlashAttentionForwardSm100``), else the ``@cute.kernel`` function's name
    (``kernel_cutlass_add_kernel_tensorptrf32gmem…_4_0`` → ``add_kernel``,
    ``kernel_cutlass_tiny_kernel__0`` → ``tiny_kernel``). ``fallback`` (the ``@cute.jit`` launcher
    that compiled it) only when the symbol names neither."""
    m = _CLASS.search(symbol)
    if m:
        # the module path is glued to the class name: take from the first capital letter
        return m.group(1)
    function = kernel_function(symbol)
    if function:
        return function
    return fallback or symbol[:60]


def kernel_function(symbol: str) -> str:
    """The function name at the head of a DSL kernel symbol: the ``_``-joined words before the
    first that encodes an argument (``tensor…``, ``ptr…``, a number, or empty as in ``__0``);
    "" when there is none."""
    s = re.sub(r"^(kernel_cutlass_kernel_|kernel_cutlass_|cutlass_)", "", symbol)
    words: list[str] = []
    for word in s.split("_"):
        if not word or word.isdigit() or word.startswith(("tensor", "Tensor", "ptr")):
            break
        words.append(word)
    return "_".join(words)[:60]


def unique_names(names: list[str]) -> list[str]:
    """Suffix repeats ``#2``, ``#3`` so that each kernel has its own name."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def demangle(symbols: list[str]) -> dict[str, str]:
    """Itanium C++ names (``_Z5lightPffi``) → ``light(float*, float, int)``, through ``c++filt``
    (``cu++filt``) when one is installed, else the plain function name read from the mangling.
    Names that are not mangled map to themselves."""
    import shutil
    import subprocess

    mangled = [s for s in symbols if s.startswith("_Z")]
    out = {s: s for s in symbols}
    if not mangled:
        return out
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if tool:
        try:
            proc = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=30)
            lines = proc.stdout.splitlines()
            if proc.returncode == 0 and len(lines) == len(mangled):
                out.update({m: d.strip() or m for m, d in zip(mangled, lines)})
                return out
        except (OSError, subprocess.TimeoutExpired):
            pass
    out.update({m: plain_name(m) for m in mangled})
    return out


def plain_name(symbol: str) -> str:
    """``_Z5lightPffi`` → ``light``, ``_ZN2ns6kernelEv`` → ``ns::kernel`` (no parameter types)."""
    s = symbol[2:]
    nested = s.startswith("N")
    s = s[1:] if nested else s
    parts = []
    while s and s[0].isdigit():
        m = re.match(r"(\d+)", s)
        n = int(m.group(1))  # type: ignore[union-attr]
        start = len(m.group(1))  # type: ignore[union-attr]
        parts.append(s[start : start + n])
        s = s[start + n :]
        if not nested:
            break
    return "::".join(parts) or symbol


_HASH = re.compile(r"_(?:0x)?[0-9a-fA-F]{6,}$|_\d+$")


def without_hash(name: str) -> str:
    """A kernel name with hash-like suffixes removed (``_3f9a2c1b``, ``0x7f..``, a trailing ``_12``),
    to pair kernels whose names differ only there."""
    prev = None
    while prev != name:
        prev, name = name, _HASH.sub("", name)
    return name
