"""Compiles one side in a worker subprocess and keeps the artifacts in a content-addressed cache."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import warm
from .cache_admin import mark_entry
from .errors import CompileError, CutediffError
from .events import DslImporting, KernelCompiled, Progress
from .events import noop as _noop
from .gpu import GpuProfile, arch_family
from .locking import atomic_write, file_lock, pid_alive
from .paths import artifacts_dir, cache_dir
from .recipes import RecipeInfo
from .toolchain import Env
from .trace import cache_decision, stamp

BUILD_FORMAT = 1


def _digest_tree(path: Path, suffixes: tuple[str, ...] = (".py",)) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(path)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def worker_digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("worker.py", "recipes/context.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def fa_arch(arch: str) -> str:
    """The FlashAttention kernel path for a compile target (sm_103a compiles the SM100 classes)."""
    fam = arch_family(arch)
    return {90: "sm_90a", 100: "sm_100a", 110: "sm_110a", 120: "sm_120"}.get(fam, arch)


@dataclass
class BuildRequest:
    """Everything that determines one build's artifacts."""

    env: Env
    recipe: RecipeInfo
    params: dict[str, Any]
    profile: GpuProfile
    lineinfo: bool = False
    remarks: bool = True

    def key(self) -> str:
        local = {p: _digest_tree(Path(p)) for p in self.env.spec.local_paths()}
        payload = {
            "format": BUILD_FORMAT,
            "worker": worker_digest(),
            "lock": self.env.lock_digest(),
            "local": local,
            "recipe": self.recipe.name,
            "recipe_src": self.recipe.source_digest(),
            "params": self.params,
            "arch": self.profile.arch,
            "num_sms": self.profile.num_sms,
            "smem": self.profile.smem_per_block,
            "lineinfo": self.lineinfo,
            "remarks": self.remarks,
            "python": self.env.spec.python or sys.version_info[:2],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]


@dataclass
class Build:
    """A finished build in the cache."""

    key: str
    path: Path
    manifest: dict
    from_cache: bool
    seconds: float
    repaired: str | None = None
    kernels: list[Path] = field(default_factory=list)

    @property
    def log(self) -> str:
        p = self.path / "compile.log"
        return p.read_text(errors="replace") if p.is_file() else ""


