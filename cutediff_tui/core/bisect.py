"""Bisect published DSL versions for the first one where a metric turns true.

The versions between ``good`` and ``bad`` come from the package index (final releases; pre-releases
with ``include_pre``) or from a file. Each step is a :class:`~.probe.Probe` (plain build, cached
like any other), judged by a predicate (:mod:`.metric`) on the kernels a regular expression
selects. A version that cannot be built or imported, even with the worker's known shims, is
*untestable*: the search steps around it (the nearest testable version to the midpoint) and, when
only untestable versions separate the last good from the first bad, says so instead of guessing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .errors import CutediffError
from .events import Progress
from .events import noop as _noop
from .metric import Metric
from .probe import Probe, run_probe, select_kernels

SCHEMA = "cutediff.bisect/1"


def _version(v: str) -> Version | None:
    try:
        return Version(v)
    except InvalidVersion:
        return None


def candidate_versions(good: str, bad: str, versions: list[str], *, include_pre: bool = False) -> list[str]:
    """``good``, the versions strictly between, and ``bad``, in version order."""
    g, b = _version(good), _version(bad)
    if g is None or b is None:
        which = good if g is None else bad
        raise CutediffError(
            f"{which!r} is not a version number.", "Give published versions, e.g. --good 4.5.1 --bad 4.8.0."
        )
    if not g < b:
        raise CutediffError(
            f"--good {good} is not older than --bad {bad}.",
            "Bisect looks for the first bad version after a good one: swap them.",
        )
    parsed = {v: text for text in reversed(versions) if (v := _version(text)) is not None}  # first spelling wins
    for name, v, given in (("--good", g, good), ("--bad", b, bad)):
        if v not in parsed:
            from .toolchain import nearby_versions

            near = nearby_versions(given, versions)
            raise CutediffError(
                f"{name} {given} is not among the versions to bisect.",
                f"Versions near it: {', '.join(near)}."
                if near
                else "The list is empty: give --versions FILE (one version per line) to bisect offline.",
            )
    between = sorted(
        (v, text)
        for v, text in parsed.items()
        if g < v < b and (include_pre or not (v.is_prerelease or v.is_devrelease))
    )
    return [parsed[g], *(t for _, t in between), parsed[b]]


def read_versions_file(path: Path) -> list[str]:
    """One version per line (``#`` comments and blank lines ignored), for bisecting offline."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise CutediffError(
            f"The versions file {path} cannot be read ({exc.strerror}).",
            "Give a text file with one DSL version per line.",
        ) from None
    out = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    out = [v for v in out if v]
    bad = [v for v in out if _version(v) is None]
    if bad:
        raise CutediffError(
            f"The versions file {path} holds {bad[0]!r}, which is not a version number.",
            "Write one version per line, e.g. 4.6.3.",
        )
    if not out:
        raise CutediffError(f"The versions file {path} lists no versions.", "Write one DSL version per line.")
    return out


@dataclass
class Step:
    version: str
    verdict: str  # good | bad | untestable
    why: str  # the figures that decided, or the reason it could not be tested
    seconds: float
    from_cache: bool
    shims: list[str]
    order: int  # 1-based order in which it was tried

    def to_json(self) -> dict:
        return dict(self.__dict__)


def judge(result: dict, metric: Metric, kernel_filter: str | None) -> tuple[str, str]:
    """``(verdict, why)`` for one probe result."""
    if result.get("status") != "ok":
        return "untestable", result.get("why") or "it could not be built"
    kernels = select_kernels(result, kernel_filter)
    if not kernels:
        names = ", ".join(k["name"] for k in result.get("kernels", [])) or "none"
        return "untestable", f"no kernel matches --kernel-filter {kernel_filter!r} (kernels: {names})"
    try:
        hits = [k for k in kernels if metric.holds(k["figures"])]
        shown = "; ".join(f"{k['name']}: {metric.shown(k['figures'])}" for k in (hits or kernels))
    except CutediffError as exc:  # a figure this version's analysis did not give
        return "untestable", str(exc)
    return ("bad" if hits else "good"), shown


@dataclass
class BisectPlan:
    versions: list[str]  # good first, bad last, in version order
    base: Probe  # recipe, params, profile, pins; its side is replaced per version
    metric: Metric
    kernel_filter: str | None = None
    command: str = ""
    compare_command: str = ""  # compare LAST_GOOD FIRST_BAD with the same options (filled in by the caller)


