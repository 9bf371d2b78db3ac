"""The installed package on its own: version, ``python -m``, package data, floors, locking,
the optional CUDA tools, version order and the TUI's exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

import cutediff_tui
from cutediff_tui.samples import bundled_sample_dir, default_sample, is_bundled_sample

ROOT = Path(__file__).resolve().parents[2]


def test_version_flag():
    from cutediff_tui.cli import main

    for flag in ("--version", "-V"):
        result = CliRunner().invoke(main, [flag])
        assert result.exit_code == 0
        assert result.output.strip() == f"cutediff {cutediff_tui.__version__}"


def test_python_dash_m(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "cutediff_tui", "--version"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"cutediff {cutediff_tui.__version__}"


def test_sample_and_themes_are_package_data():
    pkg = Path(cutediff_tui.__file__).parent
    assert default_sample().is_relative_to(pkg / "data")
    assert is_bundled_sample(default_sample()) and is_bundled_sample(bundled_sample_dir())
    assert not is_bundled_sample(ROOT / "README.md") and not is_bundled_sample(None)
    from cutediff_tui.ui.themes import themes_dir

    assert themes_dir().is_relative_to(pkg / "data")
    assert {p.stem for p in themes_dir().glob("*.toml")} == {"dark", "light", "high-contrast"}
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "data/**/*" in data["tool"]["setuptools"]["package-data"]["cutediff_tui"]


def test_user_theme_replaces_and_adds(tmp_path, monkeypatch):
    from cutediff_tui.ui.themes import DEFAULT_THEME, load_themes, user_themes_dir

    monkeypatch.setenv("CUTEDIFF_CONFIG_DIR", str(tmp_path))
    user_themes_dir().mkdir(parents=True)
    (user_themes_dir() / "mine.toml").write_text('name = "mine"\nprimary = "#123456"\n')
    (user_themes_dir() / "dark.toml").write_text(f'name = "{DEFAULT_THEME}"\nprimary = "#abcdef"\n')
    loaded = load_themes()
    by_name = {t.name: t for t in loaded.themes}
    assert {"mine", "cutediff-light", "cutediff-high-contrast", DEFAULT_THEME} <= set(by_name)
    assert by_name[DEFAULT_THEME].primary == "#abcdef"
    assert loaded.themes[0].name == DEFAULT_THEME and loaded.problems == []


def test_project_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    deps = " ".join(project["dependencies"])
    assert "textual>=6.2" in deps and "filelock" in deps
    assert "nvidia" not in deps  # the CUDA tools are an extra
    extras = project["optional-dependencies"]
    assert any("nvdisasm" in d for d in extras["tools"]) and any("cuobjdump" in d for d in extras["tools"])
    assert "cutediff[tools]" in extras["compile"] and "cutediff[tools]" in extras["test"]
    assert any(c.startswith("License") or c.startswith("Programming Language") for c in project["classifiers"])


def test_lowest_versions_are_the_declared_floors():
    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "lowest_versions.py"), str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "textual==6.2" in out and "click==8.1" in out and "rich==13.3.3" in out


def test_versions_sort_by_pep440():
    from cutediff_tui.core.toolchain import version_key
    from cutediff_tui.ui.screens.compare import filter_versions

    vs = ["4.8.0", "4.8.0.dev0", "4.10.0", "4.8.0rc1", "4.8.0.post1", "4.9.0"]
    assert sorted(vs, key=version_key) == ["4.8.0.dev0", "4.8.0rc1", "4.8.0", "4.8.0.post1", "4.9.0", "4.10.0"]
    assert filter_versions("", vs)[:3] == ["4.10.0", "4.9.0", "4.8.0.post1"]
    assert filter_versions("4.8", vs).index("4.8.0") < filter_versions("4.8", vs).index("4.8.0.dev0")
    assert sorted(["nonsense", "4.8.0"], key=version_key) == ["nonsense", "4.8.0"]


def test_file_lock_excludes_another_process(tmp_path):
    from cutediff_tui.core.locking import file_lock

    lock = tmp_path / "x.lock"
    probe = (
        "import sys; from filelock import FileLock, Timeout\n"
        f"try:\n    FileLock({str(lock)!r}, timeout=0.2).acquire()\nexcept Timeout:\n    sys.exit(3)\n"
    )
    with file_lock(lock):
        held = subprocess.run([sys.executable, "-c", probe])
    free = subprocess.run([sys.executable, "-c", probe])
    assert (held.returncode, free.returncode) == (3, 0)
    assert "fcntl" not in (ROOT / "cutediff_tui" / "core" / "locking.py").read_text()


def _site_without_cuda_tools(tmp_path: Path) -> Path:
    """A copy of this venv's site-packages (as links) without the nvidia wheels."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    folder = tmp_path / "site"
    folder.mkdir()
    for entry in site.iterdir():
        name = entry.name.lower()
        if name == "nvidia" or name.startswith("nvidia_") or name.endswith(".pth") or name.startswith("cutediff"):
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


