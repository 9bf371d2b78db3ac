"""``cutediff diff``: the whole analysis over artifacts already on disk (no compile).

Each side is a ``.cubin`` (from any compiler: nvcc, Triton, the CuTe DSL), a ``.ptx`` (assembled
with the ptxas its header names), SASS text (``.sass``: nvdisasm, ``cuobjdump -sass`` or Compiler
Explorer output) or a folder holding them (a ``CUTE_DSL_DUMP_DIR``, a Triton cache folder with its
``.ttgir``). A cubin or listing with several kernels is split per function, and kernels are paired
by (demangled) symbol name across the sides; names that differ only in a hash suffix are paired
too, and the comparison says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from . import sass_text
from .build import Build
from .cache_admin import clean_stale_temps, verify_record, write_record
from .errors import CutediffError
from .files import display, read_bounded, refuse_irregular
from .gpu import GpuProfile
from .model.types import SIDES
from .naming import demangle
from .paths import cache_dir
from .recipes import RecipeInfo
from .toolchain import ToolchainSpec
from .trace import cache_decision

SASS_SUFFIXES = (".sass",)


def _collect(path: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(name, cubin or SASS text, ptx) per artifact found at ``path``."""
    if not path.exists():
        raise CutediffError(f"{path} does not exist.", "Give a .cubin, a .ptx, a .sass text file or a folder of them.")
    refuse_irregular(path, "file or folder (a .cubin, a .ptx, a .sass text file or a dump folder)")
    if path.is_file():
        if path.suffix == ".ptx":
            return [(path.stem, None, path)]
        if path.suffix in SASS_SUFFIXES:
            return [(path.stem, path, None)]
        sibling = path.with_suffix(".ptx")
        return [(path.stem, path, sibling if sibling.is_file() else None)]
    cubins = without_lineinfo_twins(sorted(path.rglob("*.cubin")))
    found: list[tuple[str, Path | None, Path | None]] = []
    for c in cubins:
        own = c.with_suffix(".ptx")
        if own.is_file():
            ptx: Path | None = own
        else:
            alt = [p for p in c.parent.glob("*.ptx") if c.name.startswith(p.stem)]
            ptx = alt[0] if alt else None
        found.append((c.stem, c, ptx))
    if not found:
        ptxs = sorted(path.rglob("*.ptx"))
        found = [(p.stem, None, p) for p in ptxs]
    for _name, cubin, ptx in found:  # a FIFO named kernel.cubin would block the copy forever
        for p in (cubin, ptx):
            if p is not None:
                refuse_irregular(p, "artifact")
    if not found:
        found = [(p.stem, p, None) for s in SASS_SUFFIXES for p in sorted(path.rglob(f"*{s}"))]
    if not found:
        raise CutediffError(
            f"{path} holds no .cubin, .ptx or .sass file.",
            "Point at a CUTE_DSL_DUMP_DIR made with CUTE_DSL_KEEP=ptx,cubin, a Triton cache folder or a folder of .sass files.",
        )
    return found


LINEINFO_SUFFIX = "-lineinfo"


def without_lineinfo_twins(files: list[Path]) -> list[Path]:
    """``files`` less those in a ``NNN-lineinfo`` folder whose plain twin ``NNN`` holds a file of
    the same name: cutediff's result folders (and the bundled sample) keep a line-info build of
    each kernel beside the plain one, and it is the same kernel, not another one to pair."""
    have = {(f.parent, f.name) for f in files}
    return [
        f
        for f in files
        if not (
            f.parent.name.endswith(LINEINFO_SUFFIX)
            and (f.parent.with_name(f.parent.name[: -len(LINEINFO_SUFFIX)]), f.name) in have
        )
    ]


def _ir_beside(artifact: Path) -> Path | None:
    """Triton's ``.ttgir`` (or the DSL's ``.mlir``) next to a cubin, shown in the MLIR pane."""
    for suffix in (".ttgir", ".mlir"):
        cand = artifact.with_suffix(suffix)
        if cand.is_file():
            return cand
    return None


def entry_functions(cubin: bytes) -> list[str]:
    """The kernel entry points of a cubin, from its ELF sections (``.text.NAME`` with
    ``.nv.info.NAME``), in section order; all ``.text.NAME`` when none carries its info section."""
    from .analysis.fingerprint import cubin_sections

    names = list(cubin_sections(cubin))
    texts = [n[len(".text.") :] for n in names if n.startswith(".text.")]
    infos = {n[len(".nv.info.") :] for n in names if n.startswith(".nv.info.")}
    return [t for t in texts if t in infos] or texts


