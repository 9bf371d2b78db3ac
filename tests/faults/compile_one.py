"""A cutediff process that compiles one recipe file (used by the fault tests to run several at once,
or to kill one): ``python compile_one.py CACHE RECIPE_FILE ARCH``; prints the build as one JSON line."""

from __future__ import annotations

import json
import os
import sys


def main() -> int:
    cache, recipe_file, arch = sys.argv[1:4]
    os.environ["CUTEDIFF_CACHE_DIR"] = cache
    from cutediff_tui.core.build import BuildRequest, compile_build
    from cutediff_tui.core.errors import CutediffError
    from cutediff_tui.core.events import render_event
    from cutediff_tui.core.gpu import resolve_profile
    from cutediff_tui.core.recipes import RecipeInfo
    from cutediff_tui.core.toolchain import create_env, parse_side

    env = create_env(parse_side("4.8.0", ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"]))
    rec = RecipeInfo("tiny", "fault-test recipe", f"{recipe_file}:recipe", (), (90, 100, 110, 120))
    notes: list[str] = []
    try:
        b = compile_build(
            BuildRequest(env, rec, {}, resolve_profile(arch=arch)), progress=lambda e: notes.append(render_event(e))
        )
    except CutediffError as exc:
        print(json.dumps({"error": exc.sentence(), "notes": notes}), flush=True)
        return 2
    print(
        json.dumps(
            {
                "key": b.key,
                "path": str(b.path),
                "from_cache": b.from_cache,
                "repaired": b.repaired,
                "kernels": len(b.kernels),
                "notes": notes,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
