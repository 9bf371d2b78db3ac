"""What changed in a kernel, ranked by how much it matters, and the verdict of a comparison.

:func:`kernel_changes` lists, for one kernel, every registry figure that changed as one short
sentence each, ranked: spills and local (stack) traffic first, then registers and register
budgets, then memory operations by width, then instruction classes and key opcodes. Its first
sentence is the kernel's headline (``FlashAttentionForwardSm100 spills on 4.8.0: stack 0 → 112 B,
spill stores 0 → 176 B``). :func:`verdict` is the one sentence that ends ``compare``/``diff``:
the kernels that regress and by which figures, or ``no resource change in N kernels``.

The JSON report carries the list as each kernel's ``changes``; the Markdown and HTML reports and
the CLI read the same functions, so every face says the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .figures import Figure, by_name, delta_sign, figures_for, is_worse, unit_symbol

__all__ = [
    "PTX_DELTAS_SHOWN",
    "RANKING",
    "Change",
    "change_items",
    "class_changes",
    "figure_change",
    "kernel_changes",
    "ptx_opcode_deltas",
    "ptx_delta_text",
    "regressions",
    "resource_sentence",
    "side_name",
    "verdict",
]

#: Figures in the order their changes are told, by group: spills and local traffic, registers and
#: budgets, memory width. Classes and key opcodes come last (see :func:`kernel_changes`).
RANKING: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "local",
        (
            "stack_bytes",
            "spill_store_bytes",
            "spill_load_bytes",
            "local_stores",
            "local_store_bytes",
            "local_loads",
            "local_load_bytes",
            "ptx_local_bytes",
            "local_ops_by_width",
            "ptx_local_ops_by_width",
        ),
    ),
    ("budgets", ("registers", "register_budgets", "ptx_register_budgets")),
    (
        "memory",
        ("global_stores_by_width", "global_loads_by_width", "shared_ops_by_width", "ptx_global_stores_by_width"),
    ),
)
#: The figures the headline sentence (:func:`resource_sentence`) already tells.
_HEADLINE = ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes")
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?([a-z]+\d*|\.post\d+|\.dev\d+)*$")
#: Classes left out of the class sentence: spill code is told on its own.
_MIX_IGNORED = frozenset({"local"})


def _metrics(k: Mapping[str, Any], s: str) -> Mapping[str, Any]:
    m = k.get(s)
    return m if isinstance(m, Mapping) else {}


def side_name(c: Mapping[str, Any], s: str) -> str:
    """Short name of a side: its DSL version, else the last part of its path or label."""
    sd = (c.get("sides") or {}).get(s) or {}
    dsl = sd.get("dsl")
    if dsl and _VERSION_RE.match(str(dsl)):
        return str(dsl)
    label = str(sd.get("label") or dsl or s.upper())
    name = Path(label.rstrip("/")).name if "/" in label else label
    return name or s.upper()


def _num(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def figure_change(fig: Figure, a: Any, b: Any) -> str:
    """``stack 0 → 112 B``, ``register budgets 176/88 → 184/80``, ``global stores STG.E.128×8 →
    STG.E.U16×64``: the figure's short name, A's and B's values and its unit."""
    unit = unit_symbol(fig.unit)
    u = f" {unit}" if unit else ""
    ta = "none" if a is None else fig.text(a, _num)
    tb = "none" if b is None else fig.text(b, _num)
    return f"{fig.word} {ta} → {tb}{u}"


def _change(name: str, a: Any, b: Any) -> str:
    fig = by_name(name)
    if fig is None:
        return f"{name} {_num(a)} → {_num(b)}"
    return figure_change(fig, a, b)


