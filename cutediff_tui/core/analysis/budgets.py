"""Register budgets: ``setmaxnreg`` (PTX) / ``USETMAXREG`` (SASS) per warp role, and launch bounds.

Warp-specialized kernels (FA4, CUTLASS sm90+ GEMMs) hand registers between warp groups at
run time: producers give registers back (``setmaxnreg.dec.sync.aligned.u32 88``, SASS
``USETMAXREG.DEALLOC.CTAPOOL 0x58``), consumers take them (``setmaxnreg.inc ... 176``, SASS
``USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xb0``). These budgets are the knob such kernels are
tuned with, and a change of them changes no opcode count, so they are read here as figures.

The warp role is told from the PTX where the control flow says it: the warp index is
``%tid.x >> 5`` (or ``/ 32``), possibly made uniform with ``shfl.sync.idx``; a budget
instruction reached through a branch on ``warp CMP constant`` (or falling through one) gets
that condition as its role, e.g. ``warps 0-3`` or ``warp 13``. SASS budgets take the role
of the PTX budgets with the same action and value when those agree. Otherwise the role is
None ("cannot be told").

:func:`ptx_register_budgets` and :func:`sass_register_budgets` return
:class:`RegisterBudgets`; ``display()`` gives the short form ``"176/88"`` (increases, then
decreases, each distinct value once, largest first), ``to_json()`` the plain-data form stored
under ``budgets`` (SASS) and ``ptx.budgets`` (PTX) of each side's kernel metrics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["BudgetChange", "RegisterBudgets", "ptx_register_budgets", "sass_register_budgets"]

_REG_RE = re.compile(r"%[\w$]+")
_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F]+|-?\d+)$")
_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}
_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@dataclass(frozen=True, slots=True)
class BudgetChange:
    """One ``setmaxnreg`` / ``USETMAXREG`` instruction.

    Attributes:
        action: ``"inc"`` (take registers) or ``"dec"`` (give them back).
        registers: the new per-thread register budget.
        role: the warps that execute it (``"warps 0-3"``), or None when it cannot be told.
        index: position of the instruction in its function.
        source: ``(file, line)`` from PTX ``.loc`` / SASS line info, else None.
    """

    action: str
    registers: int
    role: str | None
    index: int
    source: tuple | None = None

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "registers": self.registers,
            "role": self.role,
            "index": self.index,
            "source": list(self.source) if self.source else None,
        }


@dataclass(frozen=True, slots=True)
class RegisterBudgets:
    """Register budgets of one kernel in one ISA, with the PTX launch bounds.

    Attributes:
        isa: ``"ptx"`` or ``"sass"``.
        changes: budget instructions in code order.
        maxnreg: ``.maxnreg`` (PTX), else None.
        reqntid: ``.reqntid`` as a tuple, else None.
        maxntid: ``.maxntid`` as a tuple, else None.
        minnctapersm: ``.minnctapersm``, else None.
    """

    isa: str
    changes: tuple[BudgetChange, ...] = ()
    maxnreg: int | None = None
    reqntid: tuple | None = None
    maxntid: tuple | None = None
    minnctapersm: int | None = None

    def values(self, action: str) -> list[int]:
        """Distinct budgets of one action, largest first."""
        return sorted({c.registers for c in self.changes if c.action == action}, reverse=True)

    def display(self) -> str:
        """``"176/88"``: increases then decreases, each distinct value once; ``""`` without budgets."""
        return "/".join(str(v) for v in self.values("inc") + self.values("dec"))

    def roles(self) -> dict[str, list[int]]:
        """Role -> budgets set by it, for the changes whose role is known (``{"warps 4-11": [176]}``)."""
        out: dict[str, list[int]] = {}
        for c in self.changes:
            if c.role is not None and c.registers not in out.setdefault(c.role, []):
                out[c.role].append(c.registers)
        return out

    def to_json(self) -> dict:
        return {
            "isa": self.isa,
            "display": self.display(),
            "inc": self.values("inc"),
            "dec": self.values("dec"),
            "roles": self.roles(),
            "changes": [c.to_json() for c in self.changes],
            "maxnreg": self.maxnreg,
            "reqntid": list(self.reqntid) if self.reqntid else None,
            "maxntid": list(self.maxntid) if self.maxntid else None,
            "minnctapersm": self.minnctapersm,
        }


# ---------------------------------------------------------------- PTX


def _int(tok: str) -> int | None:
    tok = tok.strip().rstrip(";")
    if not _INT_RE.match(tok):
        return None
    return int(tok, 16) if tok[:2] in ("0x", "0X") else int(tok)


def _launch_bounds(directives: Iterable[str]) -> dict:
    out: dict = {}
    for d in directives:
        name, _, rest = d.strip().partition(" ")
        nums = [n for n in (_int(x) for x in rest.replace("\t", " ").split(",")) if n is not None]
        if not nums:
            continue
        if name == ".maxnreg":
            out["maxnreg"] = nums[0]
        elif name == ".minnctapersm":
            out["minnctapersm"] = nums[0]
        elif name in (".reqntid", ".maxntid"):
            out[name[1:]] = tuple(nums)
    return out


_WARP_OPS = frozenset(("mov", "shr", "div", "shfl"))


def _warp_registers(instrs: Sequence) -> set[str]:
    """Registers holding the warp index: ``%tid.x >> 5`` or ``/ 32``, and copies (mov, shfl.sync.idx)."""
    tid: set[str] = set()
    warp: set[str] = set()
    for ins in instrs:
        if ins.base not in _WARP_OPS:
            continue
        text = ins.operands
        if ins.base == "mov" and not warp and "%tid.x" not in text:
            continue  # the common case, before any warp register is known: skip the split
        if ins.base != "mov" and not (tid if ins.base in ("shr", "div") else warp):
            continue
        ops = [o.strip() for o in text.split(",")]
        if len(ops) < 2:
            continue
        dst, src = ops[0], ops[1]
        if ins.base == "mov" and src == "%tid.x":
            tid.add(dst)
        elif (
            (ins.base == "shr" and src in tid and len(ops) > 2 and _int(ops[2]) == 5)
            or (ins.base == "div" and src in tid and len(ops) > 2 and _int(ops[2]) == 32)
            or (ins.base in ("mov", "shfl") and src in warp)
        ):
            warp.add(dst)
    return warp


def _warp_conditions(instrs: Sequence, warp: set[str]) -> dict[str, tuple[str, int]]:
    """Predicate register -> (comparison, constant) for ``setp.CMP.T %p, WARP, K``."""
    out: dict[str, tuple[str, int]] = {}
    for ins in instrs:
        if ins.base != "setp":
            continue
        parts = ins.opcode.split(".")
        cmp = parts[1] if len(parts) > 1 else ""
        ops = [o.strip() for o in ins.operands.split(",")]
        if cmp not in _CMP or len(ops) != 3:
            continue
        if ops[1] in warp and _int(ops[2]) is not None:
            out[ops[0]] = (_UNSIGNED.get(cmp, cmp), _int(ops[2]))  # type: ignore[assignment]
        elif ops[2] in warp and _int(ops[1]) is not None:
            flip = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}
            c = _UNSIGNED.get(cmp, cmp)
            out[ops[0]] = (flip.get(c, c), _int(ops[1]))  # type: ignore[assignment]
    return out


def _guard_condition(pred: str, conds: dict) -> tuple[str, int] | None:
    """Condition under which a guarded branch is taken (``@%p`` / ``@!%p``)."""
    neg = pred.startswith("@!")
    c = conds.get(pred[2:] if neg else pred[1:])
    if c is None:
        return None
    return (_NEGATE[c[0]], c[1]) if neg else c


def _role(cond: tuple[str, int] | None, warps: int | None) -> str | None:
    if cond is None:
        return None
    cmp, k = cond
    last = warps - 1 if warps else None
    lo, hi = 0, last
    if cmp == "eq":
        return f"warp {k}"
    if cmp == "ne":
        return f"warps other than {k}"
    if cmp in ("lt", "le"):
        hi = k - 1 if cmp == "lt" else k
    else:
        lo = k + 1 if cmp == "gt" else k
    if hi is None:
        return f"warps {lo}+"
    if lo > hi:
        return None
    return f"warp {lo}" if lo == hi else f"warps {lo}-{hi}"


def _negated(c: tuple[str, int] | None) -> tuple[str, int] | None:
    return (_NEGATE[c[0]], c[1]) if c else None


def _condition_at(i: int, instrs: Sequence, labels_at: dict, branches: dict, conds: dict) -> tuple[str, int] | None:
    """The warp condition under which instruction ``i``'s basic block runs, if one branch tells it."""
    j = i
    while True:
        if j in labels_at:
            found = [
                _guard_condition(b.pred, conds) if b.pred else None
                for lab in labels_at[j]
                for b in branches.get(lab, ())
            ]
            if j > 0:
                prev = instrs[j - 1]
                if prev.base == "bra" and prev.pred:
                    found.append(_negated(_guard_condition(prev.pred, conds)))
                elif prev.base not in ("bra", "ret", "exit"):
                    found.append(None)  # reached by falling through ordinary code
            return found[0] if len(found) == 1 else None
        if j == 0:
            return None
        prev = instrs[j - 1]
        if prev.base in ("bra", "ret", "exit"):
            return _negated(_guard_condition(prev.pred, conds)) if prev.pred and prev.base == "bra" else None
        j -= 1


