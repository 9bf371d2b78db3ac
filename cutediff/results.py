"""The results the Python API returns: a comparison, a check, a sweep and a bisect.

Each wraps the JSON document the CLI writes (``.data``, see ``docs/schema.md``) and gives its
table of figures as records (a list of dicts, :meth:`records`) and, when pandas is installed, as a
DataFrame (:meth:`to_pandas`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.report.check import CheckResult

if TYPE_CHECKING:
    import pandas

__all__ = ["BisectResult", "CheckReport", "Comparison", "SweepResult", "dataframe", "read_document", "run_check"]

#: Report formats: Markdown (GitHub issue), one HTML file, the comparison JSON, figures as CSV.
FORMATS = ("md", "html", "json", "csv")


def dataframe(records: list[dict[str, Any]]) -> pandas.DataFrame:
    """``records`` as a pandas DataFrame; a :class:`CutediffError` in one sentence without pandas."""
    try:
        import pandas
    except ImportError:
        raise CutediffError(
            "to_pandas() needs pandas, which is not installed in this Python.",
            "Install it with pip install pandas, or use .records() (a list of dicts) instead.",
        ) from None
    return pandas.DataFrame.from_records(records)


class Comparison:
    """Two toolchains' builds of one recipe, analysed: what ``cutediff compare --json`` writes.

    Attributes:
        data: the comparison document (``cutediff.comparison/2``).
        source: the file it was loaded from (None when it was just made).
    """

    def __init__(self, data: dict[str, Any], source: Path | None = None) -> None:
        self.data = data
        self.source = source

    def __repr__(self) -> str:
        a, b = (self.sides.get(s, "?") for s in ("a", "b"))
        return f"<cutediff.Comparison {a!r} vs {b!r}: {len(self.kernels)} kernel(s)>"

    @property
    def sides(self) -> dict[str, str]:
        """Side (``a``, ``b``) → its toolchain label, e.g. ``4.8.0 [flash-attn-4==4.0.0b16]``."""
        sides = self.data.get("sides") or {}
        return {s: str((sides.get(s) or {}).get("label") or s.upper()) for s in ("a", "b")}

    @property
    def kernels(self) -> list[str]:
        """The kernel names, in the comparison's order."""
        return [str(k.get("name")) for k in self.data.get("kernels") or [] if isinstance(k, Mapping)]

    @property
    def errors(self) -> list[str]:
        """The sentences of the sides that failed to build (empty when both built)."""
        sides = self.data.get("sides") or {}
        return [
            f"Side {s.upper()}: {v['error']}" for s, v in sides.items() if isinstance(v, Mapping) and v.get("error")
        ]

    def records(self) -> list[dict[str, Any]]:
        """The table of figures, one dict per kernel × side × figure (the rows of ``cutediff report
        --format csv``): ``kernel, side, toolchain, figure, label, unit, value``."""
        from cutediff_tui.core.report.table import figure_records

        return figure_records(self.data)

    def to_pandas(self) -> pandas.DataFrame:
        """:meth:`records` as a DataFrame (needs pandas). ``df.pivot_table(index=["kernel",
        "figure"], columns="side", values="value", aggfunc="first")`` puts A and B side by side."""
        return dataframe(self.records())

    def report(self, format: str = "md", *, keep_paths: bool = True, kernel_filter: str | None = None) -> str:
        """The report text: ``md``, ``html``, ``json`` or ``csv``; ``kernel_filter`` (a regular
        expression, as ``--kernel-filter``) keeps only the kernels whose name or symbol matches."""
        from cutediff_tui.core.model.kernel_filter import filter_comparison
        from cutediff_tui.core.report import render

        if format not in FORMATS:
            raise CutediffError(f"Unknown report format {format!r}.", f"Use one of: {', '.join(FORMATS)}.")
        return render(filter_comparison(self.data, kernel_filter), format, keep_paths=keep_paths)

    def check(self, **limits: Any) -> CheckReport:
        """:func:`cutediff.check` on this comparison (the same keyword arguments)."""
        return run_check(self.data, **limits)

    def save(self, folder: str | Path, *, keep_paths: bool = False) -> Path:
        """A self-contained result folder (``comparison.json`` and the artifacts), as ``compare
        --save`` writes; returns the path of its ``comparison.json``."""
        from cutediff_tui.core.resultdir import save_result

        save_result(self.data, Path(folder), keep_paths)
        return Path(folder) / "comparison.json"


class CheckReport:
    """The outcome of ``cutediff check``: every kernel × limit, and the exit code it would give."""

    def __init__(self, result: CheckResult) -> None:
        self.result = result

    def __repr__(self) -> str:
        return f"<cutediff.CheckReport exit {self.exit_code}: {self.summary}>"

    @property
    def exit_code(self) -> int:
        """0 within the limits, 1 when one broke, 2 when a check could not run."""
        return self.result.exit_code

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def summary(self) -> str:
        return self.result.summary()

    @property
    def notes(self) -> list[str]:
        return list(self.result.notes)

    def records(self) -> list[dict[str, Any]]:
        """One dict per kernel × limit: ``kernel, limit, status, message, value, threshold``."""
        return [asdict(o) for o in self.result.outcomes]

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.records())

    def junit(self) -> str:
        """The outcomes as JUnit XML (what ``--junit`` writes)."""
        from cutediff_tui.core.report import junit_xml

        return junit_xml(self.result)


