"""Where cutediff keeps its cache, environments and settings."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """Root of the cache (environments, artifacts, tools); `CUTEDIFF_CACHE_DIR` overrides."""
    override = os.environ.get("CUTEDIFF_CACHE_DIR")
    root = Path(override).expanduser().absolute() if override else Path(platformdirs.user_cache_dir("cutediff"))
    return root


def envs_dir() -> Path:
    return cache_dir() / "envs"


def artifacts_dir() -> Path:
    return cache_dir() / "artifacts"


def tools_dir() -> Path:
    return cache_dir() / "tools"


def config_dir() -> Path:
    """User settings (theme, recent comparisons); `CUTEDIFF_CONFIG_DIR` overrides."""
    override = os.environ.get("CUTEDIFF_CONFIG_DIR")
    return Path(override).expanduser() if override else Path(platformdirs.user_config_dir("cutediff"))


def package_root() -> Path:
    """The installed `cutediff_tui` package folder."""
    return Path(__file__).resolve().parents[1]


def project_root() -> Path:
    """The source checkout (holds samples/ and themes/) when running from one."""
    return package_root().parent
