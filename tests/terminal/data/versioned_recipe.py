"""A kernel that grows on DSL 4.8 and later: one more printf (a made-up regression to bisect)."""

from importlib.metadata import version

import cutlass
import cutlass.cute as cute

NEW = tuple(int(x) for x in version("nvidia-cutlass-dsl").split(".")[:2]) >= (4, 8)


@cute.kernel
def tiny_kernel(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == n:
        cute.printf("tidx %d\n", n)


@cute.kernel
def grown_kernel(n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == n:
        cute.printf("tidx %d\n", n)
        cute.printf("and again %d\n", n + tidx)


@cute.jit
def tiny_launch(n: cutlass.Int32):
    tiny_kernel(n).launch(grid=[1, 1, 1], block=[32, 1, 1])


@cute.jit
def grown_launch(n: cutlass.Int32):
    grown_kernel(n).launch(grid=[1, 1, 1], block=[32, 1, 1])


def recipe(ctx):
    cute.compile(grown_launch if NEW else tiny_launch, cutlass.Int32(3))