def _file_hashes(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "integrity.json":
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def verify(path: Path) -> str | None:
    """None if the cache entry is intact, else why not."""
    integ = path / "integrity.json"
    if not integ.is_file():
        return "its integrity record is missing"
    try:
        expected = json.loads(integ.read_text())["files"]
        json.loads((path / "manifest.json").read_text())
    except (ValueError, KeyError, OSError):
        return "its manifest or integrity record is corrupt"
    for rel, digest in expected.items():
        p = path / rel
        if not p.is_file():
            return f"{rel} is missing"
        if hashlib.sha256(p.read_bytes()).hexdigest() != digest:
            return f"{rel} does not match its recorded hash"
    return None


def _what(req: BuildRequest, side: str) -> str:
    """``side A line-info build of 4.8.0``: what a cache decision is about."""
    who = f"side {side.upper()} " if side.lower() in ("a", "b") else ""
    return f"{who}{'line-info build' if req.lineinfo else 'build'} of {req.env.spec.label}"


def load_cached(key: str) -> Build | None:
    path = artifacts_dir() / key
    if not path.is_dir():
        return None
    if verify(path) is not None:
        return None
    manifest = json.loads((path / "manifest.json").read_text())
    return Build(key, path, manifest, True, 0.0, kernels=_kernel_dirs(path))


def _read_json(path: Path) -> dict | None:
    """A JSON file the worker wrote, or None when it is missing, empty or cut short (disk full)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def clean_stale_builds(root: Path, progress: Progress = _noop) -> int:
    """Remove half-written build folders (``.tmp-KEY-PID-TID``) left by a cutediff process that
    died (a parent killed with SIGKILL cannot clean up after itself), and the uncached builds of
    ``--no-cache`` runs that have ended (``.nocache-KEY-PID``; ``--save`` keeps a result's files)."""
    removed = 0
    try:  # names first: a stat per entry of a big cache cost 20-35 ms on every watched save
        with os.scandir(root) as it:
            entries = [root / e.name for e in it if e.name.startswith((".tmp-", ".nocache-"))]
    except OSError:
        return 0
    for p in entries:
        if not p.is_dir():
            continue
        parts = p.name.split("-")  # [".tmp", key, pid, thread] or [".nocache", key, pid]
        pid_text = parts[2] if len(parts) > 2 else ""
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed += 1
        if p.name.startswith(".tmp-"):
            progress(f"removed a half-written build left by an earlier crash ({p.name})")
    return removed


def _disk_problem(path: Path) -> str | None:
    """Why the cache cannot take a build (disk full), or None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    if free < 1 << 20:
        return f"the disk holding the cache ({path}) is full ({free // 1024} KiB free)"
    return None


def _kernel_dirs(path: Path) -> list[Path]:
    kd = path / "kernels"
    return sorted(p for p in kd.iterdir() if (p / "kernel.cubin").is_file()) if kd.is_dir() else []


def describe_failure(err: dict, side: str, recipe: RecipeInfo) -> CompileError:
    msg = err.get("message", "")
    typ = err.get("type", "Error")
    stage = err.get("stage")
    log = err.get("traceback", "")
    if "CudaDriverDependency" in typ or "CudaDriverDependency" in log:
        return CompileError(
            f"Side {side}: this DSL version asked for a CUDA driver ({typ}) at a point cutediff's shims do not cover.",
            "Compile with DSL 4.4 or newer, or run on a machine with an NVIDIA driver (docs/toolchains.md lists what each release needs).",
            log,
        )
    missing = err.get("missing_module")
    if missing:
        return _missing_module(side, recipe, missing, stage, log)
    if stage == "import":
        return CompileError(
            f"Side {side}: the DSL failed to import ({typ}: {msg}).",
            "Check that the DSL version and the pinned packages belong together (cutediff env list).",
            log,
        )
    if isinstance(msg, str) and (
        "No module named" in msg or typ in ("ImportError", "ModuleNotFoundError", "AttributeError")
    ):
        shims = err.get("shims") or []
        tried = (
            f" even with cutediff's {len(shims)} compatibility shim(s) applied ({'; '.join(shims)})" if shims else ""
        )
        return CompileError(
            f"Side {side}: recipe {recipe.name} could not import what it needs ({typ}: {msg}){tried}.",
            _mismatch_hint(msg, recipe),
            log,
        )
    where = site_words(err.get("where"))
    cause = ptxas_cause(log)
    if cause:  # a DSL internal compiler error ("🧊 ICE 🧊", "PTX assembly failed") wraps what ptxas said
        return CompileError(
            f"Side {side}: ptxas failed on the PTX of recipe {recipe.name} ({cause}){where}.", None, log
        )
    return CompileError(f"Side {side}: recipe {recipe.name} failed while compiling ({typ}: {msg}){where}.", None, log)


#: A line of ptxas' own output inside a DSL error: ``ptxas fatal   : (C7600) Register allocation
#: failed …``, ``ptxas application ptx input, line 40; error   : Not a name of any known …``.
_PTXAS_LINE = re.compile(r"^\s*(ptxas\b[^:]*?\b(?:error|fatal)\s*:.*)$", re.M)


def ptxas_cause(text: str) -> str | None:
    """What ptxas said in a failure's traceback: its first error (continuation lines joined),
    else its fatal line ("Ptx assembly aborted due to errors" only when there is nothing else)."""
    lines = text.splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        m = _PTXAS_LINE.match(line)
        if not m:
            continue
        parts = [m.group(1)]
        indent = len(line) - len(line.lstrip())
        for more in lines[i + 1 : i + 4]:  # a message the DSL wrapped onto the next lines
            stripped = more.strip()
            if not stripped or len(more) - len(more.lstrip()) < indent or _PTXAS_LINE.match(more):
                break
            if stripped.startswith(("ptxas", "note:", "error:", "suggestion:", "-->")):
                break
            parts.append(stripped)
        found.append(re.sub(r"\s+", " ", " ".join(parts)).strip()[:300])
    real = [f for f in found if "aborted due to errors" not in f] or found
    return real[0] if real else None


def site_words(where: Any) -> str:
    """`` at FILE:LINE: TEXT``, where a failure lies in the user's code (the worker's
    ``code_site``), or "" when it named none."""
    if not isinstance(where, dict) or not isinstance(where.get("file"), str) or not isinstance(where.get("line"), int):
        return ""
    text = where.get("text") if isinstance(where.get("text"), str) else ""
    return f" at {where['file']}:{where['line']}" + (f": `{text}`" if text else "")


def keep_failure_log(exc: CompileError, key: str) -> None:
    """Keep a failed build's log (the worker's output, then the traceback) in the cache at
    ``logs/KEY/failed.log`` and name it in the sentence; a cache whose ``logs`` is a link (not
    made by cutediff) gets nothing written through it."""
    if not exc.log:
        return
    logs = cache_dir() / "logs"
    folder = logs / key
    path = folder / "failed.log"
    try:
        if logs.is_symlink() or folder.is_symlink():
            raise OSError("not cutediff's folder")
        mark_entry(folder)
        atomic_write(path, exc.log + "\n")
    except OSError:
        exc.hint = exc.hint or "Run with --debug to see the log."
        return
    exc.hint = " ".join(x for x in (exc.hint, f"The full log: {path}.") if x)


def _mismatch_hint(msg: str, recipe: RecipeInfo) -> str:
    """Which pin to change for ``module 'quack.activation' has no attribute …``: the package that
    owns the module named (not the recipe's first package, which may be the one asking for it)."""
    import re

    from .recipes.stubs import pin_for_missing

    m = re.search(r"module '([\w.]+)' has no attribute", msg)
    owner = pin_for_missing(m.group(1)) if m else None
    if owner == "nvidia-cutlass-dsl":
        return "The kernel package needs another DSL version: pick one it supports, or pin an older/newer kernel package with --with."
    if owner and owner != "torch":
        example = SUGGESTED_PINS.get(owner, f"{owner}==VERSION")
        return (
            f"{owner} in this toolchain lacks it: pin the {owner} release the other packages were made with "
            f"(e.g. --with {example}), or let the resolver pick it by dropping that pin."
        )
    return f"Pin a matching version of {', '.join(recipe.needs) or 'the kernel package'} with --with, or use a DSL version it supports."


#: Pins to suggest for a package a toolchain lacks (known-good with the FA4 sample).
SUGGESTED_PINS = {
    "triton": "triton==3.5.0",
    "quack-kernels": "quack-kernels==0.4.1",
    "flash-attn-4": "flash-attn-4==4.0.0b16",
}


def _missing_module(side: str, recipe: RecipeInfo, module: str, stage: str | None, log: str) -> CompileError:
    """One sentence for ``No module named X``: which package is missing and the pin that supplies it."""
    from .recipes.stubs import pin_for_missing

    dist = pin_for_missing(module)
    where = "the DSL" if stage == "import" else f"recipe {recipe.name}"
    if dist is None:
        return CompileError(
            f"Side {side}: {where} imports the module {module!r}, which no package in this toolchain provides.",
            "Pin the package that provides it with --with NAME==VERSION (cutediff env list shows what is installed).",
            log,
        )
    if dist in ("torch", "nvidia-cutlass-dsl"):
        return CompileError(
            f"Side {side}: {where} needs {dist} (module {module!r}), which the Python running cutediff lacks.",
            "Install torch (a CPU build is enough) into the Python that runs cutediff."
            if dist == "torch"
            else "Check the toolchain environment (cutediff env remove VERSION, then run again).",
            log,
        )
    pin = SUGGESTED_PINS.get(dist, f"{dist}==VERSION")
    return CompileError(
        f"Side {side}: {where} needs the package {dist} (module {module!r}), which this toolchain does not install.",
        f"Add it to the side, e.g. --with {pin} (or VERSION,{pin} for one side).",
        log,
    )


def check_recipe_arch(recipe: RecipeInfo, arch: str) -> None:
    """Refuse, in one sentence, a target the recipe has no kernel for."""
    if arch_family(arch) not in recipe.archs:
        supported = ", ".join(f"sm_{a // 10}x" for a in recipe.archs)
        raise CompileError(
            f"Recipe {recipe.name} has no kernel for {arch}.",
            f"It supports {supported} targets; pick one with --arch or --gpu.",
        )


def compile_build(
    req: BuildRequest,
    *,
    side: str = "A",
    use_cache: bool = True,
    timeout: float = 1800,
    progress: Progress = _noop,
    cancel: threading.Event | None = None,
) -> Build:
    """Compile ``req`` in a worker (or take it from the cache)."""
    check_recipe_arch(req.recipe, req.profile.arch)
    stamp("build: requested", side=side, lineinfo=req.lineinfo)
    key = req.key()
    root = artifacts_dir()
    try:
        return _compile_locked(
            req, key, root, side=side, use_cache=use_cache, timeout=timeout, progress=progress, cancel=cancel
        )
    except OSError as exc:  # disk full, read-only or vanished cache folder: one sentence, nothing kept
        if exc.errno in _CACHE_ERRNOS:
            raise CompileError(
                f"Side {side}: the build could not be written to the cache at {root} ({_os_reason(exc)}).",
                "Free some space or set CUTEDIFF_CACHE_DIR to a writable folder; nothing partial was kept.",
            ) from None
        raise CompileError(
            f"Side {side}: the compile could not run ({_os_reason(exc)}).",
            "Nothing partial was kept; run with --debug for details.",
        ) from None


_CACHE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ENOENT)


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space is left on its disk"
    if exc.errno == errno.EROFS:
        return "its file system is read-only"
    return (exc.strerror or str(exc)) + (f": {exc.filename}" if exc.filename else "")


