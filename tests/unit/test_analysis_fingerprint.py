"""Tests for toolchain / architecture fingerprints of the shipped cubins."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cutediff_tui.core.analysis.fingerprint import cubin_arch, cubin_sections, cubin_toolchain
from cutediff_tui.core.errors import CutediffError

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "raw"


def cubin(side: str) -> bytes:
    return (SAMPLES / f"fa4-fwd-sm103a-{side}" / "kernel.cubin").read_bytes()


@pytest.mark.parametrize(
    "side, version, lineinfo",
    [
        ("4.5.1", "13.1.66", False),
        ("4.8.0", "13.4.59", False),
        ("4.5.1-lineinfo", "13.1.66", True),
        ("4.8.0-lineinfo", "13.4.59", True),
    ],
)
def test_cubin_toolchain(side, version, lineinfo):
    data = cubin(side)
    assert cubin_arch(data) == "sm_103a"
    info = cubin_toolchain(data)
    release = version.rsplit(".", 1)[0]
    assert info["tool"] == "ptxas"
    assert (info["version"], info["release"], info["toolkit"]) == (version, release, release)
    assert info["arch"] == "sm_103a" and info["abi"] == 8
    assert info["lineinfo"] is lineinfo
    assert info["options"].endswith("-O 3 -arch sm_103a")


def _set_flags(data: bytes, flags: int, abi: int | None = None) -> bytes:
    b = bytearray(data)
    struct.pack_into("<I", b, 0x30, flags)
    if abi is not None:
        b[8] = abi
    return bytes(b)


def _patch_compat_attr9(data: bytes, value: int) -> bytes:
    """Set .nv.compat attribute 9 (the 'a' marker of ptxas 13) in a real cubin."""
    secs = cubin_sections(data)
    body = secs[".nv.compat"][1]
    assert body[:2] == bytes([2, 9])
    off = data.find(body)
    b = bytearray(data)
    b[off + 2] = value
    return bytes(b)


def test_arch_encodings():
    data = cubin("4.8.0")
    # ABI 8, ptxas 13: e_flags has no 'a' bit; .nv.compat attribute 9 carries it
    assert struct.unpack_from("<I", data, 0x30)[0] == 0x06006702
    assert cubin_arch(_patch_compat_attr9(data, 0)) == "sm_103"
    # ABI 8, ptxas 12.8/12.9: EF_CUDA_ACCELERATORS (0x8) in e_flags
    plain = _patch_compat_attr9(data, 0)
    assert cubin_arch(_set_flags(plain, 0x0600640A)) == "sm_100a"
    assert cubin_arch(_set_flags(plain, 0x06006402)) == "sm_100"
    assert cubin_arch(_set_flags(plain, 0x06007802)) == "sm_120"
    # ABI 7 (ptxas 12.x, sm_90 and older): SM in the low byte, 'a' = 0x800
    assert cubin_arch(_set_flags(plain, 0x005A0D5A, abi=7)) == "sm_90a"
    assert cubin_arch(_set_flags(plain, 0x005A055A, abi=7)) == "sm_90"
    assert cubin_arch(_set_flags(plain, 0x00500550, abi=7)) == "sm_80"


def test_sections():
    secs = cubin_sections(cubin("4.8.0"))
    assert {".note.nv.tkinfo", ".note.nv.cuinfo", ".nv.compat", ".symtab"} <= set(secs)
    assert any(n.startswith(".text.kernel_cutlass") for n in secs)


@pytest.mark.parametrize(
    "blob, match",
    [
        (b"", "empty"),
        (b"//\n.version 9.4\n", "no ELF header"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(8) + struct.pack("<HH", 2, 62) + bytes(44), "EM_CUDA"),
    ],
)
def test_not_a_cubin(blob, match):
    with pytest.raises(CutediffError, match=match):
        cubin_arch(blob)


def test_truncated_cubin():
    with pytest.raises(CutediffError, match="truncated"):
        cubin_toolchain(cubin("4.8.0")[:4096])
