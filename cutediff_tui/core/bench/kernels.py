"""Per-kernel GPU time from CUPTI (through ``torch.profiler``), named like the compile-side kernels.

The worker profiles ``calls`` calls of a bench case and hands :func:`per_call_times` the GPU
activities (kernels, memsets, copies) as ``(name, start_us, end_us)``; each kernel's time per call
is the sum of its launches in that call. Names go through
:func:`~cutediff_tui.core.naming.kernel_class`, as the static kernel rows do, so bench rows and
compile rows line up. Standard library only at import time (imported inside toolchains).
"""

from __future__ import annotations

from cutediff_tui.core.naming import kernel_class


def kernel_name(raw: str, callables: list[str] | tuple[str, ...] = ()) -> str:
    """The name a GPU activity gets in the tables, as the compile side names it
    (:func:`~cutediff_tui.core.naming.kernel_class`): the DSL kernel's class or ``@cute.kernel``
    function; the function given to ``cute.compile`` (``callables``, when the hook compiled only
    one) only when the symbol names neither; a non-DSL kernel by a short form of its symbol."""
    raw = raw.strip()
    if raw.startswith("void "):
        raw = raw[5:]
    if raw.startswith("kernel_cutlass") or "_object_at_" in raw:
        return kernel_class(raw, callables[0] if len(set(callables)) == 1 else None)
    return raw.split("(")[0][:80] or raw[:80]


def per_call_times(
    events: list[tuple[str, float, float]], calls: int, callables: list[str] | tuple[str, ...] = ()
) -> dict[str, dict]:
    """``{kernel: {"ms": [time per call], "launches": launches per call}}`` from ``calls`` calls.

    A kernel launched the same number of times in every call gets one sample per call (the sum of
    its launches, in call order); one whose launch count does not divide by ``calls`` gets its
    mean per call as a single sample.
    """
    if calls < 1:
        raise ValueError("calls must be >= 1")
    by_name: dict[str, list[tuple[float, float]]] = {}
    for raw, start, end in sorted(events, key=lambda e: e[1]):
        by_name.setdefault(kernel_name(raw, callables), []).append((start, max(0.0, end - start)))
    out: dict[str, dict] = {}
    for name, launches in by_name.items():
        durs = [d / 1000.0 for _, d in launches]  # us -> ms
        if len(durs) % calls == 0:
            per = len(durs) // calls
            ms = [sum(durs[i * per : (i + 1) * per]) for i in range(calls)]
            out[name] = {"ms": ms, "launches": per}
        else:
            out[name] = {"ms": [sum(durs) / calls], "launches": round(len(durs) / calls, 2)}
    return out


def profile_calls(fn, calls: int, callables: list[str] | tuple[str, ...] = (), warmup: int = 0) -> dict[str, dict]:
    """Run ``fn`` ``warmup + calls`` times under ``torch.profiler`` (CUDA activities only) →
    :func:`per_call_times` of the last ``calls``.

    The warm-up runs inside the profiling session: starting CUPTI leaves the GPU idle for a
    moment, and on the H200 the calls right after it ran with clocks still ramping up (per-kernel
    round medians of one build moved by up to ±10 % between rounds, whole calls by ±1 %)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(warmup + calls):
            fn()
        torch.cuda.synchronize()
    events = [
        (e.name, float(e.time_range.start), float(e.time_range.end))
        for e in prof.events()
        if getattr(e.device_type, "name", str(e.device_type)).upper().endswith("CUDA")
    ]
    return last_calls(per_call_times(events, warmup + calls, callables), calls)


def last_calls(times: dict[str, dict], calls: int) -> dict[str, dict]:
    """:func:`per_call_times` output cut to the last ``calls`` calls (a kernel with one mean sample
    keeps it)."""
    return {name: {**v, "ms": v["ms"][-calls:]} if len(v["ms"]) > calls else v for name, v in times.items()}


def merge_rounds(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    """The per-kernel samples of several rounds of one side, concatenated; ``rounds`` holds how many
    samples each round gave, so the rounds can be paired with the other side's."""
    out: dict[str, dict] = {}
    for k, r in enumerate(rounds):
        for name, v in r.items():
            slot = out.setdefault(name, {"ms": [], "launches": v["launches"], "rounds": [0] * k})
            slot["ms"].extend(v["ms"])
        for name, slot in out.items():  # 0 for a round the kernel did not run in
            slot["rounds"].append(len(r[name]["ms"]) if name in r else 0)
    return out
