"""Statistics for interleaved A/B timings: medians, IQR, bootstrap ratio interval, verdict."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from statistics import median

#: Relative change under which two medians count as the same (nvbench-compare style).
DEFAULT_TOLERANCE = 0.01


def quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted data."""
    if not sorted_xs:
        raise ValueError("no samples")
    pos = (len(sorted_xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


@dataclass
class Summary:
    """Median, interquartile range and count of one side's samples (milliseconds)."""

    median_ms: float
    iqr_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    n: int

    def to_json(self) -> dict:
        return asdict(self)


def summarize(samples: list[float]) -> Summary:
    xs = sorted(samples)
    q1, q3 = quantile(xs, 0.25), quantile(xs, 0.75)
    return Summary(median_ms=quantile(xs, 0.5), iqr_ms=q3 - q1, q1_ms=q1, q3_ms=q3, min_ms=xs[0], n=len(xs))


def ratio_interval(
    a: list[float], b: list[float], *, iters: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """B/A ratio of medians and its bootstrap interval (resampling each side independently)."""
    if not a or not b:
        raise ValueError("both sides need samples")
    rng = random.Random(seed)
    point = median(b) / median(a)
    na, nb = len(a), len(b)
    ratios = []
    for _ in range(iters):
        ra = median(a[rng.randrange(na)] for _ in range(na))
        rb = median(b[rng.randrange(nb)] for _ in range(nb))
        ratios.append(rb / ra)
    ratios.sort()
    alpha = (1 - level) / 2
    return point, quantile(ratios, alpha), quantile(ratios, 1 - alpha)


def round_units(n_rounds: int, block: int = 2) -> list[list[int]]:
    """The rounds as resampling units: consecutive blocks of ``block`` rounds when there are at
    least three blocks, else one round each.

    The runner alternates the order inside a round (A then B, then B then A), and on the H200 the
    side that runs second in a round was ~2 % slower on the 25 ms FA4 case (A/A control, same
    build on both sides: per-round B/A 1.035 0.964 1.019 0.985 …). A block of two rounds holds both
    orders, so that order effect cancels inside a unit instead of widening the interval."""
    if block > 1 and n_rounds >= 3 * block:
        return [list(range(i, min(i + block, n_rounds))) for i in range(0, n_rounds, block)]
    return [[i] for i in range(n_rounds)]


def round_ratio_draws(
    a_rounds: list[list[float]],
    b_rounds: list[list[float]],
    *,
    iters: int = 1000,
    seed: int = 0,
    block: int = 2,
) -> tuple[float, list[float]]:
    """B/A ratio of medians and ``iters`` bootstrap draws of it (unsorted) that keep rounds paired:
    each draw picks units of rounds (:func:`round_units`) with replacement, the same for A and B,
    then samples with replacement inside each picked round."""
    n = min(len(a_rounds), len(b_rounds))
    units = [[r for r in u if a_rounds[r] and b_rounds[r]] for u in round_units(n, block)]
    units = [u for u in units if u]
    if not units:
        raise ValueError("both sides need samples")
    rng = random.Random(seed)
    point = median([x for u in units for r in u for x in b_rounds[r]]) / median(
        [x for u in units for r in u for x in a_rounds[r]]
    )
    draws = []
    for _ in range(iters):
        pa: list[float] = []
        pb: list[float] = []
        for _ in range(len(units)):
            for r in units[rng.randrange(len(units))]:
                ra, rb = a_rounds[r], b_rounds[r]
                pa.extend(ra[rng.randrange(len(ra))] for _ in ra)
                pb.extend(rb[rng.randrange(len(rb))] for _ in rb)
        draws.append(median(pb) / median(pa))
    return point, draws


def round_ratio_interval(
    a_rounds: list[list[float]],
    b_rounds: list[list[float]],
    *,
    iters: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    block: int = 2,
) -> tuple[float, float, float]:
    """B/A ratio of medians and a two-stage bootstrap interval that keeps the rounds paired.

    Rounds of A and B alternate in time, so a change of GPU state (clocks, temperature, another
    process) shifts both sides of a round alike. Each bootstrap draw picks rounds with replacement,
    the same rounds for A and B, then samples with replacement inside each picked round: the
    interval holds the spread between rounds once (not once per side, as resampling the pooled
    samples of each side independently does) and the spread inside rounds. Rounds are drawn in
    order-balanced blocks (:func:`round_units`)."""
    point, draws = round_ratio_draws(a_rounds, b_rounds, iters=iters, seed=seed, block=block)
    return (point, *interval_of(draws, level))


def interval_of(draws: list[float], level: float = 0.95) -> tuple[float, float]:
    xs = sorted(draws)
    alpha = (1 - level) / 2
    return quantile(xs, alpha), quantile(xs, 1 - alpha)


def verdict(ci_low: float, ci_high: float, tolerance: float = DEFAULT_TOLERANCE) -> str:
    """SLOWER / FASTER when the whole interval lies beyond the tolerance, SAME when it lies inside
    it, UNSURE otherwise (the interval straddles a tolerance edge: take more samples)."""
    if ci_low > 1 + tolerance:
        return "SLOWER"
    if ci_high < 1 - tolerance:
        return "FASTER"
    if ci_low >= 1 - tolerance and ci_high <= 1 + tolerance:
        return "SAME"
    return "UNSURE"


def compare_samples(
    a: list[float],
    b: list[float],
    tolerance: float = DEFAULT_TOLERANCE,
    rounds: tuple[list[int], list[int]] | None = None,
) -> dict:
    """Everything the table and the report show for one shape. ``rounds``: how many of ``a``'s and
    ``b``'s samples each round gave, in order; with three or more paired rounds the interval is the
    round-paired one (:func:`round_ratio_interval`), else the samples are resampled per side."""
    sa, sb = summarize(a), summarize(b)
    groups = (split_rounds(a, rounds[0]), split_rounds(b, rounds[1])) if rounds else None
    if groups and sum(1 for ra, rb in zip(*groups) if ra and rb) >= 3:
        ratio, lo, hi = round_ratio_interval(*groups, iters=1000)
        method = "rounds"
    else:
        ratio, lo, hi = ratio_interval(a, b, iters=1000 if len(a) + len(b) > 400 else 2000)
        method = "samples"
    return {
        "a": sa.to_json(),
        "b": sb.to_json(),
        "ratio": ratio,
        "ci_low": lo,
        "ci_high": hi,
        "verdict": verdict(lo, hi, tolerance),
        "tolerance": tolerance,
        "interval": method,
    }


def split_rounds(xs: list[float], sizes: list[int]) -> list[list[float]]:
    """``xs`` cut into consecutive rounds of ``sizes`` samples (a round of 0 samples stays, empty,
    so rounds keep their index; samples past the sizes are dropped)."""
    out: list[list[float]] = []
    i = 0
    for n in sizes:
        out.append(xs[i : i + n] if n > 0 else [])
        i += max(n, 0)
    return out
