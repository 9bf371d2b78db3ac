"""The ``cutediff`` command line: a thin face over :mod:`cutediff_tui.core`."""

from __future__ import annotations

import functools
import json
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from . import __version__
from .core.errors import CutediffError
from .terminal import SafeConsole

err_console = SafeConsole(stderr=True, highlight=False)
out_console = SafeConsole(highlight=False)


class State:
    debug = False


def fail(message: str, code: int = 2) -> None:
    from .core.files import display

    err_console.print(f"[bold red]error:[/] {escape(display(message))}", soft_wrap=True)
    sys.exit(code)


def guarded(func):
    """Turn CutediffError into one sentence (traceback only with --debug)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except CutediffError as exc:
            if State.debug:
                raise
            fail(exc.sentence())
        except KeyboardInterrupt:
            err_console.print("interrupted: stopped the workers; nothing partial was kept in the cache.")
            sys.exit(130)
        except OSError as exc:
            if State.debug:
                raise
            fail(
                f"{exc.strerror or exc} ({getattr(exc, 'filename', '') or ''}). Check the path and permissions; run with --debug for details."
            )
        except (SystemExit, click.exceptions.Exit, click.ClickException):
            raise
        except Exception as exc:
            if State.debug:
                raise
            fail(
                f"cutediff hit an internal error ({type(exc).__name__}: {str(exc)[:200]}). Run again with --debug and report it."
            )

    return wrapper


def write_output(path: Path, text: str, *, inputs: tuple = (), option: str = "--json") -> None:
    """Write a JSON output atomically; never through a symbolic link nor over an input."""
    from .core.files import check_output
    from .core.locking import atomic_write

    check_output(path, inputs=inputs, force=True, option=option)
    atomic_write(path, text)


def side_error_lines(errors: list[str]) -> list[str]:
    """The sides' error sentences, once when both sides failed the same way."""
    import re

    from .core.files import display

    errors = [display(e) for e in errors]
    bare = [re.sub(r"^Side [AB]: ", "", e) for e in errors]
    if len(errors) == 2 and bare[0] == bare[1] and bare[0] != errors[0]:
        return [f"Both sides: {bare[0]}"]
    return errors


def progress_printer(quiet: bool = False):
    lock = threading.Lock()

    def show(msg: str) -> None:
        if quiet:
            return
        with lock:
            err_console.print(f"[dim]·[/] {escape(msg)}", soft_wrap=True)

    return show


# ---------------------------------------------------------------- shared options


