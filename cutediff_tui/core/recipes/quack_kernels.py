"""quack-kernels recipes (RMSNorm, softmax, cross-entropy, GEMM), run inside a toolchain worker.

quack has no public compile-only API, but since 0.3 each kernel has an internal compile
function (``_compile_rmsnorm_fwd``, ``Softmax.compile``, ``_compile_gemm`` …) that builds its
own fake ``cute`` tensors and calls ``cute.compile``; the kernel is then never launched, so
neither a GPU nor torch's fake tensors are needed. Their positional parameters move between
versions (``weight_offset``, ``config``, ``T_hint``, ``num_warps`` …) but keep their names, so
the arguments are filled in by name from :func:`inspect.signature`; a parameter this module
does not know and that has no default ends the recipe with a sentence naming the version.

Imports of quack happen inside the functions: the host lists these recipes without it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import inspect
import os
import types
from collections.abc import Callable
from typing import Any

_DTYPES = {"bf16": "BFloat16", "fp16": "Float16", "fp32": "Float32"}


class RecipeUnavailable(RuntimeError):
    """The toolchain's quack-kernels lacks what the recipe compiles (the message names the version)."""


def _version() -> str:
    import importlib.metadata as md

    try:
        return md.version("quack-kernels")
    except md.PackageNotFoundError:
        return "(not installed)"


def _stand_in(name: str) -> Any:
    """A class for names that look like classes (usable in ``isinstance`` and as a base), else an object."""
    if name[:1].isupper():
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__module__": "triton"})
    return _Anything()


