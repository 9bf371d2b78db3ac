"""A big SASS pair made from the bundled sample's FA4 forward listings (TUI tests and benchmarks).

Side A repeats DSL 4.5.1's ``FlashAttentionForwardSm100`` listing and side B DSL 4.8.0's (with its
spills), each copy at the next addresses with its labels renumbered, until a side holds ``n``
instructions. Each side gets the plain text (``sass.txt.gz``) and the ``-lrm count`` text
(``lrm.txt.gz``, live-register columns; nvdisasm pads these lines to ~500 columns, collapsed here so
a 1M listing stays under the file-size limit), as in a saved result's kernel folder; no line info.
"""

from __future__ import annotations

import copy
import gzip
import re
import shutil
from pathlib import Path

from cutediff_tui.core.compare import load_json
from cutediff_tui.samples import default_sample

__all__ = ["fa4_like_comparison"]

_INSTR = re.compile(r"^(\s*)/\*([0-9a-f]{4,})\*/")
_LABEL = re.compile(r"\.L_x_(\d+)")
_END = re.compile(r"^(//----|[^\s.][^\s:]*:)")  # the next section, or the next function's label
_PAD = re.compile(r"\s{3,}(// \|)")


def _gz_text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode()


def _function(lines: list[str]) -> tuple[int, int]:
    """First and end line of the first function's body (after its ``.text.NAME:`` label)."""
    start = next(k for k, ln in enumerate(lines) if ln.startswith(".text.")) + 1
    end = next((k for k in range(start, len(lines)) if _END.match(lines[k])), len(lines))
    return start, end


def _count(text: str) -> int:
    lines = text.split("\n")
    start, end = _function(lines)
    return sum(1 for k in range(start, end) if _INSTR.match(lines[k]))


def _repeat(text: str, copies: int, keep: int) -> tuple[str, int]:
    """``text`` with its first function's body repeated ``copies`` times, ``keep`` instructions per copy."""
    lines = [_PAD.sub(r"   \1", ln) for ln in text.split("\n")]
    start, end = _function(lines)
    instr = [k for k in range(start, end) if _INSTR.match(lines[k])][:keep]
    body, tail = lines[start : instr[-1] + 1], lines[instr[-1] + 1 :]
    span = int(_INSTR.match(lines[instr[-1]]).group(2), 16) + 16  # type: ignore[union-attr]
    labels = 1 + max((int(x) for ln in lines for x in _LABEL.findall(ln)), default=0)
    # each body line as (text before the address, address, text after it, has a label)
    parts = []
    for ln in body:
        m = _INSTR.match(ln)
        if m:
            parts.append((m.group(1) + "/*", int(m.group(2), 16), "*/" + ln[m.end() :], ".L_x_" in ln))
        else:
            parts.append((ln, -1, "", ".L_x_" in ln))
    out = lines[:start]
    for c in range(copies):
        off = c * span
        for head, addr, rest, label in parts:
            ln = head if addr < 0 else f"{head}{addr + off:04x}{rest}"
            if c and label:
                ln = _LABEL.sub(lambda x: f".L_x_{int(x.group(1)) + c * labels}", ln)
            out.append(ln)
    out += tail  # the other functions, as they were
    return "\n".join(out), copies * len(instr)


def fa4_like_comparison(folder: Path, n: int) -> dict:
    """A comparison (dict) of one kernel with about ``n`` instructions per side, files in ``folder``."""
    sample = load_json(default_sample())
    kernel = next(k for k in sample["kernels"] if k["name"] == "FlashAttentionForwardSm100")
    new = copy.deepcopy(kernel)
    for s in ("a", "b"):
        src = Path(kernel[s]["files"]["dir"])
        plain, lrm = _gz_text(src / "sass.txt.gz"), _gz_text(src / "lrm.txt.gz")
        keep = min(_count(plain), _count(lrm))
        copies = max(1, -(-n // keep))
        kdir = folder / s / "000"
        kdir.mkdir(parents=True)
        count = 0
        for name, text in (("sass", plain), ("lrm", lrm)):
            big, count = _repeat(text, copies, keep)
            (kdir / f"{name}.txt.gz").write_bytes(gzip.compress(big.encode(), 1))
        shutil.copy(src / "res.txt.gz", kdir / "res.txt.gz")
        (kdir / "kernel.cubin").write_bytes(b"")  # never read: the texts above are there
        m = new[s]
        m["files"] = {"dir": str(kdir), "lineinfo_dir": None}
        m["instructions"] = count
        m["spill_sites"] = []
        m.pop("pressure", None)
    c = copy.deepcopy({k: v for k, v in sample.items() if k != "kernels"})
    c["kernels"] = [new]
    c["crosscheck"] = None
    return c
