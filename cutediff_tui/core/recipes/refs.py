"""Recipes named by reference, read on the host with :mod:`ast` (no DSL, no torch, no import).

A reference is ``path/to/file.py[:function]`` or ``package.module[:function]``. The function's
declaration is literal data in the source, in either form::

    @recipe(params=[Param("n", "int", 4096, help="columns")], archs=(90, 100))
    def add(ctx): ...

    cutediff_recipe = {"function": "add", "params": [{"name": "n", "default": 4096}]}
    # or a list of such dicts, one per recipe in the file

A file or module with exactly one declared recipe (or, with none declared, one function called
``recipe``) may be named without ``:function``. Functions that are not declared can still be
named explicitly (``file.py:fn``); they take no parameters.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CutediffError
from .info import PARAM_TYPES, Param, RecipeInfo

ALL_ARCHS = (80, 90, 100, 110, 120)
_DECORATORS = ("recipe", "cutediff_recipe")
_DECL_KEYS = ("function", "name", "summary", "params", "archs", "needs", "bench")
_MODULE_RE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@dataclass
class Declaration:
    """One recipe found in a file: its function and what it declares."""

    function: str
    lineno: int
    declared: bool
    name: str | None = None
    summary: str = ""
    params: tuple[Param, ...] = ()
    archs: tuple[int, ...] = ALL_ARCHS
    needs: tuple[str, ...] = ()
    bench: str = ""  # the bench hook's function name in the same file


@dataclass
class ParsedFile:
    path: Path
    tree: ast.Module
    functions: dict[str, ast.AST] = field(default_factory=dict)  # top-level names bound to something callable
    declarations: list[Declaration] = field(default_factory=list)


def is_reference(text: str) -> bool:
    """Whether ``text`` names a recipe file or module rather than a built-in recipe."""
    head = split_reference(text)[0]
    if head.endswith(".py") or os.sep in head or "/" in head or Path(head).exists():
        return True
    return bool(_MODULE_RE.match(head)) and ("." in head or ":" in text)


def split_reference(text: str) -> tuple[str, str | None]:
    """``file.py:fn`` → (``file.py``, ``fn``); a Windows drive colon is not a separator."""
    head, sep, func = text.rpartition(":")
    if not sep or not func or "/" in func or "\\" in func or func.endswith(".py") or len(head) <= 1:
        return text, None
    return head, func


# ---------------------------------------------------------------- literal data


class _NotLiteral(Exception):
    def __init__(self, node: ast.AST, what: str = "") -> None:
        super().__init__(what)
        self.node = node
        self.what = what


def _literal(node: ast.AST) -> Any:
    """``ast.literal_eval`` plus ``Param(...)`` and ``dict(...)`` calls with literal arguments."""
    if isinstance(node, ast.Call):
        fname = _callee(node.func)
        args = [_literal(a) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise _NotLiteral(kw.value, "**")
            kwargs[kw.arg] = _literal(kw.value)
        if fname == "Param":
            return _param(args, kwargs, node)
        if fname == "dict" and not args:
            return kwargs
        if fname in ("tuple", "list") and len(args) <= 1 and not kwargs:
            return (tuple if fname == "tuple" else list)(args[0] if args else ())
        raise _NotLiteral(node, f"a call to {fname or 'something'}()")
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts] if isinstance(node, ast.List) else tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral(node, "**")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    try:
        return ast.literal_eval(node)
    except ValueError:
        what = f"the name {node.id!r}" if isinstance(node, ast.Name) else type(node).__name__
        raise _NotLiteral(node, what) from None


def _callee(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


_PARAM_FIELDS = ("name", "type", "default", "choices", "help")


def _param(args: list, kwargs: dict, node: ast.AST) -> Param:
    if len(args) > len(_PARAM_FIELDS):
        raise _NotLiteral(node, "a Param() with too many arguments")
    values = dict(zip(_PARAM_FIELDS, args))
    for k, v in kwargs.items():
        if k not in _PARAM_FIELDS:
            raise _NotLiteral(node, f"Param(..., {k}=...)")
        values[k] = v
    return _make_param(values, node)


def _make_param(values: Any, node: ast.AST) -> Param:
    if isinstance(values, Param):
        return values
    if isinstance(values, (list, tuple)):
        values = dict(zip(_PARAM_FIELDS, values))
    if not isinstance(values, dict) or not isinstance(values.get("name"), str):
        raise _NotLiteral(node, "a parameter without a name")
    unknown = set(values) - set(_PARAM_FIELDS)
    if unknown:
        raise _NotLiteral(node, f"a parameter with the unknown field(s) {', '.join(sorted(unknown))}")
    name = values["name"].replace("-", "_")
    if not name.isidentifier():
        raise _NotLiteral(node, f"the parameter name {values['name']!r}")
    p = Param(
        name,
        values.get("type") or "",
        values.get("default"),
        tuple(values.get("choices") or ()),
        str(values.get("help") or ""),
    )
    if p.type not in PARAM_TYPES:
        raise _NotLiteral(node, f"the parameter type {p.type!r} (use one of {', '.join(PARAM_TYPES)})")
    return p


def _archs(value: Any, node: ast.AST) -> tuple[int, ...]:
    if isinstance(value, (int, str)):
        value = [value]
    out = []
    for a in value:
        if isinstance(a, int) and not isinstance(a, bool):
            num = a
        elif isinstance(a, str) and re.match(r"^(sm_?)?\d{2,3}[af]?$", a.strip().lower()):
            num = int(re.sub(r"\D", "", a))
        else:
            raise _NotLiteral(node, f"the arch {a!r} (write 90, 100, or 'sm_90a')")
        fam = num // 10 * 10
        if fam not in out:
            out.append(fam)
    return tuple(out)


def _declaration(function: str, lineno: int, decl: dict, node: ast.AST, doc: str) -> Declaration:
    unknown = set(decl) - set(_DECL_KEYS)
    if unknown:
        raise _NotLiteral(
            node, f"the unknown keyword(s) {', '.join(sorted(unknown))} (use {', '.join(_DECL_KEYS[1:])})"
        )
    params = tuple(_make_param(p, node) for p in (decl.get("params") or ()))
    names = [p.name for p in params]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise _NotLiteral(node, f"the parameter {sorted(dup)[0]!r} declared twice")
    needs = decl.get("needs") or ()
    return Declaration(
        function=function,
        lineno=lineno,
        declared=True,
        name=decl.get("name"),
        summary=str(decl.get("summary") or doc),
        params=params,
        archs=_archs(decl["archs"], node) if decl.get("archs") else ALL_ARCHS,
        needs=(needs,) if isinstance(needs, str) else tuple(needs),
        bench=str(decl.get("bench") or ""),
    )


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0].strip() if (doc or "").strip() else ""


# ---------------------------------------------------------------- parsing files


def parse_file(path: Path, *, what: str | None = None) -> ParsedFile:
    """Read the recipes declared in ``path`` (raises a one-sentence CutediffError)."""
    label = what or f"Recipe file {display(path)}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CutediffError(f"{label} does not exist.", "Check the path given to --recipe.") from None
    except IsADirectoryError:
        raise CutediffError(f"{label} is a folder, not a Python file.", "Name the recipe's .py file.") from None
    except UnicodeDecodeError:
        raise CutediffError(f"{label} is not UTF-8 text.", "Save it as UTF-8.") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        text = (exc.text or "").strip()[:200]
        raise CutediffError(
            f"{label} has a syntax error on {where} ({exc.msg})" + (f": `{text}`" if text else "") + ".",
            "Fix it and run again; nothing was compiled.",
        ) from None
    parsed = ParsedFile(path, tree)
    try:
        _collect(parsed)
    except _NotLiteral as exc:
        line = getattr(exc.node, "lineno", "?")
        raise CutediffError(
            f"{label} declares a recipe on line {line} with {exc.what or 'something'} where cutediff needs literal data.",
            "Write the values out (numbers, strings, lists, dicts, Param(...)); cutediff reads the declaration "
            "without running the file.",
        ) from None
    return parsed


def _collect(parsed: ParsedFile) -> None:
    docs: dict[str, str] = {}
    for node in parsed.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parsed.functions[node.name] = node
            docs[node.name] = _first_line(ast.get_docstring(node))
            for dec in node.decorator_list:
                call = dec if isinstance(dec, ast.Call) else None
                if _callee(call.func if call else dec) not in _DECORATORS:
                    continue
                if call is not None and call.args:
                    raise _NotLiteral(call, "positional arguments to @recipe (use keywords)")
                decl = {kw.arg: _literal(kw.value) for kw in (call.keywords if call else []) if kw.arg}
                if call is not None and any(kw.arg is None for kw in call.keywords):
                    raise _NotLiteral(call, "**")
                parsed.declarations.append(_declaration(node.name, node.lineno, decl, dec, docs[node.name]))
        elif isinstance(node, ast.ClassDef):
            parsed.functions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            for n in names:
                parsed.functions.setdefault(n, node)
            if "cutediff_recipe" in names or "cutediff_recipes" in names:
                if node.value is None:
                    continue
                value = _literal(node.value)
                for decl in value if isinstance(value, (list, tuple)) else [value]:
                    if not isinstance(decl, dict) or not isinstance(decl.get("function"), str):
                        raise _NotLiteral(node, "a cutediff_recipe without a 'function' name")
                    parsed.declarations.append(_declaration(decl["function"], node.lineno, decl, node, ""))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                parsed.functions.setdefault(bound, node)
    for d in parsed.declarations:  # attribute-form declarations take the docstring of their function
        if not d.summary:
            d.summary = docs.get(d.function, "")


def display(path: Path | str) -> str:
    """``path`` relative to the working directory when under it, else as it is."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


