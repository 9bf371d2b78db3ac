"""Issue 17 helpers: the compile-time-only import stand-in, the missing-package sentence, kernel
names from other compilers (demangling, hash suffixes) and SASS text from other tools."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cutediff_tui.core import sass_text
from cutediff_tui.core.analysis_pipeline import pair_by_hashless
from cutediff_tui.core.build import describe_failure
from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.naming import demangle, plain_name, without_hash
from cutediff_tui.core.recipes import get_recipe

ROOT = Path(__file__).resolve().parents[2]


def test_stand_in_serves_triton_only_after_an_import_failed(tmp_path):
    """A kernel package that imports triton at module level (as quack >= 0.5 does) runs through
    the worker's retry with the stand-in; the note names the pin for the real package."""
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl
            from triton.runtime import Autotuner

            @triton.jit
            def fused(x, BLOCK: tl.constexpr):
                return x

            class Tuned(Autotuner):
                pass

            VALUE = fused(3, 64)
            """
        )
    )
    script = textwrap.dedent(
        f"""
        import sys, importlib.util
        sys.path.insert(0, {str(tmp_path)!r})
        assert importlib.util.find_spec("triton") is None, "a real triton is installed here"
        from cutediff_tui.core.worker import run_recipe
        from cutediff_tui.core.recipes.context import RecipeContext

        def recipe(ctx):
            import kpkg
            ctx.note(f"value={{kpkg.VALUE}}")

        ctx = RecipeContext(arch="sm_100a", params={{}}, num_sms=1)
        run_recipe(recipe, ctx, {{"compiles": []}})
        print("|".join(ctx.notes))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    notes = proc.stdout.strip().split("|")
    assert notes[0].startswith("triton is not installed: a stub stands in") and "pin triton==" in notes[0]
    assert notes[1] == "value=3"  # the decorated function is kept, not replaced by the stand-in


