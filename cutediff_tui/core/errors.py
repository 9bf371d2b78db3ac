"""Errors that end in one sentence a user can act on."""

from __future__ import annotations


class CutediffError(Exception):
    """A failure with a user-facing message (what, why) and an optional hint (what to do)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

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
