"""From two sides' builds to one comparison: disassembly (cached), metrics, spill sites, alignment.

Per kernel and side, :func:`side_kernel` returns plain data; besides resources, opcodes,
classes, spill sites and pressure it holds these analysis facts (each the ``to_json()`` of a
typed result, so the figure registry can read them):

* ``memory``: SASS memory operations by address space, direction and width
  (:class:`.analysis.memory.MemoryOps`: ``by_space`` counts/bytes, ``ops`` rows such as
  ``STG.E.128``); ``local_loads``/``local_stores`` and ``local_load_bytes``/``local_store_bytes``
  count every local access (``LDL``/``STL`` and generic ``LD``/``ST`` to the stack).
* ``budgets``: ``USETMAXREG`` register budgets with warp roles and launch bounds
  (:class:`.analysis.budgets.RegisterBudgets`; ``display`` is ``"176/88"``).
* ``ptx``: ``local_bytes`` (the ``.local`` depot), ``opcodes`` (full dotted opcodes, type and
  width kept), ``reg_decls`` (``.reg`` counts per type), ``memory`` and ``budgets`` (PTX forms
  of the two above, ``setmaxnreg`` and ``.maxnreg``/``.reqntid``/``.minnctapersm``).

Per kernel present on both sides, :func:`pair_analysis` adds ``ptx_opcode_ranking``: the 20
PTX opcodes whose count changed most (:func:`.analysis.ptx_facts.opcode_deltas`).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .analysis import align as align_mod
from .analysis import budgets, classes, memory, pressure, ptx_facts, spills, tools
from .analysis.fingerprint import cubin_toolchain, ptx_toolchain
from .analysis.line_table import LineTable, LineTableUnusable, lineinfo_listing, read_line_table
from .analysis.ptx import parse_ptx
from .analysis.resource_usage import parse_resource_usage
from .analysis.sass import SassListing, merge_sass, parse_sass
from .errors import CutediffError
from .events import CrosscheckStarted, Progress, SideAnalysed
from .events import noop as _noop
from .files import read_bounded, read_text
from .locking import atomic_write
from .model.types import SIDES
from .naming import kernel_class, unique_names
from .paths import cache_dir
from .remarks import parse_remarks, short_path
from .trace import stamp

if TYPE_CHECKING:
    from .build import Build
    from .options import CompareOptions, SideOutcome

ANALYSIS_VERSION = 1
ERROR_LOG_LINES = 200
"""The last lines of a failed side's log kept in the comparison (``sides.X.error_log``)."""


def analysis_digest() -> str:
    """Changes whenever the analysis code does, so cached comparisons never go stale."""
    import hashlib

    here = Path(__file__).resolve().parent
    h = hashlib.sha256(str(ANALYSIS_VERSION).encode())
    for p in sorted(
        [
            here / "analysis_pipeline.py",
            here / "remarks.py",
            here / "naming.py",
            *(here / "analysis").glob("*.py"),
            here.parent / "data" / "opcode_classes.toml",
        ]
    ):
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- texts (cached disassembly)


def text_cache_dir(build_key: str, index: str) -> Path:
    return cache_dir() / "disasm" / build_key / index


def _managed(cache: Path | None) -> bool:
    """Whether ``cache`` is an entry of the user cache's ``disasm/`` (it then has a hash record)."""
    if cache is None:
        return False
    try:
        cache.resolve().relative_to((cache_dir() / "disasm").resolve())
    except (ValueError, OSError):
        return False
    return True


def kernel_texts(
    cubin: Path,
    cache: Path | None,
    *,
    line_info: bool = False,
    live: bool = False,
    repairs: list[str] | None = None,
    plain: bool = True,
    from_table: bool = False,
) -> dict[str, str]:
    """nvdisasm/cuobjdump output for one cubin, read from ``cache`` when there (``plain``: the
    listing without line info too; a line-info build that stands alone needs only its ``-g`` one,
    or, ``from_table``, none: its source lines come from the cubin's line table and its listing
    from ``-lrm count``, and the ``-g`` one is made only when nvdisasm refuses ``-lrm``).

    An entry of the disassembly cache carries a hash record: one whose files changed on disk is
    removed and made again, and the sentence saying so is appended to ``repairs``."""
    wanted: dict[str, dict[str, Any] | None] = {"sass": dict()} if plain else {}
    if line_info and not plain and not (from_table and live):  # the listing first: its failure is the one to report
        wanted["sass_g"] = dict(line_info=True)
    if line_info and not plain and from_table and live:
        wanted["lrm"] = dict(live_ranges=True)
    wanted["res"] = None
    if line_info and plain:
        wanted["sass_g"] = dict(line_info=True)
    if live:
        wanted["lrm"] = dict(live_ranges=True)
    managed = _managed(cache)
    if not managed or cache is None:
        return _kernel_texts(cubin, cache, wanted, repairs, managed=False)
    from .locking import file_lock

    cache.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(cache.parent / f".{cache.name}.lock"):  # both sides of `diff X X` share an entry
        return _kernel_texts(cubin, cache, wanted, repairs, managed=True)