def test_no_stand_in_for_other_missing_modules_or_after_a_compile():
    script = textwrap.dedent(
        """
        from cutediff_tui.core.worker import run_recipe
        from cutediff_tui.core.recipes.context import RecipeContext

        def recipe(ctx):
            import no_such_kernel_package  # noqa: F401

        ctx = RecipeContext(arch="sm_100a", params={}, num_sms=1)
        try:
            run_recipe(recipe, ctx, {"compiles": []})
        except ModuleNotFoundError as exc:
            print(exc.name)

        def late(ctx):
            import triton  # noqa: F401

        try:
            run_recipe(late, ctx, {"compiles": [{"index": 0}]})
        except ModuleNotFoundError as exc:
            print(exc.name, len(ctx.notes))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.stdout.split() == ["no_such_kernel_package", "triton", "0"], proc.stderr[-2000:]


@pytest.mark.parametrize(
    "module, stage, expect",
    [
        ("triton", "recipe", "needs the package triton (module 'triton')"),
        ("quack.utils", "recipe", "needs the package quack-kernels (module 'quack.utils')"),
        ("einops", "import", "the DSL needs the package einops"),
        ("mystery_mod", "recipe", "imports the module 'mystery_mod', which no package in this toolchain provides"),
    ],
)
def test_missing_module_sentence_names_the_package_and_pin(module, stage, expect):
    err = {"stage": stage, "type": "ModuleNotFoundError", "message": f"No module named '{module}'"}
    err["missing_module"] = module
    exc = describe_failure(err, "B", get_recipe("fa4-fwd"))
    assert expect in str(exc), str(exc)
    assert "flash-attn-4" not in exc.hint or module.startswith("flash")  # never the wrong way round
    if module == "triton":
        assert "--with triton==" in exc.hint


def test_demangle_and_plain_names():
    names = demangle(["_Z5lightPffi", "heavy", "_ZN2ns6kernelEv"])
    assert names["heavy"] == "heavy"
    assert names["_Z5lightPffi"] in ("light(float*, float, int)", "light")
    assert plain_name("_ZN2ns6kernelEv") == "ns::kernel" and plain_name("_Z5lightPffi") == "light"


def test_hash_suffixes_set_aside_for_pairing():
    assert without_hash("triton_poi_fused_add_0") == without_hash("triton_poi_fused_add_3")
    assert without_hash("gemm_kernel_3f9a2c1b") == "gemm_kernel" == without_hash("gemm_kernel_0x7fab12cd")
    a = [("gemm_3f9a2c1b", {}), ("same", {})]
    b = [("gemm_77aa00ff", {}), ("same", {}), ("other", {})]
    assert pair_by_hashless(a, b) == {"gemm_77aa00ff": ("gemm_3f9a2c1b", "gemm_77aa00ff")}
    # two candidates on side A: no guess
    assert pair_by_hashless([("k_1", {}), ("k_2", {})], [("k_3", {})]) == {}


CUOBJDUMP = """
\tcode for sm_90a
\t\tFunction : _Z5lightPffi
\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0010*/                   STL [R1], R0 ;                           /* 0x0000000001007387 */
                                                                            /* 0x000fe20000100800 */
        /*0020*/                   EXIT ;                                   /* 0x000000000000794d */
                                                                            /* 0x000fea0003800000 */
\t\t..........

\t\tFunction : heavy
        /*0000*/                   LDL R2, [R1] ;                           /* 0x0000000001027983 */
                                                                            /* 0x000fe20000100800 */
        /*0010*/                   EXIT ;                                   /* 0x000000000000794d */
                                                                            /* 0x000fea0003800000 */
"""


def test_cuobjdump_sass_text_is_split_per_function():
    text = sass_text.normalise(CUOBJDUMP)
    assert sass_text.functions(text) == ["_Z5lightPffi", "heavy"]
    assert sass_text.arch_of(CUOBJDUMP) == "sm_90a"
    assert "0x000fe20000000800" not in text


def test_sass_text_without_instructions_is_refused():
    with pytest.raises(CutediffError, match="holds no instruction"):
        sass_text.normalise("just a log line\n")


def _index(tmp_path, monkeypatch, pythons: dict) -> None:
    import json
    import time

    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "cache" / "index" / "nvidia-cutlass-dsl.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"time": time.time(), "versions": sorted(pythons), "pythons": pythons}))


def test_wheel_tags_from_the_index_listing():
    from cutediff_tui.core.toolchain import runs_on, wheel_tags

    data = {
        "files": [
            {"filename": "nvidia_cutlass_dsl-4.0.0-cp312-cp312-manylinux_2_28_x86_64.whl"},
            {"filename": "nvidia_cutlass_dsl-4.2.0-cp311-cp311-manylinux_2_28_x86_64.whl"},
            {"filename": "nvidia_cutlass_dsl-4.5.1-py3-none-manylinux_2_28_x86_64.whl"},
            {"filename": "nvidia_cutlass_dsl-4.5.1.tar.gz"},
        ]
    }
    tags = wheel_tags(data)
    assert tags == {"4.0.0": ["cp312"], "4.2.0": ["cp311"], "4.5.1": ["py3"]}
    assert not runs_on(tags["4.0.0"], "3.11") and runs_on(tags["4.0.0"], "3.12") and runs_on(tags["4.5.1"], "3.11")


def test_a_version_needing_another_python_gets_one_sentence(tmp_path, monkeypatch):
    from cutediff_tui.core.errors import ToolchainError
    from cutediff_tui.core.toolchain import ToolchainSpec, python_tag, resolve_python

    other = "cp399"  # a Python no machine has: uv finds none
    _index(tmp_path, monkeypatch, {"4.0.0": [other], "4.5.1": ["py3"]})
    spec = ToolchainSpec("4.5.1")
    assert resolve_python(spec) is spec
    with pytest.raises(ToolchainError) as e:
        resolve_python(ToolchainSpec("4.0.0"))
    assert e.value.sentence().startswith(
        f"CuTe DSL 4.0.0 publishes wheels only for Python 3.99, and this machine has none (cutediff runs on Python {python_tag()})."
    )
    assert "--python PATH" in e.value.hint
    with pytest.raises(ToolchainError, match=r"--python .* is Python 3\.\d+"):
        resolve_python(ToolchainSpec("4.0.0", python=sys.executable))
    with pytest.raises(ToolchainError, match="is not a Python interpreter"):
        from cutediff_tui.core.toolchain import parse_side

        parse_side("4.0.0", python=str(tmp_path / "no-python"))


def test_a_missing_attribute_names_the_package_that_owns_the_module():
    msg = "module 'quack.activation' has no attribute 'sub_packed_f32x2'"
    err = {"stage": "recipe", "type": "AttributeError", "message": msg}
    exc = describe_failure(err, "A", get_recipe("fa4-fwd"))
    assert "quack-kernels in this toolchain lacks it" in exc.hint and "--with quack-kernels==" in exc.hint
    err["message"] = "module 'cutlass.cute' has no attribute 'sym_int'"
    assert "another DSL version" in describe_failure(err, "A", get_recipe("fa4-fwd")).hint


def test_a_kernel_function_renamed_between_the_sides_is_paired_by_its_launcher():
    """Kernels are named after their @cute.kernel function (issue 37): sub_kernel on side A and
    add_kernel on side B, both launched by elementwise_add, are one kernel renamed."""
    a = [("sub_kernel", {"callable": "elementwise_add"}), ("norm", {"callable": "launch_norm"})]
    b = [("add_kernel", {"callable": "elementwise_add"}), ("norm", {"callable": "launch_norm"})]
    assert pair_by_hashless(a, b) == {"add_kernel": ("sub_kernel", "add_kernel")}
    # a launcher that compiled two lone kernels on one side: no guess
    b2 = [("add_kernel", {"callable": "elementwise_add"}), ("mul_kernel", {"callable": "elementwise_add"})]
    assert pair_by_hashless(a, b2) == {}
    assert pair_by_hashless(a, [("add_kernel", {"callable": "other_launch"})]) == {}
