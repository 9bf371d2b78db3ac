"""``--watch``: recompile when a recipe's source changes, and keep the reader's place.

Three layers, all headless (no Textual; the TUI calls them):

* :class:`Watcher` follows files (and ``.py`` files under folders) in a daemon thread, from
  file-system events (``watchfiles``: inotify, FSEvents, ReadDirectoryChangesW; the folders that
  hold the files are watched, so an editor that saves by renaming is seen) or, without
  ``watchfiles``, by polling mtimes; it confirms a change by content and calls
  ``on_change(change)`` with a :class:`Change` that holds each changed file's text before and after.
* :func:`map_line` / :meth:`Change.map_line` carry a line number of an edited file over the
  edit (difflib), and :func:`keep_cursor` finds, in the rebuilt view, the row showing the same
  source line, so a cursor stays where it was.
* :class:`CompareWatch` ties it to the compile: on a change it re-reads the recipe, recompiles
  (the unchanged side comes from the build cache; a compile still running is cancelled and
  restarted) and hands each new comparison to ``on_result``, or a one-sentence error to
  ``on_error``. The CLI reprints its tables; the TUI swaps the comparison in place.

The TUI hook, in a screen that shows a comparison made from ``opts`` and ``plan``::

    self.watch = CompareWatch(opts, plan, given=params_given,
                              on_result=lambda c, ch: self.app.call_from_thread(self.swap, c, ch),
                              on_error=lambda msg, ch: self.app.call_from_thread(self.notify, msg))
    self.watch.start(initial=False)          # the comparison on screen is the first result
    ...
    def swap(self, comparison, change):
        anchor = cursor_anchor(old_model, side, old_row)   # before the model is replaced
        ...rebuild the PaneModel from ``comparison``...
        row = keep_cursor(new_model, side, anchor, change)
        if row is not None: pane.cursor = row
    ...on unmount: self.watch.stop()
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import CutediffError
from .events import Progress, noop
from .trace import stamp

__all__ = [
    "Watcher",
    "Change",
    "map_line",
    "same_file",
    "row_for_source",
    "cursor_anchor",
    "keep_cursor",
    "Anchor",
    "CompareWatch",
    "ErrorSite",
    "error_site",
]

_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".venv", "node_modules", ".mypy_cache", ".pytest_cache"}
_MAX_TEXT = 4 << 20


# ---------------------------------------------------------------- polling


def _expand(paths: Iterable[Path]) -> list[Path]:
    """Files to poll: the files given, and ``.py`` files under the folders given."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
                out += [Path(root) / f for f in sorted(files) if f.endswith(".py")]
        else:
            out.append(p)
    return out


def _stat(p: Path) -> tuple | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def source_digests(paths: Iterable[str | Path]) -> dict[Path, str | None]:
    """The content digest of each file under ``paths`` (folders expanded to their ``.py`` files),
    as a :class:`Watcher` compares them: take it before compiling what a watch will show, and give
    it to the watch as ``seen``, so that a save made before the watch started still counts."""
    return {f: _read(f)[0] for f in _expand(Path(p) for p in paths)}


def _read(p: Path) -> tuple[str | None, str | None]:
    """(digest, text) of a file; (None, None) when it is missing."""
    try:
        data = p.read_bytes()
    except OSError:
        return None, None
    text = data.decode("utf-8", errors="replace") if len(data) <= _MAX_TEXT else None
    return hashlib.sha1(data).hexdigest(), text


@dataclass
class Change:
    """Files whose content changed, with their text before and after (None: missing)."""

    paths: list[Path]
    before: dict[Path, str | None] = field(default_factory=dict)
    after: dict[Path, str | None] = field(default_factory=dict)
    sides: set[str] = field(default_factory=set)  # filled by CompareWatch: the sides these files feed
    at: float = field(default_factory=time.time)

    def names(self) -> str:
        return ", ".join(p.name for p in self.paths[:4]) + (
            f" and {len(self.paths) - 4} more" if len(self.paths) > 4 else ""
        )

    def text_of(self, file: str | Path) -> tuple[str | None, str | None] | None:
        """(before, after) of ``file`` if it is one of the changed files."""
        for p in self.paths:
            if same_file(p, file):
                return self.before.get(p), self.after.get(p)
        return None

    def map_line(self, file: str | Path, line: int) -> int:
        """``line`` of ``file`` after this change (unchanged when the file did not change)."""
        texts = self.text_of(file)
        if texts is None or texts[0] is None or texts[1] is None:
            return line
        return map_line(texts[0], texts[1], line)