# ---------------------------------------------------------------- local imports


def local_imports(path: Path, tree: ast.Module | None = None, *, limit: int = 64) -> list[Path]:
    """Python files next to ``path`` (or in its sub-packages) that it imports, transitively.

    The worker puts the recipe's folder first on ``sys.path``, so these are what a recipe's
    ``import helpers`` loads; their content is part of the build key and ``--watch`` polls them.
    """
    root = path.resolve().parent
    seen: list[Path] = []
    todo: list[tuple[Path, ast.Module | None]] = [(path.resolve(), tree)]
    while todo and len(seen) < limit:
        cur, t = todo.pop()
        if t is None:
            try:
                t = ast.parse(cur.read_text(encoding="utf-8"))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                continue
        for mod in imported_modules(t, cur, root):
            for cand in (
                root.joinpath(*mod.split(".")).with_suffix(".py"),
                root.joinpath(*mod.split("."), "__init__.py"),
            ):
                if cand.is_file() and cand != path.resolve() and cand not in seen:
                    seen.append(cand)
                    todo.append((cand, None))
    return seen


def imported_modules(tree: ast.Module, cur: Path, root: Path) -> list[str]:
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing file's package folder
                base = cur.parent
                for _ in range(node.level - 1):
                    base = base.parent
                try:
                    rel = base.relative_to(root)
                except ValueError:
                    continue
                prefix = ".".join(rel.parts)
                mod = ".".join(x for x in (prefix, node.module or "") if x)
            else:
                mod = node.module or ""
            if mod:
                out.append(mod)
                out += [f"{mod}.{a.name}" for a in node.names]
            else:
                out += [a.name for a in node.names]
    return out


