"""Compare two sources of one recipe, not only two toolchains.

Each side may compile the recipe from its own place: ``--a-source PATH`` / ``--b-source PATH``
(another copy of the recipe file, or a folder holding one at the same relative path), or
``git:REV`` (the file's content at a git revision, with the helper modules it imports, written
under ``<cache>/sources/``). The sides may then share one DSL version::

    cutediff compare 4.8.0 4.8.0 --recipe samples/recipes/add.py --b-source git:HEAD

:func:`plan_sources` resolves the sides on the host (ast only); :func:`run_compare_plan` builds
and analyses them like :func:`~cutediff_tui.core.compare.run_compare`, each side with its own
recipe. Without sources it *is* ``run_compare``.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import CutediffError
from ..events import Progress
from ..events import noop as _noop
from ..model.types import SIDES
from . import RecipeInfo
from .refs import display, file_recipe

GIT_PREFIX = "git:"


@dataclass
class SideSource:
    """What one side compiles, and from where."""

    side: str
    source: str | None  # as given: None (the recipe given to --recipe), "git:REV" or a path
    recipe: RecipeInfo
    working_copy: bool  # its files are edited in place (``--watch`` polls them)

    @property
    def label(self) -> str | None:
        return self.source


@dataclass
class SourcePlan:
    """The recipe of each side (the --recipe one, or one taken from a source)."""

    primary: RecipeInfo
    sides: tuple[SideSource, SideSource]
    search: tuple[str, ...] = ()
    local_paths: tuple[tuple[str, ...], tuple[str, ...]] = field(default=((), ()))

    @property
    def trivial(self) -> bool:
        """No side has a source of its own: a plain two-toolchain comparison."""
        return all(s.source is None for s in self.sides)

    def describe(self) -> dict[str, str | None]:
        return {s.side: s.source for s in self.sides}

    def recipe_files(self) -> dict[str, list[Path]]:
        """Per side, the recipe file and the helpers its build key covers, cutediff's own built-in
        recipes left out: what ``compare --save`` keeps beside the kernels."""
        from ..paths import package_root

        ours = package_root()
        return {s.side: [p for p in s.recipe.files() if not p.resolve().is_relative_to(ours)] for s in self.sides}

    def watched(self) -> dict[Path, set[str]]:
        """Files (and source folders) whose edits change a side → the sides they change."""
        out: dict[Path, set[str]] = {}
        for s, locals_ in zip(self.sides, self.local_paths):
            paths = [p.resolve() for p in s.recipe.files()] if s.working_copy else []
            paths += [Path(p).resolve() for p in locals_]
            for p in paths:
                out.setdefault(p, set()).add(s.side)
        return out

    def reload(self) -> SourcePlan:
        """Resolve again after an edit (declarations, helper imports); raises CutediffError."""
        from . import get_recipe

        primary = get_recipe(
            self.primary.name if self.primary.kind == "builtin" else _ref_of(self.primary), search=self.search
        )
        if self.primary.kind != "builtin":
            primary = replace(primary, name=self.primary.name)
        return plan_sources(
            primary, self.sides[0].source, self.sides[1].source, search=self.search, local_paths=self.local_paths
        )


def _ref_of(recipe: RecipeInfo) -> str:
    """A reference that resolves to ``recipe`` again (file path or module, with the function)."""
    if recipe.kind == "file" and recipe.path:
        return f"{recipe.path}:{recipe.function}"
    return recipe.entry


def plan_sources(
    primary: RecipeInfo,
    a_source: str | None = None,
    b_source: str | None = None,
    *,
    search: tuple[str, ...] | list[str] = (),
    local_paths: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> SourcePlan:
    """Each side's recipe: ``primary`` itself, or ``primary`` read from the side's source."""
    sides = []
    for side, source in zip(SIDES, (a_source, b_source)):
        source = (source or "").strip() or None
        if source is None:
            sides.append(SideSource(side, None, primary, True))
        else:
            recipe, working = side_recipe(primary, source, side)
            sides.append(SideSource(side, source, recipe, working))
    return SourcePlan(primary, (sides[0], sides[1]), tuple(search), local_paths)


def _own_file(primary: RecipeInfo) -> Path:
    files = primary.files()
    if not files or not files[0].is_file():
        raise CutediffError(
            f"Recipe {primary.name} has no source file on this machine, so --a-source/--b-source cannot replace it.",
            "Name the recipe by its file (--recipe path/to/file.py:function).",
        )
    return files[0]


def side_recipe(primary: RecipeInfo, source: str, side: str) -> tuple[RecipeInfo, bool]:
    """The recipe compiled by ``side`` from ``source`` → (recipe, whether it is a working copy)."""
    own = _own_file(primary)
    label = f"[{source}]"
    name = f"{primary.name} {label}"
    what = f"Side {side.upper()}'s recipe source {source}"
    if source.startswith(GIT_PREFIX):
        rev = source[len(GIT_PREFIX) :].strip() or "HEAD"
        path = materialize_git(own, rev, side)
        return file_recipe(path, primary.function, name=name, label=f"{what} ({display(own)} at {rev})"), False
    path = Path(source).expanduser()
    if path.is_dir():
        candidates = []
        if primary.path:
            try:
                candidates.append(path / Path(primary.path).resolve().relative_to(Path.cwd().resolve()))
            except ValueError:
                pass
        candidates.append(path / own.name)
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise CutediffError(
                f"{what} is a folder without {own.name} in it.",
                "Give the recipe file itself, or a checkout that has it at the same path.",
            )
        path = found
    elif not path.exists():
        raise CutediffError(f"{what} does not exist.", "Give a recipe file, a folder holding one, or git:REV.")
    return file_recipe(path, primary.function, name=name, label=what), True


# ---------------------------------------------------------------- git


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, timeout=60)
    except FileNotFoundError:
        raise CutediffError(
            "git:REV sources need git, and it is not installed.", "Install git or give a file path."
        ) from None


def sources_dir() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "sources"


def materialize_git(path: Path, rev: str, side: str = "b") -> Path:
    """Write ``path`` as it is at ``rev`` (and the helpers it imports there) under the cache; its new path.

    The files keep their place relative to the repository root, in a folder named after the
    commit, so sibling imports work and the same revision is written once.
    """
    path = path.resolve()
    folder = path.parent
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise CutediffError(
            f"Side {side.upper()}: git:{rev} needs {display(path)} to be inside a git repository, and it is not.",
            "Give the other version as a file path instead.",
        )
    root = Path(top.stdout.decode().strip()).resolve()
    commit = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root)
    if commit.returncode != 0:
        raise CutediffError(
            f"Side {side.upper()}: git has no revision {rev!r} in {root}.",
            "Use a commit, branch or tag, e.g. git:HEAD or git:HEAD~1.",
        )
    sha = commit.stdout.decode().strip()
    rel = path.relative_to(root)
    dest_root = sources_dir() / sha[:16]

    def fetch(relpath: Path) -> Path | None:
        shown = _git(["show", f"{sha}:{relpath.as_posix()}"], root)
        if shown.returncode != 0:
            return None
        dest = dest_root / relpath
        data = shown.stdout
        if not (dest.is_file() and dest.read_bytes() == data):
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, dest)
        return dest

    main = fetch(rel)
    if main is None:
        raise CutediffError(
            f"Side {side.upper()}: {rel.as_posix()} does not exist at git:{rev} ({sha[:10]}).",
            "Pick a revision that has the recipe file.",
        )
    # Helpers the recipe imports, as they were at that revision (helpers may import helpers).
    tried: set[Path] = set()
    while True:
        new = False
        for cand in _helper_candidates(main):
            if cand in tried:
                continue
            tried.add(cand)
            try:
                helper_rel = cand.relative_to(dest_root)
            except ValueError:
                continue
            new = fetch(helper_rel) is not None or new
        if not new:
            break
    return main


def _helper_candidates(main: Path) -> list[Path]:
    """Files the recipe at ``main`` would import from its folder (existing there or not yet fetched)."""
    import ast

    from .refs import imported_modules

    out: list[Path] = []
    todo = [main]
    seen = set()
    while todo:
        cur = todo.pop()
        if cur in seen or not cur.is_file():
            continue
        seen.add(cur)
        try:
            tree = ast.parse(cur.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for mod in imported_modules(tree, cur, main.parent):
            for cand in (
                main.parent.joinpath(*mod.split(".")).with_suffix(".py"),
                main.parent.joinpath(*mod.split("."), "__init__.py"),
            ):
                if cand not in out:
                    out.append(cand)
                if cand.is_file():
                    todo.append(cand)
    return out


# ---------------------------------------------------------------- running


def side_params(recipe: RecipeInfo, params: dict) -> dict:
    """One side's parameters: the comparison's, over that side's own defaults."""
    return {**recipe.defaults(), **params}


def run_compare_plan(
    opts, plan: SourcePlan | None, progress: Progress = _noop, cancel: threading.Event | None = None
) -> dict:
    """:func:`~cutediff_tui.core.compare.run_compare` with each side's own recipe (see module doc)."""
    from ..compare import run_compare

    if plan is None or plan.trivial:
        return run_compare(opts, progress, cancel)
    side_opts = tuple(replace(opts, recipe=s.recipe, params=side_params(s.recipe, opts.params)) for s in plan.sides)
    labels = tuple(f"{spec.label} [{s.source}]" if s.source else None for spec, s in zip(opts.specs, plan.sides))
    return run_compare(
        opts,
        progress,
        cancel,
        side_opts=side_opts,
        labels=labels,  # type: ignore[arg-type]
        sources=plan.describe(),
    )
