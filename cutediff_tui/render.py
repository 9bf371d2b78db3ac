"""Rich tables of a comparison for the terminal (CLI)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from .core.model.figures import Figure, delta_sign, figures_for, is_worse


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _delta_text(fig: Figure, a: Any, b: Any) -> Text:
    if fig.kind == "list" or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return Text("")
    d = b - a
    if d == 0:
        return Text("=", style="dim")
    s = f"{d:+.2f}" if isinstance(d, float) else f"{d:+d}"
    sign = delta_sign(a, b)
    if is_worse(fig, sign):
        return Text(s, style="bold red")
    if is_worse(fig, -sign):
        return Text(s, style="bold green")
    return Text(s)


def figure_rows(kernel: dict) -> list[tuple[str, str, str, Text]]:
    """``(label, A, B, Δ)`` of every registry figure the CLI shows that either side has."""
    a, b = kernel.get("a") or {}, kernel.get("b") or {}
    rows = []
    for fig in figures_for("cli"):
        if not (fig.present(a) or fig.present(b)):
            continue
        va, vb = fig.value(a), fig.value(b)
        rows.append((fig.title, fig.text(va, _fmt), fig.text(vb, _fmt), _delta_text(fig, va, vb)))
    return rows


def comparison_tables(c: dict) -> list:
    sa, sb = c["sides"]["a"], c["sides"]["b"]
    out: list = [
        Text.assemble(
            ("cutediff ", "bold"),
            (c["recipe"]["name"], "cyan"),
            f" for {c['arch']}  ",
            ("A ", "bold"),
            sa["label"],
            "  vs  ",
            ("B ", "bold"),
            sb["label"],
        )
    ]
    for k in c["kernels"]:
        a, b = k.get("a") or {}, k.get("b") or {}
        t = Table(title=k["name"], title_justify="left", show_edge=False, pad_edge=False)
        t.add_column("")
        t.add_column(f"A {sa['dsl']}", justify="right")
        t.add_column(f"B {sb['dsl']}", justify="right")
        t.add_column("Δ", justify="right")
        for row in figure_rows(k):
            t.add_row(*row)
        al = k.get("alignment")
        if al:
            t.add_row("SASS match", "", f"{al.get('match_pct', 0):.1f}%", f"{al.get('matched')}/{al.get('total')}")
        out.append(t)
        for s, m in (("A", a), ("B", b)):
            for r in m.get("remarks", []) or []:
                where = f"{r.get('file')}:{r.get('line')}" if r.get("file") else "?"
                out.append(
                    Text(
                        f"  remark on {s} at {where}: {r.get('message')} {r.get('detail') or ''}".rstrip(),
                        style="yellow",
                    )
                )
        diff = k.get("spill_sites_diff") or {}
        added = diff.get("added") if isinstance(diff, dict) else None
        if added:
            out.append(Text("  spill sites added in B:", style="bold"))
            for item in added[:10]:
                where = f"{item.get('file')}:{item.get('line')}" if item.get("file") else "(no line info)"
                out.append(Text(f"    {where}  +{item.get('b_count', 0) - item.get('a_count', 0)} {item.get('kind')}"))
    cc = c.get("crosscheck")
    if cc:
        for name, m in cc.items():
            t = Table(title=f"ptxas cross-check: {name}", title_justify="left", show_edge=False)
            for col in ("PTX of", "ptxas", "registers", "stack", "spill stores", "spill loads", "note"):
                t.add_column(col)
            for cell in m.get("matrix", []):
                note = cell.get("error") or (
                    f".version {cell['rewritten_from']}→rewritten" if cell.get("rewritten_from") else ""
                )
                t.add_row(
                    cell.get("side", ""),
                    cell.get("ptxas_version", ""),
                    _fmt(cell.get("registers")),
                    _fmt(cell.get("stack")),
                    _fmt(cell.get("spill_stores")),
                    _fmt(cell.get("spill_loads")),
                    note,
                )
            out.append(t)
            out.append(Text(f"  verdict: {m.get('verdict')}", style="bold"))
    return out


VERDICT_STYLE = {"SLOWER": "bold red", "FASTER": "bold green", "SAME": "dim", "UNSURE": "yellow"}


def bench_table(result: dict) -> Table:
    """Per-shape medians, IQR, B/A ratio with its interval, and the verdict."""
    sides = result.get("sides", {})
    gpu = result.get("gpu_before") or result.get("gpu") or {}
    t = Table(
        title=f"{result.get('mode')} on {gpu.get('name', '?')}: A {sides.get('a', {}).get('label', '')} vs B {sides.get('b', {}).get('label', '')}",
        title_justify="left",
        show_edge=False,
    )
    for col in ("shape", "A median ms (IQR)", "B median ms (IQR)", "B/A", "95% interval", "verdict", "n"):
        t.add_column(col, justify="right" if col not in ("shape", "verdict") else "left")
    for row in result.get("shapes", []):
        a, b = row["a"], row["b"]
        t.add_row(
            row["shape"]["label"],
            f"{a['median_ms']:.3f} ({a['iqr_ms']:.3f})",
            f"{b['median_ms']:.3f} ({b['iqr_ms']:.3f})",
            f"{row['ratio']:.4f}",
            f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]",
            Text(row["verdict"], style=VERDICT_STYLE.get(row["verdict"], "")),
            f"{a['n']}/{b['n']}",
        )
    return t
