"""Benchmark cutediff's analysis engine (parse, classify, align) on the FA4 sample pair.

nvdisasm runs once up front (its time is excluded); every stage is then timed as the
median of N runs (default 7) on:

* ``pair``: FA4 fwd sm_103a, DSL 4.5.1 (A) vs 4.8.0 (B): SASS and PTX
  (``end_to_end`` = parse + classify + align of both SASS listings and both PTX files);
* ``x10`` / ``x100``: synthetic SASS listings made of 10 / 100 copies of each side's
  kernel body (addresses and labels renumbered per copy), A and B still differing as
  4.5.1 and 4.8.0 do.

Usage::

    .venv/bin/python benchmarks/bench_analysis.py [--repeat 7] [--scales 10,100]

Prints a table and writes ``benchmarks/results/analysis.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cutediff_tui.core.analysis import tools  # noqa: E402
from cutediff_tui.core.analysis.align import align_ptx, align_sass  # noqa: E402
from cutediff_tui.core.analysis.classes import (  # noqa: E402
    count_classes,
    count_opcodes,
    ptx_class_counts,
    ptx_opcode_counts,
)
from cutediff_tui.core.analysis.ptx import parse_ptx  # noqa: E402
from cutediff_tui.core.analysis.sass import SassFunction, parse_sass  # noqa: E402

try:  # the issue 15 facts (memory ops by space and width, register budgets, PTX facts)
    from cutediff_tui.core.analysis import budgets, memory, ptx_facts
except ImportError:  # an older tree, benchmarked for comparison
    budgets = memory = ptx_facts = None  # type: ignore[assignment]

SAMPLES = ROOT / "samples" / "raw"
SIDES = {"A": "fa4-fwd-sm103a-4.5.1", "B": "fa4-fwd-sm103a-4.8.0"}


def median_ms(fn, repeat: int) -> tuple[float, object]:
    """Median wall time of ``fn()`` in milliseconds, and its last result."""
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times), result


def synthetic_sass(func: SassFunction, copies: int, arch: str | None) -> str:
    """A listing text with ``copies`` back-to-back copies of one function's body."""
    size = (func.instrs[-1].addr + 16) if func.instrs else 0
    by_addr: dict[int, list[str]] = {}
    for lab, a in func.labels.items():
        by_addr.setdefault(a, []).append(lab)
    out = [
        f"\t.target\t{arch or 'sm_100a'}",
        "",
        f'\t.section\t.text.{func.name},"ax",@progbits',
        f"        .type           {func.name},@function",
        f"{func.name}:",
    ]
    stride = 1_000_000
    for c in range(copies):
        off = c * size

        def relabel(text: str, c: int = c) -> str:
            if ".L_x_" not in text:
                return text
            parts = text.split(".L_x_")
            res = [parts[0]]
            for p in parts[1:]:
                k = 0
                while k < len(p) and p[k].isdigit():
                    k += 1
                res.append(f".L_x_{c * stride + int(p[:k])}{p[k:]}" if k else ".L_x_" + p)
            return "".join(res)

        for ins in func.instrs:
            for lab in by_addr.get(ins.addr, ()):
                out.append(relabel(lab) + ":")
            tags = "".join(f' (*"{t}"*)' for t in ins.tags)
            out.append(f"        /*{ins.addr + off:04x}*/                   {relabel(ins.text)}{tags} ;")
    return "\n".join(out) + "\n"


