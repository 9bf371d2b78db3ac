"""Results from someone else: they are data, never a pointer into this machine or the terminal.

Issue 16, cases 1 and 2: a crafted result folder (built here from the bundled sample) whose stored
source paths are absolute, ``../..`` or a symlink leaving the folder must not make ``report`` or
the TUI read another file of this machine; strings with control characters (ESC, OSC 52, a title
change, a screen clear) must reach the terminal only as visible ``\\x1b``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .helpers import CUBIN_451, CUBIN_480, SAMPLE, cutediff

SECRET = "SECRET-LINE-925-do-not-leak"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1b[H"


def _secret_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "secret.txt"
    p.write_text("".join(f"{SECRET} {i}\n" for i in range(1, 2000)))
    return p


def _result(tmp_path: Path) -> Path:
    dst = tmp_path / "result"
    shutil.copytree(SAMPLE, dst)
    return dst


def _rewrite(result: Path, edit) -> None:
    p = result / "comparison.json"
    data = json.loads(p.read_text())
    edit(data)
    p.write_text(json.dumps(data))


def _spill_file(data: dict) -> str:
    return data["kernels"][0]["b"]["spill_sites"][0]["file"]


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "fallback"])
def test_result_paths_cannot_read_files_outside_the_result(tmp_path, how):
    secret = _secret_file(tmp_path / "elsewhere")
    result = _result(tmp_path)

    def edit(data: dict) -> None:
        short = _spill_file(data)
        for k in data["kernels"]:
            for side in ("a", "b"):
                m = k.get(side) or {}
                srcs = m.setdefault("sources", {})
                if how == "absolute":
                    srcs[short] = str(secret)
                elif how == "dotdot":
                    srcs[short] = "../elsewhere/secret.txt"
                elif how == "symlink":
                    srcs[short] = f"src/a/{short}"
                else:  # no map entry: the spill site names the absolute path itself
                    srcs.pop(short, None)
                    for site in m.get("spill_sites") or []:
                        site["file"] = str(secret)

    _rewrite(result, edit)
    if how == "symlink":
        data = json.loads((result / "comparison.json").read_text())
        link = result / "src" / "a" / _spill_file(data)
        link.unlink()
        link.symlink_to(secret)
    for fmt in ("md", "html"):
        proc = cutediff(["report", result, "--format", fmt], None)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert SECRET not in proc.stdout, fmt
    # the TUI's source lookup (source pane, `e` export) on the loaded result
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.ui.sources import resolve_source

    comparison = load_json(result / "comparison.json")
    k = comparison["kernels"][0]
    for side in ("a", "b"):
        for file in (str(secret), "../elsewhere/secret.txt", _spill_file(k and comparison), "elsewhere/secret.txt"):
            ref = resolve_source(file, 925, comparison, side, k[side].get("sources"))
            if ref.path is not None:
                assert ref.path.resolve().is_relative_to(result.resolve()), ref
                assert SECRET not in ref.path.read_text()


def test_kernel_folders_outside_the_result_are_not_followed(tmp_path):
    result = _result(tmp_path)
    outside = tmp_path / "outside"
    shutil.copytree(result / "b" / "000", outside)

    def edit(data: dict) -> None:
        data["kernels"][0]["b"]["files"]["dir"] = str(outside)
        data["kernels"][0]["a"]["files"]["dir"] = "../outside"

    _rewrite(result, edit)
    from cutediff_tui.core.compare import load_json

    comparison = load_json(result / "comparison.json")
    for side in ("a", "b"):
        d = Path(comparison["kernels"][0][side]["files"]["dir"])
        assert d.resolve().is_relative_to(result.resolve())
        assert not d.exists()


def _hostile_names(data: dict) -> None:
    data["kernels"][0]["name"] = f"InnocentKernel{OSC52}{TITLE}{CLEAR}"
    data["sides"]["b"]["label"] = f"4.8.0{TITLE}"


def test_check_prints_control_characters_visibly(tmp_path):
    result = _result(tmp_path)
    _rewrite(result, _hostile_names)
    proc = cutediff(["check", "--result", result, "--max-spill-bytes", "0"], None)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout + proc.stderr
    assert "\x07" not in proc.stdout + proc.stderr
    assert "InnocentKernel\\x1b]52;c;" in proc.stdout
    assert "FAIL" in proc.stdout


def test_report_markdown_shows_control_characters_and_neutralises_mentions(tmp_path):
    result = _result(tmp_path)

    def edit(data: dict) -> None:
        _hostile_names(data)
        data["sides"]["b"]["notes"] = ["ping @octocat and @github/security"]

    _rewrite(result, edit)
    proc = cutediff(["report", result, "--format", "md"], None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b" in proc.stdout
    assert "@octocat" not in proc.stdout and "@github/security" not in proc.stdout
    assert "@\u200boctocat" in proc.stdout


def test_diff_of_files_with_escapes_in_their_names(tmp_path):
    a = tmp_path / f"a{TITLE}.cubin"
    b = tmp_path / f"b{CLEAR}.cubin"
    shutil.copy(CUBIN_451, a)
    shutil.copy(CUBIN_480, b)
    proc = cutediff(["diff", a, b], None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout + proc.stderr
    assert "\\x1b]0;owned" in proc.stdout + proc.stderr


def test_recipes_file_docstrings_are_not_rich_markup(tmp_path):
    f = tmp_path / "doc_recipe.py"
    f.write_text(
        '"""Computes C[m, n] from mask[/tmp] and [bold]x[/bold]."""\n\n'
        "def recipe(ctx, hdim: int = 64):\n"
        '    """Computes C[m, n] with mask[/tmp] \x1b]0;t\x07 [red]here[/red]."""\n'
    )
    proc = cutediff(["recipes", f], None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "C[m, n]" in out and "mask[/tmp]" in out and "[red]here[/red]" in out
    assert "\x1b" not in out


def test_tui_shows_control_characters_visibly(tmp_path):
    import asyncio

    from cutediff_tui.core.compare import load_json
    from cutediff_tui.ui.app import CutediffApp

    result = _result(tmp_path)
    _rewrite(result, _hostile_names)
    comparison = load_json(result / "comparison.json")

    async def go() -> None:
        app = CutediffApp(comparison, versions=["4.5.1", "4.8.0"], installed={"4.5.1", "4.8.0"}, gpu_probe=None)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            svg = app.export_screenshot()
            assert "InnocentKernel\\x1b]52" in svg.replace("&#160;", " ")
            lines = [app.screen.render_line(y).text for y in range(36)] if hasattr(app.screen, "render_line") else []
            assert not any("\x1b" in ln for ln in lines)
            assert "\x1b" not in json.dumps(app.comparison["kernels"][0]["name"], ensure_ascii=False)

    asyncio.run(go())


def test_json_reports_and_saved_results_name_no_home_folder(tmp_path, monkeypatch):
    """``report --format json`` writes paths relative to the result and ``~`` for the home folder
    (before: absolute local paths, the user's name among them); ``--keep-paths`` keeps them."""
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    result = home / "work" / "result"
    shutil.copytree(SAMPLE, result)

    def edit(data: dict) -> None:
        data["command"] = f"cutediff compare 4.5.1 4.8.0 --kernel {home}/recipes/mine.py"

    _rewrite(result, edit)
    env_home = {"HOME": str(home)}
    from .helpers import cli_env

    proc = cutediff(["report", result, "--format", "json"], None, env=cli_env(None, **env_home))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert str(home) not in proc.stdout and str(result) not in proc.stdout
    data = json.loads(proc.stdout)
    assert data["kernels"][0]["a"]["files"]["dir"] == "a/000"
    assert data["command"].startswith("cutediff compare") and "~/recipes/mine.py" in data["command"]
    kept = cutediff(["report", result, "--format", "json", "--keep-paths"], None, env=cli_env(None, **env_home))
    assert str(home) in kept.stdout
    # a result saved again keeps the relative layout and drops the home folder
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.core.resultdir import save_result

    monkeypatch.setenv("HOME", str(home))
    again = tmp_path / "again"
    save_result(load_json(result / "comparison.json"), again)
    text = (again / "comparison.json").read_text()
    assert str(home) not in text and "~/recipes/mine.py" in text
