"""The cutediff Textual app: themes, settings, the global keys and the screens.

| key       | action                                  |
|-----------|-----------------------------------------|
| ?         | help (every key)                        |
| q, ctrl+c | quit                                    |
| ctrl+p    | command palette ("area: verb" commands) |

The screen keys are listed in :mod:`cutediff_tui.ui.screens.main`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on
from textual.app import App
from textual.binding import Binding

from ..samples import is_bundled_sample
from .commands import CutediffCommands
from .messages import LiveCompiling, LiveError, LiveResult
from .screens.main import MainScreen
from .settings import Settings, load_settings, save_settings
from .themes import DEFAULT_THEME, domain_defaults, load_themes

if TYPE_CHECKING:
    from .live import LiveWatch, WatchSpec

__all__ = ["SAMPLE_NOTE", "CutediffApp"]

#: The first line a new user reads: what the bundled sample is and how to compare their own kernel.
SAMPLE_NOTE = (
    "This is the bundled sample: FlashAttention-4 for sm_103a built with CuTe DSL 4.5.1 (A) and 4.8.0 (B), "
    "where 4.8.0 spills. Compare your own kernel with c here, or run "
    "`cutediff compare A B --recipe my_recipe.py` (docs/quickstart.md)."
)


class CutediffApp(App[None]):
    """Side-by-side comparison of one recipe compiled by two CuTe DSL toolchains."""

    TITLE = "cutediff"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {CutediffCommands}
    # Textual annotates it `ClassVar[...] | None`, which mypy reads as an instance variable
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (100, "-wide")]  # type: ignore[misc]

    BINDINGS = [
        Binding("q,ctrl+c", "quit", "Quit", id="app.quit", tooltip="Leave cutediff"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="List every key"),
    ]

    def __init__(
        self,
        comparison: dict,
        source: Path | None = None,
        *,
        versions: list[str] | None = None,
        installed: set[str] | None = None,
        gpu_probe: dict | Literal[False] | None = False,
        watch: WatchSpec | None = None,
    ) -> None:
        """Open ``comparison`` (a ``cutediff.comparison/2`` dict).

        Args:
            comparison: the comparison to show.
            source: the file it was read from (shown in the title).
            versions: DSL versions for the compare dialog (None: ask the package index).
            installed: versions with an environment already (None: look them up).
            gpu_probe: what the bench pane reports as the GPU (False: run nvidia-smi).
            watch: recompile on every save of these sources and refresh in place (``--watch``).
        """
        super().__init__()
        from cutediff_tui.core.sanitize import visible_strings

        self.comparison = visible_strings(comparison)  # no raw control character reaches the screen
        self.source = source
        self.versions = versions
        self.installed = installed
        self.gpu_probe = gpu_probe
        self.watch_spec = watch
        self.live: LiveWatch | None = None
        self.settings: Settings = load_settings()
        loaded = load_themes()
        self.theme_problems = loaded.problems
        for theme in loaded.themes:
            self.register_theme(theme)
        wanted = self.settings.theme
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME
        if source is not None:
            self.sub_title = str(source)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Domain variables ($diff-added, $spill...) for themes that do not define them."""
        return domain_defaults(self.current_theme)

    def on_mount(self) -> None:
        self.push_screen(MainScreen(self.comparison, normalised=self.settings.normalise))
        if is_bundled_sample(self.source):
            self.notify(SAMPLE_NOTE, title="bundled sample", timeout=20, markup=False)
        for problem in self.theme_problems:
            self.notify(f"Theme file skipped: {problem}", severity="warning", timeout=6, markup=False)
        from cutediff_tui.core import warm

        warm.enable()  # compiles of this session (watch, the compare dialog) share warm workers
        if self.watch_spec is not None:
            self.start_watch()

    def on_unmount(self) -> None:
        from cutediff_tui.core import warm

        self.stop_watch()
        warm.disable()

    # ------------------------------------------------------------------ watch

    def start_watch(self) -> None:
        """Recompile on every save of the recipe's sources (see :mod:`.live`)."""
        from .live import LiveWatch, spec_from_comparison

        if self.live is None:
            if self.watch_spec is None:
                from cutediff_tui.core.errors import CutediffError

                try:
                    self.watch_spec = spec_from_comparison(self.comparison)
                except CutediffError as exc:
                    self.notify(exc.sentence(), title="watch", severity="warning", timeout=8, markup=False)
                    return
            self.live = LiveWatch(self, self.watch_spec)
        self.live.start()
        names = ", ".join(p.name for p in self.live.files()[:3])
        self.notify(f"Watching {names}: save to recompile; W stops.", title="watch", timeout=5, markup=False)

    def stop_watch(self) -> None:
        """Stop watching (a compile in flight is cancelled; the warm workers stop)."""
        if self.live is not None and self.live.running:
            self.live.stop()
            self.watch_spec = self.live.spec

    def toggle_watch(self) -> None:
        if self.live is not None and self.live.running:
            self.stop_watch()
            for screen in self._main_screens():
                screen.live_idle()
            self.notify("Stopped watching.", title="watch", timeout=3)
        else:
            self.start_watch()

    def _main_screens(self) -> list[MainScreen]:
        return [s for s in self.screen_stack if isinstance(s, MainScreen)]

    @on(LiveCompiling)
    def live_compiling(self, message: LiveCompiling) -> None:
        for screen in self._main_screens():
            screen.post_message(LiveCompiling(message.sides, message.files))

    @on(LiveError)
    def live_error(self, message: LiveError) -> None:
        for screen in self._main_screens():
            screen.post_message(LiveError(message.error, message.change))

    @on(LiveResult)
    def live_result(self, message: LiveResult) -> None:
        from cutediff_tui.core.sanitize import visible_strings

        comparison = visible_strings(message.comparison)
        if not any(v.get("error") for v in (comparison.get("sides") or {}).values()):
            self.comparison = comparison
        for screen in self._main_screens():  # the screen refreshes in its own context
            screen.post_message(LiveResult(comparison, message.change, message.models))

    def live_views(self) -> list[tuple[str, str]]:
        """The (kernel name, view) each main screen shows (read from the watch's thread)."""
        return [(str(s.kernel.get("name")), s.view) for s in self._main_screens() if s.comparison.get("kernels")]

    def watched_files(self) -> list[Path]:
        """The files the watch follows now (none when not watching)."""
        return self.live.files() if self.live is not None else []

    def watch_theme(self, theme: str) -> None:
        if self.is_running and theme != self.settings.theme:
            self.remember(theme=theme)

    def remember(self, **changes: object) -> None:
        """Update and save the settings (theme, normalisation)."""
        changed = False
        for key, value in changes.items():
            if getattr(self.settings, key, None) != value:
                setattr(self.settings, key, value)
                changed = True
        if changed:
            save_settings(self.settings)

    # ------------------------------------------------------------------ actions

    def help_groups(self) -> list[tuple[str, list[Binding]]]:
        """Bindings grouped for the help screen."""
        from .screens.compare import CompareScreen

        main = [b for b in MainScreen.BINDINGS if isinstance(b, Binding)]
        groups: dict[str, list[Binding]] = {}
        names = {
            "cursor": "move",
            "scroll": "move",
            "hunk": "changes",
            "spill": "changes",
            "kernel": "kernels",
            "view": "views",
            "focus": "views",
            "search": "find",
            "copy": "copy",
            "jump": "find",
            "compare": "compare",
            "bench": "other",
            "export": "other",
        }
        for b in main:
            area = names.get((b.id or "").split(".")[0], "other")
            groups.setdefault(area, []).append(b)
        groups.setdefault("app", []).extend(b for b in self.BINDINGS if isinstance(b, Binding))
        groups["compare dialog"] = [b for b in CompareScreen.BINDINGS if isinstance(b, Binding)]
        order = ["move", "changes", "kernels", "views", "find", "copy", "compare", "other", "app", "compare dialog"]
        return [(k, groups[k]) for k in order if k in groups]

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.help_groups()))

    def open_compare_dialog(self) -> None:
        """Show the new-comparison dialog; a finished compile replaces the comparison."""
        from .screens.compare import CompareScreen

        self.push_screen(
            CompareScreen(self.comparison, versions=self.versions, installed=self.installed),
            self._compare_done,
        )

    def _compare_done(self, comparison: dict | None) -> None:
        if comparison:
            self.open_comparison(comparison)

    def open_comparison(self, comparison: dict) -> None:
        """Show another comparison in place of the current one (a watch of the old one stops)."""
        self.stop_watch()
        self.live, self.watch_spec = None, None
        self.comparison = comparison
        self.switch_screen(MainScreen(comparison, normalised=self.settings.normalise))
        errors = [f"{s.upper()}: {v['error']}" for s, v in comparison.get("sides", {}).items() if v.get("error")]
        for e in errors:
            self.notify(e, title="side failed", severity="error", timeout=10, markup=False)
