"""Bisect for the first version where a metric turns true: DSL releases, another package's
releases, or the commits of a local checkout.

The versions between ``good`` and ``bad`` come from the package index (final releases; pre-releases
with ``include_pre``, or when an endpoint is one) or from a file; with ``--over PACKAGE`` they are
that package's releases with the DSL and the other pins fixed; with ``--over git:PATH`` they are
the commits between two revisions that touch the kernel source (``git rev-list``). Each step is a
:class:`~.probe.Probe` (plain build, cached like any other), judged by a predicate (:mod:`.metric`)
on the kernels a regular expression selects. A version that cannot be built or imported, even with
the worker's known shims, is *untestable*: the search steps around it (the nearest testable version
to the midpoint) and, when only untestable versions separate the last good from the first bad, says
so instead of guessing. With k workers, each round probes k versions that cut the open range into
k + 1 parts, so n versions take about ⌈log_{k+1} n⌉ rounds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .errors import CutediffError
from .events import BisectRound, BisectStep, Progress
from .events import noop as _noop
from .metric import Metric
from .model.kernel_filter import no_match_sentence
from .probe import Probe, run_probe, select_kernels

SCHEMA = "cutediff.bisect/1"


def _version(v: str) -> Version | None:
    try:
        return Version(v)
    except InvalidVersion:
        return None


def candidate_versions(
    good: str, bad: str, versions: list[str], *, include_pre: bool = False, package: str = "the DSL"
) -> list[str]:
    """``good``, the versions strictly between, and ``bad``, in version order (pre-releases too
    when ``include_pre`` or when either endpoint is one)."""
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
                f"{name} {given} is not among the versions of {package} to bisect.",
                f"Versions near it: {', '.join(near)}."
                if near
                else "The list is empty: give --versions FILE (one version per line) to bisect offline.",
            )
    include_pre = include_pre or g.is_prerelease or b.is_prerelease
    between = sorted(
        (v, text)
        for v, text in parsed.items()
        if g < v < b and (include_pre or not (v.is_prerelease or v.is_devrelease))
    )
    if not between and package != "the DSL":
        raise CutediffError(
            f"{package} publishes no release between {good} and {bad}, so there is nothing to bisect.",
            f"{bad} is the first bad release if {good} is good; compare them directly with cutediff compare.",
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
    tries: int = 1  # 2 when a transient failure (:func:`transient`) was tried again

    def to_json(self) -> dict:
        return dict(self.__dict__)


def transient(result: dict) -> bool:
    """Whether a failed probe may pass on another try: its environment could not be made (the
    package index or the network) or its compile worker was killed or died."""
    if result.get("status") == "ok":
        return False
    why = str(result.get("why") or "")
    return result.get("stage") == "environment" or "was killed" in why or "worker died" in why


def judge(result: dict, metric: Metric, kernel_filter: str | None) -> tuple[str, str]:
    """``(verdict, why)`` for one probe result."""
    if result.get("status") != "ok":
        return "untestable", result.get("why") or "it could not be built"
    kernels = select_kernels(result, kernel_filter)
    if not kernels:
        if not kernel_filter or not result.get("kernels"):
            return "untestable", "the build holds no kernel"
        return "untestable", no_match_sentence(kernel_filter, result["kernels"])
    try:
        hits = [k for k in kernels if metric.holds(k["figures"])]
        shown = "; ".join(f"{k['name']}: {metric.shown(k['figures'])}" for k in (hits or kernels))
    except CutediffError as exc:  # a figure this version's analysis did not give
        return "untestable", str(exc)
    return ("bad" if hits else "good"), shown


@dataclass
class Over:
    """What a bisect walks when it is not DSL releases: one package's releases (``kind`` package)
    or the commits of a local checkout (``kind`` git), with ``toolchain`` (DSL version and other
    pins) held fixed."""

    kind: str  # "package" | "git"
    toolchain: str  # the fixed side, e.g. "4.8.0" or "4.8.0,quack-kernels==0.6.5"
    package: str | None = None  # the package whose releases are walked, or the one a checkout provides
    repo: str | None = None  # git: the checkout's root
    module_dir: str | None = None  # git: the package folder inside the checkout (flash_attn, quack)
    recipe_rel: str | None = None  # git: the recipe file, relative to the checkout root
    subjects: dict[str, str] = field(default_factory=dict)  # git: sha → first line of its message

    def shown(self, version: str) -> str:
        if self.kind == "git":
            return version[:10]
        return f"{self.package} {version}"

    def probe(self, base: Probe, version: str) -> Probe:
        if self.kind == "package":
            return replace(base, side=f"{self.toolchain},{self.package}=={version}")
        side = self.toolchain
        recipe = base.recipe
        if self.module_dir:
            root = export_tree(Path(self.repo or "."), version, self.module_dir)
            side = f"{side},{self.package}={root}"
        if self.recipe_rel:
            from .recipes.refs import file_recipe
            from .recipes.sources import materialize_git

            path = materialize_git(Path(self.repo or ".") / self.recipe_rel, version)
            recipe = file_recipe(path, base.recipe.function, name=f"{base.recipe.name} @ {version[:10]}")
        return replace(base, side=side, recipe=recipe)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "toolchain": self.toolchain,
            "package": self.package,
            "repo": self.repo,
            "subjects": self.subjects,
        }


def _git(args: list[str], cwd: Path) -> str:
    import subprocess

    try:
        proc = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise CutediffError("--over git:PATH needs git, and it is not installed.", "Install git.") from None
    if proc.returncode != 0:
        raise CutediffError(
            f"git {' '.join(args[:2])} failed in {cwd}: {(proc.stderr.strip().splitlines() or ['no output'])[-1]}.",
            "Check that the path is a git checkout and the revisions exist there.",
        )
    return proc.stdout


def git_versions(repo: Path, good: str, bad: str, paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """``good``, the commits after it up to ``bad`` that touch ``paths`` (oldest first), and ``bad``,
    as full hashes; and each commit's subject line."""
    shas = []
    for name, rev in (("--good", good), ("--bad", bad)):
        try:
            shas.append(_git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo).strip())
        except CutediffError:
            raise CutediffError(
                f"{name} {rev} is not a commit of {repo}.", "Give a commit, branch or tag of that checkout."
            ) from None
    g, b = shas
    import subprocess

    anc = subprocess.run(["git", "merge-base", "--is-ancestor", g, b], cwd=str(repo), capture_output=True)
    if anc.returncode != 0 or g == b:
        raise CutediffError(
            f"--good {good} is not an ancestor of --bad {bad} in {repo}, so there is no range of commits to walk.",
            "Give an older commit as --good and a later one on the same branch as --bad.",
        )
    touching = _git(["rev-list", "--reverse", "--ancestry-path", f"{g}..{b}", "--", *paths], repo).split()
    if not touching:
        raise CutediffError(
            f"No commit between {good} and {bad} touches {', '.join(paths)} in {repo}, so the kernel source is the same at both ends.",
            "Widen the range, or point --over git:PATH at the checkout that holds the kernel source.",
        )
    versions = [g, *touching] if touching[-1] == b else [g, *touching, b]
    subjects = {}
    for line in _git(["log", "--no-walk=unsorted", "--format=%H %s", *versions], repo).splitlines():
        sha, _, subject = line.partition(" ")
        subjects[sha] = subject[:80]
    return versions, subjects


