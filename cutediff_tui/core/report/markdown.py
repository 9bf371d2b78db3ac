"""GitHub-flavoured Markdown report: pastes into an issue as it is.

Text that comes from kernels, sources or the command line is escaped: Markdown punctuation gets a
backslash and ``< > &`` become entities, so a kernel called ``<script>`` stays text on GitHub.
Long parts (all packages, every spill line, symbols, exact environments) fold into ``<details>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from ..model.figures import Figure
from ..model.sides import shared_pins
from ..sanitize import no_mentions, truncate, visible
from . import model as M

_MD_PUNCT = re.compile(r"([\\`*_\[\]|~])")
_UNSAFE_IN_CODE = set("`<>&\n\r")


def md_text(text: object) -> str:
    """Escape text for a Markdown paragraph or table cell (never becomes markup or HTML)."""
    s = visible(str(text).replace("\r", " ").replace("\n", " "))
    s = _MD_PUNCT.sub(r"\\\1", s)
    return no_mentions(s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def md_code(text: object, *, table: bool = True) -> str:
    """Inline code for plain identifiers and paths; escaped text when a code span would be unsafe."""
    s = visible(text)
    if not s:
        return ""
    if _UNSAFE_IN_CODE & set(s):  # HTML code element: entities and backslash escapes both work in it
        return f"<code>{md_text(s)}</code>"
    return "`" + (s.replace("|", "\\|") if table else s) + "`"


def fenced(body: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside."""
    body = visible(body)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """Rows are already escaped; ``align`` is one letter per column (l/r)."""
    header = list(header)
    marks = []
    for i in range(len(header)):
        a = align[i] if i < len(align) else "l"
        marks.append("--:" if a == "r" else "---")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(c if c else " " for c in r) + " |")
    return lines


def details(summary: str, body: list[str]) -> list[str]:
    """A folded block; ``summary`` is plain text (HTML-escaped here)."""
    return [f"<details><summary>{html.escape(summary)}</summary>", "", *body, "", "</details>"]


def _delta_cell(fig: Figure, a: object, b: object) -> str:
    text, _ = M.delta(a, b)
    return f"**{text}**" if M.worse(fig, a, b) else text


# ---------------------------------------------------------------- sections


def _title(c: dict) -> list[str]:
    out = [f"### cutediff: {md_text(M.headline(c))}", ""]
    parts = [f"**A** {md_text(M.side_title(c, 'a'))}", f"**B** {md_text(M.side_title(c, 'b'))}"]
    shared = shared_pins(c)
    if shared:
        parts.append("both with " + ", ".join(md_code(p, table=False) for p in shared))
    rec = (c.get("recipe") or {}).get("name")
    if rec:
        parts.append(
            f"recipe {md_code(rec, table=False)}" + (f" for {md_code(c['arch'], table=False)}" if c.get("arch") else "")
        )
    out.append(" · ".join(parts))
    kf = M.kernel_filter(c)
    if kf:
        out += ["", f"Only the kernels whose name or symbol matches --kernel-filter {md_code(kf, table=False)}."]
    for s, err in M.side_errors(c):
        out += ["", f"> **Side {s.upper()} ({md_text(M.side_name(c, s))}) failed:** {md_text(err)}"]
    ks = M.kernels(c)
    if len(ks) > 1:
        out.append("")
        out += [f"- {md_text(M.kernel_sentence(c, k))}" for k in ks]
    return out


def _environment(c: dict) -> list[str]:
    out = ["#### Environment", ""]
    out += table(["", "this machine"], [(md_text(k), md_text(v)) for k, v in M.host_rows(c)])
    main, other = M.package_rows(c)
    na, nb = M.side_name(c, "a"), M.side_name(c, "b")
    if main:
        out.append("")

        def row(n: str, a: str, b: str) -> tuple[str, str, str]:
            cell_b = md_text(b)
            return (md_text(n) if n == M.CUDA_ROW else md_code(n)), md_text(a), (f"**{cell_b}**" if a != b else cell_b)

        out += table(["package", f"A {md_text(na)}", f"B {md_text(nb)}"], [row(*r) for r in main])
        if other:
            out += [""] + details(
                f"The other {len(other)} packages of the two environments",
                table(["package", "A", "B"], [row(*r) for r in other]),
            )
    notes = M.side_notes(c)
    if notes:
        items = [f"- {'sides' if ' and ' in s else 'side'} {s} {md_text(t)}" for s, t in notes]
        out += [""] + (
            details(f"What the builds needed ({len(notes)} shims and notes)", items) if len(notes) > 4 else items
        )
    return out


