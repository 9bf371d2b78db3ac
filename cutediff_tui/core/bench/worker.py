"""Bench worker: runs inside a toolchain overlay on the local GPU and times a recipe's bench hook.

``python -m cutediff_tui.core.bench.worker REQUEST.json``; the request names the hook
(``entry``, "module:function" or "/file.py:function") and the cases (parameters per case). The
hook gets a :class:`~cutediff_tui.core.bench.context.BenchContext` and returns a callable that runs
the kernels once. Served mode (the default) reads commands from stdin (``round N``, ``kernels N``,
``quit``) and answers with JSON lines on the request's ``event_fd``; ``"once": true`` runs each
case ``calls`` times between ``cudaProfilerStart``/``Stop`` and exits (the process Nsight Compute
profiles). Standard library only at import time: it must start inside any toolchain.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from cutediff_tui.core.worker import load_entry, setup_paths

_OUT = None


def send(event: str, **data) -> None:
    if _OUT is None:
        return
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


def time_round(fn, warmup: int, iters: int, flush=None, sync: bool = False) -> tuple[list[float], float]:
    """One GPU sample per call (CUDA events, ms) and the host wall time per call (ms): the wall clock
    from the first launch until the GPU finished the last call, over ``iters``. ``sync``: wait for
    each call before launching the next (isolated calls, host launch cost included)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    t0 = time.perf_counter()
    for i in range(iters):
        if flush is not None:
            flush()
        starts[i].record()
        fn()
        ends[i].record()
        if sync:
            ends[i].synchronize()
    torch.cuda.synchronize()
    host_ms = (time.perf_counter() - t0) * 1000.0 / iters
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], host_ms


def round_scale(fn, iters: int, min_round_ms: float, cap: int = 5000) -> int:
    """How many times ``iters`` calls a round needs to last ``min_round_ms`` of GPU time (1 when
    they already do). Short rounds scatter: measured on the H200, 20 calls of a 1.1 ms FA4 case
    (22 ms a round, clocks ramping between rounds) gave per-round B/A ratios spread by 5-9 %."""
    if min_round_ms <= 0:
        return 1
    import math

    import torch

    probe = 3
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(probe):
        fn()
    end.record()
    end.synchronize()
    per_call = max(start.elapsed_time(end) / probe, 1e-6)
    scale = math.ceil(min_round_ms / (iters * per_call))
    return max(1, min(scale, max(1, cap // max(iters, 1))))


CALLABLES: list[str] = []  # the functions the hooks gave cute.compile, in order (kernel names)


def _patch_cute() -> None:
    import cutlass.cute as cute

    inner = getattr(cute, "compile", None)
    if inner is not None and not getattr(inner, "_cutediff_bench", False):

        def compile_and_record(fn, *args, **kwargs):
            CALLABLES.append(getattr(fn, "__name__", type(fn).__name__))
            return inner(fn, *args, **kwargs)

        compile_and_record._cutediff_bench = True  # type: ignore[attr-defined]
        cute.compile = compile_and_record

    core = getattr(cute, "core", None)
    for name in ("ThrMma", "ThrCopy", "TiledMma", "TiledCopy"):
        if core is not None and not hasattr(core, name) and hasattr(cute, name):
            setattr(core, name, getattr(cute, name))


def make_cases(req: dict) -> list:
    """Each case's callable: the hook run with the case's parameters, then called once (JIT compile)."""
    import torch

    from cutediff_tui.core.bench.context import BenchContext

    hook = load_entry(req["entry"])
    cases = []
    for case in req["cases"]:
        t0 = time.monotonic()
        ctx = BenchContext(arch=req.get("arch", ""), params=case["params"], label=case["label"])
        fn = hook(ctx)
        if not callable(fn):
            raise TypeError(f"the bench hook {req['entry']} returned {type(fn).__name__}, not a callable")
        fn()
        torch.cuda.synchronize()
        cases.append(fn)
        send(
            "ready", shape=case["label"], seconds=round(time.monotonic() - t0, 2), notes=ctx.notes, callables=CALLABLES
        )
    return cases


def run_once(req: dict, cases: list) -> None:
    """The launches Nsight Compute profiles: ``calls`` calls of each case after a warm-up."""
    import torch

    for fn in cases:
        for _ in range(int(req.get("warmup", 2))):
            fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for fn in cases:
        for _ in range(int(req.get("calls", 3))):
            fn()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main(argv: list[str] | None = None) -> int:
    global _OUT
    argv = sys.argv[1:] if argv is None else argv
    req = json.loads(Path(argv[0]).read_text())
    if req.get("event_fd") is not None:
        _OUT = os.fdopen(int(req["event_fd"]), "w", buffering=1)
    setup_paths(req["site"], req.get("local_paths", []))
    for var in ("CUTE_DSL_ARCH", "FLASH_ATTENTION_ARCH", "FLASH_ATTENTION_NUM_SMS"):
        os.environ.pop(var, None)
    try:
        import torch

        _patch_cute()
        if not torch.cuda.is_available():
            send("error", message="torch in this environment sees no CUDA GPU")
            return 3
        cases = make_cases(req)
        if req.get("once"):
            run_once(req, cases)
            return 0
        flush = None
        if req.get("l2_flush"):
            l2 = torch.cuda.get_device_properties(0).L2_cache_size
            buf = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
            flush = buf.zero_
    except Exception as exc:  # reported as data; the runner turns it into a sentence
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        kind = error_kind(msg) or "setup"
        send("error", message=f"{type(exc).__name__}: {msg[:300]}", kind=kind)
        if _OUT is None:
            print(f"cutediff bench worker: {type(exc).__name__}: {msg[:300]}", file=sys.stderr)
        return 3
    send("started", device=torch.cuda.get_device_name(0))
    scales: dict[int, int] = {}  # per case: the factor on warmup and iters (--min-round-ms)
    while True:
        line = sys.stdin.readline()
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        i = int(cmd[1]) if len(cmd) > 1 else 0
        try:
            if i not in scales:
                scales[i] = round_scale(cases[i], int(req["iters"]), float(req.get("min_round_ms", 0)))
            k = scales[i]
            if cmd[0] == "round":
                ms, host_ms = time_round(
                    cases[i], int(req["warmup"]) * k, int(req["iters"]) * k, flush, bool(req.get("sync", False))
                )
                send("samples", shape=i, ms=ms, host_ms=host_ms)
            elif cmd[0] == "kernels":
                from cutediff_tui.core.bench.kernels import profile_calls

                send(
                    "kernels",
                    shape=i,
                    kernels=profile_calls(cases[i], int(req["iters"]) * k, CALLABLES, int(req["warmup"]) * k),
                )
        except Exception as exc:
            send("error", message=f"{type(exc).__name__}: {str(exc)[:300]}", kind=error_kind(str(exc)) or "run")
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
