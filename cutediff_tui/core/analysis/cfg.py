"""Basic blocks, dominators and natural loops of a SASS function.

SASS puts slow paths (mbarrier try-wait retries, traps) out of line at the end of a
function and jumps back from there, so "a branch to a lower address" is not a loop.
Loops are therefore found the textbook way: a back edge is an edge ``s -> h`` where
``h`` dominates ``s``; its natural loop is ``h`` plus every block that reaches ``s``
without passing through ``h``. Back edges sharing a head form one loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cutediff_tui.core.analysis.sass import SassFunction, SassInstr

__all__ = ["Block", "Loop", "build_blocks", "natural_loops", "BRANCH_OPS"]

#: Opcodes that transfer control to a label operand.
BRANCH_OPS = frozenset(("BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU"))
_NO_FALLTHROUGH = frozenset(("EXIT", "RET", "KILL"))
_LABEL_RE = re.compile(r"`\(([^)\s]+)\)")


@dataclass(slots=True)
class Block:
    """A basic block: instructions ``[start, end)`` of the function (indices)."""

    id: int
    start: int
    end: int
    succs: list = field(default_factory=list)
    preds: list = field(default_factory=list)


@dataclass(slots=True)
class Loop:
    """A natural loop.

    Attributes:
        head: head block id; ``head_index`` / ``head_addr`` locate its first instruction.
        latch_addr: address of the last back-edge branch.
        blocks: ids of the blocks in the body (head included).
        depth: nesting depth (1 = outermost).
        n_instrs: instructions in the body.
    """

    head: int
    head_index: int
    head_addr: int
    latch_addr: int
    blocks: frozenset
    depth: int = 1
    n_instrs: int = 0


def _targets(ins: SassInstr) -> list[str]:
    out = _LABEL_RE.findall(ins.operands)
    for tag in ins.tags:
        if tag.startswith("BRANCH_TARGETS"):
            out += [t.strip() for t in tag[len("BRANCH_TARGETS") :].split(",") if t.strip()]
    return out


def _conditional(ins: SassInstr) -> bool:
    if ins.pred and ins.pred not in ("@PT", "@UPT"):
        return True
    ops = ins.operands
    k = ops.find("`(")
    head = ops[:k] if k >= 0 else ops
    return "," in head  # e.g. "BRA.U UP3, `(.L_x_0)" or "BRA.DIV UR4, `(...)"


def build_blocks(func: SassFunction) -> tuple[list[Block], list[int]]:
    """Split a function into basic blocks.

    Returns:
        ``(blocks, block_of)`` where ``block_of[i]`` is the block id of instruction i.
    """
    instrs = func.instrs
    n = len(instrs)
    if n == 0:
        return [], []
    addr_to_idx = {ins.addr: ins.index for ins in instrs}
    leaders = {0}
    label_idx: dict[str, int] = {}
    for lab, a in func.labels.items():
        i = addr_to_idx.get(a)
        if i is not None:
            label_idx[lab] = i
    for ins in instrs:
        b = ins.base
        if b in BRANCH_OPS or b in _NO_FALLTHROUGH:
            if ins.index + 1 < n:
                leaders.add(ins.index + 1)
            if b in BRANCH_OPS:
                for lab in _targets(ins):
                    t = label_idx.get(lab)
                    if t is not None:
                        leaders.add(t)
    starts = sorted(leaders)
    blocks: list[Block] = []
    block_of = [0] * n
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else n
        blocks.append(Block(k, s, e))
        for i in range(s, e):
            block_of[i] = k
    for blk in blocks:
        last = instrs[blk.end - 1]
        b = last.base
        succ: list[int] = []
        falls = True
        if b in BRANCH_OPS:
            for lab in _targets(last):
                t = label_idx.get(lab)
                if t is not None:
                    succ.append(block_of[t])
            falls = _conditional(last)
        elif b in _NO_FALLTHROUGH:
            falls = bool(last.pred) and last.pred not in ("@PT", "@UPT")
        if falls and blk.end < n:
            succ.append(block_of[blk.end])
        seen = set()
        for s_ in succ:
            if s_ not in seen:
                seen.add(s_)
                blk.succs.append(s_)
                blocks[s_].preds.append(blk.id)
    return blocks, block_of


def _dominators(blocks: list[Block]) -> list[int | None]:
    """Immediate dominators (Cooper, Harvey & Kennedy); None for unreachable blocks."""
    n = len(blocks)
    order: list[int] = []
    seen = [False] * n
    stack = [(0, 0)]
    seen[0] = True
    while stack:
        b, k = stack.pop()
        succs = blocks[b].succs
        if k < len(succs):
            stack.append((b, k + 1))
            s = succs[k]
            if not seen[s]:
                seen[s] = True
                stack.append((s, 0))
        else:
            order.append(b)
    rpo = order[::-1]
    pos = {b: i for i, b in enumerate(rpo)}
    idom: list[int | None] = [None] * n
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = None
            for p in blocks[b].preds:
                if idom[p] is None:
                    continue
                if new is None:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while pos[x] > pos[y]:
                        x = idom[x]  # type: ignore[assignment]
                    while pos[y] > pos[x]:
                        y = idom[y]  # type: ignore[assignment]
                new = x
            if new is not None and idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def _dominates(idom: list[int | None], h: int, s: int) -> bool:
    if idom[s] is None:
        return False
    x = s
    while True:
        if x == h:
            return True
        p = idom[x]
        if p is None or p == x:
            return False
        x = p


def natural_loops(func: SassFunction) -> tuple[list[Loop], list[int]]:
    """Find natural loops.

    Returns:
        ``(loops, block_of)``; loops sorted by head address, each with its nesting depth.
    """
    blocks, block_of = build_blocks(func)
    if not blocks:
        return [], block_of
    idom = _dominators(blocks)
    bodies: dict[int, set[int]] = {}
    latch: dict[int, int] = {}
    for blk in blocks:
        for h in blk.succs:
            if _dominates(idom, h, blk.id):
                body = bodies.setdefault(h, {h})
                stack = [blk.id]
                while stack:
                    x = stack.pop()
                    if x in body:
                        continue
                    body.add(x)
                    stack.extend(p for p in blocks[x].preds if p not in body)
                a = func.instrs[blk.end - 1].addr
                latch[h] = max(latch.get(h, a), a)
    loops = []
    for h, body in bodies.items():
        hi = blocks[h].start
        loops.append(
            Loop(
                h,
                hi,
                func.instrs[hi].addr,
                latch[h],
                frozenset(body),
                n_instrs=sum(blocks[b].end - blocks[b].start for b in body),
            )
        )
    for lp in loops:
        lp.depth = sum(1 for o in loops if lp.head in o.blocks)
    loops.sort(key=lambda lp: lp.head_addr)
    return loops, block_of
