"""Small helpers shared by the analysis modules."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large object graphs.

    Parsing and aligning create tens of thousands of small objects that all survive;
    with the collector on, CPython runs repeated full collections over them. Nothing
    built here forms reference cycles, so pausing is safe; the previous state is restored.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
