"""Command palette provider: every action of the app as an ``"area: verb"`` command.

| area      | commands                                                                 |
|-----------|--------------------------------------------------------------------------|
| view      | SASS, PTX, MLIR, ptxas log, next/previous hunk, next/previous spill site, |
|           | next largest hunk, next marked hunk, what changed,                       |
|           | toggle register normalisation, search, jump to address or line          |
| kernel    | next, previous, and one "kernel: show NAME" per kernel                   |
| compare   | new, cross-check with ptxas versions                                     |
| export    | report to a file (asks format and name); copy report / hunk / rows       |
| bench     | open pane                                                                |
| theme     | dark, light, high-contrast (and any other theme file)                    |
| app       | help, quit                                                               |
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .themes import short_name

__all__ = ["CutediffCommands"]

#: (name, help, action on the main screen)
SCREEN_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("view: SASS", "Show the SASS of both sides, aligned", "view('sass')"),
    ("view: PTX", "Show the PTX of both sides, aligned", "view('ptx')"),
    ("view: MLIR", "Show the kept MLIR of both sides", "view('mlir')"),
    ("view: ptxas log", "Show resources, compiler remarks and the compile log", "view('log')"),
    ("view: next hunk", "Move to the next changed hunk (d)", "hunk(1)"),
    ("view: previous hunk", "Move to the previous changed hunk", "hunk(-1)"),
    ("view: next largest hunk", "The largest hunk, then the next smaller one (r)", "ranked_hunk(1)"),
    ("view: next marked hunk", "The next hunk changing spill code, an MMA or a register budget (m)", "marked_hunk(1)"),
    ("view: what changed", "The kernel's ranked changes; enter jumps to where one shows (w)", "changes"),
    ("view: next spill site", "Move to the next spill store/load (B when B spills)", "spill(1)"),
    ("view: previous spill site", "Move to the previous spill store/load", "spill(-1)"),
    ("view: toggle register normalisation", "Show registers without numbers (R12 → R•)", "toggle_normalise"),
    ("view: search", "Search the focused side (regex, fuzzy fallback); n / N repeat it", "search"),
    ("view: jump to address or line", "Jump to 0x6630, .L_x_12, 925 or mask.py:680", "jump"),
    ("kernel: next", "Show the next kernel", "kernel(1)"),
    ("kernel: previous", "Show the previous kernel", "kernel(-1)"),
    ("compare: new", "Compile a new comparison: pick DSL A and B", "new_compare"),
    ("compare: cross-check with ptxas versions", "Re-assemble both PTXs with other ptxas versions", "crosscheck"),
    ("export: report to a file", "Markdown, HTML or JSON; asks for the name, never overwrites silently", "export"),
    ("export: copy report to clipboard", "The Markdown report, through the terminal (OSC 52)", "copy_report"),
    ("export: copy hunk to clipboard", "The hunk under the cursor as a diff", "copy_hunk"),
    ("export: copy selected rows", "The selected rows (v) of the active side, else the cursor row", "copy_rows"),
    ("bench: open pane", "Time A and B on the local GPU, interleaved (or show the recorded bench)", "bench"),
)
APP_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("app: help", "List every key", "help"),
    ("app: quit", "Leave cutediff", "quit"),
)


class CutediffCommands(Provider):
    """cutediff's commands for the command palette (ctrl+p)."""

    def _commands(self) -> list[tuple[str, str, Callable]]:
        from .screens.main import MainScreen

        out: list[tuple[str, str, Callable]] = []
        screen = self.screen
        if isinstance(screen, MainScreen):
            for name, help_text, action in SCREEN_COMMANDS:
                out.append((name, help_text, partial(self.app.run_action, action, screen)))
            for i, k in enumerate(screen.comparison.get("kernels") or []):
                out.append(
                    (
                        f"kernel: show {k.get('name', i)}",
                        "Show this kernel",
                        partial(setattr, screen, "kernel_index", i),
                    )
                )
        for theme in sorted(self.app.available_themes):
            if theme.startswith("cutediff-"):
                out.append(
                    (
                        f"theme: {short_name(theme)}",
                        f"Switch to the {short_name(theme)} theme (remembered)",
                        partial(setattr, self.app, "theme", theme),
                    )
                )
        for name, help_text, action in APP_COMMANDS:
            out.append((name, help_text, partial(self.app.run_action, action)))
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
