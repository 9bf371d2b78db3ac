"""Metric expressions over one kernel's figures: ``spill_store_bytes>0``, ``registers>168``,
``stack_bytes>0 and STL>10``, ``spill_store_bytes+spill_load_bytes``.

Read with :mod:`ast` and evaluated by walking the tree (never ``eval``), so a metric from a CI
config or a command line can only compare and add numbers.

Names:

* resource figures (lower case): the figure registry's (:mod:`cutediff_tui.core.model.figures`),
  listed in :data:`RESOURCE_FIGURES`;
* instruction classes (lower case, the ``[classes]`` keys of ``data/opcode_classes.toml``):
  ``mufu``, ``tensor_mma``, ``fp32_packed``, ``local`` …;
* SASS opcodes (upper case): ``UTCHMMA``, ``MUFU``, ``FFMA2``, ``STL`` … — a count, 0 when the
  kernel has none.
"""

from __future__ import annotations

import ast
import difflib
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import CutediffError
from .model import figures as registry


class _ResourceFigures(Mapping[str, str]):
    """Lower-case names a metric may use, with what they mean: the registry's resource figures
    (read when used, so a figure added to the registry is a metric name at once)."""

    def _table(self) -> dict[str, str]:
        return {f.name: f.description or f.label for f in registry.figures_for("metric", "resource")}

    def __getitem__(self, name: str) -> str:
        return self._table()[name]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


RESOURCE_FIGURES: Mapping[str, str] = _ResourceFigures()

_CMP = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@lru_cache(maxsize=1)
def class_names() -> frozenset[str]:
    from .analysis.classes import default_classes

    return frozenset(default_classes().classes)


