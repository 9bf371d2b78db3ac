"""Themes: TOML files turned into :class:`textual.theme.Theme`.

The built-in themes (dark, light, high-contrast) are package data in
``cutediff_tui/data/themes/``, so an installed wheel has all three; the user's own themes are
read from ``<config dir>/themes/*.toml`` (``CUTEDIFF_CONFIG_DIR`` overrides the folder) and
replace a built-in one of the same name.

Each file holds the Theme fields at top level and a ``[variables]`` table with the domain
variables every cutediff widget uses (``$diff-added``, ``$spill``, ``$regression``...).
:data:`DOMAIN_DEFAULTS` gives those variables a fallback so that Textual's built-in themes
still work; a file that fails to parse is skipped, and a dark theme built into this module
stays usable even when every file is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from textual.theme import Theme

from cutediff_tui.core.paths import config_dir, package_root

__all__ = [
    "DEFAULT_THEME",
    "DOMAIN_DEFAULTS",
    "LoadedThemes",
    "domain_defaults",
    "load_themes",
    "short_name",
    "themes_dir",
    "user_themes_dir",
]

DEFAULT_THEME = "cutediff-dark"

#: Fallbacks for the domain variables (used when a theme does not define one).
DOMAIN_DEFAULTS: dict[str, str] = {
    "diff-added": "$success",
    "diff-removed": "$error",
    "diff-changed": "$warning",
    "diff-moved": "$accent",
    "spill": "$warning",
    "regression": "$error",
    "improvement": "$success",
    "side-a": "$primary",
    "side-b": "$secondary",
    "code-opcode": "$primary",
    "code-modifier": "$accent",
    "code-register": "$foreground",
    "code-predicate": "$secondary",
    "code-constant": "$warning",
    "code-immediate": "$warning",
    "code-label": "$success",
    "code-comment": "$foreground-muted",
    "code-directive": "$secondary",
    "code-type": "$accent",
    "code-tag": "$foreground-muted",
    "code-dim": "$foreground-muted",
}


def domain_defaults(theme: Theme) -> dict[str, str]:
    """:data:`DOMAIN_DEFAULTS` with ``$name`` references resolved against ``theme``'s colours."""
    base = theme.to_color_system().generate()
    return {k: base.get(v[1:], v) if v.startswith("$") else v for k, v in DOMAIN_DEFAULTS.items()}


_BUILTIN_DARK = Theme(
    name=DEFAULT_THEME,
    primary="#7aa2f7",
    secondary="#bb9af7",
    accent="#7dcfff",
    warning="#e0af68",
    error="#f7768e",
    success="#9ece6a",
    foreground="#c0caf5",
    background="#16161e",
    surface="#1a1b26",
    panel="#24283b",
    dark=True,
)

_THEME_FIELDS = {f.name for f in fields(Theme)}


def themes_dir() -> Path:
    """The folder of the built-in theme files (package data)."""
    return package_root() / "data" / "themes"


def user_themes_dir() -> Path:
    """The folder of the user's own theme files (``<config dir>/themes``)."""
    return config_dir() / "themes"


def short_name(theme_name: str) -> str:
    """``cutediff-high-contrast`` -> ``high-contrast`` (other names unchanged)."""
    return theme_name.removeprefix("cutediff-")


def theme_from_file(path: Path) -> Theme:
    """Parse one TOML theme file.

    Raises:
        ValueError: the file is not TOML or lacks ``name``/``primary``.
    """
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path.name}: {exc}") from None
    unknown = set(data) - _THEME_FIELDS
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {', '.join(sorted(unknown))}")
    if "name" not in data or "primary" not in data:
        raise ValueError(f"{path.name}: a theme needs at least name and primary")
    variables = {str(k): str(v) for k, v in (data.pop("variables", None) or {}).items()}
    return Theme(**data, variables=variables)


@dataclass
class LoadedThemes:
    """Themes read from disk and the files that could not be read."""

    themes: list[Theme]
    problems: list[str]


def load_themes(*folders: Path) -> LoadedThemes:
    """All themes of ``folders`` (default: the built-in ones, then the user's), dark default first.

    A theme read later replaces an earlier one of the same name.
    """
    by_name: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in folders or (themes_dir(), user_themes_dir()):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = theme_from_file(path)
            except ValueError as exc:
                problems.append(str(exc))
                continue
            by_name[theme.name] = theme
    themes = list(by_name.values())
    if not any(t.name == DEFAULT_THEME for t in themes):
        themes.insert(0, _BUILTIN_DARK)
    themes.sort(key=lambda t: (t.name != DEFAULT_THEME, t.name))
    return LoadedThemes(themes, problems)