def _compile_locked(
    req: BuildRequest,
    key: str,
    root: Path,
    *,
    side: str,
    use_cache: bool,
    timeout: float,
    progress: Progress,
    cancel: threading.Event | None,
) -> Build:
    root.mkdir(parents=True, exist_ok=True)
    repaired = None

    def cancelled() -> CompileError:  # while another cutediff compiles this build: Ctrl-C does not wait
        return CompileError(f"Side {side}: the compile was cancelled.", "Nothing was cached.")

    with file_lock(root / f".{key}.lock", cancel, cancelled):
        clean_stale_builds(root, progress)
        final = root / key
        if use_cache and final.is_dir():
            problem = verify(final)
            if problem is None:
                build = load_cached(key)
                assert build is not None
                cache_decision(_what(req, side), key, "hit", "reused")
                stamp("build: cache hit", side=side)
                return build
            repaired = f"cache entry {key[:12]} was damaged ({problem}); rebuilt it"
            progress(repaired)
            shutil.rmtree(final, ignore_errors=True)
        why = "--no-cache" if not use_cache else ("damaged" if repaired else "not in the cache")
        cache_decision(_what(req, side), key, "miss, compiling", why)
        tmp = root / f".tmp-{key}-{os.getpid()}-{threading.get_ident()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            t0 = time.monotonic()
            stamp("build: compiling", side=side)
            manifest = _run_worker(req, tmp, side=side, timeout=timeout, progress=progress, cancel=cancel)
            seconds = time.monotonic() - t0
            stamp("build: worker done", side=side)
            manifest.update(
                {
                    "key": key,
                    "side_label": req.env.spec.label,
                    "env": req.env.name,
                    "lock": req.env.versions(),
                    "recipe": req.recipe.name,
                    "params": req.params,
                    "profile": req.profile.to_json(),
                    "wall_seconds": round(seconds, 3),
                    "local_sources": req.env.spec.local_paths(),
                }
            )
            if not manifest.get("compiles"):
                raise CompileError(
                    f"Side {side}: recipe {req.recipe.name} ran but compiled no kernel.",
                    "Check that the recipe calls cute.compile (or the kernel package's entry point).",
                )
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
            shutil.rmtree(tmp / "dump", ignore_errors=True)
            mark_entry(tmp)
            (tmp / "integrity.json").write_text(json.dumps({"files": _file_hashes(tmp)}))
            if use_cache:
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
                path = final
            else:
                path = root / f".nocache-{key}-{os.getpid()}"
                shutil.rmtree(path, ignore_errors=True)
                os.replace(tmp, path)
        except CompileError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            keep_failure_log(exc, key)
            raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    stamp("build: stored", side=side)
    return Build(key, path, manifest, False, seconds, repaired=repaired, kernels=_kernel_dirs(path))


