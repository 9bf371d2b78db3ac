"""The new-comparison dialog: pick DSL A and B, pins, recipe, parameters and arch; compile.

Versions come from the package index in a worker (the cached list when offline, plus the
environments already created, marked ●); tests pass ``versions=`` to stay offline.
The compile runs :func:`cutediff_tui.core.compare.run_compare` in a thread worker with a
worker's own cancelled flag (``worker.cancelled_event``, set by ``Worker.cancel``); progress arrives
as typed :mod:`cutediff_tui.core.events` inside :class:`~..messages.CompareProgress`, and the
event's ``side`` picks the status line it updates.
"""

from __future__ import annotations

import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState, get_current_worker

from cutediff_tui.core.model.sides import param_text

from ..messages import CompareFailed, CompareFinished, CompareProgress, VersionsLoaded

__all__ = ["CompareScreen", "filter_versions", "ARCHS"]

ARCHS = ("sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120a")


def filter_versions(query: str, versions: list[str]) -> list[str]:
    """Versions matching ``query``: prefix/substring matches first (newest first), then fuzzy."""
    from rapidfuzz import fuzz, process

    from cutediff_tui.core.toolchain import version_key

    ordered = sorted(set(versions), key=version_key, reverse=True)
    q = query.strip()
    if not q:
        return ordered
    exact = [v for v in ordered if v.startswith(q)]
    contains = [v for v in ordered if q in v and v not in exact]
    rest = [v for v in ordered if v not in exact and v not in contains]
    fuzzy = [m[0] for m in process.extract(q, rest, scorer=fuzz.ratio, score_cutoff=60, limit=None)]
    return exact + contains + fuzzy


