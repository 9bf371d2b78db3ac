"""Aligned listings as a unified diff: the hunks of a comparison, largest first, outside the TUI.

:func:`listing_hunks` re-reads each kernel's SASS (or PTX) from the comparison's artifacts (a
saved result folder or the cache: nothing is compiled), aligns the two sides with the
rename-aware aligner (:mod:`.analysis.align`) and returns the changed hunks ranked by cost, the
largest first, each with its rank among its kernel's hunks, its lines and ``-C`` context.
:func:`unified_diff` writes them as ``---``/``+++``/``@@`` text that ``less``, ``delta`` or a
```` ```diff ```` block read; :func:`hunk_tags` says which hunks touch spill code, MMAs or
register budgets (the TUI's "next marked hunk" key uses the same definition).

Line numbers in ``@@`` headers are instruction numbers (1-based) within the kernel's listing;
register renames alone are no change (those hunks are left out) and context rows equal after
renaming show side B's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .errors import CutediffError
from .files import read_text
from .model.kernel_filter import compile_filter, matches
from .model.types import SIDES
from .sanitize import one_line

__all__ = [
    "VIEWS",
    "DiffLine",
    "ListingHunk",
    "SideCode",
    "hunk_tags",
    "line_tags",
    "listing_hunks",
    "side_code",
    "unified_diff",
    "TAGS",
]

View = Literal["sass", "ptx"]
VIEWS: tuple[View, ...] = ("sass", "ptx")
_VIEW_TITLE = {"sass": "SASS", "ptx": "PTX"}
#: What a hunk can touch, in the order they are told: spill code, an MMA, a register budget.
TAGS = ("spill", "mma", "budget")
_MMA_RE = re.compile(r"MMA|(?:^|\.)mma\b|^wgmma|^tcgen05\.mma")
_BUDGET_RE = re.compile(r"^USETMAXREG|^setmaxnreg")
_LOCAL_PTX = re.compile(r"^(?:st|ld)\.local\b")


def line_tags(opcode: str, spill: bool = False) -> frozenset[str]:
    """The :data:`TAGS` one instruction carries: ``spill`` (spill code, or PTX ``st/ld.local``),
    ``mma`` (a tensor-core MMA: ``UTCHMMA``, ``HGMMA``, ``wgmma``, ``tcgen05.mma`` …), ``budget``
    (``USETMAXREG``, ``setmaxnreg``)."""
    out = set()
    if spill or _LOCAL_PTX.match(opcode) or opcode.split(".", 1)[0] in ("STL", "LDL"):
        out.add("spill")
    if _MMA_RE.search(opcode):
        out.add("mma")
    if _BUDGET_RE.match(opcode):
        out.add("budget")
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class SideCode:
    """One side's instructions of one kernel and view: their text, full opcode and spill flag."""

    texts: list[str]
    opcodes: list[str]
    spills: list[bool]
    instrs: Any = field(default=None, repr=False)
    """What the aligner reads (a SASS function or a PTX entry)."""

    def tags(self, i: int) -> frozenset[str]:
        return line_tags(self.opcodes[i], self.spills[i])


def _sass_code(metrics: Mapping[str, Any]) -> SideCode:
    from .analysis.sass import parse_sass
    from .analysis_pipeline import cache_for, kernel_texts

    kdir = Path(str((metrics.get("files") or {}).get("dir") or ""))
    if not (kdir / "kernel.cubin").is_file() and (kdir / "kernel.sass").is_file():
        text = (kdir / "kernel.sass").read_text(errors="replace")
    elif (kdir / "kernel.cubin").is_file():
        text = kernel_texts(kdir / "kernel.cubin", cache_for(kdir))["sass"]
    else:
        raise CutediffError(
            f"The SASS of this kernel is missing: {kdir} has no kernel.cubin or kernel.sass.",
            "Open the saved result folder (not a copy of its comparison.json alone), or compare again.",
        )
    listing = parse_sass(text)
    symbol = metrics.get("symbol")
    funcs = [f for f in listing.functions if symbol and f.name == symbol] or listing.functions
    if not funcs:
        raise CutediffError(f"The disassembly in {kdir} holds no function.", "The cubin may be empty or truncated.")
    entries = [f for f in funcs if getattr(f, "is_entry", False)] or funcs
    func = max(entries, key=lambda f: len(f.instrs))
    ins = func.instrs
    return SideCode([i.text for i in ins], [i.opcode for i in ins], [bool(i.is_spill) for i in ins], func)


def _ptx_code(metrics: Mapping[str, Any]) -> SideCode:
    from .analysis.ptx import parse_ptx

    kdir = Path(str((metrics.get("files") or {}).get("dir") or ""))
    text = read_text(kdir, "kernel.ptx")
    if text is None:
        raise CutediffError(
            f"The PTX of this kernel is missing: {kdir} has no kernel.ptx.",
            "Leave out --ptx to diff the SASS, or compare again with a DSL that keeps the PTX.",
        )
    mod = parse_ptx(text)
    symbol = metrics.get("symbol")
    named = [e for e in mod.entries if e.name == symbol]
    if not (named or mod.entries):
        raise CutediffError(f"The PTX in {kdir} holds no entry.", "The PTX file may be empty or truncated.")
    entry = named[0] if named else max(mod.entries, key=lambda e: len(e.instrs))
    ins = entry.instrs
    return SideCode([i.text for i in ins], [i.opcode for i in ins], [False] * len(ins), entry)