class Watcher:
    """Follows ``paths`` (files, or folders of ``.py`` files) and calls ``on_change(Change)``.

    File-system events come from ``watchfiles``, gathered until the files have been quiet for
    10 ms, for at most ``interval`` (at least 50 ms; editors that save in two steps give one
    event); a change is reported only when the content differs (a touch does not count).
    :meth:`check` is the same by polling mtimes (used where ``watchfiles`` is missing).
    ``on_change`` runs in the watcher's thread.
    """

    def __init__(
        self,
        paths: Iterable[str | Path],
        on_change: Callable[[Change], Any],
        *,
        interval: float = 0.25,
        seen: dict[Path, str | None] | None = None,
    ) -> None:
        self.on_change = on_change
        self.interval = interval
        self._lock = threading.Lock()
        self._roots: list[Path] = [Path(p) for p in paths]
        self._stats: dict[Path, tuple | None] = {}
        self._digests: dict[Path, str | None] = {}
        self._texts: dict[Path, str | None] = {}
        self._pending: dict[Path, tuple | None] = {}
        self._moved = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._snapshot()
        for f, digest in (seen or {}).items():  # what the shown result was built from, if older
            if f in self._digests:
                self._digests[f] = digest

    @property
    def paths(self) -> list[Path]:
        return list(self._roots)

    def files(self) -> list[Path]:
        """The files polled now."""
        with self._lock:
            return list(self._stats)

    def digests(self) -> dict[Path, str | None]:
        """The content digest last seen of each file (a later watch's ``seen``)."""
        with self._lock:
            return dict(self._digests)

    def text(self, path: str | Path) -> str | None:
        """The last known text of a polled file."""
        for p, t in self._texts.items():
            if same_file(p, path):
                return t
        return None

    def _snapshot(self) -> None:
        with self._lock:
            for f in _expand(self._roots):
                if f not in self._stats:
                    self._stats[f] = _stat(f)
                    self._digests[f], self._texts[f] = _read(f)

    def set_paths(self, paths: Iterable[str | Path]) -> None:
        """Poll these instead (e.g. after the recipe started importing another helper)."""
        with self._lock:
            self._roots = [Path(p) for p in paths]
            self._moved = True
            keep = set(_expand(self._roots))
            for f in list(self._stats):
                if f not in keep:
                    self._stats.pop(f, None)
                    self._digests.pop(f, None)
                    self._texts.pop(f, None)
        self._snapshot()

    def check(self) -> Change | None:
        """One poll: the change completed since the last poll that saw it start, if any."""
        with self._lock:
            current = {f: _stat(f) for f in _expand(self._roots)}
            moved = {f: s for f, s in current.items() if self._stats.get(f, "new") != s}
            if moved:  # still changing: note it, report once it has settled
                self._pending.update(moved)
                for f, s in moved.items():
                    self._stats[f] = s
                return None
            if not self._pending:
                return None
            pending, self._pending = self._pending, {}
            change = Change([])
            for f in pending:
                self._note(f, change)
            return change if change.paths else None

    def _note(self, f: Path, change: Change) -> None:
        """Read ``f`` and add it to ``change`` when its content differs from what was last seen
        (a file not seen before counts); the caller holds the lock."""
        digest, text = _read(f)
        if f in self._digests and digest == self._digests[f]:
            return
        change.paths.append(f)
        change.before[f] = self._texts.get(f)
        change.after[f] = text
        self._digests[f], self._texts[f] = digest, text

    def collect(self, touched: Iterable[str | Path]) -> Change | None:
        """The change among ``touched`` paths (from file-system events): watched files whose
        content differs from what was last seen (a new ``.py`` file under a watched folder counts)."""
        hit = {os.path.abspath(str(p)) for p in touched}
        with self._lock:
            files = list(dict.fromkeys([*self._stats, *_expand(self._roots)]))
            change = Change([])
            for f in files:
                if os.path.abspath(str(f)) not in hit:
                    continue
                self._stats[f] = _stat(f)
                self._note(f, change)
            return change if change.paths else None

    def _folders(self) -> tuple[list[str], bool]:
        """Folders to follow (those of the watched files, and the watched folders) and whether
        to follow them recursively (only when a folder itself is watched)."""
        folders: list[str] = []
        recursive = False
        for root in self._roots:
            if root.is_dir():
                folders.append(os.path.abspath(root))
                recursive = True
            elif root.parent.is_dir():
                folders.append(os.path.abspath(root.parent))
        return list(dict.fromkeys(folders)), recursive

    def _loop(self) -> None:
        try:
            import watchfiles
        except ImportError:  # pragma: no cover - declared as a dependency
            return self._poll_loop()
        while not self._stop.is_set():
            folders, recursive = self._folders()
            if not folders:  # everything watched vanished: look again shortly
                self._stop.wait(self.interval)
                continue
            self._moved = False
            live = False
            try:
                for batch in watchfiles.watch(
                    *folders,
                    stop_event=self._stop,
                    recursive=recursive,
                    debounce=max(50, int(self.interval * 1000)),
                    step=10,  # a save is reported 10-20 ms after it (50: 50-100 ms)
                    rust_timeout=500,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    touched = [p for _kind, p in batch] if batch else []
                    if not live:  # the watch is set up now: a save made before it (while the
                        live = True  # first result compiled, or between two watches) counts too
                        touched += [str(f) for f in self.files()]
                    change = self.collect(touched) if touched else None
                    if change is not None:
                        self.on_change(change)
                    if self._moved or self._folders()[0] != folders:
                        break  # other paths to follow (set_paths, a folder came or went)
            except Exception:  # a folder vanished under the watch: start over
                self._stop.wait(self.interval)

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                change = self.check()
            except Exception:  # a vanished folder mid-walk: try again next period
                continue
            if change is not None:
                self.on_change(change)

    def start(self) -> Watcher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="cutediff-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# ---------------------------------------------------------------- keeping the cursor


def map_line(old_text: str, new_text: str, line: int) -> int:
    """Line ``line`` (1-based) of ``old_text``, carried over the edit into ``new_text``.

    An unchanged line moves with the lines inserted or deleted above it; a line inside a
    rewritten block lands at the same offset in the new block (clamped); a deleted line lands
    on the line that now follows the deletion.
    """
    old = old_text.splitlines()
    new = new_text.splitlines()
    if not new:
        return 1
    i = max(0, line - 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if not (i1 <= i < i2):
            continue
        if tag == "equal":
            return j1 + (i - i1) + 1
        if tag == "replace":
            return min(j1 + (i - i1), j2 - 1) + 1
        if tag == "delete":
            return min(j1, len(new) - 1) + 1
    return min(i, len(new) - 1) + 1  # past the end of the old text


def same_file(a: str | Path | None, b: str | Path | None) -> bool:
    """Whether two spellings name one file: equal, equal once resolved, or one a path suffix of the other."""
    if a is None or b is None:
        return False
    sa, sb = str(a), str(b)
    if sa == sb:
        return True
    pa, pb = Path(sa), Path(sb)
    if pa.is_absolute() and pb.is_absolute():
        try:
            return pa.resolve() == pb.resolve()
        except OSError:
            return False
    short, long_ = (pa, pb) if len(pa.parts) <= len(pb.parts) else (pb, pa)
    return len(short.parts) > 0 and long_.parts[-len(short.parts) :] == short.parts


@dataclass(frozen=True)
class Anchor:
    """Where a cursor is, in source terms: a file, a line, and which of that line's rows (0-based)."""

    file: str
    line: int
    ordinal: int = 0


def row_for_source(
    rows: Sequence[tuple[str | None, int | None] | None], file: str | Path, line: int, ordinal: int = 0
) -> int | None:
    """Index of the ``ordinal``-th row showing ``file:line`` (or its last one); else the row of the
    nearest line of the same file (an earlier line wins a tie); None when the file is not shown."""
    exact: list[int] = []
    best: tuple[int, int] | None = None  # (distance, row)
    for r, loc in enumerate(rows):
        if not loc or loc[0] is None or loc[1] is None or not same_file(loc[0], file):
            continue
        d = loc[1] - line
        if d == 0:
            exact.append(r)
            continue
        key = (abs(d) * 2 + (1 if d > 0 else 0), r)
        if best is None or key < best:
            best = key
    if exact:
        return exact[min(ordinal, len(exact) - 1)]
    return best[1] if best else None


def _model_rows(model: Any, side: str) -> list[tuple[str | None, int | None] | None]:
    """(file, line) per row of one side of a view model (duck-typed ``ui.model.PaneModel``)."""
    out: list[tuple[str | None, int | None] | None] = []
    for r in range(len(model)):
        ln = model.line_at(r, side)
        out.append((getattr(ln, "file", None), getattr(ln, "line", None)) if ln is not None else None)
    return out


def cursor_anchor(model: Any, side: str, row: int) -> Anchor | None:
    """The source position under ``row`` of ``side`` (None where the row has no line info)."""
    rows = _model_rows(model, side)
    file, line = (rows[row] or (None, None)) if 0 <= row < len(rows) else (None, None)
    if file is None or line is None:
        return None
    ordinal = sum(1 for loc in rows[:row] if loc and loc[1] == line and same_file(loc[0], file))
    return Anchor(str(file), int(line), ordinal)


def keep_cursor(model: Any, side: str, anchor: Anchor | None, change: Change | None = None) -> int | None:
    """The row of the rebuilt ``model`` that shows the anchor's source line, moved over ``change``."""
    if anchor is None:
        return None
    line = change.map_line(anchor.file, anchor.line) if change is not None else anchor.line
    return row_for_source(_model_rows(model, side), anchor.file, line, anchor.ordinal)


@dataclass(frozen=True)
class ErrorSite:
    """The source line a compile error points at: file, 1-based line, and the line's text."""

    file: str
    line: int
    text: str


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_SENTENCE_SITE = re.compile(r"([\w./\\-]+\.py)\b[^.]*?\bline (\d+)")


def error_site(sentence: str, log: str, files: Iterable[str | Path]) -> ErrorSite | None:
    """Where an error points in the watched ``files``: the innermost traceback frame in one of
    them, else a ``FILE … line N`` in the sentence (a syntax error); None when neither is there."""
    watched = [Path(f) for f in files]
    hits: list[tuple[str, int]] = [(f.group(1), int(f.group(2))) for f in _FRAME.finditer(log or "")]
    named = _SENTENCE_SITE.search(sentence or "")
    if named:
        hits.append((named.group(1), int(named.group(2))))
    for file, line in reversed(hits):
        match = next((w for w in watched if same_file(w, file)), None)
        if match is None:
            continue
        try:
            lines = match.read_text(errors="replace").splitlines()
        except OSError:
            lines = []
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return ErrorSite(str(match), line, text)
    return None


# ---------------------------------------------------------------- recompiling


class CompareWatch:
    """Recompile a comparison whenever its sources change (see the module doc for the TUI hook).

    ``opts``: the :class:`~cutediff_tui.core.compare.CompareOptions` of the first comparison;
    ``plan``: its :class:`~cutediff_tui.core.recipes.sources.SourcePlan`; ``given``: the
    parameters the user gave (re-checked against the recipe's declaration after each edit).
    Callbacks run in the watch's thread.
    """

    def __init__(
        self,
        opts: Any,
        plan: Any,
        *,
        on_result: Callable[[dict, Change | None], Any],
        on_error: Callable[[str, Change | None], Any] | None = None,
        progress: Progress | None = None,
        given: dict | None = None,
        interval: float = 0.25,
        on_start: Callable[[Change], Any] | None = None,
        seen: dict[Path, str | None] | None = None,
    ) -> None:
        self.opts = opts
        self.plan = plan
        self.given = dict(given or {})
        self.on_result = on_result
        self.on_error = on_error or (lambda _m, _c: None)
        self.progress: Progress = progress or noop
        self.on_start = on_start or (lambda _c: None)
        self.round = 0
        self._released = False  # the warm workers the recompiles do not use are all stopped
        self._changes: list[Change] = []
        self._cond = threading.Condition()
        self._cancel = threading.Event()
        self._stop = threading.Event()
        self._busy = False
        self._thread: threading.Thread | None = None
        self.watcher = Watcher(list(plan.watched()), self._changed, interval=interval, seen=seen)

    def watched(self) -> list[Path]:
        return self.watcher.files()

    def _changed(self, change: Change) -> None:
        stamp("watch: change seen", files=[str(p) for p in change.paths])
        watched = self.plan.watched()
        for p in change.paths:
            for root, sides in watched.items():
                if same_file(root, p) or root in p.parents:
                    change.sides |= sides
        with self._cond:
            self._changes.append(change)
            if self._busy:
                self._cancel.set()  # the running compile is for stale sources
            self._cond.notify_all()

    def _merge(self, changes: list[Change]) -> Change:
        """Several changes since the last compile as one (texts: the first before, the last after)."""
        out = Change([])
        for c in changes:
            for p in c.paths:
                if p not in out.paths:
                    out.paths.append(p)
                    out.before[p] = c.before.get(p)
                out.after[p] = c.after.get(p)
            out.sides |= c.sides
            out.at = c.at
        return out

    def _refresh_plan(self) -> None:
        from .recipes import coerce_params

        plan = self.plan.reload()
        params = coerce_params(plan.primary, self.given)
        self.plan = plan
        # one build per side while editing: the line-info build, without the plain confirmation
        self.opts = replace(self.opts, recipe=plan.primary, params=params, use_cache=True, plain_check=False)
        self.watcher.set_paths(list(plan.watched()))
        if not self._released:  # until none is left (one still in use is tried next save)
            self._released = self._release_unused()

    def _compile(self, change: Change | None) -> bool:
        """One round; True when a new comparison was handed to ``on_result``."""
        from .recipes.sources import run_compare_plan

        self._cancel.clear()
        stamp("watch: round started")
        try:
            if change is not None:
                self._refresh_plan()
            comparison = run_compare_plan(self.opts, self.plan, self.progress, self._cancel)
        except CutediffError as exc:
            if not self._cancel.is_set():
                self.on_error(exc.sentence(), change)
            return False
        if self._cancel.is_set():
            if not self._stop.is_set():
                self.progress("the sources changed again while compiling; starting over")
            return False
        self.round += 1
        self.opts = replace(self.opts, use_cache=True)
        stamp("watch: result handed over")
        self.on_result(comparison, change)
        return True

    def _loop(self, initial: bool) -> None:
        if initial:
            with self._cond:
                self._busy = True
            self._compile(None)
            with self._cond:
                self._busy = False
        unshown: list[Change] = []  # changes since the comparison last handed over
        while not self._stop.is_set():
            with self._cond:
                while not self._changes and not self._stop.is_set():
                    self._cond.wait(0.5)
                if self._stop.is_set():
                    return
                fresh, self._changes = self._changes, []
                self._busy = True
            unshown += fresh
            latest = self._merge(fresh)
            sides = " and ".join(s.upper() for s in sorted(latest.sides)) or "A and B"
            self.progress(f"{latest.names()} changed: recompiling side {sides}")
            self.on_start(latest)
            if self._compile(self._merge(unshown)):
                unshown = []
            with self._cond:
                self._busy = False

    def start(self, *, initial: bool = True) -> CompareWatch:
        """Start polling (and, with ``initial``, make the first comparison in the background)."""
        self.watcher.start()
        self._thread = threading.Thread(target=self._loop, args=(initial,), name="cutediff-recompile", daemon=True)
        self._thread.start()
        threading.Thread(target=self._prewarm, name="cutediff-prewarm", daemon=True).start()
        return self

    def _prewarm(self) -> None:
        """Start the warm workers the recompiles will use (line info, both toolchains) now, so
        that the first save does not wait for the imports."""
        from . import warm
        from .build import prewarm
        from .toolchain import create_env

        if warm.active() is None:
            return
        try:
            for spec in self.opts.specs:
                prewarm(create_env(spec, wheelhouse=self.opts.wheelhouse), lineinfo=bool(self.opts.lineinfo))
        except Exception:  # the recompile reports any real problem with one sentence
            return

    def _release_unused(self) -> bool:
        """Stop the warm workers of the other line-info switch, which a first compare with the
        plain check started and the recompiles (one build per side) never use: ~365 MiB each.
        True when none is left."""
        from .build import release_warm
        from .toolchain import create_env

        try:
            envs = [create_env(spec, wheelhouse=self.opts.wheelhouse) for spec in self.opts.specs]
            why = "the watch builds once per side"
            return all([release_warm(env, lineinfo=not self.opts.lineinfo, why=why) for env in envs])
        except Exception:  # only memory is at stake
            return True

    def stop(self) -> None:
        """Stop polling and cancel a compile in flight (its worker is killed; nothing is cached)."""
        self._stop.set()
        self._cancel.set()
        with self._cond:
            self._cond.notify_all()
        self.watcher.stop()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
