"""Sweeps: a matrix of toolchains × archs × recipe parameters, each cell a :class:`~.probe.Probe`.

A sweep runs on an executor (:mod:`.executors`: a local process pool, or Dask), keeps its finished
cells in a state file under the cache (``sweeps/<key>.json``) so that a stopped sweep resumes
where it stopped, and is summarised as a grid of one figure: rows are toolchains, columns are
arch × parameter combinations (:func:`grid`).

The result is a JSON document with ``schema: cutediff.sweep/1``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import CutediffError
from .events import CellFinished, Progress
from .events import noop as _noop
from .locking import atomic_write
from .metric import Metric, parse_metric
from .paths import cache_dir
from .probe import Probe, select_kernels

SCHEMA = "cutediff.sweep/1"
#: The note of a cell none of whose kernels the kernel filter matches.
NO_MATCH = "no kernel matches the filter"


# ---------------------------------------------------------------- axes


def parse_values(text: str) -> list[Any]:
    """``64,128`` → [64, 128]; ``64:256:64`` → [64, 128, 192, 256] (stop included); words stay words;
    ``;`` separates values that hold commas themselves (``window=128,0;256,0``)."""
    text = text.strip()
    if not text:
        raise CutediffError("A swept parameter has no values.", "Write them as NAME=V1,V2 or NAME=START:STOP:STEP.")
    if ";" in text:
        items = [x.strip() for x in text.split(";") if x.strip()]
        if not items:
            raise CutediffError(f"The values {text!r} are empty.", "Write them as NAME=A;B, e.g. window=128,0;256,0.")
        return items
    if ":" in text and "," not in text:
        parts = text.split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise CutediffError(
                f"The range {text!r} is not START:STOP[:STEP] of whole numbers.",
                "Write e.g. hdim=64:256:64, or list the values: hdim=64,128.",
            ) from None
        start, stop, step = (nums + [1])[:3] if len(nums) == 2 else nums[:3]
        if len(nums) > 3 or step <= 0 or stop < start:
            raise CutediffError(
                f"The range {text!r} is empty or malformed.",
                "Write START:STOP:STEP with START <= STOP and a positive STEP.",
            )
        return list(range(start, stop + 1, step))
    out: list[Any] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            out.append(int(item))
        except ValueError:
            low = item.lower()
            out.append(True if low in ("true", "yes", "on") else False if low in ("false", "no", "off") else item)
    if not out:
        raise CutediffError(f"The values {text!r} are empty.", "Write them as NAME=V1,V2 or NAME=START:STOP:STEP.")
    return out


def parse_axis(item: str) -> tuple[str, list[Any]]:
    if "=" not in item:
        raise CutediffError(
            f"--param {item!r} is not NAME=VALUES.", "Write e.g. --param hdim=64,128 or --param hdim=64:256:64."
        )
    name, values = item.split("=", 1)
    return name.strip().replace("-", "_"), parse_values(values)


def cell_label(axis: dict[str, Any]) -> str:
    """A cell's column name: its arch, then its other swept values (``sm_100a hdim=128``)."""
    rest = {k: v for k, v in axis.items() if k != "arch"}
    return " ".join([str(axis.get("arch", "?")), *(f"{k}={v}" for k, v in rest.items())])


def cell_column(cell: dict) -> str:
    """The column a result's cell sits in (:func:`cell_label` of its axis)."""
    return cell_label({"arch": cell.get("arch", "?"), **(cell.get("axis") or {})})


# ---------------------------------------------------------------- plan


@dataclass
class SweepPlan:
    """The matrix: every toolchain × every profile × every combination of the swept parameters."""

    toolchains: list[str]
    probes: list[Probe]
    figure: str = "spill_store_bytes"
    kernel_filter: str | None = None
    command: str = ""
    axes: dict[str, Any] = field(default_factory=dict)
    _key: str | None = field(default=None, init=False, repr=False)

    def key(self) -> str:
        """The state file's name: the probes, and the analysis code (a newer cutediff starts afresh)."""
        from .analysis_pipeline import analysis_digest

        if self._key is None:
            cells = sorted(json.dumps([p.key(), p.axis], sort_keys=True, default=str) for p in self.probes)
            self._key = hashlib.sha256(json.dumps([analysis_digest(), cells]).encode()).hexdigest()[:20]
        return self._key


