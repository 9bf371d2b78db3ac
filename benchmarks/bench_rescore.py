"""Score a recorded bench result (``cutediff bench --json``) again with today's statistics.

    .venv/bin/python benchmarks/bench_rescore.py RESULT.json[.gz] [--tolerance 0.01]

Prints, per case and per kernel, the verdict and interval the result recorded and the ones the
current code gives from the same samples; the samples are not changed. Used to compare interval
methods on real H200 runs (benchmarks/results/h200/).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cutediff_tui.core.bench.runner import kernel_rows  # noqa: E402
from cutediff_tui.core.bench.stats import compare_samples  # noqa: E402


def rescore(result: dict, tolerance: float) -> list[dict]:
    out = []
    for case in result["shapes"]:
        sm, sizes = case["samples"], case["round_sizes"]
        now = compare_samples(sm["a"], sm["b"], tolerance, (sizes["a"], sizes["b"]))
        out.append({"case": case["shape"]["label"], "kernel": "(whole call)", "then": case, "now": now})
        ka, kb = {}, {}
        for k in case.get("kernels", []):
            if "samples" not in k:
                continue
            for side, d in (("a", ka), ("b", kb)):
                d[k["kernel"]] = {
                    "ms": k["samples"][side],
                    "launches": k["launches"][side],
                    "rounds": k["round_sizes"][side],
                }
        then = {k["kernel"]: k for k in case.get("kernels", [])}
        for row in kernel_rows(ka, kb, tolerance):
            out.append(
                {"case": case["shape"]["label"], "kernel": row["kernel"], "then": then[row["kernel"]], "now": row}
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("result", type=Path)
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args()
    raw = args.result.read_bytes()
    if args.result.suffix == ".gz":
        import gzip

        raw = gzip.decompress(raw)
    for r in rescore(json.loads(raw), args.tolerance):
        t, n = r["then"], r["now"]
        print(
            f"{r['case']:12} {r['kernel'][:34]:34} then {t['ratio']:.4f} [{t['ci_low']:.4f}, {t['ci_high']:.4f}] "
            f"{t['verdict']:7} now {n['ratio']:.4f} [{n['ci_low']:.4f}, {n['ci_high']:.4f}] {n['verdict']}"
        )


if __name__ == "__main__":
    main()