def ptx_register_budgets(entry) -> RegisterBudgets:
    """Budgets of a :class:`~.ptx.PtxEntry`: every ``setmaxnreg``, its warp role, the launch bounds."""
    instrs = entry.instrs
    bounds = _launch_bounds(entry.directives)
    sites = [ins for ins in instrs if ins.base == "setmaxnreg"]
    changes: list[BudgetChange] = []
    if sites:
        warp = _warp_registers(instrs)
        conds = _warp_conditions(instrs, warp) if warp else {}
        labels_at: dict[int, list[str]] = {}
        for lab, idx in entry.labels.items():
            labels_at.setdefault(idx, []).append(lab)
        branches: dict[str, list] = {}
        for ins in instrs:
            if ins.base == "bra":
                branches.setdefault(ins.operands.strip(), []).append(ins)
        tids = bounds.get("reqntid") or bounds.get("maxntid")
        warps = None
        if tids:
            total = 1
            for t in tids:
                total *= t
            warps = (total + 31) // 32
        for ins in sites:
            action = "inc" if ".inc" in ins.opcode else "dec"
            regs = _int(ins.operands.split(",")[-1])
            if regs is None:
                continue
            cond = _condition_at(ins.index, instrs, labels_at, branches, conds) if conds else None
            changes.append(BudgetChange(action, regs, _role(cond, warps), ins.index, ins.source))
    return RegisterBudgets(
        "ptx",
        tuple(changes),
        bounds.get("maxnreg"),
        bounds.get("reqntid"),
        bounds.get("maxntid"),
        bounds.get("minnctapersm"),
    )


