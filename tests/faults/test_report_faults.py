"""HTML and Markdown injection through what a comparison carries from the outside world.

Kernel names, spill-site file paths and source text are covered on a hand-made comparison in
tests/unit/test_report_render.py (test_html_escapes_everything, test_markdown_escapes_kernel_names_
paths_and_messages, test_source_text_is_escaped_in_both_formats). This file goes end to end: the
artifact paths a user types (they become the side labels and the command), a source file on disk
whose text is hostile, and every other free-text field (errors, notes, shims, pins, environment
names, cross-check logs), through ``cutediff diff`` and ``cutediff report``.
"""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

from .helpers import RAW, cutediff

EVIL = '```\n"><img src=x onerror=alert(1)><script>alert(2)</script>|`x`'
EVIL_SRC = "acc = 1  # </code><img src=x onerror=alert(3)>&amp;<script>alert(4)</script>"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.handlers: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.handlers += [(tag, k) for k, _v in attrs if k.lower().startswith("on")]


def _assert_inert_html(html: str) -> None:
    p = _Tags()
    p.feed(html)
    assert not p.handlers, p.handlers
    assert not p.tags & {"script", "img", "iframe", "object", "embed"}, p.tags


def _assert_inert_markdown(md: str) -> None:
    """No raw HTML outside code blocks (whose fences are longer than any backtick run inside)."""
    import re

    outside = []
    fence = None
    for line in md.splitlines():
        m = re.match(r"^(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            outside.append(line)
    assert fence is None  # every block is closed
    low = "\n".join(outside).lower()
    assert "<img" not in low and "<script" not in low and "<iframe" not in low


def test_hostile_paths_sources_and_messages_stay_text(tmp_path):
    folder = tmp_path / EVIL.replace("/", "_")
    folder.mkdir()
    for side, version in (("a", "4.5.1"), ("b", "4.8.0")):
        d = folder / f"{side}{EVIL.replace('/', '_')}"
        d.mkdir()
        shutil.copy(RAW / f"fa4-fwd-sm103a-{version}-lineinfo" / "kernel.cubin", d / "kernel.cubin")
    a, b = sorted(p for p in folder.iterdir())
    cache = tmp_path / "cache"
    proc = cutediff(["diff", a, b, "--json", tmp_path / "c.json"], cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    c = json.loads((tmp_path / "c.json").read_text())
    name = EVIL.replace("/", "_")  # a file name cannot hold "/"
    assert name in c["sides"]["a"]["label"] and name in c["command"]
    # a hostile source file where B spills, and every other free-text field
    src = tmp_path / "softmax.py"
    k = next(k for k in c["kernels"] if k["b"] and k["b"]["spill_sites"])
    site = k["b"]["spill_sites"][0]
    src.write_text("\n" * (site["line"] - 1) + EVIL_SRC + "\n")
    k["b"]["sources"] = {site["file"]: str(src)}
    k["b"]["remarks"] = [
        {
            "category": "ptxas",
            "message": EVIL,
            "file": EVIL,
            "line": 1,
            "column": 1,
            "function": EVIL,
            "kernel": None,
            "detail": EVIL,
        }
    ]
    for s in "ab":
        c["sides"][s].update(
            notes=[EVIL], shims=[EVIL], pins=[EVIL], env=EVIL, versions={EVIL: EVIL, "nvidia-cutlass-dsl": EVIL}
        )
    c["recipe"] = {"name": EVIL, "params": {EVIL: EVIL}}
    c["crosscheck"] = {
        k["name"]: {
            "matrix": [
                {
                    "side": EVIL,
                    "ptx_version": "9.4",
                    "ptxas_version": "13.0",
                    "rewritten_from": None,
                    "registers": None,
                    "stack": None,
                    "spill_stores": None,
                    "spill_loads": None,
                    "error": EVIL,
                    "log": EVIL,
                }
            ],
            "verdict": EVIL,
            "cause": "unknown",
            "arch": "sm_103a",
            "ptxas_paths": {},
        }
    }
    (tmp_path / "c.json").write_text(json.dumps(c))
    for fmt in ("html", "md"):
        out = tmp_path / f"report.{fmt}"
        r = cutediff(["report", tmp_path / "c.json", "-o", out], cache)
        assert r.returncode == 0, r.stderr[-2000:]
        text = out.read_text()
        assert "alert(1)" in text and "alert(2)" in text  # shown, as text
        (_assert_inert_html if fmt == "html" else _assert_inert_markdown)(text)
    html = (tmp_path / "report.html").read_text()
    assert "alert(3)" in html  # the source line is quoted, escaped
    # a failed side's sentence is also hostile text
    c["sides"]["b"]["error"] = EVIL
    for k in c["kernels"]:
        k["b"] = None
    (tmp_path / "failed.json").write_text(json.dumps(c))
    r = cutediff(["report", tmp_path / "failed.json", "-o", tmp_path / "failed.html"], cache)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    _assert_inert_html((tmp_path / "failed.html").read_text())
    assert "alert(2)" in Path(tmp_path / "failed.html").read_text()
