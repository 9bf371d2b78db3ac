"""What ``-v/--verbose`` shows besides the commands run: the cache decisions, as records on the
``cutediff.cache`` logger; and where the time of a watch round goes, as stamps on the
``cutediff.timing`` logger.

Core code calls :func:`cache_decision` where it reuses or rebuilds something it cached, and
:func:`stamp` at the steps of a compare (save seen, build requested, compile child forked, cubin
written, each tool run, analysis, comparison handed over, pane repainted); nothing is printed
unless a face attaches a handler (the CLI does with ``-v``; ``benchmarks/bench_live.py`` collects
the stamps). Headless: the standard library's :mod:`logging` only.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["CACHE_LOG", "TIMING_LOG", "cache_decision", "stamp", "timing_on"]

#: The logger of cache decisions (``cutediff.cache``).
CACHE_LOG = logging.getLogger("cutediff.cache")
#: The logger of timing stamps (``cutediff.timing``, DEBUG records; ``record.t`` is the
#: ``time.monotonic()`` of the step, ``record.facts`` a dict of what it was about).
TIMING_LOG = logging.getLogger("cutediff.timing")


def cache_decision(what: str, key: str, decision: str, why: str = "") -> None:
    """Record one decision: ``build 3f2a… hit``, ``comparison 9c1d… miss (not in the cache)``."""
    CACHE_LOG.info("%s %s: %s%s", what, key[:16], decision, f" ({why})" if why else "")


def timing_on() -> bool:
    """Whether anyone collects timing stamps (callers skip work that only feeds them)."""
    return TIMING_LOG.isEnabledFor(logging.DEBUG)


def stamp(step: str, *, t: float | None = None, **facts: Any) -> None:
    """Note that ``step`` happens now (or at the monotonic time ``t``, e.g. a child's own clock:
    CLOCK_MONOTONIC is one clock for every process of the machine). Costs one level check when
    nobody listens."""
    if TIMING_LOG.isEnabledFor(logging.DEBUG):
        TIMING_LOG.debug("%s", step, extra={"t": time.monotonic() if t is None else t, "facts": facts})
