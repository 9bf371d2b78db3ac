"""Plain facts of a comparison that every report format shows (no formatting, no escaping).

The Markdown and HTML renderers both read a comparison through these helpers, so the two say the
same thing. Every helper is defensive: a field that is missing (an older or partial comparison, a
side that failed) gives an empty result and the renderers leave the section out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..model import SIDES
from ..model.changes import class_table, resource_sentence, side_name
from ..model.changes import kernel_changes as changes_of
from ..model.changes import ptx_opcode_deltas as _ptx_deltas
from ..model.figures import CROSSCHECK_FIGURES, Figure, by_name, delta_sign, figures_for, is_worse, unit_symbol
from ..model.match import instruction_match
from ..model.sides import side_labels

M_SIDES_LOWER = frozenset(SIDES)
DSL_PACKAGE = "nvidia-cutlass-dsl"
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([a-z]+\d*|\.post\d+|\.dev\d+)*$")
#: MMA opcodes (tensor cores): a summary says "identical" only when the math includes one.
MMA_OPCODES = frozenset({"UTCHMMA", "UTCQMMA", "UTCOMMA", "HGMMA", "HMMA"})
#: Classes left out of the "instruction mix" sentence: spill code is reported on its own.
MIX_IGNORED = frozenset({"local"})
TOP_SPILL_LINES = 10
#: The package-table row that is not a package (shown as plain text).
CUDA_ROW = "CUDA flavour"


# ---------------------------------------------------------------- small helpers


#: What a table cell shows for a figure a side does not have (a failed side, a kernel it lacks).
MISSING = "–"


def num(v: Any) -> str:
    """A number for a table cell; ``–`` (:data:`MISSING`) when absent."""
    if v is None:
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def delta(a: Any, b: Any) -> tuple[str, int]:
    """``(text, sign)`` of ``b - a``: ``("+112", 1)``, ``("=", 0)``; ``("", 0)`` when not numeric."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "", 0
    d = b - a
    if d == 0:
        return "=", 0
    text = f"{d:+.2f}" if isinstance(d, float) else f"{d:+d}"
    return text, (1 if d > 0 else -1)


