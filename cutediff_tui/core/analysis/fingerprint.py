"""Identify which toolchain produced a PTX file or a cubin, and for which architecture.

Cubin layout notes (checked on cubins written by ptxas 12.8, 13.0, 13.1 and 13.4):

* ``e_ident[EI_ABIVERSION]`` is 7 for the old CUDA ELF ABI (ptxas 12.x for sm_90 and
  older) and 8 for the new one (ptxas 12.8+ for Blackwell, every target with ptxas 13).
* ABI 7: the SM number is the low byte of ``e_flags`` (``0x5a`` = 90), bit 11
  (``0x800``, EF_CUDA_ACCELERATORS_V1) marks an ``a`` target, bits 16-23 hold the
  virtual SM. ``sm_90a`` from ptxas 12.8 has ``e_flags = 0x005a0d5a``.
* ABI 8: the SM number is in bits 8-15 (``0x6702`` -> 103). ptxas 12.8/12.9 set bit 3
  (``0x8``, EF_CUDA_ACCELERATORS) for ``a`` targets (``sm_100a``: ``0x0600640a``), but
  ptxas 13.x leaves ``e_flags`` identical for ``sm_100``/``sm_100a``/``sm_100f``
  (``0x06006402``) and records ``a`` in the ``.nv.compat`` section instead: attribute
  9 (one-byte value) is 1 for an ``a`` target, 0 otherwise. ``f`` targets cannot be told
  from the plain ones (nvdisasm prints ``.target sm_100`` for both).
* ``.note.nv.tkinfo`` (ptxas 12.8+): NVIDIA note type 2000 whose descriptor is six
  32-bit words (format, reserved, then offsets of tool name, tool version, build branch
  and tool options into the string blob that follows): ``ptxas``,
  ``Cuda compilation tools, release 13.4, V13.4.59``, ``-O 3 -arch sm_103a``.
* ``.note.nv.cuinfo`` (ptxas 13.x; type 1000): ``u16 format, u16 sm, u32 toolkit``
  with toolkit ``134`` for 13.4. ptxas 12.8 writes ``.note.nv.cuver`` (``u16 format,
  u16 sm, ...``) instead.
"""

from __future__ import annotations

import re
import struct
from typing import NamedTuple

from cutediff_tui.core.errors import CutediffError

__all__ = [
    "ptx_toolchain",
    "cubin_toolchain",
    "cubin_arch",
    "cubin_sections",
    "code_digest",
    "section_headers",
    "Section",
]

_RELEASE_RE = re.compile(r"Cuda compilation tools,\s*release\s+(\d+\.\d+)(?:,\s*V(\d+(?:\.\d+)+))?")
_EM_CUDA = 190
_NV_NOTE_NAME = b"NVIDIA Corp"


def ptx_toolchain(ptx_text: str) -> str | None:
    """Return the CUDA release that generated a PTX file (``"13.4"``), from its banner comment."""
    m = _RELEASE_RE.search((ptx_text or "")[:4096])
    return m.group(1) if m else None


def _check_elf(data: bytes) -> None:
    if not data:
        raise CutediffError("The cubin is empty (no ELF header).")
    if not data.startswith(b"\x7fELF"):
        raise CutediffError(f"Not a CUDA cubin (no ELF header): starts with {data[:8]!r}.")
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise CutediffError("Not a CUDA cubin: truncated or not a 64-bit little-endian ELF.")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != _EM_CUDA:
        raise CutediffError(f"Not a CUDA cubin: ELF machine {machine}, expected EM_CUDA ({_EM_CUDA}).")


class Section(NamedTuple):
    """One section header of a cubin, in section-index order (relocations and symbols refer to
    sections by that index)."""

    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int
    flags: int = 0
    addr: int = 0
    addralign: int = 0
    entsize: int = 0


