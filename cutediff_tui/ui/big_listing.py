"""Huge SASS listings: the raw listing at once, the aligned view from a child process.

Parsing and aligning 2 x 1M instructions takes tens of seconds of Python; in a thread of the TUI
it holds the GIL and every key waits. For a kernel with at least :data:`~cutediff_tui.ui.model.BIG_LISTING`
instructions on a side, :func:`stage_sass` instead

1. starts ``python -m cutediff_tui.core.packed_sass`` (:mod:`cutediff_tui.core.packed_sass`),
   which parses and aligns in its own process;
2. meanwhile reads each side's SASS text (decompression in a thread, which frees the GIL) and
   finds its instruction lines with a regular expression, a slice at a time with an ``await``
   between slices, and yields a :class:`RawPaneModel`: each side's instructions, unaligned,
   read line by line only when drawn, with :attr:`PaneModel.pending` saying why;
3. yields the child's progress lines (``str``), then a :class:`PackedPaneModel` over the flat
   arrays the child wrote: lines, rows and hunks are made when asked for, so nothing holds
   millions of objects.

The whole of it runs on the event loop (an async worker): no step holds it for more than a few
milliseconds, and the child is killed when the worker is cancelled or the TUI exits (its stdin
closing ends it too).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import shutil
import sys
import tempfile
from array import array
from collections.abc import AsyncGenerator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from cutediff_tui.core.analysis.sass import read_instruction_line
from cutediff_tui.core.analysis_pipeline import listing_bytes, listing_head
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.model.match import InstructionMatch
from cutediff_tui.core.model.types import SIDES
from cutediff_tui.core.packed_sass import KINDS, PackedSide, iter_text_lines, read_packed, request_for
from cutediff_tui.core.sass_text import instruction_lines, last_instruction_line

from .model import BIG_LISTING, CodeLine, PaneModel, Row, RowHunk, SideLines, is_big, side_note

__all__ = ["BIG_LISTING", "is_big", "RawPaneModel", "PackedPaneModel", "stage_sass"]

_SPILL_OPS = frozenset(("STL", "LDL"))


# ---------------------------------------------------------------------- lazy sequences


class _Lazy(Sequence):
    """A sequence whose items are made on access (slices give lists)."""

    def _item(self, i: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._item(i)

    def __iter__(self) -> Iterator:
        return (self._item(k) for k in range(len(self)))


class RawLines(_Lazy):
    """Instruction lines as found in the text (bytes), read into :class:`CodeLine` when drawn."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self._cache: dict[int, CodeLine] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def _item(self, i: int) -> CodeLine:
        hit = self._cache.get(i)
        if hit is not None:
            return hit
        raw = self.lines[i].decode("utf-8", "replace")
        ins = read_instruction_line(raw)
        if ins is None:
            line = CodeLine(text=raw.strip())
        else:
            spill = "SpillRefill" in ins.tags or (not ins.tags and ins.base in _SPILL_OPS)
            line = CodeLine(ins.text, ins.addr, spill, live=ins.live[0] if ins.live else None, opcode=ins.base)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[i] = line
        return line


class RawRows(_Lazy):
    """Row ``r`` pairs line ``r`` of A with line ``r`` of B (no alignment yet); grows with them."""

    def __init__(self, a: list, b: list) -> None:
        self.a, self.b = a, b

    def __len__(self) -> int:
        return max(len(self.a), len(self.b))

    def _item(self, r: int) -> Row:
        return Row("same", r if r < len(self.a) else None, r if r < len(self.b) else None)


class PackedLines(_Lazy):
    """One side's instructions from the child's arrays."""

    def __init__(self, side: PackedSide) -> None:
        self.side = side

    def __len__(self) -> int:
        return len(self.side.addrs)

    def _item(self, i: int) -> CodeLine:
        p = self.side
        text = p.texts[i]
        k = p.loc[i]
        file, line, chain = p.locs[k] if k >= 0 else (None, None, ())
        live = p.live[i]
        body = text[text.find(" ") + 1 :] if text.startswith("@") else text
        opcode = body.split(" ", 1)[0].split(".", 1)[0]
        return CodeLine(
            text, p.addrs[i], bool(p.spill[i]), file, line, tuple(chain), None if live < 0 else live, opcode
        )


