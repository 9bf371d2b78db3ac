"""The code digest (issue 19) shares a build's plain listing, ``-lrm`` listing and resource usage
with every cubin of the same digest: two cubins whose nvdisasm output differs must not share them.

Real nvdisasm on the bundled FA4 cubin, patched in one section-header field the digest leaves
out. ``code_digest`` hashes each section's name, type, size, link, info and contents, but not its
``sh_flags``, ``sh_addralign``, ``sh_addr`` or ``sh_entsize``; ``nvdisasm -c`` prints the first of
these for a kernel's ``.text`` section (``.sectionflags @"SHF_BARRIERS=N"``, the named-barrier
count ptxas records there) and the alignment (``.align N``).
"""

from __future__ import annotations

import shutil
import struct

from cutediff_tui.core.analysis import tools
from cutediff_tui.core.analysis.fingerprint import section_headers
from cutediff_tui.core.analysis_pipeline import kernel_texts, text_cache_dir

from .helpers import CUBIN_480


def _with_barriers(data: bytes, count: int) -> bytes:
    """``data`` with the kernel's ``.text`` section flags holding ``count`` named barriers."""
    out = bytearray(data)
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    (shentsize,) = struct.unpack_from("<H", data, 0x3A)
    index = next(i for i, s in enumerate(section_headers(data)) if s.name.startswith(".text."))
    at = shoff + index * shentsize + 8  # sh_flags
    (flags,) = struct.unpack_from("<Q", data, at)
    struct.pack_into("<Q", out, at, (flags & ~(0x7F << 20)) | (count << 20))
    return bytes(out)


def test_cubins_whose_listings_differ_do_not_share_the_plain_listing(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    data = CUBIN_480.read_bytes()
    one, two = tmp_path / "one.cubin", tmp_path / "two.cubin"
    shutil.copy(CUBIN_480, one)
    two.write_bytes(_with_barriers(data, 5))
    own = tools.disassemble(two)
    assert 'SHF_BARRIERS=5"' in own and "SHF_BARRIERS" not in tools.disassemble(one)

    kernel_texts(one, text_cache_dir("build-one", "000"), live=True)
    shown = kernel_texts(two, text_cache_dir("build-two", "000"), live=True)
    assert "SHF_BARRIERS=5" in shown["sass"], "the patched cubin got the first cubin's listing"