def _kernel_texts(
    cubin: Path, cache: Path | None, wanted: dict, repairs: list[str] | None, *, managed: bool
) -> dict[str, str]:
    if managed and cache is not None and cache.is_dir():
        from .cache_admin import clean_stale_temps, verify_record

        clean_stale_temps(cache)
        problem = verify_record(cache) if any(cache.iterdir()) else None
        if problem is not None:
            note = f"the disassembly cache entry {cache.parent.name[:12]}/{cache.name} was changed on disk ({problem}); rebuilt it"
            if repairs is not None:
                repairs.append(note)
            shutil.rmtree(cache, ignore_errors=True)
    out: dict[str, str] = {}
    missing: list[str] = []
    for name in wanted:
        path = cache / f"{name}.txt" if cache else None
        if path is not None and path.is_file():
            out[name] = read_bounded(path).decode(errors="replace")
            continue
        gz = cache / f"{name}.txt.gz" if cache else None
        if gz is not None and gz.is_file():
            out[name] = read_bounded(gz).decode(errors="replace")
            continue
        missing.append(name)
    shared = _shared_entries(cubin, missing) if managed and missing else {}
    made: dict[str, str] = {}
    for entry, names in _by_entry(shared, missing):
        made.update(_read_shared(entry, names))
    out.update(made)
    ran: list[tuple[str, str]] = []
    for name, result in _run_tools(cubin, [(n, wanted[n]) for n in missing if n not in made]):
        if isinstance(result, CutediffError):
            listing = out.get("sass") or out.get("sass_g") or dict(ran).get("sass") or dict(ran).get("sass_g")
            if name == "lrm" and listing is None and not any(n in wanted for n in ("sass", "sass_g")):
                listing = _listing_instead(cubin, cache, out, ran)  # the lines come from the -g listing then
            if name != "lrm" or listing is None:
                raise result
            # nvdisasm reads some cubins (Triton's, DSL 4.3's) only in its "old format", and then
            # refuses data-flow analysis: keep the listing, without live-register counts
            out["lrm_failed"] = re.sub(r"\s+", " ", str(result).split(": ", 1)[-1])[:160].rstrip(". ")
            out[name] = listing
            continue
        ran.append((name, result))
    for entry, names in _by_entry(shared, [n for n, _ in ran]):
        _add_shared(entry, [(n, t) for n, t in ran if n in names])
    wrote = False
    for name, text in [*made.items(), *ran]:
        out[name] = text
        if cache is not None:
            atomic_write(cache / f"{name}.txt", text)
            wrote = True
    out = {**{name: out[name] for name in wanted}, **{k: v for k, v in out.items() if k not in wanted}}
    if managed and wrote and cache is not None:
        from .cache_admin import write_record

        write_record(cache)
    return out


def _listing_instead(cubin: Path, cache: Path | None, out: dict[str, str], ran: list[tuple[str, str]]) -> str:
    """The ``-g`` listing of a cubin whose ``-lrm`` listing was to be its only one, when nvdisasm
    refuses ``-lrm`` (its "old format" cubins: Triton's, DSL 4.3's); added to ``ran``."""
    gz = cache / "sass_g.txt.gz" if cache else None
    path = cache / "sass_g.txt" if cache else None
    for p in (path, gz):
        if p is not None and p.is_file():
            out["sass_g"] = read_bounded(p).decode(errors="replace")
            return out["sass_g"]
    ((_name, result),) = _run_tools(cubin, [("sass_g", dict(line_info=True))])
    if isinstance(result, CutediffError):
        raise result
    ran.append(("sass_g", result))
    return result


#: Texts that do not read a cubin's debug sections: shared by every cubin with its code digest.
_CODE_TEXTS = frozenset({"sass", "lrm", "res"})


def _shared_entries(cubin: Path, names: list[str]) -> dict[str, Path]:
    """Where each text of ``names`` may be shared, whichever build made it: the texts that do not
    read line info under the cubin's code digest (``disasm/code/DIGEST``: a comment saved under
    DSL 4.5, which writes the file's mtime into the line table, changes the cubin but not its
    code), the ``-g`` listing under the cubin's bytes (``disasm/cubin/SHA``). An edit that leaves
    a kernel's code alone (a comment, host code, the other side's source) then gets its texts
    without running the tools again."""
    import hashlib

    from .analysis.fingerprint import code_digest

    try:
        data = read_bounded(cubin)
    except (OSError, CutediffError):
        return {}
    by_bytes = cache_dir() / "disasm" / "cubin" / hashlib.sha256(data).hexdigest()[:32]
    by_code: Path | None = None
    if _CODE_TEXTS.intersection(names):
        try:
            tool_ids = []
            for tool in ("nvdisasm", "cuobjdump"):  # another tool release may write other texts
                st = tools.find_tool(tool).stat()
                tool_ids.append(f"{tool}:{st.st_size}:{st.st_mtime_ns}")
            digest = hashlib.sha256(f"{code_digest(data)}|{'|'.join(tool_ids)}".encode()).hexdigest()[:32]
            by_code = cache_dir() / "disasm" / "code" / digest
        except (OSError, CutediffError):
            by_code = None
    out = {}
    for name in names:
        entry = by_code if name in _CODE_TEXTS else by_bytes
        if entry is not None and not (entry.is_symlink() or entry.parent.is_symlink()):  # planted: not used
            out[name] = entry
    return out


def _by_entry(shared: dict[str, Path], names: list[str]) -> list[tuple[Path, list[str]]]:
    """``names`` grouped by their shared entry (names without one left out)."""
    groups: dict[Path, list[str]] = {}
    for name in names:
        if name in shared:
            groups.setdefault(shared[name], []).append(name)
    return list(groups.items())


def _read_shared(entry: Path | None, names: list[str]) -> dict[str, str]:
    """The texts among ``names`` that the shared entry holds, when its hash record vouches for
    them (a half-written or changed entry is a miss; the writer's lock sorts it out)."""
    from .cache_admin import verify_record

    if entry is None or not entry.is_dir() or verify_record(entry) is not None:
        return {}
    out = {}
    for name in names:
        path = entry / f"{name}.txt"
        if path.is_file():
            out[name] = read_bounded(path).decode(errors="replace")
    return out


def _add_shared(entry: Path, texts: list[tuple[str, str]]) -> None:
    """Add tool texts to the shared entry of their cubin (under its lock, with a new record)."""
    from .cache_admin import clean_stale_temps, verify_record, write_record
    from .locking import file_lock

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(entry.parent / f".{entry.name}.lock"):
            if entry.is_dir():
                clean_stale_temps(entry)
                if any(entry.iterdir()) and verify_record(entry) is not None:
                    shutil.rmtree(entry, ignore_errors=True)
            for name, text in texts:
                atomic_write(entry / f"{name}.txt", text)
            write_record(entry)
    except OSError:
        pass  # only a shortcut for later: the build's own entry holds the texts