def _kernel(c: dict, k: dict) -> list[str]:
    name = str(k.get("name") or "kernel")
    a, b = M.metrics(k, "a"), M.metrics(k, "b")
    na, nb = md_text(M.side_title(c, "a")), md_text(M.side_title(c, "b"))
    out = [f"#### Kernel {md_text(name)}", "", md_text(M.kernel_sentence(c, k)) + "."]
    ranked = M.kernel_changes(c, k)
    if len(ranked) > 1:
        out += ["", "Changes, most important first:", ""]
        out += [f"{i}. {md_text(line)}" for i, line in enumerate(ranked, 1)]
    if k.get("pair_error"):
        out += ["", f"> {md_text(k['pair_error'])}"]
    rows = []
    for fig in M.resource_figures():
        va, vb = fig.value(a), fig.value(b)
        if va is None and vb is None:
            continue
        rows.append((fig.title, fig.text(va, M.num), fig.text(vb, M.num), _delta_cell(fig, va, vb)))
    if rows:
        out += [""] + table(["resource", f"A {na}", f"B {nb}", "Δ"], rows, "lrrr")
    sym = k.get("symbol") or {}
    if sym.get("a") or sym.get("b"):
        out += [""] + details(
            "Symbols",
            [f"- A: {md_code(sym.get('a') or '-', table=False)}", f"- B: {md_code(sym.get('b') or '-', table=False)}"],
        )
    classes = M.class_rows(k)
    if classes:
        mix = M.mix_sentence(k)
        out += ["", "**Instruction classes**" + (f": {md_text(mix)}" if mix else ""), ""]
        out += table(
            ["class", f"A {na}", f"B {nb}", "Δ"],
            [(md_text(lab), M.num(x), M.num(y), M.delta(x, y)[0]) for _, lab, x, y in classes],
            "lrrr",
        )
    ops = M.opcode_rows(k)
    if ops:
        out += ["", "**Key opcodes**", ""]
        out += table(
            ["opcode", f"A {na}", f"B {nb}", "Δ"],
            [(md_code(f.name), M.num(x), M.num(y), _delta_cell(f, x, y)) for f, x, y in ops],
            "lrrr",
        )
    ptx_ops = M.ptx_opcode_deltas(k)
    if ptx_ops:
        out += ["", "**PTX opcodes that changed most** (type and width kept)", ""]
        out += table(
            ["PTX opcode", f"A {na}", f"B {nb}", "Δ"],
            [(md_code(op), str(x), str(y), M.delta(x, y)[0]) for op, x, y in ptx_ops],
            "lrrr",
        )
    al = M.alignment_text(k)
    if al:
        out += ["", md_text(al[0].upper() + al[1:]) + "."]
    hunks = M.alignment_hunks(k)
    if hunks:
        rows = [
            (
                md_text(h.get("kind") or ""),
                M.range_text(h.get("a_range")),
                M.range_text(h.get("b_range")),
                md_text(h.get("summary") or ""),
            )
            for h in hunks
        ]
        out += [""] + details(
            f"The {len(hunks)} largest SASS differences",
            table(["kind", "A instructions", "B instructions", "what changed"], rows, "lrrl"),
        )
    out += _top_hunk(c, k)
    peaks = [(s, M.pressure_peak(M.metrics(k, s))) for s in M.SIDES]
    if any(p[0] is not None for _, p in peaks):
        parts = []
        for s, (v, where) in peaks:
            if v is not None:
                parts.append(f"{s.upper()} {M.num(v)}" + (f" at {md_code(where, table=False)}" if where else ""))
        out += ["", "Peak live registers: " + ", ".join(parts) + "."]
    out += _spills(c, k)
    out += _remarks(k)
    for note in M.lineinfo_notes(k):
        out += ["", f"> {md_text(note)}."]
    return out