def export_tree(repo: Path, sha: str, module_dir: str) -> Path:
    """The package folder ``module_dir`` as it is at ``sha``, written once under the cache
    (``<cache>/sources/git-<sha>/``); the folder to pin (it holds ``module_dir``)."""
    import io
    import os
    import shutil
    import subprocess
    import tarfile

    from .paths import cache_dir

    dest = cache_dir() / "sources" / f"git-{sha[:16]}"
    if (dest / module_dir).is_dir():
        return dest
    proc = subprocess.run(["git", "archive", "--format=tar", sha, module_dir], cwd=str(repo), capture_output=True)
    if proc.returncode != 0:
        raise CutediffError(
            f"{module_dir} cannot be read at commit {sha[:10]} of {repo}.", "Check that the commit has it."
        )
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(tmp, filter="data")
    try:
        os.replace(tmp, dest)
    except OSError:  # another process wrote it first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def git_over(path: Path, toolchain: str, recipe_path: Path | None) -> tuple[Over, list[str]]:
    """The :class:`Over` for ``--over git:PATH`` and the paths whose commits count."""
    from .toolchain import LOCAL_PACKAGES, local_import_root

    path = Path(path).expanduser().resolve()
    if not path.is_dir():
        raise CutediffError(f"--over git:{path} is not a folder.", "Give the path of a git checkout.")
    root = Path(_git(["rev-parse", "--show-toplevel"], path).strip()).resolve()
    over = Over(kind="git", toolchain=toolchain, repo=str(root))
    paths = []
    found = local_import_root(path)
    if found is not None and found[0].resolve() == root:
        over.package = LOCAL_PACKAGES[found[1]]
        over.module_dir = found[1]
        paths.append(found[1])
    if recipe_path is not None:
        try:
            over.recipe_rel = recipe_path.resolve().relative_to(root).as_posix()
            paths.append(over.recipe_rel)
        except ValueError:
            pass
    if not paths:
        raise CutediffError(
            f"The checkout {root} holds neither the recipe file nor a kernel package ({', '.join(LOCAL_PACKAGES)}).",
            "Point --over git:PATH at the repository of the recipe (--recipe FILE.py) or of flash-attention/quack.",
        )
    return over, paths


