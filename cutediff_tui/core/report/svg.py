"""Small hand-written inline SVG plots for the HTML report (no JavaScript, no external files).

Every text that reaches the SVG goes through :func:`esc`. Colours come from the caller; sizes are
in CSS pixels and the SVGs scale with their container (``viewBox`` + ``width: 100%``).
"""

from __future__ import annotations

import html
import math
import random
from collections.abc import Sequence

FONT = "font-family=\"-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\""
GRID = "#e3e6ea"
AXIS = "#9aa3ad"
INK = "#24292f"
MUTED = "#57606a"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fmt(v: float) -> str:
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v == int(v):
        return str(int(v))
    return f"{v:.3g}"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (about ``n`` of them)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _open(width: int, height: int, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{esc(title)}" class="plot" {FONT} font-size="12">',
        f"<title>{esc(title)}</title>",
    ]


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    out = []
    for name, color in items:
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="12" height="12" rx="2" fill="{color}"/>')
        out.append(f'<text x="{x + 17:.1f}" y="{y + 1:.1f}" fill="{INK}">{esc(name)}</text>')
        x += 24 + 7.2 * len(name)
    return out


def grouped_hbars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    title: str,
    width: int = 1050,
    label_width: int = 170,
) -> str:
    """Horizontal grouped bars: one group per category, one bar per series, value at the bar's end."""
    bar_h, gap = 9, 8
    group_h = bar_h * len(series) + gap
    top, bottom = 40, 28
    height = top + group_h * len(categories) + bottom
    plot_w = width - label_width - 60
    vmax = max([max(vals, default=0) for _, vals, _ in series] + [1])
    ticks = nice_ticks(0, vmax, 5)
    scale = plot_w / ticks[-1]
    out = _open(width, height, title)
    out += _legend([(n, c) for n, _, c in series], label_width, 18)
    y_end = top + group_h * len(categories)
    for t in ticks:
        x = label_width + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{y_end}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{x:.1f}" y="{y_end + 16}" text-anchor="middle" fill="{MUTED}" font-size="11">{_fmt(t)}</text>'
        )
    for i, cat in enumerate(categories):
        gy = top + i * group_h
        mid = gy + bar_h * len(series) / 2
        values = [vals[i] if i < len(vals) else 0 for _, vals, _ in series]
        changed = len(set(values)) > 1
        weight = ' font-weight="600"' if changed else ""
        out.append(
            f'<text x="{label_width - 8}" y="{mid + 4:.1f}" text-anchor="end" fill="{INK}"{weight}>{esc(cat)}</text>'
        )
        for j, (name, _vals, color) in enumerate(series):
            v = values[j]
            y = gy + j * bar_h
            w = max(v * scale, 0.0)
            out.append(
                f'<rect x="{label_width}" y="{y:.1f}" width="{w:.1f}" height="{bar_h - 1}" fill="{color}">'
                f"<title>{esc(cat)} · {esc(name)}: {_fmt(v)}</title></rect>"
            )
            out.append(
                f'<text x="{label_width + w + 4:.1f}" y="{y + bar_h - 1.5:.1f}" fill="{MUTED}" font-size="10">{_fmt(v)}</text>'
            )
    out.append(f'<line x1="{label_width}" y1="{top - 6}" x2="{label_width}" y2="{y_end}" stroke="{AXIS}"/>')
    out.append("</svg>")
    return "\n".join(out)


