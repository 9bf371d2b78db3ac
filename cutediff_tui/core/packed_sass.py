"""A huge SASS pair parsed and aligned in a child process, handed back as flat arrays.

Parsing and aligning two 1M-instruction listings takes tens of seconds of pure Python and
builds millions of objects; done in the TUI process it holds the GIL and the keys stall. For
such listings the TUI runs ``python -m cutediff_tui.core.packed_sass OUT`` with the two sides'
metrics (their ``files``, ``symbol`` and ``spill_sites``) as JSON on stdin. The child does what
the in-process path does (:func:`.analysis_pipeline.load_listing`, :func:`.analysis.align.align_sass`)
and writes one file of flat arrays (:class:`PackedPair`): per side the instruction texts,
addresses, spill flags, live counts, source locations, labels, the row of each instruction and
the pressure curve; per row its kind and the instruction index on each side; per hunk its rows,
kind and summary. Reading that file back costs a few memory copies and one split of the texts,
which the caller can do in slices (:func:`iter_text_lines`) between keystrokes.

The child reports progress as ``progress TEXT`` lines on stdout and a failure as one ``error
SENTENCE`` line with exit status 2; anything on stderr is a bug's traceback.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analysis.align import KINDS
from .errors import CutediffError
from .model.types import SIDES

__all__ = [
    "KINDS",
    "MAGIC",
    "PackedSide",
    "PackedPair",
    "pack_pair",
    "write_packed",
    "read_packed",
    "iter_text_lines",
    "pressure_buckets",
    "request_for",
    "main",
]

MAGIC = b"cutediff-packed-sass/1\n"
#: Instruction index meaning "no instruction on this side of the row".
NONE = -1
_KIND_CODE = {k: n for n, k in enumerate(KINDS)}


@dataclass
class PackedSide:
    """One side's instructions as parallel arrays (index = instruction number)."""

    name: str
    texts: list[str]
    """Instruction text as the pane shows it (``// executed Nx (ncu)`` appended where known)."""
    addrs: array
    spill: bytes
    """1 where the instruction is a spill store/load."""
    live: array
    """Live GPRs (``-lrm count``), -1 where unknown."""
    loc: array
    """Index into :attr:`locs`, -1 where the instruction has no source line."""
    locs: list[tuple[str, int, tuple]] = field(default_factory=list)
    """Distinct ``(file, line, inline chain)`` source locations."""
    labels: dict[str, int] = field(default_factory=dict)
    """Label -> instruction index."""
    row_of: array = field(default_factory=lambda: array("i"))
    """Row of each instruction in the pair's rows."""
    spill_rows: array = field(default_factory=lambda: array("i"))
    """Rows holding a spill instruction of this side, in order."""
    pressure: list[int] = field(default_factory=list)
    """Maximum live GPRs in 100 equal slices (:func:`pressure_buckets`)."""

    def __len__(self) -> int:
        return len(self.addrs)


@dataclass
class PackedPair:
    """Both sides, the aligned rows and the hunks of one SASS view."""

    sides: dict[str, PackedSide]
    kinds: bytes
    """Row kind codes (index into :data:`KINDS`)."""
    row_a: array
    row_b: array
    hunk_start: array
    hunk_end: array
    hunk_kind: bytes
    hunk_summary: list[str]
    match_pct: float | None = None
    matched: int | None = None  # pairs of an A and a B instruction (the "SASS match")
    has_live: bool = False
    text_width: int = 0
    addr_width: int = 4

    def __len__(self) -> int:
        return len(self.kinds)


def pressure_buckets(live: Sequence[int], buckets: int = 100) -> list[int]:
    """Maximum of ``live`` (known values only: -1 is skipped) in ``buckets`` equal slices."""
    known = [x for x in live if x >= 0]
    if not known:
        return []
    n = len(known)
    buckets = min(buckets, n)
    out = []
    for k in range(buckets):
        lo, hi = k * n // buckets, max((k + 1) * n // buckets, k * n // buckets + 1)
        out.append(max(known[lo:hi]))
    return out


# ---------------------------------------------------------------------- building (in the child)


