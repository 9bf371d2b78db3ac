"""Results of a cross-check: both PTXs re-assembled by several ptxas versions."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["CrosscheckScreen", "crosscheck_lines"]

_KEYS = ("registers", "stack_bytes", "spill_store_bytes", "spill_load_bytes")


_COLUMNS = (
    ("side", "side", 12, "<"),
    ("ptxas_version", "ptxas", 7, ">"),
    ("ptx_version", "PTX", 5, ">"),
    ("registers", "regs", 6, ">"),
    ("stack", "stack", 7, ">"),
    ("spill_stores", "spill st", 9, ">"),
    ("spill_loads", "spill ld", 9, ">"),
)


def _matrix_row(r: dict) -> Content:
    parts: list = []
    for key, _title, width, align in _COLUMNS:
        v = r.get(key)
        text = f"{'–' if v is None else v:{align}{width}}"
        style = ""
        if key in ("stack", "spill_stores", "spill_loads") and isinstance(v, int) and v > 0:
            style = "bold $regression"
        elif key == "side":
            style = "bold $side-a" if str(v).upper().startswith("A") else "bold $side-b"
        parts.append((text + "  ", style))
    note = r.get("error") or (f"PTX rewritten from {r['rewritten_from']}" if r.get("rewritten_from") else "")
    if note:
        parts.append((note, "$text-error" if r.get("error") else "$text-muted"))
    return Content.assemble(*parts)


def crosscheck_lines(result: dict) -> list[Content]:
    """One block per kernel: a row per (side, ptxas version) with the resources ptxas reported."""
    out: list[Content] = []
    for kernel, data in (result or {}).items():
        out.append(Content.styled(kernel, "bold $accent"))
        rows = data.get("rows") if isinstance(data, dict) else None
        matrix = data.get("matrix") if isinstance(data, dict) else None
        if isinstance(matrix, list) and matrix and isinstance(matrix[0], dict):
            out.append(Content.styled("  ".join(f"{t:{a}{w}}" for _k, t, w, a in _COLUMNS), "bold $text-muted"))
            out.extend(_matrix_row(r) for r in matrix)
        elif isinstance(rows, list) and rows and isinstance(rows[0], dict):
            for r in rows:
                out.append(Content(_fmt_row(r)))
        else:
            text = json.dumps(data, indent=1, default=str)
            out.extend(Content(line) for line in text.splitlines()[:200])
        out.append(Content(""))
    if not out:
        out.append(Content.styled("The cross-check returned nothing.", "$text-muted"))
    return out


def _fmt_row(r: dict) -> str:
    bits = []
    for k, v in r.items():
        if isinstance(v, dict):
            inner = ", ".join(f"{kk}={vv}" for kk, vv in v.items() if kk in _KEYS or not isinstance(vv, (dict, list)))
            bits.append(f"{k}: {inner}")
        else:
            bits.append(f"{k}={v}")
    return "  ".join(bits)


class CrosscheckScreen(ModalScreen[None]):
    """Shows the cross-check matrix.

    | key        | action |
    |------------|--------|
    | escape, q  | close  |
    """

    DEFAULT_CSS = """
    CrosscheckScreen {
        align: center middle;
        & > #crosscheck {
            width: 100; max-width: 100%; height: auto; max-height: 100%;
            background: $surface; border: round $primary; padding: 0 1;
        }
        & VerticalScroll { height: auto; max-height: 100%; }
    }
    """

    BINDINGS = [Binding("escape,q,x", "close", "Close", id="crosscheck.close", tooltip="Close the cross-check results")]

    def __init__(self, result: dict) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        with Vertical(id="crosscheck") as box:
            box.border_title = "cross-check: the same PTX through other ptxas versions"
            with VerticalScroll():
                yield Static(Content("\n").join(crosscheck_lines(self.result)))

    def action_close(self) -> None:
        self.dismiss(None)
