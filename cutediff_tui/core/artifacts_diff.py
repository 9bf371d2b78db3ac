"""``cutediff diff``: the whole analysis over artifacts already on disk (no compile).

Each side is a ``.cubin``, a ``.ptx`` (assembled with the ptxas its header names) or a folder such
as a ``CUTE_DSL_DUMP_DIR`` holding them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from .build import Build
from .cache_admin import clean_stale_temps, verify_record, write_record
from .errors import CutediffError
from .files import display, read_bounded, refuse_irregular
from .gpu import GpuProfile
from .model.types import SIDES
from .paths import cache_dir
from .recipes import RecipeInfo
from .toolchain import ToolchainSpec


def _collect(path: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(name, cubin, ptx) per kernel found at ``path``."""
    if not path.exists():
        raise CutediffError(f"{path} does not exist.", "Give a .cubin, a .ptx or a folder of them.")
    refuse_irregular(path, "file or folder (a .cubin, a .ptx or a dump folder)")
    if path.is_file():
        if path.suffix == ".ptx":
            return [(path.stem, None, path)]
        sibling = path.with_suffix(".ptx")
        return [(path.stem, path, sibling if sibling.is_file() else None)]
    cubins = sorted(path.rglob("*.cubin"))
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
        raise CutediffError(
            f"{path} holds no .cubin or .ptx file.", "Point at a CUTE_DSL_DUMP_DIR made with CUTE_DSL_KEEP=ptx,cubin."
        )
    return found


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
    """Copy a side's artifacts into the cache as a pseudo build."""
    path = Path(path).expanduser()
    kernels = _collect(path)
    h = hashlib.sha256()
    for name, cubin, ptx in kernels:
        h.update(name.encode("utf-8", "surrogateescape"))
        for p in (cubin, ptx):
            if p is not None:
                h.update(p.read_bytes())
    key = "import-" + h.hexdigest()[:20]
    root = cache_dir() / "imports" / key
    clean_stale_temps(root.parent)  # left by a cutediff killed mid-import
    repaired = None
    if (root / "manifest.json").is_file():
        problem = verify_record(root)
        if problem is not None:
            repaired = f"the imported artifacts {key} were changed on disk ({problem}); imported them again"
            shutil.rmtree(root, ignore_errors=True)
    if not (root / "manifest.json").is_file():
        from .analysis.tools import check_cubin

        for _name, cubin, _ptx in kernels:  # refuse bad input before anything is written
            if cubin is not None:
                check_cubin(cubin)
        tmp = root.with_name(f"{root.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            compiles = []
            for i, (name, cubin, ptx) in enumerate(kernels):
                kd = tmp / "kernels" / f"{i:03d}"
                kd.mkdir(parents=True)
                if ptx is not None:
                    (kd / "kernel.ptx").write_bytes(ptx.read_bytes().rstrip(b"\x00"))
                if cubin is not None:
                    shutil.copy(cubin, kd / "kernel.cubin")
                else:
                    _assemble(kd / "kernel.ptx", kd / "kernel.cubin")
                compiles.append({"index": i, "seconds": None, "callable": display(name)})
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
        a = cubin_arch((k / "kernel.cubin").read_bytes())
        if a not in archs:
            archs.append(a)
    return archs


def diff_paths(path_a: Path, path_b: Path, command: str = "", *, allow_arch_mismatch: bool = False, warn=None) -> dict:
    """Analyse two sides' artifacts. Cubins for different GPU architectures are refused unless
    ``allow_arch_mismatch``; then ``warn`` gets one sentence and the comparison says so."""
    from .analysis_pipeline import analyze
    from .compare import CompareOptions, SideOutcome

    builds = [import_side(Path(p)) for p in (path_a, path_b)]
    for b in builds:
        if b.repaired and warn is not None:
            warn(b.repaired[:1].upper() + b.repaired[1:] + ".")
    archs = [side_archs(b) for b in builds]
    arch = archs[0][0]
    mismatch = None
    if set(archs[0]) != set(archs[1]):
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
    for p, b in zip((path_a, path_b), builds):
        o = SideOutcome(spec=ToolchainSpec(dsl=display(p), pins=()), label=display(p))
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
    if mismatch:
        for s, a in zip(SIDES, archs):
            comparison["sides"][s]["notes"] = [
                *comparison["sides"][s].get("notes", []),
                f"cubins for {', '.join(a)} (architectures differ between the sides)",
            ]
    return comparison
