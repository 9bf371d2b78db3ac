"""The CI gate: limits on side B's resources (and bench timings) checked per kernel.

``check_comparison`` turns a comparison and :class:`Limits` into one :class:`CheckOutcome` per
kernel × limit. Exit codes: 0 within limits, 1 when a limit broke, 2 when something could not be
checked (a side failed to compile, a kernel is missing on B, a bad filter).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import CutediffError
from ..model.figures import Figure, by_name, figures_for, unit_symbol
from ..model.kernel_filter import check_kernel_filter, compile_filter, matches, no_match_sentence
from . import model as M

PASS, FAIL, SKIP, ERROR = "pass", "fail", "skip", "error"


@dataclass(frozen=True)
class Limits:
    """What ``cutediff check`` enforces; None leaves a limit out.

    Attributes:
        max_spill_bytes: most spill-store and most spill-load bytes side B may have.
        max_register_delta: most registers B may add over A (B − A).
        max_stack_delta: most stack-frame bytes B may add over A (B − A).
        max_slowdown_pct: most percent B may be slower than A per bench shape (B/A median ratio).
        kernel_filter: regular expression on kernel names (or symbols); others are not checked.
        max_figures: ``(figure, limit)``: most B's value of any registry figure may be (``--max``).
        max_deltas: ``(figure, limit)``: most B − A of any registry figure may be (``--max-delta``).
        allow_missing: skip (instead of fail) a limit whose figure is missing, null or invalid.
    """

    max_spill_bytes: int | None = None
    max_register_delta: int | None = None
    max_stack_delta: int | None = None
    max_slowdown_pct: float | None = None
    kernel_filter: str | None = None
    max_figures: tuple[tuple[str, float], ...] = ()
    max_deltas: tuple[tuple[str, float], ...] = ()
    allow_missing: bool = False
    """A limit whose figure is missing, null or invalid on either side is skipped instead of failed."""

    def any(self) -> bool:
        return bool(self.max_figures or self.max_deltas) or any(
            v is not None
            for v in (self.max_spill_bytes, self.max_register_delta, self.max_stack_delta, self.max_slowdown_pct)
        )


def figure_limit(text: str, option: str = "--max") -> tuple[str, float]:
    """``"registers=168"`` → ``("registers", 168)``, checked against the figure registry."""
    name, sep, value = (text or "").partition("=")
    name = name.strip()
    known = [f.name for f in figures_for("metric")]
    if not sep:
        raise CutediffError(f"{option} {text!r} is not NAME=LIMIT.", f"Write e.g. {option} registers=168.")
    if by_name(name) is None or name not in known:
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"Did you mean {' or '.join(close)}?" if close else "Figures: " + ", ".join(known) + "."
        raise CutediffError(f"{option} names {name!r}, which is not a figure cutediff measures.", hint)
    try:
        limit = float(value)
    except ValueError:
        raise CutediffError(
            f"{option} {text!r} has a limit that is not a number.", f"Write e.g. {option} {name}=0."
        ) from None
    return name, (int(limit) if limit.is_integer() else limit)


def build_limits(
    *,
    max_spill_bytes: int | None = None,
    max_register_delta: int | None = None,
    max_stack_delta: int | None = None,
    max_slowdown: float | None = None,
    kernel_filter: str | None = None,
    max_figures: Mapping[str, float] | Iterable[str] = (),
    max_deltas: Mapping[str, float] | Iterable[str] = (),
    allow_missing: bool = False,
    options: tuple[str, str] = ("--max", "--max-delta"),
) -> Limits:
    """The :class:`Limits` of ``cutediff check`` and ``cutediff.check``, from their options:
    ``max_figures``/``max_deltas`` as ``"FIGURE=N"`` texts (the CLI) or a ``{figure: N}`` mapping
    (the API), each checked against the figure registry; ``options`` names them in error
    sentences. A ``kernel_filter`` that is not a regular expression is refused here."""
    check_kernel_filter(kernel_filter)

    def parse(given: Mapping[str, float] | Iterable[str], option: str) -> tuple[tuple[str, float], ...]:
        texts = [f"{k}={v}" for k, v in given.items()] if isinstance(given, Mapping) else list(given)
        return tuple(figure_limit(t, option) for t in texts)

    return Limits(
        max_spill_bytes,
        max_register_delta,
        max_stack_delta,
        max_slowdown,
        kernel_filter,
        max_figures=parse(max_figures, options[0]),
        max_deltas=parse(max_deltas, options[1]),
        allow_missing=allow_missing,
    )


@dataclass
class CheckOutcome:
    """One kernel × limit: ``status`` is pass, fail, skip or error; ``message`` one sentence."""

    kernel: str
    limit: str
    status: str
    message: str
    value: float | None = None
    threshold: float | None = None


@dataclass
class CheckResult:
    """Every outcome of a check, plus notes that are not tied to a limit."""

    outcomes: list[CheckOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    title: str = ""

    @property
    def failures(self) -> list[CheckOutcome]:
        return [o for o in self.outcomes if o.status == FAIL]

    @property
    def errors(self) -> list[CheckOutcome]:
        return [o for o in self.outcomes if o.status == ERROR]

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.failures else 0

    def summary(self) -> str:
        n = len(self.outcomes)
        if self.errors:
            return f"cutediff check: {len(self.errors)} check(s) could not run ({self.errors[0].message})"
        fails = self.failures
        if fails:
            kernels = sorted({o.kernel for o in fails})
            return (
                f"cutediff check: {len(fails)} limit(s) broken in {len(kernels)} kernel(s) "
                f"({', '.join(kernels)}); {n - len(fails)} of {n} check(s) passed or skipped"
            )
        passed = sum(1 for o in self.outcomes if o.status == PASS)
        skipped = n - passed
        return f"cutediff check: within limits ({passed} check(s) passed" + (
            f", {skipped} skipped)" if skipped else ")"
        )


def _bytes(v: object) -> str:
    return f"{v} B" if v is not None else "-"


def _unchecked(name: str, limit: str, why: str, allow_missing: bool) -> CheckOutcome:
    """A limit that cannot be checked fails (the gate fails closed) unless --allow-missing."""
    if allow_missing:
        return CheckOutcome(name, limit, SKIP, f"{why} (skipped: --allow-missing)")
    return CheckOutcome(name, limit, FAIL, f"{why}, so the limit cannot be checked (pass --allow-missing to skip it)")


def _checked_value(m: dict, fig: Figure) -> tuple[float | None, str | None]:
    """``fig``'s value in ``m``, or None and why it cannot be used (missing, null, not a count)."""
    raw = m.get(fig.name)
    v = fig.value(m)
    if v is None:
        return None, "not reported" if fig.name in m else "missing"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None, f"invalid ({(raw if raw is not None else v)!r:.40})"
    return v, None


