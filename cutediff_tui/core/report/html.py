"""Self-contained HTML report: one file, inline CSS and SVG plots, no script, no network.

All text from kernels, sources, remarks and the command line goes through :func:`html.escape`;
a Content-Security-Policy meta tag forbids scripts and remote loads as a second line of defence.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

from ..model.figures import Figure
from ..model.sides import shared_pins
from ..sanitize import visible
from . import model as M
from . import svg

COLOR = {"a": "#3b6fb6", "b": "#e8772e"}
VERDICT_COLOR = {"SLOWER": "#c62828", "FASTER": "#2e7d32", "SAME": "#57606a", "UNSURE": "#b26a00"}

#: No scripts, no remote loads: only inline styles and data: images.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { --ink:#24292f; --muted:#57606a; --line:#d8dee4; --soft:#f6f8fa; --a:#3b6fb6; --b:#e8772e;
        --worse:#c62828; --better:#2e7d32; }
* { box-sizing: border-box; }
html { background: #fff; }
body { margin: 0 auto; max-width: 1120px; padding: 28px 32px 48px; color: var(--ink); background: #fff;
       font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 34px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 8px; }
p { margin: 6px 0; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
code { background: var(--soft); padding: 1px 4px; border-radius: 4px; word-break: break-all; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 12px 14px;
      overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
.headline { font-size: 16px; margin: 8px 0 12px; font-weight: 600; }
.sides { display: flex; gap: 10px; flex-wrap: wrap; margin: 8px 0; }
.chip { border: 1px solid var(--line); border-radius: 999px; padding: 3px 12px; background: #fff; }
.chip b { display: inline-block; width: 18px; height: 18px; line-height: 18px; text-align: center; border-radius: 50%;
          color: #fff; margin-right: 6px; font-size: 11px; }
.chip.a b { background: var(--a); } .chip.b b { background: var(--b); }
.meta { color: var(--muted); font-size: 13px; }
.alert { border-left: 4px solid var(--worse); background: #fdecea; padding: 8px 12px; border-radius: 4px; margin: 10px 0; }
a { color: var(--a); text-decoration: none; } a:hover { text-decoration: underline; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 10px; margin: 12px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: #fff; }
.card .k { color: var(--muted); font-size: 12px; }
.card .v { font-size: 20px; font-weight: 600; margin-top: 2px; }
.card .d { font-size: 12px; }
.card.worse { border-color: #f1b4b4; background: #fff7f7; }
table { border-collapse: collapse; margin: 8px 0 4px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td:first-child, th:first-child { white-space: nowrap; }
td code { word-break: normal; overflow-wrap: anywhere; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.worse { color: var(--worse); font-weight: 600; }
.better { color: var(--better); font-weight: 600; }
.same { color: var(--muted); }
.changed { font-weight: 600; background: #fff4d6; padding: 0 3px; border-radius: 3px; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; align-items: start; }
.figure { margin: 10px 0 4px; }
.figure svg.plot { display: block; width: 100%; height: auto; max-width: 1056px; }
.caption { color: var(--muted); font-size: 12px; margin-top: 2px; }
details { margin: 8px 0; }
summary { cursor: pointer; color: var(--muted); }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 10px; }
@media (max-width: 800px) { .grid2 { grid-template-columns: 1fr; } body { padding: 16px; } }
@media print { details { display: block; } }
"""


def e(text: object) -> str:
    return html.escape(visible(text), quote=True)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """Cells are already-escaped HTML; columns listed in ``numeric`` are right-aligned."""
    head = "".join(f'<th class="n">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(header))
    body = []
    for r in rows:
        body.append(
            "<tr>"
            + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r))
            + "</tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_table = table


def _delta(fig: Figure | None, a: object, b: object) -> str:
    text, sign = M.delta(a, b)
    if not text:
        return ""
    if sign == 0:
        return f'<span class="same">{e(text)}</span>'
    if M.worse(fig, a, b) or M.better(fig, a, b):
        return f'<span class="{"worse" if M.worse(fig, a, b) else "better"}">{e(text)}</span>'
    return e(text)


