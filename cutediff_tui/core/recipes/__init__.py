"""Kernel recipes: what to compile, declared with parameters the CLI and TUI can offer.

A recipe is a Python callable ``recipe(ctx)`` run inside a toolchain worker. It gets a
:class:`~cutediff_tui.core.recipes.context.RecipeContext` (target arch, parameters, fake-tensor
helpers) and compiles one or more kernels with ``cute.compile``; cutediff captures every kernel
compiled, whatever the DSL version. Built-in recipes are listed in :data:`BUILTINS`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CutediffError


@dataclass(frozen=True)
class Param:
    """A recipe parameter (name as used on the CLI, with underscores)."""

    name: str
    type: str  # "int" | "bool" | "str" | "window"
    default: Any
    choices: tuple = ()
    help: str = ""


@dataclass(frozen=True)
class RecipeInfo:
    """A recipe known to cutediff."""

    name: str
    summary: str
    entry: str  # "module:function" importable inside the worker
    params: tuple[Param, ...] = ()
    archs: tuple[int, ...] = (90, 100, 120)  # arch families it supports
    needs: tuple[str, ...] = ()  # packages that must be pinned or importable
    source_files: tuple[str, ...] = field(default=())

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def source_digest(self) -> str:
        module = self.entry.split(":")[0]
        h = hashlib.sha256(self.entry.encode())
        path = module_file(module)
        if path and path.is_file():
            h.update(path.read_bytes())
        for extra in self.source_files:
            p = Path(extra)
            if p.is_file():
                h.update(p.read_bytes())
        return h.hexdigest()[:16]

    def to_json(self) -> dict:
        d = asdict(self)
        d["params"] = [asdict(p) for p in self.params]
        return d


def module_file(module: str) -> Path | None:
    if module.startswith("cutediff_tui."):
        base = Path(__file__).resolve().parents[2]
        return base.joinpath(*module.split(".")).with_suffix(".py")
    p = Path(module)
    return p if p.suffix == ".py" else None


def _fa4_params() -> tuple[Param, ...]:
    return (
        Param("varlen", "bool", True, help="variable-length (packed) sequences; --batched for fixed length"),
        Param("causal", "bool", True, help="causal mask"),
        Param("hdim", "int", 128, help="head dimension of Q/K"),
        Param("hdim_v", "int", 0, help="head dimension of V (0: same as --hdim)"),
        Param("heads", "int", 32, help="query heads"),
        Param("kv_heads", "int", 0, help="key/value heads for GQA (0: same as --heads)"),
        Param("dtype", "str", "bf16", choices=("bf16", "fp16"), help="element type"),
        Param("seqlen", "int", 2048, help="sequence length (batched)"),
        Param("batch", "int", 4, help="batch size (batched)"),
        Param("total", "int", 8192, help="total tokens (varlen)"),
        Param("docs", "int", 4, help="documents (varlen)"),
        Param("window", "window", None, help="sliding window L,R (e.g. 128,0)"),
    )


BUILTINS: dict[str, RecipeInfo] = {
    r.name: r
    for r in (
        RecipeInfo(
            "fa4-fwd", "FlashAttention-4 forward", "cutediff_tui.core.recipes.fa4:fa4_fwd",
            _fa4_params(), (90, 100, 110, 120), ("flash-attn-4",),
        ),
        RecipeInfo(
            "fa4-bwd", "FlashAttention-4 backward (pre/post-process and main kernels)",
            "cutediff_tui.core.recipes.fa4:fa4_bwd", _fa4_params(), (90, 100, 110, 120), ("flash-attn-4",),
        ),
        RecipeInfo(
            "fa4-fwdbwd", "FlashAttention-4 forward and backward", "cutediff_tui.core.recipes.fa4:fa4_fwdbwd",
            _fa4_params(), (90, 100, 110, 120), ("flash-attn-4",),
        ),
    )
}


def get_recipe(name: str) -> RecipeInfo:
    if name in BUILTINS:
        return BUILTINS[name]
    raise CutediffError(
        f"There is no recipe called {name!r}.", f"Built-in recipes: {', '.join(BUILTINS)} (cutediff recipes lists them)."
    )


def coerce_params(recipe: RecipeInfo, given: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and check types/choices of user parameters."""
    out = recipe.defaults()
    known = {p.name: p for p in recipe.params}
    for key, value in given.items():
        if value is None:
            continue
        if key not in known:
            raise CutediffError(f"Recipe {recipe.name} has no parameter {key!r}.", f"Its parameters: {', '.join(known)}.")
        p = known[key]
        if p.type == "int":
            value = int(value)
        elif p.type == "bool":
            value = value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes", "on")
        elif p.type == "window" and isinstance(value, str):
            try:
                left, right = (int(x) for x in value.split(","))
            except ValueError:
                raise CutediffError(f"--window {value!r} is not two integers L,R.", "Write it as e.g. --window 128,0.") from None
            value = [left, right]
        if p.choices and value not in p.choices:
            raise CutediffError(f"{key}={value!r} is not one of {', '.join(map(str, p.choices))}.")
        out[key] = value
    return out
