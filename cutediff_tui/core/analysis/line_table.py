"""Source lines of a cubin's functions from its DWARF ``.debug_line`` section, without nvdisasm.

A line-info cubin (CuTe DSL, ``nvcc -lineinfo``, Triton) carries a DWARF line program (version 2
in every DSL cubin seen) with one sequence per ``.text.<function>`` section; the operand of each
sequence's ``DW_LNE_set_address`` is relocated (one RELA entry of ``.rela.debug_line`` per
sequence) against the function's symbol, so the addresses are offsets into that section, as the
``/*addr*/`` column of a listing. ``nvdisasm -c -g`` prints each row as a
``//## File "<dir>/<name>", line N`` comment before the instruction at its address.
(``.nv_debug_line_sass`` is NVIDIA's second table, from SASS addresses to lines of the embedded
PTX text ``.nv_debug_ptx_txt``; ``-g`` does not print it and it is not read here.)

:func:`read_line_table` reads the rows; :func:`lineinfo_listing` rebuilds, from a ``-lrm count``
listing of the same cubin and its rows, the listing that ``nvdisasm -c -g`` would print
(:func:`.sass.parse_sass` of its text), so a line-info cubin needs one nvdisasm run instead of
two. Anything not seen in the cubins this was checked against (another DWARF version or format,
an extended opcode such as NVIDIA's inlined-call records, a row between instructions, padding
that is not NOP) raises :class:`LineTableUnusable`: the caller then runs ``nvdisasm -g``.

The reader is a few dozen lines of ``struct`` on purpose: pyelftools 0.33 reads these programs
only through private calls (they have no ``.debug_info`` unit pointing at them), skips unknown
extended opcodes without a trace (so an inlined-call record would turn into a wrong line, not a
refusal), and does not apply EM_CUDA relocations.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from cutediff_tui.core.analysis.fingerprint import Section, section_headers
from cutediff_tui.core.analysis.sass import SassFunction, SassInstr, SassListing
from cutediff_tui.core.errors import CutediffError

__all__ = ["FunctionLines", "LineTable", "LineTableUnusable", "NOP_WORD", "read_line_table", "lineinfo_listing"]

NOP_WORD = bytes.fromhex("18790000000000000000000000c00f00")
"""The 16 bytes of the ``NOP`` that pads a function's section to its alignment (sm_90 – sm_103)."""

_SHT_SYMTAB, _SHT_RELA, _SHT_REL = 2, 4, 9
_PTX_DEBUG_FILE = ".nv_debug_ptx_txt"


class LineTableUnusable(ValueError):
    """The line table is there but cannot stand in for ``nvdisasm -g`` (the message says why)."""


@dataclass(frozen=True, slots=True)
class FunctionLines:
    """The code section of one function and the rows of its line sequences.

    Attributes:
        name: the function (its section is ``.text.<name>``).
        code: the section's bytes.
        rows: ``(address, file, line)`` in program order (end-of-sequence rows left out).
        end: the largest end-of-sequence address (0 when the function has no sequence).
    """

    name: str
    code: bytes
    rows: tuple[tuple[int, str, int], ...] = ()
    end: int = 0


@dataclass(frozen=True, slots=True)
class LineTable:
    """The rows of a cubin's ``.debug_line``, per function (every ``.text.*`` section is listed)."""

    functions: dict[str, FunctionLines]
    version: int

    @property
    def has_rows(self) -> bool:
        return any(f.rows for f in self.functions.values())


def _sections(data: bytes) -> list[Section]:
    """(name, type, offset, size, link, info) of each section of the cubin, in index order
    (:func:`.fingerprint.section_headers`), every section with contents inside the file."""
    try:
        secs = section_headers(data)
    except CutediffError as exc:
        raise LineTableUnusable(str(exc).rstrip(".")) from None
    for sec in secs:
        if sec.type != 8 and sec.offset + sec.size > len(data):
            raise LineTableUnusable(f"section {sec.name} lies past the end of the file")
    return secs


def _uleb(b: bytes, i: int) -> tuple[int, int]:
    return _leb(b, i, signed=False)


def _sleb(b: bytes, i: int) -> tuple[int, int]:
    return _leb(b, i, signed=True)


