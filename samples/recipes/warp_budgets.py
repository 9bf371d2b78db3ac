"""A warp-specialized kernel whose per-warp-group register budgets are parameters.

Three warp groups (384 threads): warp group 0 (warps 0-3) is the producer and gives registers
back with ``setmaxnreg.dec`` to ``low``; warp groups 1-2 (warps 4-11) are the consumers and take
them with ``setmaxnreg.inc`` to ``high``. FA4-style kernels are tuned with exactly this knob
(``176/88`` vs ``184/80``). Needs an arch with ``setmaxnreg`` (sm_90a, sm_100a, ...).

    cutediff compare 4.8.0 4.8.0 --kernel samples/recipes/warp_budgets.py --arch sm_90a --param high=184 --param low=80
"""

import cutlass
import cutlass.cute as cute

from cutediff_tui.core.recipes import Param, recipe

THREADS = 384
ELEMS = 128


@cute.kernel
def ws_kernel(gX: cute.Tensor, gY: cute.Tensor, high: cutlass.Constexpr, low: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    tile = bidx * THREADS + tidx
    tX = gX[(None, tile)]
    tY = gY[(None, tile)]
    if warp < 4:
        cute.arch.setmaxregister_decrease(low)
        cute.autovec_copy(tX, tY)
    else:
        cute.arch.setmaxregister_increase(high)
        # ELEMS values stay live across the loop: the consumers need a large register budget
        acc = cute.make_rmem_tensor(tX.layout, cutlass.Float32)
        cute.autovec_copy(tX, acc)
        for k in cutlass.range_constexpr(4):
            for j in cutlass.range_constexpr(ELEMS):
                acc[j] = acc[j] * acc[(j + 1 + k) % ELEMS] + acc[(j + 7 * k + 3) % ELEMS]
        cute.autovec_copy(acc, tY)


@cute.jit
def warp_budgets_launch(mX: cute.Tensor, mY: cute.Tensor, high: cutlass.Constexpr, low: cutlass.Constexpr,
                        min_blocks: cutlass.Constexpr):
    gX = cute.zipped_divide(mX, (ELEMS,))
    gY = cute.zipped_divide(mY, (ELEMS,))
    blocks = cute.size(gX, mode=[1]) // THREADS
    ws_kernel(gX, gY, high, low).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1), min_blocks_per_mp=min_blocks)


@recipe(
    params=[
        Param("high", "int", 176, help="consumer warp groups' register budget (setmaxnreg.inc)"),
        Param("low", "int", 88, help="producer warp group's register budget (setmaxnreg.dec)"),
        Param("min_blocks", "int", 1, help="launch bound: CTAs per SM (.minnctapersm; 0 = none)"),
        Param("n", "int", 50331648, help="elements (static)"),
    ],
    archs=(90, 100),
)
def warp_budgets(ctx):
    """Producer warp group at `low` registers, two consumer warp groups at `high`."""
    p = ctx.params
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["n"],), assumed_align=16)
    y = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["n"],), assumed_align=16)
    cute.compile(warp_budgets_launch, x, y, p["high"], p["low"], p["min_blocks"])