def _run_worker(
    req: BuildRequest,
    out: Path,
    *,
    side: str,
    timeout: float,
    progress: Progress,
    cancel: threading.Event | None,
) -> dict:
    request = {
        "site": str(req.env.site),
        "local_paths": req.env.spec.local_paths(),
        "out_dir": str(out),
        "arch": req.profile.arch,
        "fa_arch": fa_arch(req.profile.arch),
        "num_sms": req.profile.num_sms,
        "smem": req.profile.smem_per_block,
        "lineinfo": req.lineinfo,
        "remarks": req.remarks,
        "recipe_entry": req.recipe.entry,
        "params": req.params,
        "parent_pid": os.getpid(),
    }
    log_path = out / "compile.log"
    env = worker_env()
    what = "line-info build" if req.lineinfo else "build"

    def on_event(ev: dict) -> None:
        stamp(f"worker: {ev.get('event')} {ev.get('stage') or ''}".rstrip(), t=ev.get("t"), side=side)
        if ev.get("event") == "compile":
            progress(KernelCompiled(None, what, ev["index"] + 1, ev["callable"], ev["seconds"]))
        elif ev.get("event") == "stage" and ev.get("stage") == "import":
            progress(DslImporting(None, what, str(ev.get("dsl"))))

    pool = warm.active()
    if pool is not None:
        rc = _run_warm(
            pool, req, out, request, env, on_event, side=side, timeout=timeout, progress=progress, cancel=cancel
        )
    else:
        rc = _run_cold(req, out, request, env, on_event, side=side, timeout=timeout, cancel=cancel)
    return _worker_result(req, out, rc, side=side, log_path=log_path)


