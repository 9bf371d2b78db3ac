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


def _parse_ptx_impl(text: str) -> PtxModule:
    if text is None:
        text = ""
    text = text.rstrip("\x00")
    if not text.strip():
        raise CutediffError("The PTX text is empty.", hint="Check that the compile kept its PTX (CUTE_DSL_KEEP=ptx).")
    head = text[:4096]
    release = build = nvvm = None
    m = _RELEASE_RE.search(head)
    if m:
        release, build = m.group(1), m.group(2)
    m = _NVVM_RE.search(head)
    if m:
        nvvm = m.group(1)
    version = target = None
    address_size = None
    files: dict[int, str] = {}
    entries: list[PtxEntry] = []
    cur: PtxEntry | None = None
    in_params = False
    depth = 0
    loc: tuple | None = None
    in_asm = False
    pending_labels: list[str] = []
    buf = ""
    buf_line = 0
    with_body: set[int] = set()
    in_block_comment = False
    saw_directive = False

    def emit(stmt: str, line_no: int) -> None:
        nonlocal version, target, address_size, cur, in_params, loc, saw_directive
        if not stmt:
            return
        if stmt[0] == ".":
            saw_directive = True
            sp = stmt.find(" ")
            sp2 = stmt.find("\t")
            if sp < 0 or (0 <= sp2 < sp):
                sp = sp2
            d = stmt if sp < 0 else stmt[:sp]
            if d == ".loc":
                parts = stmt[4:].replace(",", " ").split()
                try:
                    loc = (int(parts[0]), int(parts[1]))
                except (IndexError, ValueError):
                    loc = None
                return
            if d == ".reg" and cur is not None:
                mm = _REG_RE.match(stmt)
                if mm:
                    cur.reg_decls[mm.group(1)] = cur.reg_decls.get(mm.group(1), 0) + _reg_count(mm.group(2))
                return
            if d == ".local" and cur is not None and depth > 0:
                mm = _LOCAL_RE.match(stmt)
                if mm:
                    cur.local_bytes += _local_size(mm.group(1))
                return
            if d == ".version":
                version = stmt.split()[1] if len(stmt.split()) > 1 else None
                return
            if d == ".target":
                target = stmt[7:].strip().split(",")[0].strip() or None
                return
            if d == ".address_size":
                try:
                    address_size = int(stmt.split()[1])
                except (IndexError, ValueError):
                    address_size = None
                return
            if d == ".file":
                mm = _FILE_DIR_RE.match(stmt)
                if mm:
                    files[int(mm.group(1))] = mm.group(2)
                return
            if d in (".visible", ".weak", ".extern", ".entry", ".func"):
                mm = _ENTRY_RE.search(stmt)
                if mm and (d != ".extern" or ".func" in stmt) and depth == 0:
                    cur = PtxEntry(mm.group(2), "entry" if mm.group(1) == "entry" else "func")
                    entries.append(cur)
                    loc = None
                    in_params = "(" in stmt[mm.end() :] and ")" not in stmt[mm.end() :]
                    rest = stmt[mm.end() :]
                    if "(" in rest:
                        for p in rest.split("(", 1)[1].split(")")[0].split(","):
                            pm = _PARAM_RE.search(p.strip())
                            if pm:
                                cur.params.append(pm.group(1))
                return
            if d == ".param" and cur is not None and depth == 0:
                pm = _PARAM_RE.search(stmt.rstrip(",").rstrip(")").strip())
                if pm:
                    cur.params.append(pm.group(1))
                return
            if (
                d
                in (
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
                and cur is not None
                and depth == 0
            ):
                cur.directives.append(stmt)
                return
            return
        if cur is None or depth == 0:
            return
        add_instr(stmt, line_no)

    def add_instr(stmt: str, line_no: int) -> None:
        parts = stmt.split(None, 2) if stmt[0] == "@" else stmt.split(None, 1)
        if stmt[0] == "@":
            if len(parts) < 2:
                return
            pred = parts[0]
            opcode = parts[1]
            operands = parts[2].strip() if len(parts) > 2 else ""
        else:
            pred = ""
            opcode = parts[0]
            operands = parts[1].strip() if len(parts) > 1 else ""
        dot = opcode.find(".")
        base = opcode if dot < 0 else opcode[:dot]
        instrs = cur.instrs  # type: ignore[union-attr]  # checked above (a closure's nonlocal)
        idx = len(instrs)
        if pending_labels:
            for lab in pending_labels:
                cur.labels.setdefault(lab, idx)  # type: ignore[union-attr]
            pending_labels.clear()
        if operands:
            text_ = f"{pred} {opcode} {operands}" if pred else f"{opcode} {operands}"
        else:
            text_ = f"{pred} {opcode}" if pred else opcode
        instrs.append(PtxInstr(idx, line_no, pred, opcode, base, operands, text_, loc, None, in_asm))

    def open_brace() -> None:
        nonlocal depth, in_params
        depth += 1
        in_params = False
        if cur is not None and depth == 1:
            with_body.add(id(cur))

    def close_brace() -> None:
        nonlocal depth, cur
        depth = max(0, depth - 1)
        if depth == 0:
            cur = None  # the function body ended

    for line_no, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        # fast path: one complete instruction on the line (the bulk of a kernel body)
        if (
            depth
            and not buf
            and not in_block_comment
            and s
            and s[-1] == ";"
            and cur is not None
            and (s[0] == "@" or "a" <= s[0] <= "z")
            and s.count(";") == 1
            and "/" not in s
        ):
            add_instr(s[:-1].rstrip(), line_no)
            continue
        if in_block_comment:
            k = s.find("*/")
            if k < 0:
                continue
            s = s[k + 2 :].strip()
            in_block_comment = False
        if not s:
            continue
        k = s.find("//")
        if k >= 0:
            comment = s[k + 2 :].strip()
            if comment == "begin inline asm":
                in_asm = True
            elif comment == "end inline asm":
                in_asm = False
            s = s[:k].rstrip()
            if not s:
                continue
        k = s.find("/*")
        if k >= 0:
            e = s.find("*/", k + 2)
            if e < 0:
                in_block_comment = True
                s = s[:k].rstrip()
            else:
                s = (s[:k] + " " + s[e + 2 :]).strip()
            if not s:
                continue
        if not buf:
            # labels at the start of a line (possibly followed by a statement)
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
                pending_labels.append(name)
                s = s[c + 1 :].strip()
                if not s:
                    break
            # braces at the start of a line
            while s and s[0] in "{}":
                if s[0] == "{":
                    open_brace()
                else:
                    close_brace()
                s = s[1:].strip()
            if not s:
                continue
            if in_params:
                if s.startswith(")"):
                    in_params = False
                    s = s[1:].strip()
                    if not s:
                        continue
                elif s.startswith(".param"):
                    pm = _PARAM_RE.search(s.rstrip(",").rstrip(")").strip())
                    if pm and cur is not None:
                        cur.params.append(pm.group(1))
                    if s.endswith(")"):
                        in_params = False
                    continue
        if ";" not in s:
            if s.endswith("{") and not buf:
                emit(s[:-1].strip(), line_no)
                open_brace()
                continue
            if s.endswith("}") and not buf and s.startswith("."):
                emit(s[:-1].strip(), line_no)
                close_brace()
                continue
            if s[0] == "." and not buf:
                # a directive without ';' (.version, .target, .file, .loc, .entry NAME( ...)
                emit(s, line_no)
                continue
            if not buf:
                buf_line = line_no
            buf = (buf + " " + s) if buf else s
            continue
        if buf:
            s = buf + " " + s
            buf = ""
        else:
            buf_line = line_no
        parts = s.split(";")
        for part in parts[:-1]:
            emit(part.strip(), buf_line)
            buf_line = line_no
        tail = parts[-1].strip()
        while tail and tail[0] in "{}":
            if tail[0] == "{":
                open_brace()
            else:
                close_brace()
            tail = tail[1:].strip()
        if tail:
            buf = tail
            buf_line = line_no
    entries = [e for e in entries if id(e) in with_body]
    if not saw_directive or (version is None and not entries):
        raise CutediffError(
            "The text is not PTX: no .version directive and no .entry/.func was found.",
            hint="Pass the .ptx file the compiler kept (CUTE_DSL_KEEP=ptx).",
        )
    for ent in entries:
        for ins in ent.instrs:
            if ins.loc is not None:
                path = files.get(ins.loc[0])
                if path is not None:
                    ins.source = (path, ins.loc[1])
    toolchain = f"CUDA {release}" if release else None
    return PtxModule(version, target, address_size, toolchain, entries, files, release, build, nvvm)


def parse_ptx(text: str) -> PtxModule:
    """Parse PTX text into a :class:`PtxModule`.

    A trailing NUL byte (written by some DSL versions) is ignored.

    Raises:
        CutediffError: empty text, or text without any PTX directive.
    """
    with gc_paused():
        return _parse_ptx_impl(text)