@dataclass
class BisectPlan:
    versions: list[str]  # good first, bad last, in version order
    base: Probe  # recipe, params, profile, pins; its side is replaced per version
    metric: Metric
    kernel_filter: str | None = None
    command: str = ""
    compare_command: str = ""  # compare LAST_GOOD FIRST_BAD with the same options (filled in by the caller)
    over: Over | None = None  # None: DSL versions
    jobs: int = 1  # probes per round (k-ary section); 1 is plain bisection

    def probe(self, version: str) -> Probe:
        """The probe that builds ``version`` (a DSL version, a package release or a commit)."""
        if self.over is None:
            return replace(self.base, side=version)
        return self.over.probe(self.base, version)


def run_bisect(
    plan: BisectPlan,
    progress: Progress = _noop,
    probe_fn: Callable[[Probe], dict] = run_probe,
    executor: Any = None,
) -> dict:
    """Search ``plan.versions`` for the first version whose kernels satisfy the metric.

    With ``executor`` (an object with ``map_unordered(probes)``, see :mod:`.executors`) and
    ``plan.jobs`` = k > 1, each round probes up to k versions at once."""
    t0 = time.monotonic()
    vs = plan.versions
    steps: dict[int, Step] = {}
    rounds = 0
    shown = plan.over.shown if plan.over is not None else (lambda v: v)

    def record(i: int, res: dict) -> str:
        verdict, why = judge(res, plan.metric, plan.kernel_filter)
        before = steps.get(i)
        steps[i] = Step(
            vs[i],
            verdict,
            why,
            float(res.get("seconds") or 0.0) + (before.seconds if before else 0.0),
            bool(res.get("from_cache")),
            list(res.get("shims") or []),
            before.order if before else len(steps) + 1,
            before.tries + 1 if before else 1,
        )
        progress(
            BisectStep(
                None,
                shown(vs[i]),
                verdict,
                why,
                bool(res.get("from_cache")),
                order=len(steps),
                bound=bisect_bound(len(vs), plan.jobs),
            )
        )
        return verdict

    def run(indices: list[int]) -> list[int]:
        """Probe ``indices``; those that failed in a way another try may not repeat."""
        probes = {id(p): (i, p) for i in indices for p in [plan.probe(vs[i])]}
        again = []
        if executor is None:
            done = ((i, probe_fn(p)) for i, p in probes.values())
        else:
            by_key = {p.key(): i for i, p in probes.values()}
            done = ((by_key[p.key()], res) for p, res in executor.map_unordered([p for _, p in probes.values()]))
        for i, res in done:
            if record(i, res) == "untestable" and transient(res):
                again.append(i)
        return again

    def test_all(indices: list[int]) -> None:
        nonlocal rounds
        rounds += 1
        progress(BisectRound(None, rounds, tuple(shown(vs[i]) for i in indices), _remaining(lo, hi)))
        again = run(indices)
        if again:  # once: a network hiccup or a killed worker is not an answer about the version
            run(again)

    lo, hi = 0, len(vs) - 1
    test_all([lo, hi] if executor is not None and plan.jobs > 1 else [lo])
    if hi not in steps:
        test_all([hi])
    i: int | None
    for i, expected in ((lo, "good"), (hi, "bad")):
        got = steps[i].verdict
        if got == expected:
            continue
        s = steps[i]
        if got == "untestable":
            raise CutediffError(
                f"The {expected} end {shown(vs[i])} cannot be tested: {s.why.rstrip('.')}.",
                "Pick a version that builds as --good/--bad (or pin packages that work with it).",
            )
        raise CutediffError(
            f"The metric {plan.metric.text!r} is {'true' if got == 'bad' else 'false'} at --{expected} {shown(vs[i])} ({s.why}), so there is nothing to bisect.",
            "Pick a --good version where it is false and a --bad one where it is true."
            if expected == "good"
            else "Pick a --bad version where the metric is true, or check the metric and --kernel-filter.",
        )
    while True:
        batch = next_probes(lo, hi, steps, max(1, plan.jobs))
        if not batch:
            break
        test_all(batch)
        bad = [i for i in range(lo + 1, hi) if i in steps and steps[i].verdict == "bad"]
        if bad:
            hi = min(bad)
        good = [i for i in range(lo + 1, hi) if i in steps and steps[i].verdict == "good"]
        if good:
            lo = max(good)
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
        "bound": bisect_bound(len(vs), plan.jobs),
        "rounds": rounds,
        "jobs": plan.jobs,
        "compare_command": plan.compare_command,
        "timing": {
            "wall_seconds": round(time.monotonic() - t0, 3),
            "cached_builds": sum(1 for s in steps.values() if s.from_cache),
        },
    }
    if plan.over is not None:
        result["over"] = plan.over.to_json()
        result["sides"] = {v: plan.probe(v).side for v in (vs[lo], vs[hi])} if plan.over.kind == "package" else {}
    return result


