"""Headless smoke test of an installed cutediff: the bundled sample opens, all three themes
exist, the listings load and a few keys work. Exit 0 when all is well, 1 with a reason otherwise.

Run it with the Python of the environment under test, from a folder outside the checkout, so
that the installed package (not the source tree) is imported.
"""

from __future__ import annotations

import asyncio
import sys


async def smoke() -> list[str]:
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.samples import default_sample
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.screens.main import MainScreen

    problems: list[str] = []
    path = default_sample()
    app = CutediffApp(load_json(path), source=path, versions=["4.5.1", "4.8.0"], installed=set(), gpu_probe=None)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        screen = app.screen
        if not isinstance(screen, MainScreen):
            return [f"the first screen is {type(screen).__name__}, not MainScreen"]
        themes = {"cutediff-dark", "cutediff-light", "cutediff-high-contrast"} - set(app.available_themes)
        if themes:
            problems.append(f"themes missing: {', '.join(sorted(themes))}")
        if screen.model is None or len(screen.model.rows) < 100:
            problems.append("the SASS listing of the first kernel did not load")
        await pilot.press("s", "question_mark", "escape", "2")
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        if screen.view != "ptx" or screen.model is None:
            problems.append("key 2 did not show the PTX listing")
        print(f"ok: {path} opened, {len(app.available_themes)} themes, {len(screen.model.rows)} PTX rows")
    if app.return_code:
        problems.append(f"the app ended with return code {app.return_code}")
    return problems


def main() -> int:
    problems = asyncio.run(smoke())
    for p in problems:
        print(f"TUI smoke: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