def resource_sentence(c: Mapping[str, Any], k: Mapping[str, Any]) -> str:
    """The kernel's headline: how its registers, stack and spills changed from A to B."""
    name = str(k.get("name") or "kernel")
    a, b = _metrics(k, "a"), _metrics(k, "b")
    nb, na = side_name(c, "b"), side_name(c, "a")
    if not a and not b:
        return f"{name}: no metrics on either side"
    if not b:
        return f"{name} is built only by {na}"
    if not a:
        return f"{name} is built only by {nb}"
    spill_a = (a.get("spill_store_bytes") or 0) + (a.get("spill_load_bytes") or 0)
    spill_b = (b.get("spill_store_bytes") or 0) + (b.get("spill_load_bytes") or 0)
    parts: list[str] = []
    if a.get("registers") != b.get("registers") and a.get("registers") is not None:
        parts.append(_change("registers", a.get("registers"), b.get("registers")))
    if (a.get("stack_bytes") or 0) != (b.get("stack_bytes") or 0):
        parts.append(_change("stack_bytes", a.get("stack_bytes"), b.get("stack_bytes")))
    if (a.get("spill_store_bytes") or 0) != (b.get("spill_store_bytes") or 0):
        parts.append(_change("spill_store_bytes", a.get("spill_store_bytes"), b.get("spill_store_bytes")))
    # loads equal to stores on both sides add nothing to the sentence
    if (a.get("spill_load_bytes") or 0) != (b.get("spill_load_bytes") or 0) and (
        a.get("spill_load_bytes") != a.get("spill_store_bytes")
        or b.get("spill_load_bytes") != b.get("spill_store_bytes")
    ):
        parts.append(_change("spill_load_bytes", a.get("spill_load_bytes"), b.get("spill_load_bytes")))
    if spill_a == 0 and spill_b > 0:
        head = f"{name} spills on {nb}"
    elif spill_a > 0 and spill_b == 0:
        head = f"{name} stops spilling on {nb}"
    elif spill_b > spill_a:
        head = f"{name} spills more on {nb}"
    elif spill_b < spill_a:
        head = f"{name} spills less on {nb}"
    elif parts:
        head = f"{name} changes on {nb}"
    else:
        head = f"{name}: same resources on {na} and {nb}"
    return head + (": " + ", ".join(parts) if parts else "")


@lru_cache(maxsize=1)
def class_table() -> tuple[tuple[str, ...], dict[str, str]]:
    """The instruction classes in table order and their labels (empty when the table cannot be
    read: sentences and reports then fall back to the raw keys)."""
    try:
        from ..analysis.classes import default_classes

        table = default_classes()
        order = tuple(table.classes)
        return order, {k: table.label(k) for k in order}
    except Exception:  # the table is optional for a sentence: fall back to the raw keys
        return (), {}


def class_changes(k: Mapping[str, Any]) -> list[tuple[str, str, int, int]]:
    """``(class key, label, A, B)`` of the instruction classes whose count changed (spill code
    left out), the largest change first."""
    ca = _metrics(k, "a").get("instruction_classes") or {}
    cb = _metrics(k, "b").get("instruction_classes") or {}
    if not (ca or cb):  # only the deltas were kept: [a, b, b - a]
        deltas = (k.get("deltas") or {}).get("instruction_classes") or {}
        ca = {key: (d or [0])[0] for key, d in deltas.items()}
        cb = {key: (d or [0, 0])[1] for key, d in deltas.items()}
    order, labels = class_table()
    out = []
    for key in set(ca) | set(cb):
        a, b = int(ca.get(key) or 0), int(cb.get(key) or 0)
        if a != b and key not in _MIX_IGNORED:
            out.append((key, labels.get(key, key), a, b))
    out.sort(key=lambda r: (-abs(r[3] - r[2]), order.index(r[0]) if r[0] in order else len(order), r[0]))
    return out


def _spill_site_sentence(k: Mapping[str, Any], which: str, top: int = 3) -> str:
    sites = (k.get("spill_sites_diff") or {}).get(which) or []
    if not sites:
        return ""
    items = []
    for s in sites[:top]:
        where = f"{s.get('file')}:{s.get('line')}" if s.get("file") else "(no line info)"
        items.append(
            f"{where} {int(s.get('b_count') or 0) - int(s.get('a_count') or 0):+d} {s.get('kind') or ''}".rstrip()
        )
    more = f" and {len(sites) - top} more" if len(sites) > top else ""
    return f"spill sites {which}: {', '.join(items)}{more}"


def _differs(fig: Figure, a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[bool, Any, Any]:
    va, vb = fig.value(a), fig.value(b)
    if va is None and vb is None:
        return False, va, vb
    if fig.kind == "number" and (va is None or vb is None):
        return False, va, vb  # a figure only one side's analysis gives is no change
    return (list(va) if isinstance(va, tuple) else va) != (list(vb) if isinstance(vb, tuple) else vb), va, vb


@dataclass(frozen=True)
class Change:
    """One ranked change of a kernel: its sentence and where a listing shows it.

    Attributes:
        text: the sentence (what ``changes`` in the JSON and every face print).
        group: ``headline``, ``sites``, ``local``, ``budgets``, ``memory``, ``classes``,
            ``opcodes`` or ``ptx_opcodes``.
        view: the listing that shows it, ``sass`` or ``ptx``.
        spill: shown by spill code (the TUI jumps to the first spill site).
        opcodes: opcodes (full or base, ``STG.E.U16``, ``USETMAXREG``) a hunk that shows it holds.
        classes: instruction classes as a hunk's summary names them (``fp32 packed``).
    """

    text: str
    group: str
    view: str = "sass"
    spill: bool = False
    opcodes: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()


#: How many PTX opcode deltas the faces list per kernel.
PTX_DELTAS_SHOWN = 8
_OP_NAME = re.compile(r"^(\S+?)(?:×\d+)?$")
#: Opcodes behind figures whose values are counts, not opcode lists.
_FIGURE_OPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "register_budgets": ("sass", ("USETMAXREG",)),
    "ptx_register_budgets": ("ptx", ("setmaxnreg",)),
    "ptx_local_bytes": ("ptx", ("st.local", "ld.local")),
}


