"""Parse ``nvdisasm`` SASS listings.

Understands the output of ``nvdisasm -c``, ``-c -g`` / ``-c -gi`` (``//## File "...", line N``
comments, with ``inlined at`` chains) and ``-c -lrm count`` (a trailing
``// | GPR | PRED | UGPR | UPRED |`` column of live-register counts per instruction),
as well as ``cuobjdump -sass`` style listings (``Function : name``, encoding comments).
nvdisasm 13.4+ tags spill code with ``(*"SpillRefill"*)``; any ``(*"..."*)`` tag is kept.

The parser is a single pass over the lines with string methods only on the hot path;
the FA4 sample (about 6k instructions) parses in a few tens of milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from cutediff_tui.core.analysis._util import gc_paused
from cutediff_tui.core.errors import CutediffError

__all__ = [
    "SassInstr",
    "SassFunction",
    "SassListing",
    "MergeReport",
    "parse_sass",
    "merge_sass",
    "SPILL_TAG",
]

SPILL_TAG = "SpillRefill"
_LOCAL_OPS = frozenset(("STL", "LDL"))

_TAG_RE = re.compile(r'\(\*"(.*?)"\*\)')
_ENC_RE = re.compile(r"/\*\s*0x[0-9a-fA-F]+\s*\*/")
_FILE_RE = re.compile(r'File\s+"([^"]*)",\s*line\s+(\d+)')
_INLINED_RE = re.compile(r'inlined at\s+"([^"]*)",\s*line\s+(\d+)')
_PTX_DEBUG_FILE = ".nv_debug_ptx_txt"


@dataclass(slots=True)
class SassInstr:
    """One SASS instruction.

    Attributes:
        index: position in its function's ``instrs`` list.
        addr: byte offset from the start of the function's section (``/*0a10*/``).
        pred: guard predicate as written (``@P0``, ``@!UP1``) or ``""``.
        opcode: full opcode with modifiers (``LDL.LU.64``).
        base: opcode before the first dot (``LDL``).
        modifiers: the dotted modifiers (``("LU", "64")``).
        operands: operand text, without tags and the closing ``;``.
        text: guard + opcode + operands as printed (no address, tags or ``;``).
        tags: ``(*"..."*)`` annotations (``("SpillRefill",)``).
        is_spill: tagged SpillRefill; or, when the listing has no SpillRefill tags at all
            (nvdisasm < 13.4), any STL/LDL.
        file: innermost source file (``-g``), else None.
        line: innermost source line, else None.
        inline_chain: call sites the innermost location was inlined into, innermost
            caller first, as ``(file, line)`` pairs; ``()`` when not inlined.
        live: live registers ``(GPR, PRED, UGPR, UPRED)`` from ``-lrm count``, else None.
        function: name of the enclosing function.
    """

    index: int
    addr: int
    pred: str
    opcode: str
    base: str
    modifiers: tuple
    operands: str
    text: str
    tags: tuple
    is_spill: bool
    file: str | None
    line: int | None
    inline_chain: tuple
    live: tuple | None
    function: str


@dataclass(slots=True)
class SassFunction:
    """A function (kernel entry or device function) of a listing.

    Attributes:
        name: symbol name.
        instrs: instructions in address order.
        labels: label name (``.L_x_12``) -> address of the instruction it precedes
            (the end address for a label after the last instruction).
        is_entry: marked ``STO_CUDA_ENTRY`` (a ``__global__`` kernel).
    """

    name: str
    instrs: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)
    is_entry: bool = False

    def __len__(self) -> int:
        return len(self.instrs)

    def __iter__(self) -> Iterator[SassInstr]:
        return iter(self.instrs)

    def at(self, addr: int) -> SassInstr | None:
        """Return the instruction at a byte address, or None."""
        lo, hi = 0, len(self.instrs)
        while lo < hi:
            mid = (lo + hi) // 2
            a = self.instrs[mid].addr
            if a < addr:
                lo = mid + 1
            elif a > addr:
                hi = mid
            else:
                return self.instrs[mid]
        return None


@dataclass(slots=True)
class MergeReport:
    """How :func:`merge_sass` attached line info and live counts.

    ``lineinfo`` / ``live`` are ``"exact"`` (same opcode sequence), ``"index"`` (same
    instruction count but different opcodes: mapped by position, approximate),
    ``"unmapped"`` (counts differ: nothing copied) or ``"absent"`` (not given).
    """

    lineinfo: str = "absent"
    live: str = "absent"
    notes: list = field(default_factory=list)

    @property
    def mapped(self) -> bool:
        """True when every given source was attached (exactly or by index)."""
        return "unmapped" not in (self.lineinfo, self.live)


@dataclass(slots=True)
class SassListing:
    """A parsed nvdisasm listing.

    Attributes:
        functions: functions in listing order.
        arch: ``.target`` (``sm_103a``) or None.
        has_spill_tags: the listing carries ``(*"SpillRefill"*)`` tags (nvdisasm 13.4+).
        has_line_info: some instruction has a source location.
        has_live: instructions carry ``-lrm count`` live-register columns.
        complete: False when the text looks cut short (last instruction without ``;``).
        merge: report of :func:`merge_sass`, when used.
    """

    functions: list
    arch: str | None = None
    has_spill_tags: bool = False
    has_line_info: bool = False
    has_live: bool = False
    complete: bool = True
    merge: MergeReport | None = None

    @property
    def main(self) -> SassFunction:
        """The kernel: the largest entry function (the largest function if none is marked)."""
        entries = [f for f in self.functions if f.is_entry] or self.functions
        return max(entries, key=lambda f: len(f.instrs))

    def function(self, name: str | None = None) -> SassFunction:
        """Return a function by name (the :attr:`main` one when name is None).

        Raises:
            KeyError: no function has that name.
        """
        if name is None:
            return self.main
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def instrs(self) -> Iterator[SassInstr]:
        """All instructions of all functions in listing order."""
        for f in self.functions:
            yield from f.instrs

    def __len__(self) -> int:
        return sum(len(f.instrs) for f in self.functions)


def _parse_loc_block(block: list[str]) -> tuple[str | None, int | None, tuple]:
    """Turn consecutive ``//## File`` lines into (file, line, inline chain)."""
    frames: list[tuple[str, int]] = []
    tail: list[tuple[str, int]] = []
    for ln in block:
        m = _FILE_RE.search(ln)
        if not m or m.group(1) == _PTX_DEBUG_FILE:
            continue
        fr = (m.group(1), int(m.group(2)))
        if not frames or frames[-1] != fr:
            frames.append(fr)
        tail = [(a, int(b)) for a, b in _INLINED_RE.findall(ln)]
    for fr in tail:
        if frames[-1] != fr:
            frames.append(fr)
    if not frames:
        return None, None, ()
    return frames[0][0], frames[0][1], tuple(frames[1:])