def side_code(metrics: Mapping[str, Any], view: View = "sass") -> SideCode:
    """One side's listing of a kernel, read from its artifacts (the disassembly cache for SASS)."""
    return _ptx_code(metrics) if view == "ptx" else _sass_code(metrics)


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk: ``" "`` (context), ``"-"`` (A only) or ``"+"`` (B only)."""

    mark: str
    text: str


@dataclass(frozen=True, slots=True)
class ListingHunk:
    """One changed hunk of one kernel's aligned listing, as a unified-diff hunk.

    Attributes:
        kernel: the kernel's name; ``index`` its position in the comparison.
        view: ``sass`` or ``ptx``.
        rank: 1 for the kernel's largest hunk (by cost); ``of`` hunks in the kernel.
        kind, cost, summary: from the aligner (``inserted``, 105.0, ``+10 LDL, +4 uniform``).
        a_start, b_start: first instruction (0-based) of the block on each side.
        lines: context and changed lines, in order.
        size: changed lines (``-`` and ``+``) of the hunk itself.
        tags: :data:`TAGS` its changed lines carry.
    """

    kernel: str
    index: int
    view: str
    rank: int
    of: int
    kind: str
    cost: float
    summary: str
    a_start: int
    b_start: int
    lines: tuple[DiffLine, ...]
    size: int
    tags: frozenset[str] = frozenset()

    @property
    def a_count(self) -> int:
        return sum(1 for ln in self.lines if ln.mark != "+")

    @property
    def b_count(self) -> int:
        return sum(1 for ln in self.lines if ln.mark != "-")

    def header(self) -> str:
        """``@@ -3120,14 +3206,30 @@ hunk 1/2521 · 16 lines · inserted · +10 LDL, +4 uniform``."""
        tags = f" · {'/'.join(t for t in TAGS if t in self.tags)}" if self.tags else ""
        what = f" · {self.summary}" if self.summary else ""
        return (
            f"@@ -{_span(self.a_start, self.a_count)} +{_span(self.b_start, self.b_count)} @@ "
            f"hunk {self.rank}/{self.of} · {self.size} lines · {self.kind}{tags}{what}"
        )


def _span(start: int, count: int) -> str:
    # unified diff: an empty range names the line before it
    return f"{start + 1},{count}" if count else f"{start},0"


def hunk_tags(code: Mapping[str, SideCode], rows: Iterable[Any]) -> frozenset[str]:
    """The :data:`TAGS` of the changed rows (``Row`` of the aligner) of one hunk."""
    out: set[str] = set()
    for r in rows:
        if r.kind in ("same", "regalloc"):
            continue
        for s, i in (("a", r.a_index), ("b", r.b_index)):
            if i is not None:
                out |= code[s].tags(i)
    return frozenset(out)


def _block(al: Any, h: Any, code: Mapping[str, SideCode], context: int) -> tuple[int, int, list[DiffLine], int]:
    rows = al.rows
    lo, hi = h.rows
    first, last = max(0, lo - context), min(len(rows), hi + context)
    a_txt, b_txt = code["a"].texts, code["b"].texts
    lines: list[DiffLine] = []

    def plain(r: Any) -> None:
        if r.a_index is not None and r.b_index is not None and r.kind in ("same", "regalloc"):
            lines.append(DiffLine(" ", b_txt[r.b_index]))
        else:
            if r.a_index is not None:
                lines.append(DiffLine("-", a_txt[r.a_index]))
            if r.b_index is not None:
                lines.append(DiffLine("+", b_txt[r.b_index]))

    for r in rows[first:lo]:
        plain(r)
    mid = rows[lo:hi]
    minus = [DiffLine("-", a_txt[r.a_index]) for r in mid if r.a_index is not None]
    plus = [DiffLine("+", b_txt[r.b_index]) for r in mid if r.b_index is not None]
    lines += minus + plus
    for r in rows[hi:last]:
        plain(r)
    a_start = next((r.a_index for r in rows[first:last] if r.a_index is not None), None)
    b_start = next((r.b_index for r in rows[first:last] if r.b_index is not None), None)
    if a_start is None:  # nothing of A in the block: the insertion point
        a_start = h.a_range[0]
    if b_start is None:
        b_start = h.b_range[0]
    return a_start, b_start, lines, len(minus) + len(plus)


@dataclass(slots=True)
class _Aligned:
    """One kernel's two listings and their alignment (what its hunks are cut from)."""

    name: str
    index: int
    view: str
    code: dict
    al: Any
    ranked: list


