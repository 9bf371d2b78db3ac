"""Compile worker: runs inside a toolchain overlay and captures every kernel the DSL compiles.

Run as ``python -m cutediff_tui.core.worker REQUEST.json``. It puts the overlay first on
``sys.path``, sets the DSL's dump/arch variables, applies compatibility shims, wraps
``cutlass.cute.compile`` to record each compile, runs the recipe under fake tensors and writes
``manifest.json`` (or ``error.json``) into the request's ``out_dir``. Progress events go as JSON
lines to the file descriptor ``event_fd``. This module imports only the standard library at the top:
it must start inside any toolchain.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import json
import os
import re
import shutil
import site
import sys
import time
import traceback
from pathlib import Path
from typing import Any

_EVENTS = None
#: The job a warm worker's child runs (tags its events; None in a one-shot worker).
JOB: str | None = None
#: Shims that act only when needed describe themselves here the first time they act.
FIRED: list[str] = []


def emit(event: str, **data: Any) -> None:
    if _EVENTS is None:
        return
    try:
        tag = {"job": JOB} if JOB is not None else {}
        # t: this process's monotonic clock (one clock machine-wide), for the timing stamps
        _EVENTS.write(json.dumps({"event": event, **tag, "t": time.monotonic(), **data}) + "\n")
        _EVENTS.flush()
    except OSError:
        pass


def set_events(stream: Any, job: str | None = None) -> None:
    """Send events to ``stream`` (a text file), tagged with ``job`` when given (warm children)."""
    global _EVENTS, JOB
    _EVENTS, JOB = stream, job


def setup_paths(site_dir: str, local_paths: list[str]) -> None:
    """Overlay first on sys.path; drop the host's own DSL package folders."""
    before = list(sys.path)
    site.addsitedir(site_dir)
    added = [p for p in sys.path if p not in before]
    rest = [p for p in before if "nvidia_cutlass_dsl" not in p]
    sys.path[:] = list(local_paths) + added + rest
    for name in list(sys.modules):
        if name.split(".")[0] in ("cutlass", "flash_attn", "quack", "cuda", "tvm_ffi"):
            del sys.modules[name]


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def driver_loadable() -> bool:
    """Whether the CUDA driver library can be loaded in this process (no GPU query)."""
    import ctypes

    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def shim_driver_check() -> str | None:
    """DSL 4.3/4.4 call ``Compiler._check_cuda_dependencies_once`` (``cuInit(0)``) before the JIT
    step of every compile and raise ``CudaDriverDependencyError`` without a driver. It is a check,
    not a need: the kernel is compiled before it, and nothing here launches it. Without a driver
    the check becomes a no-op (always: the worker never launches a kernel, and a driver without a
    GPU fails ``cuInit`` as well)."""
    try:
        from cutlass.base_dsl import compiler as dsl_compiler  # type: ignore
    except Exception:
        return None
    cls = getattr(dsl_compiler, "Compiler", None)
    if cls is None or not hasattr(cls, "_check_cuda_dependencies_once"):
        return None

    def _skip(self, *_a: Any, **_k: Any) -> None:
        self._cuda_dependencies_checked = True

    cls._check_cuda_dependencies_once = _skip
    return "CUDA driver check before JIT skipped (DSL 4.3/4.4 Compiler._check_cuda_dependencies_once; compile only)"


def shim_jit_lookup() -> str | None:
    """DSL 4.3 builds a JIT engine after every compile and looks up the host function in it; the
    engine's runtime library needs ``libcuda.so.1``, so without a driver the lookup fails with
    ``RuntimeError: Unknown function cutlass_…`` although the PTX and cubin are already written.
    Without a driver a failed lookup answers None (the function is never launched here)."""
    if driver_loadable():
        return None
    try:
        from cutlass._mlir import execution_engine as ee  # type: ignore
    except Exception:
        return None
    cls = getattr(ee, "ExecutionEngine", None)
    lookup = getattr(cls, "lookup", None)
    if lookup is None or getattr(lookup, "__cutediff_shim__", False):
        return None

    def _lookup(self, name, _inner=lookup):
        try:
            return _inner(self, name)
        except RuntimeError as exc:
            if "Unknown function" not in str(exc):
                raise
            note = "JIT lookup of the host function skipped (DSL 4.3: its runtime needs a CUDA driver)"
            if note not in FIRED:
                FIRED.append(note)
            return None

    _lookup.__cutediff_shim__ = True  # type: ignore[attr-defined]
    cls.lookup = _lookup  # type: ignore[union-attr]
    return None  # recorded in FIRED when it acts


