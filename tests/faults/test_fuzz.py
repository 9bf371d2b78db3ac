"""Property-based fuzzing (hypothesis) of what cutediff reads from files it did not make.

Mutated comparison JSON goes through the loader and the CI gate; mutated SASS and PTX through
their parsers; mutated cubin bytes through the ELF readers and ``check_cubin``. Each case must end
in a result or a ``CutediffError`` whose sentence is one line — never another exception ("internal
error"), never a hang (each case is stopped after :data:`CASE_SECONDS` by SIGALRM) and never a
write outside the test's temporary folder (the working directory, HOME and the cache point into it).

Two modes, so that a submission's result never depends on luck:

- **Reproducible** (the default, and what CI runs): every target draws the same
  :data:`CI_EXAMPLES` cases on every run (Hypothesis ``derandomize``), after the inputs that once
  broke cutediff (the ``@example`` lists beside each target).
- **Exploring** (``bash .ci/fuzz SEEDS [EXAMPLES]``, i.e. ``CUTEDIFF_FUZZ_SEEDS``): each target
  runs once per random seed, :data:`EXPLORE_EXAMPLES` cases a seed; a failure names its seed in
  the test id, and ``CUTEDIFF_FUZZ_SEED_BASE`` replays it. What breaks is fixed and its input
  added to the target's examples.

The number of cases tried is printed (``pytest -s``) and kept in docs/reliability.md.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import random
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st

from cutediff_tui.core.errors import CutediffError

from .helpers import CUBIN_480, PTX_480, SAMPLE, is_sentence

CASE_SECONDS = 5
#: Cases per target in the reproducible mode (CI): the same ones on every run.
CI_EXAMPLES = 400
#: Cases per seed and target when exploring (``CUTEDIFF_FUZZ_EXAMPLES`` overrides).
EXPLORE_EXAMPLES = int(os.environ.get("CUTEDIFF_FUZZ_EXAMPLES") or 200)
#: Random seeds per target when exploring; 0: the reproducible mode.
EXPLORE_SEEDS = int(os.environ.get("CUTEDIFF_FUZZ_SEEDS") or 0)
_BASE_SEED = int(os.environ.get("CUTEDIFF_FUZZ_SEED_BASE") or random.SystemRandom().randrange(2**32))
SEEDS: list[int | None] = [_BASE_SEED + i for i in range(EXPLORE_SEEDS)] or [None]
TRIED: dict[str, int] = {}


@pytest.fixture(params=SEEDS, ids=lambda s: "derandomized" if s is None else f"seed{s}")
def fuzz(request):
    """How a target draws its cases: a decorator for its ``@given`` function (see the module doc)."""
    seed_value = request.param
    chosen = settings(
        max_examples=CI_EXAMPLES if seed_value is None else EXPLORE_EXAMPLES,
        derandomize=seed_value is None,
        deadline=None,
        database=None,
        # explicit examples first, then new cases; no shrinking: a failure shows its input as it came
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=list(HealthCheck),
    )

    def apply(test):
        test = chosen(test)
        return seed(seed_value)(test) if seed_value is not None else test

    return apply


class _Hang(Exception):
    pass


@contextmanager
def _time_limit(seconds: float):
    def stop(signum, frame):
        raise _Hang(f"a case ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _drive(name: str, fuzz, strategy, examples: list, run) -> int:
    """``run(value)`` on each explicit example, then on each drawn case; only a result or a
    one-sentence CutediffError may come out. Returns the number of cases run (kept in TRIED)."""
    tried = [0]

    def case(value) -> None:
        tried[0] += 1
        with _time_limit(CASE_SECONDS):
            try:
                run(value)
            except CutediffError as exc:
                assert is_sentence(exc.sentence().replace("\n", " ")[:899] + "."), exc.sentence()[:300]

    for value in reversed(examples):
        case = example(value)(case)
    fuzz(given(strategy)(case))()
    TRIED[name] = TRIED.get(name, 0) + tried[0]
    print(f"fuzz {name}: {tried[0]} cases ({len(examples)} kept examples)")
    return tried[0]


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """cwd, HOME, the cache and the config all inside ``tmp_path``; yields the tree outside to watch."""
    for var, sub in (("HOME", "home"), ("CUTEDIFF_CACHE_DIR", "cache"), ("CUTEDIFF_CONFIG_DIR", "config")):
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(var, str(tmp_path / sub))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    root = Path(__file__).resolve().parents[2]

    def outside() -> tuple[list[str], list[str]]:
        # Hidden entries are left out: tools running beside the test (mypy, ruff, hypothesis, the
        # session's compile cache) make them, and comparing them made this test fail by timing.
        return sorted(n for n in os.listdir(root) if not n.startswith(".")), sorted(os.listdir(root / "samples"))

    before = outside()
    yield tmp_path
    assert outside() == before


# ---------------------------------------------------------------- comparison JSON

_BASE = json.loads((SAMPLE / "comparison.json").read_text())
_BASE["kernels"] = _BASE["kernels"][:2]
for _k in _BASE["kernels"]:
    for _s in ("a", "b"):
        _k[_s]["spill_sites"] = _k[_s]["spill_sites"][:3]
        _k[_s]["pressure"] = {}

_HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(list("abc/._-@[]\\\"' ") + ["\x1b", "\x07", "\x9b", "\r", "\n", "\x00", "\u202e"]),
    max_size=40,
)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_HOSTILE_TEXT, inner, max_size=3),
    max_leaves=6,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, (*prefix, i))


_ALL_PATHS = [p for p in _paths(_BASE) if p]


@st.composite
def mutated_comparison(draw) -> str:
    return draw(mutated_json(_BASE, _ALL_PATHS))


@st.composite
def mutated_json(draw, base: dict, paths: list[tuple]) -> str:
    """``base`` with 1-4 fields replaced by hostile values or removed, sometimes byte-damaged."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        holder = data
        try:
            for key in path[:-1]:
                holder = holder[key]
            if draw(st.booleans()) and isinstance(holder, dict):
                holder.pop(path[-1], None)
            else:
                holder[path[-1]] = draw(_VALUES)
        except (KeyError, IndexError, TypeError):
            continue
    text = json.dumps(data, allow_nan=True)
    if draw(st.integers(0, 4)) == 0:  # byte-level damage too
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(st.sampled_from(["", "]", "{", '"', "NaN", "1e400", "[" * 50])) + text[pos + 1 :]
    return text