def _strip_comment(s: str) -> str:
    k = s.find("//")
    return s[:k].rstrip() if k >= 0 else s


def _parse_sass_impl(text: str) -> SassListing:
    if not text or not text.strip():
        raise CutediffError(
            "The SASS listing is empty.",
            hint="Check that nvdisasm ran on a cubin that contains code.",
        )
    functions: list[SassFunction] = []
    func_names: set[str] = set()
    entry_names: set[str] = set()
    arch: str | None = None
    cur: SassFunction | None = None
    instrs: list = []
    labels: dict = {}
    pending: list[str] = []
    last_addr = -1
    step = 16
    cur_file: str | None = None
    cur_line: int | None = None
    cur_chain: tuple = ()
    loc_block: list[str] = []
    in_loc = False
    has_tags = False
    has_live = False
    has_loc = False
    last_had_semi = True
    candidates: list = []
    append = instrs.append
    tag_findall = _TAG_RE.findall
    tag_sub = _TAG_RE.sub

    def start(name: str) -> None:
        nonlocal cur, instrs, labels, append, last_addr, cur_file, cur_line, cur_chain
        flush_end()
        cur = SassFunction(name)
        functions.append(cur)
        instrs = cur.instrs
        labels = cur.labels
        append = instrs.append
        last_addr = -1
        cur_file, cur_line, cur_chain = None, None, ()

    def flush_end() -> None:
        if pending and cur is not None:
            end = last_addr + step if last_addr >= 0 else 0
            for lab in pending:
                labels.setdefault(lab, end)
        pending.clear()

    for raw in text.split("\n"):
        s = raw.strip()
        if not s:
            continue
        c = s[0]
        if c == "/":
            if s.startswith("/*"):
                end = s.find("*/", 2)
                if end < 0:
                    continue
                addr_s = s[2:end]
                if not addr_s or addr_s[0] in " \t" or addr_s[:2] == "0x":
                    continue  # an encoding comment line (/* 0x... */)
                try:
                    addr = int(addr_s, 16)
                except ValueError:
                    continue
                body = s[end + 2 :]
                live = None
                k = body.find("// |")
                if k >= 0:
                    cols = body[k + 4 :].split("|")
                    body = body[:k]
                    g = cols[0].strip() if len(cols) > 0 else ""
                    p = cols[1].strip() if len(cols) > 1 else ""
                    u = cols[2].strip() if len(cols) > 2 else ""
                    up = cols[3].strip() if len(cols) > 3 else ""
                    live = (
                        int(g) if g.isdigit() else 0,
                        int(p) if p.isdigit() else 0,
                        int(u) if u.isdigit() else 0,
                        int(up) if up.isdigit() else 0,
                    )
                    has_live = True
                if "(*" in body:
                    tags = tuple(tag_findall(body))
                    body = tag_sub("", body)
                    if SPILL_TAG in tags:
                        has_tags = True
                else:
                    tags = ()
                if "/*" in body:
                    body = _ENC_RE.sub("", body)
                body = body.strip()
                if body.startswith("{"):
                    body = body[1:].lstrip()
                if body.endswith("}"):
                    body = body[:-1].rstrip()
                semi = body.rfind(";")
                if semi >= 0:
                    body = body[:semi].rstrip()
                    last_had_semi = True
                else:
                    last_had_semi = False
                if not body:
                    continue
                if body[0] == "@":
                    sp = body.find(" ")
                    if sp < 0:
                        continue
                    pred = body[:sp]
                    rest = body[sp + 1 :].lstrip()
                else:
                    pred = ""
                    rest = body
                sp = rest.find(" ")
                if sp < 0:
                    opcode = rest
                    operands = ""
                else:
                    opcode = rest[:sp]
                    operands = rest[sp + 1 :].strip()
                dot = opcode.find(".")
                if dot < 0:
                    base = opcode
                    mods: tuple[str, ...] = ()
                else:
                    base = opcode[:dot]
                    mods = tuple(opcode[dot + 1 :].split("."))
                if cur is None:
                    start("<anonymous>")
                if last_addr >= 0 and addr > last_addr:
                    step = addr - last_addr
                if pending:
                    for lab in pending:
                        labels.setdefault(lab, addr)
                    pending.clear()
                last_addr = addr
                in_loc = False
                ins = SassInstr(
                    len(instrs),
                    addr,
                    pred,
                    opcode,
                    base,
                    mods,
                    operands,
                    body,
                    tags,
                    False,
                    cur_file,
                    cur_line,
                    cur_chain,
                    live,
                    cur.name,  # type: ignore[union-attr]  # start() above set it
                )
                append(ins)
                if tags or base in _LOCAL_OPS:
                    candidates.append(ins)
            elif s.startswith("//##"):
                if not in_loc:
                    loc_block = []
                    in_loc = True
                loc_block.append(s)
                cur_file, cur_line, cur_chain = _parse_loc_block(loc_block)
                if cur_file is not None:
                    has_loc = True
            continue
        if c == "." and not s.startswith(".L"):
            d = _strip_comment(s)
            if d.startswith(".type") and d.endswith("@function"):
                nm = d[5:].strip()
                comma = nm.rfind(",")
                if comma > 0:
                    func_names.add(nm[:comma].strip())
                continue
            if d.startswith(".other") and "STO_CUDA_ENTRY" in d:
                nm = d[6:].strip()
                comma = nm.find(",")
                if comma > 0:
                    entry_names.add(nm[:comma].strip())
                continue
            if d.startswith(".target"):
                parts = d.split()
                if len(parts) > 1:
                    arch = parts[1]
                continue
            if not d.startswith(".text.") or not d.endswith(":"):
                continue
        if s.startswith("Function :") or s.startswith("Function:"):
            start(s.split(":", 1)[1].strip())
            continue
        colon = s.find(":")
        if colon <= 0:
            continue
        if colon + 1 < len(s) and s[colon + 1] not in " \t":
            continue
        name = s[:colon]
        if " " in name or "\t" in name:
            continue
        in_loc = False
        if name.startswith(".text."):
            fname = name[6:]
            if cur is None or cur.name != fname:
                start(fname)
        elif name in func_names:
            if cur is None or cur.name != name:
                start(name)
        else:
            if cur is None:
                start("<anonymous>")
            pending.append(name)
    flush_end()

    functions = [f for f in functions if f.instrs]
    if not functions:
        raise CutediffError(
            "The text is not an nvdisasm SASS listing: no instruction lines (/*addr*/ OPCODE ...;) were found.",
            hint="Pass the output of `nvdisasm -c kernel.cubin`.",
        )
    for f in functions:
        f.is_entry = f.name in entry_names
    for ins in candidates:
        if has_tags:
            ins.is_spill = SPILL_TAG in ins.tags
        else:
            ins.is_spill = ins.base in _LOCAL_OPS
    return SassListing(functions, arch, has_tags, has_loc, has_live, last_had_semi)


