"""Reports and the CI gate on real FA4 artifacts (samples/raw, via cutediff diff: no compile).

FlashAttentionForwardSm100 for sm_103a: DSL 4.5.1 vs 4.8.0 goes from stack 0 to 112 bytes and
spill stores/loads 0 to 176 bytes, with identical UTCHMMA/MUFU/FFMA2/FMUL2/FADD2 counts. The CLI
runs in a subprocess with its own cache folder; the HTML is screenshot with headless Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from cutediff_tui.core.compare import load_json
from cutediff_tui.core.report import render_html, render_markdown, validate_comparison
from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "samples" / "raw"
SAMPLE = bundled_sample_dir() / "comparison.json"
CHROMIUM = Path("/usr/bin/chromium")
# `cutediff` as installed (the entry point), with a fixed program name.
RUNNER = "import sys\nfrom cutediff_tui.cli import main\nsys.argv[0] = 'cutediff'\nmain()\n"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cutediff-cache")


def cutediff(args: list[str], cache: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-c", RUNNER, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def fwd_json(cache, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fwd") / "cmp.json"
    proc = cutediff(
        [
            "diff",
            "samples/raw/fa4-fwd-sm103a-4.5.1-lineinfo",
            "samples/raw/fa4-fwd-sm103a-4.8.0-lineinfo",
            "--json",
            out,
        ],
        cache,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def fwd(fwd_json) -> dict:
    return load_json(fwd_json)


# ---------------------------------------------------------------- Markdown


def test_markdown_report_of_the_fa4_regression(fwd):
    md = render_markdown(fwd)
    first = md.splitlines()[0]
    assert first.startswith(
        "### cutediff: FlashAttentionForwardSm100 spills on fa4-fwd-sm103a-4.8.0-lineinfo: "
        "stack 0 → 112 B, spill stores 0 → 176 B; key opcodes unchanged"
    )
    assert "| Registers | 128 | 128 | = |" in md
    assert "| Stack frame (bytes) | 0 | 112 | **+112** |" in md
    assert "| Spill stores (bytes) | 0 | 176 | **+176** |" in md
    assert "| Spill loads (bytes) | 0 | 176 | **+176** |" in md
    assert "| STL instructions | 0 | 44 | **+44** |" in md and "| LDL instructions | 0 | 33 | **+33** |" in md
    for op, n in {"UTCHMMA": 64, "MUFU": 398, "FFMA2": 192, "FMUL2": 256, "FADD2": 191}.items():
        assert f"| `{op}` | {n} | {n} | = |" in md, op
    assert "| Tensor-core MMA | 76 | 76 | = |" in md and "| Local memory (spills) | 0 | 77 | +77 |" in md
    assert "**Spill sites**: 0 instruction(s) on A, 77 on B" in md
    for where in (
        "flash_attn/cute/softmax.py:267",
        "flash_attn/cute/pipeline.py:133",
        "flash_attn/cute/tile_scheduler.py:923",
    ):
        assert f"`{where}`" in md, where
    assert "#### Reproduce" in md
    assert "cutediff diff samples/raw/fa4-fwd-sm103a-4.5.1-lineinfo samples/raw/fa4-fwd-sm103a-4.8.0-lineinfo" in md


def test_json_of_the_real_comparison_matches_the_schema_and_round_trips(fwd, fwd_json, cache, tmp_path):
    validate_comparison(json.loads(fwd_json.read_text()))
    proc = cutediff(["report", fwd_json, "-o", tmp_path / "r.json", "-q"], cache)
    assert proc.returncode == 0, proc.stderr
    validate_comparison(json.loads((tmp_path / "r.json").read_text()))
    again = load_json(tmp_path / "r.json")
    assert render_markdown(again) == render_markdown(fwd)
    assert render_html(again) == render_html(fwd)


def test_report_command_from_a_result_and_from_artifacts(fwd_json, cache, tmp_path, monkeypatch):
    proc = cutediff(["report", fwd_json, "-o", tmp_path / "r.md", "-q"], cache)
    assert proc.returncode == 0, proc.stderr
    # read with the command's cache: the kernels' folders live there, so the report quotes the
    # largest SASS hunk of the regressed kernel (a path outside both would be refused)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    md = render_markdown(load_json(fwd_json))
    assert "**Largest SASS hunk**" in md and "```diff" in md
    assert (tmp_path / "r.md").read_text() == md
    # two artifact folders: analysed like cutediff diff, no compile
    proc = cutediff(
        ["report", "samples/raw/fa4-fwd-sm103a-4.5.1", "samples/raw/fa4-fwd-sm103a-4.8.0", "--format", "md"], cache
    )
    assert proc.returncode == 0, proc.stderr
    assert "| Stack frame (bytes) | 0 | 112 | **+112** |" in proc.stdout


# ---------------------------------------------------------------- check


def test_check_fails_on_the_spilling_comparison(fwd_json, cache, tmp_path):
    junit = tmp_path / "check.xml"
    proc = cutediff(
        ["check", "--result", fwd_json, "--max-spill-bytes", "0", "--max-register-delta", "0", "--junit", junit], cache
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fails = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAIL")]
    assert fails == [
        "FAIL  FlashAttentionForwardSm100 max-spill-bytes: spill stores 176 B and spill loads 176 B on B "
        "exceed --max-spill-bytes 0"
    ]
    import xml.etree.ElementTree as ET

    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "1", "0")


def test_check_passes_on_the_same_toolchain(cache, tmp_path):
    # Warm the disassembly cache first: `diff X X` on a cold cache makes both sides write the same
    # cache files at once.
    warm = cutediff(
        ["diff", RAW / "fa4-fwd-sm103a-4.5.1", RAW / "fa4-fwd-sm103a-4.8.0", "--json", tmp_path / "w.json"], cache
    )
    assert warm.returncode == 0, warm.stderr
    same = tmp_path / "same.json"
    proc = cutediff(["diff", RAW / "fa4-fwd-sm103a-4.5.1", RAW / "fa4-fwd-sm103a-4.5.1", "--json", same], cache)
    assert proc.returncode == 0, proc.stderr
    proc = cutediff(
        [
            "check",
            "--result",
            same,
            "--max-spill-bytes",
            "0",
            "--max-register-delta",
            "0",
            "--max-stack-delta",
            "0",
            "--max-slowdown",
            "5",
            "--allow-missing",  # no benchmark here: without it the closed gate fails that limit
        ],
        cache,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "within limits (3 check(s) passed, 1 skipped)" in proc.stdout
    assert "slowdown not measured" in proc.stdout


# ---------------------------------------------------------------- the bundled sample (real compiles)


@pytest.fixture(scope="module")
def sample() -> dict:
    if not SAMPLE.is_file():
        pytest.fail(f"the bundled sample {SAMPLE.relative_to(ROOT)} is missing")
    return load_json(SAMPLE)


def test_bundled_sample_report(sample):
    validate_comparison(json.loads(SAMPLE.read_text()))
    md = render_markdown(sample)
    assert len(md) < 65536  # GitHub's limit for an issue body
    names = [k["name"] for k in sample["kernels"]]
    assert "FlashAttentionForwardSm100" in names
    for n in names:
        assert f"#### Kernel {n}" in md
    assert "| Stack frame (bytes) | 0 | 112 | **+112** |" in md
    assert "| Spill stores (bytes) | 0 | 176 | **+176** |" in md
    for op in ("UTCHMMA", "MUFU", "FFMA2"):
        fwd = next(k for k in sample["kernels"] if k["name"] == "FlashAttentionForwardSm100")
        n = fwd["a"]["opcodes"][op]
        assert fwd["b"]["opcodes"][op] == n and f"| `{op}` | {n} | {n} | = |" in md
    assert "**Compiler remarks**" in md and "`flash_attn/cute/tile_scheduler.py:923" in md
    # spill sites with their source text (the sample keeps the sources it was compiled from)
    assert "| `flash_attn/cute/tile_scheduler.py:923` |" in md
    assert "`cur_cu_seqlen = params.mCuSeqlensQ[batch_idx]`" in md
    assert "#### ptxas cross-check" in md
    assert "Verdict: regression is in the PTX the DSL emits" in md
    assert ".version 9.4 rewritten down for ptxas 13.0" in md
    b = sample["sides"]["b"]
    pins = " ".join(b["pins"])
    assert f"pip install 'nvidia-cutlass-dsl[cu{b['cuda']}]==4.8.0' {pins}".rstrip() in md
    assert "flash-attn-4==4.0.0b16" in md


def test_bundled_sample_check_breaks_the_spill_limit(sample, cache):
    proc = cutediff(["check", "--result", SAMPLE.parent, "--max-spill-bytes", "0"], cache)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL  FlashAttentionForwardSm100 max-spill-bytes: spill stores 176 B and spill loads 176 B" in proc.stdout


# ---------------------------------------------------------------- HTML in a real browser


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            ul = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + left) & 0xFF
            elif f == 2:
                line[i] = (line[i] + up) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif f == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 0xFF
        rows.append(bytes(line) if bpp == 3 else bytes(b for j in range(0, stride, 4) for b in line[j : j + 3]))
        prev = line
    return width, height, rows


def _near(px: bytes, rgb: tuple[int, int, int], tol: int = 24) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(px, rgb))


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (apt-get install -y chromium)")
def test_html_report_renders_in_headless_chromium(fwd, tmp_path):
    c = json.loads(json.dumps(fwd))
    c["kernels"][0]["name"] = "FlashAttentionForwardSm100<script>document.title='pwned'</script>"
    page = tmp_path / "report.html"
    page.write_text(render_html(c))
    assert "<script>" not in page.read_text()
    shot = tmp_path / "shot.png"
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        "--window-size=1200,2000",
        page.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.is_file(), proc.stderr[-2000:]
    assert shot.stat().st_size > 50_000
    width, height, rows = read_png(shot)
    assert (width, height) == (1200, 2000)
    white = a_blue = b_orange = 0
    for row in rows[::2]:
        for x in range(0, len(row), 6):  # every other pixel
            px = row[x : x + 3]
            if px[0] > 245 and px[1] > 245 and px[2] > 245:
                white += 1
            elif _near(px, (0x3B, 0x6F, 0xB6)):
                a_blue += 1
            elif _near(px, (0xE8, 0x77, 0x2E)):
                b_orange += 1
    total = (height // 2) * (width // 2)
    assert white < total * 0.97, "the page is blank"
    assert a_blue > 2000 and b_orange > 2000, (a_blue, b_orange)  # both series' bars and lines are drawn
    shutil.rmtree(tmp_path / "profile", ignore_errors=True)
