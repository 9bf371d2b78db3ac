"""A register array read at run-time indices: the bench's positive control for spill traffic.

Each thread loads ``size`` values into a register array and sums ``steps`` of them. With
``dynamic=false`` the indices are compile-time constants and the array stays in registers; with
``dynamic=true`` they depend on data (``idx[t]``), so the array must live in local memory (stack
frame, LDL/STL): one toolchain, two parameter settings, local-memory traffic on one side only.

    cutediff compare 4.8.0 4.8.0 --kernel samples/recipes/local_array.py --arch sm_90a --param dynamic=true
    cutediff bench 4.8.0 4.8.0 --kernel samples/recipes/local_array.py --a-param dynamic=false \\
        --b-param dynamic=true --profile
"""

import cutlass
import cutlass.cute as cute

from cutediff_tui.core.recipes import Param, recipe


def _register_array(size):
    make = getattr(cute, "make_rmem_tensor", None) or cute.make_fragment
    return make(size, cutlass.Float32)


@cute.kernel
def gather_kernel(
    gX: cute.Tensor, gIdx: cute.Tensor, gY: cute.Tensor, size: cutlass.Constexpr, steps: cutlass.Constexpr,
    dynamic: cutlass.Constexpr,
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    t = bidx * bdim + tidx
    n = gY.shape[0]
    if t < n:
        buf = _register_array(size)
        for i in cutlass.range_constexpr(size):
            buf[i] = gX[i, t]
        acc = cutlass.Float32(0.0)
        if cutlass.const_expr(dynamic):
            j = gIdx[t]
            for k in cutlass.range_constexpr(steps):
                acc = acc + buf[(j + k * 7) % size]
        else:
            for k in cutlass.range_constexpr(steps):
                acc = acc + buf[(k * 7) % size]
        gY[t] = acc


@cute.jit
def launch_gather(
    mX: cute.Tensor, mIdx: cute.Tensor, mY: cute.Tensor, size: cutlass.Constexpr, steps: cutlass.Constexpr,
    dynamic: cutlass.Constexpr,
):
    n = mY.shape[0]
    gather_kernel(mX, mIdx, mY, size, steps, dynamic).launch(grid=((n + 127) // 128, 1, 1), block=(128, 1, 1))


@recipe(
    params=[
        Param("dynamic", "bool", False, help="index the register array with run-time values (local memory)"),
        Param("size", "int", 64, help="register array length"),
        Param("steps", "int", 16, help="elements summed per thread"),
    ],
    archs=(80, 90, 100, 110, 120),
)
def local_array(ctx):
    """Register array read at constant (dynamic=false) or run-time (dynamic=true) indices."""
    p = ctx.params
    n = cute.sym_int()
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["size"], n), stride_order=(1, 0))
    idx = cute.runtime.make_fake_compact_tensor(cutlass.Int32, (n,))
    y = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (n,))
    cute.compile(launch_gather, x, idx, y, p["size"], p["steps"], p["dynamic"])


def bench(ctx):
    """Bench hook: 4M threads' worth of random data on the GPU, the compiled gather."""
    import torch

    p = ctx.params
    n = 1 << 22
    x = ctx.to_cute(ctx.randn(p["size"], n, dtype="fp32"))
    idx = ctx.to_cute(torch.randint(0, p["size"], (n,), dtype=torch.int32, device="cuda", generator=ctx.generator))
    y = ctx.to_cute(ctx.empty(n, dtype="fp32"))
    compiled = cute.compile(launch_gather, x, idx, y, p["size"], p["steps"], p["dynamic"])
    return lambda: compiled(x, idx, y)
