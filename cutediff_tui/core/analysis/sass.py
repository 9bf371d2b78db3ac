"""Parse ``nvdisasm`` SASS listings.

Understands the output of ``nvdisasm -c``, ``-c -g`` / ``-c -gi`` (``//## File "...", line N``
comments, with ``inlined at`` chains) and ``-c -lrm count`` (a trailing
``// | GPR | PRED | UGPR | UPRED |`` column of live-register counts per instruction),
as well as ``cuobjdump -sass`` style listings (``Function : name``, encoding comments).
nvdisasm 13.4+ tags spill code with ``(*"SpillRefill"*)``; any ``(*"..."*)`` tag is kept.

The parser is a single pass over the lines; each line goes to the handler of its kind
(:class:`_SassParser`), with string methods only on the hot path. The FA4 sample (about
6k instructions) parses in a few tens of milliseconds.
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
    "InstructionLine",
    "read_instruction_line",
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


def _live_columns(body: str) -> tuple[str, tuple | None]:
    """Split the ``// | GPR | PRED | UGPR | UPRED |`` column off an instruction (``-lrm count``)."""
    k = body.find("// |")
    if k < 0:
        return body, None
    cols = body[k + 4 :].split("|", 4)
    if len(cols) < 4:
        cols += [""] * (4 - len(cols))
    g, p, u, up = cols[0].strip(), cols[1].strip(), cols[2].strip(), cols[3].strip()
    # spelled out (no generator): this runs for every instruction of a ``-lrm count`` listing
    return body[:k], (
        int(g) if g.isdigit() else 0,
        int(p) if p.isdigit() else 0,
        int(u) if u.isdigit() else 0,
        int(up) if up.isdigit() else 0,
    )


def _clean_body(body: str) -> tuple[str, tuple, bool]:
    """Strip tags, encodings, dual-issue braces and the ``;``: (text, tags, had a ``;``)."""
    tags: tuple = ()
    if "(*" in body:
        tags = tuple(_TAG_RE.findall(body))
        body = _TAG_RE.sub("", body)
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
    return body, tags, semi >= 0


def _split_instruction(body: str) -> tuple[str, str, str, str, tuple] | None:
    """``@P0 LDL.LU.64 R2, [R1+0x8]`` -> (pred, opcode, operands, base, modifiers); None if empty."""
    if body[0] == "@":
        sp = body.find(" ")
        if sp < 0:
            return None
        pred = body[:sp]
        rest = body[sp + 1 :].lstrip()
    else:
        pred = ""
        rest = body
    sp = rest.find(" ")
    if sp < 0:
        opcode, operands = rest, ""
    else:
        opcode, operands = rest[:sp], rest[sp + 1 :].strip()
    dot = opcode.find(".")
    if dot < 0:
        return pred, opcode, operands, opcode, ()
    return pred, opcode, operands, opcode[:dot], tuple(opcode[dot + 1 :].split("."))


@dataclass(slots=True)
class InstructionLine:
    """The fields of one ``/*addr*/ ...;`` line read on its own (no function or label context).

    Attributes:
        addr: the byte address in the ``/*addr*/`` column.
        text: guard + opcode + operands as :attr:`SassInstr.text` holds them.
        base: opcode before the first dot.
        tags: ``(*"..."*)`` annotations.
        live: ``-lrm count`` columns, else None.
    """

    addr: int
    text: str
    base: str
    tags: tuple
    live: tuple | None


def read_instruction_line(line: str) -> InstructionLine | None:
    """Read one instruction line the way :func:`parse_sass` does, or None for any other line.

    For views that show a listing before it is parsed (a huge listing read lazily, line by line).
    """
    s = line.strip()
    if s[:2] != "/*":
        return None
    end = s.find("*/", 2)
    if end < 0:
        return None
    addr_s = s[2:end]
    if not addr_s or addr_s[0] in " \t" or addr_s[:2] == "0x":
        return None
    try:
        addr = int(addr_s, 16)
    except ValueError:
        return None
    body, live = _live_columns(s[end + 2 :])
    body, tags, _semi = _clean_body(body)
    if not body:
        return None
    parts = _split_instruction(body)
    if parts is None:
        return None
    return InstructionLine(addr, body, parts[3], tags, live)