def bisect_bound(n_versions: int, jobs: int = 1) -> int:
    """Builds a bisect over ``n_versions`` needs without untestable versions: both ends + ⌈log2(n-1)⌉
    (with k = ``jobs`` probes per round: both ends + k per round, ⌈log_{k+1}(n-1)⌉ rounds)."""
    return 2 + jobs * bisect_rounds(n_versions, jobs)


def bisect_rounds(n_versions: int, jobs: int = 1) -> int:
    """Rounds of k = ``jobs`` probes between the ends: ⌈log_{k+1}(n - 1)⌉ (the ends not counted)."""
    if n_versions <= 2:
        return 0
    gaps, rounds = n_versions - 1, 0
    while gaps > 1:  # each round cuts the open gap into k + 1 parts
        gaps = math.ceil(gaps / (jobs + 1))
        rounds += 1
    return rounds


def _remaining(lo: int, hi: int) -> int:
    return max(0, hi - lo - 1)


def next_probes(lo: int, hi: int, steps: dict[int, Step], k: int) -> list[int]:
    """Up to ``k`` untried versions that cut (lo, hi) into k + 1 parts, nearest the cut points."""
    if k <= 1:
        one = _next_probe(lo, hi, steps)
        return [] if one is None else [one]
    open_ = [i for i in range(lo + 1, hi) if i not in steps]
    picked: list[int] = []
    for j in range(1, k + 1):
        left = [i for i in open_ if i not in picked]
        if not left:
            break
        cut = lo + (hi - lo) * j / (k + 1)
        picked.append(min(left, key=lambda i: (abs(i - cut), i)))
    return sorted(picked)


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
    over = result.get("over") or {}
    if over.get("kind") == "git":
        raise CutediffError(
            "A bisect over git commits cannot be reopened as a comparison of two toolchains.",
            f"Compare the two commits with cutediff compare {over.get('toolchain')} {over.get('toolchain')} --recipe FILE --a-source git:LAST_GOOD --b-source git:FIRST_BAD.",
        )
    sides = result.get("sides") or {}
    a, b = (parse_side(sides.get(v, v), result.get("pins") or (), result.get("cuda")) for v in pair_versions(result))
    specs = (a, b)
    return CompareOptions(
        specs=specs,
        recipe=get_recipe(result["recipe"]),
        params=dict(result["params"]),
        profile=GpuProfile(**result["profile"]),
        lineinfo=lineinfo,
        command=result.get("compare_command", ""),
    )