def short_path(path: str | None) -> str:
    """Drop environment prefixes: ``/…/site-packages/flash_attn/x.py`` → ``flash_attn/x.py``."""
    if not path:
        return ""
    for marker in ("/site-packages/", "/site/", "/dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return path


def is_version(text: str | None) -> bool:
    return bool(text) and bool(_VERSION_RE.match(str(text)))


def side(c: dict, s: str) -> dict:
    return (c.get("sides") or {}).get(s) or {}


def side_label(c: dict, s: str) -> str:
    """Full label of a side (version and pins, or the artifact path)."""
    sd = side(c, s)
    return str(sd.get("label") or sd.get("dsl") or s.upper())


def side_title(c: dict, s: str) -> str:
    """A side's label in headers and table columns: its name and what differs from the other side
    (:func:`~cutediff_tui.core.model.sides.side_labels`)."""
    return side_labels(c)[s]


def metrics(k: dict, s: str) -> dict:
    m = k.get(s)
    return m if isinstance(m, dict) else {}


def resource_figures(*, key_only: bool = False) -> list[Figure]:
    """The registry's resource figures a report shows (only the key ones with ``key_only``)."""
    return [f for f in figures_for("report", "resource") if f.key or not key_only]


def math_opcodes() -> tuple[str, ...]:
    """The key opcodes: what the one-line summary calls "the math" (MMAs, SFU, packed FP32)."""
    return tuple(f.name for f in figures_for("report", "opcode") if f.key)


def worse(fig: Figure | None, a: Any, b: Any) -> bool:
    """Whether B's value of ``fig`` is worse than A's (the registry says which way is worse)."""
    return is_worse(fig, delta_sign(a, b))


def better(fig: Figure | None, a: Any, b: Any) -> bool:
    return is_worse(fig, -delta_sign(a, b))


def kernels(c: dict) -> list[dict]:
    return [k for k in c.get("kernels") or [] if isinstance(k, dict)]


def kernel_filter(c: dict) -> str | None:
    """The ``--kernel-filter`` the comparison was narrowed by (None: every kernel is shown)."""
    kf = c.get("kernel_filter")
    return str(kf) if kf else None


def side_errors(c: dict) -> list[tuple[str, str]]:
    return [(s, str(side(c, s)["error"])) for s in SIDES if side(c, s).get("error")]


# ---------------------------------------------------------------- class labels


def class_label(key: str) -> str:
    return class_table()[1].get(key, key)


def class_rows(k: dict) -> list[tuple[str, str, int | None, int | None]]:
    """``(class key, label, A count, B count)`` for classes either side has, in table order; a
    side without the kernel (failed, or not built there) counts None, never 0."""
    has = {s: bool(metrics(k, s)) for s in SIDES}
    ca = metrics(k, "a").get("instruction_classes") or {}
    cb = metrics(k, "b").get("instruction_classes") or {}
    deltas = ((k.get("deltas") or {}).get("instruction_classes")) or {}
    keys = set(ca) | set(cb) | set(deltas)
    order = class_table()[0]
    ranked = sorted(keys, key=lambda x: (order.index(x) if x in order else len(order), x))
    out = []
    for key in ranked:
        if ca or cb:
            a, b = ca.get(key, 0), cb.get(key, 0)
        else:  # only the deltas were kept: [a, b, b - a]
            d = deltas.get(key) or [0, 0, 0]
            a, b = d[0], d[1]
        if a or b:
            out.append(
                (
                    key,
                    class_label(key),
                    int(a or 0) if has["a"] else None,
                    int(b or 0) if has["b"] else None,
                )
            )
    return out


def opcode_rows(k: dict) -> list[tuple[Figure, int | None, int | None]]:
    """``(opcode figure, A, B)`` for the registry's opcodes either side has (None on a side
    without the kernel)."""
    a, b = metrics(k, "a"), metrics(k, "b")
    return [
        (f, int(f.value(a) or 0) if a else None, int(f.value(b) or 0) if b else None)
        for f in figures_for("report", "opcode")
        if f.present(a) or f.present(b)
    ]


# ---------------------------------------------------------------- summary sentences


def _change(name: str, a: Any, b: Any) -> str:
    """``stack 0 → 112 B`` for the registry figure ``name`` (its short name and unit symbol)."""
    fig = by_name(name)
    word, unit = (fig.word, unit_symbol(fig.unit)) if fig else (name, "")
    u = f" {unit}" if unit else ""
    return f"{word} {num(a)} → {num(b)}{u}"


def mix_sentence(k: dict) -> str:
    """How the instruction mix changed, ignoring spill code (reported on its own): "instruction
    mix unchanged" only when no class changed; "key opcodes unchanged" when classes changed but
    the kernel's math (MMA and the other key opcodes) did not."""
    rows = class_rows(k)
    if not rows or not (metrics(k, "a") and metrics(k, "b")):
        return ""
    changed = [(key, lab, a, b) for key, lab, a, b in rows if a != b and key not in MIX_IGNORED]
    if not changed:
        return "instruction mix unchanged"
    key_ops = math_opcodes()
    math = [(f.name, a, b) for f, a, b in opcode_rows(k) if f.name in key_ops]
    has_mma = any(op in MMA_OPCODES for op, _, _ in math)
    if len(math) >= 2 and has_mma and all(a == b for _, a, b in math):
        # the kernel's math (what the original reports grep-count) is the same; the rest is bookkeeping
        return f"key opcodes unchanged ({', '.join(op for op, _, _ in math)} identical)"
    moved = sorted(changed, key=lambda r: -abs((r[3] or 0) - (r[2] or 0)))[:3]
    return "instruction mix changed (" + ", ".join(f"{lab} {(b or 0) - (a or 0):+d}" for _, lab, a, b in moved) + ")"


def kernel_sentence(c: dict, k: dict) -> str:
    """One sentence on what changed in a kernel from A to B (plain text): its headline
    (:func:`..model.changes.resource_sentence`) and how its instruction mix changed."""
    text = resource_sentence(c, k)
    if not (metrics(k, "a") and metrics(k, "b")):
        return text
    mix = mix_sentence(k)
    return text + (f"; {mix}" if mix else "")


def kernel_changes(c: dict, k: dict) -> list[str]:
    """The kernel's changes, ranked, the headline first (:func:`..model.changes.kernel_changes`)."""
    return changes_of(c, k)


def ptx_opcode_deltas(k: dict) -> list[tuple[str, int, int]]:
    """``(PTX opcode, A, B)`` of the opcodes whose count changed most (:func:`..model.changes.ptx_opcode_deltas`)."""
    return _ptx_deltas(k)


#: Most lines of the top hunk a report quotes per regressed kernel.
TOP_HUNK_LINES = 40


def top_hunk(c: dict, k: dict) -> Any:
    """The largest SASS hunk of a kernel that regresses (a :class:`..listing.ListingHunk`, two
    context lines), None when it does not regress or its listings cannot be read here."""
    from ..errors import CutediffError
    from ..listing import kernel_hunks
    from ..model.changes import regressions

    if not regressions(k):
        return None
    try:
        hunks = kernel_hunks(k, kernels(c).index(k) if k in kernels(c) else 0, context=2, top=1)
    except (CutediffError, OSError, KeyError, ValueError):
        return None  # a JSON without its artifacts: the hunk table above still says what changed
    return hunks[0] if hunks else None


def severity(k: dict) -> int:
    """Rank kernels for the headline: spill growth first, then any resource change."""
    a, b = metrics(k, "a"), metrics(k, "b")
    if not (a and b):
        return 1
    grow = sum((b.get(x) or 0) - (a.get(x) or 0) for x in ("stack_bytes", "spill_store_bytes", "spill_load_bytes"))
    if grow > 0:
        return 4
    if grow < 0:
        return 3
    if a.get("registers") != b.get("registers"):
        return 2
    return 0


def headline(c: dict) -> str:
    """The one-line summary of the whole comparison."""
    errs = side_errors(c)
    if errs:
        return "; ".join(f"side {s.upper()} ({side_name(c, s)}) failed: {e}" for s, e in errs)
    ks = kernels(c)
    if not ks:
        return f"no kernels found in {side_name(c, 'a')} or {side_name(c, 'b')}"
    ranked = sorted(ks, key=lambda k: -severity(k))
    top = ranked[0]
    text = kernel_sentence(c, top)
    rest = [k for k in ranked[1:]]
    if rest:
        same = [k for k in rest if severity(k) == 0]
        other = [k for k in rest if severity(k) != 0]
        extra = []
        if other:
            extra.append(f"{len(other)} other kernel(s) changed")
        if same:
            extra.append(f"{len(same)} other kernel(s) unchanged")
        text += " (" + ", ".join(extra) + ")"
    return text


# ---------------------------------------------------------------- environment


def host_rows(c: dict) -> list[tuple[str, str]]:
    """``(what, value)`` rows about the machine and the target."""
    host = c.get("host") or {}
    gpu = host.get("gpu")
    bgpu = bench_gpu(c)
    if isinstance(gpu, dict) and gpu:
        gtext = " ".join(str(x) for x in (gpu.get("name"), f"({gpu['arch']})" if gpu.get("arch") else None) if x)
    elif isinstance(gpu, str) and gpu:
        gtext = gpu
    elif bgpu.get("name"):
        gtext = str(bgpu.get("name"))
    else:
        gtext = "none (compile-only)"
    driver = host.get("driver") or (gpu.get("driver") if isinstance(gpu, dict) else None) or bgpu.get("driver")
    rows = [("GPU", gtext), ("Driver", str(driver) if driver else "-")]
    for key, label in (("torch", "torch"), ("python", "Python"), ("platform", "Platform"), ("cutediff", "cutediff")):
        if host.get(key):
            rows.append((label, str(host[key])))
    prof = c.get("profile") or {}
    target = str(c.get("arch") or prof.get("arch") or "-")
    extra = [str(prof["name"])] if prof.get("name") else []
    if prof.get("num_sms"):
        extra.append(f"{prof['num_sms']} SMs")
    rows.append(("Target", target + (f" ({', '.join(extra)})" if extra else "")))
    rec = c.get("recipe") or {}
    if rec.get("name"):
        params = rec.get("params") or {}
        own = {x: (side(c, x).get("params") or {}) for x in SIDES}
        differ = {k for k in own["a"] if k in own["b"] and own["a"][k] != own["b"][k]}
        ptxt = ", ".join(f"{k}={_param(v)}" for k, v in params.items() if v is not None and k not in differ)
        per_side = "; ".join(
            f"{x.upper()}: " + ", ".join(f"{k}={_param(own[x][k])}" for k in own[x] if k in differ) for x in SIDES
        )
        text = ", ".join(t for t in (ptxt, per_side if differ else "") if t)
        rows.append(("Recipe", str(rec["name"]) + (f" ({text})" if text else "")))
    return rows


def _param(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def _pin_names(sd: dict) -> list[str]:
    out = []
    for p in sd.get("pins") or []:
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", str(p))
        if m:
            out.append(re.sub(r"[-_.]+", "-", m.group(1)).lower())
    return out


def package_rows(c: dict) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """``(main rows, other rows)`` of ``(package, A version, B version)``.

    Main rows: the DSL, its CUDA flavour and every package pinned on either side; other rows: the
    rest of each side's locked environment (``sides.x.versions``).
    """
    va = side(c, "a").get("versions") or {}
    vb = side(c, "b").get("versions") or {}
    main_names: list[str] = []
    for n in [DSL_PACKAGE, *_pin_names(side(c, "a")), *_pin_names(side(c, "b"))]:
        if n not in main_names:
            main_names.append(n)
    rows_main: list[tuple[str, str, str]] = []
    sa, sb = side(c, "a"), side(c, "b")
    if DSL_PACKAGE not in va and DSL_PACKAGE not in vb and (sa.get("dsl") or sb.get("dsl")):
        rows_main.append(
            (
                DSL_PACKAGE if (is_version(sa.get("dsl")) or is_version(sb.get("dsl"))) else "artifacts",
                str(sa.get("dsl") or "-"),
                str(sb.get("dsl") or "-"),
            )
        )
    for n in main_names:
        if n in va or n in vb:
            rows_main.append((n, str(va.get(n, "-")), str(vb.get(n, "-"))))
        elif n != DSL_PACKAGE:
            pa = _pin_of(sa, n)
            pb = _pin_of(sb, n)
            if pa or pb:
                rows_main.append((n, pa or "-", pb or "-"))
    if (sa.get("cuda") or sb.get("cuda")) and (is_version(sa.get("dsl")) or is_version(sb.get("dsl"))):
        cu = (CUDA_ROW, f"cu{sa['cuda']}" if sa.get("cuda") else "-", f"cu{sb['cuda']}" if sb.get("cuda") else "-")
        rows_main.insert(1 if rows_main else 0, cu)
    shown = {r[0] for r in rows_main}
    rest = sorted((set(va) | set(vb)) - shown)
    rows_other = [(n, str(va.get(n, "-")), str(vb.get(n, "-"))) for n in rest]
    return rows_main, rows_other


def _pin_of(sd: dict, name: str) -> str | None:
    for p in sd.get("pins") or []:
        p = str(p)
        if re.sub(r"[-_.]+", "-", re.split(r"[=<>!~@\[]", p, maxsplit=1)[0]).lower() == name:
            return p.split("==", 1)[1] if "==" in p else p
    return None


def side_notes(c: dict) -> list[tuple[str, str]]:
    """``(sides, text)`` for shims, notes and repairs the builds needed; ``sides`` is "A", "B" or "A and B"."""
    out: list[tuple[str, str]] = []
    for key, what in (("shims", "shim"), ("notes", "note"), ("repaired", "repaired")):
        items = {s: [str(x) for x in side(c, s).get(key) or []] for s in SIDES}
        seen: list[str] = []
        for s in SIDES:
            for item in items[s]:
                if item in seen:
                    continue
                seen.append(item)
                both = all(item in items[t] for t in SIDES)
                out.append(("A and B" if both else s.upper(), f"{what}: {item}"))
    return out


# ---------------------------------------------------------------- reproduce


def pip_command(c: dict, s: str) -> str | None:
    """``pip install 'nvidia-cutlass-dsl[cu13]==4.8.0' flash-attn-4==4.0.0b16 …`` for a side."""
    sd = side(c, s)
    dsl = sd.get("dsl")
    if not is_version(dsl):
        return None
    cuda = sd.get("cuda")
    reqs = [f"{DSL_PACKAGE}[cu{cuda}]=={dsl}" if cuda else f"{DSL_PACKAGE}=={dsl}"]
    local = []
    for p in sd.get("pins") or []:
        p = str(p)
        if "@/" in p or "@~" in p or "@." in p:
            local.append(p)
        else:
            reqs.append(p)
    cmd = "pip install " + " ".join(shlex.quote(r) for r in reqs)
    if local:
        cmd += "  # plus local source: " + ", ".join(local)
    return cmd


def exact_pip_command(c: dict, s: str) -> str | None:
    """Every package of the side's locked environment, pinned (torch is the host's, left out)."""
    versions = side(c, s).get("versions") or {}
    if not versions:
        return None
    cuda = side(c, s).get("cuda")
    reqs = []
    for n in sorted(versions):
        if n == "torch":
            continue
        name = f"{n}[cu{cuda}]" if (n == DSL_PACKAGE and cuda) else n
        reqs.append(f"{name}=={versions[n]}")
    return "pip install --no-deps " + " ".join(shlex.quote(r) for r in reqs) if reqs else None


def reproduce_lines(c: dict) -> list[str]:
    """Shell lines that rebuild both sides and rerun the comparison (for every report format)."""
    lines: list[str] = []
    for s in SIDES:
        pip = pip_command(c, s)
        if pip:
            lines += [f"# side {s.upper()}: {side_label(c, s)}", pip]
    return lines + ["# the comparison", cutediff_command(c)]


def cutediff_command(c: dict) -> str:
    """The cutediff command that made (or re-makes) this comparison."""
    cmd = str(c.get("command") or "").strip()
    if cmd:
        return cmd
    sa, sb = side(c, "a"), side(c, "b")
    rec = (c.get("recipe") or {}).get("name")
    if rec == "artifacts" or not (is_version(sa.get("dsl")) and is_version(sb.get("dsl"))):
        return "cutediff diff " + " ".join(shlex.quote(str(x.get("label") or x.get("dsl") or "?")) for x in (sa, sb))

    def spec(sd: dict) -> str:
        return ",".join([str(sd["dsl"]), *[str(p) for p in sd.get("pins") or []]])

    parts = ["cutediff", "compare", shlex.quote(spec(sa)), shlex.quote(spec(sb))]
    if rec:
        parts += ["--recipe", shlex.quote(str(rec))]
    if c.get("arch"):
        parts += ["--arch", str(c["arch"])]
    prof = c.get("profile") or {}
    if prof.get("num_sms"):
        parts += ["--num-sms", str(prof["num_sms"])]
    for k, v in ((c.get("recipe") or {}).get("params") or {}).items():
        parts += ["--param", shlex.quote(f"{k}={_param(v)}")]
    return " ".join(parts)


# ---------------------------------------------------------------- spill sites


@dataclass
class SpillLine:
    """Spill instructions of one source line on both sides."""

    file: str | None
    line: int | None
    stores: dict = field(default_factory=lambda: {"a": 0, "b": 0})
    loads: dict = field(default_factory=lambda: {"a": 0, "b": 0})
    store_bytes: dict = field(default_factory=lambda: {"a": 0, "b": 0})
    load_bytes: dict = field(default_factory=lambda: {"a": 0, "b": 0})
    loop_depth: int = 0
    inline: str = ""
    source: str = ""
    side_source: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        if not self.file:
            return "(no line info)"
        return f"{short_path(self.file)}:{self.line}" if self.line is not None else short_path(self.file)

    def total(self, s: str) -> int:
        return self.store_bytes[s] + self.load_bytes[s]


def _loop_depth(site: dict) -> int:
    lp = site.get("loop")
    if isinstance(lp, dict):
        return int(lp.get("depth") or 0)
    if isinstance(site.get("loop_depth"), int):
        return site["loop_depth"]
    return 0


def spill_lines(k: dict) -> list[SpillLine]:
    """Spill sites of both sides grouped by source line, most bytes on B first."""
    groups: dict[tuple, SpillLine] = {}
    for s in SIDES:
        for site in metrics(k, s).get("spill_sites") or []:
            if not isinstance(site, dict):
                continue
            key = (site.get("file"), site.get("line"))
            g = groups.get(key)
            if g is None:
                g = groups[key] = SpillLine(site.get("file"), site.get("line"))
            width = int(site.get("width_bytes") or 0)
            kind = str(site.get("kind") or ("store" if str(site.get("opcode", "")).startswith("ST") else "load"))
            if kind == "store":
                g.stores[s] += 1
                g.store_bytes[s] += width
            else:
                g.loads[s] += 1
                g.load_bytes[s] += width
            g.loop_depth = max(g.loop_depth, _loop_depth(site))
            chain = site.get("inline_chain") or site.get("inlined_at")
            if chain and not g.inline and isinstance(chain, list) and chain:
                first = chain[0]
                if isinstance(first, (list, tuple)) and len(first) >= 2:
                    g.inline = f"{short_path(str(first[0]))}:{first[1]}"
            src = site.get("source") or site.get("source_text")
            if src and s not in g.side_source:
                g.side_source[s] = str(src).strip()
    out = list(groups.values())
    for g in out:
        # The code is quoted from the side the sites belong to (B's where B has some, else A's):
        # the two sides' files may differ (two sources, two versions of a package).
        s = "b" if g.stores["b"] or g.loads["b"] else "a"
        sources = metrics(k, s).get("sources") or {}
        g.source = g.side_source.get(s, "")
        if not g.source and g.file and sources.get(g.file):  # only files the result maps (confined on load)
            g.source = source_line(str(sources[g.file]), g.line)
    out.sort(key=lambda g: (-g.total("b"), -g.total("a"), g.file is None, str(g.file), g.line or 0))
    return out


@lru_cache(maxsize=64)
def _file_lines(path: str) -> tuple[str, ...]:
    try:
        p = Path(path)
        if not p.is_absolute() or not p.is_file() or p.stat().st_size > 4_000_000:
            return ()
        return tuple(p.read_text(errors="replace").splitlines())
    except OSError:
        return ()


def source_line(file: str | None, line: int | None) -> str:
    """The text of a source line when the file is on this machine (absolute paths only), else ``""``."""
    if not file or not line:
        return ""
    lines = _file_lines(file)
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ---------------------------------------------------------------- remarks, cross-check, bench


def remark_rows(k: dict) -> list[tuple[str, dict]]:
    return [(s, r) for s in SIDES for r in (metrics(k, s).get("remarks") or []) if isinstance(r, dict)]


def remark_where(r: dict) -> str:
    if not r.get("file"):
        return "-"
    where = short_path(str(r["file"]))
    if r.get("line") is not None:
        where += f":{r['line']}"
        if r.get("column") is not None:
            where += f":{r['column']}"
    return where


def crosscheck_header() -> tuple[str, ...]:
    return ("PTX of", ".version", "ptxas", *(fig_word(n) for n in CROSSCHECK_FIGURES), "note")


def fig_word(name: str) -> str:
    """The short name of registry figure ``name`` (``stack``), the name itself when unknown."""
    fig = by_name(name)
    return fig.word if fig else name


CROSSCHECK_HEADER = crosscheck_header()


def crosscheck_rows(entry: dict) -> list[tuple[str, ...]]:
    """Rows of :data:`CROSSCHECK_HEADER`, one per (side, ptxas) cell."""
    rows: list[tuple[str, ...]] = []
    for cell in entry.get("matrix") or []:
        if not isinstance(cell, dict):
            continue
        note = cell.get("error") or ""
        if not note and cell.get("rewritten_from"):
            note = f".version {cell['rewritten_from']} rewritten down for ptxas {cell.get('ptxas_version') or '?'}"
        side_txt = str(cell.get("side") or "")
        if side_txt in M_SIDES_LOWER:
            side_txt = side_txt.upper()
        rows.append(
            (
                side_txt,
                str(cell.get("ptx_version") or "-"),
                str(cell.get("ptxas_version") or "-"),
                num(cell.get("registers")),
                num(cell.get("stack")),
                num(cell.get("spill_stores")),
                num(cell.get("spill_loads")),
                str(note),
            )
        )
    return rows


def crosscheck(c: dict) -> dict:
    cc = c.get("crosscheck")
    return {str(k): v for k, v in cc.items() if isinstance(v, dict)} if isinstance(cc, dict) else {}


def bench_shapes(c: dict) -> list[dict]:
    b = c.get("bench")
    if not isinstance(b, dict):
        return []
    return [x for x in b.get("shapes") or [] if isinstance(x, dict)]


def shape_label(shape: Any) -> str:
    if isinstance(shape, dict) and shape.get("label"):
        return str(shape["label"])
    if isinstance(shape, dict):
        return ", ".join(f"{k}={_param(v)}" for k, v in shape.items())
    if isinstance(shape, (list, tuple)):
        return "×".join(str(x) for x in shape)
    return str(shape)


def bench_ratio(row: dict) -> float | None:
    """B time / A time (above 1: B is slower): the row's ``ratio``, else from the two medians."""
    r = row.get("ratio")
    if isinstance(r, (int, float)) and not isinstance(r, bool):
        return float(r)
    a, b = row.get("a") or {}, row.get("b") or {}
    ma, mb = a.get("median_ms"), b.get("median_ms")
    if isinstance(ma, (int, float)) and isinstance(mb, (int, float)) and ma > 0:
        return mb / ma
    return None


def bench_samples(row: dict, s: str) -> list[float]:
    sm = row.get("samples")
    vals = sm.get(s) if isinstance(sm, dict) else None
    return [float(x) for x in vals if isinstance(x, (int, float))] if isinstance(vals, list) else []


def bench_gpu(c: dict) -> dict:
    b: dict = c["bench"] if isinstance(c.get("bench"), dict) else {}
    out: dict = {}
    for key in ("gpu", "gpu_before"):
        if isinstance(b.get(key), dict):
            out.update({k: v for k, v in b[key].items() if v not in (None, "")})
    return out


def timing_text(stats: dict) -> str:
    """``1.234 ms (IQR 0.012, n=200)``."""
    if not isinstance(stats, dict) or not isinstance(stats.get("median_ms"), (int, float)):
        return "-"
    t = f"{stats['median_ms']:.3f} ms"
    extra = []
    if isinstance(stats.get("iqr_ms"), (int, float)):
        extra.append(f"IQR {stats['iqr_ms']:.3f}")
    if stats.get("n"):
        extra.append(f"n={stats['n']}")
    return t + (f" ({', '.join(extra)})" if extra else "")


def bench_gpu_text(c: dict) -> str:
    """``NVIDIA B300 (sm_103a), driver 580.82, SM clock 1965 MHz, 41 °C, 310 W`` from the bench."""
    g = bench_gpu(c)
    if not g:
        return ""
    head = str(g.get("name") or "GPU") + (f" ({g['arch']})" if g.get("arch") else "")
    parts = [head]
    for key, fmt in (
        ("driver", "driver {}"),
        ("sm_clock_mhz", "SM clock {} MHz"),
        ("mem_clock_mhz", "memory clock {} MHz"),
        ("temperature_c", "{} °C"),
        ("power_w", "{} W"),
    ):
        if g.get(key) not in (None, ""):
            parts.append(fmt.format(num(g[key]) if isinstance(g[key], float) else g[key]))
    return ", ".join(parts)


def ci_text(row: dict) -> str:
    lo, hi = row.get("ci_low"), row.get("ci_high")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        return f"{lo:.3f}–{hi:.3f}"
    return "-"


# ---------------------------------------------------------------- pressure, alignment, line info


def pressure_curve(m: dict) -> list[float]:
    """A side's down-sampled live-GPR curve, whatever key the pressure summary uses for it."""
    p = m.get("pressure")
    if isinstance(p, list):
        return [float(x) for x in p if isinstance(x, (int, float))]
    if not isinstance(p, dict):
        return []
    for key in ("curve", "gpr_curve", "gpr", "live", "curve_gpr"):
        v = p.get(key)
        if isinstance(v, dict):
            v = v.get("gpr") or v.get("values")
        if isinstance(v, list) and v and all(isinstance(x, (int, float)) or x is None for x in v):
            return [float(x or 0) for x in v]
    curves = p.get("curves")
    if isinstance(curves, dict):
        v = curves.get("gpr")
        if isinstance(v, list):
            return [float(x or 0) for x in v]
    return []


def pressure_peak(m: dict) -> tuple[Any, str]:
    """``(peak live GPRs, where)`` from the pressure summary, ``(None, "")`` when absent."""
    p = m.get("pressure")
    if not isinstance(p, dict):
        return None, ""
    peaks = p.get("peaks") or {}
    pk = peaks.get("gpr") if isinstance(peaks, dict) else None
    if isinstance(pk, dict):
        where = ""
        if pk.get("file"):
            where = f"{short_path(pk['file'])}:{pk.get('line')}"
        return pk.get("value"), where
    for key in ("peak_gpr", "peak", "max_gpr", "max"):
        if isinstance(p.get(key), (int, float)):
            return p[key], ""
    curve = pressure_curve(m)
    return (int(max(curve)) if curve else None), ""


def alignment_text(k: dict) -> str:
    """``aligned under register renaming: SASS: 3549 matched pairs of 5440 A and 5562 B
    instructions; PTX: …`` when aligned (:mod:`..model.match` defines the figure)."""
    parts = [m.sentence() for m in (instruction_match(k, "SASS"), instruction_match(k, "PTX")) if m is not None]
    return ("aligned under register renaming: " + "; ".join(parts)) if parts else ""


def alignment_hunks(k: dict, top: int = 10) -> list[dict]:
    """The costliest differing stretches of the SASS alignment (``kind``, ranges, ``summary``)."""
    al = k.get("alignment")
    hunks = al.get("hunks") if isinstance(al, dict) else None
    if not isinstance(hunks, list):
        return []
    good = [h for h in hunks if isinstance(h, dict)]
    good.sort(key=lambda h: -(h.get("cost") or 0) if isinstance(h.get("cost"), (int, float)) else 0)
    return good[:top]


def range_text(r: Any) -> str:
    """A half-open instruction index range ``[lo, hi)`` as ``lo–hi-1``; ``-`` when empty."""
    if isinstance(r, (list, tuple)) and len(r) == 2 and all(isinstance(x, int) for x in r):
        lo, hi = r
        if hi <= lo:
            return "-"
        return str(lo) if hi == lo + 1 else f"{lo}–{hi - 1}"
    return "-" if r is None else str(r)


def lineinfo_notes(k: dict) -> list[str]:
    out = []
    for s in SIDES:
        li = metrics(k, s).get("lineinfo")
        if isinstance(li, dict) and li.get("perturbed"):
            r = li.get("resources") or {}
            out.append(
                f"side {s.upper()}: the line-info build uses different resources "
                f"(registers {num(r.get('registers'))}, stack {num(r.get('stack_bytes'))} B); "
                "source lines come from that build"
            )
    return out