def recipe_options(func):
    opts = [
        click.option(
            "--kernel",
            "kernel",
            default="fa4-fwd",
            show_default=True,
            help="Recipe to compile (cutediff recipes lists them).",
        ),
        click.option(
            "--arch",
            default=None,
            help="Target arch, e.g. sm_90a, sm_100a, sm_103a, sm_120a (default: local GPU, else sm_100a).",
        ),
        click.option("--gpu", default=None, help="Target GPU profile (h100, h200, b200, b300, …): arch plus SM count."),
        click.option("--num-sms", type=int, default=None, help="SM count that persistent kernels see while compiling."),
        click.option(
            "--with", "with_", multiple=True, help="Pin shared by both sides (NAME==VERSION or a source folder)."
        ),
        click.option(
            "--cuda",
            type=click.Choice(["12", "13"]),
            default=None,
            help="DSL libraries flavour (default: as the host torch).",
        ),
        click.option(
            "--python",
            "python",
            default=None,
            help="Python for DSL versions with no wheel for this one (default: one uv finds, e.g. 3.12 for 4.0/4.1).",
        ),
        click.option("--varlen/--batched", default=None, help="Packed variable-length or fixed-length batches."),
        click.option("--causal/--no-causal", default=None, help="Causal mask."),
        click.option("--hdim", type=int, default=None),
        click.option("--hdim-v", type=int, default=None),
        click.option("--heads", type=int, default=None),
        click.option("--kv-heads", type=int, default=None, help="Key/value heads (GQA)."),
        click.option("--dtype", type=click.Choice(["bf16", "fp16"]), default=None),
        click.option("--seqlen", type=int, default=None),
        click.option("--batch", type=int, default=None),
        click.option("--total", type=int, default=None, help="Total tokens (varlen)."),
        click.option("--docs", type=int, default=None, help="Documents (varlen)."),
        click.option("--window", default=None, help="Sliding window L,R."),
        click.option("--param", "extra_params", multiple=True, help="Other recipe parameter as NAME=VALUE."),
        click.option("--no-cache", is_flag=True, help="Compile again even when the cache has the result."),
        click.option(
            "--no-lineinfo", is_flag=True, help="Skip the separate line-info build (no source lines for spills)."
        ),
        click.option(
            "--timeout", type=float, default=1800, show_default=True, help="Seconds before a compile is stopped."
        ),
        click.option(
            "--wheelhouse",
            type=click.Path(path_type=Path),
            default=None,
            help="Build environments offline from this folder.",
        ),
        click.option("--debug", is_flag=True, help="Show tracebacks."),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


PARAM_KEYS = (
    "varlen",
    "causal",
    "hdim",
    "hdim_v",
    "heads",
    "kv_heads",
    "dtype",
    "seqlen",
    "batch",
    "total",
    "docs",
    "window",
)


def build_options(a: str, b: str, kw: dict[str, Any]):
    from .core.compare import CompareOptions
    from .core.gpu import resolve_profile
    from .core.recipes import coerce_params, get_recipe
    from .core.toolchain import parse_side

    State.debug = bool(kw.get("debug"))
    cuda = int(kw["cuda"]) if kw.get("cuda") else None
    python = kw.get("python")
    specs = (parse_side(a, kw.get("with_", ()), cuda, python), parse_side(b, kw.get("with_", ()), cuda, python))
    recipe = get_recipe(kw["kernel"], search=[p for s in specs for p in s.local_paths()])
    given = {k: kw.get(k) for k in PARAM_KEYS}
    for item in kw.get("extra_params", ()):
        if "=" not in item:
            raise CutediffError(f"--param {item!r} is not NAME=VALUE.", "Write it as e.g. --param hdim=64.")
        k, v = item.split("=", 1)
        given[k.replace("-", "_")] = v
    given = {k: v for k, v in given.items() if v is not None}
    # FA4 parameters only apply to FA4 recipes; others declare their own.
    known = {p.name for p in recipe.params}
    unknown = [k for k in given if k not in known]
    if unknown and recipe.strict:
        raise CutediffError(
            f"Recipe {recipe.name} has no parameter {', '.join(unknown)}.",
            f"Its parameters: {', '.join(sorted(known)) or 'none'}.",
        )
    params = coerce_params(recipe, given)
    profile = resolve_profile(kw.get("gpu"), kw.get("arch"), kw.get("num_sms"))
    return CompareOptions(
        specs=specs,
        recipe=recipe,
        params=params,
        profile=profile,
        lineinfo=not kw.get("no_lineinfo"),
        use_cache=not kw.get("no_cache"),
        timeout=kw.get("timeout") or 1800,
        wheelhouse=kw.get("wheelhouse"),
        crosscheck=[v.strip() for v in (kw.get("crosscheck") or "").split(",") if v.strip()],
        allow_ptx_rewrite=bool(kw.get("allow_ptx_rewrite")),
        command="cutediff " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
    )


# ---------------------------------------------------------------- commands


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="cutediff", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.option("--max-file-mb", type=click.IntRange(min=1), default=None, help="Largest file read (decompressed).")
@click.option("--max-kernels", type=click.IntRange(min=1), default=None, help="Most kernels accepted in a result.")
@click.option("--max-string", type=click.IntRange(min=1), default=None, help="Longest string accepted in a result.")
@click.pass_context
def main(
    ctx: click.Context, debug: bool, max_file_mb: int | None, max_kernels: int | None, max_string: int | None
) -> None:
    """Compare CuTe DSL kernels across toolchains: PTX, SASS, spills, registers, benchmarks.

    With no command, opens the bundled sample (FA4 on sm_103a, DSL 4.5.1 vs 4.8.0) in the TUI.
    """
    from .core.files import LIMITS

    State.debug = debug
    if max_file_mb:
        LIMITS.file_bytes = max_file_mb * 1024 * 1024
    if max_kernels:
        LIMITS.kernels = max_kernels
    if max_string:
        LIMITS.string_chars = max_string
    _stop_on_sigterm()
    if ctx.invoked_subcommand is None:
        _open_tui(None)


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so that every temporary file and folder is removed on the way
    out (the default action would end the process at once and leave them behind)."""
    import signal

    def stop(signum, frame) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def _open_tui(path: Path | None) -> None:
    from .samples import default_sample

    @guarded
    def go() -> None:
        from .core.compare import load_json

        target = path or default_sample()
        comparison = load_json(target)
        from .ui.app import CutediffApp

        app = CutediffApp(comparison, source=target)
        app.run()
        exit_with(app)

    go()


def exit_with(app) -> None:
    """Leave with the app's return code: a TUI that crashed exits non-zero (Textual printed why)."""
    code = app.return_code
    if code:
        sys.exit(code)


@main.command("open")
@click.argument("result", type=click.Path(path_type=Path))
@click.option("--debug", is_flag=True)
def open_cmd(result: Path, debug: bool) -> None:
    """Open a saved comparison (a comparison.json or its folder), a sweep or a bisect result in the TUI."""
    State.debug = State.debug or debug
    if result.is_dir():
        result = result / "comparison.json"
    other = sweep_or_bisect(result)
    if other is not None:
        return _open_many(other)
    _open_tui(result)


def sweep_or_bisect(path: Path) -> dict | None:
    """The sweep or bisect result in ``path``, read once; None for anything else (a comparison, or a
    file that is not a JSON object: the comparison loader then says why in one sentence). A
    comparison written by cutediff names its schema first, so it is recognised from its first bytes
    and its MBs are parsed only once, on their way to the TUI."""
    import re

    if not Path(path).is_file():  # a FIFO or a device is refused by the comparison loader
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
        if re.match(rb'\s*\{\s*"schema"\s*:\s*"cutediff\.comparison/\d+"', head):
            return None
        from .core.files import read_bounded

        data = json.loads(read_bounded(Path(path)))
    except (OSError, ValueError, RecursionError, CutediffError):  # UnicodeDecodeError is a ValueError too
        return None
    if isinstance(data, dict) and data.get("schema") in ("cutediff.sweep/1", "cutediff.bisect/1"):
        return data
    return None


@guarded
def _open_many(result: dict) -> None:
    """A sweep opens as its heatmap; a bisect as the comparison of its last good and first bad versions."""
    if result.get("schema") == "cutediff.sweep/1":
        from .core.sweep import grid
        from .ui.screens.sweep import SweepApp

        grid(result)  # refuses a damaged result in one sentence before the app starts
        app = SweepApp(result)
        app.run()
        exit_with(app)
        return
    from .cli_sweep import open_bisect

    open_bisect(result, progress_printer())


@main.command()
@click.argument("a")
@click.argument("b")
@recipe_options
@click.option("--json", "json_out", default=None, help="Write the comparison as JSON to PATH, or - for stdout.")
@click.option(
    "--save", type=click.Path(path_type=Path), default=None, help="Save a self-contained result folder (opens offline)."
)
@click.option("--crosscheck", default=None, help="Re-assemble both PTXs with these ptxas versions, e.g. 13.0,13.4.")
@click.option("--allow-ptx-rewrite", is_flag=True, help="Rewrite PTX .version down for an older ptxas (labelled).")
@click.option("--tui", is_flag=True, help="Open the result in the TUI.")
@click.option("--keep-paths", is_flag=True, help="Keep home folders and user names in a --save result.")
@click.option(
    "--a-source",
    default=None,
    help="Side A compiles the recipe file from here: a PATH (file, or a checkout holding it) or git:REV.",
)
@click.option("--b-source", default=None, help="Side B compiles the recipe file from here: a PATH or git:REV.")
@click.option(
    "--watch", is_flag=True, help="Recompile and reprint when the recipe's source files change (Ctrl-C stops)."
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@guarded
def compare(a: str, b: str, json_out: str | None, save: Path | None, tui: bool, quiet: bool, **kw: Any) -> None:
    """Compile a recipe under toolchains A and B (in parallel) and compare the kernels.

    A and B are DSL versions with optional pins, e.g. 4.5.1 or 4.8.0,quack-kernels==0.6.5.
    --kernel takes a built-in recipe or a recipe file/module (cutediff recipes lists them).
    """
    from .cli_recipes import plan_for, watch_compare
    from .core.recipes.sources import run_compare_plan

    opts = build_options(a, b, kw)
    plan = plan_for(opts, kw)
    progress = progress_printer(quiet)
    progress(
        f"compare {opts.specs[0].label} vs {opts.specs[1].label}: {opts.recipe.name} for {opts.profile.arch} ({opts.profile.name}, {opts.profile.num_sms} SMs)"
    )
    if kw.get("watch"):
        if tui:
            raise CutediffError(
                "--watch runs headless for now; the TUI takes the watch hook in a later change.",
                "Drop --tui (the tables are reprinted after each edit).",
            )
        return watch_compare(opts, plan, kw, json_out=json_out, save=save, progress=progress)
    comparison = run_compare_plan(opts, plan, progress)
    errors = emit_comparison(comparison, json_out, save, progress, keep_paths=bool(kw.get("keep_paths")))
    if tui and not errors:
        from .ui.app import CutediffApp

        app = CutediffApp(comparison)
        app.run()
        exit_with(app)
    if errors:
        sys.exit(2)


def emit_comparison(
    comparison: dict, json_out: str | None, save: Path | None, progress, *, keep_paths: bool = False
) -> list[str]:
    """Save, write or print one comparison as ``compare`` does, and print its side errors; returns them."""
    from .core.analysis_pipeline import dumps
    from .core.resultdir import save_result
    from .render import comparison_tables

    if save:
        comparison = save_result(comparison, save, keep_paths)
        progress(f"saved to {save}")
    if json_out == "-":
        sys.stdout.write(dumps(comparison) + "\n")
    else:
        if json_out:
            write_output(Path(json_out), dumps(comparison) + "\n", option="--json")
            progress(f"wrote {json_out}")
        for renderable in comparison_tables(comparison):
            out_console.print(renderable)
    errors = [s["error"] for s in comparison["sides"].values() if s.get("error")]
    for e in side_error_lines(errors):
        err_console.print(f"[bold red]error:[/] {escape(e)}", soft_wrap=True)
    sys.stdout.flush()
    return errors


@main.command()
@click.argument("path_a", type=click.Path(path_type=Path))
@click.argument("path_b", type=click.Path(path_type=Path))
@click.option("--json", "json_out", default=None, help="Write the comparison as JSON to PATH, or - for stdout.")
@click.option(
    "--allow-arch-mismatch", is_flag=True, help="Compare cubins built for different GPU architectures (figures only)."
)
@click.option("--label-a", default=None, help="Name of side A in tables and reports (default: its file name).")
@click.option("--label-b", default=None, help="Name of side B in tables and reports (default: its file name).")
@click.option("--tui", is_flag=True, help="Open the result in the TUI.")
@click.option("--debug", is_flag=True)
@guarded
def diff(
    path_a: Path,
    path_b: Path,
    json_out: str | None,
    allow_arch_mismatch: bool,
    label_a: str | None,
    label_b: str | None,
    tui: bool,
    debug: bool,
) -> None:
    """Analyse existing artifacts, no compile: per side a .cubin (any compiler; several kernels are
    split per function and paired by symbol), a .ptx, SASS text (.sass: nvdisasm, cuobjdump -sass,
    Compiler Explorer) or a folder of them (CUTE_DSL_DUMP_DIR, Triton cache)."""
    State.debug = State.debug or debug
    from .core.analysis_pipeline import dumps
    from .core.artifacts_diff import diff_paths
    from .render import comparison_tables

    def warn(msg: str) -> None:
        err_console.print(f"[bold yellow]warning:[/] {escape(msg)}", soft_wrap=True)

    comparison = diff_paths(
        path_a,
        path_b,
        command="cutediff " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
        allow_arch_mismatch=allow_arch_mismatch,
        warn=warn,
        labels=(label_a, label_b),
    )
    if json_out == "-":
        sys.stdout.write(dumps(comparison) + "\n")
    else:
        if json_out:
            write_output(Path(json_out), dumps(comparison) + "\n", inputs=(path_a, path_b), option="--json")
        for renderable in comparison_tables(comparison):
            out_console.print(renderable)
    errors = [s["error"] for s in comparison["sides"].values() if s.get("error")]
    for e in side_error_lines(errors):
        err_console.print(f"[bold red]error:[/] {escape(e)}", soft_wrap=True)
    if tui and not errors:
        from .ui.app import CutediffApp

        CutediffApp(comparison).run()
    if errors:
        sys.exit(2)


@main.command()
@click.argument("refs", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON.")
@click.option("--debug", is_flag=True)
@guarded
def recipes(refs: tuple[str, ...], as_json: bool, debug: bool) -> None:
    """List the recipes and their parameters: built-in ones and samples, or those of the files/modules given."""
    State.debug = State.debug or debug
    from .cli_recipes import show_recipes

    show_recipes(refs, as_json)


# ---------------------------------------------------------------- env


@main.group()
def env() -> None:
    """Toolchain environments (one overlay per DSL version + pins, in the user cache)."""


def _env_opts(func):
    for o in reversed(
        [
            click.option("--with", "with_", multiple=True, help="Pin (NAME==VERSION or a source folder)."),
            click.option("--cuda", type=click.Choice(["12", "13"]), default=None),
            click.option("--debug", is_flag=True),
        ]
    ):
        func = o(func)
    return func


@env.command("create")
@click.argument("spec")
@_env_opts
@click.option("--wheelhouse", type=click.Path(path_type=Path), default=None, help="Install offline from this folder.")
@guarded
def env_create(spec: str, with_: tuple, cuda: str | None, debug: bool, wheelhouse: Path | None) -> None:
    """Create (or reuse) the environment for SPEC, e.g. 4.8.0 or 4.8.0,quack-kernels==0.6.5."""
    State.debug = State.debug or debug
    from .core.toolchain import create_env, parse_side

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    e = create_env(s, wheelhouse=wheelhouse, progress=progress_printer())
    out_console.print(f"{e.name}  {e.path}")
    for k, v in e.versions().items():
        out_console.print(f"  {k}=={v}")


@env.command("list")
def env_list() -> None:
    """List created environments."""
    from rich.table import Table

    from .core.toolchain import list_envs

    t = Table(show_edge=False)
    for c in ("name", "DSL", "pins", "packages", "path"):
        t.add_column(c)
    for e in list_envs():
        v = e.versions()
        t.add_row(e.name, e.spec.dsl, ", ".join(map(str, e.spec.pins)) or "-", str(len(v)), str(e.path))
    out_console.print(t)


@env.command("remove")
@click.argument("target")
@guarded
def env_remove(target: str) -> None:
    """Remove environments by name, key or DSL version."""
    from .core.toolchain import remove_env

    removed = remove_env(target)
    if not removed:
        raise CutediffError(f"No environment matches {target!r}.", "cutediff env list shows the names.")
    for n in removed:
        out_console.print(f"removed {n}")


@env.command("download")
@click.argument("spec")
@_env_opts
@click.option("-d", "--dest", type=click.Path(path_type=Path), required=True, help="Wheelhouse folder to fill.")
@click.option("--python-version", default=None, help="Python of the target machine, e.g. 3.12.")
@click.option("--platform", "platform_", default="manylinux_2_28_x86_64", show_default=True)
@guarded
def env_download(
    spec: str, with_: tuple, cuda: str | None, debug: bool, dest: Path, python_version: str | None, platform_: str
) -> None:
    """Fill a wheelhouse for SPEC on a connected machine (then: env create SPEC --wheelhouse DIR)."""
    State.debug = State.debug or debug
    from .core.toolchain import download_env, parse_side, python_tag

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    lock = download_env(
        s, dest, python_version=python_version or python_tag(), pip_platform=platform_, progress=progress_printer()
    )
    out_console.print(f"wheelhouse ready: {dest} (lock {lock.name})")


# ---------------------------------------------------------------- cache


@main.group()
def cache() -> None:
    """The build cache."""


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON (bytes exact).")
@guarded
def cache_info_cmd(as_json: bool) -> None:
    """Entries and disk use of every area of the cache."""
    from .core.cache_admin import cache_info

    info = cache_info()
    if as_json:
        sys.stdout.write(json.dumps(info, indent=1) + "\n")
        return
    out_console.print(f"cache {info['root']}" + ("" if info["marked"] else " (no cutediff tag yet)"))
    for name, a in info["areas"].items():
        out_console.print(f"  {name + '/':13} {a['entries']:6} {a['what']:20} {a['size']:>10}")
    out_console.print(f"  {'total':13} {'':6} {'':20} {info['total']:>10}")


@cache.command("clear")
@click.option("--all", "all_", is_flag=True, help="Environments, tools and sources too, not only builds.")
@guarded
def cache_clear_cmd(all_: bool) -> None:
    """Remove the cache entries cutediff made (builds, disassembly, imports, comparisons)."""
    from .core.cache_admin import cache_clear, human_size

    res = cache_clear("all" if all_ else "builds")
    out_console.print(f"removed {res['removed']} entries ({human_size(res['bytes'])})")
    if res["kept"]:
        err_console.print(
            f"[yellow]kept {len(res['kept'])} entries that carry no cutediff marker[/] (first: {escape(res['kept'][0])})",
            soft_wrap=True,
        )


def _register_commands() -> None:
    try:
        from .cli_report import check, report
    except ImportError:  # cli_report is being imported first; it registers itself at its end
        return
    main.add_command(report)
    main.add_command(check)
    try:
        from .cli_sweep import bisect, sweep
    except ImportError:  # cli_sweep is being imported first; it registers itself at its end
        return
    main.add_command(bisect)
    main.add_command(sweep)
    try:
        from .cli_bench import bench
    except ImportError:  # cli_bench is being imported first; it registers itself at its end
        return
    main.add_command(bench)


_register_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
