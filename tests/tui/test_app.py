"""Pilot tests of the app on the bundled sample."""

from __future__ import annotations

import pytest

from cutediff_tui.ui.app import CutediffApp
from cutediff_tui.ui.screens.main import MainScreen
from cutediff_tui.ui.widgets.header import ComparisonHeader
from cutediff_tui.ui.widgets.metrics import MetricsPane
from cutediff_tui.ui.widgets.source_pane import SourcePane

from .conftest import has_sample, kernel_named, settle

FA4 = "FlashAttentionForwardSm100"
SIZES = [(120, 36), (80, 24)]


async def open_fa4(pilot) -> MainScreen:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen)
    index, _ = kernel_named(screen.comparison, FA4)
    if screen.kernel_index != index:
        screen.kernel_index = index
        await settle(pilot)
    return screen


@pytest.mark.parametrize("size", SIZES)
async def test_opens_sample_with_versions_and_resources(make_app, size):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        screen = await open_fa4(pilot)
        header = str(screen.query_one(ComparisonHeader).render())
        assert "DSL 4.5.1" in header and "DSL 4.8.0" in header and "sm_103a" in header
        rows = {key: (a, b) for key, _label, a, b, _d in screen.query_one(MetricsPane).rows}
        assert rows["stack_bytes"] == ("0", "112")
        assert rows["spill_store_bytes"] == ("0", "176")
        text = screen.query_one(MetricsPane).text()
        assert "stack" in text and "+112" in text and "+176" in text
        # both panes hold the aligned SASS
        assert screen.model is not None and screen.model.view == "sass"
        assert screen.pane("a").lines_here > 1000 and screen.pane("b").lines_here > 1000


