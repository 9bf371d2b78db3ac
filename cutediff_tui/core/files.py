"""Reading kernel artifacts that may be stored gzip-compressed (in saved result folders)."""

from __future__ import annotations

import gzip
from pathlib import Path


def read_artifact(kdir: Path, name: str) -> bytes | None:
    """``kdir/name`` or ``kdir/name.gz``, decompressed; None when neither exists."""
    p = Path(kdir) / name
    if p.is_file():
        return p.read_bytes()
    gz = p.with_name(p.name + ".gz")
    if gz.is_file():
        return gzip.decompress(gz.read_bytes())
    return None


def read_text(kdir: Path, name: str) -> str | None:
    data = read_artifact(kdir, name)
    return None if data is None else data.decode(errors="replace")


def display(text: object) -> str:
    """A path or name as printable text: bytes that are not UTF-8 (kept by Python as surrogates in
    file names) become U+FFFD instead of failing when printed or encoded."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