def _op_names(v: Any) -> set[str]:
    """``{"STG.E.128"}`` from a memory-ops figure value (``["STG.E.128×8"]``)."""
    out = set()
    for item in v or [] if isinstance(v, (list, tuple)) else []:
        m = _OP_NAME.match(str(item).split(" ", 1)[0])
        if m:
            out.add(m.group(1))
    return out


def _figure_item(fig: Figure, group: str, va: Any, vb: Any) -> Change:
    text = figure_change(fig, va, vb)
    view = "ptx" if fig.name.startswith("ptx_") else "sass"
    if fig.name in _FIGURE_OPS:
        view, ops = _FIGURE_OPS[fig.name]
        return Change(text, group, view, spill=group == "local", opcodes=ops)
    if fig.kind == "list" and fig.fmt is not None:  # memory ops by width: the opcodes that moved
        moved = _op_names(va) ^ _op_names(vb) or _op_names(va) | _op_names(vb)
        return Change(text, group, view, spill=group == "local", opcodes=tuple(sorted(moved)))
    return Change(text, group, view, spill=group == "local")


def ptx_opcode_deltas(k: Mapping[str, Any], top: int | None = PTX_DELTAS_SHOWN) -> list[tuple[str, int, int]]:
    """``[("st.global.b16", 0, 64), …]``: the PTX opcodes (type and width kept) whose count changed
    most, largest change first; from the kernel's ``ptx_opcode_ranking`` when the analysis stored
    it, else from both sides' PTX opcode counts."""
    ranking = k.get("ptx_opcode_ranking")
    rows: list[tuple[str, int, int]] = []
    if isinstance(ranking, list) and ranking:
        rows = [
            (str(r.get("opcode")), int(r.get("a") or 0), int(r.get("b") or 0))
            for r in ranking
            if isinstance(r, Mapping) and r.get("opcode")
        ]
    else:
        pa = (_metrics(k, "a").get("ptx") or {}).get("opcodes")
        pb = (_metrics(k, "b").get("ptx") or {}).get("opcodes")
        if isinstance(pa, Mapping) and isinstance(pb, Mapping) and (pa or pb):
            from ..analysis.ptx_facts import opcode_deltas

            rows = [(d.opcode, d.a, d.b) for d in opcode_deltas(pa, pb)]
    rows.sort(key=lambda r: (-abs(r[2] - r[1]), r[0]))
    return rows if top is None else rows[:top]


def ptx_delta_text(op: str, a: int, b: int) -> str:
    """``st.global.b16 0 → 64``."""
    return f"{op} {a} → {b}"


def change_items(c: Mapping[str, Any], k: Mapping[str, Any]) -> list[Change]:
    """Every change of a kernel from A to B, the one that matters most first (see
    :func:`kernel_changes`), each with where a listing shows it."""
    a, b = _metrics(k, "a"), _metrics(k, "b")
    if not (a and b):
        return [Change(resource_sentence(c, k), "headline")]
    out: list[Change] = []
    if any(_differs(f, a, b)[0] for n in _HEADLINE if (f := by_name(n)) is not None) or any(
        (a.get(n) or 0) != (b.get(n) or 0) for n in _HEADLINE[1:]
    ):
        spills = any((a.get(n) or 0) != (b.get(n) or 0) for n in _HEADLINE[1:])
        out.append(Change(resource_sentence(c, k), "headline", spill=spills))
    for which in ("added", "removed"):
        s = _spill_site_sentence(k, which)
        if s:
            out.append(Change(s, "sites", spill=True))
    for group, names in RANKING:
        for n in names:
            fig = by_name(n)
            if fig is None or n in _HEADLINE:
                continue
            changed, va, vb = _differs(fig, a, b)
            if changed:
                out.append(_figure_item(fig, group, va, vb))
    moved = class_changes(k)
    if moved:
        out.append(
            Change(
                "instruction classes changed: " + ", ".join(f"{lab} {bb - aa:+d}" for _, lab, aa, bb in moved[:3]),
                "classes",
                classes=tuple(key.replace("_", " ") for key, _, _, _ in moved[:3]),
            )
        )
    ops = [(f, f.value(a), f.value(b)) for f in figures_for("json", "opcode") if f.present(a) or f.present(b)]
    ops_moved = [(f, va or 0, vb or 0) for f, va, vb in ops if (va or 0) != (vb or 0)]
    if ops_moved:
        out.append(
            Change(
                "key opcodes changed: " + ", ".join(f"{f.name} {va} → {vb}" for f, va, vb in ops_moved[:4]),
                "opcodes",
                opcodes=tuple(f.name for f, _, _ in ops_moved[:4]),
            )
        )
    ptx = ptx_opcode_deltas(k, top=4)
    if ptx:
        out.append(
            Change(
                "PTX opcodes changed: " + ", ".join(ptx_delta_text(*r) for r in ptx),
                "ptx_opcodes",
                "ptx",
                opcodes=tuple(r[0] for r in ptx),
            )
        )
    return out


