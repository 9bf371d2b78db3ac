"""Writes never destroy, and the cache is cutediff's alone (issue 16, cases 3, 5 and part of 6).

Every folder and file here is made by the test under ``tmp_path``: a planted symlink where the
TUI writes its report, a result whose report would replace the result itself, a mis-set
``CUTEDIFF_CACHE_DIR`` pointing at someone's folders, a tampered disassembly and import cache,
a FIFO in a dump folder, and temporary files left by a killed cutediff.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from .helpers import CUBIN_451, CUBIN_480, SAMPLE, cutediff, one_sentence


def _result(tmp_path: Path) -> Path:
    dst = tmp_path / "result"
    shutil.copytree(SAMPLE, dst)
    return dst


# ---------------------------------------------------------------- outputs


def test_report_output_that_is_its_input_is_refused(tmp_path):
    result = _result(tmp_path)
    before = (result / "comparison.json").read_bytes()
    for extra in ([], ["--force"]):
        proc = cutediff(["report", result, "-o", result / "comparison.json", "--format", "md", *extra], None)
        line = one_sentence(proc)
        assert "input of this command" in line
        assert (result / "comparison.json").read_bytes() == before
    proc = cutediff(["check", "--result", result, "--max-spill-bytes", "0", "--json", result / "comparison.json"], None)
    assert "input of this command" in one_sentence(proc)
    assert (result / "comparison.json").read_bytes() == before


def test_report_refuses_symlinks_and_overwriting_without_force(tmp_path):
    result = _result(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "report.md"
    link.symlink_to(victim)
    for extra in ([], ["--force"]):
        line = one_sentence(cutediff(["report", result, "-o", link, *extra], None))
        assert "symbolic link" in line
    assert victim.read_text() == "precious"
    existing = tmp_path / "old.md"
    existing.write_text("old report")
    line = one_sentence(cutediff(["report", result, "-o", existing], None))
    assert "already exists" in line and "--force" in line
    assert existing.read_text() == "old report"
    proc = cutediff(["report", result, "-o", existing, "--force"], None)
    assert proc.returncode == 0, proc.stderr
    assert existing.read_text().startswith("### cutediff")


def _app(comparison: dict):
    from cutediff_tui.ui.app import CutediffApp

    return CutediffApp(comparison, versions=["4.5.1", "4.8.0"], installed={"4.5.1", "4.8.0"}, gpu_probe=None)


def test_tui_export_never_follows_a_link_and_asks_before_replacing(tmp_path, monkeypatch):
    from cutediff_tui.core.compare import load_json

    comparison = load_json(SAMPLE / "comparison.json")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (work / "cutediff-report.md").symlink_to(victim)

    def status(app) -> str | None:
        """The export dialog's status line; None while no dialog is open."""
        found = app.screen.query("#export-status")
        return str(found.first().render()) if found else None

    async def until(pilot, cond, timeout: float = 60) -> None:
        """Wait for ``cond`` (not a fixed pause: the dialog answers later on a loaded machine)."""
        t0 = time.monotonic()
        while not cond():
            assert time.monotonic() - t0 < timeout, "timed out"
            await pilot.pause(0.05)

    async def go() -> None:
        app = _app(comparison)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            # a planted link: the dialog says so and enter writes nothing, however often
            await pilot.press("e")
            await until(pilot, lambda: "symbolic link" in (status(app) or ""))
            await pilot.press("enter", "enter")
            await pilot.pause()
            await app.workers.wait_for_complete()
            assert victim.read_text() == "precious"
            await pilot.press("escape")
            await until(pilot, lambda: status(app) is None)
            # an existing file: named first, kept on escape, replaced only by a second enter
            (work / "cutediff-report.md").unlink()
            (work / "cutediff-report.md").write_text("old")
            await pilot.press("e")
            await until(pilot, lambda: status(app) is not None)
            await pilot.press("enter")
            await until(pilot, lambda: "exists" in (status(app) or ""))
            await pilot.press("escape")
            await until(pilot, lambda: status(app) is None)
            await app.workers.wait_for_complete()
            assert (work / "cutediff-report.md").read_text() == "old"
            await pilot.press("e")
            await until(pilot, lambda: status(app) is not None)
            await pilot.press("enter")
            await until(pilot, lambda: "exists" in (status(app) or ""))
            await pilot.press("enter")
            await until(pilot, lambda: (work / "cutediff-report.md").read_text() != "old")
            assert (work / "cutediff-report.md").read_text().startswith("### cutediff")

    asyncio.run(go())


