"""The metrics pane: resources A / B / Δ, instruction classes, register pressure.

The resource rows are the figure registry's (:mod:`cutediff_tui.core.model.figures`), with their
short names. Colours come from the theme: ``$regression`` for a figure that got worse (the
registry says which way is worse), ``$improvement`` for one that got better.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static
from textual_plotext import PlotextPlot

from cutediff_tui.core.model.changes import ptx_opcode_deltas
from cutediff_tui.core.model.figures import Figure, by_name, delta_sign, figures_for, is_worse
from cutediff_tui.core.model.match import instruction_match

__all__ = ["MetricsPane", "resource_rows", "class_rows", "ptx_rows", "PressurePlot"]

#: Instruction classes whose growth is a regression (spill code).
WORSE_CLASSES = frozenset({"local"})
_LABEL_W = 12
_NUM_W = 8
_DELTA_W = 7
#: PTX opcode rows: a wider label keeps type and width (``st.global.v4.b32``).
_PTX_W = (17, 6, 6, 6)
_PTX_SHOWN = 6


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.1f}"
    if isinstance(v, int) and abs(v) >= 100_000:
        return f"{v / 1000:.0f}k"
    return str(v)


def _delta(fig: Figure | None, a: Any, b: Any) -> tuple[str, str]:
    """(text, style) of B - A for the figure ``fig``."""
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "", ""
    d = b - a
    if d == 0:
        return "=", "$text-muted"
    text = f"{d:+.1f}" if isinstance(d, float) else f"{d:+d}"
    sign = delta_sign(a, b)
    if is_worse(fig, sign):
        return text, "bold $regression"
    if is_worse(fig, -sign):
        return text, "bold $improvement"
    return text, ""


def resource_rows(kernel: dict) -> list[tuple[str, str, str, str, str]]:
    """(figure name, short label, A, B, Δ) for each registry resource figure either side reports."""
    a, b = kernel.get("a") or {}, kernel.get("b") or {}
    rows = []
    for fig in figures_for("tui", "resource"):
        va, vb = fig.value(a), fig.value(b)
        if va is None and vb is None:
            continue
        d, _ = _delta(fig, va, vb)
        rows.append((fig.name, fig.word, fig.text(va, _fmt), fig.text(vb, _fmt), d))
    return rows


def class_rows(kernel: dict, limit: int = 8) -> list[tuple[str, str, Any, Any, int | None]]:
    """(class, label, A, B, Δ) sorted by size of change, the largest first. A side without the
    kernel (failed, or not built there) has None for its counts and the Δ, never 0."""
    deltas = (kernel.get("deltas") or {}).get("instruction_classes") or {}
    if not deltas:
        ma, mb = kernel.get("a"), kernel.get("b")
        a = (ma if isinstance(ma, dict) else {}).get("instruction_classes") or {}
        b = (mb if isinstance(mb, dict) else {}).get("instruction_classes") or {}
        if not (isinstance(ma, dict) and isinstance(mb, dict)):
            keys = sorted(set(a) | set(b), key=lambda k: -max(a.get(k, 0), b.get(k, 0)))
            rows: list[tuple[str, str, Any, Any, int | None]] = [
                (k, _class_label(k), a.get(k) if ma else None, b.get(k) if mb else None, None) for k in keys
            ]
            return rows[:limit]
        deltas = {k: [a.get(k, 0), b.get(k, 0), b.get(k, 0) - a.get(k, 0)] for k in set(a) | set(b)}
    items = sorted(deltas.items(), key=lambda kv: (-abs(kv[1][2]), -max(kv[1][0], kv[1][1]), kv[0]))
    return [(k, _class_label(k), v[0], v[1], v[2]) for k, v in items[:limit]]


def _class_label(key: str) -> str:
    try:
        from cutediff_tui.core.analysis.classes import default_classes

        return default_classes().label(key)
    except Exception:
        return key


def _label_lines(label: str) -> list[str]:
    """``label`` in lines of at most ``_LABEL_W`` characters, broken at spaces (a long word is cut
    into pieces): "a long label" → ["a long", "  label"] at width 6; never truncated."""
    lines: list[str] = []
    cur = ""
    for word in label.split(" "):
        while len(word) > _LABEL_W:
            if cur:
                lines.append(cur)
                cur = ""
            lines.append(word[:_LABEL_W])
            word = word[_LABEL_W:]
        if not cur:
            cur = word
        elif len(cur) + 1 + len(word) <= _LABEL_W:
            cur += " " + word
        else:
            lines.append(cur)
            cur = word
    if cur or not lines:
        lines.append(cur)
    return lines[:1] + [("  " + x)[:_LABEL_W] if len(x) <= _LABEL_W - 2 else x for x in lines[1:]]


def ptx_rows(kernel: dict, limit: int = _PTX_SHOWN) -> list[tuple[str, int, int, int]]:
    """(PTX opcode, A, B, Δ) of the PTX opcodes whose count changed most (the model's ranking)."""
    return [(op, a, b, b - a) for op, a, b in ptx_opcode_deltas(kernel, top=limit)]


def _ptx_line(op: str, a: str, b: str, d: str, style: str = "", op_style: str = "$text-muted") -> Content:
    w, n, m, dw = _PTX_W
    label = op if len(op) <= w else op[: w - 1] + "…"
    return Content.assemble((f"{label:<{w}}", op_style), (f"{a:>{n}}", style), (f"{b:>{m}}", style), (f"{d:>{dw}}", ""))


def _row(label: str, a: str, b: str, d: str, d_style: str, label_style: str = "") -> Content:
    """One row: label, A, B, Δ; a label longer than its column goes on under the first line, and
    values too wide for theirs (``LDG.E.U16×16``) go on lines of their own, one per side."""
    first, *rest = _label_lines(label)
    if len(a) >= _NUM_W or (a and len(b) >= _NUM_W):  # (B alone may spill into A's blank column)
        head = Content.assemble((f"{first:<{_LABEL_W}}", label_style), (f"{d:>{2 * _NUM_W + _DELTA_W}}", d_style))
        tail = [Content.styled(x, label_style) for x in rest]
        sides = [Content.assemble((f"  {s} ", f"bold $side-{s.lower()}"), v) for s, v in (("A", a), ("B", b)) if v]
        return Content("\n").join([head, *tail, *sides])
    row = Content.assemble(
        (f"{first:<{_LABEL_W}}", label_style),
        (f"{a:>{_NUM_W}}", ""),
        (f"{b:>{_NUM_W}}", ""),
        (f"{d:>{_DELTA_W}}", d_style),
    )
    return Content("\n").join([row, *(Content.styled(x, label_style) for x in rest)]) if rest else row


def _side_head(side: str, version: str) -> str:
    text = f"{side} {version}"
    return text if len(text) < _NUM_W else f"{side} …{version[-(_NUM_W - 4) :]}"


def _head(title: str, a: str, b: str) -> Content:
    return Content.assemble(
        (f"{title[:_LABEL_W]:<{_LABEL_W}}", "bold"),
        (f"{a:>{_NUM_W}}", "bold $side-a"),
        (f"{b:>{_NUM_W}}", "bold $side-b"),
        (f"{'Δ':>{_DELTA_W}}", "bold"),
    )


class PressurePlot(PlotextPlot):
    """Live general-purpose registers along the kernel, A and B (``nvdisasm -lrm``)."""

    DEFAULT_CSS = """
    PressurePlot { height: 10; min-height: 8; background: $surface; margin-bottom: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.series: dict[str, list[int]] = {}
        self.labels: dict[str, str] = {}

    def set_series(self, series: dict[str, list[int]], labels: dict[str, str]) -> None:
        self.series = series
        self.labels = labels
        self.replot()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.replot())
        self.replot()

    def replot(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.xticks([0, 25, 50, 75, 100], ["0", "25", "50", "75", "100%"])
        colours = {"a": self._colour("side-a"), "b": self._colour("side-b")}
        for s, ys in self.series.items():
            if not ys:
                continue
            n = len(ys)
            xs = [round(100 * (k + 0.5) / n, 1) for k in range(n)]
            plt.plot(xs, ys, label=self.labels.get(s, s.upper()), color=colours[s], marker="braille")
        top = max((max(ys) for ys in self.series.values() if ys), default=0)
        if top:
            step = max(1, round(top / 3 / 8) * 8)
            plt.yticks(list(range(0, top + 1, step)))
        self.refresh()

    def _colour(self, var: str) -> tuple[int, int, int] | str:
        from textual.color import Color

        value = self.app.theme_variables.get(var) if self.is_attached else None
        try:
            c = Color.parse(value) if value else None
        except Exception:
            c = None
        return (c.r, c.g, c.b) if c else ("blue" if var == "side-a" else "magenta")


class MetricsPane(Vertical):
    """Resources and instruction classes of one kernel, A vs B, and a pressure plot."""

    DEFAULT_CSS = """
    MetricsPane {
        height: auto;
        background: $surface;
        padding: 0 0 0 1;
        margin-top: 1;
        & > .metrics-block { height: auto; margin-bottom: 1; text-wrap: nowrap; text-overflow: clip; }
        & > #pressure, & > #pressure-title { display: none; }
        & > #pressure.-shown, & > #pressure-title.-shown { display: block; }
        & > #pressure-title { color: $text-muted; text-style: bold; }
    }
    """

    def __init__(self, comparison: dict, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.comparison = comparison
        self.kernel: dict = {}
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.class_data: list[tuple[str, str, Any, Any, int | None]] = []
        self.flashing: set[str] = set()
        """Figures shown highlighted because a recompile under watch changed them."""

    def set_comparison(self, comparison: dict) -> None:
        """Take a recompiled ``comparison`` (the next :meth:`show_kernel` draws from it)."""
        self.comparison = comparison

    def flash(self, names: set[str], seconds: float = 4.0) -> None:
        """Highlight the rows of ``names`` for ``seconds`` (figures changed since the last save)."""
        self.flashing = set(names)
        self.show_kernel(self.kernel)
        self.set_timer(seconds, self._unflash)

    def _unflash(self) -> None:
        if self.flashing:
            self.flashing = set()
            self.show_kernel(self.kernel)

    def compose(self) -> ComposeResult:
        yield Static(id="resources", classes="metrics-block")
        yield Static("register pressure · live GPRs", id="pressure-title")
        yield PressurePlot(id="pressure")
        yield Static(id="classes", classes="metrics-block")

    def show_kernel(self, kernel: dict) -> None:
        """Show the metrics of ``kernel`` (the plot waits for :meth:`show_pressure`)."""
        self.kernel = kernel
        self.rows = resource_rows(kernel)
        self.class_data = class_rows(kernel)
        sides = self.comparison.get("sides", {})
        la = (sides.get("a") or {}).get("dsl", "A")
        lb = (sides.get("b") or {}).get("dsl", "B")
        lines = [_head("resources", _side_head("A", la), _side_head("B", lb))]
        for key, label, va, vb, d in self.rows:
            fig = by_name(key)
            _, style = _delta(fig, fig.value(kernel.get("a")), fig.value(kernel.get("b"))) if fig else ("", "")
            lines.append(
                _row(label, va, vb, d, style, "bold reverse $accent" if key in self.flashing else "$text-muted")
            )
        pairs = instruction_match(kernel)
        if pairs is not None:
            lines.append(_row("SASS match", "", f"{pairs.matched} pairs", "", "", "$text-muted"))
            lines.append(Content.styled(f"  of A {pairs.a_count} and B {pairs.b_count} instructions", "$text-muted"))
        if kernel.get("pair_error"):
            lines.append(Content.assemble((kernel["pair_error"], "$text-error")))
        self.query_one("#resources", Static).update(Content("\n").join(lines))
        cls_lines = [_head("classes", "A", "B")]
        for key, label, va, vb, n in self.class_data:
            text = "" if n is None else "=" if n == 0 else f"{n:+d}"
            style = (
                "$text-muted"
                if not n
                else (("bold $regression" if n > 0 else "bold $improvement") if key in WORSE_CLASSES else "")
            )
            cls_lines.append(_row(label, _fmt(va), _fmt(vb), text, style, "$text-muted"))
        if not self.class_data:
            cls_lines.append(Content.styled("no instruction classes recorded", "$text-muted"))
        ptx = ptx_rows(kernel)
        if ptx:
            cls_lines.append(_ptx_line("PTX opcodes", "A", "B", "Δ", "bold", "bold"))
            cls_lines += [_ptx_line(op, _fmt(va), _fmt(vb), f"{d:+d}") for op, va, vb, d in ptx]
        self.query_one("#classes", Static).update(Content("\n").join(cls_lines))

    def show_pressure(self, series: dict[str, list[int]]) -> None:
        """Plot live-register curves (hidden when there are none)."""
        plot = self.query_one(PressurePlot)
        shown = any(series.values())
        plot.set_class(shown, "-shown")
        self.query_one("#pressure-title").set_class(shown, "-shown")
        if shown:
            sides = self.comparison.get("sides", {})
            labels = {s: f"{s.upper()} {(sides.get(s) or {}).get('dsl', '')}" for s in series}
            plot.set_series(series, labels)

    def text(self) -> str:
        """The resources and classes as plain text (for tests and copying)."""
        return "\n".join(str(self.query_one(f"#{i}", Static).render()) for i in ("resources", "classes"))