def test_report_and_check_work_without_the_cuda_tools(tmp_path):
    """Viewing, reporting and checking a saved comparison need neither nvdisasm nor cuobjdump
    (the tool wheels have no macOS build): run them where the tools cannot be found."""
    site = _site_without_cuda_tools(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{site}", PATH="/usr/bin:/bin", CUTEDIFF_CACHE_DIR=str(tmp_path / "c"))

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-S", "-m", "cutediff_tui", *args]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)

    hidden = subprocess.run(
        [sys.executable, "-S", "-c", "from cutediff_tui.core.analysis.tools import find_tool; find_tool('nvdisasm')"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert hidden.returncode != 0 and "ToolMissing" in hidden.stderr, "the tools are not hidden"
    report = run("report", str(bundled_sample_dir()), "--format", "md", "-o", "r.md")
    assert report.returncode == 0, report.stderr
    assert "FlashAttentionForwardSm100" in (tmp_path / "r.md").read_text()
    check = run("check", "--result", str(bundled_sample_dir()), "--max-spill-bytes", "0")
    assert check.returncode == 1, check.stdout + check.stderr  # B spills: a regression, found offline
    assert "Traceback" not in check.stderr


def test_tool_missing_names_the_extra(tmp_path, monkeypatch):
    from cutediff_tui.core.analysis.tools import ToolMissing, find_tool

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissing) as err:
        find_tool("no-such-cuda-tool")
    assert "cutediff[tools]" in err.value.sentence()


def test_crashed_app_exits_non_zero():
    from textual.app import App

    from cutediff_tui.cli.common import exit_with

    class Crashes(App[None]):
        def on_mount(self) -> None:
            raise RuntimeError("boom")

    app = Crashes()
    app.run(headless=True)
    with pytest.raises(SystemExit) as exited:
        exit_with(app)
    assert exited.value.code == 1

    class Quits(App[None]):
        def on_mount(self) -> None:
            self.exit()

    calm = Quits()
    calm.run(headless=True)
    exit_with(calm)  # returns: a clean exit is status 0


def test_env_list_in_version_order(tmp_path, monkeypatch):
    import json

    from cutediff_tui.core.toolchain import list_envs

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    for v in ("4.10.0", "4.8.0", "4.8.0.dev0", "4.9.0"):
        d = tmp_path / "envs" / f"dsl-{v}-cu13-0000"
        d.mkdir(parents=True)
        spec = {"dsl": v, "pins": [], "cuda": "13"}
        (d / "env.json").write_text(json.dumps({"spec": spec, "key": v, "lock": {}}))
    assert [e.spec.dsl for e in list_envs()] == ["4.8.0.dev0", "4.8.0", "4.9.0", "4.10.0"]


def test_third_party_sources_in_the_sample_ship_with_their_licences():
    """Every package whose sources the bundled sample copies has its licence text beside it."""
    from cutediff_tui.samples import bundled_sample_dir, sample_dirs

    licences = sample_dirs()[0] / "licenses"
    readme = (licences / "README.md").read_text()
    copied = sorted(p.name for side in (bundled_sample_dir() / "src").iterdir() for p in side.iterdir())
    assert copied == ["flash_attn", "quack"]
    for folder, text in (("flash_attn", "flash-attn-4.LICENSE"), ("quack", "quack-kernels.LICENSE")):
        assert f"`src/a/{folder}/`" in readme and text in readme
        assert (licences / text).stat().st_size > 1000
    assert "BSD 3-Clause" in (licences / "flash-attn-4.LICENSE").read_text()
    assert "Apache License" in (licences / "quack-kernels.LICENSE").read_text()
