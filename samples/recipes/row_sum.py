"""Row sums, y[i] = sum_j x[i, j], one warp per row: a cutediff recipe that imports no cutediff.

The declaration is the module attribute ``cutediff_recipe`` (literal data, read by cutediff
without running this file), so the file stays plain CuTe DSL:

    cutediff compare 4.5.1 4.8.0 --kernel samples/recipes/row_sum.py --param cols=8192
"""

import cutlass
import cutlass.cute as cute

cutediff_recipe = {
    "function": "row_sum",
    "summary": "row sums, one warp per row (warp shuffle reduction)",
    "params": [
        {"name": "dtype", "type": "str", "default": "bf16", "choices": ["bf16", "fp16", "fp32"]},
        {"name": "cols", "default": 4096, "help": "row length (static)"},
        {"name": "warps", "default": 4, "help": "warps (rows) per block"},
    ],
    "archs": [80, 90, 100, 110, 120],
}


@cute.kernel
def row_sum_kernel(gX: cute.Tensor, gY: cute.Tensor, warps: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    lane = tidx % 32
    row = bidx * warps + tidx // 32
    m, n = gX.shape
    acc = cutlass.Float32(0.0)
    if row < m:
        for k in range(lane, n, 32):
            acc = acc + gX[row, k].to(cutlass.Float32)
    acc = cute.arch.warp_reduction_sum(acc)
    if lane == 0 and row < m:
        gY[row] = acc


@cute.jit
def launch_row_sum(mX: cute.Tensor, mY: cute.Tensor, warps: cutlass.Constexpr):
    m, _ = mX.shape
    row_sum_kernel(mX, mY, warps).launch(grid=((m + warps - 1) // warps, 1, 1), block=(32 * warps, 1, 1))


def row_sum(ctx):
    p = ctx.params
    dtype = {"fp32": cutlass.Float32, "fp16": cutlass.Float16, "bf16": cutlass.BFloat16}[p["dtype"]]
    rows = cute.sym_int()
    x = cute.runtime.make_fake_compact_tensor(dtype, (rows, p["cols"]), stride_order=(1, 0))
    y = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (rows,))
    cute.compile(launch_row_sum, x, y, p["warps"])


def bench(ctx):
    """Bench hook (``cutediff bench``): 16384 random rows on the GPU, the compiled row sums."""
    p = ctx.params
    x = ctx.to_cute(ctx.randn(16384, p["cols"], dtype=p["dtype"]))
    y = ctx.to_cute(ctx.empty(16384, dtype="fp32"))
    compiled = cute.compile(launch_row_sum, x, y, p["warps"])
    return lambda: compiled(x, y)
