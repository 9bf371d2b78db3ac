"""One sanitiser for text that reaches a terminal, a TUI or a Markdown report.

Strings from a result, a file name, a recipe or a compiler message may hold control characters
(C0, DEL, C1, ESC): written raw they can set the clipboard (OSC 52), change the window title or
clear a FAIL line off the screen. :func:`visible` shows each one as a visible escape such as
``\\x1b``; tabs and newlines are kept unless ``one_line`` is asked for.
"""

from __future__ import annotations

import re
from typing import Any, overload

__all__ = ["visible", "one_line", "truncate", "no_mentions", "visible_strings", "strip_ansi", "MAX_NAME"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
MAX_NAME = 200
"""Kernel names and labels longer than this are shortened for display (the data keeps them)."""


_ANSI_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI CSI sequences (colours ``\\x1b[31m``, cursor moves): compiler and DSL
    messages carry them when they think they talk to a terminal. Applied where such text enters
    cutediff (errors, logs), so the JSON, the reports and the terminal get plain words; anything
    else left (an OSC sequence) is still shown as a visible escape by :func:`visible`."""
    return _ANSI_CSI.sub("", text) if ("\x1b" in text or "\x9b" in text) else text


def _escape(m: re.Match) -> str:
    return f"\\x{ord(m.group()):02x}"


def visible(text: object) -> str:
    """``text`` with every control character except tab and newline written as ``\\xNN``."""
    s = text if isinstance(text, str) else str(text)
    return _CONTROL.sub(_escape, s) if _CONTROL.search(s) else s


def one_line(text: object) -> str:
    """Like :func:`visible`, and tabs, newlines and carriage returns are escaped too."""
    s = text if isinstance(text, str) else str(text)
    return _CONTROL_ALL.sub(_escape, s) if _CONTROL_ALL.search(s) else s


def truncate(text: str, limit: int = MAX_NAME) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} characters)"


def no_mentions(text: str) -> str:
    """``@name`` with a zero-width space after the ``@``, so GitHub and Slack notify nobody."""
    return _MENTION.sub("@\u200b", text)


_PATH_KEYS = frozenset({"files", "sources", "_base"})


_JSON_CONTROL = re.compile(r"\\[bfr]|\\u00[01][0-9a-fA-F]|\\u007[fF]|[\x7f-\x9f]")


@overload
def visible_strings(obj: dict[str, Any]) -> dict[str, Any]: ...
@overload
def visible_strings(obj: object) -> object: ...
def visible_strings(obj: object) -> object:
    """``obj`` (JSON-like data) with every string made :func:`visible` (a copy, or ``obj`` itself
    when it holds no control character); the machine paths under ``files``, ``sources`` and
    ``_base`` are kept as they are (they are opened, not shown)."""
    import msgspec

    try:  # one pass in C over everything: most results hold no control character at all
        text = msgspec.json.encode(obj, enc_hook=str).decode()
    except (TypeError, ValueError, RecursionError, msgspec.MsgspecError):
        text = None
    if text is not None and not _JSON_CONTROL.search(text.replace("\\n", "").replace("\\t", "")):
        return obj
    return _visible_copy(obj)


def _visible_copy(obj: object) -> object:
    if isinstance(obj, str):
        return visible(obj)
    if isinstance(obj, dict):
        return {
            (visible(k) if isinstance(k, str) else k): (v if k in _PATH_KEYS else _visible_copy(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_visible_copy(v) for v in obj]
    return obj
