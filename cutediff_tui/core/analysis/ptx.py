"""Parse PTX modules as emitted by NVVM / the CuTe DSL.

Reads the module header (``.version``, ``.target``, ``.address_size`` and the NVVM
banner comment naming the CUDA release), the ``.file`` table, and for each
``.entry`` / ``.func`` its parameters, ``.reg`` and ``.local`` declarations, labels and
instructions with their ``.loc`` source positions. Inline-asm blocks (``{ ... }`` with
scoped ``.reg`` declarations and local labels) are parsed as ordinary statements.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from cutediff_tui.core.analysis._util import gc_paused
from cutediff_tui.core.errors import CutediffError

__all__ = [
    "PtxInstr",
    "PtxEntry",
    "PtxModule",
    "parse_ptx",
    "rewrite_ptx_version",
    "ptx_version",
]

_RELEASE_RE = re.compile(r"Cuda compilation tools,\s*release\s+(\d+\.\d+)(?:,\s*V(\d+(?:\.\d+)+))?")
_NVVM_RE = re.compile(r"Based on NVVM\s+(\S+)")
_VERSION_LINE_RE = re.compile(r"^([ \t]*)\.version[ \t]+(\d+\.\d+)[ \t]*$", re.M)
_FILE_DIR_RE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"')
_ENTRY_RE = re.compile(r"\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
_PARAM_RE = re.compile(r"\.param\b.*?([\w$.]+)\s*(?:\[\s*\d*\s*\])?\s*$")
_REG_RE = re.compile(r"\.reg\s+(?:\.v\d+\s+)?\.(\w+)\s+(.*)$")
_LOCAL_RE = re.compile(r"\.local\s+(.*?)\s*$")
_TYPE_SIZES = {
    "b8": 1,
    "s8": 1,
    "u8": 1,
    "b16": 2,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "b32": 4,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "f16x2": 4,
    "bf16x2": 4,
    "b64": 8,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "b128": 16,
    "pred": 1,
}


@dataclass(slots=True)
class PtxInstr:
    """One PTX instruction statement.

    Attributes:
        index: position in the entry's ``instrs``.
        line_no: 1-based line in the PTX text.
        pred: guard as written (``@%p5``, ``@!%p3``) or ``""``.
        opcode: full dotted opcode (``st.global.v4.b32``).
        base: opcode before the first dot (``st``).
        operands: operand text without the closing ``;``.
        text: the statement (guard, opcode, operands) without ``;``.
        loc: ``(file_id, line)`` of the last ``.loc`` before it, else None.
        source: ``(path, line)`` resolved through the module's ``.file`` table, else None.
        in_asm: inside a ``// begin inline asm`` ... ``// end inline asm`` block.
    """

    index: int
    line_no: int
    pred: str
    opcode: str
    base: str
    operands: str
    text: str
    loc: tuple | None
    source: tuple | None = None
    in_asm: bool = False


@dataclass(slots=True)
class PtxEntry:
    """A ``.entry`` (kernel) or ``.func`` of a module.

    Attributes:
        name: symbol name.
        kind: ``"entry"`` or ``"func"``.
        params: parameter names in order.
        instrs: instruction statements in order.
        local_bytes: total bytes of ``.local`` declarations (the PTX-level stack).
        reg_decls: register type (``b32``, ``pred``...) -> declared count; ``%r<5311>``
            counts 5311; inline-asm scoped declarations are included.
        labels: label -> index of the instruction it precedes.
        directives: performance directives (``.maxnreg``, ``.reqntid``...) as written.
    """

    name: str
    kind: str = "entry"
    params: list = field(default_factory=list)
    instrs: list = field(default_factory=list)
    local_bytes: int = 0
    reg_decls: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    directives: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.instrs)

    def __iter__(self) -> Iterator[PtxInstr]:
        return iter(self.instrs)


@dataclass(slots=True)
class PtxModule:
    """A parsed PTX module.

    Attributes:
        version: PTX ISA version (``"9.4"``) or None.
        target: ``.target`` (``"sm_103a"``; extra targets after a comma are dropped).
        address_size: 32 or 64, or None.
        toolchain: ``"CUDA 13.4"`` from the NVVM banner comment, or None.
        cuda_release: ``"13.4"`` or None.
        cuda_build: ``"13.4.59"`` or None.
        nvvm: NVVM version from the banner (``"23.0.0"``) or None.
        files: ``.file`` table, id -> path.
        entries: entries and functions in order.
    """

    version: str | None
    target: str | None
    address_size: int | None
    toolchain: str | None
    entries: list
    files: dict = field(default_factory=dict)
    cuda_release: str | None = None
    cuda_build: str | None = None
    nvvm: str | None = None

    @property
    def main(self) -> PtxEntry:
        """The largest ``.entry`` (the largest function when there is no entry)."""
        ents = [e for e in self.entries if e.kind == "entry"] or self.entries
        if not ents:
            raise CutediffError("The PTX module has no .entry or .func.")
        return max(ents, key=lambda e: len(e.instrs))

    def entry(self, name: str | None = None) -> PtxEntry:
        """Return an entry by name (:attr:`main` when name is None); KeyError if absent."""
        if name is None:
            return self.main
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    def resolve(self, loc: tuple | None) -> tuple | None:
        """Map ``(file_id, line)`` to ``(path, line)`` with the ``.file`` table."""
        if loc is None:
            return None
        path = self.files.get(loc[0])
        return (path, loc[1]) if path is not None else None


def _local_size(decl: str) -> int:
    """Bytes of one ``.local`` declaration body, e.g. ``.align 8 .b8 __local_depot0[112];``."""
    decl = decl.rstrip(";").strip()
    typ = None
    for tok in decl.split():
        if tok.startswith(".") and tok[1:] in _TYPE_SIZES:
            typ = tok[1:]
    size = _TYPE_SIZES.get(typ or "b8", 1)
    total = 0
    tail = decl.split(typ, 1)[-1] if typ else decl
    for name in tail.split(","):
        name = name.strip()
        if not name:
            continue
        count = 1
        for dim in re.findall(r"\[\s*(\d*)\s*\]", name):
            count *= int(dim) if dim else 0
        total += size * count
    return total


def _reg_count(names: str) -> int:
    n = 0
    for nm in names.rstrip(";").split(","):
        nm = nm.strip()
        if not nm:
            continue
        lt = nm.find("<")
        if lt >= 0 and nm.endswith(">"):
            try:
                n += int(nm[lt + 1 : -1])
            except ValueError:
                n += 1
        else:
            n += 1
    return n


def ptx_version(text: str) -> str | None:
    """Return the ``.version`` of a PTX text (``"9.4"``) or None."""
    m = _VERSION_LINE_RE.search(text)
    return m.group(2) if m else None


def rewrite_ptx_version(text: str, new_version: str) -> str:
    """Rewrite the ``.version`` directive and label the change in a comment.

    Raises:
        CutediffError: the text has no ``.version`` line.
    """
    m = _VERSION_LINE_RE.search(text)
    if not m:
        raise CutediffError("The PTX has no .version directive to rewrite.")
    old = m.group(2)
    if old == new_version:
        return text
    repl = (
        f"{m.group(1)}// cutediff: .version rewritten from {old} to {new_version}\n{m.group(1)}.version {new_version}"
    )
    return text[: m.start()] + repl + text[m.end() :]


_PERF_DIRECTIVES = frozenset(
    (
        ".maxnreg",
        ".maxntid",
        ".reqntid",
        ".minnctapersm",
        ".maxnctapersm",
        ".reqnctapercluster",
        ".explicitcluster",
        ".maxclusterrank",
        ".pragma",
        ".noreturn",
        ".blocksareclusters",
    )
)


class _PtxParser:
    """One pass over a PTX text.

    Each physical line is cleaned of comments (:meth:`strip_comments`), loses its leading
    labels and braces (:meth:`labels_and_braces`), and is cut into ``;``-terminated statements
    (:meth:`statements`, a statement may span lines). A statement is an instruction
    (:meth:`add_instr`) or a directive, handled by the entry of :attr:`_DIRECTIVES` named after
    it. Lines holding exactly one instruction, the bulk of a kernel, take a fast path in
    :meth:`run`.
    """

    def __init__(self) -> None:
        self.version: str | None = None
        self.target: str | None = None
        self.address_size: int | None = None
        self.files: dict[int, str] = {}
        self.entries: list[PtxEntry] = []
        self.cur: PtxEntry | None = None  # the function being read
        self.in_params = False  # inside a multi-line parameter list
        self.depth = 0  # brace depth
        self.loc: tuple | None = None  # last .loc
        self.in_asm = False
        self.pending_labels: list[str] = []
        self.buf = ""  # a statement continued on the next line
        self.buf_line = 0
        self.with_body: set[int] = set()  # ids of entries that have a body (not declarations)
        self.in_block_comment = False
        self.saw_directive = False

    def run(self, text: str) -> None:
        add_instr = self.add_instr
        line = self.line
        # the fast path reads the parser state from locals, refreshed after each slow-path line
        fast = False
        for line_no, raw in enumerate(text.split("\n"), 1):
            s = raw.strip()
            # fast path: one complete instruction on the line (the bulk of a kernel body)
            if (
                fast
                and s
                and s[-1] == ";"
                and (s[0] == "@" or "a" <= s[0] <= "z")
                and s.count(";") == 1
                and "/" not in s
            ):
                add_instr(s[:-1].rstrip(), line_no)
            else:
                line(s, line_no)
                fast = bool(self.depth and not self.buf and not self.in_block_comment and self.cur is not None)

    # ------------------------------------------------------------ physical lines

    def line(self, s: str, line_no: int) -> None:
        s = self.strip_comments(s)
        if not s:
            return
        if not self.buf:
            s = self.labels_and_braces(s)
            if s and self.in_params:
                s = self.param_line(s)
            if not s:
                return
        if ";" in s:
            self.statements(s, line_no)
        else:
            self.partial(s, line_no)

    def strip_comments(self, s: str) -> str:
        """Drop ``//`` and ``/* */`` comments (noting inline-asm markers); may return ``""``."""
        if self.in_block_comment:
            k = s.find("*/")
            if k < 0:
                return ""
            s = s[k + 2 :].strip()
            self.in_block_comment = False
        if not s:
            return s
        k = s.find("//")
        if k >= 0:
            comment = s[k + 2 :].strip()
            if comment == "begin inline asm":
                self.in_asm = True
            elif comment == "end inline asm":
                self.in_asm = False
            s = s[:k].rstrip()
            if not s:
                return s
        k = s.find("/*")
        if k >= 0:
            e = s.find("*/", k + 2)
            if e < 0:
                self.in_block_comment = True
                s = s[:k].rstrip()
            else:
                s = (s[:k] + " " + s[e + 2 :]).strip()
        return s

    def labels_and_braces(self, s: str) -> str:
        """Take the labels (``$L__BB0_3:``) and braces at the start of a line; return the rest."""
        while True:
            c = s.find(":")
            if c <= 0:
                break
            name = s[:c]
            if (
                " " in name
                or "\t" in name
                or "[" in name
                or "," in name
                or '"' in name
                or (c + 1 < len(s) and s[c + 1] == ":")
            ):
                break
            self.pending_labels.append(name)
            s = s[c + 1 :].strip()
            if not s:
                return s
        return self.braces(s)

    def braces(self, s: str) -> str:
        while s and s[0] in "{}":
            if s[0] == "{":
                self.open_brace()
            else:
                self.close_brace()
            s = s[1:].strip()
        return s

    def param_line(self, s: str) -> str:
        """A line of a multi-line parameter list: ``.param ...,`` or the closing ``)``."""
        if s.startswith(")"):
            self.in_params = False
            return s[1:].strip()
        if s.startswith(".param"):
            pm = _PARAM_RE.search(s.rstrip(",").rstrip(")").strip())
            if pm and self.cur is not None:
                self.cur.params.append(pm.group(1))
            if s.endswith(")"):
                self.in_params = False
            return ""
        return s

    def partial(self, s: str, line_no: int) -> None:
        """A line without ``;``: a header that opens or closes a body, a directive, or part of a statement."""
        if not self.buf:
            if s.endswith("{"):
                self.statement(s[:-1].strip(), line_no)
                self.open_brace()
                return
            if s.endswith("}") and s.startswith("."):
                self.statement(s[:-1].strip(), line_no)
                self.close_brace()
                return
            if s[0] == ".":
                # a directive without ';' (.version, .target, .file, .loc, .entry NAME( ...)
                self.statement(s, line_no)
                return
            self.buf_line = line_no
        self.buf = (self.buf + " " + s) if self.buf else s

    def statements(self, s: str, line_no: int) -> None:
        """A line with one or more ``;``: complete the pending statement and emit each one."""
        if self.buf:
            s = self.buf + " " + s
            self.buf = ""
        else:
            self.buf_line = line_no
        parts = s.split(";")
        for part in parts[:-1]:
            self.statement(part.strip(), self.buf_line)
            self.buf_line = line_no
        tail = self.braces(parts[-1].strip())
        if tail:
            self.buf = tail
            self.buf_line = line_no

    def open_brace(self) -> None:
        self.depth += 1
        self.in_params = False
        if self.cur is not None and self.depth == 1:
            self.with_body.add(id(self.cur))

    def close_brace(self) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth == 0:
            self.cur = None  # the function body ended

    # ------------------------------------------------------------ statements

    def statement(self, stmt: str, line_no: int) -> None:
        if not stmt:
            return
        if stmt[0] == ".":
            self.saw_directive = True
            sp = stmt.find(" ")
            sp2 = stmt.find("\t")
            if sp < 0 or (0 <= sp2 < sp):
                sp = sp2
            handler = self._DIRECTIVES.get(stmt if sp < 0 else stmt[:sp])
            if handler is not None:
                handler(self, stmt)
            return
        if self.cur is not None and self.depth:
            self.add_instr(stmt, line_no)

    def add_instr(self, stmt: str, line_no: int) -> None:
        if stmt[0] == "@":
            parts = stmt.split(None, 2)
            if len(parts) < 2:
                return
            pred, opcode = parts[0], parts[1]
            operands = parts[2].strip() if len(parts) > 2 else ""
        else:
            parts = stmt.split(None, 1)
            pred, opcode = "", parts[0]
            operands = parts[1].strip() if len(parts) > 1 else ""
        dot = opcode.find(".")
        base = opcode if dot < 0 else opcode[:dot]
        cur = self.cur
        assert cur is not None  # the caller checked it
        idx = len(cur.instrs)
        if self.pending_labels:
            for lab in self.pending_labels:
                cur.labels.setdefault(lab, idx)
            self.pending_labels.clear()
        head = f"{pred} {opcode}" if pred else opcode
        text = f"{head} {operands}" if operands else head
        cur.instrs.append(PtxInstr(idx, line_no, pred, opcode, base, operands, text, self.loc, None, self.in_asm))

    # ------------------------------------------------------------ directives (one handler each)

    def d_loc(self, stmt: str) -> None:
        parts = stmt[4:].replace(",", " ").split()
        try:
            self.loc = (int(parts[0]), int(parts[1]))
        except (IndexError, ValueError):
            self.loc = None

    def d_reg(self, stmt: str) -> None:
        if self.cur is None:
            return
        mm = _REG_RE.match(stmt)
        if mm:
            decls = self.cur.reg_decls
            decls[mm.group(1)] = decls.get(mm.group(1), 0) + _reg_count(mm.group(2))

    def d_local(self, stmt: str) -> None:
        if self.cur is None or self.depth == 0:
            return
        mm = _LOCAL_RE.match(stmt)
        if mm:
            self.cur.local_bytes += _local_size(mm.group(1))

    def d_version(self, stmt: str) -> None:
        parts = stmt.split()
        self.version = parts[1] if len(parts) > 1 else None

    def d_target(self, stmt: str) -> None:
        self.target = stmt[7:].strip().split(",")[0].strip() or None

    def d_address_size(self, stmt: str) -> None:
        try:
            self.address_size = int(stmt.split()[1])
        except (IndexError, ValueError):
            self.address_size = None

    def d_file(self, stmt: str) -> None:
        mm = _FILE_DIR_RE.match(stmt)
        if mm:
            self.files[int(mm.group(1))] = mm.group(2)

    def d_function(self, stmt: str) -> None:
        """``.visible .entry NAME(`` and friends: a function header, with parameters on the line."""
        mm = _ENTRY_RE.search(stmt)
        if not mm or self.depth != 0 or (stmt.startswith(".extern") and ".func" not in stmt):
            return
        cur = self.cur = PtxEntry(mm.group(2), "entry" if mm.group(1) == "entry" else "func")
        self.entries.append(cur)
        self.loc = None
        rest = stmt[mm.end() :]
        self.in_params = "(" in rest and ")" not in rest
        if "(" in rest:
            for p in rest.split("(", 1)[1].split(")")[0].split(","):
                pm = _PARAM_RE.search(p.strip())
                if pm:
                    cur.params.append(pm.group(1))

    def d_param(self, stmt: str) -> None:
        if self.cur is None or self.depth != 0:
            return
        pm = _PARAM_RE.search(stmt.rstrip(",").rstrip(")").strip())
        if pm:
            self.cur.params.append(pm.group(1))

    def d_performance(self, stmt: str) -> None:
        """``.maxnreg``, ``.reqntid``, ... between the header and the body: kept as written."""
        if self.cur is not None and self.depth == 0:
            self.cur.directives.append(stmt)

    _DIRECTIVES = {
        ".loc": d_loc,
        ".reg": d_reg,
        ".local": d_local,
        ".version": d_version,
        ".target": d_target,
        ".address_size": d_address_size,
        ".file": d_file,
        ".visible": d_function,
        ".weak": d_function,
        ".extern": d_function,
        ".entry": d_function,
        ".func": d_function,
        ".param": d_param,
        **dict.fromkeys(_PERF_DIRECTIVES, d_performance),
    }

    # ------------------------------------------------------------ result

    def module(self, head: str) -> PtxModule:
        entries = [e for e in self.entries if id(e) in self.with_body]
        if not self.saw_directive or (self.version is None and not entries):
            raise CutediffError(
                "The text is not PTX: no .version directive and no .entry/.func was found.",
                hint="Pass the .ptx file the compiler kept (CUTE_DSL_KEEP=ptx).",
            )
        files = self.files
        for e in entries:
            for ins in e.instrs:
                if ins.loc is not None:
                    path = files.get(ins.loc[0])
                    if path is not None:
                        ins.source = (path, ins.loc[1])
        release = build = nvvm = None
        m = _RELEASE_RE.search(head)
        if m:
            release, build = m.group(1), m.group(2)
        m = _NVVM_RE.search(head)
        if m:
            nvvm = m.group(1)
        toolchain = f"CUDA {release}" if release else None
        return PtxModule(self.version, self.target, self.address_size, toolchain, entries, files, release, build, nvvm)


def _parse_ptx_impl(text: str) -> PtxModule:
    if text is None:
        text = ""
    text = text.rstrip("\x00")
    if not text.strip():
        raise CutediffError("The PTX text is empty.", hint="Check that the compile kept its PTX (CUTE_DSL_KEEP=ptx).")
    parser = _PtxParser()
    parser.run(text)
    return parser.module(text[:4096])


def parse_ptx(text: str) -> PtxModule:
    """Parse PTX text into a :class:`PtxModule`.

    A trailing NUL byte (written by some DSL versions) is ignored.

    Raises:
        CutediffError: empty text, or text without any PTX directive.
    """
    with gc_paused():
        return _parse_ptx_impl(text)