# ---------------------------------------------------------------- cache clear / info


def test_cache_clear_removes_only_what_cutediff_made(tmp_path):
    # a mis-set CUTEDIFF_CACHE_DIR: someone's folder that happens to hold artifacts/ and envs/
    theirs = tmp_path / "projects"
    for sub in ("artifacts/thesis", "envs/venv", "imports/photos", "disasm/notes"):
        (theirs / sub).mkdir(parents=True)
        (theirs / sub / "file.txt").write_text("keep me")
    line = one_sentence(cutediff(["cache", "clear", "--all"], theirs))
    assert "CACHEDIR.TAG" in line
    assert all((theirs / sub / "file.txt").is_file() for sub in ("artifacts/thesis", "envs/venv", "imports/photos"))
    # a real cache: a diff fills imports/ and disasm/; a foreign folder planted among the builds stays
    cache = tmp_path / "cache"
    proc = cutediff(["diff", CUBIN_451, CUBIN_480], cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any((cache / "imports").iterdir()) and any((cache / "disasm").iterdir())
    (cache / "artifacts" / "planted").mkdir(parents=True)
    (cache / "artifacts" / "planted" / "data").write_text("not cutediff's")
    info = cutediff(["cache", "info"], cache)
    assert info.returncode == 0, info.stderr
    assert "imports/" in info.stdout and "disasm/" in info.stdout and "MB" in info.stdout
    data = json.loads(cutediff(["cache", "info", "--json", "-"], cache).stdout)
    assert data["areas"]["imports"]["entries"] == 2 and data["areas"]["disasm"]["bytes"] > 0
    proc = cutediff(["cache", "clear"], cache)
    assert proc.returncode == 0, proc.stderr
    # 2 imports, the disassembly of each build, disasm/cubin/ (the -g listings shared by cubin
    # content) and disasm/code/ (the other texts, shared by code content)
    assert "removed 6 entries" in proc.stdout, proc.stdout
    assert not any((cache / "imports").iterdir()) and not any((cache / "disasm").iterdir())
    assert (cache / "artifacts" / "planted" / "data").is_file()
    assert "kept 1 entries" in proc.stderr


def test_cache_info_counts_a_sparse_cubin_by_its_disk_use(tmp_path):
    cache = tmp_path / "cache"
    assert cutediff(["diff", CUBIN_451, CUBIN_480], cache).returncode == 0
    entry = next((cache / "imports").iterdir())
    with open(entry / "big.bin", "wb") as fh:  # 2 GB apparent, a few KB used
        fh.seek(2 * 1024**3)
        fh.write(b"x")
    data = json.loads(cutediff(["cache", "info", "--json", "-"], cache).stdout)
    assert data["areas"]["imports"]["bytes"] < 100 * 1024**2
    assert data["total"].endswith(("KB", "MB"))


# ---------------------------------------------------------------- integrity of disasm and imports


def _registers(path: Path) -> list[int]:
    c = json.loads(path.read_text())
    return [k["b"]["registers"] for k in c["kernels"] if k.get("b")]


def test_tampered_disassembly_cache_is_rebuilt_and_reported(tmp_path):
    cache = tmp_path / "cache"
    out = tmp_path / "c.json"
    assert cutediff(["diff", CUBIN_451, CUBIN_480, "--json", out], cache).returncode == 0
    before = _registers(out)
    assert 128 in before
    tampered = 0
    for res in (cache / "disasm").rglob("res.txt"):
        text = res.read_text()
        res.write_text(text.replace("REG:128", "REG:16"))
        tampered += "REG:128" in text
    assert tampered
    out.unlink()
    proc = cutediff(["diff", CUBIN_451, CUBIN_480, "--json", out], cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _registers(out) == before
    c = json.loads(out.read_text())
    notes = c["sides"]["a"]["repaired"] + c["sides"]["b"]["repaired"]
    assert any("changed on disk" in n and "res.txt" in n for n in notes), notes


def test_tampered_import_cache_is_imported_again_and_reported(tmp_path):
    cache = tmp_path / "cache"
    assert cutediff(["diff", CUBIN_451, CUBIN_480], cache).returncode == 0
    cubins = list((cache / "imports").rglob("kernel.cubin"))
    for c in cubins:
        c.write_bytes(c.read_bytes()[:-16] + b"\0" * 16)
    proc = cutediff(["diff", CUBIN_451, CUBIN_480], cache)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "were changed on disk" in proc.stderr
    assert all(c.read_bytes() in (CUBIN_451.read_bytes(), CUBIN_480.read_bytes()) for c in cubins)


# ---------------------------------------------------------------- non-regular files, leftovers


@pytest.mark.parametrize("kind", ["fifo-arg", "dev-zero", "dev-null", "fifo-in-dump"])
def test_non_regular_files_are_refused_before_they_are_opened(tmp_path, kind):
    if kind == "fifo-arg":
        arg = tmp_path / "k.cubin"
        os.mkfifo(arg)
    elif kind == "fifo-in-dump":
        arg = tmp_path / "dump"
        arg.mkdir()
        os.mkfifo(arg / "kernel.cubin")
    else:
        arg = Path("/dev/zero" if kind == "dev-zero" else "/dev/null")
    proc = cutediff(["diff", arg, CUBIN_480], tmp_path / "cache", timeout=60)
    line = one_sentence(proc)
    assert "not a regular" in line, line


def test_json_to_dev_null_is_thrown_away_not_refused(tmp_path):
    """/dev/null is a device, but as an output it is the usual way to drop one: not an error."""
    proc = cutediff(["diff", CUBIN_451, CUBIN_480, "--json", os.devnull], tmp_path / "cache", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "not a regular" not in proc.stderr


def test_temporary_files_of_a_killed_run_are_removed_at_the_next_start(tmp_path):
    cache = tmp_path / "cache"
    assert cutediff(["diff", CUBIN_451, CUBIN_480], cache).returncode == 0
    dead = 2**22 + 12345  # above the usual pid_max: no such process
    left = cache / "imports" / f"import-0123456789abcdef0123.{dead}.tmp"
    (left / "kernels").mkdir(parents=True)
    disasm_entry = next(p for p in (cache / "disasm").rglob("*") if (p / "integrity.json").is_file())
    half = disasm_entry / f".sass.txt.tmp{dead}-1"
    half.write_text("half")
    assert cutediff(["diff", CUBIN_451, CUBIN_480], cache).returncode == 0
    assert not left.exists() and not half.exists()


def test_sigterm_during_an_import_leaves_nothing_behind(tmp_path):
    """SIGTERM while ``diff`` imports a large dump folder: the import's temporary folder is removed."""
    import signal
    import subprocess
    import sys
    import time

    dump = tmp_path / "dump"
    dump.mkdir()
    for i in range(400):  # enough copying to be caught in the middle
        shutil.copy(CUBIN_480, dump / f"k{i:03d}.cubin")
    cache = tmp_path / "cache"
    env = dict(os.environ, CUTEDIFF_CACHE_DIR=str(cache))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cutediff_tui.cli", "diff", dump, CUBIN_480],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    deadline = time.monotonic() + 120
    seen = False
    while time.monotonic() < deadline and proc.poll() is None and not seen:
        seen = bool(list((cache / "imports").glob("*.tmp"))) if (cache / "imports").is_dir() else False
        time.sleep(0.01)
    assert seen, "the import finished before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert not list((cache / "imports").glob("*.tmp"))
