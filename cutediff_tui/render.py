"""Rich tables of a comparison for the terminal (CLI)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from .core.model import SIDES, side_labels, typed
from .core.model.changes import kernel_changes, ptx_delta_text, ptx_opcode_deltas, verdict
from .core.model.figures import CROSSCHECK_FIGURES, Figure, by_name, delta_sign, figures_for, is_worse
from .core.model.match import instruction_match
from .core.model.sides import shared_pins


def _fmt(v: Any) -> str:
    if v is None:
        return "–"  # a side without the figure (failed, or the kernel is not built there)
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


def figure_rows(kernel: dict) -> list[tuple[Text, Text, Text, Text]]:
    """``(label, A, B, Δ)`` of every registry figure the CLI shows that either side has (plain
    Text: ``LD.E [stack]×64`` is no Rich markup)."""
    a, b = kernel.get("a") or {}, kernel.get("b") or {}
    rows = []
    for fig in figures_for("cli"):
        if not (fig.present(a) or fig.present(b)):
            continue
        va, vb = fig.value(a), fig.value(b)
        rows.append((Text(fig.title), Text(fig.text(va, _fmt)), Text(fig.text(vb, _fmt)), _delta_text(fig, va, vb)))
    return rows


def comparison_tables(c: dict) -> list:
    """The comparison as Rich renderables: a header, a table per kernel, remarks, new spill sites,
    the cross-check. Structure is read through the typed view; figures from the registry."""
    view = typed(c)
    labels = side_labels(c)
    out: list = [
        Text.assemble(
            ("cutediff ", "bold"),
            ((view.recipe.name if view.recipe else None) or "?", "cyan"),
            f" for {view.arch}  ",
            ("A ", "bold"),
            labels["a"],
            "  vs  ",
            ("B ", "bold"),
            labels["b"],
            (f"  (both with {', '.join(shared_pins(c))})" if shared_pins(c) else "", "dim"),
        )
    ]
    if view.kernel_filter:
        out.append(Text(f"only the kernels whose name or symbol matches --kernel-filter {view.kernel_filter!r}", "dim"))
    for k, raw in zip(view.kernels, c["kernels"]):
        t = Table(title=kernel_title(k.name, raw), title_justify="left", show_edge=False, pad_edge=False)
        t.add_column("")
        t.add_column(f"A {labels['a']}", justify="right")
        t.add_column(f"B {labels['b']}", justify="right")
        t.add_column("Δ", justify="right")
        for row in figure_rows(raw):
            t.add_row(*row)
        pairs = instruction_match(raw)
        if pairs is not None:
            t.add_row("SASS match (pairs)", pairs.cell("a"), pairs.cell("b"), "")
        out.append(t)
        ranked = kernel_changes(c, raw)
        if ranked:
            out.append(Text("  changes:", style="bold"))
            out += [Text(f"    {i}. {line}", style="bold" if i == 1 else "") for i, line in enumerate(ranked, 1)]
        ptx_ops = ptx_opcode_deltas(raw)
        if ptx_ops:
            out.append(Text("  PTX opcode deltas (largest first):", style="bold"))
            out += [Text(f"    {ptx_delta_text(op, x, y)}  ({y - x:+d})") for op, x, y in ptx_ops]
        for s in SIDES:
            m = k.side(s)
            for r in m.remarks if m else []:
                where = f"{r.file}:{r.line}" if r.file else "?"
                out.append(
                    Text(f"  remark on {s.upper()} at {where}: {r.message} {r.detail or ''}".rstrip(), style="yellow")
                )
        added = k.spill_sites_diff.added if k.spill_sites_diff else []
        if added:
            out.append(Text("  spill sites added in B:", style="bold"))
            for item in added[:10]:
                where = f"{item.file}:{item.line}" if item.file else "(no line info)"
                out.append(Text(f"    {where}  +{item.b_count - item.a_count} {item.kind}"))
    for name, cc in (view.crosscheck or {}).items():
        t = Table(title=f"ptxas cross-check: {name}", title_justify="left", show_edge=False)
        figures = [f for f in map(by_name, CROSSCHECK_FIGURES) if f]
        for col in ("PTX of", "ptxas", *(f.word for f in figures), "note"):
            t.add_column(col)
        for cell in cc.matrix:
            note = cell.error or (f".version {cell.rewritten_from}→rewritten" if cell.rewritten_from else "")
            t.add_row(
                cell.side or "",
                cell.ptxas_version or "",
                _fmt(cell.registers),
                _fmt(cell.stack),
                _fmt(cell.spill_stores),
                _fmt(cell.spill_loads),
                Text(note),  # a ptxas message: shown as written, never as markup
            )
        out.append(t)
        out.append(Text(f"  verdict: {cc.verdict}", style="bold"))
    out.append(Text.assemble(("verdict: ", "bold"), (verdict(c), _verdict_style(c))))
    return out


def kernel_title(name: str, raw: dict) -> Text:
    """A kernel's name, with the ``@cute.jit`` launcher that compiled it when that is another name."""
    launcher = next((s.get("callable") for s in (raw.get("b"), raw.get("a")) if isinstance(s, dict)), None)
    title = Text(name)
    if isinstance(launcher, str) and launcher and launcher != name.split("#")[0]:
        title.append(f"  launched by {launcher}", style="dim")
    return title


def _verdict_style(c: dict) -> str:
    """Red when a kernel regresses, green when nothing changed."""
    text = verdict(c)
    if " regresses: " in text:
        return "bold red"
    return "green" if text.startswith("no resource change") else ""


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