def figures_of(kernel_metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The flat figures of one analysed kernel (a comparison side or a probe): resource figures,
    class counts and opcode counts in one dict a metric reads."""
    out: dict[str, Any] = {}
    for fig in registry.figures_for("metric", "resource"):
        v = fig.value(kernel_metrics)
        if v is not None or fig.name in kernel_metrics:
            out[fig.name] = v
    for k, v in (kernel_metrics.get("instruction_classes") or {}).items():
        out[_ident(k)] = v
    for k, v in (kernel_metrics.get("opcodes") or {}).items():
        out[k] = v
    return out


def _ident(name: str) -> str:
    """A class name as a metric reads it: Python keywords get a trailing ``_`` (``global``)."""
    import keyword

    return name + "_" if keyword.iskeyword(name) else name


def _rewrite_keywords(src: str) -> str:
    import re

    for name in class_names():
        if _ident(name) != name:
            src = re.sub(rf"\b{name}\b(?!_)", _ident(name), src)
    return src


@dataclass(frozen=True)
class Metric:
    """A parsed metric: a predicate (``spill_store_bytes>0``) or a value (``registers``)."""

    text: str
    tree: ast.Expression
    names: tuple[str, ...]

    @property
    def is_predicate(self) -> bool:
        return isinstance(self.tree.body, (ast.Compare, ast.BoolOp)) or (
            isinstance(self.tree.body, ast.UnaryOp) and isinstance(self.tree.body.op, ast.Not)
        )

    def value(self, figures: Mapping[str, Any]) -> Any:
        """Evaluate on one kernel's figures (see :func:`figures_of`)."""
        return _eval(self.tree.body, figures, self.text)

    def holds(self, figures: Mapping[str, Any]) -> bool:
        return bool(self.value(figures))

    def shown(self, figures: Mapping[str, Any]) -> str:
        """The figures the metric reads, as ``name=value`` (what a bisect table shows)."""
        return ", ".join(f"{n}={_lookup(n, figures, self.text)}" for n in self.names)


def parse_metric(text: str, *, predicate: bool | None = None) -> Metric:
    """Parse ``text``; with ``predicate=True`` refuse plain values, with ``False`` refuse predicates."""
    src = (text or "").strip()
    example = "spill_store_bytes>0 or registers>168"
    if not src:
        raise CutediffError("The metric is empty.", f"Write a predicate such as {example}.")
    try:
        tree = ast.parse(_rewrite_keywords(src), mode="eval")
    except SyntaxError as exc:
        raise CutediffError(
            f"The metric {src!r} is not an expression cutediff can read ({exc.msg} at column {exc.offset}).",
            f"Write a predicate such as {example}.",
        ) from None
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            _check_name(node.id, src)
            if node.id not in names:
                names.append(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id.isupper():
            raise CutediffError(
                f"The metric {src!r} names the opcode variant {node.value.id}.{node.attr}; metrics count base opcodes.",
                f"Write {node.value.id} (all its variants together).",
            )
        elif not isinstance(node, _ALLOWED):
            raise CutediffError(
                f"The metric {src!r} uses {type(node).__name__.lower()} syntax, which a metric cannot.",
                "Use names, numbers, + - * /, comparisons (> >= < <= == !=) and and/or/not.",
            )
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise CutediffError(
                f"The metric {src!r} holds {node.value!r}, which is not a number.", "Metrics compare numbers only."
            )
    metric = Metric(src, tree, tuple(names))
    if predicate is True and not metric.is_predicate:
        raise CutediffError(
            f"The metric {src!r} is a value, not a predicate.", f"Say when a version is bad, e.g. {src}>0."
        )
    if predicate is False and metric.is_predicate:
        raise CutediffError(
            f"The figure {src!r} is a predicate, not a value.",
            "Give a figure such as spill_store_bytes, registers or UTCHMMA.",
        )
    return metric


_ALLOWED = (
    ast.Expression,
    ast.Compare,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Name,
    ast.Load,
    ast.Constant,
    *_CMP,
    *_BIN,
)


def known_names() -> list[str]:
    return [*RESOURCE_FIGURES, *sorted(_ident(c) for c in class_names())]


def _check_name(name: str, src: str) -> None:
    known = known_names()
    if name in known or name.isupper():
        return  # a figure, or a SASS opcode (counted, 0 when absent)
    same = [k for k in known if k.lower() == name.lower()]
    if same:
        raise CutediffError(
            f"The metric {src!r} names {name!r}; figures are written in lower case.",
            f"Write {same[0]} (only SASS opcodes are upper case, e.g. UTCHMMA).",
        )
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"Did you mean {' or '.join(close)}?" if close else "Known figures: " + ", ".join(RESOURCE_FIGURES) + "."
    raise CutediffError(
        f"The metric {src!r} names {name!r}, which is not a figure cutediff measures.",
        hint + " SASS opcodes are written in upper case (UTCHMMA, MUFU).",
    )


def _lookup(name: str, figures: Mapping[str, Any], src: str) -> Any:
    if name in figures and figures[name] is not None:
        return figures[name]
    if name not in RESOURCE_FIGURES:
        return 0  # an opcode or class the kernel does not use
    raise CutediffError(
        f"The metric {src!r} needs {name}, which this kernel's analysis did not give.",
        "Pick another figure (registers, stack_bytes, spill_store_bytes are always there).",
    )


def _eval(node: ast.AST, figures: Mapping[str, Any], src: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _lookup(node.id, figures, src)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, figures, src)
        return (not v) if isinstance(node.op, ast.Not) else (-v if isinstance(node.op, ast.USub) else +v)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, figures, src), _eval(node.right, figures, src)
        if isinstance(node.op, ast.Div) and right == 0:
            return math.copysign(float("inf"), left) if left else 0.0
        return _BIN[type(node.op)](left, right)
    if isinstance(node, ast.BoolOp):
        vals = (_eval(v, figures, src) for v in node.values)
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, figures, src)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, figures, src)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    raise CutediffError(f"The metric {src!r} cannot be evaluated.", "Use names, numbers and comparisons.")
