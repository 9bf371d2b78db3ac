"""Print the project's runtime dependencies pinned to their declared floors (``name>=X`` ->
``name==X``), one per line, for the lowest-versions CI job (.ci/min_versions.sh)."""

from __future__ import annotations

import sys
from pathlib import Path

import tomllib
from packaging.markers import default_environment
from packaging.requirements import Requirement


def floors(pyproject: Path) -> list[str]:
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    out = []
    for text in deps:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate(default_environment()):
            continue
        low = [s.version for s in req.specifier if s.operator == ">="]
        if not low:
            sys.exit(f"{req.name} has no >= floor in pyproject.toml; give it one so CI can test it")
        out.append(f"{req.name}=={low[0]}")
    return out


if __name__ == "__main__":
    print("\n".join(floors(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml"))))