def parse_sass(text: str) -> SassListing:
    """Parse nvdisasm output (``-c``, ``-c -g``/``-gi``, ``-c -lrm count``) into a :class:`SassListing`.

    Raises:
        CutediffError: empty text, or text with no SASS instruction in it.
    """
    with gc_paused():
        return _parse_sass_impl(text)


def _pair_functions(a: SassListing, b: SassListing) -> list[tuple[SassFunction, SassFunction]]:
    by_name = {f.name: f for f in b.functions}
    pairs = [(f, by_name[f.name]) for f in a.functions if f.name in by_name]
    if not pairs and len(a.functions) == len(b.functions):
        pairs = list(zip(a.functions, b.functions))
    return pairs


def _attach(plain: SassListing, other: SassListing, what: str, report: MergeReport) -> str:
    pairs = _pair_functions(plain, other)
    if not pairs:
        report.notes.append(f"{what}: no function of the listing matches by name or count")
        return "unmapped"
    status = "exact"
    for fa, fb in pairs:
        n = min(len(fa.instrs), len(fb.instrs))
        longer = fa.instrs if len(fa.instrs) > n else fb.instrs
        # nvdisasm -lrm drops the NOP padding after the last function: ignore such tails.
        if any(i.base != "NOP" for i in longer[n:]):
            report.notes.append(
                f"{what}: {fa.name} has {len(fa.instrs)} instructions, the other build {len(fb.instrs)}"
            )
            return "unmapped"
        if any(x.opcode != y.opcode for x, y in zip(fa.instrs, fb.instrs)):
            status = "index"
            report.notes.append(f"{what}: {fa.name} differs in opcodes; mapped by position")
    for fa, fb in pairs:
        if what == "lineinfo":
            for x, y in zip(fa.instrs, fb.instrs):
                x.file, x.line, x.inline_chain = y.file, y.line, y.inline_chain
        else:
            for x, y in zip(fa.instrs, fb.instrs):
                x.live = y.live
    return status


def merge_sass(plain: SassListing, lineinfo: SassListing | None = None, live: SassListing | None = None) -> SassListing:
    """Attach source lines (from a ``-g`` listing) and live counts (from ``-lrm count``).

    The instructions of ``plain`` are updated in place and ``plain`` is returned with
    ``plain.merge`` describing what was mapped. Functions are paired by name. When the
    opcode sequences agree the mapping is exact; when only the counts agree it is by
    index (``"index"``); when counts differ nothing is copied (``"unmapped"``, and
    ``plain.merge.mapped`` is False).
    """
    report = MergeReport()
    if lineinfo is not None:
        report.lineinfo = _attach(plain, lineinfo, "lineinfo", report)
        if report.lineinfo != "unmapped":
            plain.has_line_info = lineinfo.has_line_info
    if live is not None:
        report.live = _attach(plain, live, "live", report)
        if report.live != "unmapped":
            plain.has_live = live.has_live
    plain.merge = report
    return plain
