"""Memory operations by address space, direction and width, in SASS and in PTX.

Every load, store and atomic of a kernel is put in one address space:

========== ============================================ ==============================================
space      SASS                                         PTX
========== ============================================ ==============================================
local      ``LDL``/``STL``; generic ``LD``/``ST`` whose ``ld.local``/``st.local``; generic ``ld``/``st``
           address is the stack pointer ``R1`` or a     through ``%SP`` or a register derived from
           register computed from it                    ``cvta.local`` / ``%SP``
global     ``LDG``/``STG``/``ATOMG``/``REDG``,          ``.global``; ``cp.async.bulk`` to/from global,
           ``LDGSTS``, TMA ``UTMALDG``/``UTMASTG``,     ``cp.async.ca/cg`` (global to shared)
           ``UBLKCP``
shared     ``LDS``/``STS``/``LDSM``/``STSM``/``ATOMS``  ``.shared``/``.shared::cta``, ``ldmatrix``,
                                                        ``stmatrix``
dsmem      (not told apart in SASS: generic accesses)   ``.shared::cluster`` (distributed shared)
tmem       ``LDTM``/``STTM``                            ``tcgen05.ld``/``tcgen05.st``
const      ``LDC``/``ULDC``/``LDCU``                    ``.const``
param      --                                           ``.param`` (kernel parameters)
generic    ``LD``/``ST``/``ATOM``/``RED`` not on the    ``ld``/``st``/``atom``/``red`` with no space
           stack
========== ============================================ ==============================================

Each row keeps the opcode as written (``STG.E.128`` and ``STG.E.U16`` are two rows;
``st.global.v4.b32`` and ``st.global.b16`` too) with its width in bits per thread. Byte
figures are static: the sum of the widths of the instructions in the code (each counted
once, as :func:`.spills.spill_bytes` does), not the traffic of a run. Bulk copies (TMA) have
no per-thread width: they count as instructions with 0 bytes.

:func:`sass_memory_ops` and :func:`ptx_memory_ops` return a :class:`MemoryOps`, whose
``to_json()`` is the plain-data form stored under ``memory`` (SASS) and ``ptx.memory`` (PTX)
of each side's kernel metrics.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MemOp",
    "MemoryOps",
    "SPACES",
    "sass_memory_ops",
    "ptx_memory_ops",
    "sass_mem_op",
    "ptx_mem_op",
    "stack_registers",
]

SPACES = ("local", "global", "shared", "dsmem", "tmem", "const", "param", "generic")
"""Address spaces in display order."""

# SASS base opcode -> (space, kind); LD/ST/ATOM (generic) are decided per instruction.
_SASS_OPS = {
    "LDL": ("local", "load"),
    "STL": ("local", "store"),
    "LDG": ("global", "load"),
    "STG": ("global", "store"),
    "ATOMG": ("global", "atomic"),
    "REDG": ("global", "atomic"),
    "LDGSTS": ("global", "load"),
    "UTMALDG": ("global", "load"),
    "UTMASTG": ("global", "store"),
    "UTMAREDG": ("global", "atomic"),
    "LDS": ("shared", "load"),
    "STS": ("shared", "store"),
    "LDSM": ("shared", "load"),
    "STSM": ("shared", "store"),
    "ATOMS": ("shared", "atomic"),
    "LDTM": ("tmem", "load"),
    "STTM": ("tmem", "store"),
    "LDC": ("const", "load"),
    "ULDC": ("const", "load"),
    "LDCU": ("const", "load"),
    "LD": ("generic", "load"),
    "ST": ("generic", "store"),
    "ATOM": ("generic", "atomic"),
    "RED": ("generic", "atomic"),
    "UBLKCP": ("global", "load"),
}
_BULK_SASS = frozenset(("UTMALDG", "UTMASTG", "UTMAREDG", "UBLKCP"))
_SASS_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128, "32": 32}
_X_RE = re.compile(r"^x(\d+)$")
_ADDR_RE = re.compile(r"\[([^\]]*)\]")
_STACK_POINTER = "R1"

_PTX_SPACES = {
    "local": "local",
    "global": "global",
    "shared": "shared",
    "const": "const",
    "param": "param",
}
_PTX_KIND = {"ld": "load", "ldu": "load", "st": "store", "atom": "atomic", "red": "atomic"}
_PTX_TYPE_BITS = {
    "b8": 8, "s8": 8, "u8": 8, "b16": 16, "s16": 16, "u16": 16, "f16": 16, "bf16": 16,
    "b32": 32, "s32": 32, "u32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "b64": 64, "s64": 64, "u64": 64,
    "f64": 64, "b128": 128,
}  # fmt: skip
_PTX_REG_RE = re.compile(r"%?[A-Za-z_$][\w$]*")
_TMEM_SHAPE_REGS = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}


@dataclass(frozen=True, slots=True)
class MemOp:
    """Instructions of one opcode in one address space.

    Attributes:
        space: one of :data:`SPACES`.
        kind: ``"load"``, ``"store"`` or ``"atomic"``.
        opcode: as written, without guard (``STG.E.128``, ``st.global.v4.b32``); a generic
            SASS access to the stack is suffixed `` [stack]`` so it stays its own row.
        width_bits: bits moved per thread by one instruction (0 for bulk copies).
        count: instructions in the kernel.
    """

    space: str
    kind: str
    opcode: str
    width_bits: int
    count: int

    @property
    def bytes(self) -> int:
        """Static bytes per thread: ``count * width``."""
        return self.count * self.width_bits // 8

    def to_json(self) -> dict:
        return {
            "space": self.space,
            "kind": self.kind,
            "opcode": self.opcode,
            "width_bits": self.width_bits,
            "count": self.count,
            "bytes": self.bytes,
        }


@dataclass(frozen=True, slots=True)
class MemoryOps:
    """The memory operations of one kernel in one ISA (``"sass"`` or ``"ptx"``)."""

    isa: str
    rows: tuple[MemOp, ...]

    def total(self, space: str, kind: str | None = None) -> tuple[int, int]:
        """(instructions, bytes) in a space, for one kind or all kinds."""
        n = b = 0
        for r in self.rows:
            if r.space == space and (kind is None or r.kind == kind):
                n += r.count
                b += r.bytes
        return n, b

    def by_space(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{space: {kind: {"count": n, "bytes": b}}}`` for the spaces present, in display order."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for space in SPACES:
            for r in self.rows:
                if r.space != space:
                    continue
                d = out.setdefault(space, {}).setdefault(r.kind, {"count": 0, "bytes": 0})
                d["count"] += r.count
                d["bytes"] += r.bytes
        return out

    def widths(self, space: str, kind: str) -> dict[int, int]:
        """Instructions per width in bits, e.g. ``{128: 8}`` for eight 128-bit global stores."""
        out: dict[int, int] = {}
        for r in self.rows:
            if r.space == space and r.kind == kind:
                out[r.width_bits] = out.get(r.width_bits, 0) + r.count
        return dict(sorted(out.items()))

    def to_json(self) -> dict:
        return {
            "isa": self.isa,
            "by_space": self.by_space(),
            "ops": [r.to_json() for r in self.rows],
        }


def _rows(isa: str, counts: Counter) -> MemoryOps:
    order = {s: i for i, s in enumerate(SPACES)}
    rows = [MemOp(sp, kind, op, w, n) for (sp, kind, op, w), n in counts.items()]
    rows.sort(key=lambda r: (order.get(r.space, 99), r.kind, -r.count, r.opcode))
    return MemoryOps(isa, tuple(rows))


# ---------------------------------------------------------------- SASS


def _sass_width(base: str, modifiers: tuple) -> int:
    if base in _BULK_SASS:
        return 0
    if base in ("LDSM", "STSM"):
        # LDSM.16.M88.4: four 8x8 16-bit matrices, one 32-bit register each per thread
        n = next((int(m) for m in reversed(modifiers) if m in ("1", "2", "4")), 1)
        return 32 * n
    if base in ("LDTM", "STTM"):
        for m in modifiers:
            x = _X_RE.match(m)
            if x:
                return 32 * int(x.group(1))
        return 32
    for m in modifiers:
        w = _SASS_WIDTH.get(m)
        if w is not None:
            return w
    return 32


def _address_base(operands: str) -> str | None:
    """Base register of the (last) memory operand: ``R1`` in ``[R1+0x10]``, ``R2`` in ``[R2.64+0x30]``."""
    addrs = _ADDR_RE.findall(operands)
    if not addrs:
        return None
    base = addrs[-1].split("+", 1)[0].split("-", 1)[0].strip()
    return base.split(".", 1)[0]


def sass_mem_op(instr, stack_regs: set[str] | frozenset = frozenset((_STACK_POINTER,))) -> tuple | None:
    """(space, kind, opcode key, width in bits) of one SASS instruction, or None if it is no memory access.

    A generic ``LD``/``ST``/``ATOM`` whose address register is in ``stack_regs`` (the stack
    pointer ``R1`` and registers computed from it, see :func:`stack_registers`) is a local
    access; its key gets `` [stack]`` so it stays apart from the generic rows.
    """
    hit = _SASS_OPS.get(instr.base)
    if hit is None:
        return None
    space, kind = hit
    opcode = instr.opcode
    if space == "generic" and _address_base(instr.operands) in stack_regs:
        space, opcode = "local", opcode + " [stack]"
    return space, kind, opcode, _sass_width(instr.base, instr.modifiers)


_SASS_REG_RE = re.compile(r"\bU?R\d+\b")
_ADDR_ARITH = frozenset(("IADD3", "IADD", "VIADD", "IMAD", "LEA", "MOV", "IADD32I", "IMAD.IADD", "IMAD.MOV"))


def stack_registers(instrs: Iterable) -> dict[int, frozenset]:
    """For each generic ``LD``/``ST``/``ATOM``, the registers that hold stack addresses just before it.

    Empty when the code has no generic access. Otherwise a forward scan in code order: ``R1``
    (the stack pointer) and the destination of integer arithmetic (``IADD3``, ``VIADD``,
    ``IMAD``, ``LEA``, ``MOV``...) with a stack register among its sources are stack registers;
    an instruction that writes a register from other sources removes it. This is how ptxas forms generic addresses of the stack: ``IADD3 R2, P0, R1,
    c[0x0][0x20]`` (the local window) then ``ST.E [R2.64+0x30]``. Branches are ignored, so a
    register set on one path and read on another can be misjudged; ptxas keeps such address
    arithmetic next to its use in the code seen so far.
    """
    regs = {_STACK_POINTER}
    out: dict[int, frozenset] = {}
    seq = list(instrs)
    if not any(_SASS_OPS.get(i.base, ("",))[0] == "generic" for i in seq):
        return out  # nothing to decide: skip the scan (most kernels)
    for ins in seq:
        base = ins.base
        hit = _SASS_OPS.get(base)
        if hit is not None:
            if hit[0] == "generic":
                out[ins.index] = frozenset(regs)
            continue
        first, _, rest = ins.operands.partition(",")
        dst = first.strip()
        if (
            base in _ADDR_ARITH
            and _SASS_REG_RE.fullmatch(dst)
            and any(r in rest for r in regs)
            and any(r in regs for r in _SASS_REG_RE.findall(rest))
        ):
            regs.add(dst)
            continue
        if dst in regs and dst != _STACK_POINTER:
            regs.discard(dst)  # overwritten from other sources
    return out


def sass_memory_ops(instrs: Iterable) -> MemoryOps:
    """Memory operations of SASS instructions (a :class:`~.sass.SassFunction` or any iterable)."""
    seq = list(getattr(instrs, "instrs", instrs))
    stack = stack_registers(seq)
    default = frozenset((_STACK_POINTER,))
    counts: Counter = Counter()
    ops = _SASS_OPS
    for ins in seq:
        if ins.base in ops:
            counts[sass_mem_op(ins, stack.get(ins.index, default))] += 1
    return _rows("sass", counts)


# ---------------------------------------------------------------- PTX


def _ptx_parts(opcode: str) -> list[str]:
    return opcode.split(".")


def _ptx_space(parts: list[str]) -> str | None:
    for p in parts[1:]:
        if p == "shared::cluster":
            return "dsmem"
        head = p.split("::", 1)[0]
        sp = _PTX_SPACES.get(head)
        if sp is not None:
            return sp
    return None


def _ptx_width(parts: list[str], operands: str) -> int:
    vec = 1
    bits = 0
    for p in parts[1:]:
        if p[:1] == "v" and p[1:].isdigit():
            vec = int(p[1:])
        elif p in _PTX_TYPE_BITS:
            bits = _PTX_TYPE_BITS[p]
    return vec * (bits or 32)


def _tmem_width(parts: list[str], operands: str) -> int:
    regs = operands.count("%") - 1 if "{" in operands else 0  # registers in the {...} list
    if regs > 0:
        return 32 * regs
    shape = next((p for p in parts if p in _TMEM_SHAPE_REGS), "32x32b")
    num = next((int(p[1:]) for p in parts if p[:1] == "x" and p[1:].isdigit()), 1)
    return 32 * num * _TMEM_SHAPE_REGS[shape]


def _int_operand(ops: list[str]) -> int | None:
    tok = ops[0].strip() if ops else ""
    return int(tok) if tok.isdigit() else None


def _first_address(operands: str) -> str | None:
    m = _ADDR_RE.search(operands)
    if not m:
        return None
    return m.group(1).split("+", 1)[0].strip()


def ptx_mem_op(instr, local_regs: set[str] | frozenset = frozenset()) -> tuple[str, str, str, int] | None:
    """(space, kind, opcode, width in bits) of one PTX instruction, or None if it is no memory access.

    ``local_regs`` are registers that hold generic addresses of the local depot at this
    instruction: a generic access through one of them counts as local.
    """
    base = instr.base
    opcode = instr.opcode
    parts = _ptx_parts(opcode)
    if base == "tcgen05" and len(parts) > 1 and parts[1] in ("ld", "st"):
        return "tmem", "load" if parts[1] == "ld" else "store", opcode, _tmem_width(parts, instr.operands)
    if base == "ldmatrix" or base == "stmatrix":
        n = next((int(p[1:]) for p in parts if p[:1] == "x" and p[1:].isdigit()), 1)
        return "shared", "load" if base == "ldmatrix" else "store", opcode, 32 * n
    if base == "cp" and opcode.startswith("cp.async.bulk") and ".prefetch" not in opcode:
        src_global = ".global" in opcode.split("shared", 1)[-1] if "shared" in opcode else True
        return "global", "load" if src_global else "store", opcode, 0
    if base == "cp" and opcode.startswith("cp.async.c"):  # cp.async.ca/cg.shared.global [dst], [src], 16
        size = _int_operand(instr.operands.split(",")[2:3])
        return "global", "load", opcode, 8 * size if size else 0
    kind = _PTX_KIND.get(base)
    if kind is None:
        return None
    space = _ptx_space(parts)
    if space is None:
        addr = _first_address(instr.operands)
        space = "local" if addr is not None and addr in local_regs else "generic"
    return space, kind, opcode, _ptx_width(parts, instr.operands)


_ADDR_OPS = frozenset(("mov", "add", "sub", "cvta", "cvt", "mad"))
_PTX_MEM_BASES = frozenset((*_PTX_KIND, "tcgen05", "ldmatrix", "stmatrix", "cp"))


def _update_local_registers(ins, regs: set[str]) -> None:
    """Track generic addresses of the local depot across one instruction (see :func:`ptx_memory_ops`)."""
    text = ins.operands
    is_cvta_local = ins.opcode.startswith("cvta.local")
    if not is_cvta_local and not any(r in text for r in regs):
        return
    first, _, rest = text.partition(",")
    dst = first.strip()
    if ins.base in _ADDR_OPS and _PTX_REG_RE.fullmatch(dst):
        srcs = _PTX_REG_RE.findall(rest)  # names of inline-asm registers may lack the %
        if is_cvta_local or (not ins.opcode.startswith("cvta.to") and any(r in regs for r in srcs)):
            regs.add(dst)
            return
    if dst in regs and dst != "%SP":
        regs.discard(dst)  # overwritten from something else


def ptx_memory_ops(instrs: Iterable) -> MemoryOps:
    """Memory operations of PTX instructions (a :class:`~.ptx.PtxEntry` or any iterable).

    A generic ``ld``/``st``/``atom``/``red`` is local when its address register holds a generic
    address of the local depot at that point, in code order: ``%SP``, the result of
    ``cvta.local``, or of ``mov``/``add``/``sub``/``cvt``/``mad`` of such a register; a register
    written from anything else stops being one (inline-asm blocks reuse their register names).
    """
    regs = {"%SP"}
    counts: Counter = Counter()
    for ins in getattr(instrs, "instrs", instrs):
        if ins.base in _PTX_MEM_BASES:
            hit = ptx_mem_op(ins, regs)
            if hit is not None:
                counts[hit] += 1
        if len(regs) > 1:
            _update_local_registers(ins, regs)
        elif ins.base in _ADDR_OPS and ("%SP" in ins.operands or ins.opcode.startswith("cvta.local")):
            _update_local_registers(ins, regs)  # with %SP alone, only address arithmetic from it matters
    return _rows("ptx", counts)
