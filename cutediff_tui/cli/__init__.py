"""The ``cutediff`` command line: a thin face over :mod:`cutediff_tui.core`.

Every command is listed once, in :data:`COMMANDS`, and imported only when it runs (or when
``--help`` lists them): click's "lazily loading subcommands" recipe. Each command group is one
module of this package; they share :mod:`.common` and never import each other.
"""

from __future__ import annotations

import importlib
import threading

import click

from .. import __version__
from .common import (
    CliState,
    color_option,
    configure_consoles,
    examples,
    quiet_option,
    refuse_flag_values,
    remember_command_line,
    verbose_option,
)

#: Command name -> "module:attribute" of its click command, relative to this package.
COMMANDS: dict[str, str] = {
    "open": "tui:open_cmd",
    "compare": "compare:compare",
    "diff": "compare:diff",
    "recipes": "recipes:recipes",
    "report": "report:report",
    "check": "report:check",
    "bench": "bench:bench",
    "bisect": "bisect:bisect",
    "sweep": "sweep:sweep",
    "env": "env:env",
    "cache": "cache:cache",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def __init__(self, *args, lazy_subcommands: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None and not ctx.resilient_parsing:  # once, on the whole command line (not while completing)
            refuse_flag_values(self, list(args))
            remember_command_line(ctx, args)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands and cmd_name not in self.commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)  # type: ignore[arg-type]

    def _load(self, cmd_name: str) -> click.Command:
        module_name, attr = self.lazy_subcommands[cmd_name].split(":")
        command = getattr(importlib.import_module(f"{__name__}.{module_name}"), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module_name}:{attr} is not a click command")
        return command


@click.group(
    cls=LazyGroup,
    lazy_subcommands=COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples(
        "cutediff                                  # the TUI on the bundled sample",
        "cutediff compare 4.5.1 4.8.0 --recipe fa4-fwd --arch sm_103a",
        "cutediff report result/ -o report.md",
        "cutediff check --result result/ --max-spill-bytes 0",
        "cutediff COMMAND --help                   # each command's options and examples",
    ),
)
@click.version_option(__version__, "--version", "-V", prog_name="cutediff", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@quiet_option
@verbose_option
@color_option
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
    from ..core.files import LIMITS

    st = ctx.ensure_object(CliState)
    st.debug = st.debug or debug
    configure_consoles(st.color)  # NO_COLOR and --color, read afresh for this invocation
    if max_file_mb:
        LIMITS.file_bytes = max_file_mb * 1024 * 1024
    if max_kernels:
        LIMITS.kernels = max_kernels
    if max_string:
        LIMITS.string_chars = max_string
    _stop_on_sigterm()
    if ctx.invoked_subcommand is None:
        from .tui import open_tui

        open_tui(None)


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so that every temporary file and folder is removed on the way
    out (the default action would end the process at once and leave them behind)."""
    import signal

    def stop(signum, frame) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
    _dump_threads_on_sigusr1()


def _dump_threads_on_sigusr1() -> None:
    """``kill -USR1 PID`` prints the stack of every thread of a cutediff that seems stuck to its
    stderr, and cutediff goes on (the evidence a hang report needs; see docs/reliability.md)."""
    import faulthandler
    import signal
    import sys

    if hasattr(signal, "SIGUSR1") and sys.stderr is not None:
        try:
            faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True, chain=False)
        except (ValueError, OSError, AttributeError, RuntimeError):  # no usable stderr file descriptor
            pass


__all__ = ["COMMANDS", "LazyGroup", "main"]