def _wait(
    done: Callable[[float], bool],
    kill: Callable[[], None],
    *,
    side: str,
    timeout: float,
    cancel: threading.Event | None,
) -> None:
    """Wait until ``done(0.2)`` answers True; on cancel or past ``timeout`` call ``kill`` and raise."""
    deadline = time.monotonic() + timeout
    try:
        while not done(0.2):
            if cancel is not None and cancel.is_set():
                kill()
                raise CompileError(f"Side {side}: the compile was cancelled.", "Nothing was cached.")
            if time.monotonic() > deadline:
                kill()
                raise CompileError(
                    f"Side {side}: the compile did not finish within {int(timeout)} s and was stopped.",
                    "Raise the limit with --timeout if the kernel is large.",
                )
    except BaseException:
        kill()
        raise


def _run_cold(
    req: BuildRequest,
    out: Path,
    request: dict,
    env: dict,
    on_event: Callable[[dict], None],
    *,
    side: str,
    timeout: float,
    cancel: threading.Event | None,
) -> int:
    """One compile in a fresh worker process (imports the DSL itself); returns its exit status."""
    read_fd, write_fd = os.pipe()
    request = {**request, "event_fd": write_fd}
    (out / "request.json").write_text(json.dumps(request, indent=1))
    with open(out / "compile.log", "wb") as log:
        proc = subprocess.Popen(
            [req.env.spec.executable, "-m", "cutediff_tui.core.worker", str(out / "request.json")],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            pass_fds=(write_fd,),
            env=env,
            cwd=str(out),
            start_new_session=True,
        )
    os.close(write_fd)

    def reader() -> None:
        with os.fdopen(read_fd, "r") as fh:
            for line in fh:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                on_event(ev)

    t = threading.Thread(target=reader, daemon=True)
    t.start()

    def done(wait: float) -> bool:
        try:
            proc.wait(timeout=wait)
            return True
        except subprocess.TimeoutExpired:
            return False

    _wait(done, lambda: _kill(proc), side=side, timeout=timeout, cancel=cancel)
    t.join(timeout=2)
    return int(proc.returncode)


