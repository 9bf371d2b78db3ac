"""Benchmark shapes: the original report's three by default, or user-given ones."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from ..errors import CutediffError


@dataclass(frozen=True)
class Shape:
    """Varlen attention problem: ``total`` tokens in ``docs`` equal documents, ``heads`` heads."""

    total: int
    heads: int
    docs: int
    hdim: int = 128
    causal: bool = True
    dtype: str = "bf16"

    @property
    def label(self) -> str:
        return f"{self.total}x{self.heads}h/{self.docs}"

    def to_json(self) -> dict:
        return asdict(self) | {"label": self.label}

    def flops(self, mode: str) -> float:
        """Matmul FLOPs of one call (causal halves the work); bwd counts 2.5x fwd."""
        seqlen = self.total / self.docs
        fwd = 4 * self.docs * seqlen * seqlen * self.heads * self.hdim
        if self.causal:
            fwd /= 2
        return {"fwd": fwd, "bwd": 2.5 * fwd, "fwdbwd": 3.5 * fwd}[mode]


DEFAULT_SHAPES = (Shape(8192, 32, 4), Shape(32768, 32, 8), Shape(32768, 16, 1))
_SHAPE = re.compile(r"^(\d+)x(\d+)h?/(\d+)$")


def parse_shape(text: str, hdim: int = 128, causal: bool = True, dtype: str = "bf16") -> Shape:
    """``8192x32h/4`` → 8192 tokens, 32 heads, 4 documents."""
    m = _SHAPE.match(text.strip())
    if not m:
        raise CutediffError(f"Shape {text!r} is not TOTALxHEADSh/DOCS.", "Write it like 8192x32h/4.")
    total, heads, docs = (int(g) for g in m.groups())
    if docs < 1 or total < docs:
        raise CutediffError(f"Shape {text!r} has fewer tokens than documents.", "Use at least one token per document.")
    return Shape(total, heads, docs, hdim, causal, dtype)
