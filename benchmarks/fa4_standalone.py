"""Standalone CUDA-event timing of FA4 varlen fwd+bwd: the reference cutediff's bench must agree with.

Independent of cutediff on purpose (plain torch + flash_attn). Usage:
    python fa4_standalone.py SITE_DIR [--mode fwdbwd] [--iters 200] [--warmup 20]
SITE_DIR is a toolchain overlay (a folder with nvidia_cutlass_dsl, flash_attn, quack); it is put
first on sys.path. Prints one JSON object with the median milliseconds per shape.
"""

import argparse
import json
import site
import statistics
import sys

p = argparse.ArgumentParser()
p.add_argument("site_dir")
p.add_argument("--mode", default="fwdbwd", choices=["fwd", "bwd", "fwdbwd"])
p.add_argument("--iters", type=int, default=200)
p.add_argument("--warmup", type=int, default=20)
args = p.parse_args()

before = list(sys.path)
site.addsitedir(args.site_dir)
sys.path[:] = [x for x in sys.path if x not in before] + before

import cutlass.cute as cute  # noqa: E402
import torch  # noqa: E402

for name in ("ThrMma", "ThrCopy", "TiledMma", "TiledCopy"):
    if not hasattr(cute.core, name) and hasattr(cute, name):
        setattr(cute.core, name, getattr(cute, name))
from flash_attn.cute.interface import _flash_attn_bwd, _flash_attn_fwd  # noqa: E402

SHAPES = [(8192, 32, 4), (32768, 32, 8), (32768, 16, 1)]
out = {"mode": args.mode, "device": torch.cuda.get_device_name(0), "shapes": {}}
for total, heads, docs in SHAPES:
    seqlen = total // docs
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(total, heads, 128, dtype=torch.bfloat16, device="cuda", generator=g) for _ in range(3))
    cu = torch.arange(0, docs + 1, dtype=torch.int32, device="cuda") * seqlen
    kw = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=seqlen, max_seqlen_k=seqlen, causal=True)
    o, lse = _flash_attn_fwd(q, k, v, return_lse=True, **kw)[:2]
    do = torch.randn_like(o)

    def step():
        if args.mode == "fwd":
            _flash_attn_fwd(q, k, v, return_lse=True, **kw)
        elif args.mode == "bwd":
            _flash_attn_bwd(q, k, v, o, do, lse, **kw)
        else:
            o2, l2 = _flash_attn_fwd(q, k, v, return_lse=True, **kw)[:2]
            _flash_attn_bwd(q, k, v, o2, do, l2, **kw)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(args.iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    out["shapes"][f"{total}x{heads}h/{docs}"] = {"median_ms": statistics.median(times), "n": len(times)}
print(json.dumps(out))
