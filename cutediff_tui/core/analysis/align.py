"""Rename-aware alignment of two SASS functions or two PTX entries.

Each instruction gets three keys:

* raw: the instruction text (no address, tags or ``;``);
* level 1 (the alignment key): registers renamed away (``R12``->``R``, ``UR4``->``UR``,
  ``P0``->``P``, ``UP1``->``UP``, ``B0``->``B``; ``RZ``/``URZ``/``PT``/``UPT`` kept;
  PTX ``%r12``->``%r``, ``%rd3``->``%rd`` ...), labels (``.L_x_12``, ``$L__BB0_7``)
  and branch offsets removed, ``.reuse`` flags dropped;
* level 2: level 1 with numeric immediates replaced by ``IMM``.

The sequences of level-1 keys are interned to integers and aligned with rapidfuzz's
bit-parallel LCS (``Indel.opcodes``), so ``matched`` is exactly the LCS of the two
normalised sequences (after trimming the common prefix and suffix). Inputs with more than
:data:`MAX_CELLS` ``len(A) * len(B)`` cells (about 8k x 8k instructions) are first cut at
patience anchors (keys unique on both sides), or proportionally where there are none, so
memory stays bounded; ``matched`` is then a near-LCS. Each gap between matched runs is refined: an LCS on level-2 keys
pairs instructions that differ only in immediates (``immediate``), then an LCS on base
opcodes pairs the remaining instructions of the same opcode (``opcode``: the instruction
changed - modifiers or operand form); the rest are ``deleted`` / ``inserted``. Finally,
deleted runs whose level-1 sequence reappears as an inserted run elsewhere (at least
:data:`MIN_MOVE` instructions) become ``moved``.

Row kinds: ``same`` (identical text), ``regalloc`` (equal after register renaming),
``immediate``, ``opcode``, ``inserted``, ``deleted``, ``moved``.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rapidfuzz.distance import Indel

from cutediff_tui.core.analysis._util import gc_paused
from cutediff_tui.core.analysis.classes import OpcodeClasses, default_classes

__all__ = [
    "Row",
    "Hunk",
    "Alignment",
    "align_sass",
    "align_ptx",
    "align",
    "normalize_sass",
    "normalize_ptx",
    "MIN_MOVE",
    "KINDS",
]

KINDS = ("same", "regalloc", "immediate", "opcode", "inserted", "deleted", "moved")
#: Minimum length of a deleted run re-inserted elsewhere to count as moved.
MIN_MOVE = 3

# Applied to operands only: "UR12" matches as "R12" and keeps its "U". Used with
# split()+join (no per-match Python callback): the capture group is what remains.
_SASS_REG_RE = re.compile(r"([RPB])\d+\b")
_SASS_LABEL_RE = re.compile(r"\.L_x_\d+")
_REUSE_RE = re.compile(r"\.reuse\b")
_PTX_REG_RE = re.compile(r"(%[a-z]+)\d+\b")
_PTX_LABEL_RE = re.compile(r"\$L__BB\d+_\d+")
_PTX_PARAM_RE = re.compile(r"[\w$]*[A-Za-z$]_param_(?=\d)")
_IMM_RE = re.compile(r"(?<![\w.])-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])")
_HEX_RE = re.compile(r"-?0x[0-9a-fA-F]+")
_INDIRECT_BRANCHES = frozenset(("BRX", "BRXU", "JMX", "JMXU"))

_W_REGALLOC = 0.1
_W_IMMEDIATE = 0.5
_W_MOVED = 0.5


@dataclass(slots=True)
class Row:
    """One row of the side-by-side view.

    ``a_index`` / ``b_index`` index the instruction lists of A and B (None for a gap on
    that side). ``partner`` is, for a ``moved`` row, the row index of its other half.
    """

    a_index: int | None
    b_index: int | None
    kind: str
    partner: int | None = None


@dataclass(slots=True)
class Hunk:
    """A run of rows that differ.

    Attributes:
        a_range, b_range: half-open index ranges into A and B (empty ranges mark the
            insertion point).
        kind: ``regalloc``, ``immediate``, ``inserted``, ``deleted``, ``moved``, or
            ``opcode`` for any other change (including mixed insert/delete runs).
        cost: weighted size (spills high, long latency medium, others low).
        rows: half-open range of row indices.
        counts: row kind -> rows in the hunk.
        summary: e.g. ``"+4 STL, +3 LDL, +12 moves"`` (built on first access).
    """

    a_range: tuple
    b_range: tuple
    kind: str
    cost: float
    rows: tuple
    counts: dict = field(default_factory=dict)
    _summary: str | None = field(default=None, repr=False, compare=False)
    _make: Callable[[Hunk], str] | None = field(default=None, repr=False, compare=False)

    @property
    def summary(self) -> str:
        """Short description of what changed, e.g. ``"+4 STL, +3 LDL, +12 moves"``."""
        if self._summary is None:
            self._summary = self._make(self) if self._make is not None else ""
            self._make = None
        return self._summary


@dataclass(slots=True)
class Alignment:
    """Result of an alignment.

    Attributes:
        rows: every index of A and of B appears exactly once, in order on each side.
        hunks: differing runs, ranked by cost (highest first); see :meth:`hunks_in_order`.
        matched: pairs equal under register renaming (rows ``same`` + ``regalloc``);
            this is the LCS of the level-1 sequences.
        total: ``len(A) + len(B)``.
        match_pct: ``100 * 2 * matched / total`` (100 for identical inputs).
        counts: row kind -> number of rows.
    """

    rows: list
    hunks: list
    matched: int
    total: int
    match_pct: float
    counts: dict = field(default_factory=dict)

    def hunks_in_order(self) -> list:
        """Hunks in listing order (for next/previous navigation)."""
        return sorted(self.hunks, key=lambda h: h.rows[0])


# --------------------------------------------------------------------------- keys


def _level1_sass(instrs: Sequence) -> tuple[list[str], list[str]]:
    raw = [i.text for i in instrs]
    ops = []
    for i in instrs:
        o = i.operands
        if i.base in _INDIRECT_BRANCHES:
            o = _HEX_RE.sub("ADDR", o)
        ops.append(f"{i.pred} {o}" if i.pred else o)
    blob = "\n".join(ops)
    if ".reuse" in blob:
        blob = _REUSE_RE.sub("", blob)
    blob = "".join(_SASS_REG_RE.split(blob))
    blob = _SASS_LABEL_RE.sub(".L_x_", blob)
    k1 = [f"{i.opcode} {b}" for i, b in zip(instrs, blob.split("\n"))]
    return raw, k1


def _level1_ptx(instrs: Sequence, entry_name: str | None) -> tuple[list[str], list[str]]:
    raw = [i.text for i in instrs]
    blob = "\n".join([f"{i.pred} {i.operands}" if i.pred else i.operands for i in instrs])
    if "_param_" in blob:
        if entry_name:
            blob = blob.replace(entry_name + "_param_", "param_")
        if "_param_" in blob:
            blob = _PTX_PARAM_RE.sub("param_", blob)
    blob = "".join(_PTX_REG_RE.split(blob))
    blob = _PTX_LABEL_RE.sub("$L__BB", blob)
    k1 = [f"{i.opcode} {b}" for i, b in zip(instrs, blob.split("\n"))]
    return raw, k1


def _level2(k1: list[str], idx: Sequence[int] | None = None) -> list[str]:
    """Level-2 keys (immediates -> IMM) of ``k1`` (only at ``idx`` when given)."""
    src = k1 if idx is None else [k1[i] for i in idx]
    if not src:
        return []
    return _IMM_RE.sub("IMM", "\n".join(src)).split("\n")


def normalize_sass(instrs: Sequence) -> tuple[list[str], list[str], list[str]]:
    """Return (raw, level-1, level-2) keys for SASS instructions.

    Only the guard and operands are rewritten (the opcode is kept verbatim, so
    ``LOP3``/``IADD3`` never look like registers); regexes run once over the joined
    operand text rather than once per instruction.
    """
    raw, k1 = _level1_sass(instrs)
    return raw, k1, _level2(k1)


def normalize_ptx(instrs: Sequence, entry_name: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """Return (raw, level-1, level-2) keys for PTX instructions.

    Parameter symbols (``<entry>_param_3``) become ``param_3`` so entries with different
    names still align; pass ``entry_name`` for the fast path.
    """
    raw, k1 = _level1_ptx(instrs, entry_name)
    return raw, k1, _level2(k1)


def _intern(a: list[str], b: list[str]) -> tuple[list[int], list[int]]:
    d: dict[str, int] = {}
    sd = d.setdefault
    ia = [sd(k, len(d)) for k in a]
    ib = [sd(k, len(d)) for k in b]
    return ia, ib


# --------------------------------------------------------------------------- core

#: Above this many cells (len(a) * len(b)) a gap is split before the exact LCS, so
#: memory stays bounded (rapidfuzz keeps an n*m/64-word bit matrix for opcodes).
MAX_CELLS = 64_000_000


def _unique_anchors(a: list, b: list, i0: int, i1: int, j0: int, j1: int) -> list[tuple[int, int]]:
    """Patience anchors: keys unique in both ranges, longest increasing run of positions."""
    ca: dict = {}
    for i in range(i0, i1):
        k = a[i]
        ca[k] = -1 if k in ca else i
    cb: dict = {}
    for j in range(j0, j1):
        k = b[j]
        cb[k] = -1 if k in cb else j
    pairs = [(ia, cb[k]) for k, ia in ca.items() if ia >= 0 and cb.get(k, -1) >= 0]
    if not pairs:
        return []
    pairs.sort()
    # longest increasing subsequence on the B positions (patience sorting)
    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(pairs)
    for n, (_, jb) in enumerate(pairs):
        k = bisect.bisect_left(tails, jb)
        if k == len(tails):
            tails.append(jb)
            tails_idx.append(n)
        else:
            tails[k] = jb
            tails_idx[k] = n
        prev[n] = tails_idx[k - 1] if k > 0 else -1
    out = []
    n = tails_idx[-1] if tails_idx else -1
    while n >= 0:
        out.append(pairs[n])
        n = prev[n]
    out.reverse()
    return out


def _match_blocks(a: list, b: list, i0: int, i1: int, j0: int, j1: int, out: list) -> None:
    """Append matched runs ``(i, j, length)`` of an LCS of a[i0:i1] and b[j0:j1], in order.

    Exact (rapidfuzz bit-parallel LCS) when the range has at most :data:`MAX_CELLS`
    cells; larger ranges are first split at patience anchors (keys unique on both
    sides), and, without anchors, proportionally.
    """
    # common prefix / suffix
    p = 0
    while i0 + p < i1 and j0 + p < j1 and a[i0 + p] == b[j0 + p]:
        p += 1
    if p:
        out.append((i0, j0, p))
        i0 += p
        j0 += p
    q = 0
    while i1 - q > i0 and j1 - q > j0 and a[i1 - q - 1] == b[j1 - q - 1]:
        q += 1
    tail = (i1 - q, j1 - q, q) if q else None
    i1 -= q
    j1 -= q
    n, m = i1 - i0, j1 - j0
    if n and m:
        if n * m <= MAX_CELLS:
            for op in Indel.opcodes(a[i0:i1], b[j0:j1]):
                if op.tag == "equal":
                    out.append((i0 + op.src_start, j0 + op.dest_start, op.src_end - op.src_start))
        else:
            anchors = _unique_anchors(a, b, i0, i1, j0, j1)
            if anchors:
                pi, pj = i0, j0
                for ia, jb in anchors:
                    _match_blocks(a, b, pi, ia, pj, jb, out)
                    out.append((ia, jb, 1))
                    pi, pj = ia + 1, jb + 1
                _match_blocks(a, b, pi, i1, pj, j1, out)
            else:
                mid = i0 + n // 2
                jm = j0 + (m * (mid - i0)) // n
                _match_blocks(a, b, i0, mid, j0, jm, out)
                _match_blocks(a, b, mid, i1, jm, j1, out)
    if tail:
        out.append(tail)


def _lcs_pairs(a: list, b: list) -> list[tuple[int, int]]:
    """Matched index pairs of an LCS between two sequences."""
    if not a or not b:
        return []
    blocks: list = []
    _match_blocks(a, b, 0, len(a), 0, len(b), blocks)
    out: list[tuple[int, int]] = []
    for i, j, k in blocks:
        out.extend(zip(range(i, i + k), range(j, j + k)))
    return out


def _refine(
    rows: list, i1: int, i2: int, j1: int, j2: int, a2: list[int], b2: list[int], abase: list, bbase: list
) -> None:
    """Fill rows for a gap A[i1:i2] vs B[j1:j2] (nothing matched at level 1)."""
    if i1 == i2:
        rows.extend(Row(None, j, "inserted") for j in range(j1, j2))
        return
    if j1 == j2:
        rows.extend(Row(i, None, "deleted") for i in range(i1, i2))
        return
    pairs = _lcs_pairs(a2[i1:i2], b2[j1:j2])
    kind_of: dict[tuple[int, int], str] = {(i1 + x, j1 + y): "immediate" for x, y in pairs}
    # second pass: same base opcode inside the sub-gaps left by the immediate pass
    bounds = [(i1 - 1, j1 - 1)] + [(i1 + x, j1 + y) for x, y in pairs] + [(i2, j2)]
    for (pa, pb), (na, nb) in itertools.pairwise(bounds):
        sa, ea, sb, eb = pa + 1, na, pb + 1, nb
        if sa < ea and sb < eb:
            for x, y in _lcs_pairs(abase[sa:ea], bbase[sb:eb]):
                kind_of[(sa + x, sb + y)] = "opcode"
    i, j = i1, j1
    for pi, pj in sorted(kind_of):
        while i < pi:
            rows.append(Row(i, None, "deleted"))
            i += 1
        while j < pj:
            rows.append(Row(None, j, "inserted"))
            j += 1
        rows.append(Row(pi, pj, kind_of[(pi, pj)]))
        i, j = pi + 1, pj + 1
    while i < i2:
        rows.append(Row(i, None, "deleted"))
        i += 1
    while j < j2:
        rows.append(Row(None, j, "inserted"))
        j += 1


def _runs(rows: list, kind: str) -> list[tuple[int, int]]:
    out = []
    n = len(rows)
    r = 0
    while r < n:
        if rows[r].kind == kind:
            s = r
            while r < n and rows[r].kind == kind:
                r += 1
            out.append((s, r))
        else:
            r += 1
    return out


def _mark_moves(rows: list, a1: list[int], b1: list[int]) -> None:
    dels = [r for r in _runs(rows, "deleted") if r[1] - r[0] >= MIN_MOVE]
    inss = [r for r in _runs(rows, "inserted") if r[1] - r[0] >= MIN_MOVE]
    if not dels or not inss:
        return
    sep = "\U0010ffff"

    def enc(ids) -> str:
        return "".join([chr(x % 0x10FFFF) for x in ids])

    ins_txt = [enc([b1[rows[k].b_index] for k in range(s, e)]) for s, e in inss]
    del_txt = [enc([a1[rows[k].a_index] for k in range(s, e)]) for s, e in dels]

    def pair(ds: int, first_ins_row: int, n: int) -> None:
        for k in range(n):
            da, ib = ds + k, first_ins_row + k
            rows[da].kind = rows[ib].kind = "moved"
            rows[da].partner = ib
            rows[ib].partner = da

    # 1) whole runs that reappear whole
    by_text: dict[str, list[int]] = {}
    for n, t in enumerate(ins_txt):
        by_text.setdefault(t, []).append(n)
    used_ins: set[int] = set()
    pending = []
    for n, t in enumerate(del_txt):
        cands = by_text.get(t)
        if cands:
            k = cands.pop(0)
            used_ins.add(k)
            pair(dels[n][0], inss[k][0], len(t))
        else:
            pending.append(n)
    # 2) a deleted run found inside a longer inserted run (bounded work)
    free = [k for k in range(len(inss)) if k not in used_ins]
    if not pending or not free:
        return
    blob = sep.join(ins_txt[k] for k in free)
    if len(blob) * len(pending) > 20_000_000:
        return
    starts = []
    off = 0
    for k in free:
        starts.append((off, inss[k][0]))
        off += len(ins_txt[k]) + 1
    offs = [o for o, _ in starts]
    for n in sorted(pending, key=lambda x: -len(del_txt[x])):
        pat = del_txt[n]
        pos = blob.find(pat)
        if pos < 0:
            continue
        w = bisect.bisect_right(offs, pos) - 1
        run_off, run_row = starts[w]
        pair(dels[n][0], run_row + (pos - run_off), len(pat))
        blob = blob[:pos] + sep * len(pat) + blob[pos + len(pat) :]


def _hunk_kind(counts: dict) -> str:
    ks = set(counts)
    if len(ks) == 1:
        return next(iter(ks))
    if ks <= {"immediate", "regalloc"}:
        return "immediate"
    if ks <= {"moved", "regalloc", "immediate"}:
        return "moved"
    return "opcode"


def _fmt_count(n: int) -> str:
    return f"+{n}" if n > 0 else f"\u2212{-n}"


def _summary(
    rows: list, kinds: dict, a_base: list, b_base: list, a_cls: list, b_cls: list, table: OpcodeClasses
) -> str:
    if len(kinds) == 1 and "regalloc" in kinds:
        n = kinds["regalloc"]
        return f"{n} instruction{'s' if n != 1 else ''}, registers renamed"
    per_op: dict[str, int] = {}
    op_cls: dict[str, str] = {}
    for r in rows:
        if r.kind in ("same", "regalloc", "immediate"):
            continue
        if r.a_index is not None:
            op = a_base[r.a_index]
            per_op[op] = per_op.get(op, 0) - 1
            op_cls[op] = a_cls[r.a_index]
        if r.b_index is not None:
            op = b_base[r.b_index]
            per_op[op] = per_op.get(op, 0) + 1
            op_cls[op] = b_cls[r.b_index]
    items: list[tuple[float, int, str]] = []
    low: dict[str, int] = {}
    for op, d in per_op.items():
        if d == 0:
            continue
        w = table.weight(op_cls[op])
        if w > 1:
            items.append((w, abs(d), f"{_fmt_count(d)} {op}"))
        else:
            low[op_cls[op]] = low.get(op_cls[op], 0) + d
    for cls, d in low.items():
        if d:
            items.append((1, abs(d), f"{_fmt_count(d)} {cls.replace('_', ' ')}"))
    items.sort(key=lambda t: (-t[0], -t[1], t[2]))
    parts = [t[2] for t in items[:5]]
    if kinds.get("opcode"):
        parts.append(f"{kinds['opcode']} changed")
    if kinds.get("immediate"):
        parts.append(f"{kinds['immediate']} immediate{'s' if kinds['immediate'] != 1 else ''}")
    if kinds.get("moved"):
        parts.append(f"{kinds['moved']} moved")
    if not parts:
        n = sum(kinds.values())
        parts.append(f"{n} instruction{'s' if n != 1 else ''} reordered")
    return ", ".join(parts)


def _align(a_raw, b_raw, a_k1, b_k1, a_pair, b_pair, a_base, b_base, a_cls, b_cls, table: OpcodeClasses) -> Alignment:
    a1, b1 = _intern(a_k1, b_k1)
    ab, bb = _intern(a_pair, b_pair)
    na, nb = len(a1), len(b1)
    blocks: list = []
    _match_blocks(a1, b1, 0, na, 0, nb, blocks)
    # gaps between matched runs; level-2 keys are only needed inside them
    gaps: list[tuple[int, int, int, int]] = []
    gi = gj = 0
    for bi0, bj0, blen in blocks:
        if bi0 > gi or bj0 > gj:
            gaps.append((gi, bi0, gj, bj0))
        gi, gj = bi0 + blen, bj0 + blen
    if gi < na or gj < nb:
        gaps.append((gi, na, gj, nb))
    a_idx = [i for g in gaps if g[2] < g[3] for i in range(g[0], g[1])]
    b_idx = [j for g in gaps if g[0] < g[1] for j in range(g[2], g[3])]
    a2 = [0] * na
    b2 = [0] * nb
    d2: dict[str, int] = {}
    sd = d2.setdefault
    for i, k in zip(a_idx, _level2(a_k1, a_idx)):
        a2[i] = sd(k, len(d2) + 1)
    for j, k in zip(b_idx, _level2(b_k1, b_idx)):
        b2[j] = sd(k, len(d2) + 1)

    rows: list[Row] = []
    g = 0
    for bi0, bj0, blen in blocks:
        while g < len(gaps) and gaps[g][1] <= bi0 and gaps[g][3] <= bj0:
            _refine(rows, *gaps[g], a2, b2, ab, bb)
            g += 1
        ra = range(bi0, bi0 + blen)
        rb = range(bj0, bj0 + blen)
        rows.extend(map(Row, ra, rb, ["same" if a_raw[i] == b_raw[j] else "regalloc" for i, j in zip(ra, rb)]))
    while g < len(gaps):
        _refine(rows, *gaps[g], a2, b2, ab, bb)
        g += 1
    _mark_moves(rows, a1, b1)

    cw = {c: table.weight(c) for c in set(a_cls) | set(b_cls)}
    wa = [cw[c] for c in a_cls]
    wb = [cw[c] for c in b_cls]
    factor = {"regalloc": _W_REGALLOC, "immediate": _W_IMMEDIATE, "moved": _W_MOVED}

    def maker(seg_start: int, seg_end: int, kinds: dict):
        def make(_h: Hunk) -> str:
            return _summary(rows[seg_start:seg_end], kinds, a_base, b_base, a_cls, b_cls, table)

        return make

    hunks: list[Hunk] = []
    n = len(rows)
    r = 0
    ai = bi = 0  # next A / B index (insertion points for empty ranges)
    counts: dict[str, int] = {}
    while r < n:
        row = rows[r]
        k = row.kind
        if k == "same":
            counts["same"] = counts.get("same", 0) + 1
            ai, bi = row.a_index + 1, row.b_index + 1  # type: ignore[operator]  # "same" rows have both
            r += 1
            continue
        is_ra = k == "regalloc"
        s = r
        kinds: dict[str, int] = {}
        cost = 0.0
        a_lo = b_lo = None
        while r < n:
            x = rows[r]
            k = x.kind
            if k == "same" or (k == "regalloc") != is_ra:
                break
            kinds[k] = kinds.get(k, 0) + 1
            w = 0.0
            if x.a_index is not None:
                if a_lo is None:
                    a_lo = x.a_index
                ai = x.a_index + 1
                w = wa[x.a_index]
            if x.b_index is not None:
                if b_lo is None:
                    b_lo = x.b_index
                bi = x.b_index + 1
                if wb[x.b_index] > w:
                    w = wb[x.b_index]
            cost += w * factor.get(k, 1.0)
            r += 1
        for kk, v in kinds.items():
            counts[kk] = counts.get(kk, 0) + v
        a_rng = (a_lo, ai) if a_lo is not None else (ai, ai)
        b_rng = (b_lo, bi) if b_lo is not None else (bi, bi)
        hunks.append(Hunk(a_rng, b_rng, _hunk_kind(kinds), round(cost, 2), (s, r), kinds, None, maker(s, r, kinds)))
    hunks.sort(key=lambda h: (-h.cost, h.rows[0]))
    matched = counts.get("same", 0) + counts.get("regalloc", 0)
    total = len(a_raw) + len(b_raw)
    pct = 100.0 if total == 0 else round(100.0 * 2 * matched / total, 2)
    return Alignment(rows, hunks, matched, total, pct, counts)


def align_sass(a, b, table: OpcodeClasses | None = None) -> Alignment:
    """Align two SASS functions (or instruction lists)."""
    t = table or default_classes()
    ai = a.instrs if hasattr(a, "instrs") else list(a)
    bi = b.instrs if hasattr(b, "instrs") else list(b)
    with gc_paused():
        ar, a1 = _level1_sass(ai)
        br, b1 = _level1_sass(bi)
        sc = t.sass_class
        abase = [i.base for i in ai]
        bbase = [i.base for i in bi]
        return _align(
            ar, br, a1, b1, abase, bbase, abase, bbase, [sc(i.opcode) for i in ai], [sc(i.opcode) for i in bi], t
        )


def align_ptx(a, b, table: OpcodeClasses | None = None) -> Alignment:
    """Align two PTX entries (or instruction lists)."""
    t = table or default_classes()
    ai = a.instrs if hasattr(a, "instrs") else list(a)
    bi = b.instrs if hasattr(b, "instrs") else list(b)
    with gc_paused():
        ar, a1 = _level1_ptx(ai, getattr(a, "name", None))
        br, b1 = _level1_ptx(bi, getattr(b, "name", None))
        pc = t.ptx_class
        return _align(
            ar,
            br,
            a1,
            b1,
            [i.base for i in ai],
            [i.base for i in bi],
            [i.opcode for i in ai],
            [i.opcode for i in bi],
            [pc(i.opcode) for i in ai],
            [pc(i.opcode) for i in bi],
            t,
        )


def align(a, b, table: OpcodeClasses | None = None) -> Alignment:
    """Align two SASS functions or two PTX entries (picked from the instruction type)."""
    ai = a.instrs if hasattr(a, "instrs") else list(a)
    first = ai[0] if ai else None
    if first is not None and hasattr(first, "addr"):
        return align_sass(a, b, table)
    return align_ptx(a, b, table)
