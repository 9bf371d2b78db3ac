"""Headless view model of the code panes: aligned rows of two sides for one view.

Nothing here imports Textual, so the model is built in a thread worker and unit-tested
without a terminal. A :class:`PaneModel` holds, for one kernel and one view (SASS, PTX,
MLIR, ptxas log), the lines of each side, the aligned rows that pair them, the hunks
(runs of changed rows) and the lookups the keys need (spill sites, addresses, labels,
source lines, search).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cutediff_tui.core.files import read_text
from cutediff_tui.core.model.match import InstructionMatch
from cutediff_tui.core.model.types import SIDES

__all__ = [
    "BIG_LISTING",
    "is_big",
    "VIEWS",
    "VIEW_TITLES",
    "CodeLine",
    "Row",
    "RowHunk",
    "SideLines",
    "PaneModel",
    "build_model",
    "align_lines",
    "normalise_registers",
    "parse_jump",
    "side_note",
]

VIEWS = ("sass", "ptx", "mlir", "log")

#: Instructions on one side from which a kernel's SASS view is staged (raw first, aligned later:
#: :mod:`.big_listing`, imported only for such a kernel).
BIG_LISTING = 100_000


def is_big(kernel: dict) -> bool:
    """Whether a kernel's SASS is big enough to be staged (its metrics' instruction count)."""
    for s in SIDES:
        n = (kernel.get(s) or {}).get("instructions")
        if isinstance(n, int) and n >= BIG_LISTING:
            return True
    return False


VIEW_TITLES = {"sass": "SASS", "ptx": "PTX", "mlir": "MLIR", "log": "ptxas log"}
#: Row kinds that differ (everything but ``same``); ``filler`` never appears in rows.
CHANGED = frozenset(("regalloc", "immediate", "opcode", "inserted", "deleted", "moved", "changed"))

_SASS_REG = re.compile(r"\b(U?R|U?P|B)\d+\b")
_PTX_REG = re.compile(r"(%[a-z]{1,3})\d+\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(slots=True)
class CodeLine:
    """One displayed line of one side."""

    text: str
    addr: int | None = None
    """SASS byte address, or the PTX/MLIR/log line number (1-based)."""
    spill: bool = False
    """A spill store/load (STL/LDL tagged SpillRefill, or ``st.local``/``ld.local`` in PTX)."""
    file: str | None = None
    line: int | None = None
    chain: tuple = ()
    """Inlined-at frames ``((file, line), ...)``, innermost first after ``file:line``."""
    live: int | None = None
    """Live general-purpose registers at this instruction (``nvdisasm -lrm count``)."""
    opcode: str = ""


@dataclass(slots=True)
class Row:
    """One aligned row: a line index on each side (None = gap) and how they relate."""

    kind: str
    a: int | None
    b: int | None

    def index(self, side: str) -> int | None:
        return self.a if side == "a" else self.b


@dataclass(slots=True)
class RowHunk:
    """A run of changed rows ``[start, end)``.

    ``cost`` is the aligner's weighted size; ``rank`` its place by cost among the view's hunks
    (1 = largest; 0 for register renames alone, which are not ranked); ``tags`` what its changed
    lines touch (:data:`cutediff_tui.core.listing.TAGS`: spill, mma, budget).
    """

    start: int
    end: int
    kind: str
    summary: str = ""
    cost: float = 0.0
    rank: int = 0
    tags: frozenset = frozenset()

    @property
    def size(self) -> int:
        """Rows in the hunk."""
        return self.end - self.start


@dataclass
class SideLines:
    """The lines of one side, or the sentence saying why there are none."""

    lines: list[CodeLine] = field(default_factory=list)
    note: str | None = None
    labels: dict[str, int] = field(default_factory=dict)
    """Label name -> line index (SASS ``.L_x_12``, PTX ``$L__BB0_3``)."""
    caption: str = ""
    """Short description for the pane title, e.g. ``5,680 instructions``."""


@dataclass
class PaneModel:
    """Everything the two code panes of one view show."""

    view: str
    language: str
    a: SideLines
    b: SideLines
    rows: list[Row]
    hunks: list[RowHunk] = field(default_factory=list)
    match_pct: float | None = None
    has_live: bool = False
    text_width: int = 0
    addr_width: int = 4
    match: InstructionMatch | None = None
    """Matched pairs of A's and B's instructions, with both counts (what the status bar shows)."""
    addr_hex: bool = True
    pending: str | None = None
    """Why the view is not complete yet (a raw listing shown while the aligner runs), else None."""
    _row_of: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _spills: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _hunk_starts: list[int] = field(default_factory=list, repr=False)
    _ranked: list[RowHunk] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        row_a, row_b = [0] * len(self.a.lines), [0] * len(self.b.lines)
        for r, row in enumerate(self.rows):  # one pass, no call per row: this runs on every open
            if row.a is not None:
                row_a[row.a] = r
            if row.b is not None:
                row_b[row.b] = r
        for s, row_of in (("a", row_a), ("b", row_b)):
            self._row_of[s] = row_of
            self._spills[s] = sorted(row_of[i] for i, ln in enumerate(self.side(s).lines) if ln.spill)
        self.hunks.sort(key=lambda h: h.start)
        self._hunk_starts = [h.start for h in self.hunks]
        self._rank_hunks()
        if not self.text_width:
            self.text_width = max((len(ln.text) for s in SIDES for ln in self.side(s).lines), default=0)
        addrs = [ln.addr for s in SIDES for ln in self.side(s).lines if ln.addr is not None]
        if addrs:
            top = max(addrs)
            self.addr_width = max(4, len(f"{top:x}" if self.addr_hex else str(top)))

    # ------------------------------------------------------------------ access

    def side(self, s: str) -> SideLines:
        return self.a if s == "a" else self.b

    def __len__(self) -> int:
        return len(self.rows)

    def line_at(self, row: int, s: str) -> CodeLine | None:
        """The line of side ``s`` on row ``row`` (None for a gap or out of range)."""
        if not 0 <= row < len(self.rows):
            return None
        i = self.rows[row].index(s)
        return None if i is None else self.side(s).lines[i]

    def row_of(self, s: str, index: int) -> int:
        return self._row_of[s][index]

    def texts(self, s: str) -> Sequence[str]:
        """The text of every line of side ``s``, in order (what search reads)."""
        return [ln.text for ln in self.side(s).lines]

    def spill_rows(self, s: str) -> list[int]:
        """Rows holding a spill instruction of side ``s``, in order."""
        return self._spills[s]

    def hunk_at(self, row: int) -> tuple[int, RowHunk] | None:
        """(number, hunk) of the hunk containing ``row``, else None."""
        k = bisect.bisect_right(self._hunk_starts, row) - 1
        if k >= 0 and self.hunks[k].start <= row < self.hunks[k].end:
            return k, self.hunks[k]
        return None

    def _rank_hunks(self) -> None:
        from cutediff_tui.core.listing import line_tags

        ranked = sorted((h for h in self.hunks if h.kind != "regalloc"), key=lambda h: (-h.cost, h.start))
        memo: dict[tuple[str, bool], frozenset[str]] = {}  # a listing repeats few opcodes
        for r, h in enumerate(ranked, 1):
            h.rank = r
            tags: set[str] = set()
            for row in self.rows[h.start : h.end]:
                if row.kind in ("same", "regalloc"):
                    continue
                for s in SIDES:
                    ln = self.line_at_index(s, row.index(s))
                    if ln is not None:
                        key = (_full_opcode(ln), ln.spill)
                        found = memo.get(key)
                        if found is None:
                            found = memo[key] = line_tags(*key)
                        tags |= found
            h.tags = frozenset(tags)
        self._ranked = ranked

    def line_at_index(self, s: str, i: int | None) -> CodeLine | None:
        lines = self.side(s).lines
        return lines[i] if i is not None and 0 <= i < len(lines) else None

    @property
    def ranked_hunks(self) -> list[RowHunk]:
        """The changed hunks (register renames aside), largest first."""
        return self._ranked

    # ------------------------------------------------------------------ navigation

    def next_ranked(self, row: int, step: int = 1) -> RowHunk | None:
        """The hunk one rank smaller (step=1) or larger (step=-1) than the one at ``row``; from
        outside a ranked hunk, the largest (step=1) or the smallest (step=-1). Wraps around."""
        ranked = self._ranked
        if not ranked:
            return None
        hit = self.hunk_at(row)
        rank = hit[1].rank if hit is not None else 0
        if not rank:
            return ranked[0] if step > 0 else ranked[-1]
        return ranked[(rank - 1 + step) % len(ranked)]

    def next_tagged(self, row: int, step: int = 1, tags: frozenset | set | None = None) -> RowHunk | None:
        """The next/previous hunk in listing order whose changed lines touch spill code, an MMA
        or a register budget (or one of ``tags``), wrapping around."""
        want = frozenset(tags) if tags is not None else frozenset(("spill", "mma", "budget"))
        hunks = [h for h in self.hunks if h.tags & want]
        if not hunks:
            return None
        starts = [h.start for h in hunks]
        k = bisect.bisect_right(starts, row) if step > 0 else bisect.bisect_left(starts, row) - 1
        return hunks[k % len(hunks)]

    def first_hunk_showing(self, opcodes: Sequence[str] = (), classes: Sequence[str] = ()) -> RowHunk | None:
        """The first hunk (in listing order) whose changed lines hold one of ``opcodes`` (a full
        opcode, ``STG.E.U16``, or its base/prefix, ``USETMAXREG``, ``st.local``), else whose
        summary names one of ``classes``; None when no hunk shows them."""
        ops = tuple(o for o in opcodes if o)
        for h in self.hunks if ops else ():
            if h.kind == "regalloc":
                continue
            for row in self.rows[h.start : h.end]:
                if row.kind in ("same", "regalloc"):
                    continue
                for s in SIDES:
                    ln = self.line_at_index(s, row.index(s))
                    if ln is not None and _shows(_full_opcode(ln), ops):
                        return h
        names = tuple(c.lower() for c in classes if c)
        for h in self.hunks if names else ():
            text = h.summary.lower()
            if h.kind != "regalloc" and any(re.search(rf"[+\u2212-]\d+ {re.escape(n)}\b", text) for n in names):
                return h
        return None

    def next_hunk(self, row: int, step: int = 1, *, skip_regalloc: bool = True) -> RowHunk | None:
        """The next (step=1) or previous (step=-1) hunk from ``row``, wrapping around."""
        hunks = [h for h in self.hunks if not (skip_regalloc and h.kind == "regalloc")] or self.hunks
        if not hunks:
            return None
        starts = [h.start for h in hunks]
        if step > 0:
            k = bisect.bisect_right(starts, row)
            return hunks[k % len(hunks)]
        k = bisect.bisect_left(starts, row) - 1
        return hunks[k % len(hunks)]

    def next_spill(self, s: str, row: int, step: int = 1) -> int | None:
        """Row of the next/previous spill instruction of side ``s``, wrapping around."""
        rows = self._spills[s]
        if not rows:
            return None
        if step > 0:
            k = bisect.bisect_right(rows, row)
            return rows[k % len(rows)]
        k = bisect.bisect_left(rows, row) - 1
        return rows[k % len(rows)]

    def find_addr(self, s: str, addr: int) -> int | None:
        """Row of the line of side ``s`` at ``addr`` (the nearest line at or before it)."""
        lines = self.side(s).lines
        best = None
        for i, ln in enumerate(lines):
            if ln.addr is None:
                continue
            if ln.addr == addr:
                return self.row_of(s, i)
            if ln.addr < addr:
                best = i
        return None if best is None else self.row_of(s, best)

    def find_label(self, s: str, label: str) -> int | None:
        i = self.side(s).labels.get(label)
        return None if i is None else self.row_of(s, i)

    def find_source(self, s: str, line: int, file: str | None = None, after: int = -1) -> int | None:
        """First row after ``after`` (wrapping) whose source is ``file:line`` on side ``s``."""
        hits = []
        for i, ln in enumerate(self.side(s).lines):
            if ln.line == line and (file is None or (ln.file or "").endswith(file)):
                hits.append(self.row_of(s, i))
        if not hits:
            return None
        hits.sort()
        k = bisect.bisect_right(hits, after)
        return hits[k % len(hits)]

    def search(self, s: str, query: str, after: int = -1, step: int = 1) -> tuple[int | None, str]:
        """Find ``query`` on side ``s``: a regex first, then fuzzy (rapidfuzz).

        Returns (row or None, how it matched: ``"regex"``, ``"fuzzy"`` or a reason).
        """
        texts = self.texts(s)
        if not texts or not query:
            return None, "nothing to search"
        order = _wrapped_order(len(texts), self, s, after, step)
        try:
            rx = re.compile(query, re.IGNORECASE)
        except re.error:
            rx = None
        if rx is not None:
            for i in order:
                if rx.search(texts[i]):
                    return self.row_of(s, i), "regex"
        from rapidfuzz import fuzz, process

        best = process.extractOne(query, texts, scorer=fuzz.partial_ratio, score_cutoff=70)
        if best is None:
            return None, "no match"
        # several lines may score the same: take the first one after the cursor
        score = best[1]
        for i in order:
            if fuzz.partial_ratio(query, texts[i]) >= score:
                return self.row_of(s, i), "fuzzy"
        return self.row_of(s, best[2]), "fuzzy"

    def pressure(self, s: str, buckets: int = 100) -> list[int]:
        """Maximum live GPRs of side ``s`` in ``buckets`` equal slices of the listing."""
        from cutediff_tui.core.packed_sass import pressure_buckets  # (not needed to open a result)

        return pressure_buckets([ln.live for ln in self.side(s).lines if ln.live is not None], buckets)


def _full_opcode(ln: CodeLine) -> str:
    """The opcode with its modifiers (``STG.E.U16``, ``st.global.v4.b32``): the first word of the
    text after a guard (``@!P0``)."""
    words = ln.text.split(None, 2)
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ln.opcode


def _shows(opcode: str, wanted: tuple[str, ...]) -> bool:
    return any(opcode == w or opcode.startswith(w + ".") for w in wanted)


def _wrapped_order(n: int, model: PaneModel, s: str, after_row: int, step: int) -> list[int]:
    """Line indices of side ``s`` starting after the line on ``after_row``, wrapping."""
    row_of = model._row_of[s]
    start = bisect.bisect_right(row_of, after_row) if step > 0 else bisect.bisect_left(row_of, after_row) - 1
    if step > 0:
        return list(range(start, n)) + list(range(min(start, n)))
    start = max(start, -1)
    return list(range(start, -1, -1)) + list(range(n - 1, start, -1))


# ---------------------------------------------------------------------- normalisation


def normalise_registers(text: str, language: str) -> str:
    """Registers shown without their numbers (``R12`` -> ``R•``, ``%rd3`` -> ``%rd•``)."""
    if language == "sass":
        return _SASS_REG.sub(r"\1•", text)
    if language == "ptx":
        return _PTX_REG.sub(r"\1•", text)
    return text


# ---------------------------------------------------------------------- jump parsing


@dataclass(frozen=True)
class Jump:
    """What ``:`` was asked for: an address, a label or a source line."""

    kind: str  # "addr" | "label" | "line"
    addr: int | None = None
    label: str | None = None
    line: int | None = None
    file: str | None = None


_FILE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)$")


def parse_jump(text: str) -> Jump | None:
    """``0x6630``/``6630``/``/*6630*/`` (address), ``.L_x_12`` (label), ``L925``,
    ``+925`` or ``mask.py:680`` (source line). A bare number is an address when it is
    hexadecimal-looking (has a-f or four digits or more), otherwise a source line."""
    t = text.strip().strip(";")
    if not t:
        return None
    if t.startswith("/*") and t.endswith("*/"):
        t = t[2:-2].strip()
    if t.startswith((".L", "$L")):
        return Jump("label", label=t.rstrip(":"))
    m = _FILE_LINE.match(t)
    if m and not m.group("file").lower().startswith("0x"):
        return Jump("line", line=int(m.group("line")), file=m.group("file"))
    low = t.lower()
    if low.startswith(("line ", "l", "+")) and low.lstrip("line +").isdigit():
        return Jump("line", line=int(low.lstrip("line +")))
    if low.startswith("0x"):
        try:
            return Jump("addr", addr=int(low, 16))
        except ValueError:
            return None
    if re.fullmatch(r"[0-9a-f]+", low):
        if re.search(r"[a-f]", low) or len(low) >= 4:
            return Jump("addr", addr=int(low, 16))
        return Jump("line", line=int(low))
    return None


# ---------------------------------------------------------------------- alignment of text


def align_lines(
    a: Sequence[str], b: Sequence[str], key: Callable[[str], str] | None = None
) -> tuple[list[Row], list[RowHunk], float]:
    """Align two texts line by line (LCS on normalised lines, via rapidfuzz).

    Returns (rows, hunks, match percentage). Unequal runs are paired as ``changed`` rows
    where both sides have lines and ``deleted``/``inserted`` for the rest.
    """
    from rapidfuzz.distance import Indel

    key = key or (lambda s: " ".join(s.split()))
    ids: dict[str, int] = {}
    ka = [ids.setdefault(key(x), len(ids)) for x in a]
    kb = [ids.setdefault(key(x), len(ids)) for x in b]
    rows: list[Row] = []
    hunks: list[RowHunk] = []
    matched = 0

    def gap(i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 == i2 and j1 == j2:
            return
        start = len(rows)
        n = min(i2 - i1, j2 - j1)
        for k in range(n):
            rows.append(Row("changed", i1 + k, j1 + k))
        for i in range(i1 + n, i2):
            rows.append(Row("deleted", i, None))
        for j in range(j1 + n, j2):
            rows.append(Row("inserted", None, j))
        kind = "changed" if n else ("deleted" if i2 > i1 else "inserted")
        hunks.append(RowHunk(start, len(rows), kind, f"-{i2 - i1} +{j2 - j1} lines"))

    gi = gj = 0
    for op in Indel.opcodes(ka, kb):
        if op.tag != "equal":
            continue
        gap(gi, op.src_start, gj, op.dest_start)
        for i, j in zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end)):
            rows.append(Row("same" if a[i] == b[j] else "regalloc", i, j))
            matched += 1
        gi, gj = op.src_end, op.dest_end
    gap(gi, len(a), gj, len(b))
    total = len(a) + len(b)
    pct = 100.0 if total == 0 else round(100.0 * 2 * matched / total, 2)
    return rows, hunks, pct


def _one_sided(lines_a: list, lines_b: list) -> list[Row]:
    if lines_a and not lines_b:
        return [Row("same", i, None) for i in range(len(lines_a))]
    if lines_b and not lines_a:
        return [Row("same", None, j) for j in range(len(lines_b))]
    return []


# ---------------------------------------------------------------------- builders


def side_note(comparison: dict, kernel: dict, s: str, what: str = "") -> str | None:
    """Why side ``s`` of ``kernel`` has nothing to show (its build failed, no such kernel), else None."""
    err = comparison.get("sides", {}).get(s, {}).get("error")
    if err:
        return f"Side {s.upper()} failed: {err}"
    if not kernel.get(s):
        return f"Side {s.upper()} has no kernel {kernel.get('name', '')!r}."
    return None


def _sass_side(metrics: dict) -> tuple[Any, SideLines]:
    from cutediff_tui.core.analysis_pipeline import load_listing

    listing = load_listing(metrics)
    func = listing.main
    # ncu's execution counts on spill sites (cutediff bench --profile --into this comparison)
    executed = {x["addr"]: x["executed"] for x in metrics.get("spill_sites") or [] if "executed" in x}
    lines = [
        CodeLine(
            text=f"{i.text}  // executed {executed[i.addr]:,}x (ncu)" if i.addr in executed else i.text,
            addr=i.addr,
            spill=bool(i.is_spill),
            file=i.file,
            line=i.line,
            chain=tuple(i.inline_chain or ()),
            live=i.live[0] if i.live else None,
            opcode=i.base,
        )
        for i in func.instrs
    ]
    by_addr = {ln.addr: k for k, ln in enumerate(lines)}
    labels = {name: by_addr[a] for name, a in func.labels.items() if a in by_addr}
    return func, SideLines(lines, labels=labels, caption=f"{len(lines):,} instr")


def _align_module():
    from cutediff_tui.core.analysis import align as align_mod

    return align_mod


def _rows_from_alignment(al: Any) -> tuple[list[Row], list[RowHunk]]:
    rows = [Row(r.kind, r.a_index, r.b_index) for r in al.rows]
    ordered = al.hunks_in_order() if hasattr(al, "hunks_in_order") else sorted(al.hunks, key=lambda h: h.rows[0])
    hunks = [
        RowHunk(h.rows[0], h.rows[1], h.kind, getattr(h, "summary", "") or "", float(getattr(h, "cost", 0.0)))
        for h in ordered
    ]
    return rows, hunks


def build_sass(comparison: dict, kernel: dict) -> PaneModel:
    sides: dict[str, SideLines] = {}
    funcs: dict[str, Any] = {}
    for s in SIDES:
        note = side_note(comparison, kernel, s, "SASS")
        if note:
            sides[s] = SideLines(note=note)
            continue
        try:
            funcs[s], sides[s] = _sass_side(kernel[s])
        except Exception as exc:
            sides[s] = SideLines(note=f"Side {s.upper()}: the SASS could not be read: {_sentence(exc)}")
    match = None
    hunks: list[RowHunk] = []
    if len(funcs) == 2:
        from cutediff_tui.core.analysis_pipeline import sass_alignment

        al = sass_alignment(funcs["a"], funcs["b"])  # the pair analysis' own, when it just ran
        rows, hunks = _rows_from_alignment(al)
        match = al.match_pct
        pairs = _pairs("SASS", al)
    else:
        rows = _one_sided(sides["a"].lines, sides["b"].lines)
        pairs = None
    has_live = any(ln.live is not None for s in SIDES for ln in sides[s].lines)
    return PaneModel("sass", "sass", sides["a"], sides["b"], rows, hunks, match, has_live, match=pairs)


def _ptx_side(metrics: dict) -> tuple[Any, SideLines]:
    from cutediff_tui.core.analysis.ptx import parse_ptx

    files = metrics.get("files") or {}
    text = read_text(Path(files["dir"]), "kernel.ptx")
    if text is None:
        return None, SideLines(note="There is no kernel.ptx in this side's artifacts.")
    entry = parse_ptx(text).main
    instrs = list(entry.instrs)
    if files.get("lineinfo_dir") and not any(i.source for i in instrs):
        li_text = read_text(Path(files["lineinfo_dir"]), "kernel.ptx")
        if li_text:
            try:
                li = parse_ptx(li_text).main.instrs
            except Exception:
                li = []
            if len(li) == len(instrs) and all(x.opcode == y.opcode for x, y in zip(instrs, li)):
                sources = [y.source for y in li]
            else:
                sources = [None] * len(instrs)
        else:
            sources = [None] * len(instrs)
    else:
        sources = [i.source for i in instrs]
    lines = []
    for i, src in zip(instrs, sources):
        spill = i.base in ("st", "ld") and ".local" in i.opcode
        lines.append(
            CodeLine(
                text=i.text,
                addr=i.line_no,
                spill=spill,
                file=src[0] if src else None,
                line=src[1] if src else None,
                opcode=i.base,
            )
        )
    labels = {name: idx for name, idx in entry.labels.items() if isinstance(idx, int) and idx < len(lines)}
    return entry, SideLines(lines, labels=labels, caption=f"{len(lines):,} instr")


def build_ptx(comparison: dict, kernel: dict) -> PaneModel:
    sides: dict[str, SideLines] = {}
    entries: dict[str, Any] = {}
    for s in SIDES:
        note = side_note(comparison, kernel, s, "PTX")
        if note:
            sides[s] = SideLines(note=note)
            continue
        try:
            entry, sides[s] = _ptx_side(kernel[s])
        except Exception as exc:
            sides[s] = SideLines(note=f"Side {s.upper()}: the PTX could not be read: {_sentence(exc)}")
            continue
        if entry is not None:
            entries[s] = entry
    hunks: list[RowHunk] = []
    match = None
    if len(entries) == 2:
        mod = _align_module()
        fn = getattr(mod, "align_ptx", None) or mod.align
        al = fn(entries["a"], entries["b"])
        rows, hunks = _rows_from_alignment(al)
        match = al.match_pct
        pairs = _pairs("PTX", al)
    else:
        rows = _one_sided(sides["a"].lines, sides["b"].lines)
        pairs = None
    return PaneModel("ptx", "ptx", sides["a"], sides["b"], rows, hunks, match, addr_hex=False, match=pairs)


def _pairs(what: str, al: Any) -> InstructionMatch:
    """The alignment's matched pairs with both sides' instruction counts."""
    a_count = sum(1 for r in al.rows if r.a_index is not None)
    return InstructionMatch(what, al.matched, a_count, al.total - a_count)


def _text_model(
    view: str, language: str, texts: dict[str, list[str] | None], notes: dict[str, str | None], captions: dict[str, str]
) -> PaneModel:
    sides = {}
    for s in SIDES:
        text = texts.get(s)
        if notes.get(s) or text is None:
            sides[s] = SideLines(note=notes.get(s) or "Nothing to show.")
        else:
            lines = [CodeLine(text=t.expandtabs(4), addr=n + 1) for n, t in enumerate(text)]
            sides[s] = SideLines(lines, caption=captions.get(s, f"{len(lines):,} lines"))
    hunks: list[RowHunk] = []
    match = None
    if sides["a"].lines and sides["b"].lines:
        rows, hunks, match = align_lines(
            [x.text for x in sides["a"].lines],
            [x.text for x in sides["b"].lines],
            key=lambda t: " ".join(normalise_registers(t, language).split()),
        )
    else:
        rows = _one_sided(sides["a"].lines, sides["b"].lines)
    return PaneModel(view, language, sides["a"], sides["b"], rows, hunks, match, addr_hex=False)


def build_mlir(comparison: dict, kernel: dict) -> PaneModel:
    texts: dict[str, list[str] | None] = {}
    notes: dict[str, str | None] = {}
    for s in SIDES:
        notes[s] = side_note(comparison, kernel, s, "MLIR")
        if notes[s]:
            continue
        t = read_text(Path(kernel[s]["files"]["dir"]), "kernel.mlir")
        if t is None:
            notes[s] = f"Side {s.upper()} kept no kernel.mlir (the DSL did not dump MLIR for this build)."
        else:
            texts[s] = t.splitlines()
    return _text_model("mlir", "mlir", texts, notes, {})


def log_lines(comparison: dict, kernel: dict, s: str) -> list[str]:
    """The ptxas view of one side: ptxas output, resources, remarks, cross-check, compile log."""
    m = kernel.get(s) or {}
    side = comparison.get("sides", {}).get(s, {})
    out = [f"// side {s.upper()}: DSL {side.get('label') or side.get('dsl')}  ({kernel.get('name')})"]
    ptxas_log = m.get("ptxas_log")
    if ptxas_log:
        out.append("// ptxas -v")
        out.extend(_ANSI.sub("", ptxas_log).splitlines())
    else:
        res = ", ".join(
            f"{m.get(k)} {label}"
            for k, label in (
                ("registers", "registers"),
                ("stack_bytes", "bytes stack frame"),
                ("spill_store_bytes", "bytes spill stores"),
                ("spill_load_bytes", "bytes spill loads"),
                ("shared_bytes", "bytes smem"),
            )
            if m.get(k) is not None
        )
        out.append(f"ptxas info    : Used {res}  (from cuobjdump; no ptxas -v output kept)")
    ptx = m.get("ptx") or {}
    if ptx:
        out.append(
            f"ptx           : PTX ISA {ptx.get('version')} for {ptx.get('target')}, "
            f"{ptx.get('toolchain') or 'toolchain unknown'}, {ptx.get('instructions', '?')} instructions"
        )
    cubin = m.get("cubin_toolchain")
    if isinstance(cubin, dict):
        out.append(
            f"cubin         : {cubin.get('tool', 'ptxas')} {cubin.get('version', '?')} "
            f"({cubin.get('options') or 'options unknown'})"
        )
    elif cubin:
        out.append(f"cubin         : {cubin}")
    for row in ((comparison.get("crosscheck") or {}).get(kernel.get("name", "")) or {}).get("matrix") or []:
        if not isinstance(row, dict) or not str(row.get("side", "")).upper().startswith(s.upper()):
            continue
        if row.get("error"):
            out.append(f"cross-check   : ptxas {row.get('ptxas_version')}: {row['error']}")
        else:
            note = f" (PTX rewritten from {row['rewritten_from']})" if row.get("rewritten_from") else ""
            out.append(
                f"cross-check   : ptxas {row.get('ptxas_version')}: {row.get('registers')} registers, "
                f"{row.get('stack')} bytes stack, {row.get('spill_stores')} bytes spill stores, "
                f"{row.get('spill_loads')} bytes spill loads{note}"
            )
    if side.get("pins"):
        out.append(f"pins          : {', '.join(side['pins'])}")
    li = m.get("lineinfo") or {}
    if li.get("perturbed"):
        out.append(f"line info     : the line-info build differs in resources: {li.get('resources')}")
    remarks = m.get("remarks") or []
    out.append(f"// {len(remarks)} compiler remark(s)")
    for r in remarks:
        where = f"{r.get('file')}:{r.get('line')}" if r.get("file") else "?"
        out.append(f"remark[{r.get('category', '')}] {where}: {r.get('message', '')}")
        if r.get("detail"):
            out.append(f"    {r['detail']}")
    for note in side.get("notes") or []:
        out.append(f"note          : {note}")
    for shim in side.get("shims") or []:
        out.append(f"shim          : {shim}")
    files = m.get("files") or {}
    if files.get("dir"):
        log = Path(files["dir"]).parent.parent / "compile.log"
        try:
            text = log.read_text(errors="replace")
        except OSError:
            text = None
        if text:
            out.append("// compile.log")
            out.extend(_ANSI.sub("", text).splitlines())
    return out


def build_log(comparison: dict, kernel: dict) -> PaneModel:
    texts: dict[str, list[str] | None] = {}
    notes: dict[str, str | None] = {}
    for s in SIDES:
        notes[s] = side_note(comparison, kernel, s, "log")
        if not notes[s]:
            texts[s] = log_lines(comparison, kernel, s)
    return _text_model("log", "text", texts, notes, {s: "resources and remarks" for s in SIDES})


BUILDERS: dict[str, Callable[[dict, dict], PaneModel]] = {
    "sass": build_sass,
    "ptx": build_ptx,
    "mlir": build_mlir,
    "log": build_log,
}


def build_model(comparison: dict, kernel_index: int, view: str) -> PaneModel:
    """Build the model of one view of one kernel (blocking: run it in a worker)."""
    kernel = comparison["kernels"][kernel_index]
    return BUILDERS[view](comparison, kernel)


def _sentence(exc: BaseException) -> str:
    s = getattr(exc, "sentence", None)
    return s() if callable(s) else (str(exc) or type(exc).__name__)