def check_helpers(files: list[Path], owner: str) -> None:
    """A syntax error in an imported helper is reported on the host too, naming the recipe."""
    for f in files:
        try:
            ast.parse(f.read_text(encoding="utf-8"), filename=str(f))
        except SyntaxError as exc:
            text = (exc.text or "").strip()[:200]
            raise CutediffError(
                f"Recipe {owner} imports {display(f)}, which has a syntax error on line {exc.lineno} ({exc.msg})"
                + (f": `{text}`" if text else "")
                + ".",
                "Fix it and run again; nothing was compiled.",
            ) from None
        except (OSError, UnicodeDecodeError):
            continue


# ---------------------------------------------------------------- resolving references


def pick(parsed: ParsedFile, function: str | None, label: str) -> Declaration:
    """The declaration for ``function`` (or the file's only recipe when None)."""
    if function is not None:
        for d in parsed.declarations:
            if d.function == function:
                return d
        node = parsed.functions.get(function)
        if node is None:
            found = ", ".join(d.function for d in parsed.declarations) or ", ".join(
                n for n, v in parsed.functions.items() if isinstance(v, ast.FunctionDef) and not n.startswith("_")
            )
            raise CutediffError(
                f"{label} has no function {function!r}.",
                f"Its recipes: {found}." if found else "Define it at the top level of the file.",
            )
        doc = _first_line(ast.get_docstring(node)) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
        return Declaration(function, getattr(node, "lineno", 0), False, summary=doc)
    if len(parsed.declarations) == 1:
        return parsed.declarations[0]
    if len(parsed.declarations) > 1:
        names = ", ".join(d.function for d in parsed.declarations)
        raise CutediffError(
            f"{label} declares {len(parsed.declarations)} recipes ({names}).",
            f"Name one, e.g. {label.split()[-1]}:{parsed.declarations[0].function}.",
        )
    node = parsed.functions.get("recipe")
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return Declaration("recipe", node.lineno, False, summary=_first_line(ast.get_docstring(node)))
    raise CutediffError(
        f"{label} declares no recipe.",
        "Decorate the function with @recipe (from cutediff_tui.core.recipes), or name it as FILE.py:FUNCTION.",
    )