def expand(
    toolchains: list[str],
    profiles: list,
    base: Probe,
    axes: dict[str, list[Any]],
    coerce: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    by_gpu: bool = False,
) -> list[Probe]:
    """Every toolchain × profile × product of ``axes``; ``coerce`` turns the axis values plus the
    base parameters into the recipe's checked parameters. ``by_gpu`` names each profile in the
    cell's axis too (two GPUs of one arch, e.g. h100 and h200, are different cells)."""
    out: list[Probe] = []
    names = list(axes)
    combos = list(itertools.product(*(axes[n] for n in names))) or [()]
    for side in toolchains:
        for prof in profiles:
            for combo in combos:
                axis = dict(zip(names, combo))
                params = coerce({**base.params, **axis})
                out.append(
                    Probe(
                        side=side,
                        recipe=base.recipe,
                        params=params,
                        profile=prof,
                        pins=base.pins,
                        cuda=base.cuda,
                        wheelhouse=base.wheelhouse,
                        timeout=base.timeout,
                        use_cache=base.use_cache,
                        axis={"arch": prof.arch, **({"gpu": prof.name} if by_gpu else {}), **axis},
                    )
                )
    return out


# ---------------------------------------------------------------- state (resume)


def state_path(plan: SweepPlan):
    return cache_dir() / "sweeps" / f"{plan.key()}.json"


def load_state(plan: SweepPlan) -> dict[str, dict]:
    p = state_path(plan)
    try:
        data = json.loads(p.read_text())
        return {k: v for k, v in data.get("cells", {}).items() if v.get("status") == "ok"}
    except (OSError, ValueError, AttributeError):
        return {}


def save_state(plan: SweepPlan, cells: dict[str, dict]) -> None:
    """Add finished cells to the state file (under a lock: two runs of one sweep merge, not overwrite)."""
    from .locking import file_lock

    path = state_path(plan)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(path.with_suffix(".lock")):
            merged = {**load_state(plan), **cells}
            atomic_write(path, json.dumps({"schema": "cutediff.sweep-state/1", "cells": merged}))
    except OSError:
        pass  # resuming is a convenience; a read-only cache only loses it


# ---------------------------------------------------------------- run