def _spill(name: str, b: dict, limit: int, allow_missing: bool = False) -> CheckOutcome:
    figs = (_figure("spill_store_bytes"), _figure("spill_load_bytes"))
    (st, why_st), (ld, why_ld) = (_checked_value(b, f) for f in figs)
    words = (figs[0].word, figs[1].word)
    if st is None or ld is None:
        which = words[0] if st is None else words[1]
        return _unchecked(name, "max-spill-bytes", f"{which} on B {why_st or why_ld}", allow_missing)
    over = [f"{what} {v} B" for what, v in zip(words, (st, ld)) if v > limit]
    worst = max(st, ld)
    if over:
        msg = f"{' and '.join(over)} on B exceed --max-spill-bytes {limit}"
        return CheckOutcome(name, "max-spill-bytes", FAIL, msg, worst, limit)
    return CheckOutcome(
        name, "max-spill-bytes", PASS, f"{words[0]} {st} B, {words[1]} {ld} B on B (limit {limit} B)", worst, limit
    )


def _delta(
    name: str, a: dict, b: dict, fig: Figure, option: str, limit: float, lim: str = "", allow_missing: bool = False
) -> CheckOutcome:
    """B − A of ``fig`` against ``limit``; ``option`` is how the limit was given (``--max-stack-delta``)."""
    lim = lim or option.removeprefix("--")
    given = f"{option}={limit}" if option.startswith("--max-delta ") else f"{option} {limit}"
    what, unit = fig.word, unit_symbol(fig.unit)
    if not a:
        return _unchecked(name, lim, f"no kernel {name} on side A to compare {what} with", allow_missing)
    (va, why_a), (vb, why_b) = _checked_value(a, fig), _checked_value(b, fig)
    if va is None or vb is None:
        side = "A" if va is None else "B"
        return _unchecked(name, lim, f"{what} on side {side} {why_a or why_b}", allow_missing)
    d = vb - va
    u = f" {unit}" if unit else ""
    text = f"{what} {va} → {vb}{u} ({_signed(d)}"
    if d > limit:
        return CheckOutcome(name, lim, FAIL, f"{text}) exceeds {given}", d, limit)
    return CheckOutcome(name, lim, PASS, f"{text}, limit {_signed(limit)})", d, limit)


def _signed(v: float) -> str:
    return f"{v:+d}" if isinstance(v, int) else f"{v:+g}"


def _max(name: str, b: dict, fig: Figure, limit: float, allow_missing: bool = False) -> CheckOutcome:
    lim = f"max {fig.name}"
    vb, why = _checked_value(b, fig)
    if vb is None:
        return _unchecked(name, lim, f"{fig.word} on side B {why}", allow_missing)
    u = f" {unit_symbol(fig.unit)}" if fig.unit else ""
    if vb > limit:
        return CheckOutcome(name, lim, FAIL, f"{fig.word} {vb}{u} on B exceeds --max {fig.name}={limit}", vb, limit)
    return CheckOutcome(name, lim, PASS, f"{fig.word} {vb}{u} on B (limit {limit}{u})", vb, limit)


