"""--watch pieces without compiling: polling, line mapping, cursor keeping, the recompile loop."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutediff_tui.core.watch import (
    Anchor,
    Change,
    CompareWatch,
    Watcher,
    cursor_anchor,
    keep_cursor,
    map_line,
    row_for_source,
    same_file,
)

# ---------------------------------------------------------------- line mapping


OLD = "a\nb\nc\nd\ne\n"


@pytest.mark.parametrize(
    "new, line, expected",
    [
        ("x\ny\na\nb\nc\nd\ne\n", 3, 5),  # two lines inserted above
        ("b\nc\nd\ne\n", 4, 3),  # one deleted above
        ("a\nb\nC\nd\ne\n", 3, 3),  # the line itself rewritten
        ("a\nb\nd\ne\n", 3, 3),  # the line deleted: the next one takes its place
        ("a\nb\nc\nd\ne\nf\ng\n", 5, 5),  # appended below
        ("", 2, 1),
    ],
)
def test_map_line(new, line, expected):
    assert map_line(OLD, new, line) == expected


def test_same_file():
    assert same_file("/x/y/z.py", "/x/y/z.py")
    assert same_file("y/z.py", "/x/y/z.py") and same_file("/x/y/z.py", "z.py")
    assert not same_file("/x/y/z.py", "/x/q/z.py") and not same_file(None, "z.py")


def test_row_for_source():
    rows = [None, ("/r.py", 10), ("/r.py", 12), ("/r.py", 12), ("/o.py", 12), ("/r.py", 20)]
    assert row_for_source(rows, "/r.py", 12) == 2
    assert row_for_source(rows, "/r.py", 12, ordinal=1) == 3
    assert row_for_source(rows, "/r.py", 12, ordinal=9) == 3
    assert row_for_source(rows, "/r.py", 11) == 1  # tie: the earlier line wins
    assert row_for_source(rows, "/r.py", 17) == 5
    assert row_for_source(rows, "/elsewhere.py", 1) is None


@dataclass
class Ln:
    file: str | None
    line: int | None


class FakeModel:
    """Duck-types ui.model.PaneModel: len() and line_at(row, side)."""

    def __init__(self, lines):
        self.lines = lines

    def __len__(self):
        return len(self.lines)

    def line_at(self, row, side):
        return self.lines[row]


def test_cursor_kept_over_an_edit():
    old_text = "\n".join(f"line {i}" for i in range(1, 31)) + "\n"
    new_text = "# one\n# two\n# three\n" + old_text
    f = "/src/recipe.py"
    old = FakeModel([Ln(f, 5), Ln(f, 7), Ln(f, 7), Ln(None, None), Ln(f, 9)])
    anchor = cursor_anchor(old, "b", 2)
    assert anchor == Anchor(f, 7, 1)
    assert cursor_anchor(old, "b", 3) is None
    change = Change([Path(f)], {Path(f): old_text}, {Path(f): new_text})
    assert change.map_line(f, 7) == 10 and change.map_line("/other.py", 7) == 7
    new = FakeModel([Ln(f, 8), Ln(f, 10), Ln(f, 10), Ln(f, 10), Ln(f, 12)])
    assert keep_cursor(new, "b", anchor, change) == 2
    assert keep_cursor(new, "b", None, change) is None


# ---------------------------------------------------------------- polling


def test_watcher_reports_content_changes_once_settled(tmp_path):
    f = tmp_path / "r.py"
    f.write_text("x = 1\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "notes.txt").write_text("ignored\n")
    w = Watcher([f, pkg], lambda c: None)
    assert {p.name for p in w.files()} == {"r.py", "a.py"}
    assert w.check() is None
    f.write_text("x = 2\n")
    assert w.check() is None  # seen moving: reported once it stops
    change = w.check()
    assert change is not None and change.paths == [f]
    assert change.before[f] == "x = 1\n" and change.after[f] == "x = 2\n"
    assert w.check() is None
    st = f.stat()  # a touch that keeps the content is no change
    import os

    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    w.check()
    assert w.check() is None
    (pkg / "b.py").write_text("B = 1\n")  # a new file under a watched folder
    w.check()
    change = w.check()
    assert change is not None and change.paths == [pkg / "b.py"] and change.before[pkg / "b.py"] is None
    w.set_paths([f])
    assert w.files() == [f]


def test_watcher_thread_calls_back(tmp_path):
    f = tmp_path / "r.py"
    f.write_text("x = 1\n")
    seen: list[Change] = []
    got = threading.Event()

    def on_change(c):
        seen.append(c)
        got.set()

    with Watcher([f], on_change, interval=0.05):
        time.sleep(0.1)
        f.write_text("x = 22\n")
        assert got.wait(5)
    assert seen[0].paths == [f]


def test_a_save_before_the_watch_started_counts(tmp_path):
    """The digests taken before the shown result was built (``seen``): a save made while it
    compiled, before the watch existed, raises no file event; the watch finds it when it starts
    (its first look compares every file) instead of waiting for the next save. Without ``seen``
    the watch takes what it reads at start as already shown."""
    from cutediff_tui.core.watch import source_digests

    f = tmp_path / "r.py"
    f.write_text("x = 1\n")
    seen_before = source_digests([f])
    f.write_text("x = 2\n")  # the save nobody watched
    got: list[Change] = []
    event = threading.Event()

    def on_change(c):
        got.append(c)
        event.set()

    with Watcher([f], on_change, interval=0.05, seen=seen_before):
        assert event.wait(5), "the earlier save was not noticed"
    assert got[0].paths == [f] and got[0].after[f] == "x = 2\n"
    quiet = threading.Event()
    with Watcher([f], lambda c: quiet.set(), interval=0.05):  # no seen: nothing to report
        assert not quiet.wait(1.0)


# ---------------------------------------------------------------- the recompile loop (compile faked)


def test_compare_watch_recompiles_and_survives_errors(tmp_path, monkeypatch):
    from cutediff_tui.core.compare import CompareOptions
    from cutediff_tui.core.gpu import resolve_profile
    from cutediff_tui.core.recipes import get_recipe, sources
    from cutediff_tui.core.toolchain import parse_side

    f = tmp_path / "r.py"
    f.write_text(
        "from cutediff_tui.core.recipes import recipe\n\n"
        '@recipe(params=[{"name": "n", "default": 1}])\ndef build(ctx):\n    pass\n'
    )
    primary = get_recipe(str(f))
    spec = parse_side("4.8.0")
    opts = CompareOptions(specs=(spec, spec), recipe=primary, params={"n": 1}, profile=resolve_profile(arch="sm_90a"))
    plan = sources.plan_sources(primary)
    runs: list[dict] = []

    def fake_run(o, p, progress, cancel):
        runs.append({"params": dict(o.params), "entry": p.sides[0].recipe.entry})
        return {"round": len(runs), "params": dict(o.params)}

    monkeypatch.setattr(sources, "run_compare_plan", fake_run)
    results: list = []
    errors: list = []
    event = threading.Event()
    watch = CompareWatch(
        opts,
        plan,
        given={"n": "5"},
        interval=0.05,
        on_result=lambda c, ch: (results.append((c, ch)), event.set()),
        on_error=lambda m, ch: (errors.append(m), event.set()),
    )
    assert [p.name for p in watch.watched()] == ["r.py"]
    watch.start(initial=True)
    try:
        assert event.wait(5) and results[0][1] is None
        event.clear()
        f.write_text(f.read_text().replace('"default": 1', '"default": 2'))
        assert event.wait(5)
        comparison, change = results[-1]
        assert change.paths == [f] and change.sides == {"a", "b"}
        assert comparison["params"] == {"n": 5}  # the user's value, re-checked against the new declaration
        event.clear()
        f.write_text("def build(ctx)\n")  # a syntax error: reported, the watch goes on
        assert event.wait(5)
        assert errors and "syntax error on line 1" in errors[-1]
        event.clear()
        f.write_text("def build(ctx):\n    pass\n")
        assert event.wait(5)
        # undeclared now: n is no longer a parameter of the recipe
        assert "has no parameter 'n'" in errors[-1]
    finally:
        watch.stop()
    assert len(results) == 2
