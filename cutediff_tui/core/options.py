"""What a comparison is asked for: :class:`CompareOptions`, built from the faces' raw options.

Both faces build their options here: the CLI from click's keyword arguments, the TUI from its
compare dialog and its cross-check prompt (:func:`compare_options`). The per-side outcome
(:class:`SideOutcome`) and the host facts every comparison carries (:func:`host_info`) live here
too, below :mod:`.compare` and :mod:`.analysis_pipeline`, so that neither has to import the other
to name them.
"""

from __future__ import annotations

import platform
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CutediffError

if TYPE_CHECKING:
    from .build import Build
    from .gpu import GpuProfile
    from .recipes import RecipeInfo
    from .toolchain import ToolchainSpec


#: The FA4 recipe parameters that have their own command-line flags (``--hdim`` …).
PARAM_KEYS = (
    "varlen",
    "causal",
    "hdim",
    "hdim_v",
    "heads",
    "kv_heads",
    "dtype",
    "seqlen",
    "batch",
    "total",
    "docs",
    "window",
)


@dataclass
class CompareOptions:
    """What to compare and how."""

    specs: tuple[ToolchainSpec, ToolchainSpec]
    recipe: RecipeInfo
    params: dict[str, Any]
    profile: GpuProfile
    lineinfo: bool = True
    remarks: bool = True
    use_cache: bool = True
    timeout: float = 1800
    wheelhouse: Path | None = None
    crosscheck: list[str] = field(default_factory=list)
    allow_ptx_rewrite: bool = False
    command: str = ""
    plain_check: bool = True
    """With line info: also build without it to confirm the resource figures (False: the
    line-info build is the only build; watch mode's recompiles use that)."""
    side_params: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    """Parameters for one side only (``--a-param``/``--b-param``), over :attr:`params`."""

    def params_for(self, index: int) -> dict[str, Any]:
        """Side ``index``'s recipe parameters (0 is A): :attr:`params` with its own on top."""
        return {**self.params, **self.side_params[index]}


@dataclass
class SideOutcome:
    """What one side produced: builds, or the sentence that says why not."""

    spec: ToolchainSpec
    label: str | None = None
    env_name: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    build: Build | None = None
    lineinfo_build: Build | None = None
    error: str | None = None
    error_log: str = ""
    seconds: float = 0.0
    env_seconds: float = 0.0
    measured: tuple[list, str | None] | None = None
    """The side's kernels measured right after its build (while the other side still compiled),
    as :func:`~cutediff_tui.core.analysis_pipeline.measure_side` gives them; None: not yet."""


def command_line(argv: list[str] | None = None) -> str:
    """The ``cutediff …`` command line that made a result (recorded in it, for a repro)."""
    args = sys.argv[1:] if argv is None else argv
    return "cutediff " + " ".join(shlex.quote(x) for x in args)


def given_params(kw: Mapping[str, Any]) -> dict[str, Any]:
    """The recipe parameters the user gave (the FA4 flags and ``--param NAME=VALUE``), unconverted."""
    given = {k: kw.get(k) for k in PARAM_KEYS}
    for item in kw.get("extra_params", ()) or ():
        if "=" not in item:
            raise CutediffError(f"--param {item!r} is not NAME=VALUE.", "Write it as e.g. --param hdim=64.")
        k, v = item.split("=", 1)
        given[k.strip().replace("-", "_")] = v
    return {k: v for k, v in given.items() if v is not None}


def parse_side_params(items: Iterable[str] | None, flag: str) -> dict[str, str]:
    """``NAME=VALUE`` items of a per-side option (``--a-param``/``--b-param``), unconverted."""
    out: dict[str, str] = {}
    for item in items or ():
        if "=" not in item:
            raise CutediffError(f"{flag} {item!r} is not NAME=VALUE.", f"Write it as e.g. {flag} hdim=64.")
        k, v = item.split("=", 1)
        out[k.strip().replace("-", "_")] = v
    return out


def compare_options(a: str, b: str, kw: Mapping[str, Any], *, command: str | None = None) -> CompareOptions:
    """:class:`CompareOptions` for sides ``a`` and ``b`` from the recipe options in ``kw`` (the
    names of ``cutediff compare``'s options: ``kernel``, ``arch``, ``gpu``, ``with_``, ``hdim`` …).

    ``command`` is recorded in the result; by default the command line of this process.
    Raises :class:`CutediffError` on an unknown recipe, parameter, arch or GPU.
    """
    from .gpu import resolve_profile
    from .recipes import coerce_params, get_recipe
    from .toolchain import parse_side

    cuda = int(kw["cuda"]) if kw.get("cuda") else None
    python = kw.get("python")
    specs = (parse_side(a, kw.get("with_", ()), cuda, python), parse_side(b, kw.get("with_", ()), cuda, python))
    recipe = get_recipe(kw["kernel"], search=[p for s in specs for p in s.local_paths()])
    given = given_params(kw)
    # FA4 parameters only apply to FA4 recipes; others declare their own.
    known = {p.name for p in recipe.params}
    unknown = [k for k in given if k not in known]
    if unknown and recipe.strict:
        raise CutediffError(
            f"Recipe {recipe.name} has no parameter {', '.join(unknown)}.",
            f"Its parameters: {', '.join(sorted(known)) or 'none'}.",
        )
    params = coerce_params(recipe, given)
    side_given = (
        parse_side_params(kw.get("a_params"), "--a-param"),
        parse_side_params(kw.get("b_params"), "--b-param"),
    )
    side_params = tuple(
        {k: v for k, v in coerce_params(recipe, {**given, **sg}).items() if k in sg} for sg in side_given
    )
    profile = resolve_profile(kw.get("gpu"), kw.get("arch"), kw.get("num_sms"))
    return CompareOptions(
        specs=specs,
        recipe=recipe,
        params=params,
        profile=profile,
        lineinfo=not kw.get("no_lineinfo"),
        use_cache=not kw.get("no_cache"),
        timeout=kw.get("timeout") or 1800,
        wheelhouse=kw.get("wheelhouse"),
        crosscheck=[v.strip() for v in (kw.get("crosscheck") or "").split(",") if v.strip()],
        allow_ptx_rewrite=bool(kw.get("allow_ptx_rewrite")),
        plain_check=not kw.get("no_plain_check"),
        command=command_line() if command is None else command,
        side_params=side_params,  # type: ignore[arg-type]
    )


def host_info() -> dict:
    """The machine a comparison was made on: Python, platform, torch and cutediff versions, GPU."""
    import importlib.metadata as md

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for dist in ("torch", "cutediff"):
        try:
            info[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    from .gpu import local_gpu

    info["gpu"] = local_gpu()
    return info
