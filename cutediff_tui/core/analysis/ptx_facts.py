"""PTX figures of one kernel: the ``.local`` depot, register declarations, opcodes with type and width.

The PTX is what the DSL emits before ptxas, so these figures tell a change in the DSL's
output from one made by ptxas: a ``.local`` depot that grows (16 -> 0 B), ``.reg .b32``
declarations that double, ``st.global.v4.b32`` turned into ``st.global.b16``.
:func:`ptx_facts` reads them from a :class:`~.ptx.PtxEntry`; :func:`opcode_deltas` ranks the
opcode changes between two sides (largest first), each opcode keeping its full dotted form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["PtxFacts", "OpcodeDelta", "ptx_facts", "opcode_deltas"]


@dataclass(frozen=True, slots=True)
class PtxFacts:
    """PTX figures of one entry.

    Attributes:
        instructions: instruction statements.
        local_bytes: bytes of the ``.local`` declarations (the PTX-level stack, ``__local_depot``).
        reg_decls: declared registers per type (``{"b32": 123, "pred": 7}``; ``%r<123>`` is 123).
        opcodes: instructions per full dotted opcode (``st.global.v4.b32``).
    """

    instructions: int
    local_bytes: int
    reg_decls: dict = field(default_factory=dict)
    opcodes: dict = field(default_factory=dict)

    @property
    def registers_declared(self) -> int:
        """All declared registers, predicates included."""
        return sum(self.reg_decls.values())

    def to_json(self) -> dict:
        return {
            "instructions": self.instructions,
            "local_bytes": self.local_bytes,
            "reg_decls": dict(self.reg_decls),
            "registers_declared": self.registers_declared,
            "opcodes": dict(self.opcodes),
        }


@dataclass(frozen=True, slots=True)
class OpcodeDelta:
    """One PTX opcode counted on both sides."""

    opcode: str
    a: int
    b: int

    @property
    def delta(self) -> int:
        return self.b - self.a

    def to_json(self) -> dict:
        return {"opcode": self.opcode, "a": self.a, "b": self.b, "delta": self.delta}


def ptx_facts(entry) -> PtxFacts:
    """Figures of a :class:`~.ptx.PtxEntry`."""
    return PtxFacts(
        instructions=len(entry.instrs),
        local_bytes=entry.local_bytes,
        reg_decls=dict(entry.reg_decls),
        opcodes=dict(Counter(i.opcode for i in entry.instrs)),
    )


def opcode_deltas(a: Mapping[str, int], b: Mapping[str, int], top: int | None = None) -> list[OpcodeDelta]:
    """Opcodes whose count changed, largest absolute change first (then by opcode); ``top`` keeps the first N."""
    rows = [OpcodeDelta(op, a.get(op, 0), b.get(op, 0)) for op in set(a) | set(b) if a.get(op, 0) != b.get(op, 0)]
    rows.sort(key=lambda d: (-abs(d.delta), d.opcode))
    return rows if top is None else rows[:top]
