"""The comparison model: typed structures, the figure registry, and the JSON reader/writer.

* :mod:`.types`: ``Side``/``SIDES`` and the msgspec Structs of a comparison (the typed view);
* :mod:`.figures`: every figure a kernel has, declared once (name, label, unit, direction,
  extractor, format) — the CLI table, reports, TUI pane, ``check`` and metrics read it;
* :mod:`.io`: the one reader (/1 and /2) and writer (/2) of comparison JSON;
* :mod:`.sides`: side labels that say what differs between the sides (pins, sources, params).
"""

from __future__ import annotations

from .figures import FIGURES, Figure, by_name, figures_for
from .io import (
    READABLE_SCHEMAS,
    SCHEMA,
    SCHEMA_V1,
    decode,
    document,
    dumps,
    kernel_figures,
    load_comparison_bytes,
    read_comparison,
    typed,
)
from .sides import side_labels
from .types import SIDES, Comparison, Kernel, KernelSide, Side, SideInfo

__all__ = [
    "FIGURES",
    "READABLE_SCHEMAS",
    "SCHEMA",
    "SCHEMA_V1",
    "SIDES",
    "Comparison",
    "Figure",
    "Kernel",
    "KernelSide",
    "Side",
    "SideInfo",
    "by_name",
    "decode",
    "document",
    "dumps",
    "figures_for",
    "kernel_figures",
    "load_comparison_bytes",
    "read_comparison",
    "side_labels",
    "typed",
]