def _run_tools(cubin: Path, todo: list[tuple[str, dict[str, Any] | None]]) -> list[tuple[str, str | CutediffError]]:
    """Run the tools of one cubin at once (each is a subprocess, mostly nvdisasm's own start-up:
    ~0.4 s of CPU even for a tiny cubin); each text, or the sentence of its tool's failure, comes
    back in ``todo``'s order (so the caller raises the first failure in that order)."""

    def one(name: str, kw: dict[str, Any] | None) -> str | CutediffError:
        try:
            return _run_tool_for(name, cubin, kw)
        except CutediffError as exc:
            return exc

    if len(todo) <= 1:
        return [(name, one(name, kw)) for name, kw in todo]
    with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="cutediff-tool") as pool:
        futures = [(name, pool.submit(one, name, kw)) for name, kw in todo]
        return [(name, fut.result()) for name, fut in futures]


def _run_tool_for(name: str, cubin: Path, kw: dict[str, Any] | None) -> str:
    stamp(f"tool: {name} started", cubin=str(cubin))
    try:
        return tools.resource_usage(cubin) if name == "res" else tools.disassemble(cubin, **(kw or {}))
    except tools.ToolFailed as exc:
        raise _tool_failure("cuobjdump" if name == "res" else "nvdisasm", cubin, exc) from None
    finally:
        stamp(f"tool: {name} done", cubin=str(cubin))


def _tool_failure(tool: str, cubin: Path, exc: CutediffError) -> CutediffError:
    """A tool that runs but cannot read the cubin is most often too old for its arch: say which
    tool (version, path) failed on which arch, and how to pick another one."""
    from .analysis.fingerprint import cubin_arch

    try:
        path, version = tools.find_tool(tool), tools.tool_version(tool)
    except CutediffError:
        path, version = None, "(version unknown)"
    try:
        arch = cubin_arch(Path(cubin).read_bytes())
    except (CutediffError, OSError):
        arch = "an unknown arch"
    why = re.sub(r"\s+", " ", str(exc).split(": ", 1)[-1]).strip().rstrip(".")
    homes = [h for v in ("CUDA_HOME", "CUDA_PATH") if (h := os.environ.get(v))]
    if path is not None and any(str(path).startswith(str(Path(h))) for h in homes):
        hint = (
            f"It may be older than {arch}: point CUDA_HOME at a newer CUDA, or unset CUDA_HOME to use the "
            f"nvidia-cuda-{tool} wheel."
        )
    else:
        hint = f"It may be older than {arch}: upgrade it (pip install -U nvidia-cuda-{tool}) or set CUDA_HOME to a newer CUDA."
    return CutediffError(
        f"{tool} {version} ({path}) could not read {Path(cubin).name}, a cubin for {arch} ({why}).", hint
    )


# ---------------------------------------------------------------- a line-info build standing alone


def usable_line_table(cubin: Path) -> LineTable | None:
    """The cubin's line table when it can stand in for ``nvdisasm -g`` (None: no line info, or a
    table not read here; the ``-g`` listing is made then)."""
    try:
        table = read_line_table(read_bounded(cubin))
    except LineTableUnusable as exc:
        stamp("analysis: line table not used", cubin=str(cubin), why=str(exc))
        return None
    except (OSError, CutediffError):
        return None  # the tools say what is wrong with the file
    return table if table is not None and table.has_rows else None


def standalone_listing(
    cubin: Path, cache: Path | None, repairs: list[str] | None = None
) -> tuple[SassListing, dict[str, str]]:
    """The listing of a line-info cubin that is its side's only build, with source lines and live
    registers, and the texts it came from (``res``, ``lrm``; ``sass_g`` when it was needed).

    One nvdisasm run (``-lrm count``) with the source lines read from the cubin's DWARF line table
    (:mod:`.analysis.line_table`); the ``-g`` listing is made, as before, only where the table is
    missing, not read here or disagrees with the listing, or nvdisasm refuses ``-lrm``."""
    table = usable_line_table(cubin)
    if table is not None:
        texts = kernel_texts(cubin, cache, line_info=True, live=True, plain=False, repairs=repairs, from_table=True)
        if "sass_g" not in texts:
            live = parse_sass(texts["lrm"])
            try:
                lines = lineinfo_listing(live, table)
            except LineTableUnusable as exc:
                stamp("analysis: line table not used", cubin=str(cubin), why=str(exc))
            else:
                return merge_sass(lines, lines, live), texts
    texts = kernel_texts(cubin, cache, line_info=True, live=True, plain=False, repairs=repairs)
    g = texts["sass_g"]
    return merge_sass(parse_sass(g), parse_sass(g), parse_sass(texts["lrm"])), texts


# ---------------------------------------------------------------- one kernel of one side


def _resources(res_text: str, symbol: str | None) -> dict[str, Any]:
    table = parse_resource_usage(res_text)
    if not table:
        return {}
    ru = table.get(symbol) if symbol else None
    if ru is None:
        ru = next(iter(table.values()))
    return {
        "registers": ru.registers,
        "stack_bytes": ru.stack,
        "shared_bytes": ru.shared,
        "local_bytes": ru.local,
    }


def _entry(listing: SassListing):
    entries = [f for f in listing.functions if getattr(f, "is_entry", False)] or listing.functions
    if not entries:
        raise CutediffError("The disassembly holds no function.", "The cubin may be empty or truncated.")
    return max(entries, key=lambda f: len(f.instrs))


