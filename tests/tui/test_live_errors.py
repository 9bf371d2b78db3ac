"""Watch errors as a kernel author meets them (review of issue 19): the error banner above a
pane must say what went wrong and where, at the terminal sizes the TUI supports.

Driven by the messages a watch posts, with the sentences and logs real compiles gave
(``cutediff compare 4.5.1 4.8.0 --kernel RECIPE.py --watch --tui`` on copies of the sample recipes).
"""

from __future__ import annotations

import copy

from textual.geometry import Region

from cutediff_tui.core.watch import Change
from cutediff_tui.ui.live import LiveBanner
from cutediff_tui.ui.messages import LiveError, LiveResult
from cutediff_tui.ui.screens.main import MainScreen

from .conftest import settle


def _visible(banner: LiveBanner) -> str:
    """The text the banner shows on screen (its lines cut to its height and width)."""
    width, height = banner.outer_size
    return " ".join(strip.text.strip() for strip in banner.render_lines(Region(0, 0, width, height)))


async def test_a_syntax_error_banner_says_syntax_error_on_an_80x24_terminal(make_app, comparison, tmp_path):
    """Seen at 80x24: the banner showed ``local_array.py:66: def local_array(ctx:`` and
    ``Recipe file /tmp/r19/local_array.py``; "has a syntax error on line 66" and the fix were
    cut off by its three lines, and nothing else on screen said what was wrong."""
    recipe = tmp_path / "local_array.py"
    recipe.write_text("import cutlass\n\n\ndef local_array(ctx:\n    pass\n")
    sentence = f"Recipe file {recipe} has a syntax error on line 4 ('(' was never closed). Fix it and run again."
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        app.post_message(LiveError(sentence, Change([recipe], sides={"a", "b"})))
        await settle(pilot)
        shown = screen.live_banner("b")
        assert shown is not None and shown.state == "error"
        assert "syntax error" in _visible(shown), _visible(shown)


async def test_a_recipe_runtime_error_banner_points_at_the_recipe_line(make_app, comparison, tmp_path):
    """A recipe that raises while compiling (here a KeyError on line 3): the side's
    ``error_log`` holds the traceback with the recipe's frame, and ``core.watch.error_site``
    finds the innermost watched frame in a log, but the banner is made from the sentence alone
    (``error_for_side`` passes an empty log), so a runtime error never shows its line, unlike a
    syntax error."""
    recipe = tmp_path / "my_recipe.py"
    recipe.write_text('def add(ctx):\n    p = ctx.params\n    compile_it(p["dynamicc"])\n')
    sentence = (
        f"Side B: recipe {recipe}:add failed while compiling (KeyError: 'dynamicc'). "
        "The full log is kept; run with --debug to see the traceback."
    )
    log = (
        "Traceback (most recent call last):\n"
        '  File "/site/cutediff_tui/core/worker.py", line 268, in run_recipe\n'
        "    func(ctx)\n"
        f'  File "{recipe}", line 3, in add\n'
        '    compile_it(p["dynamicc"])\n'
        "KeyError: 'dynamicc'"
    )
    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        failed = copy.deepcopy(comparison)
        failed["sides"]["b"]["error"] = sentence
        failed["sides"]["b"]["error_log"] = log
        app.post_message(LiveResult(failed, Change([recipe], sides={"b"})))
        await settle(pilot)
        shown = screen.live_banner("b")
        assert shown is not None and shown.state == "error" and "KeyError" in shown.message
        assert 'my_recipe.py:3: compile_it(p["dynamicc"])' in shown.message, shown.message


async def test_a_side_that_compiled_does_not_silently_show_the_previous_save(make_app, comparison):
    """Seen with real compiles: a save that side A compiled and side B failed on (a recipe that
    raises on DSL 4.8 only). B's banner said "(showing the last good build)"; A's pane kept the
    listing of the save before, with no banner and nothing on its title, though A had just
    compiled the new one: the constant edited in that save was not in A's listing. Side A must
    show its new build, or say that it shows an older one."""
    from cutediff_tui.ui.widgets.bars import PaneTitle

    app = make_app(copy.deepcopy(comparison))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        name = screen.kernel["name"]
        new = copy.deepcopy(comparison)
        k = next(k for k in new["kernels"] if k["name"] == name)
        k["a"]["registers"] = int(k["a"]["registers"]) + 8  # what side A's new build gave
        new["sides"]["b"]["error"] = (
            "Side B: recipe /tmp/r19/rs.py:row_sum failed while compiling "
            "(RuntimeError: this recipe path is broken on 4.8 only)."
        )
        app.post_message(LiveResult(new, Change([], sides={"a", "b"})))
        await settle(pilot)
        assert screen.live_banner("b") is not None and screen.live_banner("b").state == "error"
        shows_new = screen.kernel["a"]["registers"] == k["a"]["registers"]
        title_a = str(screen.query_one("#title-a", PaneTitle).render())
        banner_a = screen.live_banner("a")
        warned = (banner_a is not None and banner_a.state != "") or "last good" in title_a or "previous" in title_a
        assert shows_new or warned, f"side A shows the previous save's build silently: {title_a!r}"
