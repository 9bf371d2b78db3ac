"""Where a failed compile points (issue 37): the user's code line the worker finds in the
exception (``worker.code_site``), what ptxas said inside a DSL internal compiler error
(``build.ptxas_cause``) and the sentence made of them (``build.describe_failure``)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

from cutediff_tui.core.build import describe_failure, ptxas_cause, site_words
from cutediff_tui.core.recipes import RecipeInfo
from cutediff_tui.core.worker import code_site

#: The end of a real DSL 4.8.0 failure (``tests/terminal/data/ice_recipe.py``, PTX no ptxas accepts).
DSL_48_PTXAS_FAILURE = """\
cutlass.base_dsl.compiler.CompilerDiagnosticError: error: PTX assembly failed

  --> /work/ice_recipe.py:25:0
      in function `not_an_instruction(...)`:
   |
> 25 | @cute.kernel
     | ^
  error: ptxas rejected the PTX generated for this kernel while compiling it to SASS.
  note: target architecture: sm_90a
  note: ptxas log:
        ptxas application ptx input, line 40; error   : Not a name of any known instruction:
        'frobnicate'
        ptxas fatal   : Ptx assembly aborted due to errors
  suggestion: read the ptxas log above; re-run with CUTE_DSL_KEEP=ptx and assemble the dumped PTX
"""

#: The shape of DSL 4.4's message for a register-allocation failure (issue 37): the cause far below.
DSL_44_ICE = "\n".join(
    [
        "cutlass.base_dsl.common.DSLRuntimeError: 🧊🧊🧊 ICE 🧊🧊🧊",
        *(f"  IR line {i}" for i in range(250)),
        "ptxas fatal   : (C7600) Register allocation failed with register count of '168'. "
        "Compile the program with a higher register target",
    ]
)

RECIPE = RecipeInfo("r.py:recipe", "a recipe", "r.py:recipe", (), (90,))


def test_ptxas_cause_is_the_error_ptxas_printed_not_the_abort_line():
    assert ptxas_cause(DSL_48_PTXAS_FAILURE) == (
        "ptxas application ptx input, line 40; error : Not a name of any known instruction: 'frobnicate'"
    )
    assert ptxas_cause(DSL_44_ICE).startswith("ptxas fatal : (C7600) Register allocation failed")
    assert ptxas_cause("ptxas fatal   : Ptx assembly aborted due to errors") == (
        "ptxas fatal : Ptx assembly aborted due to errors"
    )
    assert ptxas_cause("ValueError: boom\nptxas info    : Used 24 registers") is None


def test_an_ice_is_told_by_what_ptxas_said_and_where_the_kernel_is():
    err = {
        "type": "DSLRuntimeError",
        "message": "🧊🧊🧊 ICE 🧊🧊🧊",
        "stage": "recipe",
        "traceback": DSL_44_ICE,
        "where": {"file": "/work/fa.py", "line": 12, "text": "def kernel(self):"},
    }
    exc = describe_failure(err, "B", RECIPE)
    assert str(exc).startswith("Side B: ptxas failed on the PTX of recipe r.py:recipe (ptxas fatal : (C7600)")
    assert str(exc).endswith(" at /work/fa.py:12: `def kernel(self):`.")
    assert "ICE" not in str(exc) and "--debug" not in exc.sentence()


def test_a_recipe_that_raises_is_told_with_its_line():
    err = {"type": "ValueError", "message": "boom", "stage": "recipe", "traceback": "ValueError: boom"}
    err["where"] = {"file": "/w/r.py", "line": 3, "text": "raise ValueError('boom')"}
    exc = describe_failure(err, "A", RECIPE)
    assert str(exc) == (
        "Side A: recipe r.py:recipe failed while compiling (ValueError: boom) at /w/r.py:3: `raise ValueError('boom')`."
    )
    assert site_words({"file": "/w/r.py", "line": "3"}) == ""  # a result file's data is checked, not trusted


def _module(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def test_code_site_is_the_innermost_frame_of_the_users_code(tmp_path):
    helper, mod = _module(
        tmp_path,
        "tilehelp",
        """
        import json


        def scale(n):
            json.loads("{")  # raises inside the standard library
        """,
    )
    try:
        mod.scale(3)
    except ValueError as exc:
        site = code_site(exc)
    assert site == {"file": str(helper), "line": 6, "text": 'json.loads("{")  # raises inside the standard library'}


def test_code_site_follows_causes_and_prefers_the_line_a_dsl_diagnostic_names(tmp_path):
    kernel = tmp_path / "kern.py"
    kernel.write_text("import x\n\n\n@cute.kernel\ndef k():\n    pass\n")
    try:
        try:
            raise RuntimeError("inner")
        except RuntimeError as inner:
            raise ValueError(f"error: PTX assembly failed\n\n  --> {kernel}:4:0\n") from inner
    except ValueError as exc:
        assert code_site(exc) == {"file": str(kernel), "line": 4, "text": "@cute.kernel"}
    try:
        compile("x = (1,\n", str(kernel), "exec")
    except SyntaxError as exc:
        site = code_site(exc)
    assert site is not None and site["file"] == str(kernel) and site["line"] == 1


def test_code_site_skips_the_standard_library():
    try:
        sys.modules["json"].loads("{")
    except ValueError as exc:
        site = code_site(exc)
    assert site is not None and site["file"] == __file__ and 'loads("{")' in site["text"], site


def test_the_log_is_kept_in_the_cache_and_never_written_through_a_link(tmp_path, monkeypatch):
    from cutediff_tui.core.build import keep_failure_log
    from cutediff_tui.core.errors import CompileError

    cache = tmp_path / "cache"
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    exc = CompileError("Side A: recipe r.py:recipe failed while compiling (ValueError: boom).", None, "Traceback …")
    keep_failure_log(exc, "k" * 24)
    log = cache / "logs" / ("k" * 24) / "failed.log"
    assert exc.sentence().endswith(f"The full log: {log}.") and log.read_text() == "Traceback …\n"

    elsewhere = tmp_path / "elsewhere"  # a cache whose logs/ someone pointed at another folder
    elsewhere.mkdir()
    (cache / "logs").rename(tmp_path / "old-logs")
    (cache / "logs").symlink_to(elsewhere, target_is_directory=True)
    exc = CompileError("Side A: it failed.", None, "Traceback …")
    keep_failure_log(exc, "j" * 24)
    assert not list(elsewhere.iterdir()) and exc.sentence() == "Side A: it failed. Run with --debug to see the log."


def test_a_saved_result_shows_an_old_sentence_without_the_debug_advice(tmp_path):
    """``open``/``report`` on a result saved by an older cutediff: there is no traceback to show."""
    import json

    from cutediff_tui.core.model.io import read_comparison
    from cutediff_tui.samples import bundled_sample_dir

    doc = json.loads((bundled_sample_dir() / "comparison.json").read_text())
    doc["sides"]["b"]["error"] = (
        "Side B: recipe r.py:recipe failed while compiling (ValueError: boom). "
        "The full log is kept; run with --debug to see the traceback."
    )
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(doc))
    error = read_comparison(path)["sides"]["b"]["error"]
    assert error == "Side B: recipe r.py:recipe failed while compiling (ValueError: boom)."