def side_kernel(build: Build, kdir: Path, li_build: Build | None, li_kdir: Path | None, remarks: list) -> dict:
    """Metrics and listings of one compiled kernel of one side."""
    index = kdir.name
    repairs: list[str] = []
    compiles = {f"{c['index']:03d}": c for c in build.manifest.get("compiles", [])}
    c = compiles.get(index, {})
    function = c.get("function")  # one function of a cubin or listing that holds several
    sass_only = not (kdir / "kernel.cubin").is_file() and (kdir / "kernel.sass").is_file()
    if sass_only:  # SASS text given as a side: no cubin, so no resource table
        sass = (kdir / "kernel.sass").read_text(errors="replace")
        texts = {"sass": sass, "lrm": sass, "res": ""}
    alone = li_build is build and li_kdir == kdir and not sass_only  # the line-info build is the only one
    li_res = None
    if alone:
        listing, texts = standalone_listing(kdir / "kernel.cubin", text_cache_dir(build.key, index), repairs)
        li_res = texts["res"]
    else:
        if not sass_only:
            texts = kernel_texts(kdir / "kernel.cubin", text_cache_dir(build.key, index), live=True, repairs=repairs)
        plain = parse_sass(texts["sass"])
        live = parse_sass(texts["lrm"])
        li_listing = None
        if li_kdir is not None and li_build is not None and (li_kdir / "kernel.cubin").is_file():
            li_texts = kernel_texts(
                li_kdir / "kernel.cubin",
                text_cache_dir(li_build.key, index),
                line_info=True,
                repairs=repairs,
                plain=False,
            )
            li_listing = parse_sass(li_texts["sass_g"])
            li_res = li_texts["res"]
        listing = merge_sass(plain, li_listing, live)
    sources = shorten_paths(listing)
    func = next((f for f in listing.functions if f.name == function), None) if function else None
    func = func or _entry(listing)
    symbol = func.name
    metrics: dict[str, Any] = {"symbol": symbol, "sources": sources}
    if repairs:
        metrics["_repairs"] = repairs  # moved to the side's "repaired" list by analyze
    if texts.get("lrm_failed"):  # moved to the side's "notes" list by analyze
        metrics["_notes"] = [
            f"{symbol}: no register pressure, nvdisasm could not analyse its data flow ({texts['lrm_failed']})"
        ]
    metrics.update(_resources(texts["res"], symbol))
    store, load = spills.spill_bytes(func)
    metrics["spill_store_bytes"] = store
    metrics["spill_load_bytes"] = load
    metrics["spill_source"] = "SASS local-memory accesses" + (" (SpillRefill tags)" if listing.has_spill_tags else "")
    ops = classes.count_opcodes(func)
    metrics["opcodes"] = ops
    metrics["instruction_classes"] = classes.count_classes(func)
    metrics["instructions"] = len(func.instrs)
    metrics["stl"] = ops.get("STL", 0)
    metrics["ldl"] = ops.get("LDL", 0)
    sites = spills.spill_sites(func)
    metrics["spill_sites"] = [_plain(s) for s in sites]
    metrics["pressure"] = pressure_summary(func)
    metrics["line_info_mapped"] = bool(listing.merge and listing.merge.lineinfo in ("exact", "index"))
    ptx_text = read_text(kdir, "kernel.ptx")
    ptx_budgets = None
    if ptx_text is not None:
        mod = parse_ptx(ptx_text)
        entry = _ptx_entry(ptx_text, symbol)
        metrics["ptx"] = {
            "version": mod.version,
            "target": mod.target,
            "toolchain": ptx_toolchain(ptx_text),
            "instructions": len(entry.instrs) if entry else 0,
            "local_bytes": entry.local_bytes if entry else 0,
            "opcodes": classes.ptx_opcode_counts(entry) if entry else {},
        }
        if entry is not None:
            ptx_budgets = budgets.ptx_register_budgets(entry)
            metrics["ptx"]["reg_decls"] = ptx_facts.ptx_facts(entry).to_json()["reg_decls"]
            metrics["ptx"]["memory"] = memory.ptx_memory_ops(entry).to_json()
            metrics["ptx"]["budgets"] = ptx_budgets.to_json()
    mem = memory.sass_memory_ops(func)
    metrics["memory"] = mem.to_json()
    metrics["local_loads"], metrics["local_load_bytes"] = mem.total("local", "load")
    metrics["local_stores"], metrics["local_store_bytes"] = mem.total("local", "store")
    metrics["budgets"] = budgets.sass_register_budgets(func, ptx_budgets).to_json()
    metrics["cubin_toolchain"] = None if sass_only else cubin_toolchain((kdir / "kernel.cubin").read_bytes())
    if sass_only:
        metrics["spill_source"] += "; registers and stack unknown (SASS text, no cubin)"
    metrics["compile_seconds"] = c.get("seconds")
    metrics["callable"] = c.get("callable")
    mine = [r for r in remarks if r.kernel is None or r.kernel == symbol or symbol.startswith(r.kernel)]
    metrics["remarks"] = [r.to_json() for r in mine if r.category != "ptxas info"]
    metrics["ptxas_log"] = next((r.ptxas_output for r in mine if r.ptxas_output and r.kernel), "")
    metrics["ptxas"] = ptxas_figures(metrics["ptxas_log"])
    if li_res is not None:
        li_r = _resources(li_res, symbol)
        keys = ("registers", "stack_bytes", "shared_bytes")
        metrics["lineinfo"] = {"resources": li_r, "mapped": metrics["line_info_mapped"]}
        if li_build is not build:
            metrics["lineinfo"]["perturbed"] = any(li_r.get(k) != metrics.get(k) for k in keys)
        else:  # the line-info build was the only one: nothing to compare its figures with
            metrics["lineinfo"]["checked"] = False
    metrics["files"] = {
        "dir": str(kdir),
        "lineinfo_dir": str(li_kdir) if li_kdir else None,
    }
    return metrics


