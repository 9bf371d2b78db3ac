"""What every command module of the CLI shares: consoles, exit codes, the error guard, the
``--debug`` state, progress lines and the recipe options of ``compare``, ``report``, ``check``,
``bisect``.

Command modules import this one and :mod:`cutediff_tui.core`, never each other.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import shlex
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeVar, cast

import click
from rich.markup import escape

from ..core.errors import CutediffError
from ..core.events import Event, Progress, render_event
from ..terminal import SafeConsole


class CliConsole(SafeConsole):
    """A console of the CLI (stdout or stderr): progress bars still drawn are stopped and cleared
    before anything is printed, so that no redraw of theirs lands over a result or an error
    sentence (issue 37). The bars draw on a console of their own (:func:`progress_printer`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        stop_progress()
        super().print(*objects, **kwargs)


err_console = CliConsole(stderr=True, highlight=False)
out_console = CliConsole(highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(IntEnum):
    """How ``cutediff`` ends (``docs/ci.md`` documents 0, 1 and 2 for ``check``)."""

    OK = 0
    REGRESSION = 1  # check: a limit broke
    ERROR = 2  # bad input, a side failed, an internal error
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


@dataclass
class CliState:
    """Per-invocation state, carried in click's context object (``ctx.obj``): the shared flags
    every command takes (:func:`standard_options`)."""

    debug: bool = False
    quiet: bool = False
    verbose: bool = False
    color: str = "auto"
    bars: Any = None  # the progress bars drawn on a terminal (cli.progress.ProgressBars)
    args: list[str] | None = None  # the command line after ``cutediff`` (set by the root group)
    old_recipe_name: bool = False  # the recipe was named with --kernel (see :func:`names_recipe_the_old_way`)
    told_old_recipe_name: bool = False  # the note saying so was printed


def state() -> CliState:
    """This invocation's :class:`CliState` (a fresh one outside a click command)."""
    ctx = click.get_current_context(silent=True)
    return ctx.ensure_object(CliState) if ctx is not None else CliState()


def fail(message: str, code: int = ExitCode.ERROR) -> NoReturn:
    """Print one ``error:`` sentence and exit with ``code``."""
    from ..core.files import display

    err_console.print(f"[bold red]error:[/] {escape(display(message))}", soft_wrap=True)
    sys.exit(code)


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout as it is (JSON, a report), after the progress bars are cleared."""
    stop_progress()
    sys.stdout.write(text)
    sys.stdout.flush()


@contextlib.contextmanager
def stops_on_interrupt() -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) and SIGTERM raise KeyboardInterrupt, also where cutediff
    was started with SIGINT ignored.

    A shell that starts a command in the background without job control (``cutediff ... &`` in a
    script, ``nohup ... &``) leaves SIGINT ignored, and Python keeps it so: a ``--watch``, whose only
    way to end is Ctrl-C, would then never stop (found as a CI hang: docs/reliability.md). The
    handlers are put back on the way out. Only the main thread can set them; elsewhere the block
    changes nothing."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    previous = (signal.signal(signal.SIGINT, signal.default_int_handler), signal.signal(signal.SIGTERM, stop))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


def guarded(func: F) -> F:
    """Turn CutediffError into one sentence (traceback only with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        st = state()
        if kwargs.get("debug"):
            st.debug = True
        tell_old_recipe_name(st)
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
    import os

    from ..core.files import check_output
    from ..core.locking import atomic_write

    if str(path) == os.devnull:  # `--json /dev/null`: the output is thrown away, as asked
        return
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
    """A :data:`~cutediff_tui.core.events.Progress` that prints each event as a dim line on stderr
    (nothing with ``-q``); on a terminal, bars with elapsed time and ETA (:mod:`.progress`)."""
    st = state()
    quiet = quiet or st.quiet
    if not quiet and err_console.is_terminal:
        from .progress import ProgressBars

        if st.bars is None:  # one set of bars per invocation (Rich draws one live display at a time)
            # stderr with err_console's colours, but not a CliConsole: its prints would stop the bars
            # Console.color_system is typed str | None but is the name of one of the systems the
            # constructor takes
            color_system = cast('Literal["standard", "256", "truecolor", "windows"] | None', err_console.color_system)
            bars_console = SafeConsole(
                stderr=True, highlight=False, color_system=color_system, no_color=err_console.no_color
            )
            st.bars = ProgressBars.start(bars_console, click.get_current_context(silent=True))
        return st.bars
    lock = threading.Lock()

    def show(event: Event | str) -> None:
        if quiet:
            return
        with lock:
            err_console.print(f"[dim]·[/] {escape(render_event(event))}", soft_wrap=True)

    return show


def emit_json(result: Any, json_out: str | None, progress: Progress | None = None, *, inputs: tuple = ()) -> bool:
    """Write ``result`` as JSON to stdout (``-``) or a file (atomically, never over an input);
    True when the tables should be printed too (stdout is not taken by the JSON)."""
    return emit_text(json.dumps(result, indent=1) + "\n", json_out, progress, inputs=inputs)


def emit_text(text: str, json_out: str | None, progress: Progress | None = None, *, inputs: tuple = ()) -> bool:
    """:func:`emit_json` for text that is JSON already."""
    if json_out == "-":
        write_stdout(text)
        return False
    if json_out:
        write_output(Path(json_out), text, inputs=inputs, option="--json")
        (progress or progress_printer())(wrote(json_out))
    return True


def wrote(path: str | Path, what: str = "") -> str:
    """``wrote report.md (12.3 KB, md)``: a progress line naming a file written and its size."""
    from ..core.cache_admin import human_size

    try:
        st = Path(path).stat()
        size = human_size(st.st_size) if stat.S_ISREG(st.st_mode) else ""  # a device has no size
    except OSError:
        size = ""
    extra = ", ".join(x for x in (size, what) if x)
    return f"wrote {path}" + (f" ({extra})" if extra else "")


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

    stop_progress()
    app = CutediffApp(comparison) if source is None else CutediffApp(comparison, source=source)
    app.run()
    exit_with(app)


def stop_progress() -> None:
    """Stop and clear any progress bars still drawn: before a result goes to stdout, an error
    sentence is printed or a TUI takes the terminal."""
    bars = sys.modules.get(f"{__package__}.progress")
    if bars is not None:  # imported only where bars were drawn: plain prints stay cheap
        bars.stop_all()


def open_bisect(result: dict, progress: Progress, kernel_filter: str | None = None) -> None:
    """Compare the bisect's last good with its first bad version (line info on) and open the TUI
    (with only the kernels ``kernel_filter`` keeps)."""
    from ..core.bisect import pair_options
    from ..core.compare import run_compare
    from ..core.model.kernel_filter import filter_comparison

    opts = pair_options(result)
    progress(f"comparing {opts.specs[0].label} with {opts.specs[1].label}")
    open_comparison(filter_comparison(run_compare(opts, progress), kernel_filter))


# ---------------------------------------------------------------- shared options


#: The help of ``--recipe`` on every command that compiles one.
RECIPE_HELP = (
    "Recipe to compile: a built-in name, a recipe file (path/to/file.py[:function]) or a module "
    "(cutediff recipes lists them). --kernel is the older name of this option."
)

#: The note printed (once, not with -q) when the recipe is named with ``--kernel``.
OLD_RECIPE_NOTE = "--kernel is now called --recipe (--kernel still works)"


def names_recipe_the_old_way(args: list[str] | tuple[str, ...]) -> bool:
    """True when a command line names the recipe with ``--kernel`` (its older name) rather than
    ``--recipe``: a token ``--kernel`` or ``--kernel=…``, before any ``--``. ``--kernel-filter``
    (which kernels are shown) is another option and does not count."""
    for tok in args:
        if tok == "--":
            return False
        if tok == "--kernel" or tok.startswith("--kernel="):
            return True
    return False


def remember_command_line(ctx: click.Context, args: list[str]) -> None:
    """Keep the whole command line (after ``cutediff``) in this invocation's :class:`CliState`,
    for the checks that look at what was typed (:func:`names_recipe_the_old_way`)."""
    ctx.ensure_object(CliState).args = list(args)


def _note_old_recipe_name(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    st = ctx.ensure_object(CliState)
    typed = st.args if st.args is not None else sys.argv[1:]
    if names_recipe_the_old_way(typed):
        st.old_recipe_name = True
    return value


def tell_old_recipe_name(st: CliState) -> None:
    """Print :data:`OLD_RECIPE_NOTE` as a dim progress line on stderr, once per invocation, where
    the recipe was named with ``--kernel`` (not with ``-q``). Called by :func:`guarded` as the
    command starts, when every option, ``-q`` included, has been read."""
    if st.old_recipe_name and not st.quiet and not st.told_old_recipe_name:
        st.told_old_recipe_name = True
        err_console.print(f"[dim]· {escape(OLD_RECIPE_NOTE)}[/]", soft_wrap=True, highlight=False)


def recipe_option(func: F) -> F:
    """``--recipe`` (older name ``--kernel``): the recipe to compile, kept as the parameter
    ``kernel``. Naming it ``--kernel`` still works, with a note (:func:`tell_old_recipe_name`)."""
    return click.option(
        "--recipe",
        "--kernel",
        "kernel",
        default="fa4-fwd",
        show_default=True,
        shell_complete=complete_recipes,
        callback=_note_old_recipe_name,
        help=RECIPE_HELP,
    )(func)


def recipe_options(func: F) -> F:
    """The options that pick a recipe, its parameters, the target and the cache policy."""
    opts = [
        recipe_option,
        click.option(
            "--arch",
            default=None,
            shell_complete=complete_archs,
            help="Target arch, e.g. sm_90a, sm_100a, sm_103a, sm_120a (default: local GPU, else sm_100a).",
        ),
        click.option(
            "--gpu",
            default=None,
            shell_complete=complete_gpus,
            help="Target GPU profile (h100, h200, b200, b300, …): arch plus SM count.",
        ),
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
        # The FA4 recipes' own flags: taken by every command that compiles, listed (with their
        # defaults and help) once, per recipe, by `cutediff recipes` rather than in every --help.
        click.option("--varlen/--batched", default=None, hidden=True),
        click.option("--causal/--no-causal", default=None, hidden=True),
        click.option("--hdim", type=int, default=None, hidden=True),
        click.option("--hdim-v", type=int, default=None, hidden=True),
        click.option("--heads", type=int, default=None, hidden=True),
        click.option("--kv-heads", type=int, default=None, hidden=True),
        click.option("--dtype", type=click.Choice(["bf16", "fp16"]), default=None, hidden=True),
        click.option("--seqlen", type=int, default=None, hidden=True),
        click.option("--batch", type=int, default=None, hidden=True),
        click.option("--total", type=int, default=None, hidden=True),
        click.option("--docs", type=int, default=None, hidden=True),
        click.option("--window", default=None, hidden=True),
        click.option(
            "--param",
            "extra_params",
            multiple=True,
            metavar="NAME=VALUE",
            help="A recipe parameter. A recipe's own flags (the FA4 recipes' --hdim, --causal, --varlen, "
            "--window, …) are listed with their defaults by cutediff recipes.",
        ),
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


# ---------------------------------------------------------------- shared flags: one meaning each


def _set_state(field_name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        st = ctx.ensure_object(CliState)
        if value not in (None, False) and getattr(st, field_name) != value:
            setattr(st, field_name, value)
            if field_name == "verbose":
                start_verbose(ctx)
            if field_name == "color":
                configure_consoles(value)
                ctx.find_root().call_on_close(configure_consoles)
        return value

    return callback


def quiet_option(func: F) -> F:
    """``-q/--quiet``: no progress on stderr (results and errors are still printed)."""
    return click.option(
        "-q", "--quiet", is_flag=True, expose_value=False, callback=_set_state("quiet"), help="No progress on stderr."
    )(func)


def verbose_option(func: F) -> F:
    """``-v/--verbose``: also print the commands run and the cache decisions (stderr)."""
    return click.option(
        "-v",
        "--verbose",
        is_flag=True,
        expose_value=False,
        callback=_set_state("verbose"),
        help="Also print the commands run and the cache decisions (on stderr).",
    )(func)


def color_option(func: F) -> F:
    """``--color auto|always|never`` (``NO_COLOR`` set: never, unless --color always)."""
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default=None,
        expose_value=False,
        callback=_set_state("color"),
        help="Colour output: auto (a terminal, and NO_COLOR unset), always or never.",
    )(func)


def debug_option(func: F) -> F:
    """``--debug``: tracebacks instead of one sentence."""
    return click.option(
        "--debug", is_flag=True, expose_value=False, callback=_set_state("debug"), help="Show tracebacks."
    )(func)


def standard_options(func: F) -> F:
    """The flags every command takes, with one meaning everywhere: ``-q``, ``-v``, ``--color``,
    ``--debug`` (kept in :class:`CliState`, not passed to the command function)."""
    for o in (debug_option, color_option, verbose_option, quiet_option):
        func = o(func)
    return func


def json_option(help: str = "Write the result as JSON to PATH, or - for stdout.") -> Callable[[F], F]:
    """``--json PATH|-``: JSON to a file, or to stdout with ``-`` (then no tables on stdout)."""
    return click.option("--json", "json_out", default=None, metavar="PATH|-", help=help)


def output_option(help: str = "Write to FILE instead of stdout.") -> Callable[[F], F]:
    """``-o/--output FILE``: the command's main output goes to FILE (default: stdout)."""
    return click.option("-o", "--output", type=click.Path(path_type=Path), default=None, metavar="FILE", help=help)


def _check_regex(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        from ..core.model.kernel_filter import check_kernel_filter

        try:
            check_kernel_filter(value)
        except CutediffError as exc:
            fail(exc.sentence())
    return value


def side_param_options(f: F) -> F:
    """``--a-param`` / ``--b-param NAME=VALUE``: a recipe parameter on one side only (``compare``, ``bench``)."""
    f = click.option(
        "--b-param", "b_params", multiple=True, help="Recipe parameter for side B only, NAME=VALUE (repeatable)."
    )(f)
    return click.option(
        "--a-param", "a_params", multiple=True, help="Recipe parameter for side A only, NAME=VALUE (repeatable)."
    )(f)


#: How every ``--kernel-filter`` help starts (one meaning on every command).
KERNEL_FILTER_HELP = "Consider and show only kernels whose name or symbol matches this regular expression"


def kernel_filter_option(then: str = "") -> Callable[[F], F]:
    """``--kernel-filter REGEX``: only the kernels whose name or symbol matches (``re.search``,
    case-sensitive; a bad expression is refused at once). ``then`` ends the help with what the
    command does with them; the start is :data:`KERNEL_FILTER_HELP` on every command."""
    help = KERNEL_FILTER_HELP + (f"; {then}" if then else ".")
    return click.option("--kernel-filter", default=None, metavar="REGEX", callback=_check_regex, help=help)


def examples(*lines: str) -> str:
    """A click epilog listing example command lines, kept as written (``\\b``)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


# ---------------------------------------------------------------- values that look like flags

_FLAG_LIKE = re.compile(r"^--?[A-Za-z]")


def takes_value(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and not param.is_flag and not param.count


def refuse_flag_values(command: click.Command, args: list[str], prefix: str = "cutediff") -> None:
    """Refuse ``--json --allow-arch-mismatch``: an option that takes a value followed by what looks
    like another option. Click would take that as the value (and write a file named
    ``--allow-arch-mismatch``); here it ends in one sentence. ``-`` and negative numbers are
    values; ``--opt=--x`` and anything after ``--`` are taken as written. Recurses into the
    subcommand of a group."""
    opts = {name: p for p in command.params if takes_value(p) for name in p.opts}  # type: ignore[attr-defined]
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--":
            return
        if tok in opts:
            nxt = args[i + 1] if i + 1 < len(args) else None
            param = opts[tok]
            what = param.metavar or (param.type.name.upper() if param.type else "VALUE")
            if nxt is None and not param.is_bool_flag and param.nargs == 1:  # type: ignore[attr-defined]
                fail(f"{prefix}: {tok} needs a value ({what}) and none follows it. Write it as {tok} {what}.")
            if nxt is not None and _FLAG_LIKE.match(nxt):
                fail(
                    f"{prefix}: {tok} needs a value ({what}), and the next argument {nxt!r} is an option. "
                    f"Give the value right after {tok}, or write {tok}={nxt} if that really is the value."
                )
            i += 2
            continue
        if isinstance(command, click.Group) and not tok.startswith("-"):
            sub = command.get_command(click.Context(command), tok)
            if sub is not None:
                refuse_flag_values(sub, args[i + 1 :], f"{prefix} {tok}")
            return
        i += 1


# ---------------------------------------------------------------- consoles: colour and width


def configure_consoles(color: str | None = None) -> None:
    """Apply ``--color`` (and ``NO_COLOR``) to both consoles: ``always`` colours even into a pipe,
    ``never`` never does, ``auto`` only on a terminal without ``NO_COLOR``."""
    import os

    for console in (out_console, err_console):
        console.set_color(color or "auto", no_color_env=bool(os.environ.get("NO_COLOR")))


# ---------------------------------------------------------------- -v: commands run, cache decisions

_VERBOSE: list[Any] = []  # the live sink while a -v invocation runs (the audit hook is process-wide)


def _audit(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _VERBOSE:
        argv = args[1] if len(args) > 1 else args
        if isinstance(argv, (list, tuple)):
            line = shlex.join(str(a) for a in argv)
        else:
            line = str(argv)
        _VERBOSE[-1](f"run: {line}")


_HOOKED: list[bool] = []


def start_verbose(ctx: click.Context | None) -> None:
    """Print the commands this process runs (through a ``subprocess.Popen`` audit hook, so that
    every tool, compile worker and ``uv`` call is covered) and the cache decisions of
    :mod:`cutediff_tui.core.trace`, as dim lines on stderr, until the command ends."""
    import logging

    from ..core.trace import CACHE_LOG

    def say(text: str) -> None:
        err_console.print(f"[dim]· {escape(text)}[/]", soft_wrap=True, highlight=False)

    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            say("cache: " + record.getMessage())

    handler = _Handler(logging.INFO)
    CACHE_LOG.addHandler(handler)
    CACHE_LOG.setLevel(logging.INFO)
    _VERBOSE.append(say)
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED.append(True)

    def stop() -> None:
        CACHE_LOG.removeHandler(handler)
        if say in _VERBOSE:
            _VERBOSE.remove(say)

    if ctx is not None:
        ctx.find_root().call_on_close(stop)


# ---------------------------------------------------------------- shell completion of values


def complete_versions(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Published DSL versions, newest first, from the index list cutediff keeps in its cache
    (the index is asked only when no list was kept yet; a TAB never waits on a dead network)."""
    from click.shell_completion import CompletionItem

    from ..core.toolchain import published_versions, version_key

    if "," in incomplete:  # pins after the version: nothing to offer
        return []
    try:
        versions = published_versions(offline=True) or published_versions()
    except Exception:
        return []
    return [CompletionItem(v) for v in sorted(versions, key=version_key, reverse=True) if v.startswith(incomplete)]


def complete_recipes(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Built-in recipe names; a path (``./``, ``/``, ``~``, ``.py``) completes as a file."""
    from click.shell_completion import CompletionItem

    from ..core.recipes import BUILTINS

    if incomplete.startswith((".", "/", "~")) or "/" in incomplete or incomplete.endswith(".py"):
        return [CompletionItem(incomplete, type="file")]
    return [CompletionItem(n, help=r.summary) for n, r in sorted(BUILTINS.items()) if n.startswith(incomplete)]


def complete_archs(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Target archs (``sm_90a`` …); after a comma (``--arch sm_90a,``) the next one of a list."""
    from click.shell_completion import CompletionItem

    from ..core.gpu import ARCH_DEFAULTS, PROFILES

    head, _, tail = incomplete.rpartition(",")
    archs = sorted({*ARCH_DEFAULTS, *(p.arch for p in PROFILES.values())})
    return [CompletionItem(f"{head},{a}" if head else a) for a in archs if a.startswith(tail)]


def complete_gpus(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """GPU profiles (``h100``, ``b200`` …) with their arch and SM count as help."""
    from click.shell_completion import CompletionItem

    from ..core.gpu import PROFILES

    head, _, tail = incomplete.rpartition(",")
    return [
        CompletionItem(f"{head},{n}" if head else n, help=f"{p.arch}, {p.num_sms} SMs")
        for n, p in sorted(PROFILES.items())
        if n.startswith(tail)
    ]
