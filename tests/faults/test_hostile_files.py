"""Broken cubins and settings files: one sentence or the defaults, never "internal error" (issue 16,
cases 7 and 8). The files are written by the tests under ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from .helpers import CUBIN_451, CUBIN_480, cutediff, one_sentence


def _patched(tmp_path, offset: int, fmt: str, value: int):
    data = bytearray(CUBIN_480.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    p = tmp_path / "broken.cubin"
    p.write_bytes(bytes(data))
    return p


@pytest.mark.parametrize(
    "field,offset,fmt,value",
    [
        ("e_shstrndx", 0x3E, "<H", 0xFFF0),
        ("e_shentsize", 0x3A, "<H", 8),
        ("name-table offset", None, None, None),
    ],
)
def test_cubin_with_a_broken_section_table_is_one_sentence(tmp_path, field, offset, fmt, value):
    if offset is None:  # the section-name table's offset points far past the end
        data = bytearray(CUBIN_480.read_bytes())
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        (shstrndx,) = struct.unpack_from("<H", data, 0x3E)
        struct.pack_into("<Q", data, shoff + shstrndx * 64 + 24, 1 << 40)
        bad = tmp_path / "broken.cubin"
        bad.write_bytes(bytes(data))
    else:
        bad = _patched(tmp_path, offset, fmt, value)
    line = one_sentence(cutediff(["diff", CUBIN_451, bad], tmp_path / "cache"))
    assert "damaged CUDA cubin" in line, line
    assert "upgrade" not in line and "internal error" not in line


@pytest.mark.parametrize(
    "content",
    ['["a", "list"]', '{"theme": ["x"], "normalise": "maybe"}', '{"normalise": {"deep": 1}}', '"text"', "{bad json"],
    ids=["list", "wrong-types", "object", "string", "not-json"],
)
def test_settings_files_holding_nonsense_fall_back_to_defaults(tmp_path, monkeypatch, content):
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.ui.app import CutediffApp
    from cutediff_tui.ui.settings import load_settings

    from .helpers import SAMPLE

    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(content)
    monkeypatch.setenv("CUTEDIFF_CONFIG_DIR", str(cfg))
    s = load_settings()
    assert s.theme is None or isinstance(s.theme, str)
    assert isinstance(s.normalise, bool)
    comparison = load_json(SAMPLE / "comparison.json")

    async def go() -> None:
        app = CutediffApp(comparison, versions=["4.5.1", "4.8.0"], installed={"4.5.1", "4.8.0"}, gpu_probe=None)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("o")  # the normalise toggle works from the default
            await pilot.pause()
            assert app.return_code in (None, 0)

    asyncio.run(go())
