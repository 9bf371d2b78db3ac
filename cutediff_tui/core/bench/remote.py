"""The bench on a GPU that is not local: a Dask worker that declares ``--resources GPU=1``.

``cutediff bench … --scheduler tcp://HOST:8786`` submits one task that needs the ``GPU``
resource. The worker builds both toolchains itself (from the index, or from ``--wheelhouse``, a
folder it can read), runs the same interleaved bench on its GPU and sends the result back; its GPU's
name is in the result's header. A file recipe travels as its source text (the worker may not see
this machine's files).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from ..errors import CutediffError
from .plan import BenchPlan, run_local

CONNECT_TIMEOUT = 10


def ship_files(plan: BenchPlan) -> dict[str, str]:
    """The files a file recipe needs, by their paths here."""
    r = plan.recipe
    if r.kind != "file" or not r.path:
        return {}
    return {p: Path(p).read_text() for p in (r.path, *r.source_files) if Path(p).is_file()}


def land_files(plan: BenchPlan, files: dict[str, str], root: Path) -> BenchPlan:
    """Write shipped recipe files under ``root`` (one folder, by base name) and point the plan at them."""
    if not files:
        return plan
    moved = {}
    for path, text in files.items():
        dest = root / Path(path).name
        dest.write_text(text)
        moved[path] = str(dest)

    def relocate(entry: str) -> str:
        head, _, fn = entry.rpartition(":")
        return f"{moved.get(head, head)}:{fn}"

    recipe = replace(
        plan.recipe,
        entry=relocate(plan.recipe.entry),
        bench=relocate(plan.recipe.bench),
        path=moved.get(plan.recipe.path or "", plan.recipe.path),
    )
    return replace(plan, recipe=recipe, cfg=replace(plan.cfg, entry=recipe.bench))


def bench_task(plan: BenchPlan, files: dict[str, str], wheelhouse: str | None) -> dict:
    """Runs on the Dask worker: the whole local bench there; a failure comes back as a sentence."""
    import socket

    from .runner import check_gpu

    try:
        check_gpu(plan.recipe)  # before any environment is built on a machine that cannot run it
        with tempfile.TemporaryDirectory(prefix="cutediff-remote-") as tmp:
            here = land_files(plan, files, Path(tmp))
            result = run_local(here, wheelhouse=Path(wheelhouse) if wheelhouse else None)
    except CutediffError as exc:
        return {"error": exc.sentence(), "host": socket.gethostname()}
    result["host"] = socket.gethostname()
    return result


def gpu_workers(info: dict) -> list[str]:
    """The workers in ``client.scheduler_info()`` that declare a GPU resource."""
    return [addr for addr, w in (info.get("workers") or {}).items() if (w.get("resources") or {}).get("GPU", 0) >= 1]


def run_remote(address: str, plan: BenchPlan, progress=lambda _m: None, *, wheelhouse: Path | None = None) -> dict:
    """Submit the bench to a worker with ``GPU=1`` behind the scheduler at ``address``."""
    try:
        from distributed import Client
    except ImportError:
        raise CutediffError(
            "--scheduler needs the distributed package, which is not installed.",
            'Install it with pip install "cutediff[distributed]" (or pip install distributed).',
        ) from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise CutediffError(
            f"Could not reach the Dask scheduler at {address} ({exc}).",
            "Check the address (tcp://HOST:8786) and that the scheduler runs.",
        ) from None
    try:
        workers = gpu_workers(client.scheduler_info())
        if not workers:
            raise CutediffError(
                f"No worker of the Dask scheduler at {address} declares a GPU, so the bench has nowhere to run.",
                f"On the GPU machine start one with: dask worker {address} --resources GPU=1",
            )
        progress(f"bench submitted to {address} (GPU workers: {', '.join(workers)})")
        fut = client.submit(
            bench_task,
            plan,
            ship_files(plan),
            str(wheelhouse) if wheelhouse else None,
            resources={"GPU": 1},
            pure=False,
        )
        try:
            result = fut.result()
        except Exception as exc:  # the task itself broke on the worker
            raise CutediffError(
                f"The bench task failed on the Dask worker ({type(exc).__name__}: {str(exc)[:200]}).",
                "Run the same cutediff bench on the worker's machine with --debug to see why.",
            ) from None
    finally:
        client.close()
    if "error" in result:
        raise CutediffError(f"On the Dask worker {result.get('host', '?')}: {result['error']}")
    result["remote"] = {"scheduler": address, "host": result.get("host"), "workers": workers}
    return result


def run_planned(plan: BenchPlan, progress=lambda _m: None, *, scheduler: str | None = None, wheelhouse=None) -> dict:
    """Run the plan here, or on a Dask worker with a GPU when ``scheduler`` is given (this module,
    not :mod:`.plan`, chooses, so that the two never import each other)."""
    if scheduler:
        return run_remote(scheduler, plan, progress, wheelhouse=wheelhouse)
    return run_local(plan, progress, wheelhouse)
