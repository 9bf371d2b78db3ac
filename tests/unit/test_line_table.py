"""Source lines from the cubin's DWARF line table instead of a second nvdisasm run (issue 19).

A line-info cubin that is its side's only build used to be disassembled twice (``-g`` for the
source lines, ``-lrm count`` for the live registers); now the lines come from ``.debug_line``
and the listing must be the very one the two runs gave. Real cubins (the bundled FA4 forward
kernels with line info, a Triton cubin, a plain cubin) and real nvdisasm; which tool ran is read
from the timing stamps.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from cutediff_tui.core.analysis import classes, pressure, spills, tools
from cutediff_tui.core.analysis.line_table import LineTableUnusable, lineinfo_listing, read_line_table
from cutediff_tui.core.analysis.sass import merge_sass, parse_sass
from cutediff_tui.core.analysis_pipeline import kernel_texts, standalone_listing, text_cache_dir
from cutediff_tui.core.errors import CutediffError

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "samples" / "raw"
LINEINFO = [
    RAW / "fa4-fwd-sm103a-4.5.1-lineinfo" / "kernel.cubin",
    RAW / "fa4-fwd-sm103a-4.8.0-lineinfo" / "kernel.cubin",
]
PLAIN = RAW / "fa4-fwd-sm103a-4.8.0" / "kernel.cubin"
TRITON = next((ROOT / "tests" / "integration" / "data" / "triton-cache-a").glob("*/add_kernel.cubin"))


def _old_path(cubin: Path):
    """What the stand-alone line-info path gave before: the ``-g`` and ``-lrm`` listings merged."""
    g = tools.disassemble(cubin, line_info=True)
    lrm = tools.disassemble(cubin, live_ranges=True)
    return g, lrm, merge_sass(parse_sass(g), parse_sass(g), parse_sass(lrm))


def _tools_started(stamps) -> list[str]:
    return [n.split()[1] for n, _, _ in stamps if n.startswith("tool: ") and n.endswith("started")]


def _section(data: bytes, wanted: str) -> tuple[int, int]:
    """(offset, size) of a section of a 64-bit ELF, by name."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    _entsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQ", data, shoff + 64 * i) for i in range(shnum)]
    names = data[hdrs[shstrndx][4] :]
    for name_off, _t, _f, _a, off, size in hdrs:
        if names[name_off : names.index(b"\0", name_off)].decode() == wanted:
            return off, size
    raise KeyError(wanted)


