#!/usr/bin/env bash
# The wheel is the product: build it, install it (not editable, without the CUDA tool extra)
# into a fresh venv, and use it from a folder outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel --no-deps -q -w "$work/dist" .
wheel=$(ls "$work"/dist/cutediff-*.whl)
echo "wheel: $(basename "$wheel") $(du -k "$wheel" | cut -f1) kB"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
cd "$work"
venv/bin/cutediff --version
venv/bin/python -m cutediff_tui --version
venv/bin/python -m cutediff --version
sample=$(venv/bin/python -c 'from cutediff_tui.samples import default_sample; print(default_sample())')
case "$sample" in "$repo"/*) echo "the sample came from the checkout, not the wheel: $sample" >&2; exit 1 ;; esac
venv/bin/cutediff report "$sample" --format md -o report.md
grep -q "FlashAttentionForwardSm100" report.md
venv/bin/cutediff check "$sample" --max-spill-bytes 100000 >/dev/null
venv/bin/python -c "import cutediff; c = cutediff.load('$sample'); assert c.records() and cutediff.check(c, max_spill_bytes=0).exit_code == 1"
venv/bin/python "$repo/.ci/tui_smoke.py"
echo "wheel smoke: ok"
