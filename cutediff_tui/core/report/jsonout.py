"""The comparison as JSON, checked against ``cutediff_tui/data/comparison.schema.json``.

The JSON report is the comparison itself as the model writes it (``cutediff.comparison/2``, with
each kernel's registry figures), minus the machine-local ``_base`` key that loading adds;
``read_comparison`` reads it back and every other report can be rebuilt from it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..errors import CutediffError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "data" / "comparison.schema.json"
_LOCAL_KEYS = ("_base", "_refused")


@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the comparison format."""
    return json.loads(SCHEMA_PATH.read_text())


def plain(comparison: dict, keep_paths: bool = True) -> dict:
    """A JSON-only copy of the comparison without machine-local keys; paths inside the result
    folder it was loaded from are written relative to it, and home folders and the user name are
    removed unless ``keep_paths``."""
    from ..resultdir import portable

    data = portable(comparison, keep_paths)
    for key in _LOCAL_KEYS:
        data.pop(key, None)
    return data


def _where(path) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in path]
    return "comparison" + "".join(parts)


def validate_comparison(comparison: dict) -> None:
    """Raise a one-sentence CutediffError when the comparison does not match the schema."""
    try:
        import jsonschema
    except ImportError:
        raise CutediffError(
            "Validating needs the jsonschema package.", "Install it with: pip install jsonschema"
        ) from None
    validator = jsonschema.Draft202012Validator(load_schema())
    errors = sorted(validator.iter_errors(comparison), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise CutediffError(
            f"The comparison does not match schema {comparison.get('schema')} at {_where(e.absolute_path)}: {e.message}{more}.",
            "Re-create it with this version of cutediff.",
        )


def render_json(comparison: dict, *, validate: bool = True, keep_paths: bool = True) -> str:
    """The comparison as indented JSON; validated against the schema when jsonschema is installed.
    ``keep_paths=False`` removes home folders and the user name (what ``report`` writes)."""
    data = plain(comparison, keep_paths)
    if validate:
        try:
            import jsonschema  # noqa: F401
        except ImportError:
            validate = False
    if validate:
        validate_comparison(data)
    return json.dumps(data, indent=1) + "\n"