def bench_hook(parsed: ParsedFile, d: Declaration, label: str) -> str:
    """The bench hook's function name: declared with ``bench=``, else a top-level ``bench``."""
    if d.bench:
        if d.bench not in parsed.functions:
            raise CutediffError(
                f"{label} declares bench={d.bench!r} for {d.function}, but defines no function of that name.",
                f"Define {d.bench}(ctx) in the same file or correct the name.",
            )
        return d.bench
    return "bench" if "bench" in parsed.functions and d.function != "bench" else ""


def file_recipe(
    path: Path, function: str | None = None, *, name: str | None = None, label: str | None = None
) -> RecipeInfo:
    """The :class:`RecipeInfo` of a recipe in a file (read with ast)."""
    label = label or f"Recipe file {display(path)}"
    parsed = parse_file(path, what=label)
    d = pick(parsed, function, label)
    helpers = local_imports(path, parsed.tree)
    ref_name = name or f"{display(path)}:{d.function}"
    check_helpers(helpers, ref_name)
    hook = bench_hook(parsed, d, label)
    return RecipeInfo(
        name=ref_name,
        summary=d.summary or (d.name or ""),
        entry=f"{path.resolve()}:{d.function}",
        params=d.params,
        archs=d.archs,
        needs=d.needs,
        source_files=tuple(str(h) for h in helpers),
        kind="file",
        path=str(path.resolve()),
        bench=f"{path.resolve()}:{hook}" if hook else "",
    )


def find_module_file(module: str, search: list[str] | tuple[str, ...] = ()) -> Path | None:
    """The file of ``module`` by walking folders, importing nothing (not even parent packages)."""
    parts = module.split(".")
    bases = [*search, *[p for p in sys.path if p and Path(p).is_dir()]]
    for base in bases:
        b = Path(base).joinpath(*parts)
        for cand in (b.with_suffix(".py"), b / "__init__.py"):
            if cand.is_file():
                return cand
    return None


def resolve_reference(ref: str, *, search: list[str] | tuple[str, ...] = ()) -> RecipeInfo:
    """A recipe file or module reference → :class:`RecipeInfo` (one-sentence errors)."""
    head, function = split_reference(ref)
    looks_like_file = head.endswith(".py") or "/" in head or os.sep in head or Path(head).exists()
    if looks_like_file:
        path = Path(head).expanduser()
        if not path.exists():
            raise CutediffError(f"Recipe file {head} does not exist.", "Check the path given to --recipe.")
        if path.is_dir():
            init = path / "__init__.py"
            if not init.is_file():
                raise CutediffError(f"Recipe {head} is a folder, not a Python file.", "Name the recipe's .py file.")
            path = init
        return file_recipe(path, function)
    found = find_module_file(head, search)
    if found is None:
        # Only the toolchain may have it (a pinned package): parameters cannot be read here.
        if function is None:
            raise CutediffError(
                f"Module {head} is not on this machine's Python path, so cutediff cannot read which recipe it declares.",
                f"Name the function ({head}:FUNCTION), or pin its source folder with --with.",
            )
        return RecipeInfo(
            ref,
            f"{head}.{function} (declaration not readable here)",
            f"{head}:{function}",
            (),
            ALL_ARCHS,
            kind="module",
            strict=False,
        )
    label = f"Recipe module {head} ({display(found)})"
    parsed = parse_file(found, what=label)
    d = pick(parsed, function, label)
    helpers = [h for h in local_imports(found, parsed.tree)]
    hook = bench_hook(parsed, d, label)
    return RecipeInfo(
        name=f"{head}:{d.function}",
        summary=d.summary or (d.name or ""),
        entry=f"{head}:{d.function}",
        params=d.params,
        archs=d.archs,
        needs=d.needs,
        source_files=(str(found.resolve()), *(str(h) for h in helpers)),
        kind="module",
        path=str(found.resolve()),
        bench=f"{head}:{hook}" if hook else "",
    )


def list_file(ref: str, *, search: list[str] | tuple[str, ...] = ()) -> list[RecipeInfo]:
    """Every recipe a file or module declares (for ``cutediff recipes FILE``)."""
    head, function = split_reference(ref)
    if function is not None:
        return [resolve_reference(ref, search=search)]
    path = Path(head).expanduser()
    if not (head.endswith(".py") or path.exists()):
        found = find_module_file(head, search)
        if found is None:
            return [resolve_reference(ref, search=search)]
        parsed = parse_file(found, what=f"Recipe module {head}")
        decls = parsed.declarations or [pick(parsed, None, f"Recipe module {head}")]
        return [resolve_reference(f"{head}:{d.function}", search=search) for d in decls]
    parsed = parse_file(path)
    decls = parsed.declarations or [pick(parsed, None, f"Recipe file {display(path)}")]
    return [file_recipe(path, d.function) for d in decls]
