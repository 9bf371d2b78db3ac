"""The layers hold: core is headless, the faces do not import each other, no import cycles, no
private names across modules, and the CLI registers its commands in one place."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]


def _check_imports():
    spec = importlib.util.spec_from_file_location("check_imports", ROOT / ".ci" / "check_imports.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT)


def test_core_imports_neither_textual_nor_click():
    """Every module under cutediff_tui.core imports without Textual, click or the faces (harlequin's
    test_import_hygiene)."""
    proc = _run(
        """
        import importlib, pkgutil, sys
        import cutediff_tui.core as core
        names = [m.name for m in pkgutil.walk_packages(core.__path__, "cutediff_tui.core.")]
        for name in names:
            importlib.import_module(name)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "click", "textual_plotext")
                     or m.startswith(("cutediff_tui.ui", "cutediff_tui.cli", "cutediff_tui.render")))
        print(len(names), bad)
        """
    )
    assert proc.returncode == 0, proc.stderr
    count, bad = proc.stdout.split(" ", 1)
    assert int(count) > 40
    assert bad.strip() == "[]"


def test_no_import_cycles_and_no_private_names_across_modules():
    mod = _check_imports()
    edges, private = mod.scan(ROOT / "cutediff_tui")
    assert "cutediff_tui.core.compare" in edges and len(edges) > 80
    assert mod.cycles(edges) == []
    assert private == []


def test_the_import_check_finds_a_cycle_and_a_private_name(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import _hidden\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n\n\ndef _hidden():\n    pass\n")
    (pkg / "c.py").write_text("from pkg.a import x\n")
    mod = _check_imports()
    edges, private = mod.scan(pkg)
    assert mod.cycles(edges) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert len(private) == 1 and "_hidden" in private[0]
    proc = subprocess.run([sys.executable, str(ROOT / ".ci" / "check_imports.py"), str(pkg)], capture_output=True)
    assert proc.returncode == 1


def test_the_import_check_counts_a_name_taken_from_a_package_face(tmp_path):
    """``from . import Info`` in a submodule whose package __init__ imports that submodule is a
    circle (issue 38: ``recipes/__init__`` <-> ``recipes/refs``, and analysis_pipeline -> model ->
    model.io -> resultdir -> analysis_pipeline, both missed while edges to a face were dropped)."""
    pkg = tmp_path / "face"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("class Info:\n    pass\n\n\ndef get():\n    from .refs import r\n")
    (pkg / "sub" / "refs.py").write_text("from . import Info\n\n\ndef r():\n    return Info\n")
    mod = _check_imports()
    edges, _ = mod.scan(pkg)
    assert mod.cycles(edges) == [["face.sub", "face.sub.refs"]]


def test_cli_commands_are_registered_once_and_loaded_lazily():
    from cutediff_tui.cli import COMMANDS, main

    assert main.list_commands(None) == sorted(COMMANDS)
    proc = _run(
        """
        import sys
        from cutediff_tui.cli import main
        cmd = main.get_command(None, "cache")
        print(cmd.name, sorted(m for m in sys.modules if m.startswith("cutediff_tui.cli.")))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "cache"
    assert "cutediff_tui.cli.cache" in proc.stdout and "cutediff_tui.cli.sweep" not in proc.stdout
    for name in COMMANDS:
        assert main.get_command(None, name).name == name


@pytest.mark.parametrize("where", ["group", "command"])
def test_debug_travels_in_the_click_context(tmp_path, where):
    """Without --debug a bad path is one sentence and exit 2; with it (on the group or on the
    command) the exception comes through with its traceback."""
    from cutediff_tui.cli import main
    from cutediff_tui.cli.common import ExitCode
    from cutediff_tui.core.errors import CutediffError

    missing = str(tmp_path / "nothing.cubin")
    plain = CliRunner().invoke(main, ["diff", missing, missing])
    assert plain.exit_code == ExitCode.ERROR == 2
    assert plain.output.startswith("error: ") and "Traceback" not in plain.output
    args = ["--debug", "diff", missing, missing] if where == "group" else ["diff", missing, missing, "--debug"]
    debug = CliRunner().invoke(main, args)
    assert isinstance(debug.exception, CutediffError)
    # the next invocation starts clean (no global state left behind)
    assert CliRunner().invoke(main, ["diff", missing, missing]).exit_code == 2


def test_architecture_doc_names_only_modules_that_exist():
    """docs/architecture.md draws the data flow with module names; each must exist."""

    text = (ROOT / "docs" / "architecture.md").read_text()
    names = set(re.findall(r"\b((?:core|cli|ui)/[a-z_]+(?:\.py)?)", text))
    assert len(names) >= 15
    missing = []
    for name in sorted(names):
        base = ROOT / "cutediff_tui" / name.removesuffix(".py")
        if not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
            missing.append(name)
    assert missing == []


def test_ci_runs_every_static_check_before_the_tests():
    """.ci/run stops on lint, format, types, contracts or import cycles before any test runs."""
    text = (ROOT / ".ci" / "run").read_text()
    tests_at = text.index('bash -c "$TEST_CMD"')
    for check in (
        "ruff check cutediff cutediff_tui tests benchmarks",
        "ruff format --check cutediff cutediff_tui tests benchmarks",
        "bin/mypy",  # over [tool.mypy] files, checked below
        "lint-imports",
        ".ci/check_imports.py cutediff_tui",
        ".ci/check_imports.py cutediff\n",
    ):
        assert -1 < text.find(check) < tests_at, check
    assert "set -euo pipefail" in text and "exit 1" in text
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lint = pyproject["project"]["optional-dependencies"]["lint"]
    assert {re.split(r"[=<>]", r)[0] for r in lint} >= {"ruff", "mypy", "import-linter"}
    assert pyproject["tool"]["mypy"]["files"] == ["cutediff_tui", "cutediff"]  # the whole package, ui and cli too