def run_bisect(plan: BisectPlan, progress: Progress = _noop, probe_fn: Callable[[Probe], dict] = run_probe) -> dict:
    """Search ``plan.versions`` for the first version whose kernels satisfy the metric."""
    t0 = time.monotonic()
    vs = plan.versions
    steps: dict[int, Step] = {}

    def test(i: int) -> str:
        progress(f"testing {vs[i]} ({len(steps) + 1}, {_remaining(lo, hi)} versions still open)")
        res = probe_fn(replace(plan.base, side=vs[i]))
        verdict, why = judge(res, plan.metric, plan.kernel_filter)
        steps[i] = Step(
            vs[i],
            verdict,
            why,
            float(res.get("seconds") or 0.0),
            bool(res.get("from_cache")),
            list(res.get("shims") or []),
            len(steps) + 1,
        )
        progress(f"{vs[i]}: {verdict} ({why})" + (" [cached build]" if res.get("from_cache") else ""))
        return verdict

    lo, hi = 0, len(vs) - 1
    i: int | None
    for i, expected in ((lo, "good"), (hi, "bad")):
        got = test(i)
        if got == expected:
            continue
        s = steps[i]
        if got == "untestable":
            raise CutediffError(
                f"The {expected} end {vs[i]} cannot be tested: {s.why.rstrip('.')}.",
                "Pick a version that builds as --good/--bad (or pin packages that work with it).",
            )
        raise CutediffError(
            f"The metric {plan.metric.text!r} is {'true' if got == 'bad' else 'false'} at --{expected} {vs[i]} ({s.why}), so there is nothing to bisect.",
            "Pick a --good version where it is false and a --bad one where it is true."
            if expected == "good"
            else "Pick a --bad version where the metric is true, or check the metric and --kernel-filter.",
        )
    while True:
        i = _next_probe(lo, hi, steps)
        if i is None:
            break
        verdict = test(i)
        if verdict == "bad":
            hi = i
        elif verdict == "good":
            lo = i
    untested_between = [vs[i] for i in range(lo + 1, hi)]
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "command": plan.command,
        "metric": plan.metric.text,
        "kernel_filter": plan.kernel_filter,
        "recipe": plan.base.recipe.name,
        "arch": plan.base.profile.arch,
        "profile": plan.base.profile.to_json(),
        "params": plan.base.params,
        "pins": list(plan.base.pins),
        "cuda": plan.base.cuda,
        "versions": vs,
        "steps": [s.to_json() for s in sorted(steps.values(), key=lambda s: s.order)],
        "last_good": vs[lo],
        "first_bad": vs[hi] if not untested_between else None,
        "first_bad_candidates": [*untested_between, vs[hi]],
        "builds": len(steps),
        "bound": bisect_bound(len(vs)),
        "compare_command": plan.compare_command,
        "timing": {
            "wall_seconds": round(time.monotonic() - t0, 3),
            "cached_builds": sum(1 for s in steps.values() if s.from_cache),
        },
    }
    return result


def bisect_bound(n_versions: int) -> int:
    """Builds a bisect over ``n_versions`` needs without untestable versions: both ends + ⌈log2(n-1)⌉."""
    return 2 + (math.ceil(math.log2(n_versions - 1)) if n_versions > 2 else 0)


def _remaining(lo: int, hi: int) -> int:
    return max(0, hi - lo - 1)


def _next_probe(lo: int, hi: int, steps: dict[int, Step]) -> int | None:
    """The untried version nearest the middle of (lo, hi); None when only untestable ones remain."""
    open_ = [i for i in range(lo + 1, hi) if i not in steps]
    if not open_:
        return None
    mid = (lo + hi) / 2
    return min(open_, key=lambda i: (abs(i - mid), i))


def pair_versions(result: dict) -> tuple[str, str]:
    """The last good version and the first bad one (the last candidate when untestable versions
    separate them)."""
    return result["last_good"], result["first_bad_candidates"][-1]


def pair_options(result: dict, *, lineinfo: bool = True):
    """Compare options for a bisect result's last good vs first bad version (the same recipe,
    parameters, target and pins), to open the pair as a comparison."""
    from .compare import CompareOptions
    from .gpu import GpuProfile
    from .recipes import get_recipe
    from .toolchain import parse_side

    if result.get("schema") != SCHEMA:
        raise CutediffError("This is not a cutediff bisect result.", "Make one with cutediff bisect --json FILE.")
    missing = [k for k in ("last_good", "first_bad_candidates", "recipe", "params", "profile") if not result.get(k)]
    if missing:
        raise CutediffError(
            f"The bisect result lacks {', '.join(missing)}, so its versions cannot be compared.",
            "Run the bisect again with --json FILE.",
        )
    a, b = (parse_side(v, result.get("pins") or (), result.get("cuda")) for v in pair_versions(result))
    specs = (a, b)
    return CompareOptions(
        specs=specs,
        recipe=get_recipe(result["recipe"]),
        params=dict(result["params"]),
        profile=GpuProfile(**result["profile"]),
        lineinfo=lineinfo,
        command=result.get("compare_command", ""),
    )
