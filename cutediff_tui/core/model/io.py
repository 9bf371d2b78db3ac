"""The one reader and writer of comparison JSON: writes ``cutediff.comparison/2``, reads /1 and /2.

/2 is /1 plus, on each kernel, ``figures``: every registry figure either side has, as
``{name: [A, B]}`` (see :mod:`.figures`), so a consumer of the JSON needs no extractor of its own.
Reading keeps the whole document (keys this version does not know included), so a saved file
round-trips; :func:`typed` gives the typed view (:class:`~.types.Comparison`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..errors import CutediffError, without_debug_advice
from .changes import kernel_changes, ptx_opcode_deltas
from .figures import figures_for
from .types import SIDES, Comparison

__all__ = [
    "READABLE_SCHEMAS",
    "SCHEMA",
    "SCHEMA_V1",
    "decode",
    "document",
    "dumps",
    "kernel_figures",
    "load_comparison_bytes",
    "read_comparison",
    "to_plain",
    "typed",
]

SCHEMA = "cutediff.comparison/2"
SCHEMA_V1 = "cutediff.comparison/1"
READABLE_SCHEMAS = (SCHEMA_V1, SCHEMA)
_RAW = msgspec.json.Decoder()
_TYPED = msgspec.json.Decoder(Comparison, strict=False)


def decode(data: bytes | str) -> Any:
    """JSON text to plain Python (msgspec; ``json`` for the NaN/Infinity that msgspec refuses)."""
    try:
        return _RAW.decode(data)
    except msgspec.DecodeError:
        return json.loads(data)


def _schema_error(where: str, schema: Any) -> CutediffError:
    newer = (
        isinstance(schema, str)
        and schema.startswith("cutediff.comparison/")
        and schema.rsplit("/", 1)[-1].isdigit()
        and int(schema.rsplit("/", 1)[-1]) > int(SCHEMA.rsplit("/", 1)[-1])
    )
    return CutediffError(
        f"{where} uses schema {schema!r}, and this cutediff reads {' and '.join(map(repr, READABLE_SCHEMAS))}.",
        "Open it with a newer cutediff (pip install -U cutediff)."
        if newer
        else "Re-create it with this version of cutediff (cutediff compare … --json).",
    )


def load_comparison_bytes(data: bytes, where: str = "The comparison") -> dict[str, Any]:
    """A comparison document from its JSON bytes, checked against the typed model.

    Raises a one-sentence :class:`CutediffError` for another schema, a document without sides or
    kernels, or a field of the wrong type.
    """
    try:
        doc = decode(data)
    except (ValueError, UnicodeDecodeError):
        raise CutediffError(
            f"{where} is not a JSON comparison (it does not parse as UTF-8 JSON).",
            "Give a file written by cutediff compare --json (open also takes sweep and bisect results).",
        ) from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in READABLE_SCHEMAS:
        raise _schema_error(where, schema)
    sides = doc.get("sides")
    if not (
        isinstance(sides, dict)
        and all(isinstance(sides.get(s), dict) for s in SIDES)
        and isinstance(doc.get("kernels"), list)
    ):
        raise CutediffError(
            f"{where} says it is a {schema} comparison but lacks its sides or kernels (it was cut short or edited).",
            "Re-create it with cutediff compare … --json.",
        )
    try:
        _TYPED.decode(data)
    except msgspec.ValidationError as exc:
        raise CutediffError(
            f"{where} is a {schema} comparison with a field cutediff cannot read ({exc}).",
            "Re-create it with cutediff compare … --json, or fix that field.",
        ) from None
    except msgspec.DecodeError:
        pass  # NaN/Infinity: json read it above; the view is built on demand by typed()
    out: dict[str, Any] = doc
    return out


def read_comparison(path: Path | str) -> dict[str, Any]:
    """Read a saved comparison (/1 or /2) with its artifact paths made absolute."""
    from ..files import read_bounded
    from ..validate import validate_result
    from .confine import absolutize

    path = Path(path)
    try:
        data = read_bounded(path)
    except FileNotFoundError:
        raise CutediffError(f"{path} does not exist.", "Give the path of a comparison saved by cutediff.") from None
    except IsADirectoryError:
        raise CutediffError(
            f"{path} is a folder without a comparison.json.", "Give a comparison saved by cutediff."
        ) from None
    try:
        doc = load_comparison_bytes(data, str(path))
    except RecursionError:
        raise CutediffError(
            f"{path} is nested deeper than any comparison (it does not parse as a cutediff result).",
            "Give a file written by cutediff compare --json.",
        ) from None
    # a file someone may have made by hand: figures checked, paths confined to its folder
    validate_result(doc, str(path), text_chars=len(data))
    for side in (doc.get("sides") or {}).values():
        if isinstance(side, dict) and isinstance(side.get("error"), str):
            side["error"] = without_debug_advice(side["error"])
    out: dict[str, Any] = absolutize(doc, path.resolve().parent)
    return out


def typed(doc: Mapping[str, Any]) -> Comparison:
    """The typed view of a comparison document (a copy: later edits of ``doc`` are not seen)."""
    try:
        return msgspec.convert(doc, Comparison, strict=False)
    except msgspec.ValidationError as exc:
        raise CutediffError(
            f"The comparison has a field cutediff cannot read ({exc}).", "Re-create it with cutediff compare … --json."
        ) from None


def kernel_figures(kernel: Mapping[str, Any]) -> dict[str, list[Any]]:
    """``{figure name: [A, B]}`` for every JSON-face figure either side of ``kernel`` has."""
    out: dict[str, list[Any]] = {}
    a, b = kernel.get("a"), kernel.get("b")
    for fig in figures_for("json"):
        if fig.present(a) or fig.present(b):
            out[fig.name] = [fig.value(a), fig.value(b)]
    return out


def document(comparison: Mapping[str, Any]) -> dict[str, Any]:
    """The /2 JSON document of a comparison: its keys, ``schema`` /2 and each kernel's figures,
    ranked ``changes`` (:func:`.changes.kernel_changes`) and ``ptx_opcode_deltas``
    (:func:`.changes.ptx_opcode_deltas`)."""
    doc = dict(comparison)
    doc["schema"] = SCHEMA
    kernels = doc.get("kernels")
    if isinstance(kernels, list):
        doc["kernels"] = [
            {
                **k,
                "figures": kernel_figures(k),
                "changes": kernel_changes(comparison, k),
                "ptx_opcode_deltas": [
                    {"opcode": op, "a": x, "b": y, "delta": y - x} for op, x, y in ptx_opcode_deltas(k)
                ],
            }
            if isinstance(k, Mapping)
            else k
            for k in kernels
        ]
    return doc


def to_plain(obj: Any) -> Any:
    """JSON fallback for values that are not JSON: objects with ``to_json``, dataclasses, paths, sets."""
    from dataclasses import asdict, is_dataclass

    if hasattr(obj, "to_json"):
        return obj.to_json()
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def dumps(comparison: Mapping[str, Any], *, indent: int | None = 1) -> str:
    """The comparison as /2 JSON text (what every cutediff command writes)."""
    return json.dumps(document(comparison), indent=indent, default=to_plain)
