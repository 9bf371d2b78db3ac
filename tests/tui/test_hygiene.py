"""The headless helpers of the UI package import no Textual (they run in workers and tests)."""

from __future__ import annotations

import subprocess
import sys


def test_headless_modules_do_not_import_textual():
    code = (
        "import sys\n"
        "import cutediff_tui.ui.model, cutediff_tui.ui.lexers, cutediff_tui.ui.settings\n"
        "import cutediff_tui.ui.sources\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_core_does_not_import_the_ui():
    code = (
        "import sys\n"
        "import cutediff_tui.core.compare, cutediff_tui.core.analysis_pipeline\n"
        "assert not any(m.startswith('cutediff_tui.ui') or m.startswith('textual') for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
