"""A bf16 epilogue store whose vector width is a parameter: 128-bit vs 16-bit copy atoms.

Each thread loads ``elems`` fp32 values, converts them to bf16 and stores them through a
universal copy atom of ``bits`` bits per copy. With ``bits=128`` ptxas emits one
``STG.E.128`` (PTX ``st.global.v4.b32``) per 8 elements; with ``bits=16`` it emits one
``STG.E.U16`` (PTX ``st.global.b16``) per element: the de-vectorised store of issue 15.
Needs DSL 4.8 (``cute.make_rmem_tensor``).

    cutediff compare 4.8.0 4.8.0 --kernel samples/recipes/vector_store.py --param bits=16
"""

import cutlass
import cutlass.cute as cute

from cutediff_tui.core.recipes import Param, recipe


@cute.kernel
def store_kernel(gIn: cute.Tensor, gOut: cute.Tensor, threads: cutlass.Constexpr, bits: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    tile = bidx * threads + tidx
    tIn = gIn[(None, tile)]
    tOut = gOut[(None, tile)]
    acc = cute.make_rmem_tensor(tIn.layout, cutlass.Float32)
    cute.autovec_copy(tIn, acc)
    out = cute.make_rmem_tensor(tOut.layout, cutlass.BFloat16)
    out.store(acc.load().to(cutlass.BFloat16))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.BFloat16, num_bits_per_copy=bits)
    cute.copy(atom, out, tOut)


@cute.jit
def epilogue_store(mIn: cute.Tensor, mOut: cute.Tensor, elems: cutlass.Constexpr, threads: cutlass.Constexpr,
                   bits: cutlass.Constexpr):
    gIn = cute.zipped_divide(mIn, (elems,))
    gOut = cute.zipped_divide(mOut, (elems,))
    blocks = cute.size(gIn, mode=[1]) // threads
    store_kernel(gIn, gOut, threads, bits).launch(grid=(blocks, 1, 1), block=(threads, 1, 1))


@recipe(
    params=[
        Param("bits", "int", 128, choices=(16, 32, 64, 128), help="bits per store (copy atom width)"),
        Param("elems", "int", 64, help="bf16 elements stored per thread"),
        Param("threads", "int", 128, help="threads per block"),
        Param("n", "int", 1048576, help="elements (static)"),
    ],
    archs=(80, 90, 100, 110, 120),
)
def vector_store(ctx):
    """fp32 -> bf16 epilogue: each thread stores `elems` values with `bits`-bit stores."""
    p = ctx.params
    src = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["n"],), assumed_align=16)
    dst = cute.runtime.make_fake_compact_tensor(cutlass.BFloat16, (p["n"],), assumed_align=16)
    cute.compile(epilogue_store, src, dst, p["elems"], p["threads"], p["bits"])