def section_headers(data: bytes) -> list[Section]:
    """The section headers of a 64-bit cubin, in index order.

    Raises:
        CutediffError: not a 64-bit little-endian CUDA ELF, or a truncated one.
    """
    _check_elf(data)
    try:
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shoff == 0 or shnum == 0:
            return []
        if shoff + shnum * shentsize > len(data):
            raise CutediffError("The cubin is truncated: its section header table lies past the end of the file.")
        if shentsize < 64:
            raise CutediffError(f"The cubin is malformed: its section headers are {shentsize} bytes, not 64.")
        if shstrndx >= shnum:
            raise CutediffError(
                f"The cubin is malformed: its section-name table is section {shstrndx}, but it has {shnum} sections."
            )
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        str_off, str_size = hdrs[shstrndx][4], hdrs[shstrndx][5]
        if str_off + str_size > len(data):
            raise CutediffError("The cubin is truncated: its section-name table lies past the end of the file.")
        strtab = data[str_off : str_off + str_size]
        out: list[Section] = []
        for name_off, sh_type, flags, addr, off, size, link, info, addralign, entsize in hdrs:
            end = strtab.find(b"\0", name_off)
            name = strtab[name_off : end if end >= 0 else None].decode("utf-8", "replace")
            out.append(Section(name, sh_type, off, size, link, info, flags, addr, addralign, entsize))
        return out
    except struct.error as e:
        raise CutediffError(f"The cubin is truncated or malformed: {e}.") from None


def cubin_sections(data: bytes) -> dict[str, tuple[int, bytes]]:
    """Return section name -> (sh_type, contents) of a 64-bit cubin (NOBITS sections are empty).

    Raises:
        CutediffError: not a 64-bit little-endian CUDA ELF, or a truncated one.
    """
    return {s.name: (s.type, b"" if s.type == 8 else data[s.offset : s.offset + s.size]) for s in section_headers(data)}


_DEBUG_SECTION = re.compile(r"(\.nv\.merc)?(\.rela?)?\.(debug_|nv_debug)")
"""Debug sections (line tables, frames, the PTX text), their relocations and their ``.nv.merc``
copies (sm_100 and later)."""


def code_digest(data: bytes) -> str:
    """A digest of everything in a cubin but its debug sections (line tables and their
    relocations): two cubins with one code digest have one listing without line info, one
    ``-lrm`` listing and one resource usage. DSL 4.5 writes the source file's mtime into
    ``.debug_line``, so a saved comment changes the cubin but not this digest.

    Raises:
        CutediffError: not a 64-bit little-endian CUDA ELF, or a truncated one.
    """
    import hashlib

    # the ELF header's identity, type, machine, version and e_flags (the arch); not its offsets,
    # which move when a line table grows
    h = hashlib.sha256(data[:24] + data[0x30:0x34])
    for sec in section_headers(data):
        if _DEBUG_SECTION.match(sec.name):
            continue
        # every header field but the offset (where the section lies in the file): nvdisasm prints
        # flags (.sectionflags), alignment (.align) and entry size (.sectionentsize)
        h.update(repr(sec._replace(offset=0)).encode())
        if sec.type != 8:  # NOBITS: no contents in the file
            h.update(data[sec.offset : sec.offset + sec.size])
    return h.hexdigest()[:32]


def _notes(body: bytes) -> list[tuple[bytes, int, bytes]]:
    out = []
    i = 0
    while i + 12 <= len(body):
        namesz, descsz, ntype = struct.unpack_from("<III", body, i)
        i += 12
        name = body[i : i + namesz].rstrip(b"\0")
        i += (namesz + 3) & ~3
        desc = body[i : i + descsz]
        i += (descsz + 3) & ~3
        out.append((name, ntype, desc))
    return out


