"""One-off check (issue 19): on every line-info cubin found, is the listing rebuilt from the DWARF
line table and the ``-lrm count`` listing the one ``nvdisasm -c -g`` gives?

    .venv/bin/python benchmarks/check_line_tables.py [FOLDER ...]

Looks for ``*.cubin`` under each folder (default: the build artifacts of the test cache,
``$CUTEDIFF_TEST_CACHE``, and of the user cache, ``samples/raw``, the Triton test data), one per
distinct content. For each cubin with
a ``.debug_line``: both nvdisasm runs, then ``lineinfo_listing(parse(lrm), table) == parse(g)``
and the merged listings of the old and the new path compared. Prints one line per cubin and a
summary by arch, DSL version (from the build's manifest) and recipe. Runs nvdisasm twice per
cubin (~1 s of CPU each): minutes for a few hundred cubins.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cutediff_tui.core.analysis import tools  # noqa: E402
from cutediff_tui.core.analysis.line_table import LineTableUnusable, lineinfo_listing, read_line_table  # noqa: E402
from cutediff_tui.core.analysis.sass import merge_sass, parse_sass  # noqa: E402
from cutediff_tui.core.errors import CutediffError  # noqa: E402

DEFAULT = [
    Path(os.environ.get("CUTEDIFF_TEST_CACHE", ROOT / ".cache" / "test-cache")) / "artifacts",
    Path(os.path.expanduser("~/.cache/cutediff/artifacts")),
    ROOT / "samples" / "raw",
    ROOT / "tests" / "integration" / "data",
]


def origin(cubin: Path) -> tuple[str, str]:
    """(DSL version, recipe file) from the manifest of the build the cubin belongs to."""
    manifest = cubin.parent.parent.parent / "manifest.json"
    if not manifest.is_file():
        return "?", cubin.parent.name
    m = json.loads(manifest.read_text())
    return (m.get("packages") or {}).get("nvidia-cutlass-dsl", "?"), Path(str(m.get("recipe", "?")).split(":")[0]).name


def check(cubin: Path) -> tuple[str, str]:
    """(verdict, detail) for one cubin."""
    data = cubin.read_bytes()
    try:
        table = read_line_table(data)
    except LineTableUnusable as exc:
        return "table not read", str(exc)
    if table is None:
        return "no .debug_line", ""
    try:
        g = tools.disassemble(cubin, line_info=True)
    except CutediffError as exc:
        return "nvdisasm -g refuses", str(exc)[:100]
    try:
        lrm = tools.disassemble(cubin, live_ranges=True)
    except CutediffError as exc:
        return "-lrm refused: -g path", str(exc)[:100]
    live = parse_sass(lrm)
    try:
        rebuilt = lineinfo_listing(live, table)
    except LineTableUnusable as exc:
        return "falls back to -g", str(exc)
    same = rebuilt == parse_sass(g)
    same = same and merge_sass(rebuilt, rebuilt, live) == merge_sass(parse_sass(g), parse_sass(g), parse_sass(lrm))
    arch = live.arch or "?"
    inlined = " (-g has inlined-at chains)" if "inlined at" in g else ""
    return ("equal" if same else "DIFFERENT"), f"{arch}, {len(live.functions)} functions{inlined}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", type=Path, default=DEFAULT)
    args = ap.parse_args()
    cubins: dict[str, Path] = {}
    for folder in args.folders:
        for path in sorted(folder.rglob("*.cubin")) if folder.is_dir() else []:
            cubins.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    verdicts: collections.Counter[str] = collections.Counter()
    groups: collections.Counter[tuple[str, ...]] = collections.Counter()
    t0 = time.monotonic()
    for path in sorted(cubins.values()):
        verdict, detail = check(path)
        verdicts[verdict] += 1
        dsl, recipe = origin(path)
        if verdict != "no .debug_line":
            groups[(verdict, detail.split(",")[0] if verdict == "equal" else "", dsl, recipe)] += 1
        print(f"{verdict}: {path} {detail}", flush=True)
    print(f"\n{len(cubins)} distinct cubins in {time.monotonic() - t0:.0f} s: {dict(verdicts)}")
    for key, n in sorted(groups.items()):
        print(n, " | ".join(key))


if __name__ == "__main__":
    main()
