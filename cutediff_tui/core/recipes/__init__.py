"""Kernel recipes: what to compile, declared with parameters the CLI and TUI can offer.

A recipe is a Python callable ``recipe(ctx)`` run inside a toolchain worker. It gets a
:class:`~cutediff_tui.core.recipes.context.RecipeContext` (target arch, parameters, fake-tensor
helpers) and compiles one or more kernels with ``cute.compile``; cutediff captures every kernel
compiled, whatever the DSL version. Built-in recipes are listed in :data:`BUILTINS`; any other
recipe is named by reference, ``path/to/file.py[:function]`` or ``package.module[:function]``
(see :mod:`.refs`), and declares its parameters with :func:`recipe` as literal data that the host
reads with :mod:`ast`, without importing the DSL (docs/recipes.md).

This package is imported inside toolchain workers too: standard library only at the top.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import CutediffError
from .info import PARAM_TYPES, Param, RecipeInfo, module_file, recipe

__all__ = [
    "BUILTINS",
    "PARAM_TYPES",
    "Param",
    "RecipeInfo",
    "coerce_params",
    "get_recipe",
    "module_file",
    "recipe",
]


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


def _quack_norm_params(n: int = 4096) -> tuple[Param, ...]:
    return (
        Param("n", "int", n, help="row length (hidden size); rows are dynamic"),
        Param("dtype", "str", "bf16", choices=("bf16", "fp16", "fp32"), help="element type"),
    )


_QUACK = "cutediff_tui.core.recipes.quack_kernels"  # not "quack": loaded as a file, it would shadow the package
_QUACK_ARCHS = (80, 90, 100, 110, 120)
_RMSNORM_PARAMS = _quack_norm_params() + (
    Param(
        "weight_dtype", "str", "fp32", choices=("fp32", "bf16", "fp16", "none"), help="weight type (none: no weight)"
    ),
    Param("residual", "bool", False, help="fused residual add"),
)
_CE_PARAMS = (
    Param("n", "int", 32768, help="vocabulary size (row length); rows are dynamic"),
    Param("dtype", "str", "bf16", choices=("bf16", "fp16", "fp32"), help="logits type"),
    Param("fused_dx", "bool", False, help="forward also writes dx (quack's fused loss+grad path)"),
)
_GEMM_PARAMS = (
    Param("dtype", "str", "bf16", choices=("bf16", "fp16"), help="A and B type"),
    Param("out_dtype", "str", "", choices=("", "bf16", "fp16", "fp32"), help="D type (empty: as --param dtype)"),
    Param("tile_m", "int", 0, help="CTA tile M (0: quack's default for the arch)"),
    Param("tile_n", "int", 0, help="CTA tile N (0: quack's default for the arch)"),
    Param("cluster_m", "int", 0, help="cluster M (0: quack's default)"),
    Param("cluster_n", "int", 0, help="cluster N (0: quack's default)"),
    Param("pingpong", "str", "auto", choices=("auto", "on", "off"), help="ping-pong warp groups (SM90/SM120)"),
)

BUILTINS: dict[str, RecipeInfo] = {
    r.name: r
    for r in (
        RecipeInfo(
            "fa4-fwd",
            "FlashAttention-4 forward",
            "cutediff_tui.core.recipes.fa4:fa4_fwd",
            _fa4_params(),
            (90, 100, 110, 120),
            ("flash-attn-4",),
        ),
        RecipeInfo(
            "fa4-bwd",
            "FlashAttention-4 backward (pre/post-process and main kernels)",
            "cutediff_tui.core.recipes.fa4:fa4_bwd",
            _fa4_params(),
            (90, 100, 110, 120),
            ("flash-attn-4",),
        ),
        RecipeInfo(
            "fa4-fwdbwd",
            "FlashAttention-4 forward and backward",
            "cutediff_tui.core.recipes.fa4:fa4_fwdbwd",
            _fa4_params(),
            (90, 100, 110, 120),
            ("flash-attn-4",),
        ),
        RecipeInfo(
            "quack-rmsnorm-fwd",
            "quack RMSNorm forward",
            f"{_QUACK}:quack_rmsnorm_fwd",
            _RMSNORM_PARAMS,
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-rmsnorm-bwd",
            "quack RMSNorm backward",
            f"{_QUACK}:quack_rmsnorm_bwd",
            _RMSNORM_PARAMS,
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-softmax-fwd",
            "quack softmax forward",
            f"{_QUACK}:quack_softmax_fwd",
            _quack_norm_params(),
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-softmax-bwd",
            "quack softmax backward",
            f"{_QUACK}:quack_softmax_bwd",
            _quack_norm_params(),
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-cross-entropy-fwd",
            "quack cross-entropy forward (loss and LSE)",
            f"{_QUACK}:quack_cross_entropy_fwd",
            _CE_PARAMS,
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-cross-entropy-bwd",
            "quack cross-entropy backward",
            f"{_QUACK}:quack_cross_entropy_bwd",
            _CE_PARAMS,
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
        RecipeInfo(
            "quack-gemm",
            "quack GEMM D = A·B (persistent, quack's default tile per arch)",
            f"{_QUACK}:quack_gemm",
            _GEMM_PARAMS,
            _QUACK_ARCHS,
            ("quack-kernels",),
        ),
    )
}


#: Bench hooks of the built-in recipes (``cutediff bench``): ``hook(ctx)`` returns a callable that
#: runs the kernels once on real inputs (see :mod:`cutediff_tui.core.bench.context`).
_BUILTIN_BENCH = {
    "fa4-fwd": "cutediff_tui.core.recipes.fa4:fa4_fwd_bench",
    "fa4-bwd": "cutediff_tui.core.recipes.fa4:fa4_bwd_bench",
    "fa4-fwdbwd": "cutediff_tui.core.recipes.fa4:fa4_fwdbwd_bench",
    **{
        name: f"{_QUACK}:{name.removeprefix('quack-').replace('-', '_')}_bench"
        for name in BUILTINS
        if name.startswith("quack-")
    },
}
BUILTINS = {name: replace(r, bench=_BUILTIN_BENCH.get(name, "")) for name, r in BUILTINS.items()}


def get_recipe(name: str, *, search: list[str] | tuple[str, ...] = ()) -> RecipeInfo:
    """A built-in recipe by name, or a recipe by reference (``file.py[:fn]``, ``pkg.module[:fn]``).

    ``search``: extra folders in which to look for a module's file (the sides' ``--with`` source
    folders). References are read with :mod:`ast`; nothing is imported.
    """
    if name in BUILTINS:
        return BUILTINS[name]
    from .refs import is_reference, resolve_reference

    if is_reference(name):
        return resolve_reference(name, search=search)
    raise CutediffError(
        f"There is no recipe called {name!r}.",
        f"Built-in recipes: {', '.join(BUILTINS)} (cutediff recipes lists them); "
        "or name a recipe file as path/to/file.py[:function] or a module as package.module[:function].",
    )


def _convert(p: Param, key: str, value: Any) -> Any:
    try:
        if p.type == "int" and not isinstance(value, bool):
            return int(value)
        if p.type == "float":
            return float(value)
    except (TypeError, ValueError):
        raise CutediffError(
            f"--param {key}={value!r} is not {'an integer' if p.type == 'int' else 'a number'}.",
            f"Write it as e.g. --param {key}={p.default if p.default is not None else 1}.",
        ) from None
    if p.type == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise CutediffError(
                f"--param {key}={value!r} is not true or false.", f"Write it as e.g. --param {key}=true."
            )
        return text in ("1", "true", "yes", "on")
    if p.type == "window" and isinstance(value, (list, tuple)) and len(value) == 2:
        return [int(value[0]), int(value[1])]
    if p.type == "window" and not isinstance(value, str):
        raise CutediffError(f"--{key} {value!r} is not two integers L,R.", f"Write it as e.g. --{key} 128,0.")
    if p.type == "window" and isinstance(value, str):
        try:
            left, right = (int(x) for x in value.split(","))
        except ValueError:
            raise CutediffError(
                f"--{key} {value!r} is not two integers L,R.", f"Write it as e.g. --{key} 128,0."
            ) from None
        return [left, right]
    if p.type == "str" and not isinstance(value, str):
        return str(value)
    return value


def coerce_params(recipe: RecipeInfo, given: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and check types/choices of user parameters.

    A recipe whose declaration could not be read (``strict=False``: a module only the toolchain
    has) takes any parameter, as the string given.
    """
    out = recipe.defaults()
    known = {p.name: p for p in recipe.params}
    for key, value in given.items():
        if value is None:
            continue
        if key not in known:
            if not recipe.strict:
                out[key] = value
                continue
            raise CutediffError(
                f"Recipe {recipe.name} has no parameter {key!r}.", f"Its parameters: {', '.join(known) or 'none'}."
            )
        p = known[key]
        value = _convert(p, key, value)
        if p.choices and value not in p.choices:
            raise CutediffError(f"{key}={value!r} is not one of {', '.join(map(str, p.choices))}.")
        out[key] = value
    return out
