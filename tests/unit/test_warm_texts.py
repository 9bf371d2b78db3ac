"""The disassembly of a watch round: the tools of one cubin run at once, and a cubin whose bytes
were disassembled before (by any build) is not disassembled again.

Real nvdisasm/cuobjdump on a bundled FA4 cubin; which tool ran when is read from the timing
stamps (:func:`cutediff_tui.core.trace.stamp`), not from a mock.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from cutediff_tui.core.analysis.fingerprint import code_digest, section_headers
from cutediff_tui.core.analysis_pipeline import kernel_texts, text_cache_dir
from cutediff_tui.core.trace import TIMING_LOG, stamp, timing_on

CUBIN = Path(__file__).resolve().parents[2] / "samples" / "raw" / "fa4-fwd-sm103a-4.8.0" / "kernel.cubin"


def test_stamps_cost_nothing_unless_collected(stamps):
    stamp("x", t=1.5, side="a")
    assert stamps == [("x", 1.5, {"side": "a"})]
    TIMING_LOG.setLevel(logging.INFO)
    assert not timing_on()
    stamp("y")
    assert len(stamps) == 1


def test_the_tools_of_one_cubin_run_at_once_and_a_known_cubin_is_not_disassembled_again(tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(CUBIN, one / "kernel.cubin")
    first = kernel_texts(
        one / "kernel.cubin", text_cache_dir("build-one", "000"), line_info=True, live=True, plain=False
    )
    assert list(first) == ["sass_g", "res", "lrm"]
    ran = [(name, t) for name, t, _ in stamps if name.startswith("tool: ")]
    started = {n.split()[1]: t for n, t in ran if n.endswith("started")}
    done = {n.split()[1]: t for n, t in ran if n.endswith("done")}
    assert set(started) == set(done) == {"sass_g", "res", "lrm"}
    # the two nvdisasm runs overlap (each takes a few tenths of a second just to start)
    assert started["lrm"] < done["sass_g"] and started["sass_g"] < done["lrm"], ran

    # another build whose cubin has the same bytes (an edit that left the kernel alone): no tool runs
    stamps.clear()
    two = tmp_path / "two"
    two.mkdir()
    shutil.copy(CUBIN, two / "kernel.cubin")
    again = kernel_texts(
        two / "kernel.cubin", text_cache_dir("build-two", "000"), line_info=True, live=True, plain=False
    )
    assert again == first
    assert not [n for n, _, _ in stamps if n.startswith("tool: ")], stamps
    assert (text_cache_dir("build-two", "000") / "lrm.txt").read_text() == first["lrm"]

    # a text the shared entry lacks (the plain listing) is made, and only that one
    plain = kernel_texts(two / "kernel.cubin", text_cache_dir("build-three", "000"), live=True)
    assert [n for n, _, _ in stamps if n.startswith("tool: ") and n.endswith("started")] == ["tool: sass started"]
    assert plain["lrm"] == first["lrm"] and plain["res"] == first["res"]


def test_a_changed_shared_entry_is_not_trusted(tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    first = kernel_texts(CUBIN, text_cache_dir("build-one", "000"), live=True)
    shared = [p for p in (tmp_path / "cache" / "disasm" / "code").iterdir() if p.is_dir()]
    assert len(shared) == 1
    (shared[0] / "lrm.txt").write_text("planted")
    stamps.clear()
    again = kernel_texts(CUBIN, text_cache_dir("build-two", "000"), live=True)
    assert again == first
    assert "tool: lrm started" in [n for n, _, _ in stamps]
    assert (shared[0] / "lrm.txt").read_text() == first["lrm"]  # made again, with a new record


@pytest.mark.parametrize("area", ["cubin", "code"])
def test_a_planted_link_in_place_of_the_shared_entry_is_neither_read_nor_written(tmp_path, monkeypatch, stamps, area):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache" / "disasm").mkdir(parents=True)
    (tmp_path / "cache" / "disasm" / area).symlink_to(elsewhere, target_is_directory=True)
    texts = kernel_texts(CUBIN, text_cache_dir("build-one", "000"), line_info=True, live=True)
    assert texts["lrm"] and not any(elsewhere.iterdir())


def _with_mtime(data: bytes, mtime: int) -> bytes:
    """``data`` (a DSL 4.5 line-info cubin) with another source mtime in its line tables, as a
    save that changes only a comment gives: the first file entry of each ``debug_line`` section
    (DWARF 2: header, include directories, then name, directory, mtime, length as ULEB128)."""
    out = bytearray(data)
    for sec in section_headers(data):
        if not sec.name.endswith(".debug_line") or "rela" in sec.name:
            continue
        b, p = data[sec.offset : sec.offset + sec.size], 15 + data[sec.offset + 14] - 1
        while b[p]:  # include directories
            p = b.index(b"\0", p) + 1
        p = b.index(b"\0", p + 1) + 1  # the first file's name
        while b[p] & 0x80:  # its directory index
            p += 1
        p += 1
        start = p
        while b[p] & 0x80:
            p += 1
        size = p + 1 - start
        enc = bytearray()
        for i in range(size):  # the same number of bytes: nothing else moves
            enc.append(((mtime >> (7 * i)) & 0x7F) | (0x80 if i < size - 1 else 0))
        out[sec.offset + start : sec.offset + start + size] = enc
    return bytes(out)


def test_a_cubin_whose_line_table_alone_changed_shares_every_text_but_the_g_listing(tmp_path, monkeypatch, stamps):
    """DSL 4.5 writes the source file's mtime into the line table: a saved comment gives a new
    cubin with the same code. Its listing, live registers and resources are not made again."""
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    source = CUBIN.parents[1] / "fa4-fwd-sm103a-4.5.1-lineinfo" / "kernel.cubin"
    data = source.read_bytes()
    saved = _with_mtime(data, 1_800_000_000)
    assert saved != data and len(saved) == len(data)
    assert code_digest(saved) == code_digest(data)
    text = next(s for s in section_headers(data) if s.name.startswith(".text."))
    flipped = bytearray(data)
    flipped[text.offset + 8] ^= 0x01  # one bit of the code
    assert code_digest(bytes(flipped)) != code_digest(data)

    one, two = tmp_path / "one.cubin", tmp_path / "two.cubin"
    one.write_bytes(data)
    two.write_bytes(saved)
    first = kernel_texts(one, text_cache_dir("build-one", "000"), line_info=True, live=True)
    stamps.clear()
    again = kernel_texts(two, text_cache_dir("build-two", "000"), line_info=True, live=True)
    started = [n.split()[1] for n, _, _ in stamps if n.startswith("tool: ") and n.endswith("started")]
    assert started == ["sass_g"]  # the only text that reads the line table
    assert again == first  # nvdisasm -g does not print the mtime: all texts agree