def _compat_attrs(body: bytes) -> dict[int, int | bytes]:
    """Decode ``.nv.compat`` (EIFMT-style records: fmt, attr, value)."""
    out: dict[int, int | bytes] = {}
    i = 0
    while i + 2 <= len(body):
        fmt, attr = body[i], body[i + 1]
        if fmt == 1:  # no value
            out[attr] = 0
            i += 2
        elif fmt == 2:  # byte value (padded to 4)
            out[attr] = body[i + 2] if i + 2 < len(body) else 0
            i += 4
        elif fmt == 3:  # 16-bit value
            out[attr] = struct.unpack_from("<H", body, i + 2)[0] if i + 4 <= len(body) else 0
            i += 4
        elif fmt == 4:  # sized blob
            if i + 4 > len(body):
                break
            (size,) = struct.unpack_from("<H", body, i + 2)
            out[attr] = body[i + 4 : i + 4 + size]
            i += 4 + size
        else:
            break
    return out


def _tkinfo(desc: bytes) -> dict[str, str]:
    if len(desc) < 24:
        return {}
    offs = struct.unpack_from("<6I", desc, 0)
    blob = desc[24:]

    def at(o: int) -> str:
        if o >= len(blob):
            return ""
        e = blob.find(b"\0", o)
        return blob[o : e if e >= 0 else None].decode("utf-8", "replace").strip()

    return {"tool": at(offs[2]), "tool_version": at(offs[3]), "build": at(offs[4]), "options": at(offs[5])}


def cubin_arch(data: bytes) -> str:
    """Return the SASS target of a cubin (``"sm_103a"``, ``"sm_90a"``, ``"sm_100"``).

    Raises:
        CutediffError: not a CUDA cubin.
    """
    _check_elf(data)
    abi = data[8]
    (flags,) = struct.unpack_from("<I", data, 0x30)
    if abi >= 8:
        sm = (flags >> 8) & 0xFF
        accel = bool(flags & 0x8)
        if not accel:
            try:
                sec = cubin_sections(data).get(".nv.compat")
            except CutediffError:
                sec = None
            if sec is not None:
                accel = _compat_attrs(sec[1]).get(9) == 1
    else:
        sm = flags & 0xFF
        accel = bool(flags & 0x800)
    return f"sm_{sm}" + ("a" if accel else "")


def cubin_toolchain(data: bytes) -> dict:
    """Describe the assembler that wrote a cubin, from its ELF notes.

    Returns:
        ``{"tool": "ptxas", "version": "13.4.59", "release": "13.4", "toolkit": "13.4",
        "arch": "sm_103a", "options": "-O 3 -arch sm_103a", "lineinfo": False,
        "abi": 8, "e_flags": "0x6006702"}``; keys whose note is absent hold None.
    """
    arch = cubin_arch(data)
    secs = cubin_sections(data)
    out: dict = {
        "tool": None,
        "version": None,
        "release": None,
        "toolkit": None,
        "arch": arch,
        "options": None,
        "lineinfo": None,
        "abi": data[8],
        "e_flags": hex(struct.unpack_from("<I", data, 0x30)[0]),
    }
    tk = secs.get(".note.nv.tkinfo")
    if tk:
        for name, ntype, desc in _notes(tk[1]):
            if name == _NV_NOTE_NAME and ntype == 2000:
                info = _tkinfo(desc)
                out["tool"] = info.get("tool") or None
                m = _RELEASE_RE.search(info.get("tool_version", ""))
                if m:
                    out["release"] = m.group(1)
                    out["version"] = m.group(2) or m.group(1)
                out["options"] = " ".join((info.get("options") or "").split()) or None
                if out["options"] is not None:
                    out["lineinfo"] = "-lineinfo" in out["options"].split()
    for sec_name in (".note.nv.cuinfo", ".note.nv.cuver"):
        sec = secs.get(sec_name)
        if not sec:
            continue
        for name, ntype, desc in _notes(sec[1]):
            if name == _NV_NOTE_NAME and ntype == 1000 and len(desc) >= 8 and sec_name == ".note.nv.cuinfo":
                (tkv,) = struct.unpack_from("<I", desc, 4)
                if tkv:
                    out["toolkit"] = f"{tkv // 10}.{tkv % 10}"
    if out["toolkit"] is None and out["release"]:
        out["toolkit"] = out["release"]
    return out
