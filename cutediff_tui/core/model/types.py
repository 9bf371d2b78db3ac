"""Typed structures of a comparison (``cutediff.comparison/2``), as msgspec Structs.

The JSON document stays the lossless record (a saved file round-trips, keys this version does not
know included); these Structs are the typed view of it that :func:`~cutediff_tui.core.model.typed`
gives, decoded from the same bytes (msgspec was picked by measurement: ``benchmarks/RESULTS.md``).
Fields a file may lack default to None or empty; numbers keep their JSON type (``int | float``) so
a view never changes how a figure prints.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "SIDES",
    "Alignment",
    "BenchResult",
    "BenchRow",
    "Comparison",
    "CrosscheckCell",
    "CrosscheckEntry",
    "Kernel",
    "KernelSide",
    "Profile",
    "PtxFacts",
    "Recipe",
    "Remark",
    "Side",
    "SideInfo",
    "SpillSite",
    "SpillSiteChange",
    "SpillSitesDiff",
    "Timing",
]

#: A side of a comparison: A is the baseline toolchain, B the one under test.
Side = Literal["a", "b"]
SIDES: tuple[Side, Side] = ("a", "b")

Number = int | float


class _Struct(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base: unknown keys are allowed (kept in the JSON document, not in the view)."""


class SpillSite(_Struct):
    """One spill instruction mapped to a source line (``file``/``line`` None without line info)."""

    opcode: str | None = None
    kind: str | None = None
    width_bytes: int | None = None
    addr: int | None = None
    file: str | None = None
    line: int | None = None
    inline_chain: list[Any] | None = None


class Remark(_Struct):
    """A ptxas remark (``remarks{ptx}``): ``ptxas detected register spills`` at a source line."""

    message: str | None = None
    detail: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None


class PtxFacts(_Struct):
    """What the PTX of a kernel says about itself."""

    version: str | None = None
    target: str | None = None
    toolchain: str | None = None
    instructions: int | None = None
    local_bytes: int | None = None
    opcodes: dict[str, int] = {}


class KernelSide(_Struct):
    """One side's build of a kernel: resources, opcode and class counts, spills, remarks."""

    symbol: str | None = None
    registers: Number | None = None
    stack_bytes: Number | None = None
    shared_bytes: Number | None = None
    local_bytes: Number | None = None
    spill_store_bytes: Number | None = None
    spill_load_bytes: Number | None = None
    instructions: Number | None = None
    stl: Number | None = None
    ldl: Number | None = None
    compile_seconds: Number | None = None
    opcodes: dict[str, int] = {}
    instruction_classes: dict[str, int] = {}
    spill_sites: list[SpillSite] = []
    remarks: list[Remark] = []
    ptx: PtxFacts | None = None
    pressure: dict[str, Any] | None = None
    lineinfo: dict[str, Any] | None = None
    files: dict[str, Any] = {}


class Alignment(_Struct):
    """Summary of a rename-aware alignment of the two sides' listings."""

    matched: int | None = None
    total: int | None = None
    a_count: int | None = None
    b_count: int | None = None
    match_pct: Number | None = None
    counts: dict[str, int] = {}
    hunk_count: int | None = None


class SpillSiteChange(_Struct):
    """A source line whose spill instructions changed count from A to B."""

    file: str | None = None
    line: int | None = None
    kind: str | None = None
    a_count: int = 0
    b_count: int = 0


class SpillSitesDiff(_Struct):
    """Spill sites by source line: added in B, removed in B, in both."""

    added: list[SpillSiteChange] = []
    removed: list[SpillSiteChange] = []
    unchanged: list[SpillSiteChange] = []


class Kernel(_Struct):
    """A kernel paired across the sides (by symbol); ``a`` or ``b`` is None when only one has it."""

    name: str
    symbol: dict[str, str | None] = {}
    a: KernelSide | None = None
    b: KernelSide | None = None
    alignment: Alignment | None = None
    ptx_alignment: Alignment | None = None
    pair_error: str | None = None
    spill_sites_diff: SpillSitesDiff | None = None
    figures: dict[str, list[Any]] = {}

    def side(self, s: Side) -> KernelSide | None:
        return self.a if s == "a" else self.b


class SideInfo(_Struct):
    """A toolchain: DSL version and pins, its locked packages, and how its build went."""

    label: str | None = None
    dsl: str | None = None
    cuda: str | int | None = None
    pins: list[str] = []
    env: str | None = None
    versions: dict[str, str] = {}
    error: str | None = None
    build_key: str | None = None
    lineinfo_key: str | None = None
    from_cache: bool | None = None
    compile_seconds: Number | None = None
    shims: list[Any] = []
    notes: list[Any] = []
    params: dict[str, Any] = {}
    """This side's recipe parameters (``--param`` and its own ``--a-param``/``--b-param``)."""


class CrosscheckCell(_Struct):
    """One side's PTX assembled by one ptxas version."""

    side: str | None = None
    ptx_version: str | None = None
    ptxas_version: str | None = None
    rewritten_from: str | None = None
    registers: Number | None = None
    stack: Number | None = None
    spill_stores: Number | None = None
    spill_loads: Number | None = None
    error: str | None = None


class CrosscheckEntry(_Struct):
    """The ptxas cross-check of one kernel: the matrix and its verdict."""

    matrix: list[CrosscheckCell] = []
    verdict: str | None = None


class BenchRow(_Struct):
    """One benchmark shape: per-side timing statistics, B/A ratio and its interval, verdict."""

    shape: Any = None
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    ratio: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    verdict: str | None = None


class BenchResult(_Struct):
    mode: str | None = None
    shapes: list[BenchRow] = []
    gpu: dict[str, Any] | None = None


class Recipe(_Struct):
    name: str | None = None
    params: dict[str, Any] = {}


class Profile(_Struct):
    """The target GPU profile a build was made for (it sets the grid, not the code)."""

    name: str | None = None
    arch: str | None = None
    num_sms: int | None = None


class Timing(_Struct):
    build_seconds: Number | None = None
    total_seconds: Number | None = None
    from_cache: bool | None = None


class Comparison(_Struct):
    """A whole comparison: two toolchains, their kernels paired, cross-check and bench results."""

    schema: str
    sides: dict[Side, SideInfo]
    kernels: list[Kernel]
    analysis_version: int | None = None
    created: str | None = None
    command: str | None = None
    host: dict[str, Any] = {}
    recipe: Recipe | None = None
    arch: str | None = None
    profile: Profile | None = None
    lineinfo: bool | None = None
    crosscheck: dict[str, CrosscheckEntry] | None = None
    bench: BenchResult | None = None
    timing: Timing | None = None
    analysis_seconds: Number | None = None
    kernel_filter: str | None = None
    """The ``--kernel-filter`` a shown or reported comparison was narrowed by (its kernels are the matching ones)."""
