"""Run a real ``cutediff`` command in a pseudo-terminal of a given size and read the screen a user
is left with (issue 37).

The command's stdin, stdout and stderr are the pty's slave end, exactly as in a terminal window:
Rich sees a terminal (bars, colour, the window's width); every byte it writes is fed to a
``pyte`` screen of the same size, which plays the cursor movements and erasures the way a
terminal does. What is left on that screen when the command ends is what the user sees.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[2]

#: Signs of a progress bar on screen (the bar's own glyphs and its columns).
BAR_SIGNS = ("ETA", "elapsed", "0/?")


@dataclass
class Terminal:
    """The end of a command run in a terminal of ``cols`` x ``rows``."""

    cols: int
    rows: int
    returncode: int
    raw: bytes
    lines: list[str] = field(default_factory=list)  # the screen, trailing blanks cut, blank rows at the end dropped
    stdout: bytes = b""  # what went into the pipe (``stdout_piped``)
    display: list[str] = field(default_factory=list)  # the screen's rows as they are (full width)

    @property
    def last_line(self) -> str:
        return self.lines[-1] if self.lines else ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def from_last(self, prefix: str) -> str:
        """The text from the last line that starts with ``prefix`` to the end of the screen, rows
        joined as the terminal wrapped them (one long sentence reads back whole)."""
        starts = [i for i, ln in enumerate(self.lines) if ln.startswith(prefix)]
        if not starts:
            return ""
        return "".join(self.display[starts[-1] : len(self.lines)]).strip()

    def bars_left(self) -> list[str]:
        """Screen lines that still show a progress bar."""
        return [ln for ln in self.lines if any(sign in ln for sign in BAR_SIGNS)]

    def __str__(self) -> str:  # what a failing assertion shows: the screen itself
        border = "+" + "-" * self.cols + "+"
        return "\n".join([border, *(f"|{ln.ljust(self.cols)}|" for ln in self.lines), border])


def run_in_terminal(
    args: list[str],
    *,
    cols: int = 120,
    rows: int = 36,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    cwd: Path = ROOT,
    stdout_piped: bool = False,
) -> Terminal:
    """Run ``cutediff ARGS`` in a ``cols`` x ``rows`` pseudo-terminal; the screen it leaves.

    ``stdout_piped``: stdout goes into a pipe (``cutediff … | jq``) and is kept in
    :attr:`Terminal.stdout`; stderr stays on the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    run_env = dict(env if env is not None else os.environ)
    for name in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI", "GITHUB_ACTIONS", "TERM_PROGRAM"):
        run_env.pop(name, None)  # the window's size and kind decide, as in a real terminal
    run_env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cutediff_tui.cli", *map(str, args)],
        stdin=slave,
        stdout=subprocess.PIPE if stdout_piped else slave,
        stderr=slave,
        env=run_env,
        cwd=cwd,
        start_new_session=True,  # the pty becomes its controlling terminal
    )
    os.close(slave)
    out = bytearray()

    def drain() -> None:  # the terminal's side: read everything, so the command never blocks on output
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the slave end
                return
            if not data:
                return
            out.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    piped = b""
    try:
        if stdout_piped:
            piped, _ = proc.communicate(timeout=timeout)
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        reader.join(timeout=10)
        os.close(master)
    screen = pyte.Screen(cols, rows)
    stream = pyte.ByteStream(screen)
    stream.feed(bytes(out))
    lines = [ln.rstrip() for ln in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return Terminal(cols, rows, proc.returncode, bytes(out), lines, piped, list(screen.display))
