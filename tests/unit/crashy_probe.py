"""A probe function for tests/unit/test_executors.py: its worker process dies (os._exit) the first
time it sees the probe whose side is "crash-once", like a compile killed by the OOM killer."""

import os
from pathlib import Path


def run(probe) -> dict:
    marker = Path(os.environ["CUTEDIFF_CRASH_MARKER"])
    if probe.side == "crash-once" and not marker.exists():
        marker.write_text("crashed")
        os._exit(9)
    if probe.side == "crash-always":
        os._exit(9)
    return {"status": "ok", "side": probe.side, "pid": os.getpid()}
