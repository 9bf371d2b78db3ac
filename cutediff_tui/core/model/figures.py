"""The one registry of a kernel's figures: every table, report, pane, check and metric reads it.

A figure is one number (or a short list of numbers) per kernel and side: registers, stack bytes,
spill bytes, SASS instruction counts, key opcodes… Each is declared here once, with its name (as
written in ``--metric``, ``cutediff check --max``/``--max-delta`` and the JSON report), label,
unit, which direction is worse, how to read it from a kernel side (the ``a``/``b`` object of a
comparison kernel) and how to format it. The faces generate their rows from :data:`FIGURES`:
the CLI table (``render.py``), the Markdown/HTML/JSON reports (``core/report``), the TUI metrics
pane (``ui/widgets/metrics.py``), ``cutediff check`` limits (``core/report/check.py``) and metric
expressions (``core/metric.py``).

How to add a figure
-------------------
1. Write its extractor: a function of one kernel side's mapping that returns the value, or None
   when the analysis did not give it. Nested analysis data is fine, e.g.
   ``lambda m: dig(m, "ptx", "local_bytes")``; a figure that is a list (register budgets
   ``[176, 88]``) sets ``kind="list"`` and is shown as ``176/88``.
2. Add one :class:`Figure` to :data:`FIGURES` (the tuple order is the row order everywhere).
   ``worse="higher"`` colours a rise red; ``key=True`` puts it in the short summaries (HTML
   cards, overview); ``faces`` limits where it is shown when a face must not show it.
3. Nothing else: the faces, ``check`` and metrics pick it up (``tests/unit/test_figures.py``
   checks a dummy figure reaches each of them).

Decisions taken when the five old copies were merged (issue 14): ``local_bytes`` is worse when
higher (local memory is what spills and stack frames use; only the TUI said so before, and it
stays out of the reports' resource table, which never showed it); ``UTCOMMA`` is a key opcode
(it is a tensor-core MMA like UTCHMMA/UTCQMMA; only the reports listed it, the CLI table did
not); the labels are the reports' (``Stack frame (bytes)``), the short names the TUI's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ALL_FACES",
    "CROSSCHECK_FIGURES",
    "FACES",
    "FIGURES",
    "Face",
    "Figure",
    "by_name",
    "delta_sign",
    "dig",
    "figures_for",
    "is_worse",
    "key_opcodes",
    "opcode",
    "resource",
    "unit_symbol",
]

Face = Literal["cli", "report", "tui", "json", "metric"]
#: Where figures are shown: the CLI table, the Markdown/HTML report, the TUI metrics pane, the
#: JSON report's per-kernel ``figures``, and metric expressions / ``check`` limits.
FACES: tuple[Face, ...] = ("cli", "report", "tui", "json", "metric")
ALL_FACES: frozenset[Face] = frozenset(FACES)
Worse = Literal["higher", "lower"] | None
Kind = Literal["number", "list"]
Group = Literal["resource", "opcode"]
_UNIT_SYMBOLS = {"bytes": "B", "s": "s"}


def dig(m: Mapping[str, Any], *path: str) -> Any:
    """``m[path[0]][path[1]]…``, or None where a step is missing or not a mapping."""
    cur: Any = m
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def _peak_gpr(m: Mapping[str, Any]) -> Any:
    gpr = dig(m, "pressure", "peaks", "gpr")
    return gpr.get("value") if isinstance(gpr, Mapping) else gpr


def _budgets(m: Mapping[str, Any], *path: str) -> list[int] | None:
    """Register budgets as ``[inc…, dec…]`` (``[176, 88]``), None when the kernel sets none."""
    b = dig(m, *path)
    if not isinstance(b, Mapping):
        return None
    vals = list(b.get("inc") or []) + list(b.get("dec") or [])
    return vals or None


def _ptx_registers(m: Mapping[str, Any]) -> int | None:
    decls = dig(m, "ptx", "reg_decls")
    return sum(int(v) for v in decls.values()) if isinstance(decls, Mapping) else None


def _mem_ops(
    isa_path: tuple[str, ...], spaces: tuple[str, ...], kinds: tuple[str, ...]
) -> Callable[[Mapping[str, Any]], list[str] | None]:
    """An extractor of ``["STG.E.128×8", …]``: the opcodes (with width) of some spaces and kinds,
    most used first; None when the kernel has none (or was analysed before memory ops existed)."""

    def extract(m: Mapping[str, Any]) -> list[str] | None:
        ops = dig(m, *isa_path, "ops")
        if not isinstance(ops, list):
            return None
        rows = [r for r in ops if isinstance(r, Mapping) and r.get("space") in spaces and r.get("kind") in kinds]
        rows.sort(key=lambda r: (-int(r.get("count") or 0), str(r.get("opcode"))))
        return [f"{r.get('opcode')}×{r.get('count')}" for r in rows] or None

    return extract


def _ops_text(v: Any) -> str:
    return " ".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v)


@dataclass(frozen=True)
class Figure:
    """One figure of a kernel side.

    Attributes:
        name: the name in metrics, ``check`` limits and the JSON report (resources lower case,
            opcodes as the SASS mnemonic).
        label: the row label in tables and reports (``Stack frame``).
        short: the name in sentences and narrow panes (``stack``); the label when empty.
        unit: ``bytes``, ``s`` or ``""``; tables show ``label (unit)``.
        worse: ``"higher"`` or ``"lower"`` when a change in that direction is a regression.
        key: a key figure, shown in the short summaries (HTML cards and overview).
        group: ``resource`` (always a row when known) or ``opcode`` (a row when either side has it).
        kind: ``number`` or ``list`` (a list is shown as ``176/88`` and is not used in metrics).
        description: what it measures, for metric help and the sweep heatmap.
        extract: reads the value from one kernel side's mapping; None when absent.
        fmt: formats a value for display; None uses each face's number format.
        faces: where the figure is shown (:data:`FACES`).
    """

    name: str
    label: str
    short: str = ""
    unit: str = ""
    worse: Worse = None
    key: bool = False
    group: Group = "resource"
    kind: Kind = "number"
    description: str = ""
    extract: Callable[[Mapping[str, Any]], Any] | None = None
    fmt: Callable[[Any], str] | None = None
    faces: frozenset[Face] = field(default=ALL_FACES)

    @property
    def title(self) -> str:
        """``Stack frame (bytes)``: the label with its unit."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    @property
    def word(self) -> str:
        """The short name (``stack``), for sentences and narrow columns."""
        return self.short or self.label

    def value(self, side: Mapping[str, Any] | None) -> Any:
        """The figure on one kernel side (the comparison's ``kernel["a"]``), None when absent."""
        if not isinstance(side, Mapping):
            return None
        if self.extract is not None:
            return self.extract(side)
        if self.group == "opcode":
            ops = side.get("opcodes")
            return ops.get(self.name, 0) if isinstance(ops, Mapping) else None
        return side.get(self.name)

    def present(self, side: Mapping[str, Any] | None) -> bool:
        """Whether one side has the figure: a known value; for an opcode, a count in its listing."""
        if self.group == "opcode" and self.extract is None:
            ops = side.get("opcodes") if isinstance(side, Mapping) else None
            return isinstance(ops, Mapping) and self.name in ops
        return self.value(side) is not None

    def text(self, v: Any, number: Callable[[Any], str]) -> str:
        """``v`` for display: the figure's own format, a list as ``176/88``, else ``number(v)``."""
        if v is not None and self.fmt is not None:
            return self.fmt(v)
        if isinstance(v, (list, tuple)):
            return "/".join(number(x) for x in v)
        return number(v)

    def shown_in(self, face: Face) -> bool:
        return face in self.faces and not (face == "metric" and self.kind == "list")


