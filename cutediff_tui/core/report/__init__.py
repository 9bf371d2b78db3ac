"""Reports of a comparison: Markdown (GitHub issues), self-contained HTML, JSON; and the CI check.

Headless: nothing here imports Textual (the TUI's export key calls these functions).
"""

from __future__ import annotations

from .check import CheckOutcome, CheckResult, Limits, build_limits, check_comparison
from .html import render_html
from .jsonout import render_json, validate_comparison
from .junit import junit_xml
from .markdown import render_markdown
from .write import FORMATS, format_for_path, render, write_report

__all__ = [
    "FORMATS",
    "CheckOutcome",
    "CheckResult",
    "Limits",
    "build_limits",
    "check_comparison",
    "format_for_path",
    "junit_xml",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "validate_comparison",
    "write_report",
]
