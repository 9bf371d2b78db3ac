"""A per-thread scratch array indexed at run time, so it lives on the stack (local memory).

Each thread fills a ``slots``-entry fp32 array and reads it back at data-dependent indices:
registers cannot be indexed at run time, so ptxas puts the array in local memory (PTX
``.local`` depot, SASS ``STL``/``LDL`` at ``[R1+...]``). With ``index=static`` the indices
are known at compile time and the array stays in registers (stack 0 bytes).

    cutediff compare 4.8.0 4.8.0 --kernel samples/recipes/stack_scratch.py --param index=static

With 64 slots on sm_90a (DSL 4.8.0): 272 bytes stack frame, 64 ``LDL`` + 16 ``STL.128``; the PTX
depot is 256 bytes. (With 8 slots the PTX still has a 32-byte depot but ptxas keeps the array in
registers: stack 0.) With ``index=generic`` the reads go through a generic address (inline PTX
``cvta.local`` + ``ld.f32``, as code that takes a pointer to a local array does): ptxas then emits
64 generic ``LD.E`` at ``R1 + local window`` and no ``LDL``, so a count of ``LDL``/``STL`` alone
reports 0 local loads for a kernel whose stack is 272 bytes; cutediff counts them as local.
"""

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import llvm

_GENERIC_LOAD = """{
\t.reg .u64 a, g;
\tcvt.u64.u32 a, $1;
\tcvta.local.u64 g, a;
\tld.f32 $0, [g];
}"""


def generic_load(ptr):
    """Load an fp32 from a local-memory pointer through a generic address (cvta.local + ld)."""
    addr = ptr.toint()
    return cutlass.Float32(
        llvm.inline_asm(cutlass.Float32.mlir_type, [addr.ir_value()], _GENERIC_LOAD, "=f,r,~{memory}", has_side_effects=True)
    )

from cutediff_tui.core.recipes import Param, recipe

THREADS = 128


@cute.kernel
def scratch_kernel(gX: cute.Tensor, gI: cute.Tensor, gY: cute.Tensor, slots: cutlass.Constexpr,
                   mode: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    buf = cute.make_rmem_tensor(cute.make_layout(slots), cutlass.Float32)
    x = gX[i]
    for j in cutlass.range_constexpr(slots):
        buf[j] = x * cutlass.Float32(j + 1)
    acc = cutlass.Float32(0)
    for j in cutlass.range_constexpr(slots):
        if cutlass.const_expr(mode == "dynamic"):
            acc += buf[(gI[i] + j) % slots]
        elif cutlass.const_expr(mode == "generic"):
            acc += generic_load(buf.iterator + (gI[i] + j) % slots)
        else:
            acc += buf[(j * 5 + 3) % slots]
    gY[i] = acc


@cute.jit
def scratch_launch(mX: cute.Tensor, mI: cute.Tensor, mY: cute.Tensor, slots: cutlass.Constexpr,
                   mode: cutlass.Constexpr):
    blocks = cute.size(mX) // THREADS
    scratch_kernel(mX, mI, mY, slots, mode).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


@recipe(
    params=[
        Param("index", "str", "dynamic", choices=("dynamic", "generic", "static"), help="indices known at run or compile time"),
        Param("slots", "int", 64, help="fp32 entries of the per-thread scratch array"),
        Param("n", "int", 131072, help="threads in all (static)"),
    ],
    archs=(80, 90, 100, 110, 120),
)
def stack_scratch(ctx):
    """Per-thread scratch array read at run-time indices: on the stack, or in registers."""
    p = ctx.params
    x = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["n"],), assumed_align=16)
    idx = cute.runtime.make_fake_compact_tensor(cutlass.Int32, (p["n"],), assumed_align=16)
    y = cute.runtime.make_fake_compact_tensor(cutlass.Float32, (p["n"],), assumed_align=16)
    cute.compile(scratch_launch, x, idx, y, p["slots"], p["index"])
