"""What ``-v/--verbose`` shows besides the commands run: the cache decisions, as records on the
``cutediff.cache`` logger.

Core code calls :func:`cache_decision` where it reuses or rebuilds something it cached; nothing is
printed unless a face attaches a handler (the CLI does with ``-v``). Headless: the standard
library's :mod:`logging` only.
"""

from __future__ import annotations

import logging

__all__ = ["CACHE_LOG", "cache_decision"]

#: The logger of cache decisions (``cutediff.cache``).
CACHE_LOG = logging.getLogger("cutediff.cache")


def cache_decision(what: str, key: str, decision: str, why: str = "") -> None:
    """Record one decision: ``build 3f2a… hit``, ``comparison 9c1d… miss (not in the cache)``."""
    CACHE_LOG.info("%s %s: %s%s", what, key[:16], decision, f" ({why})" if why else "")
