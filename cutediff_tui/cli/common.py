"""What every command module of the CLI shares: consoles, exit codes, the error guard, the
``--debug`` state, progress lines and the recipe options of ``compare``, ``report``, ``check``,
``bisect``.

Command modules import this one and :mod:`cutediff_tui.core`, never each other.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.markup import escape

from ..core.errors import CutediffError
from ..core.events import Event, Progress, render_event
from ..terminal import SafeConsole

err_console = SafeConsole(stderr=True, highlight=False)
out_console = SafeConsole(highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(IntEnum):
    """How ``cutediff`` ends (``docs/ci.md`` documents 0, 1 and 2 for ``check``)."""

    OK = 0
    REGRESSION = 1  # check: a limit broke
    ERROR = 2  # bad input, a side failed, an internal error
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


@dataclass
class CliState:
    """Per-invocation state, carried in click's context object (``ctx.obj``)."""

    debug: bool = False


def state() -> CliState:
    """This invocation's :class:`CliState` (a fresh one outside a click command)."""
    ctx = click.get_current_context(silent=True)
    return ctx.ensure_object(CliState) if ctx is not None else CliState()


def fail(message: str, code: int = ExitCode.ERROR) -> NoReturn:
    """Print one ``error:`` sentence and exit with ``code``."""
    from ..core.files import display

    err_console.print(f"[bold red]error:[/] {escape(display(message))}", soft_wrap=True)
    sys.exit(code)


def guarded(func: F) -> F:
    """Turn CutediffError into one sentence (traceback only with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        st = state()
        if kwargs.get("debug"):
            st.debug = True
        try:
            return func(*args, **kwargs)
        except CutediffError as exc:
            if st.debug:
                raise
            fail(exc.sentence())
        except KeyboardInterrupt:
            err_console.print("interrupted: stopped the workers; nothing partial was kept in the cache.")
            sys.exit(ExitCode.INTERRUPTED)
        except OSError as exc:
            if st.debug:
                raise
            fail(
                f"{exc.strerror or exc} ({getattr(exc, 'filename', '') or ''}). Check the path and permissions; run with --debug for details."
            )
        except (SystemExit, click.exceptions.Exit, click.ClickException):
            raise
        except Exception as exc:
            if st.debug:
                raise
            fail(
                f"cutediff hit an internal error ({type(exc).__name__}: {str(exc)[:200]}). Run again with --debug and report it."
            )

    return wrapper  # type: ignore[return-value]


def write_output(path: Path, text: str, *, inputs: tuple = (), option: str = "--json") -> None:
    """Write a JSON output atomically; never through a symbolic link nor over an input."""
    from ..core.files import check_output
    from ..core.locking import atomic_write

    check_output(path, inputs=inputs, force=True, option=option)
    atomic_write(path, text)


def exit_with(app: Any) -> None:
    """Leave with the app's return code: a TUI that crashed exits non-zero (Textual printed why)."""
    code = app.return_code
    if code:
        sys.exit(code)


def side_error_lines(errors: list[str]) -> list[str]:
    """The sides' error sentences, once when both sides failed the same way."""
    from ..core.files import display

    errors = [display(e) for e in errors]
    bare = [re.sub(r"^Side [AB]: ", "", e) for e in errors]
    if len(errors) == 2 and bare[0] == bare[1] and bare[0] != errors[0]:
        return [f"Both sides: {bare[0]}"]
    return errors


def progress_printer(quiet: bool = False) -> Progress:
    """A :data:`~cutediff_tui.core.events.Progress` that prints each event as a dim line on stderr."""
    lock = threading.Lock()

    def show(event: Event | str) -> None:
        if quiet:
            return
        with lock:
            err_console.print(f"[dim]·[/] {escape(render_event(event))}", soft_wrap=True)

    return show


def emit_json(result: dict, json_out: str | None, progress: Progress) -> bool:
    """Write ``result`` as JSON to stdout (``-``) or a file; True when the tables should be printed
    too (stdout is not taken by the JSON)."""
    text = json.dumps(result, indent=1) + "\n"
    if json_out == "-":
        sys.stdout.write(text)
        return False
    if json_out:
        Path(json_out).write_text(text)
        progress(f"wrote {json_out}")
    return True


# Options of report/check that `cutediff compare` does not have (left out of the repro command).
OWN_VALUE_OPTS = {
    "-o",
    "--output",
    "--format",
    "--json",
    "--junit",
    "--result",
    "--report",
    "--max-spill-bytes",
    "--max-register-delta",
    "--max-stack-delta",
    "--max-slowdown",
    "--kernel-filter",
}
OWN_FLAGS = {"-q", "--quiet", "--force", "--keep-paths", "--allow-missing"}


def compare_command(
    argv: list[str],
    name: str,
    *,
    value_opts: set[str] = OWN_VALUE_OPTS,
    flags: set[str] = OWN_FLAGS,
    sides: tuple[str, str] | None = None,
) -> str:
    """The ``cutediff compare …`` equivalent of a ``cutediff report|check A B …`` command line
    (``sides`` puts these two versions first, for commands that take none, like bisect)."""
    try:
        start = argv.index(name)
    except ValueError:
        return ""
    out: list[str] = []
    rest = argv[start + 1 :]
    skip = False
    for tok in rest:
        if skip:
            skip = False
            continue
        opt = tok.split("=", 1)[0]
        if opt in value_opts:
            skip = "=" not in tok
            continue
        if tok in flags:
            continue
        out.append(tok)
    return "cutediff compare " + " ".join(shlex.quote(x) for x in [*(sides or ()), *out])


def open_comparison(comparison: dict, source: Path | None = None) -> None:
    """Show a comparison in the TUI (returns when the app quits)."""
    from ..ui.app import CutediffApp

    app = CutediffApp(comparison) if source is None else CutediffApp(comparison, source=source)
    app.run()
    exit_with(app)


def open_bisect(result: dict, progress: Progress) -> None:
    """Compare the bisect's last good with its first bad version (line info on) and open the TUI."""
    from ..core.bisect import pair_options
    from ..core.compare import run_compare

    opts = pair_options(result)
    progress(f"comparing {opts.specs[0].label} with {opts.specs[1].label}")
    open_comparison(run_compare(opts, progress))


# ---------------------------------------------------------------- shared options


def recipe_options(func: F) -> F:
    """The options that pick a recipe, its parameters, the target and the cache policy."""
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


def needs_line(versions: list[str], progress: Progress) -> None:
    """One progress line naming the DSL versions that need a shim or another Python here."""
    from ..core.toolchain import version_needs

    needs = [(v, n) for v in versions if (n := version_needs(v))]
    if needs:
        progress("versions that need more here: " + "; ".join(f"{v} ({n})" for v, n in needs))
