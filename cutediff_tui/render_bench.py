"""Terminal tables of a bench result: per call, per kernel, Nsight Compute rows, verdict sentences."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.table import Table
from rich.text import Text

from .core.bench.ncu import LABELS
from .render import VERDICT_STYLE


def _num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(v):,}"


def _stalls(v: Any) -> str:
    return ", ".join(f"{k} {r:g}" for k, r in v) if v else "–"


def _ms(s: dict | None) -> str:
    return f"{s['median_ms']:.4f} ({s['iqr_ms']:.4f})" if s else "–"


def header(result: dict) -> str:
    sides = result.get("sides", {})
    gpu = result.get("gpu_before") or result.get("gpu") or {}
    where = gpu.get("name", "?")
    remote = result.get("remote")
    if remote:
        where += f" (Dask worker {remote.get('host')} via {remote.get('scheduler')})"
    what = result.get("recipe") or result.get("mode")
    return f"{what} on {where}: A {sides.get('a', {}).get('label', '')} vs B {sides.get('b', {}).get('label', '')}"


def call_table(result: dict) -> Table:
    """Per case: GPU medians (IQR), B/A with its interval, verdict, samples, host ms per call."""
    t = Table(title=header(result), title_justify="left", show_edge=False)
    for col in ("case", "A median ms (IQR)", "B median ms (IQR)", "B/A", "95% interval", "verdict", "n", "host ms A/B"):
        t.add_column(col, justify="right" if col not in ("case", "verdict") else "left")
    for row in result.get("shapes", []):
        host = row.get("host_ms")
        t.add_row(
            row["shape"]["label"],
            _ms(row["a"]),
            _ms(row["b"]),
            f"{row['ratio']:.4f}",
            f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]",
            Text(row["verdict"], style=VERDICT_STYLE.get(row["verdict"], "")),
            f"{row['a']['n']}/{row['b']['n']}",
            f"{host['a']:.3f}/{host['b']:.3f}" if host else "–",
        )
    return t


def kernel_table(result: dict) -> Table | None:
    """Per case and kernel (CUPTI): medians, B/A with its interval, verdict."""
    rows = [(c["shape"]["label"], k) for c in result.get("shapes", []) for k in c.get("kernels") or []]
    if not rows:
        return None
    t = Table(title="per kernel (GPU time per call, CUPTI)", title_justify="left", show_edge=False)
    for col in (
        "case",
        "kernel",
        "launches",
        "A median ms (IQR)",
        "B median ms (IQR)",
        "B/A",
        "95% interval",
        "verdict",
    ):
        t.add_column(col, justify="left" if col in ("case", "kernel", "verdict") else "right")
    for label, k in rows:
        la, lb = k["launches"]["a"], k["launches"]["b"]
        t.add_row(
            label,
            k["kernel"],
            f"{la if la is not None else '–'}/{lb if lb is not None else '–'}",
            _ms(k.get("a")),
            _ms(k.get("b")),
            f"{k['ratio']:.4f}" if "ratio" in k else "–",
            f"[{k['ci_low']:.4f}, {k['ci_high']:.4f}]" if "ratio" in k else "–",
            Text(k["verdict"], style=VERDICT_STYLE.get(k["verdict"], "")),
        )
    return t


def profile_table(result: dict) -> Table | None:
    """Nsight Compute's fixed metric set, A/B and Δ per kernel."""
    prof = result.get("profile") or {}
    rows = prof.get("rows")
    if not rows:
        return None
    t = Table(title="Nsight Compute (--clock-control none)", title_justify="left", show_edge=False)
    for col in ("kernel", "metric", "A", "B", "Δ"):
        t.add_column(col, justify="left" if col in ("kernel", "metric") else "right")
    for r in rows:
        if r["metric"] == "top_stalls":
            t.add_row(Text(r["kernel"]), LABELS["top_stalls"], _stalls(r["a"]), _stalls(r["b"]), "")
            continue
        if r["metric"] == "local_gbps":
            from .core.bench.explain import fmt_rate

            t.add_row(Text(r["kernel"]), "local traffic", fmt_rate(r["a"]), fmt_rate(r["b"]), "")
            continue
        delta = r["delta"]
        t.add_row(
            Text(r["kernel"]),
            LABELS.get(r["metric"], r["metric"]),
            _num(r["a"]),
            _num(r["b"]),
            "=" if delta == 0 else (f"{delta:+,.2f}" if delta is not None else "–"),
        )
    for side in ("a", "b"):
        spills = ((prof.get("sides") or {}).get(side) or {}).get("spills") or {}
        for name, c in spills.items():
            if c["sites"]:
                t.add_row(
                    Text(name),
                    f"side {side.upper()} LDL/STL executed",
                    *(
                        ("", f"{c['ldl_executed']:,}/{c['stl_executed']:,}")
                        if side == "b"
                        else (f"{c['ldl_executed']:,}/{c['stl_executed']:,}", "")
                    ),
                    f"{len(c['sites'])} sites",
                )
    return t


def bench_tables(result: dict) -> Iterator[Any]:
    yield call_table(result)
    for t in (kernel_table(result), profile_table(result)):
        if t is not None:
            yield t
    for s in result.get("verdicts") or []:
        yield Text("• " + s)