def _leb(b: bytes, i: int, *, signed: bool) -> tuple[int, int]:
    """A LEB128 number at ``b[i]`` and the index after it."""
    value = shift = 0
    while True:
        byte = b[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if signed and byte & 0x40:
                value -= 1 << shift
            return value, i


def _cstr(b: bytes, i: int) -> tuple[str, int]:
    end = b.index(b"\0", i)
    return b[i:end].decode("utf-8", "surrogateescape"), end + 1


def read_line_table(data: bytes) -> LineTable | None:
    """The line table of a cubin; None when it has no ``.debug_line`` (no line info).

    Raises:
        LineTableUnusable: the section is there but damaged, or holds something not read here.
    """
    try:
        return _read(data)
    except (struct.error, IndexError, ValueError) as exc:
        if isinstance(exc, LineTableUnusable):
            raise
        raise LineTableUnusable(f"the line table is damaged ({exc})") from None


def _read(data: bytes) -> LineTable | None:
    secs = _sections(data)
    index = {s[0]: i for i, s in enumerate(secs)}
    if ".debug_line" not in index:
        return None
    dl = index[".debug_line"]
    if any(s[1] == _SHT_REL and s[5] == dl for s in secs):
        raise LineTableUnusable("its relocations are REL, not RELA")
    relas = [s for s in secs if s.type == _SHT_RELA and s.info == dl]
    if len(relas) != 1:
        raise LineTableUnusable(f"it has {len(relas)} relocation sections, not one")
    r_off, r_size, symtab_index = relas[0].offset, relas[0].size, relas[0].link
    if symtab_index >= len(secs) or secs[symtab_index].type != _SHT_SYMTAB:
        raise LineTableUnusable("its relocations name no symbol table")
    sym_off = secs[symtab_index].offset
    # relocated operand offset -> (section index of the symbol, S + A)
    relocated: dict[int, tuple[int, int]] = {}
    for k in range(r_size // 24):
        offset, rinfo, addend = struct.unpack_from("<QQq", data, r_off + 24 * k)
        _st_name, _st_info, _st_other, shndx, value, _size = struct.unpack_from(
            "<IBBHQQ", data, sym_off + 24 * (rinfo >> 32)
        )
        relocated[offset] = (shndx, value + addend)
    functions = {
        s.name[6:]: FunctionLines(s.name[6:], data[s.offset : s.offset + s.size])
        for s in secs
        if s.name.startswith(".text.") and s.type != 8
    }
    rows: dict[str, list[tuple[int, str, int]]] = {}
    ends: dict[str, int] = {}
    body = data[secs[dl].offset : secs[dl].offset + secs[dl].size]
    version = 0
    pos = 0
    used: set[int] = set()
    while pos < len(body):
        version = _program(body, pos, relocated, used, secs, rows, ends)
        pos += 4 + struct.unpack_from("<I", body, pos)[0]
    if set(relocated) - used:
        raise LineTableUnusable("a relocation of it is not the address of a sequence")
    out = {}
    for name, f in functions.items():
        out[name] = FunctionLines(name, f.code, tuple(rows.get(name, ())), ends.get(name, 0))
    unknown = set(rows) - set(out)
    if unknown:
        raise LineTableUnusable(f"a sequence points into {sorted(unknown)[0]}, which has no code section")
    return LineTable(out, version)


def _program(
    b: bytes,
    start: int,
    relocated: dict[int, tuple[int, int]],
    used: set[int],
    secs: list[Section],
    rows: dict[str, list[tuple[int, str, int]]],
    ends: dict[str, int],
) -> int:
    """Run one line program (a unit of ``.debug_line``) and add its rows; returns its version."""
    (unit_length,) = struct.unpack_from("<I", b, start)
    if unit_length >= 0xFFFFFFF0:
        raise LineTableUnusable("it is 64-bit DWARF")
    end = start + 4 + unit_length
    if end > len(b):
        raise LineTableUnusable("a line program runs past the end of the section")
    version, header_length = struct.unpack_from("<HI", b, start + 4)
    if version not in (2, 3, 4):
        raise LineTableUnusable(f"it is DWARF version {version}")
    i = start + 10
    program = i + header_length
    min_inst = b[i]
    i += 1
    if version >= 4:
        if b[i] != 1:
            raise LineTableUnusable("it has several operations per instruction")
        i += 1
    i += 1  # default_is_stmt: nvdisasm prints every row
    line_base = struct.unpack_from("<b", b, i)[0]
    line_range, opcode_base = b[i + 1], b[i + 2]
    if line_range == 0 or opcode_base == 0:
        raise LineTableUnusable("its header is damaged")
    arg_counts = b[i + 3 : i + 2 + opcode_base]
    i += 2 + opcode_base
    dirs: list[str] = []
    while b[i]:
        d, i = _cstr(b, i)
        dirs.append(d)
    i += 1
    files: list[str] = []

    def add_file(j: int) -> int:
        name, j = _cstr(b, j)
        d, j = _uleb(b, j)
        _mtime, j = _uleb(b, j)
        _length, j = _uleb(b, j)
        if d > len(dirs):
            raise LineTableUnusable(f"file {name} names directory {d} of {len(dirs)}")
        if d == 0 or name.startswith("/"):
            raise LineTableUnusable(f"file {name} has no directory")
        if name == _PTX_DEBUG_FILE:
            raise LineTableUnusable("it points into the embedded PTX text")
        files.append(f"{dirs[d - 1]}/{name}")
        return j

    while b[i]:
        i = add_file(i)
    i = program
    address, file, line = 0, 1, 1
    seq: list[tuple[int, str, int]] | None = None
    func = None

    def emit() -> None:
        if seq is None:
            raise LineTableUnusable("a row comes before its sequence's address is set")
        if not 1 <= file <= len(files):
            raise LineTableUnusable(f"a row names file {file} of {len(files)}")
        seq.append((address, files[file - 1], line))

    while i < end:
        op = b[i]
        i += 1
        if op >= opcode_base:
            adj = op - opcode_base
            address += (adj // line_range) * min_inst
            line += line_base + adj % line_range
            emit()
        elif op == 0:
            length, i = _uleb(b, i)
            sub, nxt = b[i], i + length
            if sub == 1:  # end_sequence
                if func is None:
                    raise LineTableUnusable("a sequence ends before its address is set")
                ends[func] = max(ends.get(func, 0), address)
                address, file, line, seq, func = 0, 1, 1, None, None
            elif sub == 2:  # set_address: relocated against the function's symbol
                if length != 9 or i + 1 not in relocated:
                    raise LineTableUnusable("a sequence's address is not relocated against a function")
                shndx, base = relocated[i + 1]
                used.add(i + 1)
                raw = struct.unpack_from("<Q", b, i + 1)[0]
                name = secs[shndx].name if shndx < len(secs) else ""
                if not name.startswith(".text.") or raw not in (0, base):
                    raise LineTableUnusable("a sequence's address is not in a function's code section")
                if func is not None and func != name[6:]:
                    raise LineTableUnusable("a sequence moves from one function to another")
                func = name[6:]
                seq = rows.setdefault(func, [])
                address = base
            elif sub == 3:  # define_file
                add_file(i + 1)
            elif sub != 4:  # 4: set_discriminator (ignored)
                raise LineTableUnusable(f"it uses extended opcode {sub:#x}")
            i = nxt
        elif op == 1:  # copy
            emit()
        elif op == 2:  # advance_pc
            n, i = _uleb(b, i)
            address += n * min_inst
        elif op == 3:  # advance_line
            n, i = _sleb(b, i)
            line += n
        elif op == 4:  # set_file
            file, i = _uleb(b, i)
        elif op == 8:  # const_add_pc
            address += ((255 - opcode_base) // line_range) * min_inst
        elif op == 9:  # fixed_advance_pc
            address += struct.unpack_from("<H", b, i)[0]
            i += 2
        else:  # set_column, negate_stmt, basic_block, prologue/epilogue, isa...: operands skipped
            for _ in range(arg_counts[op - 1] if op - 1 < len(arg_counts) else 0):
                _n, i = _uleb(b, i)
    if seq is not None:
        raise LineTableUnusable("a sequence does not end")
    return version


def _without_lines(i: SassInstr) -> SassInstr:
    """A copy of an instruction with no location and no live counts."""
    return SassInstr(
        i.index, i.addr, i.pred, i.opcode, i.base, i.modifiers, i.operands, i.text, i.tags, i.is_spill,
        None, None, (), None, i.function,
    )  # fmt: skip


def _after(f: SassFunction, before: SassFunction) -> bool:
    return bool(before.instrs) and f.instrs[0].addr > before.instrs[-1].addr


def _pad(built: SassFunction, live: SassFunction, fl: FunctionLines) -> None:
    """Add the NOP padding up to the section end that ``-lrm`` leaves out after the section's last
    function; the labels after its last instruction move to the end with it."""
    size = len(fl.code)
    last = live.instrs[-1].addr if live.instrs else -16
    if last + 16 > size:
        raise LineTableUnusable(f"{live.name} has instructions past the end of its section")
    if fl.end > size:
        raise LineTableUnusable(f"a sequence of {live.name} ends past its section")
    if last + 16 == size:
        return
    if (size - last) % 16 or any(fl.code[a : a + 16] != NOP_WORD for a in range(last + 16, size, 16)):
        raise LineTableUnusable(f"{live.name} ends in code the listing lacks that is not NOP padding")
    for a in range(last + 16, size, 16):
        nop = SassInstr(
            len(built.instrs), a, "", "NOP", "NOP", (), "", "NOP", (), False, None, None, (), None, live.name
        )
        built.instrs.append(nop)
    end = last + 16 if len(live.instrs) < 2 else last + (live.instrs[-1].addr - live.instrs[-2].addr)
    built.labels = {k: (size if v == end else v) for k, v in built.labels.items()}


def _row_starts(fl: FunctionLines, addrs: set[int]) -> dict[int, tuple[str, int]]:
    """Address → (file, line) of the rows of one section; each must start an instruction."""
    starts: dict[int, tuple[str, int]] = {}
    for addr, file, line in fl.rows:
        if addr not in addrs:
            raise LineTableUnusable(f"a row of {fl.name} is at {addr:#x}, where no instruction starts")
        if starts.get(addr, (file, line)) != (file, line):
            raise LineTableUnusable(f"{fl.name} has two rows at {addr:#x}")
        starts[addr] = (file, line)
    return starts


def lineinfo_listing(live: SassListing, table: LineTable) -> SassListing:
    """The listing ``nvdisasm -c -g`` prints for the cubin (as :func:`.sass.parse_sass` reads it),
    from its ``-c -lrm count`` listing and line table.

    The two texts hold the same instructions except the ``NOP`` padding at the end of a section,
    which ``-lrm`` leaves out (with it, the labels after the last instruction move to the section
    end). A row's location applies from its instruction up to the next row's, as the parser
    carries a ``//##`` comment forward. The live columns are left out (:func:`.sass.merge_sass`
    attaches them).

    Raises:
        LineTableUnusable: the table and the listing disagree (a row between instructions, a
            sequence for a function the listing lacks, padding that is not NOP, ...).
    """
    names = {f.name for f in live.functions}
    for name, described in table.functions.items():
        if described.rows and name not in names:
            raise LineTableUnusable(f"a sequence describes {name}, which the listing lacks")
    # a listing function with no section of its own (``$__internal_0_$__cuda_sm10x_...``) is a
    # subroutine placed after the function before it, in that function's section
    groups: list[tuple[FunctionLines, list[SassFunction]]] = []
    for f in live.functions:
        fl = table.functions.get(f.name)
        if fl is not None:
            groups.append((fl, [f]))
        elif groups and f.instrs and _after(f, groups[-1][1][-1]):
            groups[-1][1].append(f)
        else:
            raise LineTableUnusable(f"the cubin has no code section for {f.name}")
    functions: list[SassFunction] = []
    seen_rows = False
    for fl, members in groups:
        built = [
            SassFunction(f.name, [_without_lines(i) for i in f.instrs], dict(f.labels), f.is_entry) for f in members
        ]
        _pad(built[-1], members[-1], fl)
        starts = _row_starts(fl, {ins.addr for g in built for ins in g.instrs})
        seen_rows = seen_rows or bool(starts)
        for g in built:  # the parser forgets the location at each function's start
            loc: tuple[str | None, int | None] = (None, None)
            for ins in g.instrs:
                loc = starts.get(ins.addr, loc)
                ins.file, ins.line = loc
        functions.extend(built)
    padded = bool(functions) and len(functions[-1].instrs) > len(live.functions[-1].instrs)
    complete = True if padded else live.complete  # the text then ends with a NOP line
    return SassListing(functions, live.arch, live.has_spill_tags, seen_rows, False, complete)
