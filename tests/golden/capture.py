"""Write what cutediff says about the bundled /1 sample, for the golden-output tests.

Run from the repository root: ``python tests/golden/capture.py OUT_DIR``. The files in
``tests/golden/v1/`` were written by this script with the code of ``main`` at 44c56f2, before the
typed model and the figure registry; ``tests/unit/test_golden.py`` runs it again and compares.
The sample's absolute path is written as ``<SAMPLE>`` so the files do not depend on the checkout.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = bundled_sample_dir()
SWEEP = ROOT / "samples" / "sweeps" / "fa4-fwd-sm100a-sm103a.json"
CHECK_ARGS = ["--max-spill-bytes", "0", "--max-register-delta", "0", "--max-stack-delta", "0", "--max-slowdown", "1"]


def _clean(text: str) -> str:
    return text.replace(str(SAMPLE.resolve()), "<SAMPLE>")


def capture(out: Path) -> dict[str, str]:
    """Render every face of the sample into ``out`` and return ``{file name: text}``."""
    from cutediff_tui.cli import main

    out.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    files: dict[str, str] = {}
    for fmt in ("md", "html", "json"):
        path = out / f"report.{fmt}"
        res = runner.invoke(main, ["report", str(SAMPLE), "-o", str(path)])
        assert res.exit_code == 0, res.output
        files[path.name] = _clean(path.read_text())
    junit = out / "check.xml"
    res = runner.invoke(main, ["check", "--result", str(SAMPLE), *CHECK_ARGS, "--junit", str(junit)])
    files["check.txt"] = _clean(f"exit {res.exit_code}\n{res.output}")
    files["check.xml"] = _clean(junit.read_text())
    from cutediff_tui.core.report.sweep_html import sweep_html

    files["sweep.html"] = sweep_html(json.loads(SWEEP.read_text()))
    for name, text in files.items():
        (out / name).write_text(text)
    return files


def cli_table_text() -> str:
    """The CLI comparison tables of the sample as plain text (not golden: labels may change)."""
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.render import comparison_tables

    console = Console(file=io.StringIO(), width=160, record=True, color_system=None)
    for r in comparison_tables(load_json(SAMPLE / "comparison.json")):
        console.print(r)
    return console.export_text()


if __name__ == "__main__":
    capture(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(cli_table_text())