def line_plot(
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    title: str,
    y_label: str,
    x_label: str,
    marks: Sequence[tuple[float, str, str]] = (),
    width: int = 1050,
    height: int = 280,
) -> str:
    """Lines over a shared 0–100 % x axis (each series spread over its own length).

    ``marks`` are ``(x fraction, colour, tooltip)`` ticks drawn as a rug under the plot (e.g. the
    spill instructions of side B along the kernel).
    """
    left, right, top = 56, 16, 34
    rug = 14 if marks else 0
    bottom = 44 + rug
    pw, ph = width - left - right, height - top - bottom
    vmax = max([max(v, default=0) for _, v, _ in series] + [1])
    ticks = nice_ticks(0, vmax * 1.05, 5)
    ys = ph / ticks[-1]
    out = _open(width, height, title)
    out += _legend([(n, c) for n, _, c in series], left, 18)
    for t in ticks:
        y = top + ph - t * ys
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{MUTED}" font-size="11">{_fmt(t)}</text>'
        )
    for pct in (0, 25, 50, 75, 100):
        x = left + pw * pct / 100
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 4}" stroke="{AXIS}"/>')
        out.append(
            f'<text x="{x:.1f}" y="{top + ph + 17 + rug}" text-anchor="middle" fill="{MUTED}" font-size="11">{pct}%</text>'
        )
    for name, vals, color in series:
        n = len(vals)
        if n == 0:
            continue
        pts = []
        for i, v in enumerate(vals):
            x = left + (pw * i / (n - 1) if n > 1 else pw / 2)
            y = top + ph - float(v) * ys
            pts.append(f"{x:.1f},{y:.1f}")
        out.append(
            f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="1.6" '
            f'stroke-linejoin="round"><title>{esc(name)}</title></polyline>'
        )
    for frac, color, tip in marks:
        x = left + pw * min(max(frac, 0.0), 1.0)
        y0 = top + ph + 3
        out.append(
            f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + rug - 3}" stroke="{color}" stroke-width="1.2">'
            f"<title>{esc(tip)}</title></line>"
        )
    out.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="{AXIS}"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="{AXIS}"/>')
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle" fill="{MUTED}" font-size="11">{esc(x_label)}</text>'
    )
    out.append(
        f'<text transform="translate(14 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle" fill="{MUTED}" '
        f'font-size="11">{esc(y_label)}</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


def _quantile(xs: Sequence[float], q: float) -> float:
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def distributions(
    rows: Sequence[dict], *, title: str, colors: tuple[str, str], names: tuple[str, str], width: int = 1050
) -> str:
    """Per bench shape, A and B sample distributions: dots, the IQR box and the median.

    Each row is ``{label, note, a: {samples, median, q1, q3}, b: {...}}``; samples may be empty
    (then only the box from the summary is drawn). Each shape has its own time axis.
    """
    label_w, right = 150, 150
    lane, panel_gap, top = 22, 34, 40
    pw = width - label_w - right
    panel_h = 2 * lane + 22
    height = top + len(rows) * (panel_h + panel_gap) - panel_gap + 8
    out = _open(width, height, title)
    out += _legend(list(zip(names, colors)), label_w, 18)
    for i, row in enumerate(rows):
        y0 = top + i * (panel_h + panel_gap)
        vals: list[float] = []
        for s in ("a", "b"):
            d = row.get(s) or {}
            vals += list(d.get("samples") or [])
            vals += [x for x in (d.get("q1"), d.get("q3"), d.get("median")) if isinstance(x, (int, float))]
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        pad = (hi - lo) * 0.08 or abs(hi) * 0.02 or 1.0
        ticks = nice_ticks(lo - pad, hi + pad, 4)
        t0, t1 = ticks[0], ticks[-1]

        def X(v: float, t0: float = t0, t1: float = t1) -> float:
            return label_w + (v - t0) / (t1 - t0) * pw

        for t in ticks:
            x = X(t)
            out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + 2 * lane}" stroke="{GRID}"/>')
            out.append(
                f'<text x="{x:.1f}" y="{y0 + 2 * lane + 14}" text-anchor="middle" fill="{MUTED}" font-size="10">{_fmt(t)} ms</text>'
            )
        out.append(
            f'<text x="{label_w - 10}" y="{y0 + lane + 4}" text-anchor="end" fill="{INK}" font-weight="600">{esc(row.get("label", ""))}</text>'
        )
        if row.get("note"):
            out.append(
                f'<text x="{label_w + pw + 10}" y="{y0 + lane + 4}" fill="{row.get("note_color", INK)}" font-weight="600">{esc(row["note"])}</text>'
            )
        for j, s in enumerate(("a", "b")):
            d = row.get(s) or {}
            color = colors[j]
            cy = y0 + j * lane + lane / 2
            samples = sorted(float(x) for x in d.get("samples") or [])
            q1, q3, med = d.get("q1"), d.get("q3"), d.get("median")
            if samples:
                q1 = _quantile(samples, 0.25) if q1 is None else q1
                q3 = _quantile(samples, 0.75) if q3 is None else q3
                med = _quantile(samples, 0.5) if med is None else med
                step = max(1, len(samples) // 400)
                rng = random.Random(1000 * i + j)  # fixed jitter: the same report twice is the same file
                for v in samples[::step]:
                    jitter = rng.uniform(-5.5, 5.5)
                    out.append(
                        f'<circle cx="{X(v):.1f}" cy="{cy + jitter:.1f}" r="1.6" fill="{color}" fill-opacity="0.35"/>'
                    )
            if isinstance(q1, (int, float)) and isinstance(q3, (int, float)):
                out.append(
                    f'<rect x="{X(q1):.1f}" y="{cy - 7:.1f}" width="{max(X(q3) - X(q1), 1.0):.1f}" height="14" '
                    f'fill="none" stroke="{color}" stroke-width="1.5"/>'
                )
            if isinstance(med, (int, float)):
                out.append(
                    f'<line x1="{X(med):.1f}" y1="{cy - 9:.1f}" x2="{X(med):.1f}" y2="{cy + 9:.1f}" stroke="{color}" '
                    f'stroke-width="3"><title>{esc(names[j])} median {med:.4g} ms</title></line>'
                )
    out.append("</svg>")
    return "\n".join(out)