# ---------------------------------------------------------------- SASS


def _merged_role(roles: set) -> str | None:
    """One role for several PTX sites: the role itself, or single warps joined (``warps 12-15``)."""
    if len(roles) == 1:
        return next(iter(roles))
    if not roles or None in roles or not all(r.startswith("warp ") for r in roles):
        return None
    warps = sorted(int(r[5:]) for r in roles)
    if warps == list(range(warps[0], warps[-1] + 1)):
        return f"warps {warps[0]}-{warps[-1]}"
    return "warps " + ", ".join(str(w) for w in warps)


def sass_register_budgets(func, ptx: RegisterBudgets | None = None) -> RegisterBudgets:
    """Budgets of a :class:`~.sass.SassFunction`: ``USETMAXREG`` immediates (``0x58`` = 88).

    ``DEALLOC`` is a decrease, ``TRY_ALLOC``/``ALLOC`` an increase. Roles come from ``ptx``
    (the same kernel's PTX budgets): the role shared by every PTX budget of that action and
    value, or their single warps joined (``warps 12-15``); launch bounds are copied from it.
    """
    roles: dict[tuple[str, int], set] = {}
    if ptx is not None:
        for c in ptx.changes:
            roles.setdefault((c.action, c.registers), set()).add(c.role)
    changes: list[BudgetChange] = []
    for ins in getattr(func, "instrs", func):
        if ins.base != "USETMAXREG":
            continue
        regs = _int(ins.operands.split(",")[-1])
        if regs is None:
            continue
        action = "dec" if "DEALLOC" in ins.modifiers else "inc"
        role = _merged_role(roles.get((action, regs), set()))
        src = (ins.file, ins.line) if ins.line is not None else None
        changes.append(BudgetChange(action, regs, role, ins.index, src))
    if ptx is None:
        return RegisterBudgets("sass", tuple(changes))
    return RegisterBudgets("sass", tuple(changes), ptx.maxnreg, ptx.reqntid, ptx.maxntid, ptx.minnctapersm)