def _slowdown(c: dict, limit: float, allow_missing: bool = False) -> list[CheckOutcome]:
    shapes = M.bench_shapes(c)
    if not shapes:
        return [
            _unchecked(
                "bench", "max-slowdown", "slowdown not measured: the comparison holds no benchmark", allow_missing
            )
        ]
    out = []
    for row in shapes:
        label = M.shape_label(row.get("shape"))
        name = f"bench {label}"
        ratio = M.bench_ratio(row)
        if ratio is None or not math.isfinite(ratio) or ratio <= 0:
            out.append(_unchecked(name, "max-slowdown", "no valid B/A timing ratio for this shape", allow_missing))
            continue
        pct = (ratio - 1) * 100
        ci = M.ci_text(row)
        extra = f", 95% CI of B/A {ci}" if ci != "-" else ""
        text = f"B/A {ratio:.4f} ({pct:+.2f}%{extra})"
        if pct > limit:
            out.append(
                CheckOutcome(
                    name,
                    "max-slowdown",
                    FAIL,
                    f"B is {pct:.2f}% slower than A, over --max-slowdown {limit:g}%: {text}",
                    round(pct, 4),
                    limit,
                )
            )
        else:
            out.append(CheckOutcome(name, "max-slowdown", PASS, f"{text}, limit +{limit:g}%", round(pct, 4), limit))
    return out


def _figure(name: str) -> Figure:
    fig = by_name(name)
    if fig is None:
        raise CutediffError(
            f"The check names {name!r}, which is not a figure cutediff measures.",
            "Pick one of: " + ", ".join(f.name for f in figures_for("metric")) + ".",
        )
    return fig


def check_comparison(comparison: dict, limits: Limits) -> CheckResult:
    """Check every kernel (matching the filter) of a comparison against the limits."""
    c = comparison
    res = CheckResult(title=f"{M.side_label(c, 'a')} vs {M.side_label(c, 'b')}")
    for s, err in M.side_errors(c):
        res.outcomes.append(
            CheckOutcome(f"side {s.upper()}", "compile", ERROR, f"side {s.upper()} ({M.side_name(c, s)}) failed: {err}")
        )
    if res.errors:
        return res
    ks = M.kernels(c)
    if not ks:
        res.outcomes.append(
            CheckOutcome("comparison", "kernels", ERROR, "the comparison holds no kernel, so nothing can be checked")
        )
        return res
    if limits.kernel_filter:
        try:
            rx = compile_filter(limits.kernel_filter)
        except CutediffError as exc:
            res.outcomes.append(CheckOutcome("comparison", "kernel-filter", ERROR, str(exc).rstrip(".")))
            return res
        chosen = [k for k in ks if matches(rx, k)]
        if not chosen:
            res.outcomes.append(
                CheckOutcome("comparison", "kernel-filter", ERROR, no_match_sentence(limits.kernel_filter, ks))
            )
            return res
        skipped = len(ks) - len(chosen)
        if skipped:
            res.notes.append(f"{skipped} kernel(s) left out by --kernel-filter")
        ks = chosen
    if not limits.any():
        res.notes.append("no limits given: only checked that both sides compiled")
    for k in ks:
        name = str(k.get("name") or "kernel")
        a, b = M.metrics(k, "a"), M.metrics(k, "b")
        if not b:
            if limits.any():
                res.outcomes.append(
                    CheckOutcome(
                        name,
                        "present",
                        ERROR,
                        f"kernel {name} is missing on side B, so its limits cannot be checked "
                        "(leave it out with --kernel-filter)",
                    )
                )
            continue
        am = limits.allow_missing
        if limits.max_spill_bytes is not None:
            res.outcomes.append(_spill(name, b, limits.max_spill_bytes, am))
        if limits.max_register_delta is not None:
            res.outcomes.append(
                _delta(name, a, b, _figure("registers"), "--max-register-delta", limits.max_register_delta, "", am)
            )
        if limits.max_stack_delta is not None:
            res.outcomes.append(
                _delta(name, a, b, _figure("stack_bytes"), "--max-stack-delta", limits.max_stack_delta, "", am)
            )
        for fig_name, limit in limits.max_figures:
            res.outcomes.append(_max(name, b, _figure(fig_name), limit, am))
        for fig_name, limit in limits.max_deltas:
            fig = _figure(fig_name)
            res.outcomes.append(_delta(name, a, b, fig, f"--max-delta {fig.name}", limit, f"max-delta {fig.name}", am))
    if limits.max_slowdown_pct is not None:
        res.outcomes.extend(_slowdown(c, limits.max_slowdown_pct, limits.allow_missing))
    return res