def _aligned(kernel: Mapping[str, Any], index: int, view: View) -> _Aligned | None:
    from .analysis import align as align_mod

    if not (isinstance(kernel.get("a"), Mapping) and isinstance(kernel.get("b"), Mapping)):
        return None
    code = {s: side_code(kernel[s], view) for s in SIDES}
    fn = align_mod.align_ptx if view == "ptx" else align_mod.align_sass
    al = fn(code["a"].instrs, code["b"].instrs)
    ranked = sorted((h for h in al.hunks if h.kind != "regalloc"), key=lambda h: (-h.cost, h.rows[0]))
    return _Aligned(str(kernel.get("name") or f"kernel {index}"), index, view, code, al, ranked)


def _hunk(k: _Aligned, rank: int, context: int) -> ListingHunk:
    h = k.ranked[rank - 1]
    a_start, b_start, lines, size = _block(k.al, h, k.code, max(0, context))
    return ListingHunk(
        k.name,
        k.index,
        k.view,
        rank,
        len(k.ranked),
        h.kind,
        float(h.cost),
        h.summary or "",
        a_start,
        b_start,
        tuple(lines),
        size,
        hunk_tags(k.code, k.al.rows[h.rows[0] : h.rows[1]]),
    )


def kernel_hunks(
    kernel: Mapping[str, Any], index: int = 0, *, view: View = "sass", context: int = 3, top: int | None = None
) -> list[ListingHunk]:
    """The changed hunks of one kernel (register renames alone left out), largest first."""
    k = _aligned(kernel, index, view)
    if k is None:
        return []
    n = len(k.ranked) if top is None else min(len(k.ranked), max(0, top))
    return [_hunk(k, r, context) for r in range(1, n + 1)]


def listing_hunks(
    comparison: Mapping[str, Any],
    *,
    view: View = "sass",
    context: int = 3,
    top: int | None = None,
    kernel_filter: str | None = None,
    kernels: Iterable[int] | None = None,
) -> list[ListingHunk]:
    """The changed hunks of every kernel (``kernel_filter``: a regex searched in the kernel's
    name and symbols; ``kernels``: indices), largest first across kernels; ``top`` keeps the
    first N."""
    rx = compile_filter(kernel_filter)
    wanted = None if kernels is None else set(kernels)
    chosen = [
        (i, k)
        for i, k in enumerate(comparison.get("kernels") or [])
        if isinstance(k, Mapping) and (wanted is None or i in wanted) and matches(rx, k)
    ]
    if top is not None and view == "sass":
        chosen = _could_rank(chosen, top)
    found: list[_Aligned] = []
    for i, k in chosen:
        a = _aligned(k, i, view)
        if a is not None:
            found.append(a)
    order = sorted(
        ((h.cost, k.index, rank, k) for k in found for rank, h in enumerate(k.ranked, 1)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    if top is not None:
        order = order[: max(0, top)]
    return [_hunk(k, rank, context) for _cost, _i, rank, k in order]


def _could_rank(chosen: list[tuple[int, Mapping[str, Any]]], top: int) -> list[tuple[int, Mapping[str, Any]]]:
    """The kernels that can hold one of the ``top`` largest hunks, judged by the hunk costs the
    comparison stored (``alignment.hunks``, the costliest of each kernel): a kernel whose largest
    stored cost is below the ``top``-th largest of all is not re-read. All of them when a kernel
    has no stored hunks."""
    costs: dict[int, list[float]] = {}
    for i, k in chosen:
        al = k.get("alignment")
        hunks = al.get("hunks") if isinstance(al, Mapping) else None
        if not isinstance(hunks, list):
            return chosen
        costs[i] = [float(h.get("cost") or 0) for h in hunks if isinstance(h, Mapping) and h.get("kind") != "regalloc"]
    every = sorted((c for cs in costs.values() for c in cs), reverse=True)
    if len(every) < top:
        return chosen
    bar = every[top - 1]
    return [(i, k) for i, k in chosen if costs[i] and max(costs[i]) >= bar]


def _side_title(comparison: Mapping[str, Any], s: str) -> str:
    from .model.changes import side_name

    return f"{s.upper()} {side_name(comparison, s)}"


def unified_diff(
    comparison: Mapping[str, Any], hunks: Iterable[ListingHunk], *, max_lines: int | None = None
) -> Iterator[str]:
    """The hunks as unified-diff lines (no newlines): a ``---``/``+++`` pair naming side and
    kernel whenever the kernel changes, then each ``@@`` header and its lines. Text is made
    visible (no control character reaches a terminal); ``max_lines`` keeps the first lines of
    each hunk (its header then counts those)."""
    last = None
    for h in hunks:
        if h.index != last:
            name = one_line(h.kernel)
            yield f"--- a/{name} ({_side_title(comparison, 'a')}, {_VIEW_TITLE.get(h.view, h.view)})"
            yield f"+++ b/{name} ({_side_title(comparison, 'b')}, {_VIEW_TITLE.get(h.view, h.view)})"
            last = h.index
        if max_lines is not None and len(h.lines) > max_lines:
            h = replace(h, lines=h.lines[: max(0, max_lines)])  # the header counts what is shown
        yield one_line(h.header())
        for ln in h.lines:
            yield ln.mark + one_line(ln.text)
