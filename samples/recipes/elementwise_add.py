"""Elementwise add, C = A + B, written in CuTe DSL: a self-contained cutediff recipe.

It needs nothing but the DSL (no torch, no GPU): the inputs are the DSL's own fake tensors.
Compile it under two toolchains and compare:

    cutediff compare 4.5.1 4.8.0 --kernel samples/recipes/elementwise_add.py --arch sm_90a
    cutediff compare 4.5.1 4.8.0 --kernel samples/recipes/elementwise_add.py --param dtype=bf16 --param vec=8

or the working copy against the last commit, on one toolchain, recompiling on every save:

    cutediff compare 4.8.0 4.8.0 --kernel samples/recipes/elementwise_add.py --b-source git:HEAD --watch
"""

import cutlass
import cutlass.cute as cute

from cutediff_tui.core.recipes import Param, recipe


@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, vec: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    m, n = gA.shape
    first = (bidx * bdim + tidx) * vec
    for j in cutlass.range_constexpr(vec):  # unrolled: vec elements per thread
        i = first + j
        if i < m * n:
            row = i // n
            col = i % n
            gC[row, col] = gA[row, col] + gB[row, col]


@cute.jit
def elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, threads: cutlass.Constexpr,
                    vec: cutlass.Constexpr):
    m, n = mA.shape
    per_block = threads * vec
    add_kernel(mA, mB, mC, vec).launch(grid=((m * n + per_block - 1) // per_block, 1, 1), block=(threads, 1, 1))


@recipe(
    params=[
        Param("dtype", "str", "fp32", choices=("fp32", "fp16", "bf16"), help="element type"),
        Param("cols", "int", 4096, help="row length (static); the row count is dynamic"),
        Param("threads", "int", 256, help="threads per block"),
        Param("vec", "int", 4, help="elements per thread"),
    ],
    archs=(80, 90, 100, 110, 120),
)
def add(ctx):
    """Elementwise add C = A + B on a (dynamic rows x cols) row-major tensor."""
    p = ctx.params
    dtype = {"fp32": cutlass.Float32, "fp16": cutlass.Float16, "bf16": cutlass.BFloat16}[p["dtype"]]
    rows = cute.sym_int()
    a, b, c = (cute.runtime.make_fake_compact_tensor(dtype, (rows, p["cols"]), stride_order=(1, 0))
               for _ in range(3))
    cute.compile(elementwise_add, a, b, c, p["threads"], p["vec"])


def bench(ctx):
    """Bench hook (``cutediff bench``): 16384 rows of random data on the GPU, the compiled add."""
    p = ctx.params
    a, b, c = (ctx.to_cute(ctx.randn(16384, p["cols"], dtype=p["dtype"])) for _ in range(3))
    compiled = cute.compile(elementwise_add, a, b, c, p["threads"], p["vec"])
    return lambda: compiled(a, b, c)
