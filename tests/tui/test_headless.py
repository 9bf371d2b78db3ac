"""The headless parts of the UI package: model, jump parsing, themes, settings, export."""

from __future__ import annotations

import json

import pytest

from cutediff_tui.ui.model import (
    CodeLine,
    PaneModel,
    Row,
    RowHunk,
    SideLines,
    align_lines,
    normalise_registers,
    parse_jump,
)


def tiny_model() -> PaneModel:
    a = [
        CodeLine("IADD3 R1, R2, R3", addr=0x0),
        CodeLine("MOV R4, R5", addr=0x10),
        CodeLine("EXIT", addr=0x20, file="k.py", line=7),
    ]
    b = [
        CodeLine("IADD3 R1, R2, R3", addr=0x0),
        CodeLine("STL [R1+0x4], R2", addr=0x10, spill=True, opcode="STL"),
        CodeLine("MOV R6, R7", addr=0x20),
        CodeLine("EXIT", addr=0x30, file="k.py", line=7),
    ]
    rows = [Row("same", 0, 0), Row("inserted", None, 1), Row("regalloc", 1, 2), Row("same", 2, 3)]
    hunks = [RowHunk(1, 2, "inserted", "+1 STL"), RowHunk(2, 3, "regalloc")]
    return PaneModel("sass", "sass", SideLines(a), SideLines(b), rows, hunks, 85.7)


def test_model_navigation():
    m = tiny_model()
    assert m.spill_rows("b") == [1] and m.spill_rows("a") == []
    assert m.next_spill("b", 0) == 1 and m.next_spill("b", 1) == 1  # wraps
    assert m.next_hunk(0).start == 1  # the regalloc hunk is skipped
    assert m.next_hunk(3, -1).start == 1
    assert m.hunk_at(1)[1].summary == "+1 STL"
    assert m.line_at(1, "a") is None and m.line_at(1, "b").opcode == "STL"
    assert m.find_addr("b", 0x30) == 3 and m.find_addr("a", 0x20) == 3
    assert m.find_source("a", 7, "k.py") == 3
    assert m.addr_width == 4 and m.text_width == len("STL [R1+0x4], R2")


def test_model_search_regex_then_fuzzy():
    m = tiny_model()
    assert m.search("b", r"STL\b", -1) == (1, "regex")
    assert m.search("b", "MOV R6 R7", -1)[1] == "fuzzy"
    assert m.search("b", "zzzzzzzz", -1) == (None, "no match")
    assert m.search("b", "[", -1)[1] in ("fuzzy", "no match")  # a bad regex is not an error


def test_model_pressure_buckets():
    lines = [CodeLine("X", live=v) for v in (1, 5, 2, 8)]
    m = PaneModel("sass", "sass", SideLines(lines), SideLines([]), [Row("same", i, None) for i in range(4)])
    assert m.pressure("a", 2) == [5, 8]
    assert m.pressure("b") == []


def test_align_lines():
    rows, hunks, pct = align_lines(["a", "b", "c"], ["a", "x", "c", "d"])
    assert [(r.kind, r.a, r.b) for r in rows] == [
        ("same", 0, 0),
        ("changed", 1, 1),
        ("same", 2, 2),
        ("inserted", None, 3),
    ]
    assert [(h.start, h.end) for h in hunks] == [(1, 2), (3, 4)]
    assert pct == pytest.approx(100 * 2 * 2 / 7, abs=0.01)


def test_normalise_registers():
    assert normalise_registers("IADD3 R12, UR4, P0, RZ", "sass") == "IADD3 R•, UR•, P•, RZ"
    assert normalise_registers("add.s32 %r12, %rd3, 4;", "ptx") == "add.s32 %r•, %rd•, 4;"
    assert normalise_registers("R12", "text") == "R12"


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("0x6630", "addr", 0x6630),
        ("6630", "addr", 0x6630),
        ("/*0a10*/", "addr", 0xA10),
        ("925", "line", 925),
        ("L925", "line", 925),
        ("mask.py:680", "line", 680),
        (".L_x_12", "label", ".L_x_12"),
        ("$L__BB0_2", "label", "$L__BB0_2"),
    ],
)
def test_parse_jump(text, kind, value):
    j = parse_jump(text)
    assert j is not None and j.kind == kind
    assert value == {"addr": j.addr, "line": j.line, "label": j.label}[kind]
    if text == "mask.py:680":
        assert j.file == "mask.py"


def test_parse_jump_rejects_nonsense():
    assert parse_jump("") is None and parse_jump("hello world") is None


def test_themes_define_domain_variables():
    from cutediff_tui.ui.themes import DOMAIN_DEFAULTS, load_themes

    loaded = load_themes()
    names = {t.name for t in loaded.themes}
    assert {"cutediff-dark", "cutediff-light", "cutediff-high-contrast"} <= names
    assert loaded.problems == []
    for theme in loaded.themes:
        missing = {"diff-added", "diff-removed", "spill", "regression", "improvement"} - set(theme.variables)
        assert not missing, (theme.name, missing)
        assert set(theme.variables) <= set(DOMAIN_DEFAULTS) | {
            "footer-key-foreground",
            "block-cursor-background",
            "block-cursor-foreground",
        }


def test_bad_theme_file_is_skipped(tmp_path):
    from cutediff_tui.ui.themes import DEFAULT_THEME, load_themes

    (tmp_path / "broken.toml").write_text("name = [")
    (tmp_path / "odd.toml").write_text('name = "x"\nprimary = "#fff"\ncolour = "red"\n')
    loaded = load_themes(tmp_path)
    assert [t.name for t in loaded.themes] == [DEFAULT_THEME]
    assert len(loaded.problems) == 2


def test_settings_round_trip(tmp_path, monkeypatch):
    from cutediff_tui.ui.settings import Settings, load_settings, save_settings, settings_path

    monkeypatch.setenv("CUTEDIFF_CONFIG_DIR", str(tmp_path / "cfg"))
    assert load_settings() == Settings()
    save_settings(Settings(theme="cutediff-light", normalise=True))
    assert json.loads(settings_path().read_text())["theme"] == "cutediff-light"
    assert load_settings().normalise is True
    settings_path().write_text("{not json")
    assert load_settings() == Settings()


def test_filter_versions_prefix_then_fuzzy():
    from cutediff_tui.ui.screens.compare import filter_versions

    versions = ["4.5.1", "4.8.0", "4.7.0", "4.8.1", "3.8.0"]
    assert filter_versions("4.8", versions)[:2] == ["4.8.1", "4.8.0"]
    assert filter_versions("", versions)[0] == "4.8.1"
    assert "4.5.1" in filter_versions("451", versions)


def test_sources_not_on_this_machine(comparison, tmp_path, monkeypatch):
    from cutediff_tui.ui.sources import display_path, resolve_source

    monkeypatch.chdir(tmp_path)
    ref = resolve_source("/nowhere/site/flash_attn/cute/mask.py", 680, {"sides": {}}, "b")
    assert ref.path is None and ref.label == "flash_attn/cute/mask.py:680"
    (tmp_path / "flash_attn" / "cute").mkdir(parents=True)
    (tmp_path / "flash_attn" / "cute" / "mask.py").write_text("x = 1\n")
    assert resolve_source("/tmp/ov-4.8.0/flash_attn/cute/mask.py", 1, {"sides": {}}, "b").path is not None
    assert display_path("/tmp/ov-4.8.0/flash_attn/cute/mask.py") == "flash_attn/cute/mask.py"
