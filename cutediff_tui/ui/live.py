"""Watch in the TUI: recompile the sides whose sources changed and refresh the screen in place.

:class:`LiveWatch` runs a :class:`~cutediff_tui.core.watch.CompareWatch` with warm workers
(:mod:`cutediff_tui.core.warm`) for the app and posts :class:`~.messages.LiveCompiling`,
:class:`~.messages.LiveResult` and :class:`~.messages.LiveError` to it; the main screen shows
them (per-side :class:`LiveBanner`, the comparison swapped in place with the cursor kept on the
same source line, changed figures flashed). Thread callbacks only post messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.widgets import Static

from cutediff_tui.core.sanitize import truncate

from .messages import LiveCompiling, LiveError, LiveResult

if TYPE_CHECKING:
    from textual.app import App

    from cutediff_tui.core.watch import CompareWatch, ErrorSite

# core.watch and core.warm are imported where a watch starts: opening a result never needs them

__all__ = ["LiveBanner", "LiveWatch", "WatchSpec", "site_text", "spec_from_comparison"]


@dataclass
class WatchSpec:
    """What to recompile: the compare options, the source plan and the parameters the user gave."""

    opts: Any
    plan: Any
    given: dict
    #: the sources' digests when the shown comparison was built (``core.watch.source_digests``):
    #: a save made after that, before the watch started, is then compiled at once
    seen: dict | None = None


def spec_from_comparison(comparison: dict) -> WatchSpec:
    """A watch spec for a comparison made from a recipe file (raises CutediffError otherwise)."""
    from cutediff_tui.core.errors import CutediffError
    from cutediff_tui.core.options import compare_options
    from cutediff_tui.core.recipes.sources import plan_sources

    recipe = comparison.get("recipe") or {}
    name = str(recipe.get("name") or "")
    sides = comparison.get("sides") or {}
    if not name or any(not (sides.get(s) or {}).get("dsl") for s in ("a", "b")):
        raise CutediffError(
            "This comparison was not compiled by cutediff here, so there is no recipe to watch.",
            "Run `cutediff compare A B --recipe RECIPE.py --watch --tui` to watch a recipe.",
        )
    params = {k: v for k, v in (recipe.get("params") or {}).items() if v is not None}
    extra = tuple(f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in params.items())
    prof = comparison.get("profile") or {}
    kw = {"kernel": name, "arch": comparison.get("arch"), "num_sms": prof.get("num_sms"), "extra_params": extra}
    a, b = (",".join([str(sides[s]["dsl"]), *map(str, sides[s].get("pins") or [])]) for s in ("a", "b"))
    opts = compare_options(a, b, kw)
    spec_a, spec_b = opts.specs
    locals_ = (tuple(spec_a.local_paths()), tuple(spec_b.local_paths()))
    plan = plan_sources(opts.recipe, search=tuple(p for ps in locals_ for p in ps), local_paths=locals_)
    if not plan.watched() or (opts.recipe.kind == "builtin" and not any(locals_)):
        raise CutediffError(
            f"Recipe {opts.recipe.name} has no source file here to watch.",
            "Watch works with a recipe file (--recipe path/to/file.py) or a --with source folder; "
            "run `cutediff compare A B --recipe RECIPE.py --watch --tui`.",
        )
    return WatchSpec(opts, plan, params)


class LiveWatch:
    """The app's watch: a CompareWatch on warm workers whose callbacks post messages to ``app``."""

    def __init__(self, app: App, spec: WatchSpec) -> None:
        self.app = app
        self.spec = spec
        self.watch: CompareWatch | None = None

    @property
    def running(self) -> bool:
        return self.watch is not None

    def files(self) -> list[Path]:
        return self.watch.watched() if self.watch is not None else [Path(p) for p in self.spec.plan.watched()]

    def start(self) -> None:
        if self.watch is not None:
            return
        from cutediff_tui.core import warm
        from cutediff_tui.core.watch import CompareWatch

        warm.enable()
        post = self.app.post_message
        self.watch = CompareWatch(
            self.spec.opts,
            self.spec.plan,
            given=self.spec.given,
            on_result=lambda c, ch: post(self.result(c, ch)),
            on_error=lambda msg, ch: post(LiveError(msg, ch)),
            on_start=lambda ch: post(LiveCompiling(set(ch.sides) or {"a", "b"}, ch.names())),
            interval=0.05,
            seen=self.spec.seen,
        )
        self.watch.start(initial=False)

    def result(self, comparison: dict, change: Any) -> LiveResult:
        """The message for a recompiled ``comparison`` (in the watch's thread): its strings made
        visible, and the views the screens show built here, so the UI thread only swaps them in."""
        from cutediff_tui.core.sanitize import visible_strings

        from .model import build_model, is_big

        clean = visible_strings(comparison)
        assert isinstance(clean, dict)
        models: dict = {}
        kernels = clean.get("kernels") or []
        failed = any((v or {}).get("error") for v in (clean.get("sides") or {}).values())
        views = getattr(self.app, "live_views", None)
        try:  # read from this thread while the screens may change: a miss only costs the speed-up
            wanted = views() if callable(views) and not failed else []
        except Exception:
            wanted = []
        for name, view in wanted:
            index = next((i for i, k in enumerate(kernels) if k.get("name") == name), None)
            if index is None or (view == "sass" and is_big(kernels[index])) or (name, view) in models:
                continue
            try:
                models[(name, view)] = build_model(clean, index, view)
            except Exception:  # the screen loads it as usual and says what went wrong
                continue
        return LiveResult(clean, change, models)

    def stop(self) -> None:
        """Stop watching and cancel a compile in flight (the app stops the warm workers on exit)."""
        watch, self.watch = self.watch, None
        if watch is not None:
            self.spec = WatchSpec(watch.opts, watch.plan, watch.given, watch.watcher.digests())
            watch.stop()


def site_text(site: ErrorSite | None) -> str:
    return f"{Path(site.file).name}:{site.line}: {site.text}" if site is not None else ""


class LiveBanner(Static):
    """One side's last compile error above its pane (with the source line it points at) while
    the last good listing stays below; hidden otherwise ("compiling…" is on the pane's title)."""

    DEFAULT_CSS = """
    LiveBanner {
        display: none;
        height: auto;
        max-height: 5;
        padding: 0 1;
        background: $surface;
        color: $text-muted;
    }
    LiveBanner.-error { display: block; background: $error-muted; color: $text-error; }
    """

    def __init__(self, side: str, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.side = side
        self.state = ""
        self.message = ""

    def show(self, state: str, message: str = "") -> None:
        """``state``: "" (hidden) or "error"."""
        self.state, self.message = state, message
        self.set_class(state == "error", "-error")
        self.update(truncate(message, 600))


_NAMED = re.compile(r"(/[\w./\\-]+\.py)\b")


def error_for_side(sentence: str, files: list[Path], log: str = "") -> str:
    """The banner text of an error: the source line it points at (the innermost frame of the
    side's ``log`` in a watched file or the recipe file the sentence names, else a line the
    sentence names), then the sentence."""
    from cutediff_tui.core.watch import error_site

    named = [Path(m) for m in _NAMED.findall(sentence) if Path(m).is_file()]
    where = site_text(error_site(sentence, log, [*files, *named]))
    for f in {*files, *named}:  # the watched files by name: the banner is a few narrow lines
        sentence = sentence.replace(str(f), f.name)
    return f"{where}\n{sentence}" if where else sentence