class _SassParser:
    """One pass over a listing: each line goes to the handler of its kind.

    Line kinds, by first character (:attr:`_BY_FIRST_CHAR`): ``/*addr*/`` instructions and
    ``//##`` source locations (``/``), ELF directives ``.type``/``.other``/``.target`` (``.``),
    and everything else: ``Function : name`` headers (cuobjdump) and ``name:`` labels, which
    also open functions (``.text.NAME:`` or a name typed ``@function``).
    """

    def __init__(self) -> None:
        self.functions: list[SassFunction] = []
        self.func_names: set[str] = set()
        self.entry_names: set[str] = set()
        self.arch: str | None = None
        self.cur: SassFunction | None = None
        self.pending: list[str] = []  # labels waiting for their instruction
        self.last_addr = -1
        self.step = 16
        self.loc: tuple[str | None, int | None, tuple] = (None, None, ())
        self.loc_block: list[str] = []
        self.in_loc = False
        self.has_tags = False
        self.has_live = False
        self.has_loc = False
        self.last_had_semi = True
        self.candidates: list[SassInstr] = []  # tagged or STL/LDL: spill flags set at the end

    def run(self, text: str) -> SassListing:
        by_char = self._BY_FIRST_CHAR
        other = _SassParser.other_line
        instruction = self.instruction
        for raw in text.split("\n"):
            s = raw.strip()
            if s[:2] == "/*":
                instruction(s)  # the bulk of a listing
            elif s:
                by_char.get(s[0], other)(self, s)
        self.flush_labels()
        return self.finish()

    # ------------------------------------------------------------ functions and labels

    def start(self, name: str) -> None:
        self.flush_labels()
        self.cur = SassFunction(name)
        self.functions.append(self.cur)
        self.last_addr = -1
        self.loc = (None, None, ())

    def flush_labels(self) -> None:
        """Labels after the last instruction point at the function's end address."""
        if self.pending and self.cur is not None:
            end = self.last_addr + self.step if self.last_addr >= 0 else 0
            for lab in self.pending:
                self.cur.labels.setdefault(lab, end)
        self.pending.clear()

    # ------------------------------------------------------------ line kinds

    def slash_line(self, s: str) -> None:
        if s.startswith("/*"):
            self.instruction(s)
        elif s.startswith("//##"):
            self.location(s)

    def dot_line(self, s: str) -> None:
        if s.startswith(".L"):
            self.other_line(s)
            return
        d = _strip_comment(s)
        if d.startswith(".type") and d.endswith("@function"):
            nm = d[5:].strip()
            comma = nm.rfind(",")
            if comma > 0:
                self.func_names.add(nm[:comma].strip())
        elif d.startswith(".other") and "STO_CUDA_ENTRY" in d:
            nm = d[6:].strip()
            comma = nm.find(",")
            if comma > 0:
                self.entry_names.add(nm[:comma].strip())
        elif d.startswith(".target"):
            parts = d.split()
            if len(parts) > 1:
                self.arch = parts[1]
        elif d.startswith(".text.") and d.endswith(":"):
            self.other_line(s)

    def other_line(self, s: str) -> None:
        if s.startswith("Function :") or s.startswith("Function:"):
            self.start(s.split(":", 1)[1].strip())
            return
        colon = s.find(":")
        if colon <= 0 or (colon + 1 < len(s) and s[colon + 1] not in " \t"):
            return
        name = s[:colon]
        if " " in name or "\t" in name:
            return
        self.in_loc = False
        if name.startswith(".text."):
            fname = name[6:]
            if self.cur is None or self.cur.name != fname:
                self.start(fname)
        elif name in self.func_names:
            if self.cur is None or self.cur.name != name:
                self.start(name)
        else:
            if self.cur is None:
                self.start("<anonymous>")
            self.pending.append(name)

    def location(self, s: str) -> None:
        """A ``//## File "...", line N`` comment (``-g``): applies to the instructions after it."""
        if not self.in_loc:
            self.loc_block = []
            self.in_loc = True
        self.loc_block.append(s)
        self.loc = _parse_loc_block(self.loc_block)
        if self.loc[0] is not None:
            self.has_loc = True

    def instruction(self, s: str) -> None:
        end = s.find("*/", 2)
        if end < 0:
            return
        addr_s = s[2:end]
        if not addr_s or addr_s[0] in " \t" or addr_s[:2] == "0x":
            return  # an encoding comment line (/* 0x... */)
        try:
            addr = int(addr_s, 16)
        except ValueError:
            return
        body, live = _live_columns(s[end + 2 :])
        if live is not None:
            self.has_live = True
        body, tags, self.last_had_semi = _clean_body(body)
        if SPILL_TAG in tags:
            self.has_tags = True
        if not body:
            return
        parts = _split_instruction(body)
        if parts is None:
            return
        pred, opcode, operands, base, mods = parts
        if self.cur is None:
            self.start("<anonymous>")
        cur = self.cur
        assert cur is not None  # start() above set it
        if self.last_addr >= 0 and addr > self.last_addr:
            self.step = addr - self.last_addr
        if self.pending:
            for lab in self.pending:
                cur.labels.setdefault(lab, addr)
            self.pending.clear()
        self.last_addr = addr
        self.in_loc = False
        file, line, chain = self.loc
        ins = SassInstr(
            len(cur.instrs), addr, pred, opcode, base, mods, operands, body, tags, False, file, line, chain, live,
            cur.name,
        )  # fmt: skip
        cur.instrs.append(ins)
        if tags or base in _LOCAL_OPS:
            self.candidates.append(ins)

    _BY_FIRST_CHAR = {"/": slash_line, ".": dot_line}

    # ------------------------------------------------------------ result

    def finish(self) -> SassListing:
        functions = [f for f in self.functions if f.instrs]
        if not functions:
            raise CutediffError(
                "The text is not an nvdisasm SASS listing: no instruction lines (/*addr*/ OPCODE ...;) were found.",
                hint="Pass the output of `nvdisasm -c kernel.cubin`.",
            )
        for f in functions:
            f.is_entry = f.name in self.entry_names
        for ins in self.candidates:
            ins.is_spill = (SPILL_TAG in ins.tags) if self.has_tags else (ins.base in _LOCAL_OPS)
        return SassListing(functions, self.arch, self.has_tags, self.has_loc, self.has_live, self.last_had_semi)


def _parse_sass_impl(text: str) -> SassListing:
    if not text or not text.strip():
        raise CutediffError(
            "The SASS listing is empty.",
            hint="Check that nvdisasm ran on a cubin that contains code.",
        )
    return _SassParser().run(text)


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
