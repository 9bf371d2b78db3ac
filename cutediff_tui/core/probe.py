"""One probe: a toolchain × arch × recipe parameters, built (or taken from the cache) and
analysed on its own into per-kernel figures.

Bisect and sweep are made of probes. A probe is a plain, picklable value so that it runs the same
in this process, in a local process pool or on a Dask worker on another machine (which builds its
own environment from the index or a shared wheelhouse and uses its own cache).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import CutediffError
from .events import Progress
from .events import noop as _noop
from .gpu import GpuProfile
from .recipes import RecipeInfo

PROBE_FORMAT = 1


@dataclass
class Probe:
    """What to build: one toolchain, one target, one set of recipe parameters."""

    side: str  # DSL version with optional pins, as a compare side is written: "4.8.0" or "4.8.0,quack-kernels==0.6.5"
    recipe: RecipeInfo
    params: dict[str, Any]
    profile: GpuProfile
    pins: tuple[str, ...] = ()
    cuda: int | None = None
    python: str | None = None  # another interpreter, for versions with no wheel for this one
    wheelhouse: str | None = None
    timeout: float = 1800
    use_cache: bool = True
    axis: dict[str, Any] = field(default_factory=dict)  # the swept values that picked this probe
    _key: str | None = field(default=None, init=False, repr=False, compare=False)

    def spec(self):
        from .toolchain import parse_side

        return parse_side(self.side, self.pins, self.cuda, self.python)

    def key(self) -> str:
        """Stable identity of what this probe builds (sweep state files are keyed by it); computed
        once, so that editing the recipe file during a sweep cannot change it halfway."""
        if self._key is None:
            self._key = self._compute_key()
        return self._key

    def _compute_key(self) -> str:
        payload = {
            "format": PROBE_FORMAT,
            "side": self.side,
            "pins": list(self.pins),
            "cuda": self.cuda,
            "recipe": self.recipe.name,
            "recipe_src": self.recipe.source_digest(),
            "params": self.params,
            "profile": asdict(self.profile),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def run_probe(probe: Probe, progress: Progress = _noop, cancel: threading.Event | None = None) -> dict:
    """Build and analyse ``probe``; failures come back as ``status: failed`` with their sentence.

    Never raises for a version that cannot be built or imported (that is an answer for bisect);
    ``KeyboardInterrupt`` still propagates. ``cancel`` stops the compile (its worker is killed,
    nothing is cached). The compile runs on the toolchain's warm worker when warm workers are on
    (:mod:`.warm`; a local sweep turns them on), else in a one-shot worker.
    """
    from .analysis_pipeline import side_kernels
    from .compare import CompareOptions, run_side
    from .metric import figures_of

    t0 = time.monotonic()
    out: dict[str, Any] = {
        "key": probe.key(),
        "side": probe.side,
        "arch": probe.profile.arch,
        "gpu": probe.profile.name,
        "params": probe.params,
        "axis": probe.axis,
        "host": socket.gethostname(),
        "status": "failed",
        "why": None,
        "kernels": [],
    }
    try:
        spec = probe.spec()
    except CutediffError as exc:
        out.update(why=exc.sentence(), stage="spec", seconds=0.0, toolchain=probe.side)
        return out
    out["toolchain"] = spec.label
    out["dsl"] = spec.dsl
    opts = CompareOptions(
        specs=(spec, spec),
        recipe=probe.recipe,
        params=probe.params,
        profile=probe.profile,
        lineinfo=False,
        use_cache=probe.use_cache,
        timeout=probe.timeout,
        wheelhouse=Path(probe.wheelhouse) if probe.wheelhouse else None,
    )
    outcome = run_side("a", spec, opts, progress, cancel)
    out["env"] = outcome.env_name
    out["versions"] = outcome.versions
    out["env_seconds"] = round(outcome.env_seconds, 3)
    if outcome.error or outcome.build is None:
        out["why"] = _bare(outcome.error or "the build produced nothing")
        out["stage"] = "environment" if outcome.env_name is None else "compile"
        out["log_tail"] = outcome.error_log.strip().splitlines()[-12:]
        out["seconds"] = round(time.monotonic() - t0, 3)
        return out
    build = outcome.build
    out["build_key"] = build.key
    out["from_cache"] = build.from_cache
    out["shims"] = build.manifest.get("shims", [])
    out["notes"] = build.manifest.get("notes", [])
    try:
        kernels = side_kernels(outcome, progress, "a")
    except CutediffError as exc:
        out.update(why=exc.sentence(), stage="analysis", seconds=round(time.monotonic() - t0, 3))
        return out
    out["kernels"] = [{"name": name, "symbol": m["symbol"], "figures": figures_of(m)} for name, m in kernels]
    out["status"] = "ok"
    out["seconds"] = round(time.monotonic() - t0, 3)
    return out


def _bare(sentence: str) -> str:
    import re

    return re.sub(r"^Side [AB]: ", "", sentence)


def select_kernels(result: dict, kernel_filter: str | None) -> list[dict]:
    """The probe's kernels whose name or symbol the regular expression ``kernel_filter`` matches
    (:mod:`.model.kernel_filter`, the one matcher of every ``--kernel-filter``)."""
    from .model import kernel_filter as kf

    return kf.select_kernels(result.get("kernels", []), kernel_filter)


def check_kernel_filter(kernel_filter: str | None) -> None:
    """Refuse a ``--kernel-filter`` that is not a regular expression (one sentence)."""
    from .model.kernel_filter import check_kernel_filter as check

    check(kernel_filter)
