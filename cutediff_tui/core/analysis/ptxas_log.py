"""Parse ``ptxas -v`` (``--verbose``) output.

The parser works on the whole text with whitespace-tolerant patterns, so it also reads
logs whose long lines were wrapped (the DSL's ``remarks{ptx}`` output re-flows them).

A log may hold several compiles of the same function (two runs concatenated, or one
run per architecture). :func:`parse_ptxas_v` keeps the **last** record for each name;
:func:`parse_ptxas_v_all` returns every record in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PtxasFunc", "parse_ptxas_v", "parse_ptxas_v_all"]


@dataclass(slots=True)
class PtxasFunc:
    """Resource figures ptxas printed for one function.

    Attributes:
        name: function name.
        arch: target (``sm_103a``) from ``Compiling entry function ... for '...'``, else None.
        registers: ``Used N registers``.
        barriers: ``used N barriers`` (0 when not printed).
        stack_frame: bytes of stack frame.
        spill_stores: bytes of spill stores.
        spill_loads: bytes of spill loads.
        cumulative_stack: ``N bytes cumulative stack size`` (0 when not printed).
        compile_ms: ``Compile time = X ms`` or None.
        is_entry: it was announced as an entry function.
        smem: ``N bytes smem`` (0 when not printed).
        cmem: constant bank -> bytes (``380 bytes cmem[0]``).
    """

    name: str
    arch: str | None = None
    registers: int | None = None
    barriers: int = 0
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    cumulative_stack: int = 0
    compile_ms: float | None = None
    is_entry: bool = False
    smem: int = 0
    cmem: dict | None = None

    @property
    def spills(self) -> bool:
        """True when ptxas reported spill stores or loads."""
        return bool(self.spill_stores or self.spill_loads)


_EVENT_RE = re.compile(
    r"Compiling\s+entry\s+function\s+'(?P<entry>[^']+)'(?:\s+for\s+'(?P<arch>[^']+)')?"
    r"|Compiling\s+function\s+'(?P<func>[^']+)'(?:\s+for\s+'(?P<farch>[^']+)')?"
    r"|Function\s+properties\s+for\s+(?P<props>[^\s']+)"
    r"|(?P<frame>\d+)\s+bytes\s+stack\s+frame,\s+(?P<st>\d+)\s+bytes\s+spill\s+stores,\s+(?P<ld>\d+)\s+bytes\s+spill\s+loads"
    r"|Used\s+(?P<regs>\d+)\s+registers(?P<usedrest>[^\n]*)"
    r"|Compile\s+time\s*=\s*(?P<ms>[\d.]+)\s*ms"
)
_BARRIERS_RE = re.compile(r"used\s+(\d+)\s+barriers")
_CUMSTACK_RE = re.compile(r"(\d+)\s+bytes\s+cumulative\s+stack\s+size")
_SMEM_RE = re.compile(r"(\d+)\s+bytes\s+smem")
_CMEM_RE = re.compile(r"(\d+)\s+bytes\s+cmem\[(\d+)\]")


def parse_ptxas_v_all(text: str) -> list[PtxasFunc]:
    """Return every function record of a ``ptxas -v`` log, in order."""
    out: list[PtxasFunc] = []
    cur: PtxasFunc | None = None
    have_props = False
    for m in _EVENT_RE.finditer(text or ""):
        if m.group("entry") or m.group("func"):
            name = m.group("entry") or m.group("func")
            cur = PtxasFunc(name, m.group("arch") or m.group("farch"), is_entry=bool(m.group("entry")))
            out.append(cur)
            have_props = False
        elif m.group("props"):
            name = m.group("props")
            if cur is None or cur.name != name or have_props:
                cur = PtxasFunc(name)
                out.append(cur)
            have_props = True
        elif m.group("frame") is not None:
            if cur is None:
                cur = PtxasFunc("?")
                out.append(cur)
            cur.stack_frame = int(m.group("frame"))
            cur.spill_stores = int(m.group("st"))
            cur.spill_loads = int(m.group("ld"))
        elif m.group("regs") is not None:
            if cur is None:
                cur = PtxasFunc("?")
                out.append(cur)
            cur.registers = int(m.group("regs"))
            rest = m.group("usedrest") or ""
            b = _BARRIERS_RE.search(rest)
            if b:
                cur.barriers = int(b.group(1))
            c = _CUMSTACK_RE.search(rest)
            if c:
                cur.cumulative_stack = int(c.group(1))
            s = _SMEM_RE.search(rest)
            if s:
                cur.smem = int(s.group(1))
            cm = _CMEM_RE.findall(rest)
            if cm:
                cur.cmem = {int(bank): int(n) for n, bank in cm}
        elif m.group("ms") is not None and cur is not None:
            cur.compile_ms = float(m.group("ms"))
    return out


def parse_ptxas_v(text: str) -> dict[str, PtxasFunc]:
    """Parse a ``ptxas -v`` log into name -> :class:`PtxasFunc` (last record per name wins)."""
    return {f.name: f for f in parse_ptxas_v_all(text)}