def _top_hunk(c: dict, k: dict) -> list[str]:
    """The largest SASS hunk of a regressed kernel as a ```diff block (at most
    :data:`M.TOP_HUNK_LINES` lines, each made visible and cut to 200 characters)."""
    from ..listing import unified_diff

    h = M.top_hunk(c, k)
    if h is None:
        return []
    shown = min(len(h.lines), M.TOP_HUNK_LINES)
    body = [truncate(line, 200) for line in unified_diff(c, [h], max_lines=M.TOP_HUNK_LINES)]
    more = f", the first {shown} of its {len(h.lines)} lines" if shown < len(h.lines) else ""
    head = f"**Largest SASS hunk** (rank 1 of {h.of}, {h.size} changed lines{more}; `cutediff diff RESULT --listing` prints them all):"
    return ["", head, "", fenced("\n".join(body), "diff")]


def _spills(c: dict, k: dict) -> list[str]:
    lines = M.spill_lines(k)
    if not lines:
        return []
    count = {s: len(M.metrics(k, s).get("spill_sites") or []) for s in M.SIDES}
    mapped = sum(1 for g in lines if g.file)
    head = f"**Spill sites**: {count['a']} instruction(s) on A, {count['b']} on B, at {len(lines)} source line(s)" + (
        "" if mapped else " (no line info: build with line info to map them)"
    )

    def row(g: M.SpillLine) -> tuple[str, ...]:
        def pair(s: str) -> str:
            if not (g.stores[s] or g.loads[s]):
                return "-"
            return f"{g.store_bytes[s]} / {g.load_bytes[s]} ({g.stores[s]} STL, {g.loads[s]} LDL)"

        where = md_code(g.where)
        if g.inline:
            where += f" ← {md_code(g.inline)}"
        cells = [where, *[pair(s) for s in shown], (str(g.loop_depth) if g.loop_depth else "-")]
        return (*cells, md_code(g.source)) if has_code else tuple(cells)

    shown = [s for s in M.SIDES if count[s]] or list(M.SIDES)
    has_code = any(g.source for g in lines)
    header = ["source line", *[f"{s.upper()} bytes st / ld" for s in shown], "loop depth"] + (
        ["code"] if has_code else []
    )
    align = "l" + "r" * (len(shown) + 1) + "l"
    top, rest = lines[: M.TOP_SPILL_LINES], lines[M.TOP_SPILL_LINES :]
    out = ["", head, ""] + table(header, [row(g) for g in top], align)
    if rest:
        out += [""] + details(f"{len(rest)} more spill line(s)", table(header, [row(g) for g in rest], align))
    return out


def _remarks(k: dict) -> list[str]:
    rows = M.remark_rows(k)
    if not rows:
        return []
    body = []
    for s, r in rows:
        msg = md_text(r.get("message") or "")
        if r.get("detail"):
            msg += f" ({md_text(r['detail'])})"
        body.append(
            (
                s.upper(),
                md_text(r.get("category") or ""),
                md_code(M.remark_where(r)),
                md_code(r.get("function") or ""),
                msg,
            )
        )
    return ["", "**Compiler remarks**", ""] + table(["side", "kind", "where", "function", "message"], body)


def _crosscheck(c: dict) -> list[str]:
    cc = M.crosscheck(c)
    if not cc:
        return []
    out = [
        "#### ptxas cross-check",
        "",
        "Each side's PTX re-assembled with each ptxas: it tells whether a change comes from the PTX "
        "the DSL generates or from ptxas.",
    ]
    for name, entry in cc.items():
        rows = [tuple(md_text(x) for x in r) for r in M.crosscheck_rows(entry)]
        out += ["", f"**{md_text(name)}**", ""]
        out += table(list(M.CROSSCHECK_HEADER), rows, "lllrrrrl")
        if entry.get("verdict"):
            out += ["", f"Verdict: {md_text(entry['verdict'])}"]
    return out