class SweepResult:
    """A matrix of toolchains × archs × parameters (``cutediff sweep --json``)."""

    def __init__(self, data: dict[str, Any], source: Path | None = None) -> None:
        self.data = data
        self.source = source

    def __repr__(self) -> str:
        return f"<cutediff.SweepResult {len(self.data.get('cells') or [])} cells of {self.figure}>"

    @property
    def figure(self) -> str:
        """The figure the sweep summarises (``--figure``)."""
        return str(self.data.get("figure") or "spill_store_bytes")

    @property
    def toolchains(self) -> list[str]:
        return [str(t) for t in self.data.get("toolchains") or []]

    def records(self) -> list[dict[str, Any]]:
        """One dict per cell × kernel: ``toolchain``, ``arch``, ``gpu``, the swept parameters,
        ``status``, ``why``, ``kernel`` and every figure the cell measured (a failed cell: one
        row, ``kernel`` None)."""
        rows: list[dict[str, Any]] = []
        for c in self.data.get("cells") or []:
            if not isinstance(c, Mapping):
                continue
            base = {
                "toolchain": c.get("side") or c.get("toolchain"),
                "arch": c.get("arch"),
                "gpu": c.get("gpu"),
                **{k: v for k, v in (c.get("axis") or {}).items() if k not in ("arch", "gpu")},
                "status": c.get("status"),
                "why": c.get("why"),
            }
            kernels = [k for k in c.get("kernels") or [] if isinstance(k, Mapping)]
            if not kernels:
                rows.append({**base, "kernel": None})
            for k in kernels:
                rows.append({**base, "kernel": k.get("name"), **(k.get("figures") or {})})
        return rows

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.records())

    def grid(self, figure: str | None = None, kernel_filter: str | None = None) -> list[dict[str, Any]]:
        """The heatmap as records: one dict per toolchain with ``toolchain`` and one key per column
        (``sm_100a hdim=128``), the largest value of ``figure`` over the matching kernels (None
        where the cell failed or no kernel matched)."""
        from cutediff_tui.core.sweep import grid

        g = grid(self.data, figure, kernel_filter)
        return [{"toolchain": row, **dict(zip(g.cols, g.values[r]))} for r, row in enumerate(g.rows)]

    def html(self) -> str:
        """The heatmap as one self-contained HTML page (``cutediff sweep --html``)."""
        from cutediff_tui.core.report.sweep_html import sweep_html

        return sweep_html(self.data)


class BisectResult:
    """The first version where a metric turns true (``cutediff bisect --json``)."""

    def __init__(self, data: dict[str, Any], source: Path | None = None) -> None:
        self.data = data
        self.source = source

    def __repr__(self) -> str:
        return f"<cutediff.BisectResult first bad {self.first_bad!r}, last good {self.last_good!r}>"

    @property
    def first_bad(self) -> str | None:
        """The first bad version; None when untestable versions leave several candidates."""
        return self.data.get("first_bad")

    @property
    def last_good(self) -> str | None:
        return self.data.get("last_good")

    @property
    def candidates(self) -> list[str]:
        """The versions that may be the first bad one (one, unless some could not be tested)."""
        return [str(v) for v in self.data.get("first_bad_candidates") or ([self.first_bad] if self.first_bad else [])]

    def records(self) -> list[dict[str, Any]]:
        """One dict per version listed: ``version``, and for those built ``order``, ``verdict``,
        ``why``, ``seconds``, ``from_cache`` (``verdict`` None: not built)."""
        tried = {s.get("version"): s for s in self.data.get("steps") or [] if isinstance(s, Mapping)}
        rows = []
        for v in self.data.get("versions") or []:
            s = tried.get(v) or {}
            rows.append(
                {
                    "version": v,
                    "order": s.get("order"),
                    "verdict": s.get("verdict"),
                    "why": s.get("why"),
                    "seconds": s.get("seconds"),
                    "from_cache": s.get("from_cache"),
                }
            )
        return rows

    def to_pandas(self) -> pandas.DataFrame:
        return dataframe(self.records())


def read_document(path: Path, schema: str, what: str, made_by: str) -> dict[str, Any]:
    """A sweep or bisect JSON document from ``path``, refused in one sentence when it is not one."""
    from cutediff_tui.core.files import read_bounded

    try:
        data = json.loads(read_bounded(path))
    except FileNotFoundError:
        raise CutediffError(f"{path} does not exist.", f"Give a {what} saved with {made_by}.") from None
    except (ValueError, RecursionError):
        raise CutediffError(f"{path} is not JSON.", f"Give a {what} saved with {made_by}.") from None
    if not isinstance(data, dict) or data.get("schema") != schema:
        found = data.get("schema") if isinstance(data, dict) else None
        raise CutediffError(
            f"{path} is not a {what} (its schema is {found!r}, not {schema!r}).",
            f"Give a {what} saved with {made_by}.",
        )
    return data


def run_check(
    comparison: dict[str, Any],
    *,
    max_spill_bytes: int | None = None,
    max_register_delta: int | None = None,
    max_stack_delta: int | None = None,
    max_slowdown: float | None = None,
    kernel_filter: str | None = None,
    max: Mapping[str, float] | None = None,
    max_delta: Mapping[str, float] | None = None,
    allow_missing: bool = False,
) -> CheckReport:
    """``cutediff check``'s limits on one comparison document (see :func:`cutediff.check`)."""
    from cutediff_tui.core.report import build_limits, check_comparison

    limits = build_limits(
        max_spill_bytes=max_spill_bytes,
        max_register_delta=max_register_delta,
        max_stack_delta=max_stack_delta,
        max_slowdown=max_slowdown,
        kernel_filter=kernel_filter,
        max_figures=max or {},
        max_deltas=max_delta or {},
        allow_missing=allow_missing,
        options=("max", "max_delta"),
    )
    return CheckReport(check_comparison(comparison, limits))