_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def ptxas_figures(log: str) -> dict:
    """Registers and spill bytes from the ptxas output the DSL printed (``remarks{ptx}``, DSL 4.7+)."""
    if not log:
        return {
            "captured": False,
            "why": "this DSL prints no ptxas output (remarks{ptx} needs DSL 4.7+); use --crosscheck",
        }
    out: dict[str, Any] = {"captured": True}
    m = _PTXAS_REGS.search(log)
    if m:
        out["registers"] = int(m.group(1))
    m = _PTXAS_SPILL.search(log)
    if m:
        out["stack_frame"], out["spill_stores"], out["spill_loads"] = (int(g) for g in m.groups())
    return out


def shorten_paths(listing: SassListing) -> dict[str, str]:
    """Make source paths environment-independent (``flash_attn/cute/x.py``); returns short → original
    for the files that exist on this machine."""
    found: dict[str, str] = {}
    cache: dict[str, str] = {}
    for f in listing.functions:
        for ins in f.instrs:
            if ins.file:
                short = cache.get(ins.file)
                if short is None:
                    short = cache[ins.file] = short_path(ins.file)
                    if Path(ins.file).is_file():
                        found[short] = ins.file
                ins.file = short
            if ins.inline_chain:
                ins.inline_chain = tuple((short_path(fl), ln) for fl, ln in ins.inline_chain)
    return found


def _plain(obj: Any) -> Any:
    """JSON fallback: dataclasses, paths, sets and objects with ``to_json``."""
    from dataclasses import asdict, is_dataclass

    if hasattr(obj, "to_json"):
        return obj.to_json()
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


# ---------------------------------------------------------------- the comparison


def disassemble_side(outcome: SideOutcome) -> None:
    """Run the tools of a freshly built side now, into the disassembly cache, exactly as
    :func:`side_kernel` will ask for them (``run_compare`` calls this as soon as the side is built,
    while the other side may still compile; the analysis then reads the texts). Only entries not
    made yet are touched, so a repair note is never taken from the analysis; failures are left
    for the analysis to report."""
    build, li = outcome.build, outcome.lineinfo_build
    if build is None or outcome.error or (build.from_cache and (li is None or li.from_cache)):
        return
    li_dirs = {p.name: p for p in li.kernels} if li else {}
    calls: list[tuple[Path, Path, dict[str, bool]]] = []
    for kdir in build.kernels:
        index = kdir.name
        if li is build:
            from_table = usable_line_table(kdir / "kernel.cubin") is not None
            calls.append(
                (
                    kdir,
                    text_cache_dir(build.key, index),
                    dict(line_info=True, live=True, plain=False, from_table=from_table),
                )
            )
            continue
        calls.append((kdir, text_cache_dir(build.key, index), dict(live=True)))
        li_kdir = li_dirs.get(index)
        if li is not None and li_kdir is not None:
            calls.append((li_kdir, text_cache_dir(li.key, index), dict(line_info=True, plain=False)))

    def one(call: tuple[Path, Path, dict[str, bool]]) -> None:
        kdir, cache, kw = call
        if not (kdir / "kernel.cubin").is_file() or cache.exists():
            return
        try:
            kernel_texts(
                kdir / "kernel.cubin",
                cache,
                line_info=kw.get("line_info", False),
                live=kw.get("live", False),
                plain=kw.get("plain", True),
                from_table=kw.get("from_table", False),
            )
        except CutediffError:
            pass  # side_kernel runs the tool again and reports the failure with its side

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cutediff-disasm") as pool:
        list(pool.map(one, calls))
    stamp("analysis: side disassembled")


def side_kernels(outcome: SideOutcome, progress: Progress, side: str) -> list[tuple[str, dict]]:
    build = outcome.build
    if build is None:
        return []
    li = outcome.lineinfo_build
    li_dirs = {p.name: p for p in li.kernels} if li else {}
    remarks = parse_remarks(build.log)
    if li is not None:
        remarks = remarks or parse_remarks(li.log)
    out = []
    for kdir in build.kernels:
        m = side_kernel(build, kdir, li, li_dirs.get(kdir.name), remarks)
        out.append((kernel_class(m["symbol"], m.get("callable")), m))
    names = unique_names([n for n, _ in out])
    stamp("analysis: side measured", side=side)
    progress(SideAnalysed(side, len(out)))  # type: ignore[arg-type]
    return [(n, m) for n, (_, m) in zip(names, out)]


def _delta(a: dict, b: dict) -> dict:
    keys = sorted(set(a) | set(b))
    return {k: [a.get(k, 0), b.get(k, 0), b.get(k, 0) - a.get(k, 0)] for k in keys}


def pair_analysis(a: dict, b: dict) -> dict:
    """Alignment, class deltas and spill-site changes for one kernel present on both sides."""
    la = load_listing(a)
    lb = load_listing(b)
    fa, fb = _entry(la), _entry(lb)
    al = sass_alignment(fa, fb)
    site_diff = spills.diff_spill_sites(spills.spill_sites(fa), spills.spill_sites(fb))
    ptx_al = None
    pa, pb = read_text(Path(a["files"]["dir"]), "kernel.ptx"), read_text(Path(b["files"]["dir"]), "kernel.ptx")
    if pa and pb:
        ea, eb = _ptx_entry(pa, a.get("symbol")), _ptx_entry(pb, b.get("symbol"))
        if ea is not None and eb is not None:
            ptx_al = alignment_summary(align_mod.align_ptx(ea, eb), top=10)
    ptx_delta = {}
    if a.get("ptx") and b.get("ptx"):
        ptx_delta = _delta(a["ptx"].get("opcodes", {}), b["ptx"].get("opcodes", {}))
    return {
        "alignment": alignment_summary(al),
        "ptx_alignment": ptx_al,
        "lines": line_deltas(fa, fb),
        "deltas": {
            "opcodes": _delta(a.get("opcodes", {}), b.get("opcodes", {})),
            "instruction_classes": _delta(a.get("instruction_classes", {}), b.get("instruction_classes", {})),
            "ptx_opcodes": {k: v for k, v in ptx_delta.items() if v[2]},
        },
        "ptx_opcode_ranking": [
            d.to_json()
            for d in ptx_facts.opcode_deltas(
                (a.get("ptx") or {}).get("opcodes", {}), (b.get("ptx") or {}).get("opcodes", {}), top=20
            )
        ],
        "spill_sites_diff": _plain(site_diff),
    }