def prewarm(env: Env, *, lineinfo: bool) -> bool:
    """Start the warm server for ``env`` now (the first compile then skips the imports);
    False when warm workers are off."""
    pool = warm.active()
    if pool is None:
        return False
    init = {"site": str(env.site), "local_paths": env.spec.local_paths(), "lineinfo": lineinfo}
    pool.worker(warm_key(env, lineinfo), env.spec.executable, init, worker_env())
    return True


def release_warm(env: Env, *, lineinfo: bool, why: str) -> bool:
    """Stop the idle warm server of ``env`` for this line-info switch (see :meth:`WarmPool.release`);
    True when none is left (stopped now, or there was none)."""
    pool = warm.active()
    if pool is None:
        return True
    key = warm_key(env, lineinfo)
    return pool.release(key, why) or not pool.holds(key)


def worker_env() -> dict[str, str]:
    """The environment a compile worker runs with: cutediff's own package first on its path."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["NO_COLOR"] = "1"
    env.pop("PYTHONPATH", None)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def warm_key(env: Env, lineinfo: bool) -> tuple:
    """What a warm server is for: the environment (and its lock), line info, cutediff's worker code."""
    return (
        env.name,
        env.lock_digest(),
        worker_digest(),
        tuple(env.spec.local_paths()),
        bool(lineinfo),
        env.spec.executable,
        str(env.site),
    )


def _run_warm(
    pool: warm.WarmPool,
    req: BuildRequest,
    out: Path,
    request: dict,
    env: dict,
    on_event: Callable[[dict], None],
    *,
    side: str,
    timeout: float,
    progress: Progress,
    cancel: threading.Event | None,
) -> int:
    """One compile in a child of the toolchain's warm server; a server that dies (or a child killed
    by a signal we did not send) is replaced and the compile retried once."""
    init = {"site": request["site"], "local_paths": request["local_paths"], "lineinfo": request["lineinfo"]}
    for attempt in (1, 2):
        (out / "request.json").write_text(json.dumps(request, indent=1))
        w = pool.worker(warm_key(req.env, req.lineinfo), req.env.spec.executable, init, env)
        server = w
        # the server may still be importing: wait for it, but give way to a cancel (Ctrl-C)
        deadline = time.monotonic() + warm.READY_TIMEOUT
        while not w.ready.wait(0.2) and time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                raise CompileError(f"Side {side}: the compile was cancelled.", "Nothing was cached.")
        try:
            job = w.submit(out / "request.json", on_event) if w.ready.is_set() else None
        except warm.WarmDied:
            job = None
        if job is not None:
            running = job
            _wait(job.done.wait, lambda: server.cancel(running), side=side, timeout=timeout, cancel=cancel)
            pool.after_compile(w)
            if not job.died and (job.rc is None or job.rc >= 0):
                if job.rc and _not_reusable(out):  # an old DSL: compile it in a fresh worker
                    progress(f"DSL {req.env.spec.dsl} cannot be reused by a warm worker; compiling in a fresh one")
                    _clear_attempt(out)
                    return _run_cold(req, out, request, env, on_event, side=side, timeout=timeout, cancel=cancel)
                return int(job.rc if job.rc is not None else 3)
        why = (
            "the warm compile worker died"
            if job is None or job.died
            else f"the compile was killed ({_signal_name(job.rc)})"
        )
        if attempt == 2:
            raise CompileError(
                f"Side {side}: {why} twice before the compile finished.",
                "Nothing was cached; check free memory, or set CUTEDIFF_WARM=0 to compile in one-shot workers.",
                (out / "compile.log").read_text(errors="replace") if (out / "compile.log").is_file() else "",
            )
        progress(f"{why}; starting a fresh one and compiling again")
        _clear_attempt(out)
    raise AssertionError("unreachable")