async def test_spill_key_lands_on_b_spill_and_shows_source(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert screen.active_side == "b"
        line = screen.current_line("b")
        assert line is not None and line.opcode in ("STL", "LDL") and line.spill
        assert app.focused is screen.pane("b")
        source = screen.query_one(SourcePane)
        assert source.file and source.file.endswith(".py") and isinstance(source.line, int)
        assert f":{source.line}" in str(source.border_title)
        first = screen.cursor
        await pilot.press("s")
        assert screen.cursor > first
        await pilot.press("S")
        assert screen.cursor == first


async def test_next_hunk(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        assert screen.cursor == 0
        await pilot.press("d")
        first = screen.cursor
        hit = screen.model.hunk_at(first)
        assert first > 0 and hit is not None and hit[1].start == first and hit[1].kind != "regalloc"
        await pilot.press("d")
        assert screen.cursor > first
        await pilot.press("D")
        assert screen.cursor == first


async def test_cursor_keys_and_kernel_keys(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("j", "j", "j", "k")
        assert screen.cursor == 2
        await pilot.press("G")
        assert screen.cursor == len(screen.model.rows) - 1
        await pilot.press("g")
        assert screen.cursor == 0
        await pilot.press("ctrl+d")
        half = screen.cursor
        assert half > 3
        await pilot.press("ctrl+u")
        assert screen.cursor == 0
        n = len(screen.comparison["kernels"])
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.kernel_index == (1 % n)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert screen.kernel_index == 0 or n == 1


async def test_views_switch_and_log_view(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("2")
        await settle(pilot)
        assert screen.view == "ptx" and screen.model.view == "ptx"
        assert screen.model.a.lines and screen.model.b.lines
        await pilot.press("4")
        await settle(pilot)
        texts = [ln.text for ln in screen.model.b.lines]
        assert any("112 bytes stack frame" in t for t in texts)
        assert any(t.startswith("ptxas") for t in texts)
        await pilot.press("3")
        await settle(pilot)
        assert screen.model.view == "mlir"
        if has_sample():  # the sample keeps kernel.mlir for both sides
            assert screen.model.a.lines and screen.model.b.lines
        await pilot.press("1")
        await settle(pilot)
        assert screen.model.view == "sass"


async def test_search_and_jump(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("slash")
        await pilot.press(*"STL")
        await pilot.press("enter")
        await pilot.pause()
        line = screen.current_line("b")
        assert line is not None and "STL" in line.text
        target = screen.model.b.lines[200].addr
        await pilot.press("colon")
        await pilot.press(*f"0x{target:x}")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.current_line("b").addr == target
        # a source line: the first instruction of side B compiled from it
        spill = screen.model.line_at(screen.model.spill_rows("b")[0], "b")
        where = f"{spill.file.rsplit('/', 1)[-1]}:{spill.line}"
        await pilot.press("g", "colon", *where, "enter")
        await pilot.pause()
        line = screen.current_line("b")
        assert line.line == spill.line and line.file == spill.file


async def test_normalise_toggle(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("o")
        await pilot.pause()
        assert screen.normalised and screen.pane("b").normalised
        assert app.settings.normalise is True
        pane = screen.pane("b")
        text = "".join(pane.render_line(y).text for y in range(pane.size.height))
        assert "R•" in text
        await pilot.press("o")
        assert not screen.normalised


async def test_mouse_click_moves_cursor(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.click("#pane-a", offset=(10, 5))
        await pilot.pause()
        assert screen.cursor == 5 and screen.active_side == "a"


async def test_export_writes_report(make_app, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")  # the dialog proposes cutediff-report.md in the working folder
        await settle(pilot)
    report = tmp_path / "cutediff-report.md"
    assert report.is_file()
    assert FA4 in report.read_text()


async def test_compare_dialog_filters_versions(make_app):
    from cutediff_tui.ui.screens.compare import CompareScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, CompareScreen)
        assert dialog.selected == {"a": "4.5.1", "b": "4.8.0"}
        await pilot.click("#filter-a")
        await pilot.press(*"4.8")
        await pilot.pause()
        shown = dialog.shown_versions("a")
        assert shown[0] in ("4.8.1.dev0", "4.8.0") and "4.8.0" in shown[:2]
        assert "4.5.1" not in shown[:2]
        opts = dialog.build_options()
        assert opts.specs[1].dsl == "4.8.0" and opts.profile.arch == "sm_103a"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_compare_dialog_offline_versions(make_app, monkeypatch):
    """Without injected versions the dialog asks the core in a worker (offline here)."""
    from cutediff_tui.core import toolchain
    from cutediff_tui.core.errors import ToolchainError
    from cutediff_tui.ui.screens.compare import CompareScreen

    def offline(*_a, offline: bool = False, **_k):
        if not offline:
            raise ToolchainError("Could not reach the package index.")
        return ["4.7.0"]

    monkeypatch.setattr(toolchain, "published_versions", offline)
    monkeypatch.setattr(toolchain, "list_envs", list)
    app = make_app(versions=None, installed=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("c")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, CompareScreen)
        assert dialog.shown_versions("b") == ["4.7.0"]
        assert "Offline" in str(dialog.query_one("#status").render())


async def test_help_lists_every_binding(make_app):
    from cutediff_tui.ui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        text = help_screen.text()
        for binding in [*MainScreen.BINDINGS, *CutediffApp.BINDINGS]:
            assert binding.id and binding.tooltip, binding
            assert binding.description in text and binding.tooltip in text, binding.id
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_quit(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0 or not app.is_running


async def test_bench_pane_with_a_gpu_offers_to_run(make_app):
    app = make_app(gpu_probe={"name": "NVIDIA H200", "arch": "sm_90a"})
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("b")
        await settle(pilot)
        text = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "NVIDIA H200" in text and "press r" in text
        await pilot.press("escape")


async def test_side_error_keeps_other_side_usable(make_app, comparison):
    comparison["sides"]["b"]["error"] = "Side B: the compile failed: ptxas ran out of registers."
    for k in comparison["kernels"]:
        k["b"] = None
    app = make_app(comparison)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        assert "ptxas ran out of registers" in (screen.pane("b").note or "")
        assert screen.pane("a").lines_here > 0
        await pilot.press("j", "j")
        assert screen.cursor == 2
        assert "ptxas ran out" in app.export_screenshot().replace("&#160;", " ")
        assert "failed" in str(screen.query_one(ComparisonHeader).render())


async def test_too_small_terminal_shows_notice(make_app):
    app = make_app()
    async with app.run_test(size=(50, 12)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-too-small")
        assert "needs at least 60×16" in str(app.screen.query_one("#too-small").render())


async def test_theme_switch_is_remembered(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme == "cutediff-dark"
        app.theme = "cutediff-light"
        await pilot.pause()
    again = make_app()
    assert again.theme == "cutediff-light"


async def test_palette_provider_commands(make_app):
    from cutediff_tui.ui.commands import CutediffCommands

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        provider = CutediffCommands(app.screen)
        names = [hit.text for hit in [h async for h in provider.discover()]]
        for name in (
            "view: next spill site",
            "view: SASS",
            "export: report to a file",
            "export: copy report to clipboard",
            "compare: new",
            "theme: dark",
            "theme: light",
            "theme: high-contrast",
        ):
            assert name in names
        assert all(": " in n for n in names)
        hits = [h async for h in provider.search("next spill")]
        assert hits and "spill" in str(hits[0].match_display)
        app.call_later(hits[0].command)
        await settle(pilot)
        assert app.screen.current_line("b").spill


async def test_all_themes_render(make_app):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        for theme in ("cutediff-light", "cutediff-high-contrast", "textual-dark", "cutediff-dark"):
            app.theme = theme
            await pilot.pause()
            assert "DSL&#160;4.8.0" in app.export_screenshot()


async def test_compile_flow_opens_new_comparison(make_app, comparison, monkeypatch):
    """ctrl+s builds options like the CLI, runs run_compare in a worker, then shows the result."""
    import copy

    from cutediff_tui.core import compare
    from cutediff_tui.core.events import DslImporting, KernelCompiled
    from cutediff_tui.ui.screens.compare import CompareScreen

    seen = {}
    result = copy.deepcopy(comparison)
    result["sides"]["a"]["dsl"] = "4.7.0"

    def fake_run_compare(opts, progress, cancel=None):
        seen["specs"] = [s.dsl for s in opts.specs]
        seen["recipe"] = opts.recipe.name
        progress(DslImporting("a", "build", "4.7.0"))
        progress(KernelCompiled("b", "build", 1, "fwd", 1.0))
        return result

    monkeypatch.setattr(compare, "run_compare", fake_run_compare)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, CompareScreen)
        dialog.selected["a"] = "4.7.0"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert seen == {"specs": ["4.7.0", "4.8.0"], "recipe": comparison["recipe"]["name"]}
        assert isinstance(app.screen, MainScreen)
        assert app.screen.comparison is result and app.comparison is result
        assert "DSL 4.7.0" in str(app.screen.query_one(ComparisonHeader).render())


async def test_compile_cancel(make_app, monkeypatch):
    import threading

    from cutediff_tui.core import compare
    from cutediff_tui.core.events import KernelCompiled
    from cutediff_tui.ui.screens.compare import CompareScreen

    started = threading.Event()

    def slow_run_compare(opts, progress, cancel=None):
        progress(KernelCompiled("b", "build", 1, "fwd", 2.0))
        progress("resolving both sides")
        started.set()
        assert cancel is not None and cancel.wait(10), "the dialog did not set the cancel event"
        return {}

    monkeypatch.setattr(compare, "run_compare", slow_run_compare)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_fa4(pilot)
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert started.wait(5)
        await pilot.pause()
        dialog = app.screen
        # the event's side picks the status line; nothing is parsed back from the text
        assert "B: build: compiled kernel 1 (fwd) in 2.0 s" in str(dialog.query_one("#status-b").render())
        assert "resolving both sides" in str(dialog.query_one("#status").render())
        assert "starting" in str(dialog.query_one("#status-a").render())
        worker = next(w for w in dialog.workers if w.group == "compare")
        await pilot.press("escape")  # cancels through the worker's own flag, the dialog stays
        await pilot.pause()
        assert worker.cancelled_event.is_set()
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, CompareScreen)
        assert "Cancelled" in str(dialog.query_one("#status").render())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_crosscheck_runs_in_worker_and_shows_matrix(make_app, monkeypatch):
    from cutediff_tui.core import analysis_pipeline
    from cutediff_tui.ui.screens.crosscheck import CrosscheckScreen

    seen = {}

    def fake_crosscheck(comparison, opts, progress):
        seen["versions"] = opts.crosscheck
        seen["arch"] = opts.profile.arch
        return {
            FA4: {
                "matrix": [
                    {
                        "side": "B (4.8.0)",
                        "ptxas_version": "13.0",
                        "ptx_version": "9.4",
                        "registers": 128,
                        "stack": 48,
                        "spill_stores": 120,
                        "spill_loads": 100,
                        "error": None,
                        "rewritten_from": "9.4",
                    }
                ]
            }
        }

    monkeypatch.setattr(analysis_pipeline, "run_crosscheck", fake_crosscheck)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_fa4(pilot)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("enter")  # accept the suggested ptxas versions
        await settle(pilot)
        assert seen["arch"] == "sm_103a" and seen["versions"]
        assert isinstance(app.screen, CrosscheckScreen)
        assert screen.comparison["crosscheck"][FA4]["matrix"][0]["stack"] == 48
        await pilot.press("escape")
