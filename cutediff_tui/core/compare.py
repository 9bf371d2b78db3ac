"""Compare two toolchains: environments and builds per side in parallel, then the analysis.

The result is plain JSON-serialisable data (schema ``cutediff.comparison/2``, written by
``core.model``) that the CLI, the TUI and the reports all read.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from .build import BuildRequest, compile_build
from .errors import CutediffError
from .events import AnalysisCached, Progress, for_side
from .events import noop as _noop
from .locking import atomic_write
from .model import SCHEMA, SIDES, decode, read_comparison
from .model import dumps as dump_comparison
from .options import CompareOptions, SideOutcome, host_info
from .paths import cache_dir
from .toolchain import ToolchainSpec, create_env
from .trace import cache_decision, stamp


def run_side(
    side: str,
    spec: ToolchainSpec,
    opts: CompareOptions,
    progress: Progress = _noop,
    cancel: threading.Event | None = None,
) -> SideOutcome:
    """Environment and builds for one side; errors are kept, not raised.

    With line info the line-info build comes first (everything is shown from it); the plain
    build only confirms its resource figures (``opts.plain_check``): after it, or beside it
    where :func:`plain_beside` finds the cores; without that check the line-info build stands
    for both."""
    out = SideOutcome(spec=spec, params=dict(opts.params))
    t0 = time.monotonic()
    progress = for_side(progress, side)  # type: ignore[arg-type]
    try:
        env = create_env(spec, wheelhouse=opts.wheelhouse, progress=progress)
        out.env_seconds = time.monotonic() - t0
        stamp("side: environment ready", side=side)
        out.env_name = env.name
        out.versions = env.versions()

        def build(lineinfo: bool):
            req = BuildRequest(env, opts.recipe, opts.params, opts.profile, lineinfo=lineinfo, remarks=opts.remarks)
            return compile_build(
                req, side=side.upper(), use_cache=opts.use_cache, timeout=opts.timeout, progress=progress, cancel=cancel
            )

        if opts.lineinfo and opts.plain_check and plain_beside():
            # cores to spare: the confirming plain build runs beside the line-info build
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cutediff-plain") as beside:
                plain = beside.submit(build, False)
                out.lineinfo_build = build(True)
                out.build = plain.result()
        elif opts.lineinfo:
            out.lineinfo_build = build(True)
            out.build = build(False) if opts.plain_check else out.lineinfo_build
        else:
            out.build = build(False)
    except CutediffError as exc:
        out.error = exc.sentence()
        out.error_log = getattr(exc, "log", "") or ""
    out.seconds = time.monotonic() - t0
    return out


#: Compiles a compare with the plain check runs at once when the plain build goes beside the
#: line-info build: two per side.
BESIDE_JOBS = 4


def plain_beside() -> bool:
    """Whether this machine has the cores (and memory) for both builds of both sides at once
    (:func:`~.warm.compile_slots`: one compile per core, fewer when memory is short)."""
    from .warm import compile_slots

    return compile_slots() >= BESIDE_JOBS


def preflight(opts: CompareOptions) -> None:
    """Refuse bad input before any environment is built: unknown versions, unsupported arch."""
    from .build import check_recipe_arch
    from .toolchain import check_published

    check_recipe_arch(opts.recipe, opts.profile.arch)
    check_cache_writable()
    if opts.wheelhouse is None:
        for spec in opts.specs:
            check_published(spec)


def check_cache_writable() -> None:
    """Refuse, in one sentence, a cache folder that cannot be written (read-only, under a file)."""
    import errno
    import os

    root = cache_dir()
    probe = root / f".probe-{os.getpid()}-{threading.get_ident()}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        why = {
            errno.EROFS: "its file system is read-only",
            errno.ENOSPC: "no space is left on its disk",
            errno.ENOTDIR: "a file stands where a folder of its path should be",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise CutediffError(
            f"The cache folder {root} cannot be written ({why}).",
            "Set CUTEDIFF_CACHE_DIR to a writable folder with free space.",
        ) from None


def run_compare(
    opts: CompareOptions,
    progress: Progress = _noop,
    cancel: threading.Event | None = None,
    *,
    side_opts: tuple[CompareOptions, CompareOptions] | None = None,
    labels: tuple[str | None, str | None] = (None, None),
    sources: dict | None = None,
) -> dict:
    """Build both sides in parallel and analyse them into a comparison dict.

    ``side_opts`` gives each side its own options (e.g. its own recipe file, for two-source
    compares); ``labels`` overrides the sides' labels and ``sources`` is recorded under
    ``recipe.sources``.
    """
    stamp("compare: started")
    preflight(opts)
    stamp("compare: preflight done")
    t0 = time.monotonic()
    cancel = cancel if cancel is not None else threading.Event()
    per_side = tuple(
        replace(o, params=o.params_for(i)) if o.side_params[i] else o for i, o in enumerate(side_opts or (opts, opts))
    )
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        futures = [
            pool.submit(_built_and_disassembled, s, spec, o, progress, cancel)
            for s, spec, o in zip(SIDES, opts.specs, per_side)
        ]
        outcomes = [f.result() for f in futures]
    except BaseException:
        # Ctrl-C (or any failure) in this thread: stop both sides' workers, let them remove their
        # half-written builds, and only then hand the interruption on.
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    stamp("compare: both sides built")
    for o, label in zip(outcomes, labels):
        if label:
            o.label = label
    build_seconds = time.monotonic() - t0
    from .analysis_pipeline import analysis_digest, analyze

    key = _comparison_key(outcomes, opts, analysis_digest() + ("+sources" if sources else ""))
    # A build rebuilt after damage is analysed afresh, so that the comparison reports the repair.
    repaired = any(b is not None and b.repaired for o in outcomes for b in (o.build, o.lineinfo_build))
    cached = _load_comparison(key) if (key and opts.use_cache and not repaired) else None
    if key:
        why = "--no-cache" if not opts.use_cache else ("a build was repaired" if repaired else "")
        cache_decision("analysis", key, "hit" if cached is not None else "miss, analysing", why)
    if cached is not None:
        comparison = cached
        comparison["command"] = opts.command
        progress(AnalysisCached(None))
    else:
        comparison = analyze(outcomes, opts, progress=progress)
        if sources:
            comparison["recipe"]["sources"] = sources
        stamp("compare: analysed")
        if key:
            _store_comparison(key, comparison)
            stamp("compare: comparison stored")
    comparison["timing"] = {
        "build_seconds": round(build_seconds, 3),
        "total_seconds": round(time.monotonic() - t0, 3),
        "from_cache": all(o.build is not None and o.build.from_cache for o in outcomes),
    }
    return comparison


def _built_and_disassembled(
    side: str, spec: ToolchainSpec, opts: CompareOptions, progress: Progress, cancel: threading.Event
) -> SideOutcome:
    """:func:`run_side`, then that side's disassembly and measurement at once: the side built
    first runs its tools and is measured while the other side still compiles (the analysis
    reads the texts from the cache and takes the measurement). A side served from the cache is
    left to the analysis, which a cached comparison may spare."""
    from .analysis_pipeline import disassemble_side, measure_side

    out = run_side(side, spec, opts, progress, cancel)
    if not cancel.is_set():
        disassemble_side(out)
        if out.build is not None and not out.error and not out.build.from_cache and not cancel.is_set():
            out.measured = measure_side(out, progress, side)
    return out


def _comparison_key(outcomes: list[SideOutcome], opts: CompareOptions, version: str) -> str | None:
    if any(o.build is None or o.error for o in outcomes):
        return None
    payload = {
        "v": version,
        "builds": [[o.build.key, o.lineinfo_build.key if o.lineinfo_build else None] for o in outcomes],  # type: ignore[union-attr]
        "labels": [o.spec.label for o in outcomes],
        "crosscheck": opts.crosscheck,
        "rewrite": opts.allow_ptx_rewrite,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]


def comparisons_dir() -> Path:
    return cache_dir() / "comparisons"


def _load_comparison(key: str) -> dict | None:
    p = comparisons_dir() / f"{key}.json"
    if not p.is_file():
        return None
    try:
        data = decode(p.read_bytes())
    except (OSError, ValueError):
        return None
    for k in data.get("kernels", []):  # artifacts must still be in the cache
        for s in SIDES:
            m = k.get(s)
            if m and not Path(m["files"]["dir"]).is_dir():
                return None
    return data


def _store_comparison(key: str, comparison: dict) -> None:
    atomic_write(comparisons_dir() / f"{key}.json", dump_comparison(comparison))


def recent_comparisons(limit: int = 20) -> list[dict]:
    """Comparisons made on this machine, newest first: {path, label, recipe, arch, created}."""
    root = comparisons_dir()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.glob("*.json"), key=lambda q: q.stat().st_mtime, reverse=True)[:limit]:
        try:
            d = json.loads(p.read_text())
        except ValueError:
            continue
        out.append(
            {
                "path": str(p),
                "label": f"{d['sides']['a']['label']} vs {d['sides']['b']['label']}",
                "recipe": d.get("recipe", {}).get("name"),
                "arch": d.get("arch"),
                "created": d.get("created"),
            }
        )
    return out


def save_json(comparison: dict, path: Path) -> None:
    path.write_text(dump_comparison(comparison))


def load_json(path: Path) -> dict:
    """A saved comparison (/1 or /2), through the model's one reader."""
    return read_comparison(path)


__all__ = ["CompareOptions", "SideOutcome", "run_compare", "run_side", "SCHEMA", "host_info", "load_json", "save_json"]