#: What a warm child reports for a DSL whose settings cannot be re-read after its import
#: (:func:`cutediff_tui.core.worker.refresh_dsl_env`).
NOT_REUSABLE = "cannot be reused by a warm worker"


def _not_reusable(out: Path) -> bool:
    err = _read_json(out / "error.json")
    return err is not None and NOT_REUSABLE in str(err.get("message", ""))


def _clear_attempt(out: Path) -> None:
    """Remove what a failed compile attempt wrote into ``out`` (before the next attempt)."""
    for name in ("compile.log", "error.json", "manifest.json"):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "kernels", ignore_errors=True)
    shutil.rmtree(out / "dump", ignore_errors=True)


def _signal_name(rc: int | None) -> str:
    try:
        return signal.Signals(-(rc or 0)).name
    except ValueError:
        return f"status {rc}"


def _worker_result(req: BuildRequest, out: Path, rc: int, *, side: str, log_path: Path) -> dict:
    """The manifest of a finished worker, or the CompileError that says why there is none."""
    if rc != 0:
        err = _read_json(out / "error.json")
        if err is not None:
            exc = describe_failure(err, side, req.recipe)
            # the worker's output, then its traceback (which only error.json holds)
            exc.log = "\n".join(
                x for x in (log_path.read_text(errors="replace").strip(), err.get("traceback", "")) if x
            )
            raise exc
        if rc < 0:
            sig = signal.Signals(-rc).name
            raise CompileError(
                f"Side {side}: the compile worker was killed ({sig}) before it finished.",
                "Nothing was cached; run the command again (check memory if it happens each time).",
                log_path.read_text(errors="replace"),
            )
        full = _disk_problem(out.parent)
        if full:
            raise CompileError(
                f"Side {side}: the compile worker failed because {full}.",
                "Free some space or set CUTEDIFF_CACHE_DIR to a folder with room; nothing partial was kept.",
                log_path.read_text(errors="replace"),
            )
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise CompileError(
            f"Side {side}: the compile worker exited with status {rc} ({tail[0][:200]}).",
            None,  # the kept log is named (keep_failure_log)
            log_path.read_text(errors="replace"),
        )
    manifest = _read_json(out / "manifest.json")
    if manifest is None:
        full = _disk_problem(out.parent)
        raise CompileError(
            f"Side {side}: the compile worker ended without a readable manifest"
            + (f" because {full}." if full else "."),
            "Free some space or set CUTEDIFF_CACHE_DIR to a folder with room."
            if full
            else "Run with --debug to see its log.",
        )
    return manifest


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def cache_info() -> dict:
    """Every area of the cache with entries and sizes (see :mod:`.cache_admin`)."""
    from .cache_admin import cache_info as info

    return info()


def cache_clear(what: str = "builds") -> dict:
    """Remove the cache entries cutediff can prove it made (see :mod:`.cache_admin`)."""
    from .cache_admin import cache_clear as clear

    return clear(what)


__all__ = ["Build", "BuildRequest", "compile_build", "CutediffError", "cache_info", "cache_clear"]
