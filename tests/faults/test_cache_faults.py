"""The build cache under damage, races, a full disk and a read-only folder: damage is detected,
rebuilt and reported; concurrent compiles of one key compile once; nothing partial is ever kept.

Real workers in the real DSL 4.8.0 environment (borrowed from the session cache); builds go to a
cache of each test's own, with the cheapest kernel there is (one tiny CuTe DSL kernel)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cutediff_tui.core.build import BuildRequest, compile_build, verify
from cutediff_tui.core.compare import CompareOptions, comparisons_dir, run_compare
from cutediff_tui.core.errors import CompileError
from cutediff_tui.core.events import render_event
from cutediff_tui.core.gpu import resolve_profile

from .conftest import borrow_envs, remount_ro
from .helpers import FWD_SM100, PINS, ROOT, cutediff, leftovers, one_sentence, tiny_recipe

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent


def _opts(env48, recipe) -> CompareOptions:
    return CompareOptions(
        specs=(env48.spec, env48.spec),
        recipe=recipe,
        params={},
        profile=resolve_profile(arch="sm_100a"),
        lineinfo=False,
        command="fault test",
    )


def _truncate(entry: Path) -> None:
    cubin = entry / "kernels" / "000" / "kernel.cubin"
    cubin.write_bytes(cubin.read_bytes()[: cubin.stat().st_size // 2])


def _corrupt_manifest(entry: Path) -> None:
    (entry / "manifest.json").write_text('{"compiles": [')


def _flip_a_byte(entry: Path) -> None:
    ptx = entry / "kernels" / "000" / "kernel.ptx"
    data = bytearray(ptx.read_bytes())
    data[len(data) // 2] ^= 0x20  # same size, other content
    ptx.write_bytes(bytes(data))


def _drop_integrity(entry: Path) -> None:
    (entry / "integrity.json").unlink()


def _delete_cubin(entry: Path) -> None:
    (entry / "kernels" / "000" / "kernel.cubin").unlink()


DAMAGE = {
    "truncated-cubin": (_truncate, "kernels/000/kernel.cubin does not match its recorded hash"),
    "corrupt-manifest": (_corrupt_manifest, "its manifest or integrity record is corrupt"),
    "wrong-hash": (_flip_a_byte, "kernels/000/kernel.ptx does not match its recorded hash"),
    "missing-integrity-record": (_drop_integrity, "its integrity record is missing"),
    "missing-cubin": (_delete_cubin, "kernels/000/kernel.cubin is missing"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_cache_entry_is_rebuilt_and_reported(own_cache, env48, tmp_path, damage):
    recipe = tiny_recipe(tmp_path / "recipe")
    first = run_compare(_opts(env48, recipe))
    (k,) = first["kernels"]
    entry = Path(own_cache / "artifacts" / first["sides"]["a"]["build_key"])
    assert verify(entry) is None
    hurt, why = DAMAGE[damage]
    hurt(entry)
    assert verify(entry) == why
    progress: list[str] = []
    again = run_compare(_opts(env48, recipe), lambda e: progress.append(render_event(e)))
    repaired = [s["repaired"] for s in again["sides"].values() if s["repaired"]]
    assert len(repaired) == 1 and why in repaired[0][0] and "rebuilt it" in repaired[0][0]  # the side that saw it
    assert any("was damaged" in m for m in progress)
    assert verify(entry) is None and not any(s["error"] for s in again["sides"].values())
    (k2,) = again["kernels"]
    for key in ("registers", "instructions", "stack_bytes", "spill_store_bytes"):
        assert k2["a"][key] == k2["b"][key] == k["a"][key], key
    assert not leftovers(own_cache)


def test_corrupt_comparison_cache_is_recomputed(own_cache, env48, tmp_path):
    recipe = tiny_recipe(tmp_path / "recipe")
    run_compare(_opts(env48, recipe))
    (stored,) = comparisons_dir().glob("*.json")
    stored.write_text(stored.read_text()[:100])  # cut short
    progress: list[str] = []
    again = run_compare(_opts(env48, recipe), lambda e: progress.append(render_event(e)))
    assert "analysis served from the cache" not in progress
    assert again["kernels"][0]["a"]["instructions"] > 0
    json.loads(stored.read_text())  # stored whole again


def test_two_processes_compiling_one_key_compile_once(own_cache, env48, tmp_path):
    counter = tmp_path / "compiles.txt"
    recipe = tiny_recipe(tmp_path / "recipe", before=f"open({str(counter)!r}, 'a').write('compiled\\n')")
    entry = recipe.entry.split(":")[0]
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "compile_one.py"), str(own_cache), entry, "sm_100a"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert counter.read_text() == "compiled\n"  # one compile
    assert outs[0]["key"] == outs[1]["key"] and outs[0]["path"] == outs[1]["path"]
    assert sorted(o["from_cache"] for o in outs) == [False, True]  # the second waited and took the result
    assert all(o["kernels"] == 1 for o in outs)
    assert verify(Path(outs[0]["path"])) is None and not leftovers(own_cache)


def test_lock_of_a_killed_process_does_not_block(own_cache, env48, tmp_path):
    recipe = tiny_recipe(tmp_path / "recipe")
    key = BuildRequest(env48, recipe, {}, resolve_profile(arch="sm_100a")).key()
    lock = own_cache / "artifacts" / f".{key}.lock"
    holder = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; from pathlib import Path; from cutediff_tui.core.locking import file_lock\n"
            f"with file_lock(Path({str(lock)!r})):\n    os.kill(os.getpid(), 9)",
        ],
        cwd=ROOT,
    )
    assert holder.returncode == -signal.SIGKILL and lock.exists()
    t0 = time.monotonic()
    build = compile_build(BuildRequest(env48, recipe, {}, resolve_profile(arch="sm_100a")))
    assert build.kernels and time.monotonic() - t0 < 120


def test_killed_cutediff_leaves_a_half_build_that_the_next_run_removes(own_cache, env48, tmp_path):
    """SIGKILL on the cutediff process itself (not its worker): the worker dies with it, and the
    half-written build folder it leaves is removed by the next compile, with a note."""
    recipe = tiny_recipe(tmp_path / "recipe", before="import time; time.sleep(120)")
    entry = recipe.entry.split(":")[0]
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "compile_one.py"), str(own_cache), entry, "sm_100a"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    arts = own_cache / "artifacts"
    deadline = time.monotonic() + 120
    tmp = None
    while time.monotonic() < deadline and tmp is None:
        found = [p for p in arts.glob(".tmp-*") if (p / "request.json").is_file()] if arts.is_dir() else []
        tmp = found[0] if found else None
        time.sleep(0.2)
    assert tmp is not None, "the compile never started"
    time.sleep(2)  # the worker is inside the recipe now
    workers = worker_pids(str(tmp))
    assert workers
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    assert not any(_alive(p) for p in workers), "the worker outlived its parent"
    assert tmp.is_dir()  # what a crash leaves
    quick = tiny_recipe(tmp_path / "quick", name="quick")
    notes: list[str] = []
    compile_build(
        BuildRequest(env48, quick, {}, resolve_profile(arch="sm_100a")),
        progress=lambda e: notes.append(render_event(e)),
    )
    assert not tmp.exists() and not leftovers(own_cache)
    assert any("removed a half-written build left by an earlier crash" in n for n in notes)


def worker_pids(marker: str, *more: str) -> list[int]:
    """Compile workers whose command line holds every marker (their request file's path)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "cutediff_tui.core.worker" in cmd and all(m in cmd for m in (marker, *more)):
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


# ---------------------------------------------------------------- full disk, read-only cache


def test_disk_full_during_a_compile(tmpfs, compile_cache, env48, tmp_path, monkeypatch):
    mnt = tmpfs("20k")
    cache = borrow_envs(mnt / "cache", compile_cache)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(cache))
    recipe = tiny_recipe(tmp_path / "recipe")
    with pytest.raises(CompileError) as ei:
        compile_build(BuildRequest(env48, recipe, {}, resolve_profile(arch="sm_100a")), side="B")
    sentence = ei.value.sentence()
    assert sentence.startswith("Side B: ") and ("is full" in sentence or "no space is left" in sentence), sentence
    assert "CUTEDIFF_CACHE_DIR" in sentence and "\n" not in sentence
    assert [p.name for p in (cache / "artifacts").iterdir() if not p.name.endswith(".lock")] == []


