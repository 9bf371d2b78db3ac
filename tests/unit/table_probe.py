"""A probe function for the parallel bisect tests: answers from a JSON table of figures per side
(``CUTEDIFF_PROBE_TABLE``), in a real worker process of the pool, and records which process ran it."""

import json
import os
import time


def run(probe) -> dict:
    with open(os.environ["CUTEDIFF_PROBE_TABLE"]) as fh:
        table = json.load(fh)
    value = table[probe.side]
    time.sleep(0.05)
    if value is None:
        return {"status": "failed", "why": f"{probe.side} fails to import.", "seconds": 0.05, "pid": os.getpid()}
    return {
        "status": "ok",
        "seconds": 0.05,
        "from_cache": False,
        "pid": os.getpid(),
        "kernels": [{"name": "FlashAttentionForwardSm100", "symbol": "k", "figures": {"spill_store_bytes": value}}],
    }
