"""What a recipe is: its declaration (:class:`RecipeInfo`, :class:`Param`) and the :func:`recipe`
decorator a recipe file declares its parameters with. The package face (:mod:`cutediff_tui.core.recipes`)
offers these names; :mod:`.refs`, which the face uses, imports them from here.

Imported inside toolchain workers too: standard library only.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PARAM_TYPES = ("int", "float", "bool", "str", "window")


@dataclass(frozen=True)
class Param:
    """A recipe parameter (name as used on the CLI, with underscores).

    ``type`` is one of :data:`PARAM_TYPES`; left out, it follows the default's Python type.
    """

    name: str
    type: str = ""  # "int" | "float" | "bool" | "str" | "window"
    default: Any = None
    choices: tuple = ()
    help: str = ""

    def __post_init__(self) -> None:
        if not self.type:
            object.__setattr__(self, "type", _infer_type(self.default))
        if isinstance(self.choices, list):
            object.__setattr__(self, "choices", tuple(self.choices))


def _infer_type(default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, (list, tuple)) and len(default) == 2:
        return "window"
    return "str"


def recipe(*args: Any, **declaration: Any):
    """Declare a recipe: ``@recipe(params=[Param("n", "int", 4096)], archs=(90, 100))``.

    Also usable bare (``@recipe``). At run time it only tags the function; cutediff reads the
    declaration from the file's source with :mod:`ast`, so every argument must be literal data
    (numbers, strings, tuples, lists, dicts, ``Param(...)`` with literal arguments). Keywords:
    ``name``, ``summary`` (default: the docstring's first line), ``params``, ``archs`` (arch
    families such as ``90``/``100`` or names such as ``"sm_90a"``), ``needs`` (packages to pin),
    ``bench`` (the name of a function in the same file, ``bench(ctx)``, that makes real inputs on
    the GPU and returns a callable running the compiled kernels once: ``cutediff bench`` times it;
    a top-level function called ``bench`` is found without the keyword).
    """
    if len(args) == 1 and callable(args[0]) and not declaration:
        args[0].cutediff_recipe = {}
        return args[0]
    if args:
        raise TypeError("recipe() takes keyword arguments only: @recipe(params=[...], archs=(...))")

    def tag(fn):
        fn.cutediff_recipe = dict(declaration)
        return fn

    return tag


cutediff_recipe = recipe  # the same decorator under its long name


@dataclass(frozen=True)
class RecipeInfo:
    """A recipe known to cutediff."""

    name: str
    summary: str
    entry: str  # "module:function" or "/abs/file.py:function", importable inside the worker
    params: tuple[Param, ...] = ()
    archs: tuple[int, ...] = (90, 100, 120)  # arch families it supports
    needs: tuple[str, ...] = ()  # packages that must be pinned or importable
    source_files: tuple[str, ...] = field(default=())  # other files whose content decides the build
    kind: str = "builtin"  # "builtin" | "file" | "module"
    path: str | None = None  # the recipe's own file on this machine, when known
    strict: bool = True  # parameters checked against ``params`` (False: a module not found on the host)
    bench: str = ""  # "module:function" of the bench hook (real inputs, runs the kernels on a GPU); "" = none

    @property
    def function(self) -> str:
        return self.entry.rpartition(":")[2]

    def files(self) -> list[Path]:
        """The files whose content decides this recipe's build (the ones ``--watch`` polls)."""
        out: list[Path] = []
        own = Path(self.path) if self.path else module_file(self.entry.rpartition(":")[0])
        for p in ([own] if own else []) + [Path(x) for x in self.source_files]:
            if p not in out:
                out.append(p)
        return out

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def source_digest(self) -> str:
        module = self.entry.rpartition(":")[0]
        h = hashlib.sha256(self.entry.encode())
        path = module_file(module)
        if path and path.is_file():
            h.update(path.read_bytes())
        for extra in self.source_files:
            p = Path(extra)
            if p.is_file():
                h.update(str(p).encode())
                h.update(p.read_bytes())
        return h.hexdigest()[:16]

    def to_json(self) -> dict:
        d = asdict(self)
        d["params"] = [asdict(p) for p in self.params]
        return d


def module_file(module: str) -> Path | None:
    """The file of a recipe module: cutediff's own (found without importing), or a ``.py`` path."""
    if module.startswith("cutediff_tui."):
        base = Path(__file__).resolve().parents[3]  # the folder holding the cutediff_tui package
        return base.joinpath(*module.split(".")).with_suffix(".py")
    p = Path(module)
    return p if p.suffix == ".py" else None