def _code(text: object) -> str:
    return f"<code>{e(text)}</code>" if str(text) else ""


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{e(summary)}</summary>{body}</details>"


# ---------------------------------------------------------------- sections


def _header(c: dict) -> str:
    out = ["<header>", "<h1>cutediff report</h1>", f'<p class="headline">{e(M.headline(c))}</p>', '<div class="sides">']
    for s in M.SIDES:
        out.append(f'<span class="chip {s}"><b>{s.upper()}</b>{e(M.side_title(c, s))}</span>')
    out.append("</div>")
    meta = []
    shared = shared_pins(c)
    if shared:
        meta.append("both with " + ", ".join(_code(p) for p in shared))
    rec = (c.get("recipe") or {}).get("name")
    if rec:
        meta.append(f"recipe {_code(rec)}")
    if c.get("arch"):
        meta.append(f"target {_code(c['arch'])}")
    if c.get("created"):
        meta.append(e(c["created"]))
    if meta:
        out.append(f'<p class="meta">{" · ".join(meta)}</p>')
    kf = M.kernel_filter(c)
    if kf:
        out.append(f'<p class="meta">Only the kernels whose name or symbol matches --kernel-filter {_code(kf)}.</p>')
    for failed, err in M.side_errors(c):
        out.append(
            f'<div class="alert"><b>Side {failed.upper()} ({e(M.side_name(c, failed))}) failed:</b> {e(err)}</div>'
        )
    ks = M.kernels(c)
    if len(ks) > 1:
        out.append(_overview(c, ks))
    out.append("</header>")
    return "\n".join(out)


def _overview(c: dict, ks: list[dict]) -> str:
    """One row per kernel: A → B for the resources that matter, linked to the kernel's section."""
    keys = M.resource_figures(key_only=True)
    rows = []
    for i, k in enumerate(ks):
        a, b = M.metrics(k, "a"), M.metrics(k, "b")
        cells = [f'<a href="#kernel-{i}">{e(k.get("name") or "kernel")}</a>']
        for fig in keys:
            va, vb = fig.value(a), fig.value(b)
            cls = "worse" if M.worse(fig, va, vb) else ("better" if M.better(fig, va, vb) else "same")
            cells.append(f'<span class="{cls}">{e(fig.text(va, M.num))} → {e(fig.text(vb, M.num))}</span>')
        cells.append(e(M.mix_sentence(k)))
        rows.append(cells)
    header = ["kernel", *[e(fig.title) for fig in keys], "instruction mix"]
    return _table(header, rows, numeric=tuple(range(1, len(keys) + 1)))


def _environment(c: dict) -> str:
    host = _table(["", "this machine"], [(e(k), e(v)) for k, v in M.host_rows(c)])
    main, other = M.package_rows(c)
    na, nb = M.side_name(c, "a"), M.side_name(c, "b")

    def row(n: str, a: str, b: str) -> tuple[str, str, str]:
        cls = ' class="changed"' if a != b else ""
        return (e(n) if n == M.CUDA_ROW else _code(n)), e(a), f"<span{cls}>{e(b)}</span>"

    pk = ""
    if main:
        pk = _table(["package", f"A {e(na)}", f"B {e(nb)}"], [row(*r) for r in main])
        if other:
            pk += _details(
                f"The other {len(other)} packages of the two environments",
                _table(["package", "A", "B"], [row(*r) for r in other]),
            )
    notes = M.side_notes(c)
    note_html = ""
    if notes:
        items = (
            "<ul>"
            + "".join(f"<li>{'sides' if ' and ' in s else 'side'} {e(s)} {e(t)}</li>" for s, t in notes)
            + "</ul>"
        )
        note_html = (
            _details(f"What the builds needed ({len(notes)} shims and notes)", items) if len(notes) > 4 else items
        )
    return (
        f'<section><h2>Environment</h2><div class="grid2"><div>{host}</div><div>{pk}{note_html}</div></div></section>'
    )