class PackedRows(_Lazy):
    """Aligned rows from kind codes and the instruction index of each side (-1: a gap)."""

    def __init__(self, kinds: bytes, a: array, b: array) -> None:
        self.kinds, self.a, self.b = kinds, a, b

    def __len__(self) -> int:
        return len(self.kinds)

    def _item(self, r: int) -> Row:
        i, j = self.a[r], self.b[r]
        return Row(KINDS[self.kinds[r]], None if i < 0 else i, None if j < 0 else j)


class PackedHunks(_Lazy):
    """Hunks in row order from start/end/kind arrays and their summaries."""

    def __init__(self, start: array, end: array, kind: bytes, summary: list[str]) -> None:
        self.start, self.end, self.kind, self.summary = start, end, kind, summary

    def __len__(self) -> int:
        return len(self.start)

    def _item(self, k: int) -> RowHunk:
        return RowHunk(self.start[k], self.end[k], KINDS[self.kind[k]], self.summary[k])


# ---------------------------------------------------------------------- models


@dataclass(eq=False)
class RawPaneModel(PaneModel):
    """Each side's instructions as they stand in the text, unaligned, while the aligner runs."""

    def __post_init__(self) -> None:
        for s in SIDES:
            self._row_of[s] = _Identity(self.side(s).lines)  # type: ignore[assignment]
            self._spills[s] = []
        self._hunk_starts = []

    def row_in(self, other: PaneModel, row: int, s: str) -> int:
        """The row of ``other`` showing the instruction on ``row`` of side ``s`` here (by address)."""
        line = self.line_at(row, s)
        if line is None or line.addr is None:
            return 0
        found = other.find_addr(s, line.addr)
        return 0 if found is None else found


@dataclass(eq=False)
class PackedPaneModel(PaneModel):
    """The aligned view over the child's arrays: lookups use the arrays, not the lines."""

    packed: dict[str, PackedSide] = field(default_factory=dict, repr=False)
    _changed_starts: array = field(default_factory=lambda: array("i"), repr=False)

    def __post_init__(self) -> None:
        for s in SIDES:
            p = self.packed.get(s)
            self._row_of[s] = p.row_of if p is not None else []  # type: ignore[assignment]
            self._spills[s] = p.spill_rows if p is not None else []  # type: ignore[assignment]
        hunks = self.hunks
        assert isinstance(hunks, PackedHunks)
        self._hunk_starts = hunks.start  # type: ignore[assignment]
        regalloc = KINDS.index("regalloc")
        self._changed_starts = array("i", [k for k, c in enumerate(hunks.kind) if c != regalloc])

    def texts(self, s: str) -> Sequence[str]:
        p = self.packed.get(s)
        return p.texts if p is not None else []

    def next_hunk(self, row: int, step: int = 1, *, skip_regalloc: bool = True) -> RowHunk | None:
        hunks = self.hunks
        if not len(hunks):
            return None
        if skip_regalloc and len(self._changed_starts):
            ks = self._changed_starts
            starts: Sequence[int] = _Starts(self._hunk_starts, ks)
        else:
            ks = None
            starts = self._hunk_starts
        if step > 0:
            k = bisect.bisect_right(starts, row) % len(starts)
        else:
            k = (bisect.bisect_left(starts, row) - 1) % len(starts)
        return hunks[ks[k] if ks is not None else k]

    def find_addr(self, s: str, addr: int) -> int | None:
        p = self.packed.get(s)
        if p is None or not len(p.addrs):
            return None
        k = bisect.bisect_right(p.addrs, addr) - 1
        return None if k < 0 else self.row_of(s, k)

    def find_source(self, s: str, line: int, file: str | None = None, after: int = -1) -> int | None:
        p = self.packed.get(s)
        if p is None:
            return None
        wanted = {k for k, (f, ln, _c) in enumerate(p.locs) if ln == line and (file is None or f.endswith(file))}
        if not wanted:
            return None
        hits = sorted(self.row_of(s, i) for i, k in enumerate(p.loc) if k in wanted)
        k = bisect.bisect_right(hits, after)
        return hits[k % len(hits)]

    def pressure(self, s: str, buckets: int = 100) -> list[int]:
        p = self.packed.get(s)
        return list(p.pressure) if p is not None else []


