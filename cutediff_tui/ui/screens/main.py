"""The main screen: two synchronised code panes, the source behind the cursor, metrics.

| key              | action                                                     |
|------------------|------------------------------------------------------------|
| j / k, ↓ / ↑     | cursor down / up                                           |
| g / G            | first / last row                                           |
| ctrl+d / ctrl+u  | half a page down / up                                      |
| h / l, ← / →     | scroll left / right                                        |
| n / N            | next / previous match of the last search ("match 3/44")    |
| d / D            | next / previous changed hunk (register renames are skipped) |
| s / S            | next / previous spill site (B when B spills)               |
| r / R            | next smaller / larger hunk by size ("hunk 2/17 · 34 lines") |
| m / M            | next / previous hunk changing spill code, an MMA or a budget |
| w                | what changed: ranked changes, enter jumps to where it shows |
| [ / ]            | previous / next kernel                                     |
| 1 2 3 4          | SASS, PTX, MLIR, ptxas log                                 |
| tab / shift+tab  | next / previous pane                                       |
| /                | search (regex, fuzzy when nothing matches; empty repeats)  |
| v                | select rows (from here to the cursor; v again clears)      |
| y / Y            | copy the selected rows (or the cursor row) / the hunk      |
| :                | jump to an address (0x6630), label or source line (mask.py:680) |
| o                | toggle register normalisation                              |
| c                | new comparison                                             |
| x                | cross-check with other ptxas versions                      |
| b                | benchmark pane                                             |
| e                | export the report: pick the format and the file, or copy it |
| w                | watch the recipe's sources: recompile and refresh on save (w again stops) |
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from cutediff_tui.core.sanitize import truncate
from cutediff_tui.core.trace import stamp

from ..live import LiveBanner, error_for_side
from ..messages import (
    CrosscheckFinished,
    LiveCompiling,
    LiveError,
    LiveResult,
    ModelProgress,
    ModelReady,
    ReportWritten,
)
from ..model import VIEW_TITLES, VIEWS, PaneModel, build_model, is_big, parse_jump
from ..widgets.bars import ColumnHeader, PaneTitle, ViewBar
from ..widgets.code_pane import CodePane
from ..widgets.header import ComparisonHeader, side_label
from ..widgets.kernel_list import VIRTUAL_FROM, KernelHighlighted, KernelList, VirtualKernelList, kernel_list
from ..widgets.metrics import MetricsPane
from ..widgets.source_pane import SourcePane
from .hunk_nav import HUNK_BINDINGS, HunkNavigation, hunk_status

if TYPE_CHECKING:
    from ..model import CodeLine

__all__ = ["MainScreen", "MIN_SIZE"]

#: Smallest terminal (columns, rows) the layout is drawn for.
MIN_SIZE = (60, 16)
OTHER = {"a": "b", "b": "a"}


def changed_figures(old: dict, new: dict) -> set[str]:
    """Names of the resource figures whose A or B value differs between two versions of a kernel."""
    from ..widgets.metrics import resource_rows

    before = {r[0]: r[2:4] for r in resource_rows(old)}
    return {r[0] for r in resource_rows(new) if before.get(r[0]) != r[2:4]}


def _sentence(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    s = getattr(exc, "sentence", None)
    return s() if callable(s) else f"{type(exc).__name__}: {exc}"


class MainScreen(HunkNavigation, Screen[None]):
    """The comparison of one kernel at a time (see the module docstring for the keys)."""

    AUTO_FOCUS = "#pane-b"

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Down", show=False, id="cursor.down", tooltip="Move the cursor down a row"),
        Binding("k,up", "cursor(-1)", "Up", show=False, id="cursor.up", tooltip="Move the cursor up a row"),
        Binding("g,home", "cursor_to('top')", "Top", show=False, id="cursor.top", tooltip="Go to the first row"),
        Binding("G,end", "cursor_to('bottom')", "Bottom", show=False, id="cursor.bottom", tooltip="Go to the last row"),
        Binding(
            "ctrl+d,pagedown",
            "half_page(1)",
            "Half page down",
            show=False,
            id="cursor.half-page-down",
            tooltip="Move half a page down",
        ),
        Binding(
            "ctrl+u,pageup",
            "half_page(-1)",
            "Half page up",
            show=False,
            id="cursor.half-page-up",
            tooltip="Move half a page up",
        ),
        Binding("h,left", "scroll_x(-8)", "Left", show=False, id="scroll.left", tooltip="Scroll both panes left"),
        Binding("l,right", "scroll_x(8)", "Right", show=False, id="scroll.right", tooltip="Scroll both panes right"),
        Binding("d", "hunk(1)", "Hunk", id="hunk.next", tooltip="Next changed hunk (register renames are skipped)"),
        Binding("D", "hunk(-1)", "Prev hunk", show=False, id="hunk.previous", tooltip="Previous changed hunk"),
        *HUNK_BINDINGS,
        Binding(
            "s",
            "spill(1)",
            "Spill",
            id="spill.next",
            tooltip="Next spill store/load (in B when B spills) and its source line",
        ),
        Binding("S", "spill(-1)", "Prev spill", show=False, id="spill.previous", tooltip="Previous spill store/load"),
        Binding(
            "left_square_bracket",
            "kernel(-1)",
            "Prev kernel",
            show=False,
            id="kernel.previous",
            tooltip="Show the previous kernel",
        ),
        Binding(
            "right_square_bracket", "kernel(1)", "Kernel", show=False, id="kernel.next", tooltip="Show the next kernel"
        ),
        Binding("1", "view('sass')", "SASS", show=False, id="view.sass", tooltip="Show SASS (aligned by instruction)"),
        Binding("2", "view('ptx')", "PTX", show=False, id="view.ptx", tooltip="Show PTX (aligned by instruction)"),
        Binding(
            "3", "view('mlir')", "MLIR", show=False, id="view.mlir", tooltip="Show the kept MLIR (aligned by line)"
        ),
        Binding(
            "4",
            "view('log')",
            "Log",
            show=False,
            id="view.log",
            tooltip="Show the ptxas resources, compiler remarks and compile log",
        ),
        Binding("tab", "app.focus_next", "Focus", show=False, id="focus.next", tooltip="Focus the next pane"),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Focus back",
            show=False,
            id="focus.previous",
            tooltip="Focus the previous pane",
        ),
        Binding(
            "slash",
            "search",
            "Search",
            id="search",
            tooltip="Search the focused side: a regex, fuzzy when nothing matches; empty repeats",
        ),
        Binding(
            "n", "search_next(1)", "Next match", show=False, id="search.next", tooltip="Next match of the last search"
        ),
        Binding(
            "N",
            "search_next(-1)",
            "Prev match",
            show=False,
            id="search.previous",
            tooltip="Previous match of the last search",
        ),
        Binding(
            "v",
            "select",
            "Select",
            show=False,
            id="copy.select",
            tooltip="Select rows from here to the cursor (v again clears the selection)",
        ),
        Binding(
            "y",
            "copy_rows",
            "Copy",
            show=False,
            id="copy.rows",
            tooltip="Copy the selected rows (else the cursor row) of the active side to the clipboard",
        ),
        Binding(
            "Y",
            "copy_hunk",
            "Copy hunk",
            show=False,
            id="copy.hunk",
            tooltip="Copy the hunk under the cursor as a diff (- A, + B) to the clipboard",
        ),
        Binding(
            "colon",
            "jump",
            "Jump",
            id="jump",
            tooltip="Jump to an address (0x6630), a label (.L_x_12) or a source line (925, mask.py:680)",
        ),
        Binding(
            "o",
            "toggle_normalise",
            "Normalise",
            id="view.normalise",
            tooltip="Show registers without numbers (R12 → R•); hides register-allocation noise",
        ),
        Binding("c", "new_compare", "Compare", id="compare.new", tooltip="Compile a new comparison (pick DSL A and B)"),
        Binding(
            "x",
            "crosscheck",
            "Cross-check",
            show=False,
            id="compare.crosscheck",
            tooltip="Re-assemble both PTXs with other ptxas versions",
        ),
        Binding(
            "b",
            "bench",
            "Bench",
            show=False,
            id="bench.open",
            tooltip="The benchmark pane: time A and B on the local GPU",
        ),
        Binding(
            "W",
            "watch",
            "Watch",
            show=False,
            id="compare.watch",
            tooltip="Watch the recipe's sources: recompile the changed side on save and refresh here (W stops)",
        ),
        Binding(
            "e",
            "export",
            "Export",
            id="export.report",
            tooltip="Export the report: Markdown, HTML or JSON to a file, or Markdown to the clipboard",
        ),
    ]

    cursor: var[int] = var(0, init=False)
    """Row of the cursor in the aligned rows (shared by both panes)."""
    view: var[str] = var("sass", init=False)
    """Which listing the panes show: sass, ptx, mlir or log."""
    normalised: var[bool] = var(False, init=False)
    """Registers shown without numbers."""
    kernel_index: var[int] = var(0, init=False)
    """Index of the kernel shown."""
    active_side: var[str] = var("b", init=False)
    """Side whose line the source pane, search and jump use (the focused pane's side)."""
    selection_anchor: var[int | None] = var(None, init=False)
    """Row where the selection (``v``) starts; None when nothing is selected."""

    def __init__(self, comparison: dict, *, normalised: bool = False) -> None:
        super().__init__()
        self.comparison = comparison
        self.models: dict[tuple[int, str], PaneModel] = {}
        self.model: PaneModel | None = None
        self._cursors: dict[tuple[int, str], int] = {}
        self._pending: tuple[str, int] | None = None
        self._last_search = ""
        self._matches: dict[tuple[int, str, str, str], list[int]] = {}
        self.search_status = ""
        """The match counter of the last search ("match 3/44"), shown in the view bar."""
        self._syncing = False
        self.live_state: dict[str, tuple[str, str]] = {}
        """Per side: the watch state ("compiling" / "stale" / "error") and its text, kept over a refresh."""
        self._keep: tuple | None = None
        self._staged: dict[tuple[int, str], PaneModel] = {}
        """Partial models (a big listing's raw view) shown while their loader runs."""
        self._big_key: tuple[int, str] | None = None
        """The (kernel, view) the big-listing loader is working on."""
        self.generation = 0
        """How many recompiled comparisons the watch has swapped in: a listing loaded for an
        older one is dropped when it arrives."""
        self.set_reactive(MainScreen.normalised, normalised)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        c = self.comparison
        yield ComparisonHeader(c, id="header")
        with Horizontal(id="body"):
            with VerticalScroll(id="sidebar"):
                yield Static("kernels", classes="section-title", id="kernels-title")
                yield kernel_list(c.get("kernels", []), id="kernels")
                yield MetricsPane(c, id="metrics")
            with Vertical(id="main"):
                yield ViewBar(id="viewbar")
                with Horizontal(id="panes"):
                    for s in ("a", "b"):
                        with Vertical(classes="side", id=f"side-{s}"):
                            yield PaneTitle(s, id=f"title-{s}")
                            yield ColumnHeader(id=f"columns-{s}")
                            # the watch banner (LiveBanner) is mounted here when it first has news
                            yield CodePane(s, id=f"pane-{s}").data_bind(
                                cursor=MainScreen.cursor, normalised=MainScreen.normalised
                            )
                yield SourcePane(c, id="source")
        yield Static("", id="too-small")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._wire()

    def _wire(self) -> None:
        a, b = self.query_one("#pane-a", CodePane), self.query_one("#pane-b", CodePane)
        self.watch(a, "scroll_y", lambda y: self._sync_scroll(b, y=y), init=False)
        self.watch(b, "scroll_y", lambda y: self._sync_scroll(a, y=y), init=False)
        self.watch(a, "scroll_x", lambda x: self._sync_scroll(b, x=x), init=False)
        self.watch(b, "scroll_x", lambda x: self._sync_scroll(a, x=x), init=False)
        self._check_size()
        for s, (state, text) in self.live_state.items():
            self._live(s, state, text)
        self._show_kernel()

    def on_resize(self) -> None:
        self._check_size()

    def _check_size(self) -> None:
        w, h = self.app.size
        small = w < MIN_SIZE[0] or h < MIN_SIZE[1]
        self.set_class(small, "-too-small")
        if small:
            self.query_one("#too-small", Static).update(
                f"cutediff needs at least {MIN_SIZE[0]}×{MIN_SIZE[1]}; this terminal is {w}×{h}."
            )

    def _sync_scroll(self, other: CodePane, x: float | None = None, y: float | None = None) -> None:
        if x is not None:
            self._update_columns(round(x))
        if self._syncing:
            return
        self._syncing = True
        try:
            if y is not None and round(other.scroll_y) != round(y):
                other.scroll_to(y=y, animate=False, immediate=True)
            if x is not None and round(other.scroll_x) != round(x):
                other.scroll_to(x=x, animate=False, immediate=True)
        finally:
            self._syncing = False

    # ------------------------------------------------------------------ state

    @property
    def kernel(self) -> dict:
        return self.comparison["kernels"][self.kernel_index] if self.comparison.get("kernels") else {}

    def pane(self, side: str) -> CodePane:
        return self.query_one(f"#pane-{side}", CodePane)

    def validate_cursor(self, value: int) -> int:
        n = len(self.model.rows) if self.model else 0
        return max(0, min(value, n - 1)) if n else 0

    def watch_cursor(self) -> None:
        self._cursor_moved()
        if self.selection_anchor is not None:
            self._show_selection()

    def watch_selection_anchor(self) -> None:
        self._show_selection()

    def selected_rows(self) -> tuple[int, int] | None:
        """First and last selected row, or None when nothing is selected."""
        if self.selection_anchor is None:
            return None
        return (min(self.selection_anchor, self.cursor), max(self.selection_anchor, self.cursor))

    def _show_selection(self) -> None:
        sel = self.selected_rows()
        for s in ("a", "b"):
            self.pane(s).selection = sel

    def watch_active_side(self, side: str) -> None:
        for s in ("a", "b"):
            self.query_one(f"#title-{s}", PaneTitle).set_class(s == side, "-active")
        self._cursor_moved()

    def watch_view(self) -> None:
        self._show_view()

    def watch_kernel_index(self) -> None:
        self._show_kernel()

    def watch_normalised(self, value: bool) -> None:
        self._update_status()
        save = getattr(self.app, "remember", None)
        if callable(save):
            save(normalise=value)

    def _show_kernel(self) -> None:
        kernels = self.comparison.get("kernels") or []
        header = self.query_one(ComparisonHeader)
        if not kernels:
            header.show_kernel("no kernels", 0, 0)
            for s in ("a", "b"):
                self.pane(s).set_model(None, self._no_kernels_note(s))
            return
        k = self.kernel
        header.show_kernel(truncate(str(k.get("name", "?")), 300), self.kernel_index, len(kernels))
        kl = cast("KernelList | VirtualKernelList", self.query_one("#kernels"))  # made by kernel_list()
        if kl.highlighted != self.kernel_index:
            kl.highlighted = self.kernel_index
        metrics = self.query_one(MetricsPane)
        metrics.show_kernel(k)
        metrics.show_pressure(self._pressure_series())
        self._show_view()

    def _pressure_series(self) -> dict[str, list[int]]:
        """Live-GPR curves per side: from the metrics, else from the loaded SASS."""
        sass = self.models.get((self.kernel_index, "sass"))
        out = {}
        for s in ("a", "b"):
            curve = ((self.kernel.get(s) or {}).get("pressure") or {}).get("curve_gpr")
            out[s] = list(curve) if curve else (sass.pressure(s) if sass else [])
        return out

    def _no_kernels_note(self, s: str) -> str:
        err = (self.comparison.get("sides", {}).get(s) or {}).get("error")
        return f"Side {s.upper()} failed: {err}" if err else "This comparison has no kernels."

    def _show_view(self) -> None:
        if not self.comparison.get("kernels"):
            return
        key = (self.kernel_index, self.view)
        model = self.models.get(key)
        if model is None and self._big_key == key and key in self._staged:
            model = self._staged[key]  # a big listing's raw view while it is aligned
        if model is None:
            self.model = None
            for s in ("a", "b"):
                self.pane(s).set_model(None, f"Loading {VIEW_TITLES[self.view]}…")
            self._update_titles()
            self._update_status()
            if self.view == "sass" and is_big(self.kernel):
                self.load_big_sass(self.kernel_index)
            else:
                self.load_model(self.kernel_index, self.view)
            return
        self._apply_model(model)

    def _apply_model(self, model: PaneModel) -> None:
        self.model = model
        self.selection_anchor = None
        self.search_status = ""  # its counter belonged to the other listing
        for s in ("a", "b"):
            self.pane(s).set_model(model)
        self._update_columns()
        want = self._cursors.get((self.kernel_index, self.view), 0)
        offset = 3
        kept = self._keep is not None and self._keep[0] == (self.kernel_index, self.view)
        if kept:
            want, offset = self._kept_row(model)
        self.set_reactive(MainScreen.cursor, self.validate_cursor(want))
        for s in ("a", "b"):
            p = self.pane(s)
            p.set_reactive(CodePane.cursor, self.cursor)
            p.scroll_to(y=max(0, self.cursor - offset), animate=False, immediate=True)
        if kept:  # freshly composed panes learn their height on the next refresh
            self.call_after_refresh(self._scroll_panes, max(0, self.cursor - offset))
            stamp("tui: model applied")
            self.call_after_refresh(stamp, "tui: painted")
        if not model.side(self.active_side).lines and model.side(OTHER[self.active_side]).lines:
            self.active_side = OTHER[self.active_side]
        self._update_titles()
        self._cursor_moved()
        if self._pending:
            action, step = self._pending
            self._pending = None
            if action == "spill":
                self.action_spill(step)
            elif action == "change":
                self.jump_to_change(step)

    # ------------------------------------------------------------------ watch

    def action_watch(self) -> None:
        toggle = getattr(self.app, "toggle_watch", None)
        if callable(toggle):
            toggle()

    def _watched(self) -> list[Path]:
        files = getattr(self.app, "watched_files", None)
        return files() if callable(files) else []

    @on(LiveCompiling)
    def live_compiling(self, message: LiveCompiling) -> None:
        """Show "compiling…" on the sides being rebuilt (their last listing stays)."""
        for s in message.sides:
            self._live(s, "compiling", f"{message.files} changed: compiling…")

    @on(LiveError)
    def live_failed(self, message: LiveError) -> None:
        sides = set(getattr(message.change, "sides", None) or ()) or {"a", "b"}
        self.live_idle()
        self.live_error(message.error, sides, self._watched())

    def live_error(self, sentence: str, sides: set[str], files: list[Path], log: str = "") -> None:
        """Show an error on ``sides`` (with the source line its ``log``'s traceback or sentence
        points at); the comparison on screen stays (the last good result)."""
        for s in sides:
            self._live(s, "error", error_for_side(sentence, files, log) + "\n(showing the last good build)")

    def live_idle(self) -> None:
        for s in ("a", "b"):
            self._live(s, "", "")

    def _live(self, side: str, state: str, text: str) -> None:
        """Show a side's watch state: "compiling" and "stale" (built anew, shown as of the last
        good pair) on its title (nothing moves), "error" in a banner above its listing (mounted on
        first use: a screen that is not watched does not carry two hidden banners), "" for none."""
        self.live_state[side] = (state, text)
        title = self.query_one(f"#title-{side}", PaneTitle)
        if state == "compiling":
            title.set_busy("⟳ compiling…")
        elif state == "stale":
            title.set_busy(f"⚠ {text}", "bold $warning")
        else:
            title.set_busy("")
        title.tooltip = text if state in ("compiling", "stale") else None
        error = text if state == "error" else ""
        found = self.live_banner(side)
        if found is not None:
            if found.message != error or found.state != ("error" if error else ""):
                found.show("error" if error else "", error)
        elif error:
            banner = LiveBanner(side, id=f"live-{side}")
            banner.show("error", error)
            self.query_one(f"#side-{side}", Vertical).mount(banner, before=f"#pane-{side}")

    def live_banner(self, side: str) -> LiveBanner | None:
        """Side ``side``'s watch banner, or None when the watch has not shown one on this screen."""
        found = self.query(f"#live-{side}")
        return found.only_one(LiveBanner) if found else None

    @on(LiveResult)
    async def live_result(self, message: LiveResult) -> None:
        """Swap in a recompiled comparison, keeping kernel, view, cursor line and scroll; flash the
        figures that changed. A side that failed keeps the last good comparison on screen.

        The widgets take the new comparison in place (a recompose costs a new layout of the whole
        screen); the view on screen arrives built by the watch (``message.models``) when it could."""
        from cutediff_tui.core.watch import cursor_anchor

        comparison, change, files = message.comparison, message.change, self._watched()
        stamp("tui: result received")
        sides = comparison.get("sides") or {}
        failed = {s: v["error"] for s, v in sides.items() if v.get("error")}
        if failed:
            self.live_idle()
            for s, err in failed.items():
                self.live_error(err, {s}, files, str(sides[s].get("error_log") or ""))
            rebuilt = set(getattr(change, "sides", None) or ()) or {"a", "b"}
            for s in sorted(rebuilt - set(failed)):  # built anew, but shown as of the last good pair
                other = "/".join(sorted(x.upper() for x in failed))
                self._live(s, "stale", f"previous save: {other} failed")
            return
        self.live_idle()
        old_kernel = self.kernel
        name = old_kernel.get("name")
        side = self.active_side
        anchor = cursor_anchor(self.model, side, self.cursor) if self.model is not None else None
        offset = self.cursor - round(self.pane(side).scroll_y)
        kernels = comparison.get("kernels") or []
        index = next(
            (i for i, k in enumerate(kernels) if k.get("name") == name),
            min(self.kernel_index, max(0, len(kernels) - 1)),
        )
        kl = cast("KernelList | VirtualKernelList", self.query_one("#kernels"))  # made by kernel_list()
        in_place = isinstance(kl, VirtualKernelList) == (len(kernels) >= VIRTUAL_FROM)
        self.comparison = comparison
        self.generation += 1
        self.models.clear()
        self._staged.clear()
        self._matches.clear()
        self._cursors.clear()
        self._keep = ((index, self.view), side, anchor, change, self.cursor, offset)
        built = message.models.get((str(kernels[index].get("name")), self.view)) if kernels else None
        if built is not None:
            self.models[(index, self.view)] = built
        self.set_reactive(MainScreen.kernel_index, index)
        if in_place:
            kl.set_kernels(kernels)
            self.query_one(ComparisonHeader).set_comparison(comparison)
            self.query_one(MetricsPane).set_comparison(comparison)
            self.query_one(SourcePane).set_comparison(comparison)
            self._show_kernel()
            stamp("tui: updated in place")
        else:  # the kernel list changes kind (a few kernels ↔ thousands): compose the screen anew
            await self.recompose()
            for _ in range(100):  # the new panes may mount a pass later
                if self.query("#pane-a") and self.query("#pane-b"):
                    break
                await asyncio.sleep(0.01)
            else:
                return  # the screen is going away; nothing to wire
            stamp("tui: recomposed")
            self._wire()
        changed = changed_figures(old_kernel, self.kernel)
        if changed:
            self.query_one(MetricsPane).flash(changed)

    def _scroll_panes(self, y: int, tries: int = 20) -> None:
        """Scroll both panes to ``y`` once they are laid out (a pane scrolls only after that)."""
        panes = [self.pane(s) for s in ("a", "b")]
        if tries and any(not p.allow_vertical_scroll for p in panes if p.max_scroll_y):
            self.set_timer(0.02, lambda: self._scroll_panes(y, tries - 1))
            return
        for p in panes:
            p.scroll_to(y=y, animate=False, immediate=True)

    def _kept_row(self, model: PaneModel) -> tuple[int, int]:
        """The row and screen offset that keep the cursor where it was before a refresh."""
        from cutediff_tui.core.watch import keep_cursor

        assert self._keep is not None
        _key, side, anchor, change, row, offset = self._keep
        self._keep = None
        kept = keep_cursor(model, side, anchor, change)
        return (row if kept is None else kept), max(0, offset)

    # ------------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="model", description="load and align listings")
    def load_model(self, kernel_index: int, view: str) -> None:
        """Build a view model off the UI thread; the result arrives as ModelReady."""
        generation = self.generation
        stamp("tui: model build started", view=view)
        model = build_model(self.comparison, kernel_index, view)
        stamp("tui: model built", view=view)
        self.post_message(ModelReady(kernel_index, view, model, generation))

    @work(exclusive=True, exit_on_error=False, group="big-listing", description="load and align a big listing")
    async def load_big_sass(self, kernel_index: int) -> None:
        """A huge kernel's SASS: the raw listing at once, the aligned view when a child process made it."""
        import contextlib

        from ..big_listing import stage_sass

        key = (kernel_index, "sass")
        self._big_key = key
        generation = self.generation
        try:
            async with contextlib.aclosing(stage_sass(self.comparison, kernel_index)) as stages:
                async for item in stages:
                    if isinstance(item, str):
                        self.post_message(ModelProgress(kernel_index, "sass", item))
                    else:
                        self.post_message(ModelReady(kernel_index, "sass", item, generation))
        finally:
            if self._big_key == key:
                self._big_key = None

    @on(ModelProgress)
    def model_progress(self, message: ModelProgress) -> None:
        staged = self._staged.get((message.kernel_index, message.view))
        if staged is not None:
            staged.pending = message.text
            if self.model is staged:
                self._update_status()

    @on(ModelReady)
    def model_ready(self, message: ModelReady) -> None:
        if message.generation != self.generation:  # loaded from a comparison since replaced
            return
        key = (message.kernel_index, message.view)
        if message.model.pending is not None:  # a partial view: shown, not kept
            if key in self.models:
                return
            self._staged[key] = message.model
        else:
            staged = self._staged.pop(key, None)
            if staged is not None and staged is self.model and hasattr(staged, "row_in"):
                self._cursors[key] = staged.row_in(message.model, self.cursor, self.active_side)
            self.models[key] = message.model
        if message.view == "sass" and message.kernel_index == self.kernel_index:
            self.query_one(MetricsPane).show_pressure(self._pressure_series())
        if (message.kernel_index, message.view) == (self.kernel_index, self.view):
            self._apply_model(message.model)

    @on(Worker.StateChanged)
    def worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        sentence = _sentence(event.worker.error)
        if event.worker.group in ("model", "big-listing"):
            for s in ("a", "b"):
                self.pane(s).set_model(None, f"Could not load {VIEW_TITLES[self.view]}: {sentence}")
        self.notify(sentence, title=event.worker.description or "error", severity="error", timeout=8, markup=False)

    # ------------------------------------------------------------------ cursor feedback

    def current_line(self, side: str | None = None) -> CodeLine | None:
        """The line under the cursor on ``side`` (default: the active side)."""
        if self.model is None:
            return None
        return self.model.line_at(self.cursor, side or self.active_side)

    def _cursor_moved(self) -> None:
        if self.model is None:
            self.query_one(SourcePane).show(self.active_side, None)
            return
        self._cursors[(self.kernel_index, self.view)] = self.cursor
        side = self.active_side
        line = self.current_line(side)
        if line is None or not line.file:
            other = OTHER[side]
            alt = self.current_line(other)
            if alt is not None and alt.file:
                side, line = other, alt
        self.query_one(SourcePane).show(side, line, (self.kernel.get(side) or {}).get("sources"))
        self._update_titles()
        self._update_status()

    def _update_columns(self, scroll_x: int | None = None) -> None:
        for s in ("a", "b"):
            pane = self.pane(s)
            x = round(pane.scroll_x) if scroll_x is None else scroll_x
            self.query_one(f"#columns-{s}", ColumnHeader).show(pane.column_header(), x)

    def _update_titles(self) -> None:
        model = self.model
        for s in ("a", "b"):
            title = self.query_one(f"#title-{s}", PaneTitle)
            label = side_label(self.comparison, s)
            if model is None:
                title.show(label)
                continue
            side = model.side(s)
            spills = len(model.spill_rows(s)) if model.view in ("sass", "ptx") else 0
            title.show(label, side.caption, spills)

    def _update_status(self) -> None:
        bar = self.query_one(ViewBar)
        model = self.model
        parts: list = []
        if model is not None and model.rows:
            hit = model.hunk_at(self.cursor)
            if hit is not None:
                _k, h = hit
                parts.append((hunk_status(model, h), "bold $diff-changed"))
                if h.summary:
                    parts.append((f" {h.summary}", "$foreground"))
                parts.append(("  ", ""))
            if model.pending:
                parts.append((model.pending, "$warning"))
                parts.append(("  ", ""))
            if model.match is not None:
                parts.append((f"{model.match.what} matched: {model.match.short()}", "$text-muted"))
                parts.append(("  ", ""))
            if self.search_status:
                parts.append((self.search_status, "bold $accent"))
                parts.append(("  ", ""))
            sel = self.selected_rows()
            if sel is not None:
                parts.append((f"{sel[1] - sel[0] + 1} rows selected", "bold $accent"))
                parts.append(("  ", ""))
            parts.append((f"row {self.cursor + 1}/{len(model.rows)}", "$text-muted"))
        if self.normalised:
            parts.append(("  registers normalised", "$accent"))
        bar.show(self.view, Content.assemble(*parts))

    # ------------------------------------------------------------------ events

    @on(CodePane.RowClicked)
    def row_clicked(self, message: CodePane.RowClicked) -> None:
        self.active_side = message.pane.side
        message.pane.focus()
        self.cursor = message.row

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, CodePane):
            self.active_side = event.widget.side

    @on(KernelHighlighted)
    def kernel_highlighted(self, event: KernelHighlighted) -> None:
        if event.index != self.kernel_index:
            self.kernel_index = event.index

    # ------------------------------------------------------------------ actions: movement

    def _page(self) -> int:
        return max(1, self.pane(self.active_side).scrollable_content_region.height)

    def action_cursor(self, step: int) -> None:
        self.cursor += step

    def action_cursor_to(self, where: str) -> None:
        self.cursor = 0 if where == "top" else (len(self.model.rows) - 1 if self.model else 0)

    def action_half_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self._page() // 2)

    def action_scroll_x(self, dx: int) -> None:
        p = self.pane(self.active_side)
        p.scroll_to(x=max(0, p.scroll_x + dx), animate=False)

    def _land(self, row: int) -> None:
        """Put the cursor on ``row`` and show it a third of the way down the panes."""
        self.cursor = row
        for s in ("a", "b"):
            self.pane(s).center_on(self.cursor)

    def _busy(self) -> bool:
        """Say so and return True while the view is partial (a big listing being aligned)."""
        if self.model is not None and self.model.pending:
            self.notify(f"Not yet: {self.model.pending}", timeout=3, markup=False)
            return True
        return False

    def action_hunk(self, step: int) -> None:
        if self.model is None or self._busy():
            return
        h = self.model.next_hunk(self.cursor, step)
        if h is None:
            self.notify("No differences in this view.", timeout=3)
            return
        self._land(h.start)

    def action_spill(self, step: int) -> None:
        if self.view != "sass":  # spill sites are SASS STL/LDL
            self._pending = ("spill", step)
            self.view = "sass"
            return
        if self.model is None:
            self._pending = ("spill", step)
            return
        if self._busy():
            return
        side = "b" if self.model.spill_rows("b") else ("a" if self.model.spill_rows("a") else None)
        if side is None:
            self.notify("Neither side spills in this kernel.", timeout=3)
            return
        row = self.model.next_spill(side, self.cursor, step)
        if row is None:
            return
        self.active_side = side
        self.pane(side).focus()
        self._land(row)

    def action_kernel(self, step: int) -> None:
        n = len(self.comparison.get("kernels") or [])
        if n > 1:
            self.kernel_index = (self.kernel_index + step) % n
        else:
            self.notify("This comparison has one kernel.", timeout=2)

    def action_view(self, view: str) -> None:
        if view in VIEWS:
            self.view = view

    def action_toggle_normalise(self) -> None:
        self.normalised = not self.normalised

    # ------------------------------------------------------------------ search and jump

    def action_search(self) -> None:
        from .prompt import PromptScreen

        if self._busy():
            return
        self.app.push_screen(
            PromptScreen(
                f"search side {self.active_side.upper()} — regex, fuzzy when nothing matches (enter repeats)",
                value="",
                placeholder=self._last_search or "e.g. STL|LDL or UTCHMMA",
            ),
            self.search,
        )

    def search(self, query: str | None, step: int = 1) -> None:
        """Move to the next line of the active side matching ``query`` (regex, else fuzzy)."""
        if query is None or self.model is None:
            return
        query = query or self._last_search
        if not query:
            return
        self._last_search = query
        row, how = self.model.search(self.active_side, query, self.cursor, step)
        if row is None:
            self.search_status = f"/{query}  no match"
            self._update_status()
            self.notify(
                f"No line of side {self.active_side.upper()} matches {query!r}.",
                severity="warning",
                timeout=3,
                markup=False,
            )
            return
        if how == "fuzzy":
            self.notify(f"No exact match for {query!r}; nearest fuzzy match.", timeout=3, markup=False)
        self._land(row)
        self._count_match(query, row, how)

    def action_search_next(self, step: int) -> None:
        """``n`` / ``N``: the next / previous match of the last search."""
        if self._busy():
            return
        if not self._last_search:
            self.notify("No search yet: press / to search (d/D walk the changed hunks).", timeout=3)
            return
        self.search(self._last_search, step)

    def search_matches(self, side: str, query: str) -> list[int]:
        """Rows of ``side`` whose line matches the regex ``query`` (empty when it is not a regex)."""
        import re

        if self.model is None:
            return []
        key = (self.kernel_index, self.view, side, query)
        rows = self._matches.get(key)
        if rows is None:
            try:
                rx = re.compile(query, re.IGNORECASE)
            except re.error:
                rows = []
            else:
                model = self.model
                rows = sorted(model.row_of(side, i) for i, t in enumerate(model.texts(side)) if rx.search(t))
            self._matches[key] = rows
        return rows

    def _count_match(self, query: str, row: int, how: str) -> None:
        rows = self.search_matches(self.active_side, query) if how == "regex" else []
        if row in rows:
            self.search_status = f"/{query}  match {rows.index(row) + 1}/{len(rows)}"
        else:
            self.search_status = f"/{query}  fuzzy match"
        self._update_status()

    def action_jump(self) -> None:
        from .prompt import PromptScreen

        if self._busy():
            return
        self.app.push_screen(
            PromptScreen(
                f"jump on side {self.active_side.upper()} — address, label or source line",
                placeholder="0x6630 · .L_x_12 · 925 · mask.py:680",
            ),
            self.jump,
        )

    def jump(self, text: str | None) -> None:
        """Go to an address, a label or a source line on the active side."""
        if not text or self.model is None:
            return
        j = parse_jump(text)
        if j is None:
            self.notify(
                f"{text!r} is not an address, a label or a source line.", severity="warning", timeout=4, markup=False
            )
            return
        side = self.active_side
        row = None
        if j.kind == "addr" and j.addr is not None:
            row = self.model.find_addr(side, j.addr)
        elif j.kind == "label" and j.label:
            row = self.model.find_label(side, j.label)
        elif j.kind == "line" and j.line is not None:
            row = self.model.find_source(side, j.line, j.file, after=self.cursor)
        if row is None:
            self.notify(f"Nothing at {text!r} on side {side.upper()}.", severity="warning", timeout=4, markup=False)
            return
        self._land(row)

    # ------------------------------------------------------------------ actions: other screens

    def action_new_compare(self) -> None:
        open_compare = getattr(self.app, "open_compare_dialog", None)
        if callable(open_compare):
            open_compare()

    def action_bench(self) -> None:
        from .bench import BenchScreen

        gpu = cast("dict | Literal[False] | None", getattr(self.app, "gpu_probe", False))  # CutediffApp.gpu_probe
        self.app.push_screen(BenchScreen(gpu, getattr(self.app, "comparison", None)))

    def action_crosscheck(self) -> None:
        from .prompt import PromptScreen

        default = ",".join(self._crosscheck_defaults())
        self.app.push_screen(
            PromptScreen(
                "cross-check: ptxas versions to re-assemble both PTXs with (comma-separated)",
                value=default,
                placeholder="13.0,13.4",
            ),
            self._crosscheck_versions,
        )

    def _crosscheck_defaults(self) -> list[str]:
        """ptxas versions of the last cross-check, else the CUDA releases that made the PTXs."""
        from cutediff_tui.core.toolchain import version_key

        found: set[str] = set()
        for data in (self.comparison.get("crosscheck") or {}).values():
            for row in (data or {}).get("matrix") or [] if isinstance(data, dict) else []:
                if isinstance(row, dict) and row.get("ptxas_version"):
                    found.add(str(row["ptxas_version"]))
        if not found:
            for s in ("a", "b"):
                tc = str((((self.kernel.get(s) or {}).get("ptx") or {}).get("toolchain")) or "")
                if tc:
                    found.add(tc.replace("CUDA", "").strip())
        return sorted(found, key=version_key)

    def _crosscheck_versions(self, text: str | None) -> None:
        if not text or not text.strip():
            return
        self.notify(f"Cross-checking with ptxas {text.strip()}…", timeout=4, markup=False)
        self.run_crosscheck(text.strip())

    @work(thread=True, exclusive=True, exit_on_error=False, group="crosscheck", description="cross-check")
    def run_crosscheck(self, versions: str) -> None:
        from cutediff_tui.core.analysis_pipeline import run_crosscheck
        from cutediff_tui.core.options import compare_options

        c = self.comparison
        params = dict((c.get("recipe") or {}).get("params") or {})
        extra = []
        for k, v in params.items():
            if v is None:
                continue
            if isinstance(v, (list, tuple)):
                v = ",".join(map(str, v))
            extra.append(f"{k}={v}")
        prof = c.get("profile") or {}
        kw = {
            "kernel": (c.get("recipe") or {}).get("name", "fa4-fwd"),
            "arch": c.get("arch"),
            "num_sms": prof.get("num_sms"),
            "extra_params": tuple(extra),
            "crosscheck": versions,
        }
        opts = compare_options(c["sides"]["a"]["dsl"], c["sides"]["b"]["dsl"], kw)
        result = run_crosscheck(c, opts, lambda _msg: None)
        self.post_message(CrosscheckFinished(result))

    @on(CrosscheckFinished)
    def crosscheck_done(self, message: CrosscheckFinished) -> None:
        from .crosscheck import CrosscheckScreen

        self.comparison["crosscheck"] = message.result
        self.app.push_screen(CrosscheckScreen(message.result))

    # ------------------------------------------------------------------ selection and clipboard

    def action_select(self) -> None:
        self.selection_anchor = None if self.selection_anchor is not None else self.cursor
        self._update_status()

    def rows_text(self, side: str, first: int, last: int) -> str:
        """The lines of ``side`` on rows ``first``..``last`` (gaps left out), one per line."""
        if self.model is None:
            return ""
        lines = (self.model.line_at(r, side) for r in range(first, last + 1))
        return "\n".join(ln.text for ln in lines if ln is not None)

    def _copy(self, text: str, what: str) -> None:
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} to the clipboard.", timeout=3, markup=False)

    def action_copy_rows(self) -> None:
        if self.model is None:
            return
        first, last = self.selected_rows() or (self.cursor, self.cursor)
        side = self.active_side
        text = self.rows_text(side, first, last)
        if not text:
            self.notify(f"Side {side.upper()} has no line here to copy.", timeout=3)
            return
        self._copy(text + "\n", f"{text.count(chr(10)) + 1} lines of side {side.upper()}")
        self.selection_anchor = None
        self._update_status()

    def hunk_diff(self, row: int) -> str | None:
        """The hunk holding ``row`` as diff lines (``- A`` then ``+ B``), or None outside a hunk."""
        if self.model is None:
            return None
        hit = self.model.hunk_at(row)
        if hit is None:
            return None
        _k, h = hit
        a = self.rows_text("a", h.start, h.end - 1)
        b = self.rows_text("b", h.start, h.end - 1)
        out = [f"@@ {self.kernel.get('name', '?')} {VIEW_TITLES[self.view]} rows {h.start + 1}-{h.end} @@"]
        out += [f"-{ln}" for ln in a.splitlines()] + [f"+{ln}" for ln in b.splitlines()]
        return "\n".join(out) + "\n"

    def action_copy_hunk(self) -> None:
        text = self.hunk_diff(self.cursor)
        if text is None:
            self.notify("The cursor is not in a changed hunk; d / D walk to one.", timeout=3)
            return
        self._copy(text, "the hunk")

    def action_copy_report(self) -> None:
        from cutediff_tui.core.report import render

        self._copy(render(self.comparison, "md"), "the Markdown report")

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        from .export import ExportScreen

        self.app.push_screen(ExportScreen(Path.cwd()), self._export_chosen)

    def _export_chosen(self, choice) -> None:
        if choice is None:
            return
        if choice.path is None:
            from cutediff_tui.core.report import render

            self._copy(render(self.comparison, choice.fmt), f"the {choice.fmt} report")
            return
        self.export_report(choice.path, choice.fmt)

    @work(thread=True, exclusive=True, exit_on_error=False, group="export", description="export the report")
    def export_report(self, path: Path, fmt: str) -> None:
        from cutediff_tui.core.files import check_output
        from cutediff_tui.core.report import write_report

        # the dialog asked before replacing a file; a symbolic link is never written through
        check_output(path, force=True, option="the report")
        self.post_message(ReportWritten(write_report(self.comparison, path, fmt)))

    @on(ReportWritten)
    def report_written(self, message: ReportWritten) -> None:
        self.notify(f"Wrote {message.path}", title="report", timeout=6, markup=False)
