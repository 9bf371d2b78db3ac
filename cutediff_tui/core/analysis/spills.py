"""Spill sites in SASS: where local-memory spill stores/loads are, how wide, in which loop.

Loops come from the control-flow graph (:mod:`.cfg`): a backward branch ``s -> h``
whose target ``h`` dominates ``s`` is a back edge, and its natural loop is the set of
blocks that reach ``s`` without passing ``h``. (A plain "target address <= branch
address" test is wrong for SASS: out-of-line slow paths at the end of a function jump
back into the body without forming loops.) A site's loop is the innermost natural loop
containing it; ``depth`` counts the loops that contain it; ``end_addr`` is the address
of the loop's last back-edge branch.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from cutediff_tui.core.analysis.cfg import natural_loops
from cutediff_tui.core.analysis.sass import SassFunction, SassInstr

__all__ = [
    "LoopInfo",
    "SpillSite",
    "SpillSiteDelta",
    "SpillDiff",
    "spill_sites",
    "spill_bytes",
    "find_loops",
    "access_width",
    "diff_spill_sites",
]

_SLOT_RE = re.compile(r"\[([^\]]*)\]")
_WIDTHS = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4}


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """A loop found from a back edge.

    Attributes:
        head_addr: address of the loop head (the branch target).
        end_addr: address of the (last) backward branch.
        depth: number of loops enclosing the site (1 = outermost loop).
        head_line: ``(file, line)`` of the head instruction when line info exists.
    """

    head_addr: int
    end_addr: int
    depth: int
    head_line: tuple | None = None


@dataclass(frozen=True, slots=True)
class SpillSite:
    """One spill instruction.

    Attributes:
        addr, index: position in the function.
        kind: ``"store"`` or ``"load"``.
        opcode: full opcode (``LDL.LU.64``).
        width_bytes: access width.
        slot: stack slot address expression (``R1+0x6c``).
        file, line: source location when line info exists.
        loop: innermost enclosing loop, or None.
    """

    addr: int
    index: int
    kind: str
    opcode: str
    width_bytes: int
    slot: str
    file: str | None
    line: int | None
    loop: LoopInfo | None


def access_width(instr: SassInstr) -> int:
    """Bytes moved by a load/store from its modifiers (default 4)."""
    for m in instr.modifiers:
        w = _WIDTHS.get(m)
        if w is not None:
            return w
    return 4


def _kind(instr: SassInstr) -> str:
    return "store" if instr.base.startswith("ST") else "load"


def find_loops(func: SassFunction) -> list[LoopInfo]:
    """Return the natural loops of a function as :class:`LoopInfo` (depth = nesting depth)."""
    loops, _ = natural_loops(func)
    out = []
    for lp in loops:
        head = func.instrs[lp.head_index]
        out.append(
            LoopInfo(lp.head_addr, lp.latch_addr, lp.depth, (head.file, head.line) if head.line is not None else None)
        )
    return out


def _loop_index(func: SassFunction):
    loops, block_of = natural_loops(func)

    def lookup(index: int) -> LoopInfo | None:
        b = block_of[index]
        enclosing = [lp for lp in loops if b in lp.blocks]
        if not enclosing:
            return None
        lp = min(enclosing, key=lambda x: (len(x.blocks), -x.head_addr))
        head = func.instrs[lp.head_index]
        head_line = (head.file, head.line) if head.line is not None else None
        return LoopInfo(lp.head_addr, lp.latch_addr, len(enclosing), head_line)

    return lookup


def spill_sites(func: SassFunction) -> list[SpillSite]:
    """List the spill stores and loads of a function, with width, slot, source line and loop."""
    spills = [i for i in func.instrs if i.is_spill]
    if not spills:
        return []
    loop_of = _loop_index(func)
    out = []
    for i in spills:
        m = _SLOT_RE.search(i.operands)
        slot = m.group(1).strip() if m else ""
        out.append(
            SpillSite(i.addr, i.index, _kind(i), i.opcode, access_width(i), slot, i.file, i.line, loop_of(i.index))
        )
    return out


def spill_bytes(func: SassFunction) -> tuple[int, int]:
    """Return ``(store_bytes, load_bytes)`` of spill code, from the access widths."""
    st = ld = 0
    for i in func.instrs:
        if i.is_spill:
            if _kind(i) == "store":
                st += access_width(i)
            else:
                ld += access_width(i)
    return st, ld


@dataclass(frozen=True, slots=True)
class SpillSiteDelta:
    """Spill instruction counts at one (file, line, kind) on both sides."""

    file: str | None
    line: int | None
    kind: str
    a_count: int
    b_count: int

    @property
    def change(self) -> int:
        """``b_count - a_count``."""
        return self.b_count - self.a_count


@dataclass(slots=True)
class SpillDiff:
    """Result of :func:`diff_spill_sites`: rows where B has more (added) or fewer (removed)."""

    added: list
    removed: list
    unchanged: list


def diff_spill_sites(a_sites: list[SpillSite], b_sites: list[SpillSite]) -> SpillDiff:
    """Compare spill sites keyed by ``(file, line, kind)``, with counts per side.

    Sites without line info share the key ``(None, None, kind)``. Rows are ordered by
    the size of the change (largest first).
    """
    ca = Counter((s.file, s.line, s.kind) for s in a_sites)
    cb = Counter((s.file, s.line, s.kind) for s in b_sites)
    rows = [SpillSiteDelta(k[0], k[1], k[2], ca.get(k, 0), cb.get(k, 0)) for k in set(ca) | set(cb)]
    rows.sort(key=lambda r: (-abs(r.change), str(r.file), r.line or 0, r.kind))
    return SpillDiff(
        added=[r for r in rows if r.change > 0],
        removed=[r for r in rows if r.change < 0],
        unchanged=[r for r in rows if r.change == 0],
    )
