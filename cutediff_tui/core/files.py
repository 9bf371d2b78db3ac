"""Reading and writing files that may come from someone else, safely.

Reading: kernel artifacts may be stored gzip-compressed (in saved result folders); a file is read
only when it is a regular file (a FIFO or a device would block or never end) and never inflates
past :data:`LIMITS.file_bytes` (a 4 MB ``.gz`` can hold 4 GiB). Writing: :func:`check_output`
refuses an output that is a symbolic link, an input of the same command, or (without ``force``)
a file that exists.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import CutediffError

__all__ = [
    "LIMITS",
    "Limits",
    "check_output",
    "display",
    "read_artifact",
    "read_bounded",
    "read_text",
    "refuse_irregular",
]


@dataclass
class Limits:
    """Bounds on what cutediff reads from files it did not make (raised with ``cutediff --max-…``
    or the matching ``CUTEDIFF_MAX_…`` environment variable)."""

    file_bytes: int = int(os.environ.get("CUTEDIFF_MAX_FILE_MB", "512")) * 1024 * 1024
    """Largest file, after decompression, read from a result or an artifact folder."""
    string_chars: int = int(os.environ.get("CUTEDIFF_MAX_STRING", "4000000"))
    """Longest single string (a kernel name, a log) accepted in a result."""
    kernels: int = int(os.environ.get("CUTEDIFF_MAX_KERNELS", "100000"))
    """Most kernels accepted in one result."""


LIMITS = Limits()


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def refuse_irregular(path: Path, what: str = "file") -> None:
    """Raise one sentence when ``path`` exists but is not a regular file (a FIFO, a device, a
    socket): opening one could block forever or read without end."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(st.st_mode)
        else "a character device"
        if stat.S_ISCHR(st.st_mode)
        else "a block device"
        if stat.S_ISBLK(st.st_mode)
        else "a socket"
        if stat.S_ISSOCK(st.st_mode)
        else "not a regular file"
    )
    raise CutediffError(
        f"{display(path)} is {kind}, not a regular {what}, so cutediff does not open it (it could block or never end).",
        "Give a regular file.",
    )


def _too_big(path: Path, size: str) -> CutediffError:
    return CutediffError(
        f"{display(path)} is larger than cutediff reads ({size}; the limit is {_mib(LIMITS.file_bytes)}).",
        "Raise the limit with cutediff --max-file-mb N (or CUTEDIFF_MAX_FILE_MB) if the file is genuine.",
    )


def read_bounded(path: Path) -> bytes:
    """The bytes of a regular file no larger than the limit; gzip files (``.gz``) decompressed,
    stopping as soon as the output passes the limit."""
    path = Path(path)
    refuse_irregular(path)
    limit = LIMITS.file_bytes
    with open(path, "rb") as fh:
        if path.suffix != ".gz":
            data = fh.read(limit + 1)
            if len(data) > limit:
                raise _too_big(path, "more than the limit")
            return data
        parts: list[bytes] = []
        total = 0
        d = zlib.decompressobj(wbits=31)
        pending = b""
        while True:
            chunk = pending or fh.read(4 << 20)
            pending = b""
            if not chunk:
                break
            while chunk:
                try:
                    piece = d.decompress(chunk, limit + 1 - total)
                except zlib.error as exc:
                    raise gzip.BadGzipFile(str(exc)) from None
                parts.append(piece)
                total += len(piece)
                if total > limit:
                    raise _too_big(path, "more than the limit once decompressed")
                chunk = d.unconsumed_tail
                if d.eof:  # another gzip member may follow
                    pending = d.unused_data
                    d = zlib.decompressobj(wbits=31)
                    break
        return b"".join(parts)


def read_artifact(kdir: Path, name: str) -> bytes | None:
    """``kdir/name`` or ``kdir/name.gz``, decompressed (bounded); None when neither exists."""
    p = Path(kdir) / name
    if p.exists() or p.is_symlink():
        refuse_irregular(p, "artifact")
        if p.is_file():
            return read_bounded(p)
    gz = p.with_name(p.name + ".gz")
    if gz.exists():
        refuse_irregular(gz, "artifact")
        if gz.is_file():
            return read_bounded(gz)
    return None


def read_text(kdir: Path, name: str) -> str | None:
    data = read_artifact(kdir, name)
    return None if data is None else data.decode(errors="replace")


def display(text: object) -> str:
    """A path or name as printable text: bytes that are not UTF-8 (kept by Python as surrogates in
    file names) become U+FFFD instead of failing when printed or encoded."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def is_char_device(path: Path) -> bool:
    """Whether ``path`` itself (not a link to it) is a character device (``/dev/null``, a tty)."""
    try:
        return stat.S_ISCHR(os.lstat(path).st_mode)
    except OSError:
        return False


def check_output(path: Path, *, inputs: Iterable[Path] = (), force: bool = False, option: str = "-o") -> Path:
    """Refuse, in one sentence, an output that would destroy something: a symbolic link (writing
    would follow it), an input of the same command or a file inside an input folder, or a file
    that exists (unless ``force``). A character device (``-o /dev/null``, a terminal) destroys
    nothing: taken as it is. Returns the path."""
    path = Path(path)
    if is_char_device(path):
        return path
    if path.is_symlink():
        raise CutediffError(
            f"{option} {display(path)} is a symbolic link; cutediff does not write through links "
            "(it would overwrite the file the link points to).",
            "Remove the link or choose another path.",
        )
    for src in inputs:
        src = Path(src)
        inside = False
        if src.is_dir() and path.exists():
            try:
                path.resolve().relative_to(src.resolve())
                inside = True
            except (ValueError, OSError):
                pass
        if _same(path, src) or inside:
            raise CutediffError(
                f"{option} {display(path)} is an input of this command ({display(src)}); writing it would "
                "destroy what is being read.",
                "Choose another output path.",
            )
    if path.exists() and not force:
        raise CutediffError(
            f"{option} {display(path)} already exists and cutediff does not overwrite files unasked.",
            "Pass --force to replace it, or choose another path.",
        )
    if path.exists():
        refuse_irregular(path, "output file")
    return path
