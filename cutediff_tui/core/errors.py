"""Errors that end in one sentence a user can act on."""

from __future__ import annotations

import re

from .sanitize import strip_ansi

#: The advice a failed side's sentence carried before cutediff kept the log itself (issue 37).
_OLD_DEBUG_ADVICE = re.compile(r"\s*(?:The full log is kept; )?run with --debug to see the traceback\.", re.I)


def without_debug_advice(sentence: str) -> str:
    """A side's error sentence read from a saved result, without the advice to run with ``--debug``
    that older results carry: ``open`` and ``report`` have no traceback to show."""
    return _OLD_DEBUG_ADVICE.sub("", sentence)


class CutediffError(Exception):
    """A failure with a user-facing message (what, why) and an optional hint (what to do)."""

    def __init__(self, message: str, hint: str | None = None):
        # A DSL's or a compiler's message may carry ANSI colour codes: never into JSON or reports.
        super().__init__(strip_ansi(message) if isinstance(message, str) else message)
        self.hint = strip_ansi(hint) if isinstance(hint, str) else hint

    def sentence(self) -> str:
        """The message and hint as one line for the terminal."""
        msg = str(self)
        return f"{msg} {self.hint}" if self.hint else msg


class ToolchainError(CutediffError):
    """A toolchain environment could not be created or used."""


class CompileError(CutediffError):
    """A compile failed on one side."""

    def __init__(self, message: str, hint: str | None = None, log: str = ""):
        super().__init__(message, hint)
        self.log = log

    @property
    def log(self) -> str:
        """The worker's output and the recipe's traceback (what ``--debug`` shows), plain text."""
        return self._log

    @log.setter
    def log(self, value: str) -> None:
        self._log = strip_ansi(value) if isinstance(value, str) else value
