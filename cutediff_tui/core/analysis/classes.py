"""Instruction classes (tensor MMA, MUFU, spills, ...) and opcode / class counting.

The table lives in ``cutediff_tui/data/opcode_classes.toml`` (data, not code); see
the comments there for the lookup rules and the classification decisions.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from cutediff_tui.core.errors import CutediffError

__all__ = [
    "ClassInfo",
    "OpcodeClasses",
    "load_classes",
    "default_classes",
    "classify_sass",
    "classify_ptx",
    "count_opcodes",
    "count_classes",
    "per_line_counts",
    "ptx_opcode_counts",
    "ptx_class_counts",
    "delta",
    "DEFAULT_TABLE",
]

DEFAULT_TABLE = Path(__file__).resolve().parents[2] / "data" / "opcode_classes.toml"
OTHER = "other"


@dataclass(frozen=True, slots=True)
class ClassInfo:
    """Display label and diff weight of a class."""

    key: str
    label: str
    weight: float


@dataclass(slots=True)
class OpcodeClasses:
    """A loaded opcode class table. Use :func:`default_classes` for the shipped one."""

    classes: dict
    sass_map: dict
    sass_fallback: list
    ptx_map: dict
    ptx_space_ops: frozenset
    ptx_spaces: dict
    ptx_space_default: str
    ptx_typed_ops: frozenset
    ptx_types: dict
    ptx_typed_default: str
    _sass_cache: dict = field(default_factory=dict)
    _ptx_cache: dict = field(default_factory=dict)

    def sass_class(self, opcode: str) -> str:
        """Class of a SASS opcode (``"LDL.LU.64"`` -> ``"local"``)."""
        c = self._sass_cache.get(opcode)
        if c is not None:
            return c
        c = self._sass_lookup(opcode)[0]
        self._sass_cache[opcode] = c
        return c

    def _sass_lookup(self, opcode: str) -> tuple[str, bool]:
        parts = opcode.split(".")
        for n in range(len(parts), 0, -1):
            c = self.sass_map.get(".".join(parts[:n]))
            if c is not None:
                return c, True
        for prefix, c in self.sass_fallback:
            if opcode.startswith(prefix):
                return c, False
        return OTHER, False

    def is_known_sass(self, opcode: str) -> bool:
        """True when the opcode (or one of its dotted prefixes) is listed explicitly."""
        return self._sass_lookup(opcode)[1]

    def ptx_class(self, opcode: str) -> str:
        """Class of a PTX opcode (``"ld.global.v4.b32"`` -> ``"global"``)."""
        c = self._ptx_cache.get(opcode)
        if c is not None:
            return c
        parts = [p.split("::", 1)[0] for p in opcode.split(".")]
        parts = [p for p in parts if p]
        c = None
        for n in range(len(parts), 0, -1):
            c = self.ptx_map.get(".".join(parts[:n]))
            if c is not None:
                break
        if c is None and parts:
            base = parts[0]
            if base in self.ptx_space_ops:
                c = self.ptx_space_default
                for p in parts[1:]:
                    if p in self.ptx_spaces:
                        c = self.ptx_spaces[p]
                        break
            elif base in self.ptx_typed_ops:
                c = self.ptx_typed_default
                for p in reversed(parts[1:]):
                    if p in self.ptx_types:
                        c = self.ptx_types[p]
                        break
        if c is None:
            c = OTHER
        self._ptx_cache[opcode] = c
        return c

    def weight(self, cls: str) -> float:
        """Diff weight of a class (1 when unknown)."""
        info = self.classes.get(cls)
        return info.weight if info else 1.0

    def label(self, cls: str) -> str:
        """Display label of a class."""
        info = self.classes.get(cls)
        return info.label if info else cls


def load_classes(path: str | os.PathLike | None = None) -> OpcodeClasses:
    """Load an opcode class table from TOML (the shipped one when path is None).

    Raises:
        CutediffError: the file is missing or not valid TOML.
    """
    p = Path(path) if path is not None else DEFAULT_TABLE
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CutediffError(
            f"The opcode class table {p} is missing.", hint="Reinstall cutediff; the file ships in cutediff_tui/data."
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise CutediffError(f"The opcode class table {p} is not valid TOML: {e}.") from None
    classes = {
        k: ClassInfo(k, v.get("label", k), float(v.get("weight", 1))) for k, v in data.get("classes", {}).items()
    }
    classes.setdefault(OTHER, ClassInfo(OTHER, "Other", 1.0))

    def invert(table: Mapping[str, list]) -> dict:
        out: dict[str, str] = {}
        for cls, names in table.items():
            for n in names:
                out[n] = cls
        return out

    fb = sorted(data.get("sass_prefix_fallback", {}).items(), key=lambda kv: -len(kv[0]))
    space = data.get("ptx_space", {})
    typed = data.get("ptx_typed", {})
    return OpcodeClasses(
        classes=classes,
        sass_map=invert(data.get("sass", {})),
        sass_fallback=fb,
        ptx_map=invert(data.get("ptx", {})),
        ptx_space_ops=frozenset(space.get("ops", [])),
        ptx_spaces=dict(space.get("spaces", {})),
        ptx_space_default=space.get("default", "global"),
        ptx_typed_ops=frozenset(typed.get("ops", [])),
        ptx_types=dict(typed.get("types", {})),
        ptx_typed_default=typed.get("default", "integer"),
    )


@lru_cache(maxsize=1)
def default_classes() -> OpcodeClasses:
    """The shipped table, loaded once."""
    return load_classes()


def classify_sass(opcode: str) -> str:
    """Class of a SASS opcode with the shipped table."""
    return default_classes().sass_class(opcode)


def classify_ptx(opcode: str) -> str:
    """Class of a PTX opcode with the shipped table."""
    return default_classes().ptx_class(opcode)


def _instrs(obj) -> Iterable:
    if hasattr(obj, "instrs"):
        ins = obj.instrs
        return ins() if callable(ins) else ins
    return obj


def count_opcodes(func) -> dict[str, int]:
    """Count SASS base opcodes (``LDL.LU.64`` counts as ``LDL``).

    MUFU is also counted per function as extra ``MUFU.<FN>`` keys (``MUFU.EX2``), so
    ``MUFU`` equals the sum of the ``MUFU.*`` keys.

    Args:
        func: a SassFunction, a SassListing (all functions) or an iterable of SassInstr.
    """
    c = Counter(i.base for i in _instrs(func))
    mufu = Counter(i.opcode for i in _instrs(func) if i.base == "MUFU")
    out = dict(c)
    for op, n in mufu.items():
        fn = op.split(".")
        if len(fn) > 1:
            out["MUFU." + fn[1]] = out.get("MUFU." + fn[1], 0) + n
    return out


def count_classes(func, table: OpcodeClasses | None = None) -> dict[str, int]:
    """Count instructions per class (keys of ``[classes]`` in the TOML)."""
    t = table or default_classes()
    opc = Counter(i.opcode for i in _instrs(func))
    out: dict[str, int] = {}
    for op, n in opc.items():
        k = t.sass_class(op)
        out[k] = out.get(k, 0) + n
    return out


def per_line_counts(func, table: OpcodeClasses | None = None) -> dict[tuple, dict[str, int]]:
    """Class counts per source line: ``{(file, line): {class: n}}``.

    Instructions without line info (no ``-g``) are skipped.
    """
    t = table or default_classes()
    out: dict[tuple, dict[str, int]] = {}
    for i in _instrs(func):
        if i.line is None:
            continue
        key = (i.file, i.line)
        d = out.get(key)
        if d is None:
            d = out[key] = {}
        k = t.sass_class(i.opcode)
        d[k] = d.get(k, 0) + 1
    return out


def ptx_opcode_counts(entry) -> dict[str, int]:
    """Count PTX instructions by full dotted opcode (type and vector width kept)."""
    return dict(Counter(i.opcode for i in _instrs(entry)))


def ptx_class_counts(entry, table: OpcodeClasses | None = None) -> dict[str, int]:
    """Count PTX instructions per class."""
    t = table or default_classes()
    out: dict[str, int] = {}
    for op, n in Counter(i.opcode for i in _instrs(entry)).items():
        k = t.ptx_class(op)
        out[k] = out.get(k, 0) + n
    return out


def delta(a: Mapping, b: Mapping) -> dict:
    """Compare two count tables: ``{key: (a, b, b - a)}`` over the union of keys.

    Ordered by the size of the change (largest first), then by key; missing keys count 0.
    """
    keys = set(a) | set(b)
    rows = {k: (a.get(k, 0), b.get(k, 0), b.get(k, 0) - a.get(k, 0)) for k in keys}
    return dict(sorted(rows.items(), key=lambda kv: (-abs(kv[1][2]), str(kv[0]))))