def run(repeat: int, scales: list[int]) -> dict:
    cubins = {s: SAMPLES / d / "kernel.cubin" for s, d in SIDES.items()}
    ptx_text = {s: (SAMPLES / d / "kernel.ptx").read_text() for s, d in SIDES.items()}
    t0 = time.perf_counter()
    sass_text = {s: tools.disassemble(p) for s, p in cubins.items()}
    nvdisasm_ms = (time.perf_counter() - t0) * 1000.0

    results: dict = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "repeat": repeat,
        "nvdisasm_ms_excluded": round(nvdisasm_ms, 1),
        "cases": {},
    }

    def stage_table(texts: dict, ptx: dict | None) -> dict:
        st: dict = {}
        st["parse_sass_ms"], listings = median_ms(lambda: {s: parse_sass(t) for s, t in texts.items()}, repeat)
        funcs = {s: listings[s].main for s in listings}
        st["classify_sass_ms"], _ = median_ms(
            lambda: {s: (count_opcodes(f), count_classes(f)) for s, f in funcs.items()}, repeat
        )
        st["align_sass_ms"], al = median_ms(lambda: align_sass(funcs["A"], funcs["B"]), repeat)
        st["sass_instructions"] = [len(funcs["A"]), len(funcs["B"])]
        st["sass_matched"] = al.matched
        st["sass_match_pct"] = al.match_pct
        st["sass_hunks"] = len(al.hunks)
        total = st["parse_sass_ms"] + st["classify_sass_ms"] + st["align_sass_ms"]
        if ptx is not None:
            st["parse_ptx_ms"], mods = median_ms(lambda: {s: parse_ptx(t) for s, t in ptx.items()}, repeat)
            ents = {s: mods[s].main for s in mods}
            st["classify_ptx_ms"], _ = median_ms(
                lambda: {s: (ptx_opcode_counts(e), ptx_class_counts(e)) for s, e in ents.items()}, repeat
            )
            st["align_ptx_ms"], alp = median_ms(lambda: align_ptx(ents["A"], ents["B"]), repeat)
            st["ptx_instructions"] = [len(ents["A"]), len(ents["B"])]
            st["ptx_matched"] = alp.matched
            st["ptx_match_pct"] = alp.match_pct
            st["total_without_ptx_align_ms"] = round(total + st["parse_ptx_ms"] + st["classify_ptx_ms"], 1)
            total += st["parse_ptx_ms"] + st["classify_ptx_ms"] + st["align_ptx_ms"]
        if ptx is not None and memory is not None:

            def facts(ents=ents):
                for s in ("A", "B"):
                    pb = budgets.ptx_register_budgets(ents[s])
                    ptx_facts.ptx_facts(ents[s])
                    memory.ptx_memory_ops(ents[s])
                    memory.sass_memory_ops(funcs[s])
                    budgets.sass_register_budgets(funcs[s], pb)

            st["facts_ms"], _ = median_ms(facts, repeat)
            total += st["facts_ms"]
        st["total_ms"] = round(total, 1)

        # the same pipeline end to end in one timed call
        def pipeline():
            ls = {s: parse_sass(t) for s, t in texts.items()}
            fs = {s: ls[s].main for s in ls}
            for f in fs.values():
                count_opcodes(f)
                count_classes(f)
            align_sass(fs["A"], fs["B"])
            if ptx is not None:
                ms = {s: parse_ptx(t) for s, t in ptx.items()}
                for m in ms.values():
                    ptx_opcode_counts(m.main)
                    ptx_class_counts(m.main)
                align_ptx(ms["A"].main, ms["B"].main)
                if memory is not None:
                    for s in ("A", "B"):
                        pb = budgets.ptx_register_budgets(ms[s].main)
                        ptx_facts.ptx_facts(ms[s].main)
                        memory.ptx_memory_ops(ms[s].main)
                        memory.sass_memory_ops(fs[s])
                        budgets.sass_register_budgets(fs[s], pb)

        st["end_to_end_ms"], _ = median_ms(pipeline, repeat)
        return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in st.items()}

    results["cases"]["pair"] = stage_table(sass_text, ptx_text)
    base = {s: parse_sass(t) for s, t in sass_text.items()}
    for k in scales:
        texts = {s: synthetic_sass(base[s].main, k, base[s].arch) for s in base}
        results["cases"][f"x{k}"] = stage_table(texts, None)
    return results


def print_table(res: dict) -> None:
    cols = [
        "parse_sass_ms",
        "classify_sass_ms",
        "align_sass_ms",
        "parse_ptx_ms",
        "classify_ptx_ms",
        "align_ptx_ms",
        "facts_ms",
        "total_ms",
        "end_to_end_ms",
    ]
    head = f"{'case':<6} {'SASS instrs A/B':>17} " + " ".join(f"{c.replace('_ms', ''):>14}" for c in cols)
    print(head)
    print("-" * len(head))
    for name, st in res["cases"].items():
        n = st["sass_instructions"]
        vals = " ".join(f"{st[c]:>14.1f}" if c in st else f"{'-':>14}" for c in cols)
        print(f"{name:<6} {n[0]:>8}/{n[1]:<8} {vals}")
    print()
    pair = res["cases"]["pair"]
    print(
        f"pair: SASS matched {pair['sass_matched']} ({pair['sass_match_pct']}%), "
        f"PTX matched {pair['ptx_matched']} ({pair['ptx_match_pct']}%)"
    )
    print(
        f"pair end to end (parse + classify + align, SASS and PTX, both sides"
        f"{', memory/budget/PTX facts' if 'facts_ms' in pair else ''}): {pair['end_to_end_ms']} ms; "
        f"without the PTX alignment (sum of stage medians): {pair['total_without_ptx_align_ms']} ms "
        f"(median of {res['repeat']}; nvdisasm {res['nvdisasm_ms_excluded']} ms excluded)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--scales", default="10,100", help="comma-separated copy counts for synthetic listings")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "analysis.json"))
    args = ap.parse_args(argv)
    scales = [int(x) for x in args.scales.split(",") if x.strip()]
    res = run(args.repeat, scales)
    print_table(res)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