def line_deltas(fa, fb, top: int = 30) -> dict:
    """Per source line, A vs B: instruction classes and peak live GPRs (lines that changed most)."""
    ca, cb = classes.per_line_counts(fa), classes.per_line_counts(fb)
    pa, pb = pressure.per_line_max(fa, "gpr"), pressure.per_line_max(fb, "gpr")
    rows = []
    for key in set(ca) | set(cb) | set(pa) | set(pb):
        if not key or key[0] is None:
            continue
        xa, xb = ca.get(key, {}), cb.get(key, {})
        na, nb = sum(xa.values()), sum(xb.values())
        changed = {c: [xa.get(c, 0), xb.get(c, 0)] for c in set(xa) | set(xb) if xa.get(c, 0) != xb.get(c, 0)}
        rows.append(
            {
                "file": key[0],
                "line": key[1],
                "instructions": [na, nb],
                "classes": changed,
                "peak_gpr": [pa.get(key), pb.get(key)],
            }
        )
    by_count = sorted(rows, key=lambda r: -abs(r["instructions"][1] - r["instructions"][0]))[:top]
    by_gpr = sorted(
        (r for r in rows if r["peak_gpr"][0] is not None and r["peak_gpr"][1] is not None),
        key=lambda r: -(r["peak_gpr"][1] - r["peak_gpr"][0]),
    )[:top]
    return {"by_instruction_delta": by_count, "by_pressure_delta": by_gpr}


def _ptx_entry(text: str, symbol: str | None = None):
    mod = parse_ptx(text)
    named = [e for e in mod.entries if e.name == symbol]
    return named[0] if named else max(mod.entries, key=lambda e: len(e.instrs)) if mod.entries else None


def alignment_summary(al, top: int = 40) -> dict:
    """Match figures (``matched`` pairs of ``a_count`` A and ``b_count`` B instructions; ``total``
    is their sum) and the costliest hunks, as plain data."""
    hunks = sorted(al.hunks, key=lambda h: -h.cost)[:top]
    a_count = sum(1 for r in al.rows if r.a_index is not None)
    return {
        "matched": al.matched,
        "total": al.total,
        "a_count": a_count,
        "b_count": al.total - a_count,
        "match_pct": round(al.match_pct, 2),
        "rows": len(al.rows),
        "counts": dict(al.counts),
        "hunk_count": len(al.hunks),
        "hunks": [
            {
                "a_range": list(h.a_range),
                "b_range": list(h.b_range),
                "kind": h.kind,
                "cost": round(h.cost, 2),
                "summary": h.summary,
                "rows": list(h.rows),
            }
            for h in hunks
        ],
    }


def pressure_summary(func) -> dict:
    """Peak live registers per kind and a downsampled GPR/UGPR curve along the kernel."""
    pk = pressure.peaks(func)
    if not pk:
        return {}
    return {
        "peaks": {k: _plain(v) for k, v in pk.items()},
        "curve_gpr": pressure.pressure_curve(func, 200, "gpr"),
        "curve_ugpr": pressure.pressure_curve(func, 200, "ugpr"),
    }


#: The listings :func:`load_listing` gave last (the pair analysis, then the view the watch builds
#: for the screen, read the same two), keyed by their files' identity; at most a few, each a big
#: kernel's parsed listing.
_LISTINGS: OrderedDict[tuple, SassListing] = OrderedDict()
_ALIGNED: OrderedDict[tuple[int, int], tuple[Any, Any, Any]] = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_KEPT = 4
_MEMO_MAX_INSTRS = 100_000


def _listing_key(metrics: dict) -> tuple:
    """What a side kernel's listing is read from, as names, sizes, times and inodes of the files in
    its kernel folders and their disassembly caches: a text made again is another key."""
    files = metrics["files"]
    key: list = [metrics.get("symbol")]
    for d in [Path(files["dir"]), *([Path(files["lineinfo_dir"])] if files.get("lineinfo_dir") else [])]:
        for place in dict.fromkeys([d, cache_for(d)]):
            if place is None:
                continue
            try:
                with os.scandir(place) as it:
                    stats = [(e.name, e.stat()) for e in it if e.is_file()]
            except OSError:
                key.append((str(place), None))
                continue
            key.append((str(place), tuple(sorted((n, st.st_mtime_ns, st.st_size, st.st_ino) for n, st in stats))))
    return tuple(key)


def load_listing(metrics: dict) -> SassListing:
    """Re-read a side kernel's merged listing from the disassembly cache (or the cubin).

    The listing may be shared with the caller before (the last few are kept while their files
    stay as they are): read it, do not change it."""
    key = _listing_key(metrics)
    with _MEMO_LOCK:
        listing = _LISTINGS.get(key)
        if listing is not None:
            _LISTINGS.move_to_end(key)
            return listing
    listing = _load_listing(metrics)
    if sum(len(f.instrs) for f in listing.functions) > _MEMO_MAX_INSTRS:
        return listing  # a huge kernel's listing is not held on to (~0.6 KiB an instruction)
    key = _listing_key(metrics)  # the texts may have been made just now
    with _MEMO_LOCK:
        _LISTINGS[key] = listing
        while len(_LISTINGS) > _MEMO_KEPT:
            _LISTINGS.popitem(last=False)
    return listing


