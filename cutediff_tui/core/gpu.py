"""Target GPU profiles: the arch and the facts kernels ask the GPU for while compiling."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass

from .errors import CutediffError


@dataclass(frozen=True)
class GpuProfile:
    """What a compile-only run pretends the GPU is."""

    name: str
    arch: str
    num_sms: int
    smem_per_block: int  # bytes of shared memory a block may opt in to
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)


PROFILES: dict[str, GpuProfile] = {
    p.name: p
    for p in (
        GpuProfile("h100", "sm_90a", 132, 227 * 1024, "H100 SXM"),
        GpuProfile("h200", "sm_90a", 132, 227 * 1024, "H200 SXM"),
        GpuProfile("h20", "sm_90a", 78, 227 * 1024, "H20"),
        GpuProfile("b200", "sm_100a", 148, 227 * 1024, "B200"),
        GpuProfile("gb200", "sm_100a", 152, 227 * 1024, "GB200"),
        GpuProfile("b300", "sm_103a", 148, 227 * 1024, "B300 (SM count varies by SKU: pass --num-sms)"),
        GpuProfile("gb300", "sm_103a", 152, 227 * 1024, "GB300"),
        GpuProfile("rtx5090", "sm_120a", 170, 99 * 1024, "GeForce RTX 5090"),
        GpuProfile("rtxpro6000", "sm_120a", 188, 99 * 1024, "RTX PRO 6000 Blackwell"),
    )
}
#: Default profile per arch, used when only --arch is given.
ARCH_DEFAULTS = {"sm_90a": "h100", "sm_100a": "b200", "sm_103a": "b300", "sm_120a": "rtx5090"}
DEFAULT_ARCH = "sm_100a"
ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")


def normalize_arch(arch: str) -> str:
    """``90a``, ``sm90a``, ``SM_100A`` → ``sm_90a``; anything else is refused with a sentence."""
    a = arch.strip().lower().replace("sm", "").lstrip("_")
    m = re.match(r"^(\d{2,3})([af]?)$", a)
    if not m:
        raise CutediffError(
            f"{arch!r} is not a GPU architecture.", "Use a name such as sm_90a, sm_100a, sm_103a or sm_120a."
        )
    return f"sm_{m.group(1)}{m.group(2)}"


def arch_family(arch: str) -> int:
    """``sm_103a`` → 100, ``sm_90a`` → 90, ``sm_120a`` → 120."""
    m = ARCH_RE.match(arch)
    assert m, arch
    num = int(m.group(1))
    return num // 10 * 10


def local_gpu() -> dict | None:
    """The first local NVIDIA GPU as {name, arch, num_sms} via nvidia-smi, or None."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        proc = subprocess.run(
            [smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip().splitlines()
    # nvidia-smi without a working driver exits non-zero and prints its complaint on stdout
    m = re.match(r"^(.+?),\s*(\d+)\.(\d+)\s*$", out[0]) if (out and proc.returncode == 0) else None
    if m is None:
        return None
    name, major, minor = m.group(1).strip(), m.group(2), m.group(3)
    suffix = "a" if int(major) >= 9 else ""
    return {"name": name, "arch": f"sm_{major}{minor}{suffix}"}


def resolve_profile(gpu: str | None = None, arch: str | None = None, num_sms: int | None = None) -> GpuProfile:
    """Combine ``--gpu``, ``--arch`` and ``--num-sms`` (the latter two override the profile)."""
    if gpu:
        key = gpu.lower().replace("-", "").replace(" ", "")
        if key not in PROFILES:
            raise CutediffError(
                f"Unknown GPU profile {gpu!r}.", f"Known profiles: {', '.join(PROFILES)}; or pass --arch and --num-sms."
            )
        base = PROFILES[key]
    else:
        if arch is None:
            found = local_gpu()
            arch = found["arch"] if found else DEFAULT_ARCH
        arch = normalize_arch(arch)
        base = PROFILES.get(ARCH_DEFAULTS.get(arch, ""), GpuProfile(f"generic-{arch}", arch, 132, 227 * 1024))
    if arch:
        arch = normalize_arch(arch)
    prof = GpuProfile(
        name=base.name if (arch in (None, base.arch) and num_sms in (None, base.num_sms)) else f"{base.name}*",
        arch=arch or base.arch,
        num_sms=num_sms or base.num_sms,
        smem_per_block=base.smem_per_block,
        note=base.note,
    )
    return prof