def kernel_changes(c: Mapping[str, Any], k: Mapping[str, Any]) -> list[str]:
    """Every change of a kernel from A to B as short sentences, the one that matters most first.

    The first is the headline (:func:`resource_sentence`) when registers, stack or spills changed;
    then the spill sites added and removed; then the other local-memory, budget and memory-width
    figures of :data:`RANKING`; then the instruction classes, key opcodes and the PTX opcodes that
    changed most. Empty when nothing changed. :func:`change_items` gives the same list with where
    a listing shows each change."""
    return [ch.text for ch in change_items(c, k)]


def regressions(k: Mapping[str, Any]) -> list[str]:
    """``["stack 0 → 112 B", …]``: the resource figures that got worse in B, in ranking order."""
    a, b = _metrics(k, "a"), _metrics(k, "b")
    if not (a and b):
        return []
    out = []
    names = [n for _, group in RANKING for n in group]
    names += [f.name for f in figures_for("json", "resource") if f.name not in names]
    for n in names:
        fig = by_name(n)
        if fig is None or fig.kind != "number" or fig.worse is None:
            continue
        va, vb = fig.value(a), fig.value(b)
        if is_worse(fig, delta_sign(va, vb)):
            out.append(figure_change(fig, va, vb))
    return out


#: Figures that count of a kernel's code or how it was made, not of the resources it holds when it
#: runs: a change in them alone leaves the verdict at "no resource change" (it is told after it).
NOT_RESOURCES = ("instructions", "ptx_instructions", "peak_gpr", "ptx_registers", "compile_seconds")


def _resource_changed(k: Mapping[str, Any]) -> bool:
    a, b = _metrics(k, "a"), _metrics(k, "b")
    if not (a and b):
        return True
    return any(_differs(f, a, b)[0] for f in figures_for("json", "resource") if f.name not in NOT_RESOURCES)


def verdict(c: Mapping[str, Any], top: int = 3) -> str:
    """The last sentence of ``compare``/``diff``: which kernels regress and by which figures (the
    worst three), else which changed, else ``no resource change in N kernels``."""
    errs = [(s, ((c.get("sides") or {}).get(s) or {}).get("error")) for s in ("a", "b")]
    failed = [f"side {s.upper()} ({side_name(c, s)}) failed" for s, e in errs if e]
    if failed:
        return "no verdict: " + " and ".join(failed)
    ks = [k for k in c.get("kernels") or [] if isinstance(k, Mapping)]
    if not ks:
        return f"no kernels found in {side_name(c, 'a')} or {side_name(c, 'b')}"
    worse = [(k, r) for k in ks if (r := regressions(k))]
    changed = [k for k in ks if _resource_changed(k)]
    if worse:
        worse.sort(key=lambda kr: -len(kr[1]))
        text = "; ".join(f"{k.get('name')} regresses: {', '.join(r[:2])}" for k, r in worse[:top])
        rest = len(worse) - min(len(worse), top)
        extra = [f"{rest} more kernel(s) regress"] if rest else []
        others = len(changed) - len(worse)
        if others > 0:
            extra.append(f"{others} other kernel(s) changed")
        same = len(ks) - len(changed)
        if same:
            extra.append(f"{same} unchanged")
        return text + (f" ({', '.join(extra)})" if extra else "")
    if changed:
        firsts = [(kernel_changes(c, k) or [""])[0] for k in changed[:top]]
        text = f"no regression; {len(changed)} kernel(s) changed: " + "; ".join(f for f in firsts if f)
        return text + (f" ({len(ks) - len(changed)} unchanged)" if len(ks) > len(changed) else "")
    text = f"no resource change in {len(ks)} kernel{'s' if len(ks) != 1 else ''}"
    other = [(k, kernel_changes(c, k)) for k in ks]
    other = [(k, ch) for k, ch in other if ch]
    if other:  # the code changed without a resource change: say so after the verdict
        text += "; other changes: " + "; ".join(f"{k.get('name')}: {ch[0]}" for k, ch in other[:top])
        if len(other) > top:
            text += f" (and {len(other) - top} more kernel(s))"
    return text