def sass_alignment(fa: Any, fb: Any) -> Any:
    """:func:`.analysis.align.align_sass` of two functions, reused for the same two objects (the
    pair analysis and the SASS view align the functions of the listings :func:`load_listing`
    shares)."""
    key = (id(fa), id(fb))
    with _MEMO_LOCK:
        hit = _ALIGNED.get(key)
        if hit is not None and hit[0] is fa and hit[1] is fb:
            return hit[2]
    al = align_mod.align_sass(fa, fb)
    with _MEMO_LOCK:
        _ALIGNED[key] = (fa, fb, al)  # the functions are kept with it: their ids stay theirs
        while len(_ALIGNED) > _MEMO_KEPT:
            _ALIGNED.popitem(last=False)
    return al


def _load_listing(metrics: dict) -> SassListing:
    files = metrics["files"]
    kdir = Path(files["dir"])
    if not (kdir / "kernel.cubin").is_file() and (kdir / "kernel.sass").is_file():
        sass = (kdir / "kernel.sass").read_text(errors="replace")
        texts = {"sass": sass, "lrm": sass}
    elif files.get("lineinfo_dir") == files["dir"]:  # the line-info build stood alone
        return _one_function(standalone_listing(kdir / "kernel.cubin", cache_for(kdir))[0], metrics)
    else:
        texts = kernel_texts(kdir / "kernel.cubin", cache_for(kdir), live=True)
    li = None
    if files.get("lineinfo_dir") and (Path(files["lineinfo_dir"]) / "kernel.cubin").is_file():
        ld = Path(files["lineinfo_dir"])
        li_texts = kernel_texts(ld / "kernel.cubin", cache_for(ld), line_info=True, plain=False)
        li = parse_sass(li_texts["sass_g"])
    return _one_function(merge_sass(parse_sass(texts["sass"]), li, parse_sass(texts["lrm"])), metrics)


def _one_function(listing: SassListing, metrics: dict) -> SassListing:
    shorten_paths(listing)
    symbol = metrics.get("symbol")
    if symbol and len(listing.functions) > 1 and any(f.name == symbol for f in listing.functions):
        listing.functions = [f for f in listing.functions if f.name == symbol]  # one kernel of several
    return listing


def _plain_listing_path(metrics: dict) -> Path | None:
    """Where the plain SASS text of a side kernel is on disk (None: nvdisasm has to make it)."""
    kdir = Path(metrics["files"]["dir"])
    if not (kdir / "kernel.cubin").is_file() and (kdir / "kernel.sass").is_file():
        return kdir / "kernel.sass"
    cache = cache_for(kdir)
    for name in ("sass.txt", "sass.txt.gz"):
        if cache is not None and (cache / name).is_file():
            return cache / name
    return None


def listing_head(metrics: dict, size: int = 1 << 20) -> bytes | None:
    """About the first ``size`` bytes of a side kernel's plain SASS text, cut after a whole line.

    Only that much is read and decompressed, so a huge listing's first screen comes at once. None
    when the text is not on disk yet (see :func:`listing_bytes`)."""
    import zlib

    from .files import refuse_irregular

    path = _plain_listing_path(metrics)
    if path is None:
        return None
    refuse_irregular(path)
    with open(path, "rb") as fh:
        if path.suffix == ".gz":
            d = zlib.decompressobj(wbits=31)
            head = b""
            while len(head) < size:
                chunk = fh.read(1 << 18)
                if not chunk:
                    break
                head += d.decompress(chunk, size - len(head))
        else:
            head = fh.read(size)
    if len(head) >= size:
        head = head[: head.rfind(b"\n") + 1]
    return head


def listing_bytes(metrics: dict) -> bytes:
    """The plain SASS text of a side kernel as bytes, for a first look before it is parsed.

    Read from ``kernel.sass`` or the disassembly cache without checking its hash record (the
    parsed view that follows reads it through :func:`load_listing`, which does); nvdisasm runs
    only when nothing is cached yet."""
    path = _plain_listing_path(metrics)
    if path is not None:
        return read_bounded(path)
    kdir = Path(metrics["files"]["dir"])
    return kernel_texts(kdir / "kernel.cubin", cache_for(kdir))["sass"].encode()


def cache_for(kdir: Path) -> Path | None:
    """Disassembly cache of a kernel folder: beside it in a saved result, else in the user cache."""
    if (kdir / "sass.txt.gz").is_file() or (kdir.parent.parent / "comparison.json").exists():
        return kdir
    build_key = kdir.parent.parent.name
    return text_cache_dir(build_key, kdir.name)