def resource(name: str, label: str, **kw: Any) -> Figure:
    return Figure(name, label, group="resource", **kw)


def opcode(name: str, *, worse: Worse = None, description: str = "", **kw: Any) -> Figure:
    """A key SASS opcode: its count, a row when either side has it."""
    return Figure(
        name, name, group="opcode", worse=worse, description=description or f"{name} instructions", faces=_OPS, **kw
    )


#: Opcodes are counted for any upper-case name in a metric; the declared ones are table rows.
_OPS: frozenset[Face] = frozenset({"cli", "report", "tui", "json"})
_NOT_REPORT: frozenset[Face] = ALL_FACES - {"report"}
_METRIC_ONLY: frozenset[Face] = frozenset({"metric", "json"})

#: Every figure, in display order. See the module docstring to add one.
FIGURES: tuple[Figure, ...] = (
    resource(
        "registers", "Registers", short="registers", worse="higher", key=True,
        description="registers per thread (cuobjdump)",
    ),
    resource(
        "stack_bytes", "Stack frame", short="stack", unit="bytes", worse="higher", key=True,
        description="stack frame bytes",
    ),
    resource(
        "spill_store_bytes", "Spill stores", short="spill stores", unit="bytes", worse="higher", key=True,
        description="bytes stored by spill instructions",
    ),
    resource(
        "spill_load_bytes", "Spill loads", short="spill loads", unit="bytes", worse="higher", key=True,
        description="bytes loaded by spill instructions",
    ),
    resource(
        "shared_bytes", "Shared memory", short="shared", unit="bytes", description="static shared memory bytes"
    ),
    resource(
        "local_bytes", "Local memory", short="local", unit="bytes", worse="higher", faces=_NOT_REPORT,
        description="local memory bytes",
    ),
    resource("stl", "STL instructions", short="STL", worse="higher", description="STL instructions"),
    resource("ldl", "LDL instructions", short="LDL", worse="higher", description="LDL instructions"),
    resource(
        "instructions", "SASS instructions", short="SASS instr", description="SASS instructions of the kernel"
    ),
    resource(
        "ptx_instructions", "PTX instructions", short="PTX instr", extract=lambda m: dig(m, "ptx", "instructions"),
        faces=frozenset({"cli", "report", "json", "metric"}), description="PTX instructions of the kernel",
    ),
    resource(
        "peak_gpr", "Peak live registers", short="peak GPRs", extract=_peak_gpr, worse="higher",
        faces=_NOT_REPORT, description="peak live general registers (nvdisasm -lrm)",
    ),
    resource(
        "local_loads", "Local loads", short="local loads", worse="higher",
        description="loads from the stack/local memory (LDL and generic LD at the stack pointer)",
    ),
    resource(
        "local_load_bytes", "Local bytes loaded", short="local bytes loaded", unit="bytes", worse="higher",
        description="bytes per thread loaded from the stack/local memory (static, every local access)",
    ),
    resource(
        "local_stores", "Local stores", short="local stores", worse="higher",
        description="stores to the stack/local memory (STL and generic ST at the stack pointer)",
    ),
    resource(
        "local_store_bytes", "Local bytes stored", short="local bytes stored", unit="bytes", worse="higher",
        description="bytes per thread stored to the stack/local memory (static, every local access)",
    ),
    resource(
        "ptx_local_bytes", "PTX local depot", short="PTX local depot", unit="bytes", worse="higher",
        extract=lambda m: dig(m, "ptx", "local_bytes"),
        description="bytes of the PTX .local declarations (__local_depot, the PTX-level stack)",
    ),
    resource(
        "register_budgets", "Register budgets", short="register budgets", kind="list",
        extract=lambda m: _budgets(m, "budgets"),
        description="USETMAXREG budgets in SASS (increases then decreases, e.g. 176/88)",
    ),
    resource(
        "ptx_register_budgets", "PTX register budgets", short="PTX register budgets", kind="list",
        extract=lambda m: _budgets(m, "ptx", "budgets"),
        description="setmaxnreg.inc/dec budgets in PTX (increases then decreases, e.g. 176/88)",
    ),
    resource(
        "global_loads_by_width", "Global loads by width", short="global loads", kind="list",
        extract=_mem_ops(("memory",), ("global",), ("load",)), fmt=_ops_text,
        description="SASS global loads per opcode with width (LDG.E.128×8)",
    ),
    resource(
        "global_stores_by_width", "Global stores by width", short="global stores", kind="list",
        extract=_mem_ops(("memory",), ("global",), ("store",)), fmt=_ops_text,
        description="SASS global stores per opcode with width (STG.E.128×8)",
    ),
    resource(
        "shared_ops_by_width", "Shared memory ops by width", short="shared ops", kind="list",
        extract=_mem_ops(("memory",), ("shared",), ("load", "store", "atomic")), fmt=_ops_text,
        description="SASS shared-memory loads/stores per opcode with width (LDS.128×4)",
    ),
    resource(
        "local_ops_by_width", "Local memory ops by width", short="local ops", kind="list",
        extract=_mem_ops(("memory",), ("local",), ("load", "store", "atomic")), fmt=_ops_text,
        description="SASS stack/local accesses per opcode with width (STL.128×16, LD.E [stack]×4)",
    ),
    resource(
        "ptx_global_stores_by_width", "PTX global stores by width", short="PTX global stores", kind="list",
        extract=_mem_ops(("ptx", "memory"), ("global",), ("store",)), fmt=_ops_text,
        description="PTX global stores per opcode with type and width (st.global.v4.b32×8)",
    ),
    resource(
        "ptx_local_ops_by_width", "PTX local memory ops by width", short="PTX local ops", kind="list",
        extract=_mem_ops(("ptx", "memory"), ("local",), ("load", "store", "atomic")), fmt=_ops_text,
        description="PTX stack/local accesses per opcode (st.local.v4.b32×16, generic ld through %SP)",
    ),
    resource(
        "ptx_registers", "PTX registers declared", short="PTX registers", extract=_ptx_registers,
        description="virtual registers the PTX declares (all types; ptxas allocates the real ones)",
    ),
    resource(
        "compile_seconds", "Compile time", short="compile time", unit="s",
        description="seconds the DSL took to compile it",
    ),
    opcode("UTCHMMA", key=True),
    opcode("UTCQMMA", key=True),
    opcode("UTCOMMA", key=True),
    opcode("HGMMA", key=True),
    opcode("HMMA", key=True),
    opcode("MUFU", key=True),
    opcode("FFMA2", key=True),
    opcode("FMUL2", key=True),
    opcode("FADD2", key=True),
    opcode("FFMA"),
    opcode("STL", worse="higher"),
    opcode("LDL", worse="higher"),
)  # fmt: skip


