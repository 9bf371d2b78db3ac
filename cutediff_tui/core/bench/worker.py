"""Bench worker: runs inside a toolchain overlay on the local GPU and times FA4 calls.

``python -m cutediff_tui.core.bench.worker REQUEST.json``; reads commands from stdin
(``round N`` / ``quit``) and answers with JSON lines on the request's ``event_fd``. Standard library
only at import time: it must start inside any toolchain.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from cutediff_tui.core.worker import setup_paths

_OUT = None


def send(event: str, **data) -> None:
    assert _OUT is not None
    _OUT.write(json.dumps({"event": event, **data}) + "\n")
    _OUT.flush()


def error_kind(message: str) -> str | None:
    """``oom`` (the GPU ran out of memory) or ``arch`` (no kernel image for this GPU), else None."""
    low = message.lower()
    if "out of memory" in low:
        return "oom"
    if (
        "no kernel image" in low
        or "nokernelimage" in low
        or "invalid device function" in low
        or "unsupported gpu architecture" in low
    ):
        return "arch"
    return None


def make_case(shape: dict, mode: str):
    """Tensors for one shape and a callable that runs the timed work once."""
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd, _flash_attn_fwd

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[shape["dtype"]]
    total, heads, docs, d = shape["total"], shape["heads"], shape["docs"], shape["hdim"]
    seqlen = total // docs
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(total, heads, d, dtype=dtype, device="cuda", generator=gen) for _ in range(3))
    cu = torch.arange(0, docs + 1, dtype=torch.int32, device="cuda") * seqlen
    kw = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=seqlen, max_seqlen_k=seqlen, causal=shape["causal"])

    def fwd():
        return _flash_attn_fwd(q, k, v, return_lse=True, **kw)

    out, lse = fwd()[:2]
    dout = torch.randn_like(out)

    def bwd():
        return _flash_attn_bwd(q, k, v, out, dout, lse, **kw)

    def fwdbwd():
        o, lse_ = fwd()[:2]
        return _flash_attn_bwd(q, k, v, o, dout, lse_, **kw)

    return {"fwd": fwd, "bwd": bwd, "fwdbwd": fwdbwd}[mode]


def time_round(fn, warmup: int, iters: int, flush=None, sync: bool = False) -> list[float]:
    """One sample per call. ``sync``: wait for each call before launching the next, so that a
    sample holds one isolated call (host launch cost included), as a plain CUDA-event script does."""
    import torch

    for _ in range(warmup):
        fn()
    if sync:
        torch.cuda.synchronize()
        out = []
        for _ in range(iters):
            if flush is not None:
                flush()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            out.append(s.elapsed_time(e))
        return out
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        if flush is not None:
            flush()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def main(argv: list[str] | None = None) -> int:
    global _OUT
    argv = sys.argv[1:] if argv is None else argv
    req = json.loads(Path(argv[0]).read_text())
    _OUT = os.fdopen(int(req["event_fd"]), "w", buffering=1)
    setup_paths(req["site"], req.get("local_paths", []))
    for var in ("CUTE_DSL_ARCH", "FLASH_ATTENTION_ARCH", "FLASH_ATTENTION_NUM_SMS"):
        os.environ.pop(var, None)
    try:
        import cutlass.cute as cute
        import torch

        core = getattr(cute, "core", None)
        for name in ("ThrMma", "ThrCopy", "TiledMma", "TiledCopy"):
            if core is not None and not hasattr(core, name) and hasattr(cute, name):
                setattr(core, name, getattr(cute, name))
        if not torch.cuda.is_available():
            send("error", message="torch in this environment sees no CUDA GPU")
            return 3
        cases = []
        for shape in req["shapes"]:
            t0 = time.monotonic()
            fn = make_case(shape, req["mode"])
            fn()
            torch.cuda.synchronize()
            cases.append(fn)
            send("ready", shape=shape["label"], seconds=round(time.monotonic() - t0, 2))
        flush = None
        if req.get("l2_flush"):
            l2 = torch.cuda.get_device_properties(0).L2_cache_size
            buf = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
            flush = buf.zero_
    except Exception as exc:  # reported as data; the runner turns it into a sentence
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        kind = error_kind(msg) or "setup"
        send("error", message=f"{type(exc).__name__}: {msg[:300]}", kind=kind)
        return 3
    send("started", device=torch.cuda.get_device_name(0))
    while True:
        line = sys.stdin.readline()
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if cmd[0] == "round":
            i = int(cmd[1])
            try:
                ms = time_round(cases[i], int(req["warmup"]), int(req["iters"]), flush, bool(req.get("sync", False)))
            except Exception as exc:
                send("error", message=f"{type(exc).__name__}: {str(exc)[:300]}", kind=error_kind(str(exc)) or "run")
                return 3
            send("samples", shape=i, ms=ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