class _Identity(Sequence):
    """Row ``i`` holds line ``i`` (a raw view), for as many lines as the list has now."""

    def __init__(self, lines: Sequence) -> None:
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return list(range(len(self)))[i]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return i % len(self)


class _Starts(Sequence):
    """``starts[ks[k]]`` as a sequence (the starts of the hunks that are not register renames)."""

    def __init__(self, starts: Sequence[int], ks: Sequence[int]) -> None:
        self.starts, self.ks = starts, ks

    def __len__(self) -> int:
        return len(self.ks)

    def __getitem__(self, k):  # type: ignore[override]
        return self.starts[self.ks[k]]


# ---------------------------------------------------------------------- staging


def _notes(comparison: dict, kernel: dict) -> dict[str, str | None]:
    return {s: side_note(comparison, kernel, s) for s in SIDES}


class _RawScan:
    """Instruction lines of each side's text: the head first (the first paint), then the rest."""

    def __init__(self, sides: Sequence[str], top: int) -> None:
        self.found: dict[str, list[bytes]] = {s: [] for s in sides}
        self.pos: dict[str, int] = dict.fromkeys(sides, 0)
        self.width = 0
        self.top = top

    def _add(self, s: str, part: list[bytes]) -> None:
        self.found[s].extend(part)
        self.width = max(self.width, max(map(len, part), default=0))

    def head(self, s: str, head: bytes) -> None:
        """Scan the first whole lines of a side's text (:func:`listing_head`)."""
        for part in instruction_lines(head):
            self._add(s, part)
        self.pos[s] = len(head)

    async def rest(self, s: str, data: bytes) -> None:
        """Scan the whole text from where :meth:`head` stopped, awaiting between slices."""
        last = last_instruction_line(data)
        ins = read_instruction_line(last.decode("utf-8", "replace")) if last else None
        if ins is not None:
            self.top = max(self.top, ins.addr)
        for part in instruction_lines(data, start=self.pos[s]):
            self._add(s, part)
            await asyncio.sleep(0)
        self.pos[s] = len(data)


def _raw_model(scan: _RawScan, notes: dict[str, str | None], pending: str) -> RawPaneModel:
    sides = {}
    for s in SIDES:
        if s in scan.found:
            sides[s] = SideLines(RawLines(scan.found[s]))  # type: ignore[arg-type]
        else:
            sides[s] = SideLines(note=notes[s] or "Nothing to show.")
    model = RawPaneModel(
        "sass",
        "sass",
        sides["a"],
        sides["b"],
        RawRows(scan.found.get("a", []), scan.found.get("b", [])),  # type: ignore[arg-type]
        addr_width=max(4, len(f"{scan.top:x}")),
        pending=pending,
    )
    _raw_grew(model, scan, done=False)
    return model


def _raw_grew(model: RawPaneModel, scan: _RawScan, done: bool) -> None:
    model.text_width = scan.width
    model.addr_width = max(4, len(f"{scan.top:x}"))
    for s, lines in scan.found.items():
        model.side(s).caption = f"{len(lines):,} instr, raw" + ("" if done else " (reading…)")


