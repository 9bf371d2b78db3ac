"""Makes the real Triton cache folders in tests/integration/data/triton-cache-{a,b}.

Run on a machine with a GPU and Triton (made on the H200 of the device tool: Triton 3.6.0,
torch 2.11, sm_90a), once per side, each into its own cache folder:

    TRITON_CACHE_DIR=/tmp/tc-a python3 make_triton_cache.py a
    TRITON_CACHE_DIR=/tmp/tc-b python3 make_triton_cache.py b

Two kernels per side. Side B runs the row softmax with one warp instead of eight, so each thread
holds eight times as many elements of a row (more registers); the vector add is the same kernel
with another block size.
"""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, 0), mask=m)


side = sys.argv[1]
block, warps = (1024, 8) if side == "a" else (4096, 1)
x = torch.randn(1 << 20, device="cuda")
y = torch.randn_like(x)
o = torch.empty_like(x)
add_kernel[(triton.cdiv(x.numel(), block),)](x, y, o, x.numel(), BLOCK=block)
a = torch.randn(128, 4096, device="cuda")
b = torch.empty_like(a)
softmax_kernel[(128,)](b, a, a.stride(0), 4096, BLOCK=4096, num_warps=warps)
torch.cuda.synchronize()
assert torch.allclose(o, x + y) and torch.allclose(b, torch.softmax(a, dim=1), atol=1e-5)
print(side, "ok")