@pytest.mark.parametrize("cubin", LINEINFO, ids=["4.5.1", "4.8.0"])
def test_the_line_table_gives_the_listing_of_nvdisasm_g_with_one_run(cubin, tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    g, lrm, old = _old_path(cubin)
    table = read_line_table(cubin.read_bytes())
    assert table is not None and table.version == 2 and table.has_rows
    # the -g listing, rebuilt: every instruction with its source line, the NOP padding -lrm leaves
    # out, the labels after the last instruction, the listing's flags
    rebuilt = lineinfo_listing(parse_sass(lrm), table)
    assert rebuilt == parse_sass(g)
    assert len(rebuilt) > len(parse_sass(lrm))  # there was padding to rebuild
    assert "inlined at" not in g  # nothing the plain line table could not say

    stamps.clear()
    new, texts = standalone_listing(cubin, text_cache_dir("build", "000"))
    assert sorted(_tools_started(stamps)) == ["lrm", "res"]  # one nvdisasm run, no -g
    assert "sass_g" not in texts and new.merge is not None and new.merge.lineinfo == "exact"
    assert new == old
    # so every figure read from the listing is the same, line attributions included
    fn, fo = new.main, old.main
    assert spills.spill_sites(fn) == spills.spill_sites(fo)
    assert classes.per_line_counts(fn) == classes.per_line_counts(fo)
    assert pressure.per_line_max(fn, "gpr") == pressure.per_line_max(fo, "gpr") != {}
    assert sum(1 for i in fn.instrs if i.line is not None) > 0.9 * len(fn.instrs)

    stamps.clear()  # read again (the analysis and the TUI both do): from the cache, no tool
    again, _ = standalone_listing(cubin, text_cache_dir("build", "000"))
    assert again == old and _tools_started(stamps) == []


def test_a_cubin_without_line_info_takes_the_g_listing(tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    assert read_line_table(PLAIN.read_bytes()) is None
    _g, _lrm, old = _old_path(PLAIN)
    stamps.clear()
    listing, texts = standalone_listing(PLAIN, text_cache_dir("plain", "000"))
    assert sorted(_tools_started(stamps)) == ["lrm", "res", "sass_g"]
    assert listing == old and not listing.has_line_info and "sass_g" in texts


def test_a_triton_cubin_whose_lrm_nvdisasm_refuses_takes_the_g_listing(tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    assert read_line_table(TRITON.read_bytes()) is not None  # Triton writes line info too
    old_texts = kernel_texts(TRITON, None, line_info=True, live=True, plain=False)
    assert old_texts.get("lrm_failed")  # nvdisasm reads Triton cubins in its old format only
    stamps.clear()
    listing, texts = standalone_listing(TRITON, text_cache_dir("triton", "000"))
    assert texts["sass_g"] == old_texts["sass_g"] and texts["lrm_failed"] == old_texts["lrm_failed"]
    g = old_texts["sass_g"]
    assert listing == merge_sass(parse_sass(g), parse_sass(g), parse_sass(g))
    assert listing.has_line_info
    assert _tools_started(stamps).count("sass_g") == 1  # made once, when -lrm was refused


def test_a_row_between_instructions_falls_back_to_the_g_listing(tmp_path, monkeypatch, stamps):
    """A table that disagrees with the listing is never trusted: nvdisasm -g says what it shows."""
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    data = bytearray(LINEINFO[1].read_bytes())
    off, size = _section(bytes(data), ".debug_line")
    body = bytes(data[off : off + size])
    table = read_line_table(bytes(data))
    assert table is not None
    # the first DW_LNS_advance_pc with a one-byte operand of 16: advance by 8 instead
    k = next(i for i in range(size - 1) if body[i] == 2 and body[i + 1] == 16 and i > 0x16E)
    data[off + k + 1] = 8
    cubin = tmp_path / "kernel.cubin"
    cubin.write_bytes(bytes(data))
    with pytest.raises(LineTableUnusable, match="no instruction starts"):
        lineinfo_listing(parse_sass(tools.disassemble(cubin, live_ranges=True)), read_line_table(bytes(data)))
    _g, _lrm, old = _old_path(cubin)
    stamps.clear()
    listing, texts = standalone_listing(cubin, text_cache_dir("moved", "000"))
    assert "sass_g" in texts and "sass_g" in _tools_started(stamps)
    assert listing == old
    assert any(n == "analysis: line table not used" and "no instruction starts" in f["why"] for n, _, f in stamps)


def test_a_damaged_line_table_falls_back_and_never_raises_anything_else(tmp_path, monkeypatch, stamps):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    good = LINEINFO[0].read_bytes()
    off, size = _section(good, ".debug_line")
    rng = random.Random(19)
    for _ in range(200):  # flipped bytes anywhere in the section: a table, or one refusal
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[off + rng.randrange(size)] = rng.randrange(256)
        try:
            read_line_table(bytes(data))
        except LineTableUnusable:
            pass
    # the version made unknown: the table is refused and the listing is nvdisasm's -g one
    data = bytearray(good)
    data[off + 4 : off + 6] = struct.pack("<H", 9)
    with pytest.raises(LineTableUnusable, match="version 9"):
        read_line_table(bytes(data))
    long = bytearray(good)  # a program longer than its section
    long[off : off + 4] = struct.pack("<I", size + 100)
    with pytest.raises(LineTableUnusable, match="past the end"):
        read_line_table(bytes(long))
    cubin = tmp_path / "kernel.cubin"
    cubin.write_bytes(bytes(data))
    stamps.clear()
    try:
        listing, texts = standalone_listing(cubin, text_cache_dir("damaged", "000"))
    except CutediffError as exc:  # nvdisasm may refuse the damaged table too: then one sentence
        assert "nvdisasm" in str(exc)
    else:
        assert "sass_g" in texts
        assert listing == merge_sass(parse_sass(texts["sass_g"]), parse_sass(texts["sass_g"]), parse_sass(texts["lrm"]))
    assert any(n == "analysis: line table not used" and "version 9" in f["why"] for n, _, f in stamps)