#: The figures ``ptxas -v`` reports, which the ptxas cross-check tabulates (its column names are
#: these figures' short names).
CROSSCHECK_FIGURES = ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes")


def figures_for(face: Face, group: Group | None = None, figures: Iterable[Figure] | None = None) -> list[Figure]:
    """The figures ``face`` shows (of one ``group`` when given), in registry order."""
    return [f for f in (FIGURES if figures is None else figures) if f.shown_in(face) and group in (None, f.group)]


def by_name(name: str) -> Figure | None:
    """The figure called ``name``, None when the registry has none."""
    for f in FIGURES:
        if f.name == name:
            return f
    return None


def key_opcodes() -> tuple[str, ...]:
    """The opcodes declared in the registry (table rows when either side has them)."""
    return tuple(f.name for f in FIGURES if f.group == "opcode")


def unit_symbol(unit: str) -> str:
    """``bytes`` → ``B`` (for sentences: ``stack 0 → 112 B``)."""
    return _UNIT_SYMBOLS.get(unit, unit)


def delta_sign(a: Any, b: Any) -> int:
    """The sign of ``b - a`` for two numbers (bools are not numbers here), 0 otherwise."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return 0
    return (b > a) - (b < a)


def is_worse(fig: Figure | None, sign: int) -> bool:
    """Whether a change of ``sign`` (of B − A) makes ``fig`` worse."""
    if fig is None or not sign:
        return False
    return (fig.worse == "higher" and sign > 0) or (fig.worse == "lower" and sign < 0)