def _pack_side(metrics: dict) -> tuple[Any, PackedSide]:
    from .analysis_pipeline import load_listing

    func = load_listing(metrics).main
    executed = {x["addr"]: x["executed"] for x in metrics.get("spill_sites") or [] if "executed" in x}
    texts = [
        f"{i.text}  // executed {executed[i.addr]:,}x (ncu)" if i.addr in executed else i.text for i in func.instrs
    ]
    loc_ids: dict[tuple, int] = {}
    loc = array("i")
    for i in func.instrs:
        if i.file is None:
            loc.append(NONE)
        else:
            key = (i.file, i.line, tuple(i.inline_chain or ()))
            loc.append(loc_ids.setdefault(key, len(loc_ids)))
    by_addr = {ins.addr: k for k, ins in enumerate(func.instrs)}
    side = PackedSide(
        name=func.name,
        texts=texts,
        addrs=array("q", [i.addr for i in func.instrs]),
        spill=bytes(bytearray(1 if i.is_spill else 0 for i in func.instrs)),
        live=array("i", [i.live[0] if i.live else NONE for i in func.instrs]),
        loc=loc,
        locs=list(loc_ids),
        labels={name: by_addr[a] for name, a in func.labels.items() if a in by_addr},
    )
    side.pressure = pressure_buckets(side.live)
    return func, side


def pack_pair(metrics: dict[str, dict], progress=lambda _text: None) -> PackedPair:
    """Parse and align the SASS of the sides in ``metrics`` (``{"a": ..., "b": ...}``, one or both)."""
    from .analysis.align import align_sass

    funcs: dict[str, Any] = {}
    sides: dict[str, PackedSide] = {}
    for s in SIDES:
        if s in metrics:
            progress(f"reading side {s.upper()}")
            funcs[s], sides[s] = _pack_side(metrics[s])
    kinds = bytearray()
    row_a, row_b = array("i"), array("i")
    hunk_start, hunk_end, hunk_kind, summaries = array("i"), array("i"), bytearray(), []
    match = None
    matched = None
    if len(funcs) == 2:
        progress("aligning")
        al = align_sass(funcs["a"], funcs["b"])
        funcs.clear()
        match = al.match_pct
        matched = al.matched
        for r in al.rows:
            kinds.append(_KIND_CODE[r.kind])
            row_a.append(NONE if r.a_index is None else r.a_index)
            row_b.append(NONE if r.b_index is None else r.b_index)
        for h in al.hunks_in_order():
            hunk_start.append(h.rows[0])
            hunk_end.append(h.rows[1])
            hunk_kind.append(_KIND_CODE.get(h.kind, _KIND_CODE["opcode"]))
            summaries.append((h.summary or "").replace("\n", " "))
    elif sides:
        ((which, only),) = sides.items()
        n = len(only)
        kinds = bytearray(n)  # all "same"
        mine = array("i", range(n))
        gaps = array("i", [NONE]) * n
        row_a, row_b = (mine, gaps) if which == "a" else (gaps, mine)
    progress("indexing rows")
    for name, side in sides.items():
        col = row_a if name == "a" else row_b
        row_of = array("i", [0]) * len(side)
        for r, i in enumerate(col):
            if i >= 0:
                row_of[i] = r
        side.row_of = row_of
        side.spill_rows = array("i", sorted(row_of[i] for i, f in enumerate(side.spill) if f))
    top = max((max(side.addrs, default=0) for side in sides.values()), default=0)
    return PackedPair(
        sides=sides,
        kinds=bytes(kinds),
        row_a=row_a,
        row_b=row_b,
        hunk_start=hunk_start,
        hunk_end=hunk_end,
        hunk_kind=bytes(hunk_kind),
        hunk_summary=summaries,
        match_pct=match,
        matched=matched,
        has_live=any(x >= 0 for side in sides.values() for x in side.live),
        text_width=max((len(t) for side in sides.values() for t in side.texts), default=0),
        addr_width=max(4, len(f"{top:x}")),
    )


# ---------------------------------------------------------------------- the file


