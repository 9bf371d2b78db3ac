#!/usr/bin/env bash
# The dependency floors are real: install every runtime dependency at the lowest version
# pyproject.toml allows (textual, rich, click, ...) into a fresh venv and run the TUI tests
# (snapshots and timings excepted: their pixels and speed belong to the current textual).
set -euo pipefail
cd "$(dirname "$0")/.."
uv=$(command -v uv || echo "$PWD/.venv/bin/uv")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 .ci/lowest_versions.py > "$work/floors.txt"
echo "lowest versions: $(tr '\n' ' ' < "$work/floors.txt")"
"$uv" venv -q --python "$(command -v python3)" "$work/venv"
"$uv" pip install -q --python "$work/venv/bin/python" -r "$work/floors.txt" pytest "pytest-asyncio>=0.24" -e .
"$work/venv/bin/python" -c 'import textual, rich, click; print("textual", textual.__version__, "click", click.__version__)'
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" tests/tui \
    --ignore tests/tui/test_snapshots.py --ignore tests/tui/test_snapshots_screens.py --ignore tests/tui/test_perf.py \
    --deselect tests/tui/test_sweep_screen.py::test_snapshot
