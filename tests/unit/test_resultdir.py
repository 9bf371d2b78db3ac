"""Saved result folders keep one copy of a source file both sides point at."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.resultdir import save_result
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir() / "comparison.json"


def test_identical_sources_are_saved_once(tmp_path):
    c = load_json(SAMPLE)
    c["kernels"] = c["kernels"][:1]
    k = c["kernels"][0]
    same = tmp_path / "orig" / "same.py"
    same.parent.mkdir()
    same.write_text("x = 1\n")
    changed_a, changed_b = tmp_path / "orig" / "a.py", tmp_path / "orig" / "b.py"
    changed_a.write_text("y = 1\n")
    changed_b.write_text("y = 2\n")
    k["a"]["sources"] = {"pkg/same.py": str(same), "pkg/changed.py": str(changed_a)}
    k["b"]["sources"] = {"pkg/same.py": str(same), "pkg/changed.py": str(changed_b)}
    out = tmp_path / "saved"
    save_result(copy.deepcopy(c), out)
    saved = json.loads((out / "comparison.json").read_text())["kernels"][0]
    assert saved["a"]["sources"]["pkg/same.py"] == saved["b"]["sources"]["pkg/same.py"] == "src/a/pkg/same.py"
    assert saved["b"]["sources"]["pkg/changed.py"] == "src/b/pkg/changed.py"
    assert (out / "src/b/pkg/changed.py").read_text() == "y = 2\n"
    assert not (out / "src/b/pkg/same.py").exists()
    reopened = load_json(out / "comparison.json")["kernels"][0]
    assert Path(reopened["b"]["sources"]["pkg/same.py"]).read_text() == "x = 1\n"


def test_a_source_named_by_an_absolute_path_is_saved_only_when_it_is_the_recipes(tmp_path):
    """``--save`` keeps the recipe file and its helpers (issue 37); an absolute path the comparison
    names is never a reason to copy a file of this machine into a result that may travel."""
    c = load_json(SAMPLE)
    c["kernels"] = c["kernels"][:1]
    k = c["kernels"][0]
    recipe, helper, private = tmp_path / "w" / "r.py", tmp_path / "w" / "lib" / "h.py", tmp_path / "secret.py"
    helper.parent.mkdir(parents=True)
    for f, text in ((recipe, "import h\n"), (helper, "K = 1\n"), (private, "TOKEN = 'x'\n")):
        f.write_text(text)
    for side in ("a", "b"):
        k[side]["sources"] = {str(recipe): str(recipe), str(helper): str(helper), str(private): str(private)}
    out = tmp_path / "saved"
    save_result(copy.deepcopy(c), out, recipe_files={"a": [recipe, helper], "b": [recipe, helper]})
    saved = json.loads((out / "comparison.json").read_text())["kernels"][0]
    for side in ("a", "b"):
        assert saved[side]["sources"] == {str(recipe): "src/a/recipe/r.py", str(helper): "src/a/recipe/lib/h.py"}
    assert "TOKEN" not in "".join(p.read_text() for p in out.rglob("*.py"))
    plain = tmp_path / "plain"  # no recipe files given (the Python API's save): no absolute source kept
    save_result(copy.deepcopy(c), plain)
    assert json.loads((plain / "comparison.json").read_text())["kernels"][0]["a"]["sources"] == {}


def test_confined_keeps_paths_inside_and_refuses_a_sibling_with_the_same_prefix(tmp_path):
    from cutediff_tui.core.model.confine import confined, real_roots

    base, sibling = tmp_path / "res", tmp_path / "res2"
    (base / "a").mkdir(parents=True)
    sibling.mkdir()
    (base / "out").symlink_to(sibling)
    roots = real_roots(base)
    for r in (None, roots):  # worked out per call, or once per result: the same answers
        assert confined(base, "a", roots=r) == (base / "a").resolve()
        assert confined(base, str(base / "a"), roots=r) == (base / "a").resolve()
        assert confined(base, str(base), roots=r) == base.resolve()
        assert confined(base, str(sibling), roots=r) is None  # "/…/res2" starts with "/…/res"
        assert confined(base, "out", roots=r) is None  # a symlink leading out
        assert confined(base, "../res2", roots=r) is None
        assert confined(base, "a\x00b", roots=r) is None


def test_string_walk_is_skipped_only_when_the_text_bounds_every_string(tmp_path):
    from cutediff_tui.core.errors import CutediffError
    from cutediff_tui.core.files import LIMITS
    from cutediff_tui.core.validate import validate_result

    doc = json.loads(SAMPLE.read_text())
    doc["kernels"][0]["name"] = "k" * (LIMITS.string_chars + 1)
    text = json.dumps(doc)
    # the text is longer than the limit, so the walk runs and finds the string
    for chars in (None, len(text)):
        try:
            validate_result(json.loads(text), "x", text_chars=chars)
        except CutediffError as exc:
            assert "characters at comparison.kernels[0].name" in exc.sentence()
        else:
            raise AssertionError("a string over the limit was let through")
    # a text within the limit cannot hold a string over it: no walk (and the sample is sound)
    assert validate_result(json.loads(SAMPLE.read_text()), text_chars=SAMPLE.stat().st_size)["kernels"]