def _cards(c: dict, k: dict) -> str:
    a, b = M.metrics(k, "a"), M.metrics(k, "b")
    out = []
    for fig in M.resource_figures(key_only=True):
        va, vb = fig.value(a), fig.value(b)
        if va is None and vb is None:
            continue
        text, sign = M.delta(va, vb)
        worse = M.worse(fig, va, vb)
        u = f" {fig.unit}" if fig.unit else ""
        cls = " worse" if worse else ""
        dcls = "worse" if worse else ("better" if sign < 0 else "same")
        out.append(
            f'<div class="card{cls}"><div class="k">{e(fig.label)}</div>'
            f'<div class="v">{e(fig.text(va, M.num))} → {e(fig.text(vb, M.num))}{e(u)}</div>'
            f'<div class="d {dcls}">{e(text or "")}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>' if out else ""


def _kernel(c: dict, k: dict, idx: int) -> str:
    name = str(k.get("name") or "kernel")
    a, b = M.metrics(k, "a"), M.metrics(k, "b")
    na, nb = M.side_title(c, "a"), M.side_title(c, "b")
    out = [
        f'<section id="kernel-{idx}"><h2>Kernel {e(name)}</h2>',
        f"<p>{e(M.kernel_sentence(c, k))}.</p>",
        _cards(c, k),
    ]
    ranked = M.kernel_changes(c, k)
    if len(ranked) > 1:
        out.append('<p class="meta">Changes, most important first:</p><ol class="changes">')
        out += [f"<li>{e(line)}</li>" for line in ranked]
        out.append("</ol>")
    if k.get("pair_error"):
        out.append(f'<div class="alert">{e(k["pair_error"])}</div>')
    rows = []
    for fig in M.resource_figures():
        va, vb = fig.value(a), fig.value(b)
        if va is None and vb is None:
            continue
        rows.append((e(fig.title), e(fig.text(va, M.num)), e(fig.text(vb, M.num)), _delta(fig, va, vb)))
    left = (
        ("<h3>Resources</h3>" + _table(["resource", f"A {e(na)}", f"B {e(nb)}", "Δ"], rows, numeric=(1, 2, 3)))
        if rows
        else ""
    )
    ops = M.opcode_rows(k)
    if ops:
        left += "<h3>Key opcodes</h3>" + _table(
            ["opcode", f"A {e(na)}", f"B {e(nb)}", "Δ"],
            [(_code(f.name), M.num(x), M.num(y), _delta(f, x, y)) for f, x, y in ops],
            numeric=(1, 2, 3),
        )
    ptx_ops = M.ptx_opcode_deltas(k)
    if ptx_ops:
        left += "<h3>PTX opcodes that changed most</h3>" + _table(
            ["PTX opcode", f"A {e(na)}", f"B {e(nb)}", "Δ"],
            [(_code(op), str(x), str(y), _delta(None, x, y)) for op, x, y in ptx_ops],
            numeric=(1, 2, 3),
        )
    classes = M.class_rows(k)
    right = ""
    if classes:
        right = f'<h3>Instruction classes</h3><p class="meta">{e(M.mix_sentence(k))}</p>' + _table(
            ["class", "A", "B", "Δ"],
            [(e(lab), M.num(x), M.num(y), _delta(None, x, y)) for _, lab, x, y in classes],
            numeric=(1, 2, 3),
        )
    if classes:
        chart = svg.grouped_hbars(
            [lab for _, lab, _, _ in classes],
            [
                (f"A {na}", [x or 0 for _, _, x, _ in classes], COLOR["a"]),
                (f"B {nb}", [y or 0 for _, _, _, y in classes], COLOR["b"]),
            ],
            title=f"Instruction classes of {name}, A vs B",
        )
        out.append(
            f'<h3>Instruction mix</h3><div class="figure">{chart}<div class="caption">SASS instructions per class, '
            "A vs B; classes that differ are in bold.</div></div>"
        )
    out.append(_pressure(c, k, name))
    out.append(f'<div class="grid2"><div>{left}</div><div>{right}</div></div>')
    al = M.alignment_text(k)
    if al:
        out.append(f'<p class="meta">{e(al[0].upper() + al[1:])}.</p>')
    hunks = M.alignment_hunks(k)
    if hunks:
        out.append(
            _details(
                f"The {len(hunks)} largest SASS differences",
                _table(
                    ["kind", "A instructions", "B instructions", "what changed"],
                    [
                        (
                            e(h.get("kind") or ""),
                            e(M.range_text(h.get("a_range"))),
                            e(M.range_text(h.get("b_range"))),
                            e(h.get("summary") or ""),
                        )
                        for h in hunks
                    ],
                    numeric=(1, 2),
                ),
            )
        )
    out.append(_spills(k))
    out.append(_remarks(k))
    for note in M.lineinfo_notes(k):
        out.append(f'<p class="meta">{e(note)}.</p>')
    sym = k.get("symbol") or {}
    if sym.get("a") or sym.get("b"):
        out.append(_details("Symbols", f"<p>A: {_code(sym.get('a') or '-')}</p><p>B: {_code(sym.get('b') or '-')}</p>"))
    out.append("</section>")
    return "\n".join(x for x in out if x)


def _pressure(c: dict, k: dict, name: str) -> str:
    series = []
    peaks = []
    for s in M.SIDES:
        m = M.metrics(k, s)
        curve = M.pressure_curve(m)
        if curve:
            pk, where = M.pressure_peak(m)
            label = f"{s.upper()} {M.side_name(c, s)}" + (f" (peak {M.num(pk)})" if pk is not None else "")
            series.append((label, curve, COLOR[s]))
            if pk is not None:
                peaks.append(f"{s.upper()} peaks at {M.num(pk)} live registers" + (f" ({where})" if where else ""))
    if not series:
        return ""
    marks = []
    b = M.metrics(k, "b")
    n = b.get("instructions") or 0
    for site in b.get("spill_sites") or []:
        if isinstance(site, dict) and isinstance(site.get("index"), int) and n:
            where = f"{M.short_path(site.get('file'))}:{site.get('line')}" if site.get("file") else "no line info"
            marks.append((site["index"] / max(n - 1, 1), COLOR["b"], f"{site.get('opcode', '')} at {where}"))
    plot = svg.line_plot(
        series,
        title=f"Register pressure along {name}",
        y_label="live registers (GPR)",
        x_label="position in the kernel (% of its SASS instructions)",
        marks=marks,
    )
    cap = "Live general registers per instruction (nvdisasm -lrm count), down-sampled to the maximum per bucket."
    if marks:
        cap += f" Ticks under the axis: the {len(marks)} spill instructions of B."
    if peaks:
        cap += " " + "; ".join(peaks) + "."
    return f'<h3>Register pressure</h3><div class="figure">{plot}<div class="caption">{e(cap)}</div></div>'


def _spills(k: dict) -> str:
    lines = M.spill_lines(k)
    if not lines:
        return ""
    count = {s: len(M.metrics(k, s).get("spill_sites") or []) for s in M.SIDES}

    def pair(g: M.SpillLine, s: str) -> str:
        if not (g.stores[s] or g.loads[s]):
            return '<span class="same">-</span>'
        return (
            e(f"{g.store_bytes[s]} / {g.load_bytes[s]}")
            + f'<br><span class="meta">{g.stores[s]} STL, {g.loads[s]} LDL</span>'
        )

    shown = [s for s in M.SIDES if count[s]] or list(M.SIDES)

    def row(g: M.SpillLine) -> tuple[str, ...]:
        where = _code(g.where) + (f'<br><span class="meta">inlined into {e(g.inline)}</span>' if g.inline else "")
        cells = [where, *[pair(g, s) for s in shown], e(g.loop_depth or "-")]
        return (*cells, _code(g.source)) if has_code else tuple(cells)

    has_code = any(g.source for g in lines)
    header = ["source line", *[f"{s.upper()} bytes st / ld" for s in shown], "loop depth"] + (
        ["code"] if has_code else []
    )
    nums = tuple(range(1, len(shown) + 2))
    top, rest = lines[: M.TOP_SPILL_LINES], lines[M.TOP_SPILL_LINES :]
    out = [
        f"<h3>Spill sites</h3><p>{count['a']} spill instruction(s) on A, {count['b']} on B, "
        f"at {len(lines)} source line(s).</p>",
        _table(header, [row(g) for g in top], numeric=nums),
    ]
    if rest:
        out.append(_details(f"{len(rest)} more spill line(s)", _table(header, [row(g) for g in rest], numeric=nums)))
    return "".join(out)


def _remarks(k: dict) -> str:
    rows = M.remark_rows(k)
    if not rows:
        return ""
    body = []
    for s, r in rows:
        msg = e(r.get("message") or "")
        if r.get("detail"):
            msg += f'<br><span class="meta">{e(r["detail"])}</span>'
        body.append(
            (s.upper(), e(r.get("category") or ""), _code(M.remark_where(r)), _code(r.get("function") or ""), msg)
        )
    return "<h3>Compiler remarks</h3>" + _table(["side", "kind", "where", "function", "message"], body)


def _crosscheck(c: dict) -> str:
    cc = M.crosscheck(c)
    if not cc:
        return ""
    out = [
        "<section><h2>ptxas cross-check</h2><p>Each side's PTX re-assembled with each ptxas: it tells whether a "
        "change comes from the PTX the DSL generates or from ptxas.</p>"
    ]
    for name, entry in cc.items():
        out.append(f"<h3>{e(name)}</h3>")
        out.append(
            _table(
                list(M.CROSSCHECK_HEADER),
                [tuple(e(x) for x in r) for r in M.crosscheck_rows(entry)],
                numeric=(3, 4, 5, 6),
            )
        )
        if entry.get("verdict"):
            out.append(f"<p><b>Verdict:</b> {e(entry['verdict'])}</p>")
    out.append("</section>")
    return "\n".join(out)


def _bench(c: dict) -> str:
    shapes = M.bench_shapes(c)
    if not shapes:
        return ""
    na, nb = M.side_name(c, "a"), M.side_name(c, "b")
    gpu = M.bench_gpu_text(c)
    out = ["<section><h2>Benchmark</h2>"]
    if gpu:
        out.append(f'<p class="meta">Measured on {e(gpu)}.</p>')
    rows, plot_rows = [], []
    for r in shapes:
        ratio = M.bench_ratio(r)
        verdict = str(r.get("verdict") or "")
        vcol = VERDICT_COLOR.get(verdict, svg.INK)
        rows.append(
            (
                e(M.shape_label(r.get("shape"))),
                e(M.timing_text(r.get("a") or {})),
                e(M.timing_text(r.get("b") or {})),
                e(f"{ratio:.3f}" if ratio is not None else "-"),
                e(M.ci_text(r)),
                f'<span style="color:{vcol};font-weight:600">{e(verdict)}</span>',
            )
        )
        prow: dict[str, object] = {
            "label": M.shape_label(r.get("shape")),
            "note": (f"B/A {ratio:.3f} {verdict}" if ratio is not None else verdict),
            "note_color": vcol,
        }
        for s in M.SIDES:
            st = r.get(s) or {}
            prow[s] = {
                "samples": M.bench_samples(r, s),
                "median": st.get("median_ms"),
                "q1": st.get("q1_ms"),
                "q3": st.get("q3_ms"),
            }
        plot_rows.append(prow)
    out.append(
        _table(
            ["shape", f"A {e(na)} median", f"B {e(nb)} median", "B / A", "95% CI", "verdict"],
            rows,
            numeric=(1, 2, 3, 4),
        )
    )
    plot = svg.distributions(
        plot_rows, title="Benchmark sample distributions", colors=(COLOR["a"], COLOR["b"]), names=(f"A {na}", f"B {nb}")
    )
    out.append(
        f'<div class="figure">{plot}<div class="caption">Each dot is one timed call; box: interquartile range; '
        "thick line: median.</div></div>"
    )
    kernels = _bench_kernels(c.get("bench") or {})
    if kernels:
        out.append(kernels)
    out[-1] += "</section>"
    return "\n".join(out)


def _bench_kernels(bench: dict) -> str:
    """Per-kernel rows (CUPTI), Nsight Compute rows with deltas and the verdict sentences."""
    from ..bench.explain import fmt_rate
    from ..bench.ncu import LABELS

    out = []
    rows = []
    for case in bench.get("shapes") or []:
        for k in case.get("kernels") or []:
            verdict = str(k.get("verdict") or "")
            rows.append(
                (
                    e(M.shape_label(case.get("shape"))),
                    e(k["kernel"]),
                    e(M.timing_text(k.get("a") or {})),
                    e(M.timing_text(k.get("b") or {})),
                    e(f"{k['ratio']:.3f}" if "ratio" in k else "-"),
                    e(M.ci_text(k) if "ci_low" in k else "-"),
                    f'<span style="color:{VERDICT_COLOR.get(verdict, svg.INK)};font-weight:600">{e(verdict)}</span>',
                )
            )
    if rows:
        out.append("<h3>Per kernel (GPU time per call, CUPTI)</h3>")
        out.append(
            _table(["shape", "kernel", "A median", "B median", "B / A", "95% CI", "verdict"], rows, (2, 3, 4, 5))
        )
    prof = bench.get("profile") or {}

    def value(metric: str, v: object) -> str:
        if metric == "local_gbps":
            return fmt_rate(v)  # type: ignore[arg-type]
        if metric == "top_stalls":
            return ", ".join(f"{n} {r:g}" for n, r in v or []) or "-"  # type: ignore[attr-defined]
        return "-" if v is None else f"{v:g}"

    prows = [
        (
            e(r["kernel"]),
            e(LABELS.get(r["metric"], r["metric"])),
            e(value(r["metric"], r["a"])),
            e(value(r["metric"], r["b"])),
            e(f"{r['delta']:+g}" if r.get("delta") is not None else ""),
        )
        for r in prof.get("rows") or []
    ]
    if prows:
        out.append("<h3>Nsight Compute (--clock-control none)</h3>")
        out.append(_table(["kernel", "metric", "A", "B", "Δ"], prows, (2, 3, 4)))
    if prof.get("error"):
        out.append(f'<p class="meta">{e(prof["error"])}</p>')
    verdicts = bench.get("verdicts") or []
    if verdicts:
        out.append("<ul>" + "".join(f"<li>{e(v)}</li>" for v in verdicts) + "</ul>")
    return "\n".join(out)


def _reproduce(c: dict) -> str:
    lines = M.reproduce_lines(c)
    out = ["<section><h2>Reproduce</h2>", f"<pre>{e(chr(10).join(lines))}</pre>"]
    exact = [(s, M.exact_pip_command(c, s)) for s in M.SIDES]
    exact = [(s, x) for s, x in exact if x]
    if exact:
        out.append(
            _details(
                "Exact environments (every locked package)",
                "<pre>" + e("\n".join(f"# side {s.upper()}\n{x}" for s, x in exact)) + "</pre>",
            )
        )
    out.append("</section>")
    return "\n".join(out)


def _footer(c: dict) -> str:
    host = c.get("host") or {}
    bits = [f"cutediff {host['cutediff']}" if host.get("cutediff") else "cutediff"]
    if c.get("analysis_version") is not None:
        bits.append(f"analysis v{c['analysis_version']}")
    t = c.get("timing") or {}
    if t.get("total_seconds") is not None:
        bits.append(f"{t['total_seconds']:.1f} s" + (" (from the cache)" if t.get("from_cache") else ""))
    return f"<footer>Made by {e(' · '.join(bits))}. Self-contained file: no scripts, no network.</footer>"


def render_html(comparison: dict) -> str:
    """The whole report as one self-contained HTML document."""
    c = comparison
    title = f"cutediff: {M.side_name(c, 'a')} vs {M.side_name(c, 'b')}"
    parts = [_header(c), _environment(c)]
    parts += [_kernel(c, k, i) for i, k in enumerate(M.kernels(c))]
    parts += [_crosscheck(c), _bench(c), _reproduce(c), _footer(c)]
    body = "\n".join(p for p in parts if p)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
