"""User settings remembered between runs (``config_dir()/settings.json``).

``CUTEDIFF_CONFIG_DIR`` moves the folder (tests point it at a temporary directory).
Unreadable settings are ignored rather than stopping the app.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from cutediff_tui.core.paths import config_dir

__all__ = ["Settings", "load_settings", "save_settings", "settings_path"]


@dataclass
class Settings:
    """What the TUI remembers."""

    theme: str | None = None
    """Name of the last theme chosen."""
    normalise: bool = False
    """Show registers normalised in the code panes."""


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings() -> Settings:
    """Read the settings; defaults when the file is missing or unreadable."""
    try:
        data = json.loads(settings_path().read_text())
    except (OSError, ValueError):
        return Settings()
    if not isinstance(data, dict):
        return Settings()
    out = Settings()
    theme, normalise = data.get("theme"), data.get("normalise")
    if isinstance(theme, str) and len(theme) < 200:  # anything else (a list, a number) is ignored
        out.theme = theme
    if isinstance(normalise, bool):
        out.normalise = normalise
    return out


def save_settings(settings: Settings) -> Path | None:
    """Write the settings atomically; returns the path, or None when it cannot be written."""
    path = settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".settings.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(settings), indent=1) + "\n")
        os.replace(tmp, path)
    except OSError:
        return None
    return path