def _blob_text(lines: list[str]) -> bytes:
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def write_packed(pair: PackedPair, path: Path) -> None:
    """Write ``pair`` as a header (JSON) and length-prefixed binary blobs."""
    blobs: list[tuple[str, bytes]] = [
        ("kinds", pair.kinds),
        ("row_a", pair.row_a.tobytes()),
        ("row_b", pair.row_b.tobytes()),
        ("hunk_start", pair.hunk_start.tobytes()),
        ("hunk_end", pair.hunk_end.tobytes()),
        ("hunk_kind", pair.hunk_kind),
        ("hunk_summary", _blob_text(pair.hunk_summary)),
    ]
    sides = {}
    for s, side in pair.sides.items():
        sides[s] = {"name": side.name, "locs": side.locs, "labels": side.labels, "pressure": side.pressure}
        blobs += [
            (f"{s}.texts", _blob_text(side.texts)),
            (f"{s}.addrs", side.addrs.tobytes()),
            (f"{s}.spill", side.spill),
            (f"{s}.live", side.live.tobytes()),
            (f"{s}.loc", side.loc.tobytes()),
            (f"{s}.row_of", side.row_of.tobytes()),
            (f"{s}.spill_rows", side.spill_rows.tobytes()),
        ]
    header = {
        "sides": sides,
        "counts": {s: len(side) for s, side in pair.sides.items()},
        "hunks": len(pair.hunk_summary),
        "match_pct": pair.match_pct,
        "matched": pair.matched,
        "has_live": pair.has_live,
        "text_width": pair.text_width,
        "addr_width": pair.addr_width,
        "blobs": [[name, len(data)] for name, data in blobs],
        "itemsize": {"i": array("i").itemsize, "q": array("q").itemsize},
    }
    head = json.dumps(header).encode()
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as fh:
        fh.write(MAGIC)
        fh.write(struct.pack("<Q", len(head)))
        fh.write(head)
        for _name, data in blobs:
            fh.write(data)
    tmp.replace(path)


def iter_text_lines(data: bytes | memoryview, count: int, chunk: int = 256 << 10) -> Iterator[list[str]]:
    """The ``count`` newline-separated texts of a blob, a slice of about ``chunk`` bytes at a time.

    A caller on an event loop awaits between slices, so no single step holds the thread long.
    """
    if count == 0:
        return
    mv = memoryview(data)
    n, pos = len(mv), 0
    raw = bytes(mv)
    while pos <= n:
        end = raw.find(b"\n", min(n, pos + chunk))
        end = n if end < 0 else end
        yield raw[pos:end].decode("utf-8", "surrogateescape").split("\n")
        pos = end + 1


def read_packed(data: bytes) -> tuple[dict, dict[str, memoryview]]:
    """The header and the blobs (views into ``data``) of a packed file.

    Raises:
        CutediffError: the data is not a packed listing of this version.
    """
    bad = CutediffError(
        "The aligner's output is not a packed listing of this version of cutediff.",
        "Run the same cutediff for the TUI and its helper process (check PYTHONPATH).",
    )
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
        raise bad
    (hlen,) = struct.unpack_from("<Q", data, len(MAGIC))
    pos = len(MAGIC) + 8
    try:
        header = json.loads(data[pos : pos + hlen])
    except ValueError:
        raise bad from None
    if header.get("itemsize") != {"i": array("i").itemsize, "q": array("q").itemsize}:
        raise bad
    pos += hlen
    mv = memoryview(data)
    blobs = {}
    for name, size in header["blobs"]:
        blobs[name] = mv[pos : pos + size]
        pos += size
    if pos != len(data):
        raise bad
    return header, blobs


def request_for(kernel: dict, sides: Sequence[str]) -> dict:
    """What the child needs of a kernel's sides: files, symbol, spill sites (for ncu counts)."""
    return {
        s: {k: kernel[s].get(k) for k in ("files", "symbol", "spill_sites") if kernel[s].get(k) is not None}
        for s in sides
    }


def _exit_when_stdin_closes() -> None:
    """End this process when the parent closes stdin or dies (no orphan keeps parsing)."""
    import threading

    def watch() -> None:
        try:
            sys.stdin.buffer.read()
        finally:
            os._exit(3)

    threading.Thread(target=watch, daemon=True, name="stdin-watch").start()


def main(argv: list[str] | None = None) -> int:
    """``python -m cutediff_tui.core.packed_sass OUT`` with the request (one JSON line) on stdin.

    The child runs until stdin closes: the parent keeps it open while it waits."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cutediff_tui.core.packed_sass OUT < request.json", file=sys.stderr)
        return 2

    def progress(text: str) -> None:
        print(f"progress {text}", flush=True)

    if hasattr(os, "nice"):
        try:
            os.nice(10)  # background work: the TUI waiting for it keeps the CPU for its keys
        except OSError:
            pass
    try:
        request = json.loads(sys.stdin.readline())
        _exit_when_stdin_closes()
        pair = pack_pair(request, progress)
        progress("writing")
        write_packed(pair, Path(args[0]))
    except CutediffError as exc:
        print(f"error {exc.sentence()}", flush=True)
        return 2
    except (OSError, ValueError, KeyError) as exc:
        print(f"error {type(exc).__name__}: {exc}", flush=True)
        return 2
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # not sys.exit: the stdin watcher would be torn down mid-read at shutdown
