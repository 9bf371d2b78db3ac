"""Import rules import-linter cannot state: no import cycles among the package's modules (deferred
imports inside functions count too) and no ``_private`` name imported from another module.

Usage: python .ci/check_imports.py [PACKAGE_DIR]   (default: cutediff_tui next to this folder)
Prints each problem and exits 1 when there is one. Pure ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the package folder ``root``."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = f.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _base(mods: dict[str, Path], cur: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = cur.split(".") if mods[cur].name == "__init__.py" else cur.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _owner(mods: dict[str, Path], name: str) -> str | None:
    while name and name not in mods and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in mods else None


def scan(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """The import graph among the package's modules and the private-name imports found. A name
    imported from a package (``from ..recipes import RecipeInfo``) is an edge to its ``__init__``,
    whose own imports run first: a face that imports the module importing it is a circle."""
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private: list[str] = []
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"), str(f))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = _base(mods, m, node)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)
                    if base in mods and sub not in mods and a.name.startswith("_") and not a.name.startswith("__"):
                        private.append(f"{f}:{node.lineno}: {m} imports the private name {a.name} from {base}")
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                owner = _owner(mods, t)
                if owner and owner != m:  # a name taken from a package face is an edge to its __init__
                    edges[m].add(owner)
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "cutediff_tui"
    edges, private = scan(root.resolve())
    problems = [f"import cycle: {' -> '.join(c)}" for c in cycles(edges)] + private
    for p in problems:
        print(p)
    print(f"{len(edges)} modules: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
