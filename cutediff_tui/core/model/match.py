""" "SASS match" (and PTX match), defined once: matched pairs of A's and B's instructions.

The rename-aware alignment pairs an instruction of side A with one of side B when they are equal
under per-instruction register renaming; ``matched`` is the number of such pairs. Every face
shows it the same way, with both sides' instruction counts, e.g. ``3549 pairs of 5440 A and
5562 B instructions`` (never a bare percentage next to ``3549/11002``: ``total`` in the JSON is
A's count plus B's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["InstructionMatch", "instruction_match"]


@dataclass(frozen=True)
class InstructionMatch:
    """``matched`` pairs of A's ``a_count`` and B's ``b_count`` instructions (SASS or PTX)."""

    what: str
    matched: int
    a_count: int
    b_count: int

    def cell(self, side: str) -> str:
        """A table cell for one side: ``3549 of 5440``."""
        return f"{self.matched} of {self.a_count if side == 'a' else self.b_count}"

    def short(self) -> str:
        """``3549 pairs · A 5440 · B 5562``."""
        return f"{self.matched} pairs · A {self.a_count} · B {self.b_count}"

    def sentence(self) -> str:
        """``SASS: 3549 matched pairs of 5440 A and 5562 B instructions``."""
        return f"{self.what}: {self.matched} matched pairs of {self.a_count} A and {self.b_count} B instructions"


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def instruction_match(kernel: Mapping[str, Any], what: str = "SASS") -> InstructionMatch | None:
    """The SASS (or ``what="PTX"``) match of a comparison kernel, or None when not aligned.

    The sides' counts come from the alignment (``a_count``/``b_count``), else from the sides'
    instruction counts when they add up to the alignment's ``total``, else they are split
    evenly-unknown and the match is not shown (None)."""
    al = kernel.get("alignment" if what == "SASS" else "ptx_alignment")
    if not isinstance(al, Mapping):
        return None
    matched, total = _int(al.get("matched")), _int(al.get("total"))
    if matched is None:
        return None
    na, nb = _int(al.get("a_count")), _int(al.get("b_count"))
    if na is None or nb is None:
        counts = []
        for s in ("a", "b"):
            raw = kernel.get(s)
            m: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
            if what != "SASS":
                ptx = m.get("ptx")
                m = ptx if isinstance(ptx, Mapping) else {}
            counts.append(_int(m.get("instructions")))
        na, nb = counts
        if na is None or nb is None or (total is not None and na + nb != total):
            return None
    return InstructionMatch(what, matched, na, nb)
