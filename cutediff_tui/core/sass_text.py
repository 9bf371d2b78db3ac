"""SASS text from other tools (nvdisasm, ``cuobjdump -sass``, Compiler Explorer) read as listings.

``cutediff diff`` takes ``.sass`` files as a side: the text is normalised to what nvdisasm prints
(a ``.text.NAME:`` label and ``STO_CUDA_ENTRY`` marker per function, no encoding comments), split
per function, and analysed like a disassembled cubin. Figures only a cubin holds (registers, stack
frame) are unknown for such a side and shown as "–".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .errors import CutediffError

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")  # cuobjdump -sass
_NVDISASM_TEXT = re.compile(r"^\s*\.text\.(\S+?):\s*$")  # nvdisasm
_ENCODING = re.compile(r"\s*/\*\s*0x[0-9a-fA-F]{16}\s*\*/\s*$")
_INSTR = re.compile(r"/\*[0-9a-fA-F]{4,}\*/")
_ARCH = re.compile(r"(?:code for|\.target)\s+(sm_\d+[af]?)|EF_CUDA_SM(\d+)")


def normalise(text: str) -> str:
    """nvdisasm-style text from cuobjdump, nvdisasm or Compiler Explorer output.

    Raises:
        CutediffError: the text holds no SASS instruction.
    """
    text = text.replace("\r\n", "\n")
    if not _INSTR.search(text):
        raise CutediffError(
            "The SASS text holds no instruction (no /*0000*/ address column).",
            "Give the output of nvdisasm -c, cuobjdump -sass or Compiler Explorer's SASS view.",
        )
    if any(_NVDISASM_TEXT.match(ln) for ln in text.splitlines()):
        return text
    out: list[str] = []
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            name = m.group(1)
            out += [
                f"        .global         {name}",
                f"        .type           {name},@function",
                f'        .other          {name},@"STO_CUDA_ENTRY STV_DEFAULT"',
                f"{name}:",
                f".text.{name}:",
            ]
            continue
        if line.strip().startswith(".headerflags"):
            continue
        stripped = _ENCODING.sub("", line)
        if not stripped.strip() and line.strip():
            continue  # a line that held only the second encoding word
        out.append(stripped)
    normalised = "\n".join(out) + "\n"
    if not any(_NVDISASM_TEXT.match(ln) for ln in out):  # bare instructions: one anonymous kernel
        normalised = (
            '        .global         kernel\n        .other          kernel,@"STO_CUDA_ENTRY STV_DEFAULT"\n'
            "kernel:\n.text.kernel:\n" + normalised
        )
    return normalised


def functions(text: str) -> list[str]:
    """Names of the functions in normalised text, in order (entries first when marked)."""
    from .analysis.sass import parse_sass

    listing = parse_sass(text)
    entries = [f.name for f in listing.functions if f.is_entry]
    return entries or [f.name for f in listing.functions]


def arch_of(text: str) -> str | None:
    """The SASS target named in the text (``code for sm_90a``, ``.target sm_90a``, ``EF_CUDA_SM90``)."""
    m = _ARCH.search(text)
    if not m:
        return None
    return m.group(1) or f"sm_{m.group(2)}"


#: An instruction line of nvdisasm or cuobjdump text (``/*0a10*/ ...``), one per match.
_INSTR_LINE = re.compile(rb"^[ \t]*/\*[0-9a-fA-F]{4,}\*/[^\n]*", re.MULTILINE)


def instruction_lines(data: bytes, chunk: int = 256 << 10, start: int = 0) -> Iterator[list[bytes]]:
    """The instruction lines of a listing, in order, a slice of about ``chunk`` bytes at a time.

    A regular expression over each slice (no per-line Python), so 1M instructions take a few
    tenths of a second; a caller on an event loop awaits between slices. Lines are kept as bytes
    and read one by one when shown (:func:`.analysis.sass.read_instruction_line`). ``start`` is
    where to begin (the start of a line).
    """
    n, pos = len(data), start
    while pos < n:
        end = data.find(b"\n", min(n, pos + chunk))
        end = n if end < 0 else end
        yield _INSTR_LINE.findall(data, pos, end)
        pos = end + 1


def last_instruction_line(data: bytes) -> bytes | None:
    """The last instruction line of a listing (its address sizes the address column)."""
    for back in (1 << 16, 1 << 20, len(data)):
        found = _INSTR_LINE.findall(data, max(0, len(data) - back))
        if found:
            return found[-1]
    return None
