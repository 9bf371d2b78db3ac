"""From compare's recipe options to a bench: which hook, which cases, which GPU, where it runs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import CutediffError
from ..model.types import SIDES
from ..recipes import RecipeInfo, coerce_params
from ..toolchain import ToolchainSpec
from .runner import BenchConfig, check_gpu, check_hook, run_bench
from .shapes import DEFAULT_SHAPES, parse_shape

FA4_MODES = {"fa4-fwd": "fwd", "fa4-bwd": "bwd", "fa4-fwdbwd": "fwdbwd"}


@dataclass
class BenchPlan:
    specs: tuple[ToolchainSpec, ToolchainSpec]
    recipe: RecipeInfo
    cfg: BenchConfig


def plan_bench(
    opts: Any,
    side_params: tuple[dict, dict] = ({}, {}),
    *,
    shapes: tuple[str, ...] = (),
    local: bool = True,
    **settings: Any,
) -> BenchPlan:
    """A :class:`BenchPlan` from :class:`~cutediff_tui.core.compare.CompareOptions` (``opts``).

    ``local``: check here, before any environment is built, that this machine's GPU can run the
    recipe (a remote bench checks on its worker). ``settings``: :class:`BenchConfig` fields.
    """
    recipe: RecipeInfo = opts.recipe
    hook = check_hook(recipe)
    sides = tuple({k: v for k, v in coerce_params(recipe, sp).items() if k in sp} for sp in side_params)
    mode = FA4_MODES.get(recipe.name, "")
    params = dict(opts.params)
    if shapes and not mode:
        raise CutediffError(
            f"--shape describes FA4 problems, and {recipe.name} is not an FA4 recipe.",
            "Give its parameters with --param NAME=VALUE (cutediff recipes lists them).",
        )
    shp: tuple = ()
    if mode:
        hdim, causal, dtype = params["hdim"], params["causal"], params["dtype"]
        shp = tuple(parse_shape(x, hdim, causal, dtype) for x in shapes) or tuple(
            replace(s, hdim=hdim, causal=causal, dtype=dtype) for s in DEFAULT_SHAPES
        )
    if local:  # after the input checks: a typo is reported before the machine is
        check_gpu(recipe)
    cfg = BenchConfig(
        shapes=shp,
        mode=mode or "call",
        entry=hook,
        params=params,
        side_params=sides,  # type: ignore[arg-type]
        recipe=recipe.name,
        **settings,
    )
    return BenchPlan(specs=tuple(opts.specs), recipe=recipe, cfg=cfg)  # type: ignore[arg-type]


def bench_listener(progress, cfg: BenchConfig):
    labels = cfg.labels()

    def listen(ev: dict) -> None:
        if ev["event"] == "ready":
            progress(f"side {ev['side'].upper()}: {ev['shape']} compiled and ran once ({ev['seconds']} s)")
        elif ev["event"] == "samples" and ev["index"] == len(labels) - 1 and ev["side"] == "b":
            progress(f"round {ev['round'] + 1}/{cfg.rounds} done")
        elif ev["event"] == "profile":
            progress(
                "Nsight Compute: profiling both sides" + (f" ({ev['kernel_filter']})" if ev["kernel_filter"] else "")
            )

    return listen


def run_local(plan: BenchPlan, progress=lambda _m: None, wheelhouse: Path | None = None) -> dict:
    """Build both environments here and run the bench on this machine's GPU."""
    from ..toolchain import create_env

    envs = tuple(create_env(s, wheelhouse=wheelhouse, progress=progress) for s in plan.specs)
    result = run_bench(envs, plan.cfg, bench_listener(progress, plan.cfg), recipe=plan.recipe)  # type: ignore[arg-type]
    result["sides"] = {s: {"label": sp.label, "versions": e.versions()} for s, sp, e in zip(SIDES, plan.specs, envs)}
    return result
