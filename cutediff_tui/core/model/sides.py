"""Side labels that say what differs between the two sides of a comparison.

``A 4.8.0 · flash-attn-4 4.0.0b16`` vs ``B 4.8.0 · flash-attn-4 4.0.0b36``, or ``A 4.8.0 · vec=4``
vs ``B 4.8.0 · vec=2``: each side's short name (its DSL version, or the artifact it was read
from), then the pins, CUDA flavour, recipe source and recipe parameters whose values differ
between the sides. The CLI table, the Markdown and HTML reports and the TUI header all call
:func:`side_labels`, so a label reads the same on every face.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from .changes import side_name
from .types import SIDES

__all__ = ["side_labels", "side_differences", "param_text", "shared_pins"]

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(==|@|>=|<=|~=|!=|<|>)?\s*(.*)$")


def param_text(v: Any) -> str:
    """A recipe parameter's value as written on a command line: ``true``, ``128``, ``64,0``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return "none" if v is None else str(v)


def _mapping(x: object) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def _short_path(path: str) -> str:
    return PurePath(path.rstrip("/\\")).name or path


def _pins(sd: Mapping[str, Any]) -> dict[str, str]:
    """Package name → what this side pins it to (a version, ``>=1.2``, or a source folder's name)."""
    out: dict[str, str] = {}
    for p in sd.get("pins") or []:
        m = _PIN.match(str(p).strip())
        if not m:
            continue
        name, op, rest = m.group(1), m.group(2), m.group(3).strip()
        if op == "==":
            out[name] = rest
        elif op == "@":
            out[name] = _short_path(rest)
        elif op:
            out[name] = f"{op}{rest}"
    return out


def _package(sd: Mapping[str, Any], name: str, pins: dict[str, str]) -> str | None:
    versions = sd.get("versions") or {}
    got = versions.get(name) if isinstance(versions, Mapping) else None
    if name in pins and pins[name][:1] not in "<>=~!":
        return pins[name]
    return str(got) if got else pins.get(name)


def side_differences(c: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per side, what sets it apart from the other: ``["flash-attn-4 4.0.0b16", "vec=4"]``."""
    sides = _mapping(c.get("sides"))
    sd: dict[str, Mapping[str, Any]] = {s: _mapping(sides.get(s)) for s in SIDES}
    out: dict[str, list[str]] = {s: [] for s in SIDES}
    pins = {s: _pins(sd[s]) for s in SIDES}
    for name in sorted(set(pins["a"]) | set(pins["b"])):
        got = {s: _package(sd[s], name, pins[s]) for s in SIDES}
        if got["a"] != got["b"]:
            for s in SIDES:
                out[s].append(f"{name} {got[s] or 'not installed'}")
    cuda = {s: sd[s].get("cuda") for s in SIDES}
    if cuda["a"] and cuda["b"] and str(cuda["a"]) != str(cuda["b"]):
        for s in SIDES:
            out[s].append(f"cu{cuda[s]}")
    sources = _mapping(_mapping(c.get("recipe")).get("sources"))
    if sources and sources.get("a") != sources.get("b"):
        for s in SIDES:
            src = sources.get(s)
            out[s].append(
                f"source {src if str(src).startswith('git:') else _short_path(str(src))}" if src else "recipe as given"
            )
    params = {s: _mapping(sd[s].get("params")) for s in SIDES}
    if params["a"] and params["b"]:
        for key in [k for k in params["a"] if k in params["b"]] + [k for k in params["b"] if k not in params["a"]]:
            va, vb = params["a"].get(key), params["b"].get(key)
            if va != vb:
                for s, v in (("a", va), ("b", vb)):
                    out[s].append(f"{key}={param_text(v)}")
    return out


def side_labels(c: Mapping[str, Any]) -> dict[str, str]:
    """Each side's label for tables and headers (without the ``A``/``B`` letter): its short name
    (:func:`~.changes.side_name`), then what differs between the sides, joined by `` · ``."""
    diff = side_differences(c)
    return {s: " · ".join([side_name(c, s), *diff[s]]) for s in SIDES}


def shared_pins(c: Mapping[str, Any]) -> list[str]:
    """The pins both sides have alike (``flash-attn-4==4.0.0b16``), which the labels leave out."""
    sides = _mapping(c.get("sides"))
    pa = [str(p) for p in _mapping(sides.get("a")).get("pins") or []]
    pb = {str(p) for p in _mapping(sides.get("b")).get("pins") or []}
    return [p for p in pa if p in pb]
