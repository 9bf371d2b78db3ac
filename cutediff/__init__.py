"""cutediff's Python API: compare CuTe DSL kernels across toolchains from a script or a notebook.

>>> import cutediff
>>> c = cutediff.compare("4.5.1", "4.8.0", recipe="samples/recipes/elementwise_add.py", arch="sm_100a")
>>> c.records()[:1]  # the table of figures: one dict per kernel × side × figure
>>> c.to_pandas()  # the same as a DataFrame, when pandas is installed
>>> cutediff.check(c, max_spill_bytes=0).passed

``compare`` and ``diff`` make a :class:`Comparison`; ``load`` reads a saved comparison, sweep or
bisect result; ``check`` and ``report`` take a comparison or its path. Errors are
:class:`CutediffError`: one sentence, what failed and what to do. ``docs/api.md`` has a worked
example. The command line is ``cutediff`` (or ``python -m cutediff``).
"""

from __future__ import annotations

from cutediff_tui import __version__
from cutediff_tui.core.errors import CutediffError

from .api import check, compare, diff, load, load_bisect, load_sweep, report
from .results import BisectResult, CheckReport, Comparison, SweepResult

__all__ = [
    "BisectResult",
    "CheckReport",
    "Comparison",
    "CutediffError",
    "SweepResult",
    "__version__",
    "check",
    "compare",
    "diff",
    "load",
    "load_bisect",
    "load_sweep",
    "report",
]