class _Anything:
    """Stands in for any triton object at import time: attribute, call, decorator, base class."""

    def __init__(self, *_a: Any, **_k: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator: keep the function (it is never run here)
        return _Anything()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(name)

    def __getitem__(self, _key: Any) -> Any:
        return _Anything()

    def __mro_entries__(self, _bases: tuple) -> tuple:
        return (object,)


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name == "__version__":  # torch probes `import triton; triton.__version__` under except ImportError
            raise ImportError("triton is not installed (cutediff stub)")
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stand_in(name)
        setattr(self, name, value)  # the same object each time (isinstance checks agree)
        return value


class _TritonStubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname == "triton" or fullname.startswith("triton."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _StubModule(spec.name)
        mod.__path__ = []  # a package: any submodule imports
        mod.__cutediff_stub__ = True
        return mod

    def exec_module(self, module) -> None:
        pass


def _stub_triton(ctx) -> bool:
    """quack >= 0.5 imports triton at module level (autotuner, fused Triton kernels) that a
    compile of its CuTe kernels never runs. torch's CPU build has no triton; a stub package lets
    those imports through."""
    import importlib.util
    import sys

    if any(isinstance(f, _TritonStubFinder) for f in sys.meta_path):
        return False
    if "triton" in sys.modules or importlib.util.find_spec("triton") is not None:
        return False  # a real triton that fails to import: not ours to hide
    try:  # torch asks once and caches the answer: let it hear "no triton" before the stub exists
        from torch.utils import _triton as torch_triton

        torch_triton.has_triton_package()
        if hasattr(torch_triton, "get_triton_version"):
            torch_triton.get_triton_version()
    except Exception:
        pass

    sys.meta_path.append(_TritonStubFinder())
    ctx.note("triton is not installed: a stub stands in for the triton imports of quack (compile only)")
    return True


def _import(ctx, modname: str) -> Any:
    """Import a quack module; if it stops at ``import triton`` (torch's CPU build has none), retry
    with the triton stub in place."""
    import sys

    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if not (exc.name and exc.name.split(".")[0] == "triton") or not _stub_triton(ctx):
            raise
    for name in [m for m in sys.modules if m == "quack" or m.startswith("quack.")]:
        del sys.modules[name]  # half-imported before the stub: import again
    return importlib.import_module(modname)


def _setup(ctx) -> Any:
    """Import quack for compile-only use: no disk cache, the target arch instead of a GPU query."""
    os.environ["QUACK_CACHE_ENABLED"] = "0"  # a disk hit would skip cute.compile (nothing captured)
    os.environ["QUACK_ARCH"] = ctx.arch.removeprefix("sm_").rstrip("af")
    try:
        quack = _import(ctx, "quack")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "quack":
            raise RecipeUnavailable(
                "quack-kernels is not installed in this toolchain; pin it with --with quack-kernels==0.4.1"
            ) from None
        raise
    for modname in ("quack.cache_utils", "quack.cache"):  # set before import by the env var; be sure
        try:
            mod = _import(ctx, modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                continue
            raise
        if hasattr(mod, "CACHE_ENABLED"):
            mod.CACHE_ENABLED = False
        state = getattr(mod, "_state", None)
        if state is not None and hasattr(state, "CACHE_ENABLED"):
            state.CACHE_ENABLED = False
    return quack


def _find(ctx, what: str, *candidates: str) -> Callable:
    """The first of ``module:attr`` / ``module:Class.attr`` that exists, else a sentence naming the version."""
    for cand in candidates:
        modname, _, attr = cand.partition(":")
        try:
            obj: Any = _import(ctx, modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                continue
            raise
        for part in attr.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    names = " or ".join(c.replace(":", ".") for c in candidates)
    raise RecipeUnavailable(
        f"quack-kernels {_version()} has no {what} compile entry point ({names}); "
        f"pin quack-kernels 0.3 or newer, e.g. --with quack-kernels==0.4.1"
    )


def _call(what: str, fn: Callable, values: dict[str, Any]) -> Any:
    """Call ``fn`` with its parameters filled by name from ``values`` (defaults for the rest)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        raise RecipeUnavailable(f"quack-kernels {_version()}: cannot read the signature of its {what} compile function")
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    unknown = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in values:
            value = values[p.name]
        elif p.default is not p.empty:
            continue
        else:
            unknown.append(p.name)
            continue
        if p.kind == p.POSITIONAL_ONLY:
            args.append(value)
        else:
            kwargs[p.name] = value
    if unknown:
        raise RecipeUnavailable(
            f"quack-kernels {_version()} changed its {what} compile function: this recipe does not know "
            f"the parameter(s) {', '.join(unknown)}; pin quack-kernels==0.4.1 or update cutediff"
        )
    return fn(*args, **kwargs)


def _dtype(name: str):
    import cutlass

    if name in (None, "", "none"):
        return None
    return getattr(cutlass, _DTYPES[name])


def _n(ctx, key: str = "n") -> int:
    n = int(ctx.params[key])
    if n <= 0:
        raise ValueError(f"--param {key}={n} must be positive")
    return n


# ---------------------------------------------------------------- RMSNorm


def _rmsnorm_values(ctx) -> dict[str, Any]:
    p = ctx.params
    dt = _dtype(p["dtype"])
    wdt = _dtype(p["weight_dtype"])
    res = dt if p["residual"] else None
    return {
        "N": _n(ctx),
        "dtype": dt,
        "out_dtype": dt,
        "dout_dtype": dt,
        "dx_dtype": dt,
        "weight_dtype": wdt,
        "bias_dtype": None,
        "res_dtype": res,
        "res_out_dtype": res,
        "dres_dtype": res,
        "dres_out_dtype": res,
        "has_rstd": True,
        "has_mean": False,
        "is_layernorm": False,
        "per_head": False,
        "has_db_partial": False,
        "has_dw_partial": wdt is not None,
    }


def quack_rmsnorm_fwd(ctx) -> None:
    """Compile quack's RMSNorm forward kernel."""
    _setup(ctx)
    fn = _find(ctx, "RMSNorm forward", "quack.rmsnorm:_compile_rmsnorm_fwd")
    _call("RMSNorm forward", fn, _rmsnorm_values(ctx))


def quack_rmsnorm_bwd(ctx) -> None:
    """Compile quack's RMSNorm backward kernel."""
    _setup(ctx)
    fn = _find(ctx, "RMSNorm backward", "quack.rmsnorm:_compile_rmsnorm_bwd")
    _call("RMSNorm backward", fn, _rmsnorm_values(ctx))


# ---------------------------------------------------------------- softmax


def _softmax_values(ctx) -> dict[str, Any]:
    dt = _dtype(ctx.params["dtype"])
    return {"N": _n(ctx), "dtype": dt, "out_dtype": dt, "y_dtype": dt, "dx_dtype": dt}


def quack_softmax_fwd(ctx) -> None:
    """Compile quack's softmax forward kernel."""
    _setup(ctx)
    fn = _find(ctx, "softmax forward", "quack.softmax:_compile_softmax_fwd", "quack.softmax:Softmax.compile")
    _call("softmax forward", fn, _softmax_values(ctx))


def quack_softmax_bwd(ctx) -> None:
    """Compile quack's softmax backward kernel."""
    _setup(ctx)
    fn = _find(
        ctx, "softmax backward", "quack.softmax:_compile_softmax_backward", "quack.softmax:SoftmaxBackward.compile"
    )
    _call("softmax backward", fn, _softmax_values(ctx))


# ---------------------------------------------------------------- cross-entropy


def _ce_values(ctx) -> dict[str, Any]:
    import cutlass

    dt = _dtype(ctx.params["dtype"])
    return {
        "N": _n(ctx),
        "dtype": dt,
        "target_dtype": cutlass.Int64,
        "target_logit_dtype": None,
        "target_logit_ndim": 1,
        "has_lse": True,
        "has_dx": bool(ctx.params["fused_dx"]),
        "weight_dtype": None,
    }


def quack_cross_entropy_fwd(ctx) -> None:
    """Compile quack's cross-entropy forward kernel."""
    _setup(ctx)
    fn = _find(
        ctx,
        "cross-entropy forward",
        "quack.cross_entropy:_compile_cross_entropy_fwd",
        "quack.cross_entropy:CrossEntropy.compile",
    )
    _call("cross-entropy forward", fn, _ce_values(ctx))


def quack_cross_entropy_bwd(ctx) -> None:
    """Compile quack's cross-entropy backward kernel."""
    _setup(ctx)
    fn = _find(
        ctx,
        "cross-entropy backward",
        "quack.cross_entropy:_compile_cross_entropy_backward",
        "quack.cross_entropy:CrossEntropyBackward.compile",
    )
    _call("cross-entropy backward", fn, _ce_values(ctx))


# ---------------------------------------------------------------- GEMM

# quack's own defaults per arch family (gemm_interface.default_config): tile M, N, cluster M, N,
# pingpong, dynamic persistent.
_GEMM_DEFAULTS = {
    80: (128, 128, 1, 1, False, False),
    90: (128, 192, 2, 1, True, False),
    100: (256, 256, 2, 1, False, True),
    110: (256, 256, 2, 1, False, True),
    120: (128, 128, 1, 1, True, True),
}


def quack_gemm(ctx) -> None:
    """Compile quack's GEMM (D = A @ B) for ctx.arch with quack's default tile for that arch."""
    _setup(ctx)
    fn = _find(ctx, "GEMM", "quack.gemm:_compile_gemm")
    p = ctx.params
    num = int(ctx.arch.removeprefix("sm_").rstrip("af"))
    fam = num // 10 * 10
    cap = (num // 10, num % 10)
    tm, tn, cm, cn, ping, dyn = _GEMM_DEFAULTS.get(fam, _GEMM_DEFAULTS[90])
    tm, tn = p["tile_m"] or tm, p["tile_n"] or tn
    cm, cn = p["cluster_m"] or cm, p["cluster_n"] or cn
    if p["pingpong"] != "auto":
        ping = p["pingpong"] == "on"
    dt = _dtype(p["dtype"])
    try:
        from quack.rounding import RoundingMode

        rn = RoundingMode.RN
    except ImportError:
        rn = 0
    values = {
        "a_dtype": dt,
        "b_dtype": dt,
        "d_dtype": _dtype(p["out_dtype"]) or dt,
        "c_dtype": None,
        "a_major": "k",
        "b_major": "k",
        "d_major": "n",
        "c_major": None,
        "tile_shape_mn": (tm, tn),
        "cluster_shape_mnk": (cm, cn, 1),
        "pingpong": ping,
        "persistent": True,
        "is_dynamic_persistent": dyn,
        "rowvec_dtype": None,
        "colvec_dtype": None,
        "colvec_ndim": 0,
        "alpha_mode": 0,
        "beta_mode": 0,
        "add_to_output": False,
        "concat_layout": (),
        "varlen_m": False,
        "varlen_k": False,
        "gather_A": False,
        "use_tma_gather": False,
        "has_batch_idx_permute": False,
        "device_capacity": cap,
        "rounding_mode": rn,
        "sr_seed_mode": 0,
        "has_trace_ptr": False,
        "num_warps": None,
    }
    _call("GEMM", fn, values)


# ---------------------------------------------------------------- bench hooks (real GPU inputs)

#: Rows of the bench inputs (the recipes' row count is dynamic at compile time).
BENCH_ROWS = 16384


def _public(what: str, *candidates: str) -> Callable:
    """quack's public torch entry point for ``what`` (the first candidate that exists)."""
    for cand in candidates:
        modname, _, attr = cand.partition(":")
        try:
            obj: Any = importlib.import_module(modname)
        except ModuleNotFoundError:
            continue
        obj = getattr(obj, attr, None)
        if obj is not None:
            return obj
    raise RecipeUnavailable(f"quack-kernels {_version()} has no public {what} entry point ({', '.join(candidates)})")


def _rows(ctx, n: int, dtype: str | None = None, grad: bool = False):
    x = ctx.randn(BENCH_ROWS, n, dtype=ctx.dtype(dtype))
    return x.requires_grad_(True) if grad else x


def _rms_weight(ctx):
    wd = ctx.params.get("weight_dtype", "fp32")
    return None if wd == "none" else ctx.randn(ctx.params["n"], dtype=ctx.dtype(wd))


def rmsnorm_fwd_bench(ctx):
    """Bench hook of quack-rmsnorm-fwd: ``quack.rmsnorm.rmsnorm`` on BENCH_ROWS x n."""
    f = _public("RMSNorm", "quack.rmsnorm:rmsnorm", "quack:rmsnorm")
    x, w = _rows(ctx, ctx.params["n"]), _rms_weight(ctx)
    return lambda: f(x, w)


def rmsnorm_bwd_bench(ctx):
    """Bench hook of quack-rmsnorm-bwd: the backward of ``quack.rmsnorm.rmsnorm`` (autograd)."""
    f = _public("RMSNorm", "quack.rmsnorm:rmsnorm", "quack:rmsnorm")
    x, w = _rows(ctx, ctx.params["n"], grad=True), _rms_weight(ctx)
    out = f(x, w)
    dout = ctx.randn(*out.shape, dtype=out.dtype)
    return lambda: out.backward(dout, retain_graph=True)


def softmax_fwd_bench(ctx):
    """Bench hook of quack-softmax-fwd: ``quack.softmax.softmax`` on BENCH_ROWS x n."""
    f = _public("softmax", "quack.softmax:softmax", "quack:softmax")
    x = _rows(ctx, ctx.params["n"])
    return lambda: f(x)


def softmax_bwd_bench(ctx):
    """Bench hook of quack-softmax-bwd: the backward of ``quack.softmax.softmax`` (autograd)."""
    f = _public("softmax", "quack.softmax:softmax", "quack:softmax")
    x = _rows(ctx, ctx.params["n"], grad=True)
    out = f(x)
    dout = ctx.randn(*out.shape, dtype=out.dtype)
    return lambda: out.backward(dout, retain_graph=True)


def _ce_inputs(ctx, grad: bool):
    import torch

    x = _rows(ctx, ctx.params["n"], grad=grad)
    target = torch.randint(0, ctx.params["n"], (BENCH_ROWS,), device="cuda", generator=ctx.generator)
    return x, target


def cross_entropy_fwd_bench(ctx):
    """Bench hook of quack-cross-entropy-fwd: ``quack.cross_entropy.cross_entropy``."""
    f = _public("cross-entropy", "quack.cross_entropy:cross_entropy", "quack:cross_entropy")
    x, target = _ce_inputs(ctx, grad=False)
    return lambda: f(x, target)


def cross_entropy_bwd_bench(ctx):
    """Bench hook of quack-cross-entropy-bwd: the backward of ``cross_entropy`` (autograd)."""
    f = _public("cross-entropy", "quack.cross_entropy:cross_entropy", "quack:cross_entropy")
    x, target = _ce_inputs(ctx, grad=True)
    loss = f(x, target)
    dloss = ctx.randn(*loss.shape, dtype=loss.dtype)
    return lambda: loss.backward(dloss, retain_graph=True)


def gemm_bench(ctx):
    """Bench hook of quack-gemm: ``quack.gemm_interface.gemm`` on 8192 x 8192 x 8192."""
    f = _public("GEMM", "quack.gemm_interface:gemm", "quack:gemm")
    a = ctx.randn(8192, 8192, dtype=ctx.dtype())
    b = ctx.randn(8192, 8192, dtype=ctx.dtype()).t()
    return lambda: f(a, b)
