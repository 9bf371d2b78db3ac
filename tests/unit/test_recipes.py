"""Recipe references and declarations, read on the host with ast (no DSL, no torch, no compile)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.recipes import BUILTINS, Param, coerce_params, get_recipe, recipe
from cutediff_tui.core.recipes.refs import is_reference, list_file, local_imports, split_reference

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "recipes" / "elementwise_add.py"


def write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


# ---------------------------------------------------------------- references


def test_reference_forms():
    assert split_reference("a/b.py:fn") == ("a/b.py", "fn")
    assert split_reference("a/b.py") == ("a/b.py", None)
    assert split_reference("pkg.mod:fn") == ("pkg.mod", "fn")
    assert split_reference("C:\\x\\y.py") == ("C:\\x\\y.py", None)
    assert is_reference("x.py") and is_reference("a/b") and is_reference("pkg.mod") and is_reference("mod:fn")
    assert not is_reference("fa4-fwd") and not is_reference("nope")


def test_decorated_recipe_bare_file_reference(tmp_path):
    f = write(
        tmp_path / "r.py",
        '''
        import cutlass.cute as cute   # never imported by the host
        from cutediff_tui.core.recipes import Param, recipe

        @recipe(params=[Param("n", "int", 64, help="size"), Param("mode", default="a", choices=("a", "b")),
                        Param("scale", default=0.5), Param("flag", "bool", True)],
                archs=("sm_90a", 100), needs=["quack-kernels"])
        def build(ctx):
            """Builds things."""
            cute.compile(...)

        def helper():
            pass
    ''',
    )
    r = get_recipe(str(f))
    assert r.kind == "file" and r.function == "build" and r.entry == f"{f.resolve()}:build"
    assert r.summary == "Builds things." and r.archs == (90, 100) and r.needs == ("quack-kernels",)
    assert [(p.name, p.type, p.default) for p in r.params] == [
        ("n", "int", 64),
        ("mode", "str", "a"),
        ("scale", "float", 0.5),
        ("flag", "bool", True),
    ]
    assert r.params[1].choices == ("a", "b")
    assert get_recipe(f"{f}:build").params == r.params
    assert get_recipe(f"{f}:helper").params == ()  # undeclared functions may be named


def test_attribute_declaration_and_several_recipes(tmp_path):
    f = write(
        tmp_path / "two.py",
        '''
        cutediff_recipe = [
            {"function": "one", "params": [{"name": "k", "default": 3}]},
            dict(function="two", summary="second", params=[("m", "str", "x", ["x", "y"])]),
        ]
        def one(ctx):
            """First one."""
        def two(ctx):
            pass
    ''',
    )
    with pytest.raises(CutediffError, match=r"declares 2 recipes \(one, two\)"):
        get_recipe(str(f))
    one, two = get_recipe(f"{f}:one"), get_recipe(f"{f}:two")
    assert one.summary == "First one." and one.params[0] == Param("k", "int", 3)
    assert two.summary == "second" and two.params[0].choices == ("x", "y")
    assert [r.function for r in list_file(str(f))] == ["one", "two"]


def test_bare_file_needs_one_recipe(tmp_path):
    f = write(tmp_path / "plain.py", "def recipe(ctx):\n    pass\n")
    assert get_recipe(str(f)).function == "recipe"
    g = write(tmp_path / "none.py", "def build(ctx):\n    pass\n")
    with pytest.raises(CutediffError, match="declares no recipe"):
        get_recipe(str(g))
    with pytest.raises(CutediffError, match="has no function 'nope'"):
        get_recipe(f"{g}:nope")
    with pytest.raises(CutediffError, match="does not exist"):
        get_recipe(str(tmp_path / "missing.py"))


def test_syntax_error_and_non_literal_declarations(tmp_path):
    f = write(tmp_path / "bad.py", "def recipe(ctx)\n    pass\n")
    with pytest.raises(CutediffError) as e:
        get_recipe(str(f))
    assert "bad.py has a syntax error on line 1" in e.value.sentence()
    g = write(
        tmp_path / "nonlit.py",
        """
        from cutediff_tui.core.recipes import Param, recipe
        N = 4

        @recipe(params=[Param("n", "int", N)])
        def r(ctx):
            pass
    """,
    )
    with pytest.raises(CutediffError, match=r"line 5 with the name 'N' where cutediff needs literal data"):
        get_recipe(str(g))
    h = write(
        tmp_path / "badtype.py",
        """
        @recipe(params=[{"name": "n", "type": "complex", "default": 1}])
        def r(ctx):
            pass
    """,
    )
    with pytest.raises(CutediffError, match="parameter type 'complex'"):
        get_recipe(str(h))


def test_helper_imports_are_sources(tmp_path):
    write(tmp_path / "helpers.py", "from sub import deep\nTILE = 128\n")
    write(tmp_path / "sub" / "__init__.py", "")
    write(tmp_path / "sub" / "deep.py", "X = 1\n")
    f = write(tmp_path / "r.py", "import os\nimport helpers\n\ndef recipe(ctx):\n    pass\n")
    r = get_recipe(str(f))
    names = sorted(Path(p).relative_to(tmp_path).as_posix() for p in r.source_files)
    assert names == ["helpers.py", "sub/__init__.py", "sub/deep.py"]
    assert {p.name for p in r.files()} == {"r.py", "helpers.py", "__init__.py", "deep.py"}
    before = r.source_digest()
    (tmp_path / "sub" / "deep.py").write_text("X = 2\n")
    assert get_recipe(str(f)).source_digest() != before
    assert local_imports(f) and all(p.is_file() for p in local_imports(f))
    write(tmp_path / "helpers.py", "TILE = \n")
    with pytest.raises(CutediffError, match=r"r.py:recipe imports .*helpers.py, which has a syntax error on line 1"):
        get_recipe(str(f))


def test_module_references(tmp_path):
    pkg = tmp_path / "mykernels"
    write(pkg / "__init__.py", "import cutlass  # the host must not run this\n")
    write(
        pkg / "attn.py",
        """
        from cutediff_tui.core.recipes import recipe
        @recipe(params=[{"name": "hdim", "default": 64}])
        def fwd(ctx):
            pass
    """,
    )
    r = get_recipe("mykernels.attn", search=[str(tmp_path)])
    assert r.kind == "module" and r.entry == "mykernels.attn:fwd" and r.params[0].default == 64
    assert str((pkg / "attn.py").resolve()) in r.source_files
    # Only the toolchain has it: named explicitly, parameters pass through unchecked.
    loose = get_recipe("somewhere_else.mod:fn")
    assert loose.strict is False and coerce_params(loose, {"anything": "1"}) == {"anything": "1"}
    with pytest.raises(CutediffError, match="not on this machine's Python path"):
        get_recipe("somewhere_else.mod")


def test_host_reads_recipes_without_importing_the_dsl():
    code = (
        "import sys; from cutediff_tui.core.recipes import get_recipe; "
        f"r = get_recipe({str(SAMPLE)!r}); "
        "bad = [m for m in ('cutlass', 'torch') if m in sys.modules]; print(r.name, bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    assert out.stdout.strip() == "samples/recipes/elementwise_add.py:add []"


def test_runtime_decorator_only_tags():
    @recipe(params=[Param("n", "int", 1)], archs=(90,))
    def a(ctx):
        pass

    @recipe
    def b(ctx):
        pass

    assert a.cutediff_recipe["archs"] == (90,) and b.cutediff_recipe == {}
    with pytest.raises(TypeError):
        recipe(1, 2)


# ---------------------------------------------------------------- parameters and built-ins


def test_coerce_params_types():
    r = get_recipe(str(SAMPLE))
    p = coerce_params(r, {"cols": "8192", "dtype": "bf16"})
    assert p == {"dtype": "bf16", "cols": 8192, "threads": 256, "vec": 4}
    with pytest.raises(CutediffError, match="is not an integer"):
        coerce_params(r, {"cols": "lots"})
    with pytest.raises(CutediffError, match="not one of"):
        coerce_params(r, {"dtype": "fp64"})
    with pytest.raises(CutediffError, match="has no parameter 'hdim'"):
        coerce_params(r, {"hdim": 1})
    g = get_recipe("quack-rmsnorm-fwd")
    assert coerce_params(g, {"residual": "yes"})["residual"] is True
    with pytest.raises(CutediffError, match="not true or false"):
        coerce_params(g, {"residual": "maybe"})


def test_builtins_include_quack():
    names = set(BUILTINS)
    assert {
        "quack-rmsnorm-fwd",
        "quack-rmsnorm-bwd",
        "quack-softmax-fwd",
        "quack-softmax-bwd",
        "quack-cross-entropy-fwd",
        "quack-cross-entropy-bwd",
        "quack-gemm",
    } <= names
    for r in BUILTINS.values():
        assert r.kind == "builtin" and r.files() and r.files()[0].is_file()
        if r.name.startswith("quack"):
            assert r.needs == ("quack-kernels",) and 80 in r.archs


# ---------------------------------------------------------------- CLI (no compile)


def test_cli_recipes_lists_builtins_and_samples():
    from cutediff_tui.cli import main

    res = CliRunner().invoke(main, ["recipes"], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    for name in (
        "fa4-fwd",
        "quack-rmsnorm-bwd",
        "quack-gemm",
        "samples/recipes/elementwise_add.py:add",
        "samples/recipes/row_sum.py:row_sum",
        "--param cols=",
        "--hdim",
    ):
        assert name in res.output, name
    res = CliRunner().invoke(main, ["recipes", str(SAMPLE), "--json", "-"])
    data = json.loads(res.output)
    assert data[0]["entry"].endswith("elementwise_add.py:add") and data[0]["params"][1]["name"] == "cols"


def _cli(args, tmp_path, **kw):
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "cutediff_tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=str(ROOT),
        **kw,
    )


def one_sentence(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, stderr[-2000:]
    assert "Traceback" not in stderr
    return lines[0]


def test_cli_syntax_error_is_one_sentence_before_any_build(tmp_path):
    bad = write(tmp_path / "broken_recipe.py", "import cutlass\n\ndef recipe(ctx)\n    pass\n")
    proc = _cli(["compare", "4.5.1", "4.8.0", "--kernel", str(bad), "--no-lineinfo"], tmp_path)
    assert proc.returncode == 2
    line = one_sentence(proc.stderr)
    assert "broken_recipe.py has a syntax error on line 3" in line
    assert not (tmp_path / "cache" / "envs").exists()  # refused before building anything


def test_cli_source_and_param_errors(tmp_path):
    proc = _cli(
        ["compare", "4.8.0", "4.8.0", "--kernel", str(SAMPLE), "--a-source", str(tmp_path / "nope.py")], tmp_path
    )
    assert proc.returncode == 2 and "Side A's recipe source" in one_sentence(proc.stderr)
    proc = _cli(["compare", "4.8.0", "4.8.0", "--kernel", str(SAMPLE), "--param", "cols=wide"], tmp_path)
    assert "--param cols='wide' is not an integer" in one_sentence(proc.stderr)


# ---------------------------------------------------------------- sources


def test_sources_from_a_path_and_a_folder(tmp_path):
    from cutediff_tui.core.recipes.sources import plan_sources

    primary = get_recipe(str(SAMPLE))
    other = write(
        tmp_path / "old" / "elementwise_add.py", SAMPLE.read_text().replace('"cols", "int", 4096', '"cols", "int", 64')
    )
    plan = plan_sources(primary, str(other), None)
    a, b = plan.sides
    assert a.recipe.entry == f"{other.resolve()}:add" and a.recipe.params[1].default == 64
    assert a.recipe.name == f"{primary.name} [{other}]" and b.recipe is primary and not plan.trivial
    plan2 = plan_sources(primary, None, str(tmp_path / "old"))  # a folder holding the file
    assert plan2.sides[1].recipe.entry == f"{other.resolve()}:add"
    watched = plan.watched()
    assert watched[other.resolve()] == {"a"} and watched[SAMPLE.resolve()] == {"b"}
    assert plan_sources(primary).trivial


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_sources_from_git(tmp_path, monkeypatch):
    from cutediff_tui.core.recipes.sources import plan_sources

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    write(repo / "k" / "helpers.py", "TILE = 1\n")
    f = write(repo / "k" / "r.py", "import helpers\n\ndef recipe(ctx):\n    return helpers.TILE\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repo, check=True)
    (repo / "k" / "helpers.py").write_text("TILE = 2\n")
    plan = plan_sources(get_recipe(str(f)), None, "git:HEAD")
    b = plan.sides[1]
    assert b.source == "git:HEAD" and not b.working_copy
    side_file = Path(b.recipe.path)
    assert side_file.parent.parent.parent == tmp_path / "cache" / "sources"
    assert (side_file.parent / "helpers.py").read_text() == "TILE = 1\n"  # the helper as committed
    assert set(plan.watched()) == {f.resolve(), (repo / "k" / "helpers.py").resolve()}
    with pytest.raises(CutediffError, match="git has no revision 'nosuchrev'"):
        plan_sources(get_recipe(str(f)), "git:nosuchrev", None)
    outside = write(tmp_path / "loose" / "r.py", "def recipe(ctx):\n    pass\n")
    with pytest.raises(CutediffError, match="inside a git repository"):
        plan_sources(get_recipe(str(outside)), None, "git:HEAD")