def analyze(outcomes: list[SideOutcome], opts: CompareOptions, progress: Progress = _noop) -> dict:
    from .model import SCHEMA
    from .options import host_info

    t0 = time.monotonic()
    todo = [(s, o) for s, o in zip(SIDES, outcomes) if o.measured is None]
    with ThreadPoolExecutor(max_workers=2) as pool:  # the sides not measured as soon as built
        futs = {s: pool.submit(measure_side, o, progress, s) for s, o in todo}
        per_side = [o.measured if o.measured is not None else futs[s].result() for s, o in zip(SIDES, outcomes)]
    sides: dict[str, dict] = {}
    for s, o, (_kernels, err) in zip(SIDES, outcomes, per_side):
        build = o.build
        sides[s] = {
            "label": o.label or o.spec.label,
            "dsl": o.spec.dsl,
            "cuda": o.spec.cuda,
            "pins": [str(p) for p in o.spec.pins],
            "env": o.env_name,
            "versions": o.versions,
            "params": o.params,
            "error": o.error or err,
            "build_key": build.key if build else None,
            "lineinfo_key": o.lineinfo_build.key if o.lineinfo_build else None,
            "from_cache": bool(build and build.from_cache),
            "compile_seconds": build.manifest.get("recipe_seconds") if build else None,
            "wall_seconds": round(o.seconds, 3),
            "env_seconds": round(o.env_seconds, 3),
            "shims": build.manifest.get("shims", []) if build else [],
            "notes": build.manifest.get("notes", []) if build else [],
            "repaired": [
                x
                for x in (
                    (build.repaired if build else None),
                    (o.lineinfo_build.repaired if o.lineinfo_build else None),
                )
                if x
            ],
            "packages": build.manifest.get("packages", {}) if build else {},
        }
        if o.error and o.error_log:  # the worker's output and the recipe's traceback, for --debug
            sides[s]["error_log"] = "\n".join(o.error_log.rstrip().splitlines()[-ERROR_LOG_LINES:])
        for _name, m in _kernels:
            for note in m.pop("_repairs", None) or []:
                progress(f"side {s.upper()}: {note}")
                sides[s]["repaired"].append(note)
            for note in m.pop("_notes", None) or []:
                progress(f"side {s.upper()}: {note}")
                sides[s]["notes"] = [*sides[s]["notes"], note]
    fuzzy = pair_by_hashless(per_side[0][0], per_side[1][0])
    per_side = [per_side[0], ([(fuzzy.get(n, (n,))[0], m) for n, m in per_side[1][0]], per_side[1][1])]
    names_a = [n for n, _ in per_side[0][0]]
    names_b = [n for n, _ in per_side[1][0]]
    order = names_a + [n for n in names_b if n not in names_a]
    ma = dict(per_side[0][0])
    mb = dict(per_side[1][0])
    kernels = []
    for name in order:
        a, b = ma.get(name), mb.get(name)
        entry: dict[str, Any] = {
            "name": name,
            "symbol": {"a": a and a["symbol"], "b": b and b["symbol"]},
            "a": a,
            "b": b,
        }
        renamed = next((v for v in fuzzy.values() if v[0] == name), None)
        if renamed is not None and a and b:
            entry["paired_by"] = f"{a['symbol']} (side A) and {b['symbol']} (side B)"
            entry["name_b"] = renamed[1]
        if a and b:
            try:
                entry.update(pair_analysis(a, b))
            except CutediffError as exc:
                entry["pair_error"] = exc.sentence()
            stamp("analysis: pair aligned", kernel=name)
        kernels.append(entry)
    comparison = {
        "schema": SCHEMA,
        "analysis_version": ANALYSIS_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": opts.command,
        "host": host_info(),
        "recipe": {"name": opts.recipe.name, "params": opts.params},
        "arch": opts.profile.arch,
        "profile": opts.profile.to_json(),
        "lineinfo": opts.lineinfo,
        "sides": sides,
        "kernels": kernels,
        "crosscheck": None,
        "analysis_seconds": round(time.monotonic() - t0, 3),
    }
    if opts.crosscheck:
        comparison["crosscheck"] = run_crosscheck(comparison, opts, progress)
    return comparison


def pair_by_hashless(side_a: list[tuple[str, dict]], side_b: list[tuple[str, dict]]) -> dict[str, tuple[str, str]]:
    """Side B kernels with no namesake on side A whose name, hash suffixes set aside, matches
    exactly one unpaired side A kernel, or (else) that are the one lone kernel their launcher
    compiled on each side: B name → (A name, B name)."""
    from .naming import without_hash

    names_a = {n for n, _ in side_a}
    names_b = {n for n, _ in side_b}
    lone_a = [n for n, _ in side_a if n not in names_b]
    lone_b = [n for n, _ in side_b if n not in names_a]
    out: dict[str, tuple[str, str]] = {}
    for nb in lone_b:
        matches = [na for na in lone_a if without_hash(na) == without_hash(nb)]
        if len(matches) == 1 and matches[0] not in {v[0] for v in out.values()}:
            out[nb] = (matches[0], nb)
    # then a kernel function renamed between the sides (sub_kernel → add_kernel): paired when the
    # same @cute.jit launcher compiled exactly one lone kernel on each side
    launcher_a = {n: m.get("callable") for n, m in side_a if n in lone_a and n not in {v[0] for v in out.values()}}
    launcher_b = {n: m.get("callable") for n, m in side_b if n in lone_b and n not in out}
    for nb, launcher in launcher_b.items():
        if not launcher or list(launcher_b.values()).count(launcher) != 1:
            continue
        matches = [na for na, la in launcher_a.items() if la == launcher]
        if len(matches) == 1:
            out[nb] = (matches[0], nb)
    return out


def measure_side(o: SideOutcome, progress: Progress, side: str) -> tuple[list, str | None]:
    """:func:`side_kernels`, or the sentence saying why the side's analysis failed."""
    try:
        return side_kernels(o, progress, side), None
    except CutediffError as exc:
        return [], f"Side {side.upper()}: the analysis failed: {exc.sentence()}"


def run_crosscheck(comparison: dict, opts: CompareOptions, progress: Progress) -> dict:
    from .analysis.crosscheck import crosscheck

    out = {}
    for k in comparison["kernels"]:
        if not (k["a"] and k["b"]):
            continue
        ptx = {}
        for s in SIDES:
            ptx[f"{s.upper()} ({comparison['sides'][s]['dsl']})"] = (
                read_text(Path(k[s]["files"]["dir"]), "kernel.ptx") or ""
            )
        progress(CrosscheckStarted(None, k["name"], tuple(opts.crosscheck)))
        cc = crosscheck(ptx, opts.crosscheck, opts.profile.arch, cache_dir(), opts.allow_ptx_rewrite)
        out[k["name"]] = cc.to_json() if hasattr(cc, "to_json") else _plain(cc)
    return out


def dumps(comparison: dict) -> str:
    """The comparison as JSON text: the model's one writer (``cutediff.comparison/2``)."""
    from .model import dumps as dump_comparison

    return dump_comparison(comparison)