def test_disk_full_during_compare_cli(tmpfs, compile_cache, env48):
    """The CLI on a 64 KiB cache: the FA4 compile cannot write its files; one sentence for both sides."""
    mnt = tmpfs("64k")
    cache = borrow_envs(mnt / "cache", compile_cache)
    proc = cutediff(["compare", "4.8.0", "4.8.0", *PINS, *FWD_SM100, "--no-lineinfo", "-q"], cache)
    line = one_sentence(proc)
    assert "Both sides:" in line and ("is full" in line or "no space is left" in line), line
    assert not leftovers(cache)
    assert [p.name for p in (cache / "artifacts").iterdir() if not p.name.endswith(".lock")] == []


def test_read_only_cache_folder(tmpfs, compile_cache, env48):
    mnt = tmpfs("1M")
    cache = borrow_envs(mnt / "cache", compile_cache)
    remount_ro(mnt)
    proc = cutediff(["compare", "4.8.0", "4.8.0", *PINS, *FWD_SM100, "-q"], cache)
    line = one_sentence(proc)
    assert f"The cache folder {cache} cannot be written (its file system is read-only)" in line
    assert "CUTEDIFF_CACHE_DIR" in line


def test_cache_folder_under_a_regular_file(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's parent folder should be\n")
    cache = blocker / "cache"
    proc = cutediff(["compare", "4.5.1", "4.8.0", *PINS, *FWD_SM100, "-q"], cache)
    line = one_sentence(proc)
    assert "cannot be written (a file stands where a folder of its path should be)" in line
    assert blocker.read_text().startswith("a file where")  # untouched