def ptxas_release_for(ptx_version: str | None) -> str:
    """The CUDA release whose ptxas first accepts a PTX ISA version (9.N → 13.N, 8.N → 12.N)."""
    try:
        major, minor = (int(x) for x in (ptx_version or "").split(".")[:2])
    except ValueError:
        raise CutediffError(
            f"The PTX version {ptx_version!r} is not understood.", "Give a PTX file made by the DSL."
        ) from None
    if major >= 9:
        return f"{major + 4}.{minor}"
    if major == 8:
        return f"12.{minor}"
    raise CutediffError(
        f"PTX ISA {ptx_version} is older than any ptxas cutediff installs (CUDA 12+).", "Give a cubin instead."
    )


def _assemble(ptx: Path, out: Path) -> Path:
    from .analysis.crosscheck import ensure_ptxas
    from .analysis.ptx import parse_ptx

    text = ptx.read_text(errors="replace").rstrip("\x00")
    mod = parse_ptx(text)
    if not mod.target:
        raise CutediffError(f"{ptx} has no .target line.", "Give a complete PTX file.")
    release = ptxas_release_for(mod.version)
    exe = ensure_ptxas(release, cache_dir())
    import subprocess

    src = out.with_suffix(".ptx")
    src.write_text(text)
    proc = subprocess.run(
        [str(exe), f"-arch={mod.target.split(',')[0].strip()}", "-o", str(out), str(src)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["ptxas failed"])[0]
        raise CutediffError(
            f"ptxas {release} could not assemble {ptx.name}: {first}", "Check that the PTX is complete."
        )
    return out


def import_side(path: Path) -> Build:
    """Copy a side's artifacts into the cache as a pseudo build, one kernel folder per function."""
    path = Path(path).expanduser()
    items = _collect(path)
    h = hashlib.sha256(b"import/2")
    for name, art, ptx in items:
        h.update(name.encode("utf-8", "surrogateescape"))
        for p in (art, ptx):
            if p is not None:
                h.update(read_bounded(p))
    key = "import-" + h.hexdigest()[:20]
    root = cache_dir() / "imports" / key
    clean_stale_temps(root.parent)  # left by a cutediff killed mid-import
    repaired = None
    if (root / "manifest.json").is_file():
        problem = verify_record(root)
        if problem is not None:
            repaired = f"the imported artifacts {key} were changed on disk ({problem}); imported them again"
            shutil.rmtree(root, ignore_errors=True)
    cached = (root / "manifest.json").is_file()
    cache_decision(f"imported artifacts {path.name}", key, "hit" if cached else "miss, importing", repaired or "")
    if not cached:
        from .analysis.tools import check_cubin

        texts: dict[Path, str] = {}
        for _name, art, _ptx in items:  # refuse bad input before anything is written
            if art is not None and art.suffix in SASS_SUFFIXES:
                texts[art] = sass_text.normalise(read_bounded(art).decode(errors="replace"))
            elif art is not None:
                check_cubin(art)
        tmp = root.with_name(f"{root.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            compiles: list[dict[str, Any]] = []
            stage = tmp / "stage"
            stage.mkdir(parents=True)
            for n, (name, art, ptx) in enumerate(items):
                ptx_bytes = read_bounded(ptx).rstrip(b"\x00") if ptx is not None else None
                if art is not None and art.suffix in SASS_SUFFIXES:
                    text = texts[art]
                    funcs: list[str | None] = list(sass_text.functions(text))
                    kind = "sass"
                else:
                    if art is None:
                        src = stage / f"{n:03d}.ptx"
                        src.write_bytes(ptx_bytes or b"")
                        art = _assemble(src, stage / f"{n:03d}.cubin")
                    data = art.read_bytes()
                    funcs = list(entry_functions(data)) or [None]
                    kind = "cubin"
                demangled = demangle([f for f in funcs if f])
                ir = _ir_beside(art) if art is not None else None
                for func in funcs:
                    i = len(compiles)
                    kd = tmp / "kernels" / f"{i:03d}"
                    kd.mkdir(parents=True)
                    if kind == "sass":
                        (kd / "kernel.sass").write_text(text)
                    else:
                        shutil.copy(art, kd / "kernel.cubin")
                    if ptx_bytes is not None:
                        (kd / "kernel.ptx").write_bytes(ptx_bytes)
                    if ir is not None:
                        shutil.copy(ir, kd / "kernel.mlir")
                    label = demangled.get(func, func) if func else name
                    compiles.append(
                        {
                            "index": i,
                            "seconds": None,
                            "callable": display(label),
                            "function": func if len(funcs) > 1 or kind == "sass" else None,
                            "file": display(name),
                            "kind": kind,
                        }
                    )
            shutil.rmtree(stage, ignore_errors=True)
            logs = "\n".join(
                read_bounded(p).decode(errors="replace")
                for p in (path.glob("*.log") if path.is_dir() else [])
                if p.is_file()  # a FIFO or a device named *.log is skipped, not read
            )
            (tmp / "compile.log").write_text(logs)
            (tmp / "manifest.json").write_text(json.dumps({"compiles": compiles, "source": display(path)}))
            write_record(tmp)
            shutil.rmtree(root, ignore_errors=True)
            tmp.rename(root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    manifest = json.loads((root / "manifest.json").read_text())
    kdirs = sorted((root / "kernels").iterdir())
    return Build(key, root, manifest, repaired is None, 0.0, repaired=repaired, kernels=kdirs)


def side_archs(build: Build) -> list[str]:
    """The SASS targets of a side's cubins, in kernel order, without repeats."""
    from .analysis.fingerprint import cubin_arch

    archs: list[str] = []
    for k in build.kernels:
        if (k / "kernel.cubin").is_file():
            a = cubin_arch((k / "kernel.cubin").read_bytes())
        else:
            a = sass_text.arch_of((k / "kernel.sass").read_text(errors="replace")) or "unknown"
        if a not in archs:
            archs.append(a)
    return archs


def diff_paths(
    path_a: Path,
    path_b: Path,
    command: str = "",
    *,
    allow_arch_mismatch: bool = False,
    warn=None,
    labels: tuple[str | None, str | None] = (None, None),
) -> dict:
    """Analyse two sides' artifacts. Cubins for different GPU architectures are refused unless
    ``allow_arch_mismatch``; then ``warn`` gets one sentence and the comparison says so. A kernel
    found on one side only, or paired only once hash suffixes are set aside, gets a sentence too.
    ``labels`` name the sides (default: the file or folder names)."""
    from .analysis_pipeline import analyze
    from .compare import CompareOptions, SideOutcome

    builds = [import_side(Path(p)) for p in (path_a, path_b)]
    for b in builds:
        if b.repaired and warn is not None:
            warn(b.repaired[:1].upper() + b.repaired[1:] + ".")
    archs = [side_archs(b) for b in builds]
    known = [[a for a in arch_list if a != "unknown"] for arch_list in archs]
    arch = (known[0] or known[1] or ["unknown"])[0]
    mismatch = None
    if known[0] and known[1] and set(known[0]) != set(known[1]):
        mismatch = (
            f"side A is built for {', '.join(archs[0])} and side B for {', '.join(archs[1])}, so their "
            f"SASS comes from different instruction sets"
        )
        if not allow_arch_mismatch:
            raise CutediffError(
                f"The two sides are cubins for different GPU architectures: {mismatch} and cannot be lined up.",
                "Compare cubins built for the same arch (--arch when compiling), or run cutediff diff "
                "--allow-arch-mismatch to compare the resource figures anyway.",
            )
        if warn is not None:
            warn(
                f"{mismatch[0].upper()}{mismatch[1:]}; register, stack and spill figures are comparable, "
                "the instruction alignment is not."
            )
    outcomes = []
    for p, b, label in zip((path_a, path_b), builds, labels):
        name = label or Path(p).name or display(p)
        o = SideOutcome(spec=ToolchainSpec(dsl=display(name), pins=()), label=display(name))
        o.build = b
        o.lineinfo_build = b  # nvdisasm -g reads whatever line info the cubin carries
        outcomes.append(o)
    opts = CompareOptions(
        specs=(outcomes[0].spec, outcomes[1].spec),
        recipe=RecipeInfo("artifacts", "existing artifacts", "-", ()),
        params={},
        profile=GpuProfile(f"from-cubin-{arch}", arch, 0, 0),
        command=display(command),
    )
    comparison = analyze(outcomes, opts)
    if warn is not None:
        for sentence in pairing_sentences(comparison):
            warn(sentence)
    if mismatch:
        for s, a in zip(SIDES, archs):
            comparison["sides"][s]["notes"] = [
                *comparison["sides"][s].get("notes", []),
                f"cubins for {', '.join(a)} (architectures differ between the sides)",
            ]
    return comparison


def pairing_sentences(comparison: dict) -> list[str]:
    """One sentence per kernel that has no partner, or whose partner differs in a hash suffix."""
    labels: dict[str, Any] = {s: comparison["sides"][s]["label"] for s in SIDES}
    out = []
    for k in comparison.get("kernels", []):
        if k.get("paired_by"):
            out.append(f"Kernel {k['name']} was paired by name without its hash suffix: {k['paired_by']}.")
        for s, other in (("a", "b"), ("b", "a")):
            if k.get(s) and not k.get(other):
                out.append(
                    f"Kernel {k['name']} is only in side {s.upper()} ({labels[s]}): no kernel of side "
                    f"{other.upper()} ({labels[other]}) has its name, so it is shown without a partner."
                )
    return out