def apply_shims(num_sms: int, smem: int) -> list[str]:
    """Compatibility and compile-only shims; returns a description of each one applied."""
    applied: list[str] = []
    import cutlass.cute as cute

    for shim in (shim_driver_check, shim_jit_lookup):
        text = shim()
        if text:
            applied.append(text)

    core = getattr(cute, "core", None)
    if core is not None:
        for name in ("ThrMma", "ThrCopy", "TiledMma", "TiledCopy"):
            if not hasattr(core, name) and hasattr(cute, name):
                setattr(core, name, getattr(cute, name))
                applied.append(f"alias cute.core.{name} = cute.{name}")
    try:
        from cutlass.utils import HardwareInfo  # type: ignore
    except Exception:
        HardwareInfo = None
    if HardwareInfo is not None:

        def _init(self, device_id: int = 0):
            self.device_id = device_id

        def _sms(self):
            return num_sms

        def _clusters(self, cluster_size: int, stream=None):
            return max(1, num_sms // max(1, int(cluster_size)))

        def _smem(self):
            return smem

        HardwareInfo.__init__ = _init
        HardwareInfo.get_device_multiprocessor_count = _sms
        HardwareInfo.get_max_active_clusters = _clusters
        if hasattr(HardwareInfo, "get_max_shared_memory_per_block"):
            HardwareInfo.get_max_shared_memory_per_block = _smem
        applied.append(f"HardwareInfo answers from the GPU profile ({num_sms} SMs, no driver)")
    return applied


class Recorder:
    """Stands in for ``cute.compile``: times each compile and notes the files it dumped."""

    def __init__(self, inner: Any, state: dict) -> None:
        self._inner = inner
        self._state = state

    def __getitem__(self, options: Any) -> Recorder:
        return Recorder(self._inner[options], self._state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        st = self._state
        dump: Path = st["dump"]
        before = set(os.listdir(dump)) if dump.is_dir() else set()
        t0 = time.monotonic()
        result = self._inner(*args, **kwargs)
        seconds = time.monotonic() - t0
        after = set(os.listdir(dump)) if dump.is_dir() else set()
        index = len(st["compiles"])
        fn = args[0] if args else None
        name = getattr(fn, "__qualname__", None) or getattr(type(fn), "__qualname__", "kernel")
        entry: dict[str, Any] = {
            "index": index,
            "seconds": round(seconds, 3),
            "callable": str(name),
            "files": sorted(after - before),
        }
        kdir = st["out"] / "kernels" / f"{index:03d}"
        kdir.mkdir(parents=True, exist_ok=True)
        for fname in entry["files"]:
            src = dump / fname
            if fname.endswith(".ptx"):
                shutil.copy(src, kdir / "kernel.ptx")
            elif fname.endswith(".cubin"):
                shutil.copy(src, kdir / "kernel.cubin")
            elif fname.endswith(".mlir"):
                shutil.copy(src, kdir / "kernel.mlir")
        # DSL >= 4.3 exposes the artifacts on the compiled object as well.
        for attr, fname in (("__ptx__", "kernel.ptx"), ("__cubin__", "kernel.cubin"), ("__mlir__", "kernel.mlir")):
            if (kdir / fname).exists():
                continue
            try:
                value = getattr(result, attr, None)
            except Exception:
                value = None
            if value:
                data = value if isinstance(value, (bytes, bytearray)) else str(value).encode()
                (kdir / fname).write_bytes(bytes(data))
                entry.setdefault("from_object", []).append(attr)
        entry["artifacts"] = sorted(p.name for p in kdir.iterdir())
        st["compiles"].append(entry)
        emit("compile", index=index, seconds=entry["seconds"], callable=entry["callable"])
        return result


def refresh_dsl_env() -> bool:
    """Make the DSL re-read its environment variables (dump folder, kept artifacts, arch, line
    info): every DSL release here reads them into ``envar`` when its singleton is made, at the
    import of ``cutlass.cute``, which a warm server did before this compile's variables were set.
    False when this DSL does not have that shape (the caller then compiles in a fresh worker)."""
    try:
        from cutlass.base_dsl import env_manager  # type: ignore
        from cutlass.base_dsl.dsl import BaseDSL  # type: ignore
    except Exception:
        return False
    for value in list(vars(env_manager).values()):  # its getters keep the first answer (lru_cache)
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            clear()
    instances = getattr(type(BaseDSL), "_instances", None)
    if not isinstance(instances, dict) or not instances:
        return False
    for inst in list(instances.values()):
        make = getattr(inst, "_env_class", None)
        if make is None or not hasattr(inst, "envar"):
            return False
        inst.envar = make(inst.name)
    return True


def run_recipe(func: Any, ctx: Any, state: dict) -> None:
    """Run the recipe; when it stops at the import of a compile-time-only package (triton, which
    quack-kernels >= 0.5 imports at module level, on the quack and the FA4 paths alike) before any
    compile, put the stand-in in place, forget the half-imported kernel packages and run it again."""
    from cutediff_tui.core.recipes.stubs import COMPILE_ONLY
    from cutediff_tui.core.recipes.stubs import install as install_stubs

    try:
        func(ctx)
        return
    except ModuleNotFoundError as exc:
        root = (exc.name or "").split(".")[0]
        if root not in COMPILE_ONLY or state["compiles"] or install_stubs(ctx.note) is None:
            raise
    for name in list(sys.modules):
        if name.split(".")[0] in ("flash_attn", "quack", *COMPILE_ONLY):
            del sys.modules[name]
    func(ctx)


def load_entry(entry: str):
    module, _, func = entry.partition(":")
    if module.endswith(".py") or os.sep in module:
        folder = os.path.dirname(os.path.abspath(module))
        if folder not in sys.path:  # the recipe's own helper modules next to it are importable
            sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location("cutediff_user_recipe", module)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["cutediff_user_recipe"] = mod
        spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    return getattr(mod, func)


def run(request: dict, *, warm: bool = False) -> int:
    """One compile; ``warm``: in a child forked from a warm server, whose paths and imports are set."""
    out = Path(request["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    dump = out / "dump"
    dump.mkdir(exist_ok=True)
    if not warm:
        setup_paths(request["site"], request.get("local_paths", []))
    try:
        dsl_version = md.version("nvidia-cutlass-dsl")
    except md.PackageNotFoundError:
        dsl_version = "unknown"
    vt = version_tuple(dsl_version) if dsl_version != "unknown" else (0,)
    arch = request["arch"]
    env = {
        "CUTE_DSL_ARCH": arch,
        "FLASH_ATTENTION_ARCH": request.get("fa_arch") or arch,
        "FLASH_ATTENTION_NUM_SMS": str(request["num_sms"]),
        "CUTE_DSL_DUMP_DIR": str(dump),
        "CUTE_DSL_KEEP": "ir,ptx,cubin",
        "CUTE_DSL_DISABLE_FILE_CACHING": "1",
        "CUTE_DSL_CACHE_DIR": str(out / "dsl-cache"),
        "CUTE_DSL_LINEINFO": "1" if request.get("lineinfo") else "0",
    }
    if vt < (4, 5):
        env.update({"CUTE_DSL_KEEP_PTX": "1", "CUTE_DSL_KEEP_CUBIN": "1", "CUTE_DSL_KEEP_IR": "1"})
        env.pop("CUTE_DSL_KEEP")
    remarks = bool(request.get("remarks")) and vt >= (4, 7)
    if remarks:
        env["CUTE_DSL_COMPILER_OPT"] = "remarks{ptx}"
    os.environ.update(env)
    manifest: dict[str, Any] = {
        "dsl_version": dsl_version,
        "arch": arch,
        "lineinfo": bool(request.get("lineinfo")),
        "warm": warm,  # compiled in a child of a warm server (DSL imported once), not a one-shot worker
        "remarks_enabled": remarks,
        "env": env,
        "python": sys.version.split()[0],
        "packages": {},
    }
    for dist in ("nvidia-cutlass-dsl", "flash-attn-4", "quack-kernels", "apache-tvm-ffi", "torch", "cuda-bindings"):
        try:
            manifest["packages"][dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    state: dict[str, Any] = {"dump": dump, "out": out, "compiles": []}
    stage = "import"
    t_start = time.monotonic()
    try:
        emit("stage", stage="import", dsl=dsl_version)
        import cutlass  # noqa: F401
        import cutlass.cute as cute

        if warm and not refresh_dsl_env():
            raise RuntimeError("this DSL version cannot be reused by a warm worker (no DSL singleton to refresh)")
        stage = "shims"
        manifest["shims"] = apply_shims(int(request["num_sms"]), int(request.get("smem", 232448)))
        cute.compile = Recorder(cute.compile, state)  # type: ignore[assignment]
        stage = "recipe"
        emit("stage", stage="recipe")
        from cutediff_tui.core.recipes.context import RecipeContext

        ctx = RecipeContext(arch=arch, params=request.get("params", {}), num_sms=int(request["num_sms"]))
        func = load_entry(request["recipe_entry"])
        t0 = time.monotonic()
        run_recipe(func, ctx, state)
        manifest["recipe_seconds"] = round(time.monotonic() - t0, 3)
        manifest["shims"] = [*manifest["shims"], *FIRED]
        manifest["notes"] = ctx.notes
    except BaseException as exc:  # reported to the parent as data, never as a traceback on screen
        err = {
            "stage": stage,
            "type": type(exc).__name__,
            "message": str(exc).strip().splitlines()[0][:500] if str(exc).strip() else type(exc).__name__,
            "traceback": traceback.format_exc(),
            "dsl_version": dsl_version,
            "compiles_done": len(state["compiles"]),
            "shims": [*manifest.get("shims", []), *FIRED],
            "missing_module": getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None,
            "where": code_site(exc),
        }
        (out / "error.json").write_text(json.dumps(err, indent=1))
        emit("error", **{k: err[k] for k in ("stage", "type", "message")})
        return 3
    manifest["compiles"] = state["compiles"]
    manifest["seconds"] = round(time.monotonic() - t_start, 3)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.rmtree(out / "dsl-cache", ignore_errors=True)
    emit("done", compiles=len(state["compiles"]), seconds=manifest["seconds"])
    return 0


#: ``--> /path/kernel.py:25:0``: where a DSL diagnostic (CompilerDiagnosticError) says the kernel is.
_DSL_SITE = re.compile(r"^\s*-->\s+(\S+?\.py):(\d+)(?::\d+)?\s*$", re.M)


def code_site(exc: BaseException) -> dict | None:
    """Where a failure lies in the user's code: the kernel line a DSL diagnostic names, a syntax
    error's line, else the innermost traceback frame (over the exception's causes) that is not the
    DSL's, torch's, cutediff's nor the standard library's; None when there is none.
    ``{"file", "line", "text"}``, the text being the line's source, stripped."""
    import linecache
    import sysconfig

    outside = {Path(p).resolve() for p in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"])}
    outside.add(Path(__file__).resolve().parents[1])  # cutediff_tui
    for name in ("cutlass", "cutlass_dsl", "torch", "tvm_ffi", "cuda"):
        mod = sys.modules.get(name)
        if getattr(mod, "__file__", None):
            outside.add(Path(mod.__file__).resolve().parent)  # type: ignore[union-attr,arg-type]

    def site(file: str, line: int, text: str | None = None) -> dict:
        text = text if text is not None else linecache.getline(file, line)
        return {"file": file, "line": line, "text": (text or "").strip()[:200]}

    def own(file: str) -> bool:
        if file.startswith("<"):
            return False
        path = Path(file).resolve()
        return not any(path.is_relative_to(o) for o in outside)

    chain: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in chain and len(chain) < 8:
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        m = _DSL_SITE.search(str(e))
        if m and own(m.group(1)):
            return site(m.group(1), int(m.group(2)))
        if isinstance(e, SyntaxError) and e.filename and e.lineno and own(e.filename):
            return site(e.filename, e.lineno, e.text)
    for e in chain:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.lineno and own(f.filename)]
        if frames:
            return site(frames[-1].filename, frames[-1].lineno or 0, frames[-1].line)
    return None


def die_with_parent(parent: int | None) -> None:
    """Linux: be killed when the cutediff process that started us dies (even by SIGKILL), so that
    no orphan keeps compiling into a folder nobody will read."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:
        return
    if parent and os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(3)


def main(argv: list[str] | None = None) -> int:
    global _EVENTS
    argv = sys.argv[1:] if argv is None else argv
    request = json.loads(Path(argv[0]).read_text())
    die_with_parent(request.get("parent_pid"))
    fd = request.get("event_fd")
    if fd is not None:
        try:
            _EVENTS = os.fdopen(int(fd), "w", buffering=1)
        except OSError:
            _EVENTS = None
    return run(request)


if __name__ == "__main__":
    sys.exit(main())
