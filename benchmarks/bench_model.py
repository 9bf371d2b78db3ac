"""Load time of a comparison with each candidate for the typed model (issue 14).

    .venv/bin/python benchmarks/bench_model.py [--repeat 15]

Times reading the bundled sample's ``comparison.json`` (310 kB, 4 kernels) and a synthetic
comparison with 10x its kernels, from bytes to typed objects, with:

* ``json.loads`` (today: a plain dict, no types);
* ``msgspec`` Structs (``msgspec.json.decode(data, type=...)``), and msgspec decoding to a dict;
* pydantic v2 models (``model_validate_json``, extra fields allowed);
* stdlib dataclasses built from ``json.loads`` output by hand;
* ``cutediff_tui.core.model.load_comparison`` (what cutediff does now).

Each candidate types the same fields: sides (label, dsl, cuda, pins, versions, error), kernels
(name, both sides' resource figures, opcodes, instruction classes, spill sites, remarks) and the
alignment summary. Medians of ``--repeat`` runs, in milliseconds.
"""

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cutediff_tui.samples import bundled_sample_dir

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = bundled_sample_dir() / "comparison.json"

# ---------------------------------------------------------------- msgspec


def msgspec_types():
    import msgspec

    class SpillSite(msgspec.Struct):
        opcode: str | None = None
        kind: str | None = None
        width_bytes: int | None = None
        file: str | None = None
        line: int | None = None

    class Remark(msgspec.Struct):
        message: str | None = None
        file: str | None = None
        line: int | None = None
        detail: str | None = None

    class KernelSide(msgspec.Struct):
        symbol: str | None = None
        registers: int | None = None
        stack_bytes: int | None = None
        shared_bytes: int | None = None
        local_bytes: int | None = None
        spill_store_bytes: int | None = None
        spill_load_bytes: int | None = None
        instructions: int | None = None
        stl: int | None = None
        ldl: int | None = None
        compile_seconds: float | None = None
        opcodes: dict[str, int] = {}
        instruction_classes: dict[str, int] = {}
        spill_sites: list[SpillSite] = []
        remarks: list[Remark] = []

    class Alignment(msgspec.Struct):
        matched: int | None = None
        total: int | None = None
        match_pct: float | None = None

    class Kernel(msgspec.Struct):
        name: str
        a: KernelSide | None = None
        b: KernelSide | None = None
        alignment: Alignment | None = None

    class SideInfo(msgspec.Struct):
        label: str | None = None
        dsl: str | None = None
        cuda: str | int | None = None
        pins: list[str] = []
        versions: dict[str, str] = {}
        error: str | None = None

    class Comparison(msgspec.Struct):
        schema: str
        sides: dict[str, SideInfo]
        kernels: list[Kernel]
        arch: str | None = None

    return Comparison


# ---------------------------------------------------------------- pydantic


def pydantic_types():
    from pydantic import BaseModel, ConfigDict

    class Base(BaseModel):
        model_config = ConfigDict(extra="allow")

    class SpillSite(Base):
        opcode: str | None = None
        kind: str | None = None
        width_bytes: int | None = None
        file: str | None = None
        line: int | None = None

    class Remark(Base):
        message: str | None = None
        file: str | None = None
        line: int | None = None
        detail: str | None = None

    class KernelSide(Base):
        symbol: str | None = None
        registers: int | None = None
        stack_bytes: int | None = None
        shared_bytes: int | None = None
        local_bytes: int | None = None
        spill_store_bytes: int | None = None
        spill_load_bytes: int | None = None
        instructions: int | None = None
        stl: int | None = None
        ldl: int | None = None
        compile_seconds: float | None = None
        opcodes: dict[str, int] = {}
        instruction_classes: dict[str, int] = {}
        spill_sites: list[SpillSite] = []
        remarks: list[Remark] = []

    class Alignment(Base):
        matched: int | None = None
        total: int | None = None
        match_pct: float | None = None

    class Kernel(Base):
        name: str
        a: KernelSide | None = None
        b: KernelSide | None = None
        alignment: Alignment | None = None

    class SideInfo(Base):
        label: str | None = None
        dsl: str | None = None
        cuda: str | int | None = None
        pins: list[str] = []
        versions: dict[str, str] = {}
        error: str | None = None

    class Comparison(Base):
        schema_: str = ""
        sides: dict[str, SideInfo]
        kernels: list[Kernel]
        arch: str | None = None

    return Comparison


