"""Compiler remarks printed by the DSL (``CUTE_DSL_COMPILER_OPT="remarks{ptx}"``, DSL 4.7+)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

KNOWN_PACKAGES = ("flash_attn", "quack", "cutlass", "cutediff_user_recipe")
_HEAD = re.compile(r"^remark\[(?P<cat>[^\]]+)\]:\s*(?P<msg>.*)$")
_LOC = re.compile(r"^\s*-->\s*(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?\s*$")
_FUNC = re.compile(r"^\s*in function `(?P<fn>[^`]*)`")
_ENTRY = re.compile(r"Compiling entry function\s+'(?P<name>[^']+)'", re.S)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


@dataclass
class Remark:
    """One remark: where the compiler points, what it says, and for which kernel."""

    category: str
    message: str
    file: str | None
    line: int | None
    column: int | None
    function: str | None
    kernel: str | None
    detail: str
    ptxas_output: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def short_path(path: str) -> str:
    """Drop the environment prefix: ``/…/site/flash_attn/cute/x.py`` → ``flash_attn/cute/x.py``."""
    for marker in ("/site-packages/", "/site/", "/dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    p = Path(path)
    parts = p.parts
    for i, part in enumerate(parts[:-1]):
        if part in KNOWN_PACKAGES:
            return "/".join(parts[i:])
    if p.is_absolute() and p.is_file():
        top = p.parent
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
        if top != p.parent:
            return str(p.relative_to(top))
    return path


def parse_remarks(log: str) -> list[Remark]:
    """Every ``remark[...]`` block in a compile log."""
    lines = _ANSI.sub("", log).splitlines()
    starts = [i for i, ln in enumerate(lines) if _HEAD.match(ln)]
    out: list[Remark] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        block = lines[start:end]
        # a block ends at the first line that is clearly other output (not indented, not blank)
        for j in range(1, len(block)):
            ln = block[j]
            if ln and not ln.startswith((" ", "\t", ">", "|", "ptxas")) and not re.match(r"^\d+\s*\|", ln):
                block = block[:j]
                break
        head = _HEAD.match(block[0])
        assert head
        file = line = col = fn = None
        for ln in block[1:]:
            m = _LOC.match(ln)
            if m and file is None:
                file, line = short_path(m.group("file")), int(m.group("line"))
                col = int(m.group("col")) if m.group("col") else None
            m = _FUNC.match(ln)
            if m and fn is None:
                fn = m.group("fn")
        text = "\n".join(block)
        joined = re.sub(r"\s+", " ", text)
        em = _ENTRY.search(joined)
        detail = ""
        sm = _SPILL.search(joined)
        if sm:
            detail = (
                f"{sm.group(1)} bytes stack frame, {sm.group(2)} bytes spill stores, {sm.group(3)} bytes spill loads"
            )
        ptxas_lines = [ln.strip() for ln in block if ln.strip().startswith("ptxas")]
        if ptxas_lines and ptxas_lines[0].startswith("ptxas output:"):
            ptxas_lines[0] = ptxas_lines[0].split("ptxas output:", 1)[1].strip()
        out.append(
            Remark(
                category=head.group("cat"),
                message=head.group("msg").strip(),
                file=file,
                line=line,
                column=col,
                function=fn,
                kernel=em.group("name").replace(" ", "") if em else None,
                detail=detail,
                ptxas_output="\n".join(x for x in ptxas_lines if x),
            )
        )
    return out