async def _packed_model(data: bytes, notes: dict[str, str | None]) -> PackedPaneModel:
    header, blobs = read_packed(data)
    packed: dict[str, PackedSide] = {}
    sides: dict[str, SideLines] = {}
    for s in SIDES:
        info = header["sides"].get(s)
        if info is None:
            sides[s] = SideLines(note=notes[s] or "Nothing to show.")
            continue
        n = header["counts"][s]
        texts: list[str] = []
        for part in iter_text_lines(blobs[f"{s}.texts"], n):
            texts.extend(part)
            await asyncio.sleep(0)

        def arr(code: str, name: str, s: str = s) -> array:
            a = array(code)
            a.frombytes(blobs[f"{s}.{name}"])
            return a

        p = PackedSide(
            name=info["name"],
            texts=texts,
            addrs=arr("q", "addrs"),
            spill=bytes(blobs[f"{s}.spill"]),
            live=arr("i", "live"),
            loc=arr("i", "loc"),
            locs=[(f, ln, tuple(tuple(x) for x in ch)) for f, ln, ch in info["locs"]],
            labels=dict(info["labels"]),
            row_of=arr("i", "row_of"),
            spill_rows=arr("i", "spill_rows"),
            pressure=list(info["pressure"]),
        )
        packed[s] = p
        sides[s] = SideLines(PackedLines(p), labels=p.labels, caption=f"{n:,} instr")  # type: ignore[arg-type]
        await asyncio.sleep(0)

    def arr2(code: str, name: str) -> array:
        a = array(code)
        a.frombytes(blobs[name])
        return a

    summaries: list[str] = []
    for part in iter_text_lines(blobs["hunk_summary"], header["hunks"]):
        summaries.extend(part)
        await asyncio.sleep(0)
    rows = PackedRows(bytes(blobs["kinds"]), arr2("i", "row_a"), arr2("i", "row_b"))
    hunks = PackedHunks(arr2("i", "hunk_start"), arr2("i", "hunk_end"), bytes(blobs["hunk_kind"]), summaries)
    return PackedPaneModel(
        "sass",
        "sass",
        sides["a"],
        sides["b"],
        rows,  # type: ignore[arg-type]
        hunks,  # type: ignore[arg-type]
        header["match_pct"],
        header["has_live"],
        header["text_width"],
        header["addr_width"],
        packed=packed,
        match=None
        if header.get("matched") is None
        else InstructionMatch("SASS", header["matched"], header["counts"]["a"], header["counts"]["b"]),
    )


async def stage_sass(comparison: dict, kernel_index: int) -> AsyncGenerator[PaneModel | str, None]:
    """The SASS view of a big kernel: a raw model, progress texts, then the aligned model.

    A failure of the aligner ends with the raw model again, its :attr:`~PaneModel.pending`
    saying what failed (the raw listing stays usable).
    """
    kernel = comparison["kernels"][kernel_index]
    notes = _notes(comparison, kernel)
    present = [s for s in SIDES if not notes[s]]
    folder = Path(tempfile.mkdtemp(prefix="cutediff-packed-"))
    out = folder / "pair.bin"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cutediff_tui.core.packed_sass",
        str(out),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stderr = asyncio.ensure_future(proc.stderr.read())
    try:
        proc.stdin.write(json.dumps(request_for(kernel, present)).encode() + b"\n")
        await proc.stdin.drain()  # stdin stays open: the child ends when it closes
        # the first lines of each side at once (a slice of the text), then the whole text
        heads = await asyncio.gather(*(asyncio.to_thread(listing_head, kernel[s]) for s in present))
        top = 16 * max((kernel[s].get("instructions") or 0 for s in present), default=0)
        scan = _RawScan(present, top)
        for s, head in zip(present, heads):
            if head is not None:
                scan.head(s, head)
        raw = _raw_model(scan, notes, "raw listing; aligning in the background…")
        if any(heads):
            yield raw  # the first paint
        datas = await asyncio.gather(
            *(asyncio.to_thread(listing_bytes, kernel[s]) for s in present),  # zlib frees the GIL
            return_exceptions=True,
        )
        for s, d in zip(present, datas):
            if isinstance(d, CutediffError):
                notes[s] = f"Side {s.upper()}: the SASS could not be read: {d.sentence()}"
                scan.found[s].clear()  # the raw view's lists: that side shows the sentence
                raw.side(s).note = notes[s]
            elif isinstance(d, BaseException):
                raise d
            else:
                await scan.rest(s, d)
        del datas
        _raw_grew(raw, scan, done=True)
        yield raw
        error = ""
        async for line in proc.stdout:
            text = line.decode("utf-8", "replace").rstrip()
            if text.startswith("progress "):
                yield f"raw listing; aligning in the background: {text[9:]}…"
            elif text.startswith("error "):
                error = text[6:]
        code = await proc.wait()
        if code != 0 or not out.is_file():
            why = error or _last_line((await stderr).decode("utf-8", "replace")) or f"exit status {code}"
            raw.pending = f"The aligned view could not be made ({why}); this is the raw listing."
            yield raw
            return
        data = await asyncio.to_thread(out.read_bytes)
        yield await _packed_model(data, notes)
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        with contextlib.suppress(OSError):
            proc.stdin.close()
        stderr.cancel()
        shutil.rmtree(folder, ignore_errors=True)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""