def run_sweep(plan: SweepPlan, executor, progress: Progress = _noop, *, resume: bool = True) -> dict:
    """Run every probe of ``plan`` on ``executor``; cells already finished (state file) are reused."""
    t0 = time.monotonic()
    done = load_state(plan) if resume else {}
    by_key = {p.key(): p for p in plan.probes}
    results: dict[str, dict] = {k: dict(v, resumed=True) for k, v in done.items() if k in by_key}
    todo = [p for k, p in by_key.items() if k not in results]
    total = len(by_key)
    if results:
        progress(f"resuming: {len(results)} of {total} cells were finished before")
    n = len(results)
    for probe, res in executor.map_unordered(todo):
        n += 1
        results[probe.key()] = res
        ok = res.get("status") == "ok"
        progress(
            CellFinished(
                None,
                n,
                total,
                probe.side,
                cell_label(probe.axis),
                seconds=res.get("seconds", 0) if ok else 0.0,
                from_cache=bool(res.get("from_cache")) if ok else False,
                why=None if ok else str(res.get("why")),
            )
        )
        if res.get("status") == "ok":
            save_state(plan, {probe.key(): res})
    cells = [results[p.key()] for p in plan.probes]
    return {
        "schema": SCHEMA,
        "command": plan.command,
        "recipe": {"name": plan.probes[0].recipe.name if plan.probes else None},
        "figure": plan.figure,
        "kernel_filter": plan.kernel_filter,
        "axes": plan.axes,
        "toolchains": plan.toolchains,
        "pins": list(plan.probes[0].pins) if plan.probes else [],
        "executor": executor.describe(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cells": cells,
        "timing": {
            "wall_seconds": round(time.monotonic() - t0, 3),
            "cells": len(cells),
            "resumed": sum(1 for c in cells if c.get("resumed")),
            "cached_builds": sum(1 for c in cells if c.get("from_cache")),
        },
    }


# ---------------------------------------------------------------- summary grid


@dataclass
class Grid:
    """One figure over the sweep: ``values[r][c]`` for toolchain ``rows[r]`` and column ``cols[c]``.

    A value is a number, or ``None`` with ``notes[r][c]`` saying why (failed cell, no kernel matched).
    ``kernels[r][c]`` names the kernel the value came from (the largest when several match), and
    ``cells[r][c]`` is the result's cell placed there (None where the sweep has none).
    """

    figure: str
    rows: list[str]
    cols: list[str]
    values: list[list[float | None]]
    notes: list[list[str]]
    kernels: list[list[str]]
    cells: list[list[dict | None]]

    @property
    def finite(self) -> list[float]:
        return [v for row in self.values for v in row if v is not None]


def recipe_name(result: dict) -> str:
    """The recipe a sweep result names ("sweep" when it names none): ``recipe`` is an object with a
    name as cutediff writes it, or a bare string in a hand-made file."""
    recipe = result.get("recipe")
    name = recipe.get("name") if isinstance(recipe, dict) else recipe
    return name if isinstance(name, str) and name.strip() else "sweep"


def grid(result: dict, figure: str | None = None, kernel_filter: str | None = None) -> Grid:
    """Summarise a sweep result as a grid of ``figure`` (default: the sweep's own)."""
    if result.get("schema") != SCHEMA:
        raise CutediffError("This is not a cutediff sweep result.", "Make one with cutediff sweep --json FILE.")
    metric: Metric = parse_metric(figure or result.get("figure") or "spill_store_bytes", predicate=None)
    kf = kernel_filter if kernel_filter is not None else result.get("kernel_filter")
    rows: dict[str, int] = {}
    cols: dict[str, int] = {}
    placed: dict[tuple[int, int], dict] = {}
    for c in result.get("cells", []):
        r = rows.setdefault(c.get("side") or c.get("toolchain") or "?", len(rows))
        k = cols.setdefault(cell_column(c), len(cols))
        placed[(r, k)] = c
    values: list[list[float | None]] = [[None] * len(cols) for _ in rows]
    notes = [[""] * len(cols) for _ in rows]
    kernels = [[""] * len(cols) for _ in rows]
    cells: list[list[dict | None]] = [[None] * len(cols) for _ in rows]
    for (r, k), c in placed.items():
        cells[r][k] = c
        if c.get("status") != "ok":
            notes[r][k] = c.get("why") or "failed"
            continue
        chosen = select_kernels(c, kf)
        if not chosen:
            notes[r][k] = NO_MATCH
            continue
        best = None
        for kern in chosen:
            try:
                v = metric.value(kern["figures"])
            except CutediffError as exc:
                notes[r][k] = str(exc)
                continue
            v = float(v)
            if best is None or v > best[0]:
                best = (v, kern["name"])
        if best is None:
            continue
        values[r][k] = int(best[0]) if best[0].is_integer() else round(best[0], 3)
        kernels[r][k] = best[1]
    return Grid(metric.text, list(rows), list(cols), values, notes, kernels, cells)


def figures_in(result: dict) -> list[str]:
    """Figures a sweep result can be summarised by: resource figures, then classes and opcodes seen."""
    from .metric import RESOURCE_FIGURES, class_names

    seen: set[str] = set()
    for c in result.get("cells", []):
        for k in c.get("kernels", []):
            seen.update(k.get("figures", {}))
    res = [f for f in RESOURCE_FIGURES if f in seen]
    cls = sorted(f for f in seen if f in class_names())
    ops = sorted(f for f in seen if f not in RESOURCE_FIGURES and f not in class_names() and "." not in f)

    def readable(name: str) -> bool:
        try:
            parse_metric(name)
            return True
        except CutediffError:
            return False

    return [f for f in res + cls + ops if readable(f)]


def iter_ok(cells: Iterable[dict]) -> Iterable[dict]:
    return (c for c in cells if c.get("status") == "ok")