#: Comparison JSON that once broke cutediff (found by exploring; see docs/reliability.md).
COMPARISON_EXAMPLES: list[str] = []


def test_fuzz_comparison_loader_and_gate(sandbox, fuzz):
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.core.report import Limits, check_comparison

    target = sandbox / "work" / "comparison.json"

    def run(text: str) -> None:
        target.write_text(text)
        c = load_json(target)
        check_comparison(c, Limits(max_spill_bytes=0, max_register_delta=0, max_stack_delta=0))

    assert _drive("comparison JSON", fuzz, mutated_comparison(), COMPARISON_EXAMPLES, run) >= 50


# ---------------------------------------------------------------- sweep results (`cutediff open`)

_SWEEP = json.loads(
    (Path(__file__).resolve().parents[2] / "samples" / "sweeps" / "fa4-fwd-sm100a-sm103a.json").read_text()
)
_SWEEP["cells"] = _SWEEP["cells"][:3]
for _c in _SWEEP["cells"]:
    for _k in _c.get("kernels", []):
        _k["figures"] = {f: _k["figures"][f] for f in ("registers", "spill_store_bytes", "fp32") if f in _k["figures"]}
_SWEEP_PATHS = [p for p in _paths(_SWEEP) if p]


def _sweep_with(path: tuple, value) -> str:
    data = copy.deepcopy(_SWEEP)
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return json.dumps(data)


_FIGURE = ("cells", 0, "kernels", 0, "figures", "spill_store_bytes")
#: Sweep results that once broke cutediff (found by exploring; see docs/reliability.md): a figure
#: that is a string reached float() (ValueError), a recipe that is a bare string reached .get()
#: (AttributeError).
SWEEP_EXAMPLES: list[str] = [
    _sweep_with(_FIGURE, "-\x00\n\x00"),
    _sweep_with(_FIGURE, " "),
    _sweep_with(_FIGURE, "12"),
    _sweep_with(("recipe",), "\r"),
    _sweep_with(("recipe",), "fa4-fwd"),
]