def _bench(c: dict) -> list[str]:
    shapes = M.bench_shapes(c)
    if not shapes:
        return []
    gpu = M.bench_gpu_text(c)
    out = ["#### Benchmark", ""]
    if gpu:
        out += [f"Measured on {md_text(gpu)}.", ""]
    rows = []
    for r in shapes:
        ratio = M.bench_ratio(r)
        rows.append(
            (
                md_text(M.shape_label(r.get("shape"))),
                md_text(M.timing_text(r.get("a") or {})),
                md_text(M.timing_text(r.get("b") or {})),
                f"{ratio:.3f}" if ratio is not None else "-",
                M.ci_text(r),
                md_text(r.get("verdict") or ""),
            )
        )
    out += table(
        [
            "shape",
            f"A {md_text(M.side_name(c, 'a'))} median",
            f"B {md_text(M.side_name(c, 'b'))} median",
            "B / A",
            "95% CI",
            "verdict",
        ],
        rows,
        "lrrrrl",
    )
    return out + _bench_kernels(c.get("bench") or {})


def _bench_kernels(bench: dict) -> list[str]:
    """Per-kernel rows, Nsight Compute rows and the verdict sentences of ``cutediff bench``."""
    from ..bench.explain import fmt_rate
    from ..bench.ncu import LABELS

    out: list[str] = []
    rows = []
    for case in bench.get("shapes") or []:
        for k in case.get("kernels") or []:
            rows.append(
                (
                    md_text(M.shape_label(case.get("shape"))),
                    md_text(k["kernel"]),
                    md_text(M.timing_text(k.get("a") or {})),
                    md_text(M.timing_text(k.get("b") or {})),
                    f"{k['ratio']:.3f}" if "ratio" in k else "-",
                    M.ci_text(k) if "ci_low" in k else "-",
                    md_text(k.get("verdict") or ""),
                )
            )
    if rows:
        out += ["", "Per kernel (GPU time per call, CUPTI):", ""]
        out += table(["shape", "kernel", "A median", "B median", "B / A", "95% CI", "verdict"], rows, "llrrrrl")
    prof = bench.get("profile") or {}

    def value(metric: str, v) -> str:
        if metric == "local_gbps":
            return fmt_rate(v)
        if metric == "top_stalls":
            return ", ".join(f"{name} {ratio:g}" for name, ratio in v or []) or "-"
        return "-" if v is None else f"{v:g}"

    prows = [
        (
            md_text(r["kernel"]),
            md_text(LABELS.get(r["metric"], r["metric"])),
            md_text(value(r["metric"], r["a"])),
            md_text(value(r["metric"], r["b"])),
            f"{r['delta']:+g}" if r.get("delta") is not None else "",
        )
        for r in prof.get("rows") or []
    ]
    if prows:
        out += ["", "Nsight Compute (`--clock-control none`):", ""]
        out += table(["kernel", "metric", "A", "B", "Δ"], prows, "llrrr")
    if prof.get("error"):
        out += ["", md_text(prof["error"])]
    verdicts = bench.get("verdicts") or []
    if verdicts:
        out += [""] + [f"- {md_text(v)}" for v in verdicts]
    return out


def _reproduce(c: dict) -> list[str]:
    lines = M.reproduce_lines(c)
    out = ["#### Reproduce", "", fenced("\n".join(lines), "sh")]
    exact = [(s, M.exact_pip_command(c, s)) for s in M.SIDES]
    exact = [(s, e) for s, e in exact if e]
    if exact:
        body = [fenced("\n".join(f"# side {s.upper()}\n{e}" for s, e in exact), "sh")]
        out += [""] + details("Exact environments (every locked package)", body)
    return out


def _footer(c: dict) -> list[str]:
    bits = []
    host = c.get("host") or {}
    if host.get("cutediff"):
        bits.append(f"cutediff {md_text(host['cutediff'])}")
    if c.get("analysis_version") is not None:
        bits.append(f"analysis v{md_text(c['analysis_version'])}")
    if c.get("created"):
        bits.append(md_text(c["created"]))
    t = c.get("timing") or {}
    if t.get("total_seconds") is not None:
        bits.append(f"{t['total_seconds']:.1f} s" + (" (from the cache)" if t.get("from_cache") else ""))
    return [f"<sub>Made by {' · '.join(bits)}</sub>"] if bits else []


def render_markdown(comparison: dict) -> str:
    """The whole report as GitHub-flavoured Markdown."""
    c = comparison
    blocks = [_title(c), _environment(c)]
    blocks += [_kernel(c, k) for k in M.kernels(c)]
    blocks += [_crosscheck(c), _bench(c), _reproduce(c), _footer(c)]
    return "\n\n".join("\n".join(b) for b in blocks if b).rstrip() + "\n"
