"""A kernel whose inline PTX no assembler accepts: the DSL's own ptxas step fails (an ICE)."""

import cutlass.cute as cute
from cutlass import Float32
from cutlass._mlir.dialects import llvm
from cutlass.cutlass_dsl import T, dsl_user_op


@dsl_user_op
def not_an_instruction(a: Float32, *, loc=None, ip=None) -> Float32:
    return Float32(
        llvm.inline_asm(
            T.f32(),
            [Float32(a).ir_value(loc=loc, ip=ip)],
            "frobnicate.approx.f32 $0, $1;",
            "=f,f",
            has_side_effects=True,
            is_align_stack=False,
            asm_dialect=llvm.AsmDialect.AD_ATT,
        )
    )


@cute.kernel
def ice_kernel(x: Float32):
    y = not_an_instruction(x)
    cute.printf("%f\n", y)


@cute.jit
def ice_launch(x: Float32):
    ice_kernel(x).launch(grid=[1, 1, 1], block=[32, 1, 1])


def recipe(ctx):
    cute.compile(ice_launch, Float32(1.0))