def test_fuzz_sweep_results(sandbox, fuzz):
    """What `cutediff open` does with a sweep before the app starts, and the HTML heatmap."""
    from cutediff_tui.cli.tui import sweep_or_bisect
    from cutediff_tui.core.report.sweep_html import sweep_html
    from cutediff_tui.core.sweep import figures_in, grid

    target = sandbox / "work" / "sweep.json"
    target.write_text(json.dumps(_SWEEP))
    assert sweep_or_bisect(target) is not None  # the unmutated sweep opens: the cases are not all refused
    drawn = [0]

    def run(text: str) -> None:
        target.write_text(text)
        doc = sweep_or_bisect(target)
        if doc is not None and doc.get("schema") == "cutediff.sweep/1":
            grid(doc)
            figures_in(doc)
            sweep_html(doc)
            drawn[0] += 1

    tried = _drive("sweep JSON", fuzz, mutated_json(_SWEEP, _SWEEP_PATHS), SWEEP_EXAMPLES, run)
    print(f"fuzz sweep JSON: {drawn[0]} drawn as a heatmap")
    assert tried >= 50 and drawn[0] >= tried // 5


# ---------------------------------------------------------------- SASS and PTX

_SASS = gzip.decompress((SAMPLE / "a" / "000" / "sass.txt.gz").read_bytes()).decode()
_SASS_LINES = _SASS.splitlines()[:300]
_PTX_LINES = PTX_480.read_text(errors="replace").splitlines()[:300]


@st.composite
def mutated_lines(draw, lines: list[str]) -> str:
    out = list(lines)
    for _ in range(draw(st.integers(1, 8))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "garble", "inject", "cut"]))
        if op == "delete":
            del out[i]
        elif op == "duplicate":
            out.insert(i, out[i])
        elif op == "swap":
            j = draw(st.integers(0, len(out) - 1))
            out[i], out[j] = out[j], out[i]
        elif op == "garble":
            line = out[i]
            p = draw(st.integers(0, len(line)))
            out[i] = line[:p] + draw(_HOSTILE_TEXT | st.text(max_size=10)) + line[p + 1 :]
        elif op == "inject":
            out.insert(i, draw(st.text(max_size=60)))
        else:
            out[i] = out[i][: draw(st.integers(0, len(out[i])))]
    return "\n".join(out)


#: SASS and PTX listings that once broke cutediff (found by exploring; see docs/reliability.md).
LISTING_EXAMPLES: dict[str, list[str]] = {"SASS": [], "PTX": []}


@pytest.mark.parametrize("language", ["SASS", "PTX"])
def test_fuzz_sass_and_ptx_parsers(sandbox, fuzz, language):
    from cutediff_tui.core.analysis.ptx import parse_ptx
    from cutediff_tui.core.analysis.sass import parse_sass

    lines, parse = (_SASS_LINES, parse_sass) if language == "SASS" else (_PTX_LINES, parse_ptx)
    assert _drive(language, fuzz, mutated_lines(lines), LISTING_EXAMPLES[language], parse) >= 50


# ---------------------------------------------------------------- ELF bytes

_CUBIN = CUBIN_480.read_bytes()
_SHOFF = int.from_bytes(_CUBIN[0x28:0x30], "little")


@st.composite
def mutated_cubin(draw) -> bytes:
    data = bytearray(_CUBIN)
    for _ in range(draw(st.integers(1, 6))):
        region = draw(st.sampled_from(["header", "sections", "anywhere"]))
        if region == "header":
            pos = draw(st.integers(0, 63))
        elif region == "sections":
            pos = draw(st.integers(_SHOFF, len(data) - 1))
        else:
            pos = draw(st.integers(0, len(data) - 1))
        width = draw(st.sampled_from([1, 2, 4, 8]))
        value = draw(st.integers(0, 2 ** (8 * width) - 1))
        data[pos : pos + width] = value.to_bytes(width, "little")[: len(data) - pos]
    if draw(st.integers(0, 5)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


#: Cubin bytes that once broke cutediff (found by exploring; see docs/reliability.md).
ELF_EXAMPLES: list[bytes] = []


def test_fuzz_elf_readers(sandbox, fuzz):
    from cutediff_tui.core.analysis.fingerprint import cubin_arch, cubin_sections, cubin_toolchain
    from cutediff_tui.core.analysis.tools import check_cubin

    path = sandbox / "work" / "kernel.cubin"

    def run(data: bytes) -> None:
        for reader in (cubin_sections, cubin_arch, cubin_toolchain):
            try:
                reader(data)
            except CutediffError:
                pass
        path.write_bytes(data)
        check_cubin(path)

    assert _drive("ELF", fuzz, mutated_cubin(), ELF_EXAMPLES, run) >= 50