# ---------------------------------------------------------------- dataclasses


@dataclass
class DSpillSite:
    opcode: str | None = None
    kind: str | None = None
    width_bytes: int | None = None
    file: str | None = None
    line: int | None = None


@dataclass
class DKernelSide:
    symbol: str | None = None
    registers: int | None = None
    stack_bytes: int | None = None
    shared_bytes: int | None = None
    local_bytes: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    instructions: int | None = None
    stl: int | None = None
    ldl: int | None = None
    compile_seconds: float | None = None
    opcodes: dict = field(default_factory=dict)
    instruction_classes: dict = field(default_factory=dict)
    spill_sites: list = field(default_factory=list)
    remarks: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)


_SIDE_FIELDS = frozenset(DKernelSide.__dataclass_fields__) - {"extra", "spill_sites"}
_SITE_FIELDS = frozenset(DSpillSite.__dataclass_fields__)


def d_side(m: dict | None) -> DKernelSide | None:
    if m is None:
        return None
    known = {k: v for k, v in m.items() if k in _SIDE_FIELDS}
    extra = {k: v for k, v in m.items() if k not in _SIDE_FIELDS and k != "spill_sites"}
    sites = [DSpillSite(**{k: v for k, v in s.items() if k in _SITE_FIELDS}) for s in m.get("spill_sites") or []]
    return DKernelSide(**known, spill_sites=sites, extra=extra)


def dataclass_load(data: bytes) -> Any:
    raw = json.loads(data)
    return [(k["name"], d_side(k.get("a")), d_side(k.get("b"))) for k in raw["kernels"]], raw


# ---------------------------------------------------------------- harness


def synthetic(times: int) -> bytes:
    data = json.loads(SAMPLE.read_bytes())
    kernels = data["kernels"]
    data["kernels"] = [dict(k, name=f"{k['name']}_{i}") for i in range(times) for k in kernels]
    return json.dumps(data, indent=1).encode()


def timed(fn, data: bytes, repeat: int) -> tuple[float, float]:
    """``(median, min)`` in ms; on a shared machine the minimum is the steadier figure."""
    fn(data)  # warm-up: imports, type compilation
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(data)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs) * 1000, min(runs) * 1000


def candidates() -> dict[str, Any]:
    import msgspec

    from cutediff_tui.core.model import load_comparison_bytes

    mtype = msgspec_types()
    ptype = pydantic_types()
    dec = msgspec.json.Decoder(mtype)
    raw = msgspec.json.Decoder()
    return {
        "json.loads (dict, today)": json.loads,
        "msgspec -> dict": raw.decode,
        "msgspec Structs": dec.decode,
        "msgspec dict + convert (lossless)": lambda b: msgspec.convert(raw.decode(b), mtype),
        "pydantic v2 (extra=allow)": ptype.model_validate_json,
        "dataclasses from json.loads": dataclass_load,
        "cutediff.core.model (chosen)": load_comparison_bytes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    inputs = {"sample (310 kB)": SAMPLE.read_bytes(), "10x kernels": synthetic(10)}
    rows = []
    for name, fn in candidates().items():
        row = {"candidate": name}
        for label, data in inputs.items():
            row[label] = [round(x, 2) for x in timed(fn, data, args.repeat)]
        rows.append(row)
    print(f"| candidate (median / min of {args.repeat}) | {' | '.join(inputs)} |")
    print("|---|" + "---:|" * len(inputs))
    for row in rows:
        print(f"| {row['candidate']} | " + " | ".join(f"{row[k][0]:.2f} / {row[k][1]:.2f} ms" for k in inputs) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