class CompareScreen(ModalScreen[dict | None]):
    """Choose two toolchains and a recipe, then compile both sides.

    | key        | action                                   |
    |------------|------------------------------------------|
    | tab        | next field                               |
    | ctrl+s     | compile                                  |
    | escape, q  | cancel the compile, or close the dialog  |
    """

    DEFAULT_CSS = """
    CompareScreen {
        align: center middle;
        & > #dialog {
            width: 100; max-width: 100%;
            height: auto; max-height: 100%;
            background: $surface;
            border: round $primary;
            border-title-color: $foreground;
            padding: 0 1;
        }
        & #sides { height: auto; }
        & .side { width: 1fr; height: auto; }
        & #side-a { margin-right: 2; }
        & .side-title { height: 1; }
        & OptionList { height: 6; border: none; padding: 0; background: $surface-darken-1; margin-bottom: 1; }
        & OptionList:focus { background-tint: $foreground 4%; }
        & Input { background: $surface-darken-1; width: 1fr; }
        & Input:focus { background: $surface-darken-1; background-tint: $foreground 6%; }
        & .side > Input { margin-bottom: 0; }
        & .field { height: 1; margin-bottom: 1; }
        & .field-label { width: 8; color: $text-muted; }
        & #recipe { width: 1fr; margin-right: 2; }
        & #arch { width: 14; }
        & .status { height: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
        & #status-a { color: $side-a; }
        & #status-b { color: $side-b; }
        & #buttons { height: auto; align-horizontal: right; margin-top: 1; }
        & Button { margin-left: 2; }
    }
    """

    BINDINGS = [
        Binding(
            "escape,q",
            "close",
            "Close",
            id="compare.close",
            tooltip="Cancel the compile if one runs, else close (q types into text fields)",
        ),
        Binding("ctrl+s", "compile", "Compile", id="compare.compile", tooltip="Compile both sides and open the result"),
    ]

    def __init__(
        self, comparison: dict | None = None, *, versions: list[str] | None = None, installed: set[str] | None = None
    ) -> None:
        super().__init__()
        self.comparison = comparison or {}
        self.versions: list[str] = list(versions or [])
        self.installed: set[str] = set(installed or ())
        self._given = versions is not None
        self.selected: dict[str, str | None] = {"a": None, "b": None}
        self._compiling = False
        self._compile_started = 0.0

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        from cutediff_tui.core.recipes import BUILTINS

        sides = self.comparison.get("sides", {})
        recipe = (self.comparison.get("recipe") or {}).get("name") or next(iter(BUILTINS))
        arch = self.comparison.get("arch") or "sm_100a"
        archs = list(ARCHS) + ([arch] if arch not in ARCHS else [])
        with Vertical(id="dialog") as box:
            box.border_title = "new comparison"
            box.border_subtitle = "tab moves · ctrl+s compiles · esc closes"
            with Horizontal(id="sides"):
                for s in ("a", "b"):
                    with Vertical(classes="side", id=f"side-{s}"):
                        yield Static(
                            Content.assemble(
                                (f" {s.upper()} ", f"bold $background on $side-{s}"),
                                (" DSL version", f"bold $side-{s}"),
                            ),
                            classes="side-title",
                        )
                        yield Input(placeholder="type to filter (fuzzy), e.g. 4.8", id=f"filter-{s}", compact=True)
                        yield OptionList(id=f"versions-{s}")
                        pins = ",".join((sides.get(s) or {}).get("pins") or [])
                        with Horizontal(classes="field"):
                            yield Label("pins", classes="field-label")
                            yield Input(
                                value=pins,
                                placeholder="optional, e.g. quack-kernels==0.6.5",
                                id=f"pins-{s}",
                                compact=True,
                            )
                        with Horizontal(classes="field"):
                            yield Label("params", classes="field-label")
                            yield Input(
                                value=self._side_params_text(s),
                                placeholder=f"side {s.upper()} only, e.g. bits=16",
                                id=f"params-{s}",
                                compact=True,
                            )
            with Horizontal(classes="field"):
                yield Label("recipe", classes="field-label")
                yield Select(
                    [(Content(f"{r.name}  {r.summary}"), r.name) for r in BUILTINS.values()],
                    value=recipe if recipe in BUILTINS else next(iter(BUILTINS)),
                    allow_blank=False,
                    id="recipe",
                    compact=True,
                )
                yield Label("arch", classes="field-label")
                yield Select([(a, a) for a in archs], value=arch, allow_blank=False, id="arch", compact=True)
            with Horizontal(classes="field"):
                yield Label("params", classes="field-label")
                yield Input(
                    value=self._params_text(),
                    placeholder="NAME=VALUE …, e.g. hdim=64 causal=false",
                    id="params",
                    compact=True,
                )
            yield Static("", id="status", classes="status")
            yield Static("", id="status-a", classes="status")
            yield Static("", id="status-b", classes="status")
            with Horizontal(id="buttons"):
                yield Button("Compile", id="compile", variant="primary", compact=True)
                yield Button("Close", id="close", compact=True)

    def _side_params_text(self, s: str) -> str:
        """The parameters only this side had in the comparison shown (``--a-param``/``--b-param``)."""
        sides = self.comparison.get("sides") or {}
        mine = (sides.get(s) or {}).get("params") or {}
        other = (sides.get("b" if s == "a" else "a") or {}).get("params") or {}
        return " ".join(f"{k}={param_text(v)}" for k, v in mine.items() if k in other and other[k] != v)

    def _params_text(self) -> str:
        from cutediff_tui.core.recipes import BUILTINS

        recipe = BUILTINS.get((self.comparison.get("recipe") or {}).get("name", ""))
        params = (self.comparison.get("recipe") or {}).get("params") or {}
        if recipe is None:
            return ""
        defaults = recipe.defaults()
        out = []
        for k, v in params.items():
            if k in defaults and defaults[k] != v:
                if isinstance(v, (list, tuple)):
                    v = ",".join(map(str, v))
                out.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
        return " ".join(out)

    def on_mount(self) -> None:
        self._describe_recipe()
        if self._given:
            self._fill()
        else:
            self.query_one("#status", Static).update("Looking up published DSL versions…")
            self.load_versions()

    @on(Select.Changed, "#recipe")
    def _describe_recipe(self) -> None:
        """Name the chosen recipe's parameters (and defaults) under the form."""
        from cutediff_tui.core.recipes import BUILTINS

        recipe = BUILTINS.get(str(self.query_one("#recipe", Select).value))
        if recipe is None or self._compiling:
            return
        names = " ".join(
            f"{p.name}={str(p.default).lower() if isinstance(p.default, bool) else p.default}" for p in recipe.params
        )
        self.query_one("#status", Static).update(Content.styled(f"{recipe.name} parameters: {names}", "$text-muted"))

    # ------------------------------------------------------------------ versions

    @work(thread=True, exclusive=True, exit_on_error=False, group="versions", description="list DSL versions")
    def load_versions(self) -> None:
        from cutediff_tui.core.errors import CutediffError
        from cutediff_tui.core.toolchain import list_envs, published_versions, version_key

        installed = {e.spec.dsl for e in list_envs()}
        note = ""
        try:
            versions, offline = published_versions(), False
        except CutediffError as exc:
            versions, offline = published_versions(offline=True), True
            note = f"Offline: {exc.sentence()} Showing cached and installed versions."
        self.post_message(VersionsLoaded(sorted(set(versions) | installed, key=version_key), installed, offline, note))

    @on(VersionsLoaded)
    def versions_loaded(self, message: VersionsLoaded) -> None:
        self.versions = message.versions
        self.installed = message.installed
        if message.note:
            self.query_one("#status", Static).update(Content.styled(message.note, "$text-warning"))
        else:
            self._describe_recipe()
        self._fill()

    def _fill(self) -> None:
        sides = self.comparison.get("sides", {})
        for s in ("a", "b"):
            want = (sides.get(s) or {}).get("dsl")
            self._show_versions(s, self.query_one(f"#filter-{s}", Input).value, prefer=want)

    def _show_versions(self, s: str, query: str, prefer: str | None = None) -> None:
        ol = self.query_one(f"#versions-{s}", OptionList)
        shown = filter_versions(query, self.versions)
        ol.clear_options()
        from cutediff_tui.core.toolchain import version_needs

        for v in shown:
            mark = Content.styled("  ● installed", "$improvement") if v in self.installed else Content("")
            needs = version_needs(v, short=True)
            note = Content.styled(f"  {needs}", "dim") if needs else Content("")
            ol.add_option(Option(Content.assemble((v, "bold"), mark, note), id=v))
        if not shown:
            self.selected[s] = None
            return
        current = self.selected[s]
        keep = current if current is not None and current in shown and not query else shown[0]
        target = prefer if prefer is not None and prefer in shown else keep
        ol.highlighted = shown.index(target)
        self.selected[s] = target

    @on(Input.Changed, "#filter-a")
    def filter_a(self, event: Input.Changed) -> None:
        self._show_versions("a", event.value)

    @on(Input.Changed, "#filter-b")
    def filter_b(self, event: Input.Changed) -> None:
        self._show_versions("b", event.value)

    @on(OptionList.OptionHighlighted)
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        s = (event.option_list.id or "")[-1]
        if s in ("a", "b"):
            self.selected[s] = event.option.id

    def shown_versions(self, s: str) -> list[str]:
        """Version ids currently listed for side ``s`` (for tests)."""
        ol = self.query_one(f"#versions-{s}", OptionList)
        return [ol.get_option_at_index(i).id or "" for i in range(ol.option_count)]

    # ------------------------------------------------------------------ compile

    def _spec(self, s: str) -> str | None:
        v = self.selected[s]
        if not v:
            return None
        pins = [p.strip() for p in self.query_one(f"#pins-{s}", Input).value.replace(" ", ",").split(",") if p.strip()]
        return ",".join([v, *pins])

    def build_options(self):
        """CompareOptions from the form, as the CLI builds them (raises CutediffError)."""
        from cutediff_tui.core.errors import CutediffError
        from cutediff_tui.core.options import compare_options

        a, b = self._spec("a"), self._spec("b")
        if not a or not b:
            raise CutediffError("Pick a DSL version for both sides.", "Type part of a version in the filter boxes.")
        kw = {
            "kernel": self.query_one("#recipe", Select).value,
            "arch": self.query_one("#arch", Select).value,
            "extra_params": tuple(self.query_one("#params", Input).value.split()),
            "a_params": tuple(self.query_one("#params-a", Input).value.split()),
            "b_params": tuple(self.query_one("#params-b", Input).value.split()),
            "with_": (),
        }
        return compare_options(a, b, kw)

    @on(Button.Pressed, "#compile")
    def action_compile(self) -> None:
        if self._compiling:
            return
        from cutediff_tui.core.errors import CutediffError

        try:
            opts = self.build_options()
        except CutediffError as exc:
            self.query_one("#status", Static).update(Content.styled(exc.sentence(), "$text-error"))
            return
        self._compiling = True
        self._compile_started = time.monotonic()
        self.query_one("#compile", Button).disabled = True
        self.query_one("#close", Button).label = "Cancel"
        for s in ("a", "b"):
            self.query_one(f"#status-{s}", Static).update(Content(f"{s.upper()}: starting…"))
        self.query_one("#status", Static).update(
            Content(
                f"Compiling {opts.recipe.name} for {opts.profile.arch}: {opts.specs[0].label} vs {opts.specs[1].label}"
            )
        )
        self.run_compile(opts)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare", description="compile both sides")
    def run_compile(self, opts) -> None:
        from cutediff_tui.core.compare import run_compare
        from cutediff_tui.core.events import Event, as_event

        worker = get_current_worker()

        def progress(event: Event | str) -> None:
            self.post_message(CompareProgress(as_event(event)))

        # The worker's own flag: Worker.cancel() (escape, or a newer compile in this exclusive group)
        # sets it, and run_compare stops both sides' compile workers when it is set.
        comparison = run_compare(opts, progress, worker.cancelled_event)
        if worker.is_cancelled:
            self.post_message(CompareFailed("Cancelled; nothing partial was kept."))
        else:
            self.post_message(CompareFinished(comparison))

    @on(CompareProgress)
    def progress(self, message: CompareProgress) -> None:
        elapsed = time.monotonic() - self._compile_started
        event = message.event
        target = f"#status-{event.side}" if event.side else "#status"
        text = f"{event.side.upper()}: {event.text()}" if event.side else event.text()
        self.query_one(target, Static).update(Content(f"{elapsed:5.0f}s  {text}"))

    @on(CompareFinished)
    def finished(self, message: CompareFinished) -> None:
        self._compiling = False
        self.dismiss(message.comparison)

    @on(CompareFailed)
    def failed(self, message: CompareFailed) -> None:
        self._stopped(Content.styled(message.error, "$text-error"))

    @on(Worker.StateChanged)
    def worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        err = event.worker.error
        sentence = err.sentence() if err is not None and hasattr(err, "sentence") else f"{type(err).__name__}: {err}"
        if event.worker.group == "versions":
            self.query_one("#status", Static).update(Content.styled(sentence, "$text-error"))
            self._fill()
        else:
            self._stopped(Content.styled(sentence, "$text-error"))

    def _stopped(self, status: Content) -> None:
        self._compiling = False
        self.query_one("#compile", Button).disabled = False
        self.query_one("#close", Button).label = "Close"
        self.query_one("#status", Static).update(status)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        if self._compiling:
            self.workers.cancel_group(self, "compare")
            self.query_one("#status", Static).update("Cancelling… (stopping the compile workers)")
            return
        self.dismiss(None)
