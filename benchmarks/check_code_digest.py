"""One-off check (issue 19): do cubins with one code digest (everything but their debug sections,
:func:`cutediff_tui.core.analysis.fingerprint.code_digest`) get one ``nvdisasm -c`` listing, one
``nvdisasm -c -lrm count`` listing and one ``cuobjdump --dump-resource-usage`` text?

    .venv/bin/python benchmarks/check_code_digest.py [--max-groups N] [FOLDER ...]

Looks for ``*.cubin`` under each folder (default: as ``check_line_tables.py``), groups them by
code digest and, in every group with more than one distinct file, runs the three tools on each
distinct file and compares the texts (paths taken out). Also counts the groups: how often an
unchanged kernel came back as a different file (DSL 4.5 writes the source's mtime into
``.debug_line``), which is what the digest saves a disassembly for.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_line_tables import DEFAULT, origin  # noqa: E402

from cutediff_tui.core.analysis import tools  # noqa: E402
from cutediff_tui.core.analysis.fingerprint import code_digest  # noqa: E402
from cutediff_tui.core.errors import CutediffError  # noqa: E402


def texts(cubin: Path) -> dict[str, str]:
    out = {}
    for name, run in (
        ("sass", lambda: tools.disassemble(cubin)),
        ("lrm", lambda: tools.disassemble(cubin, live_ranges=True)),
        ("res", lambda: tools.resource_usage(cubin)),
    ):
        try:
            out[name] = run().replace(str(cubin), "CUBIN")
        except CutediffError as exc:
            out[name] = f"failed: {str(exc).replace(str(cubin), 'CUBIN')}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--max-groups", type=int, default=60, help="groups whose texts are compared (0: all)")
    args = ap.parse_args()
    files: dict[str, Path] = {}
    for folder in args.folders or DEFAULT:
        for p in sorted(folder.rglob("*.cubin")) if folder.is_dir() else []:
            files.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), p)
    groups: dict[str, list[Path]] = collections.defaultdict(list)
    unreadable = 0
    for p in files.values():
        try:
            groups[code_digest(p.read_bytes())].append(p)
        except CutediffError:
            unreadable += 1
    multi = [g for g in groups.values() if len(g) > 1]
    print(
        f"{len(files)} distinct cubins, {len(groups)} code digests, {len(multi)} digests shared by "
        f"several files ({sum(len(g) for g in multi)} files), {unreadable} not read"
    )
    checked = same = 0
    for g in sorted(multi, key=lambda g: -len(g))[: args.max_groups or None]:
        first = texts(g[0])
        for other in g[1:4]:
            checked += 1
            got = texts(other)
            diff = [k for k in first if first[k] != got[k]]
            same += not diff
            dsl, recipe = origin(other)
            print(f"{'same' if not diff else 'DIFFERENT ' + ','.join(diff):<16} {dsl:<8} {recipe:<28} {other}")
    print(f"compared {checked} files against the first of their group: {same} gave the same three texts")
    sys.exit(0 if same == checked else 1)


if __name__ == "__main__":
    main()
