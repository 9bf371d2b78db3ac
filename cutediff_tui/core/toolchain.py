"""Toolchain specs and their environments.

A *side* of a comparison is a toolchain spec: a CuTe DSL version plus pins, e.g. ``4.5.1`` or
``4.8.0,quack-kernels==0.6.5``. Each spec gets an *overlay* environment in the user cache: a
folder made with ``uv pip install --target`` that holds the DSL, its libraries and the pinned
kernel packages, locked to exact versions and hashes, and that reuses the host's torch instead of
installing a second one (the worker puts the overlay first on ``sys.path``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import ToolchainError
from .events import EnvStage, Progress
from .events import noop as _noop
from .locking import file_lock, pid_alive
from .paths import cache_dir, envs_dir
from .trace import cache_decision

DSL_PACKAGE = "nvidia-cutlass-dsl"
#: Packages that declare torch (and newer minimums than a known-good set); their own
#: requirements are overridden by the pins so that old/new combinations still resolve.
EXCLUDED = ("torch", "torchvision", "torchaudio", "triton-windows")
#: Requirements always installed with the DSL (what FA4 / quack import besides torch).
BASE_REQUIREMENTS = ("apache-tvm-ffi<0.2", "einops", "typing_extensions", "numpy")
#: Top-level import names of pinnable kernel packages, to recognise a local source folder.
LOCAL_PACKAGES = {"flash_attn": "flash-attn-4", "quack": "quack-kernels"}
ENV_FORMAT = 3


def normalize_name(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    """One pinned package: a requirement string, or a local source folder for ``name``."""

    name: str
    requirement: str | None = None
    path: str | None = None

    @property
    def is_local(self) -> bool:
        return self.path is not None

    def __str__(self) -> str:
        return self.requirement or f"{self.name}@{self.path}"


def parse_pin(text: str) -> Pin:
    """Parse ``name==1.2``, ``name>=1``, ``name=/path`` or a bare local folder path."""
    text = text.strip()
    if not text:
        raise ToolchainError("An empty pin was given.", "Write pins as NAME==VERSION or a folder path.")
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*([~./].*)$", text)
    if m and not text.startswith(m.group(1) + "=="):
        return _local_pin(m.group(2), name=m.group(1))
    if text.startswith(("/", "./", "../", "~")) or (os.sep in text and Path(text).expanduser().is_dir()):
        return _local_pin(text)
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>)\s*[^,;\s]+$", text)
    if not m:
        raise ToolchainError(
            f"The pin {text!r} is not a requirement or a folder.",
            "Write it as NAME==VERSION (e.g. quack-kernels==0.4.1) or a path to a source checkout.",
        )
    return Pin(name=normalize_name(m.group(1)), requirement=text)


def _local_pin(path_text: str, name: str | None = None) -> Pin:
    path = Path(path_text).expanduser().resolve()
    if not path.is_dir():
        raise ToolchainError(
            f"The local source folder {path_text!r} does not exist.",
            "Give the path of a checkout that holds the package (e.g. a flash-attention clone).",
        )
    root = local_import_root(path)
    if root is None:
        raise ToolchainError(
            f"The folder {path_text!r} holds none of {', '.join(sorted(LOCAL_PACKAGES))}.",
            "Point the pin at the checkout root (the folder that contains flash_attn/ or quack/).",
        )
    root_path, module = root
    return Pin(name=normalize_name(name or LOCAL_PACKAGES[module]), path=str(root_path))


def local_import_root(path: Path) -> tuple[Path, str] | None:
    """The folder to put on ``sys.path`` for a source checkout, and the package it provides."""
    for candidate in (path, *path.parents[:2]):
        for module in LOCAL_PACKAGES:
            if (candidate / module / "__init__.py").is_file() or (candidate / module / "cute").is_dir():
                return candidate, module
    return None


@dataclass(frozen=True)
class ToolchainSpec:
    """A DSL version plus pins and the CUDA flavour of its libraries."""

    dsl: str
    pins: tuple[Pin, ...] = ()
    cuda: int = 13
    python: str | None = None  # another interpreter for versions with no wheel for this one

    @property
    def label(self) -> str:
        extra = ",".join(str(p) for p in self.pins)
        return f"{self.dsl}" + (f" [{extra}]" if extra else "")

    @property
    def executable(self) -> str:
        """The Python that installs and runs this toolchain."""
        return self.python or sys.executable

    def canonical(self) -> dict:
        out = {
            "dsl": self.dsl,
            "cuda": self.cuda,
            "pins": sorted(str(p.requirement or f"{p.name}@local") for p in self.pins),
        }
        if self.python:
            out["python"] = interpreter_tag(self.python)
        return out

    def local_paths(self) -> list[str]:
        return [p.path for p in self.pins if p.path]


def parse_side(
    text: str, shared: Iterable[str] = (), cuda: int | None = None, python: str | None = None
) -> ToolchainSpec:
    """Parse ``4.8.0,quack-kernels==0.6.5`` with shared ``--with`` pins (side pins win)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ToolchainError("A side was given as an empty string.", "Name a DSL version such as 4.8.0.")
    dsl = parts[0]
    if dsl.startswith(DSL_PACKAGE):
        dsl = dsl.split("==", 1)[-1]
    if not re.match(r"^\d+\.\d+(\.\d+)?([a-z]+\d*|\.post\d+|\.dev\d+)*$", dsl):
        raise ToolchainError(
            f"{dsl!r} is not a CuTe DSL version.",
            "Start each side with a version of nvidia-cutlass-dsl, e.g. 4.5.1 or 4.8.0,quack-kernels==0.6.5.",
        )
    pins: dict[str, Pin] = {}
    for group in (list(shared), parts[1:]):  # side pins override shared ones; within one list, no repeats
        seen: dict[str, Pin] = {}
        for raw in group:
            pin = parse_pin(raw)
            if pin.name == DSL_PACKAGE:
                raise ToolchainError(
                    f"The pin {raw!r} names the DSL itself.", "Put the DSL version first in the side, e.g. 4.8.0."
                )
            if pin.name in seen and seen[pin.name] != pin:
                raise ToolchainError(
                    f"The pins {seen[pin.name]} and {pin} conflict: both name {pin.name}.",
                    "Keep one pin per package (a side's own pin replaces a --with pin of the same package).",
                )
            seen[pin.name] = pin
        pins.update(seen)
    if python:
        interpreter_tag(python)  # a path that is not a runnable Python: one sentence now
    return ToolchainSpec(
        dsl=dsl, pins=tuple(pins[k] for k in sorted(pins)), cuda=cuda or host_cuda_major(), python=python or None
    )


def host_cuda_major() -> int:
    """CUDA major version the host torch was built for (13 when torch is a CPU build or absent)."""
    forced = os.environ.get("CUTEDIFF_CUDA")
    if forced:
        return int(forced)
    try:
        version = md.version("torch")
    except md.PackageNotFoundError:
        return 13
    m = re.search(r"\+cu(\d+)", version)
    if m:
        return int(m.group(1)[:2])
    for req in md.requires("torch") or []:
        if "cu12" in req:
            return 12
        if re.match(r"nvidia-cuda-runtime\b.*==\s*13", req) or "cu13" in req:
            return 13
    return 13


def python_tag() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


_TAGS: dict[str, str] = {}


def interpreter_tag(path: str) -> str:
    """``3.12`` for the Python at ``path`` (asked once); one sentence when it is not a Python."""
    if path in _TAGS:
        return _TAGS[path]
    try:
        proc = subprocess.run(
            [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        tag = proc.stdout.strip() if proc.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        tag = ""
    if not re.match(r"^3\.\d+$", tag):
        raise ToolchainError(
            f"--python {path} is not a Python interpreter that runs here.",
            "Give the path of a python3 executable (uv python find 3.12 prints one).",
        )
    _TAGS[path] = tag
    return tag


def env_key(spec: ToolchainSpec, python: str | None = None, machine: str | None = None) -> str:
    payload = {
        "format": ENV_FORMAT,
        "spec": spec.canonical(),
        "python": python or (interpreter_tag(spec.python) if spec.python else python_tag()),
        "machine": machine or platform.machine(),
        "base": list(BASE_REQUIREMENTS),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def env_name(spec: ToolchainSpec, key: str) -> str:
    return f"dsl-{spec.dsl}-cu{spec.cuda}-{key[:8]}"


@dataclass
class Env:
    """A created toolchain environment."""

    path: Path
    spec: ToolchainSpec
    key: str
    lock: dict[str, dict] = field(default_factory=dict)

    @property
    def site(self) -> Path:
        return self.path / "site"

    @property
    def name(self) -> str:
        return self.path.name

    def versions(self) -> dict[str, str]:
        return {k: v["version"] for k, v in sorted(self.lock.items())}

    def lock_digest(self) -> str:
        return hashlib.sha256(json.dumps(self.lock, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------- published versions


def _index_url() -> str:
    for var in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX_URL"):
        if os.environ.get(var):
            return os.environ[var].rstrip("/")
    return "https://pypi.org/simple"


def published_versions(package: str = DSL_PACKAGE, *, max_age: float = 6 * 3600, offline: bool = False) -> list[str]:
    """Versions of ``package`` on the package index (cached; stale cache used when offline)."""
    cache_file = cache_dir() / "index" / f"{normalize_name(package)}.json"
    cached: list[str] | None = None
    if cache_file.is_file():
        try:
            data = json.loads(cache_file.read_text())
            cached = data["versions"]
            if offline or time.time() - data["time"] < max_age:
                return cached
        except (ValueError, KeyError):
            cached = None
    if offline:
        return cached or []
    url = f"{_index_url()}/{normalize_name(package)}/"
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            data = json.loads(resp.read())
        versions = [v for v in data.get("versions", []) if not _yanked_only(data, v)]
        pythons = wheel_tags(data)
    except Exception:
        if cached is not None:
            return cached
        raise ToolchainError(
            f"Could not reach the package index ({url}) to list {package} versions.",
            "Check the network, or create environments from a wheelhouse (cutediff env create --wheelhouse DIR).",
        ) from None
    versions.sort(key=version_key)
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")  # threads of a sweep too
    tmp.write_text(json.dumps({"time": time.time(), "versions": versions, "pythons": pythons}))
    os.replace(tmp, cache_file)
    return versions


def wheel_tags(data: dict) -> dict[str, list[str]]:
    """version → the Python tags of its wheels (``cp312``, ``py3``), from the index's file list."""
    out: dict[str, set[str]] = {}
    for f in data.get("files", []):
        m = re.match(r"^[A-Za-z0-9_.]+-([^-]+)-(?:\d[^-]*-)?([^-]+)-[^-]+-[^-]+\.whl$", f.get("filename", ""))
        if m:
            out.setdefault(m.group(1), set()).update(m.group(2).split("."))
    return {v: sorted(t) for v, t in out.items()}


def wheel_pythons(version: str, package: str = DSL_PACKAGE) -> list[str] | None:
    """The Python tags ``version``'s wheels are built for (from the cached index listing), or None
    when unknown (offline, or an older cache)."""
    for attempt in range(2):
        try:
            data = json.loads(_index_cache(package).read_text())
        except (OSError, ValueError):
            data = {}
        if "pythons" in data or attempt:
            return (data.get("pythons") or {}).get(version)
        try:  # no listing yet, or one written before the tags were kept
            published_versions(package, max_age=0)
        except ToolchainError:
            return None
    return None


def _index_cache(package: str) -> Path:
    return cache_dir() / "index" / f"{normalize_name(package)}.json"


def runs_on(tags: list[str], python: str) -> bool:
    """Whether wheels tagged ``tags`` install on Python ``3.N``."""
    cp = "cp" + python.replace(".", "")
    return any(t in ("py3", cp) or t.startswith("py3") for t in tags)


def resolve_python(spec: ToolchainSpec, progress: Progress = _noop) -> ToolchainSpec:
    """``spec`` with a Python its DSL version has wheels for: the one given (checked), this one, or
    one ``uv python find`` finds; one sentence when there is none."""
    tags = wheel_pythons(spec.dsl)
    if not tags:
        return spec
    wanted = ", ".join(sorted({f"{t[2]}.{t[3:]}" for t in tags if re.match(r"^cp3\d+$", t)})) or ", ".join(tags)
    if spec.python:
        tag = interpreter_tag(spec.python)
        if not runs_on(tags, tag):
            raise ToolchainError(
                f"CuTe DSL {spec.dsl} publishes wheels only for Python {wanted}, and --python {spec.python} is Python {tag}.",
                f"Pass --python with a Python {wanted} interpreter (uv python find {wanted.split(', ')[0]}).",
            )
        return spec
    if runs_on(tags, python_tag()):
        return spec
    for t in sorted((t for t in tags if re.match(r"^cp3\d+$", t)), reverse=True):
        version = f"{t[2]}.{t[3:]}"
        try:
            proc = subprocess.run(
                [uv_bin(), "python", "find", version], capture_output=True, text=True, timeout=60, env=_uv_env()
            )
        except (OSError, subprocess.TimeoutExpired, ToolchainError):
            continue
        found = proc.stdout.strip().splitlines()[-1:] if proc.returncode == 0 else []
        if found and Path(found[0]).is_file():
            progress(f"CuTe DSL {spec.dsl} has wheels only for Python {wanted}: using {found[0]}")
            return ToolchainSpec(spec.dsl, spec.pins, spec.cuda, python=found[0])
    raise ToolchainError(
        f"CuTe DSL {spec.dsl} publishes wheels only for Python {wanted}, and this machine has none "
        f"(cutediff runs on Python {python_tag()}).",
        f"Install one (uv python install {wanted.split(', ')[-1]}) and pass --python PATH, or pick DSL 4.2 or newer.",
    )


def _uv_env() -> dict:
    env = dict(os.environ)
    env.setdefault("UV_NO_PROGRESS", "1")
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    return env


def _yanked_only(data: dict, version: str) -> bool:
    files = [f for f in data.get("files", []) if f"-{version}-" in f.get("filename", "")]
    return bool(files) and all(f.get("yanked") for f in files)


def version_key(v: str) -> tuple:
    """Sort key in PEP 440 order (4.8.0.dev0 < 4.8.0rc1 < 4.8.0 < 4.8.0.post1, by
    :mod:`packaging.version`); a string that is not a version sorts before all versions, by its text."""
    from packaging.version import InvalidVersion, Version

    try:
        return (1, Version(v), "")
    except InvalidVersion:
        return (0, Version("0"), v)


def nearby_versions(version: str, versions: list[str], n: int = 5) -> list[str]:
    """Published versions closest to an unknown one (same major.minor first)."""
    prefix = ".".join(version.split(".")[:2])
    same = [v for v in versions if v.startswith(prefix + ".") or v == prefix]
    if same:
        return same[-n:]
    vk = version_key(version)
    ordered = sorted(versions, key=version_key)
    idx = next((i for i, v in enumerate(ordered) if version_key(v) > vk), len(ordered))
    return ordered[max(0, idx - n // 2) : idx + (n - n // 2)]


def check_published(spec: ToolchainSpec, offline: bool = False, check_python: bool = True) -> None:
    """Fail with a helpful sentence if the DSL version is not on the index (or, unless ``check_python``
    is off, has no wheel for any Python here: a sweep reports that per cell instead)."""
    try:
        versions = published_versions(offline=offline)
    except ToolchainError:
        return  # let the resolver report the network problem
    if versions and spec.dsl not in versions:
        near = nearby_versions(spec.dsl, versions)
        raise ToolchainError(
            f"CuTe DSL {spec.dsl} is not published on the package index.",
            f"Published versions near it: {', '.join(near)}.",
        )
    if check_python and not offline:
        resolve_python(spec)  # a version with no wheel for any Python here: one sentence now


# ---------------------------------------------------------------- uv helpers


_UV_LOCK = threading.Lock()
_UV_PATH: list[str] = []


def uv_bin() -> str:
    """Path of the uv binary (the ``uv`` PyPI package, else beside this Python, else PATH)."""
    with _UV_LOCK:
        if _UV_PATH:
            return _UV_PATH[0]
        found: str | None = None
        try:
            from uv import find_uv_bin

            found = find_uv_bin()
        except Exception:
            found = None
        if not found:
            beside = Path(sys.executable).parent / "uv"
            found = str(beside) if beside.is_file() else shutil.which("uv")
        if not found:
            raise ToolchainError("The uv binary was not found.", "Install it with: pip install uv")
        _UV_PATH.append(found)
        return found


def _run_uv(args: list[str], *, what: str, env: dict | None = None, timeout: float = 1800) -> str:
    cmd = [uv_bin(), *args]
    run_env = dict(os.environ)
    run_env.setdefault("UV_NO_PROGRESS", "1")
    if env:
        run_env.update(env)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{what} timed out after {int(timeout)} s.", "Check the network and try again.") from None
    if proc.returncode != 0:
        reason = _uv_reason(proc.stderr)
        raise ToolchainError(
            f"{what} failed: {reason}" + ("" if reason.endswith((".", "!", "?")) else "."), _uv_hint(proc.stderr)
        )
    return proc.stdout


def _uv_reason(stderr: str) -> str:
    m = re.search(r"Because (\S+) has no wheels with a matching (Python [\w ]+?tag|platform tag)[^)]*\)?", stderr)
    if m:  # the resolver's long explanation cut to what a user needs
        return f"{m.group(0).removeprefix('Because ').strip()}"
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    interesting = [ln for ln in lines if not ln.startswith(("Resolved", "Prepared", "Installed", "Using"))]
    text = " ".join(interesting[:4]) or "uv reported an error"
    text = re.sub(r"\s+", " ", text.replace("×", "").replace("╰─▶", "")).strip()
    return text[:400]


def _uv_hint(stderr: str) -> str:
    low = stderr.lower()
    if "network" in low or "dns" in low or "connect" in low or "offline" in low:
        return "Check the network, or build from a wheelhouse: cutediff env download on a connected machine, then env create --wheelhouse DIR."
    if "no matching distribution" in low or "no wheels" in low or "only has wheels" in low:
        return (
            f"That version has no wheel for Python {python_tag()} on this platform; pick another version, "
            "or run cutediff with a Python it has wheels for."
        )
    if "no solution" in low or "unsatisfiable" in low or "not found in the package registry" in low:
        return "Check the pinned versions (cutediff env list shows what resolved before)."
    return "Run again with --debug for uv's full output."


def _uv_platform(pip_platform: str) -> str:
    """``manylinux_2_28_x86_64`` (pip) → ``x86_64-manylinux_2_28`` (uv)."""
    m = re.match(r"^(manylinux_\d+_\d+|manylinux\d+)_(x86_64|aarch64)$", pip_platform)
    if m:
        return f"{m.group(2)}-{m.group(1)}"
    return pip_platform


def requirement_files(spec: ToolchainSpec, workdir: Path) -> dict[str, Path]:
    """Write the requirement, override and exclude files the resolver needs."""
    dsl_req = f"{DSL_PACKAGE}[cu{spec.cuda}]=={spec.dsl}"
    reqs = [dsl_req, *BASE_REQUIREMENTS]
    overrides = [dsl_req]
    excludes = list(EXCLUDED)
    # DSL 4.8+ requires both CUDA flavours of its libraries; only one is used (~90 MB each).
    excludes.append(f"{DSL_PACKAGE}-libs-cu{12 if spec.cuda == 13 else 13}")
    for pin in spec.pins:
        if pin.is_local:
            excludes.append(pin.name)
        else:
            reqs.append(pin.requirement)  # type: ignore[arg-type]
            overrides.append(pin.requirement)  # type: ignore[arg-type]
    if any(p.name == "flash-attn-4" for p in spec.pins) and not any(p.name == "quack-kernels" for p in spec.pins):
        pass  # flash-attn-4 pulls its own quack-kernels through the resolver
    files = {"req": workdir / "requirements.in", "ovr": workdir / "overrides.txt", "exc": workdir / "excludes.txt"}
    files["req"].write_text("\n".join(reqs) + "\n")
    files["ovr"].write_text("\n".join(overrides) + "\n")
    files["exc"].write_text("\n".join(excludes) + "\n")
    return files


def resolve_lock(
    spec: ToolchainSpec,
    workdir: Path,
    *,
    python_version: str | None = None,
    pip_platform: str | None = None,
    wheelhouse: Path | None = None,
) -> Path:
    """Resolve the spec to a hashed lock file (``uv pip compile --generate-hashes``)."""
    files = requirement_files(spec, workdir)
    out = workdir / "lock.txt"
    args = [
        "pip",
        "compile",
        "-q",
        str(files["req"]),
        "--overrides",
        str(files["ovr"]),
        "--excludes",
        str(files["exc"]),
        "--generate-hashes",
        "--no-header",
        "-o",
        str(out),
    ]
    if python_version:
        args += ["--python-version", python_version]
    else:
        args += ["--python", spec.executable]
    if pip_platform:
        args += ["--python-platform", _uv_platform(pip_platform)]
    if wheelhouse:
        args += ["--offline", "--no-index", "--find-links", str(wheelhouse)]
    _run_uv(args, what=f"Resolving CuTe DSL {spec.dsl} with {', '.join(map(str, spec.pins)) or 'no pins'}")
    return out


def parse_lock(text: str) -> dict[str, dict]:
    """``name==version \\ --hash=sha256:...`` lines → {name: {version, hashes}}."""
    result: dict[str, dict] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s\\;]+)", line)
        if m:
            current = normalize_name(m.group(1))
            result[current] = {"version": m.group(3), "hashes": []}
        for h in re.findall(r"--hash=(\S+)", line):
            if current:
                result[current]["hashes"].append(h)
    return result


def split_lock(text: str, prefix: str) -> tuple[str, str]:
    """Split a hashed lock into (entries not starting with ``prefix``, entries that do)."""
    keep: list[str] = []
    picked: list[str] = []
    target = keep
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if m and not line.startswith((" ", "#")):
            target = picked if normalize_name(m.group(1)).startswith(prefix) else keep
        target.append(line)
    return "\n".join(keep) + "\n", ("\n".join(picked) + "\n") if picked else ""


# ---------------------------------------------------------------- environments


def _env_dirs() -> Iterable[Path]:
    root = envs_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def find_env(spec: ToolchainSpec) -> Env | None:
    """The created environment for ``spec``; local source pins are taken from ``spec`` itself
    (they are not installed, so one environment serves any checkout path)."""
    key = env_key(spec)
    path = envs_dir() / env_name(spec, key)
    env = load_env(path)
    if env is not None:
        env.spec = spec
    return env


def load_env(path: Path) -> Env | None:
    meta = path / "env.json"
    if not meta.is_file():
        return None
    try:
        data = json.loads(meta.read_text())
        pins = tuple(Pin(**p) for p in data["spec"]["pins"])
        spec = ToolchainSpec(
            dsl=data["spec"]["dsl"], pins=pins, cuda=data["spec"]["cuda"], python=data.get("interpreter")
        )
        lock = data["lock"]
        if not isinstance(lock, dict) or not all(isinstance(v, dict) and "version" in v for v in lock.values()):
            return None  # an env.json edited or cut short: not an environment cutediff can use
        return Env(path=path, spec=spec, key=data["key"], lock=lock)
    except (ValueError, KeyError, TypeError):
        return None


def clean_stale(progress: Progress = _noop) -> int:
    """Remove half-created environments left by a crash (temporary folders with no live owner)."""
    root = envs_dir()
    removed = 0
    if not root.is_dir():
        return 0
    for p in root.iterdir():
        if p.name.startswith(".tmp-"):
            m = re.search(r"-(\d+)$", p.name)
            if m and pid_alive(int(m.group(1))):
                continue
            shutil.rmtree(p, ignore_errors=True)
            removed += 1
            progress(f"removed a half-created environment left by an earlier crash ({p.name})")
    return removed


def create_env(
    spec: ToolchainSpec,
    *,
    wheelhouse: Path | None = None,
    progress: Progress = _noop,
    check_index: bool = True,
) -> Env:
    """Create (or reuse) the locked overlay environment for ``spec``."""
    if wheelhouse is None:
        spec = resolve_python(spec, progress)
    existing = find_env(spec)
    if existing:
        cache_decision(f"environment {spec.label}", existing.name, "hit", "reused")
        return existing
    key = env_key(spec)
    cache_decision(f"environment {spec.label}", key, "miss, creating", "not in the cache")
    root = envs_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / env_name(spec, key)
    with file_lock(root / f".{key}.lock"):
        existing = load_env(final)
        if existing:
            existing.spec = spec
            return existing
        clean_stale(progress)
        if final.exists():  # no readable env.json: a removal or an older cutediff was cut short
            progress(f"replacing the incomplete environment {final.name}")
            _discard(final)
        if check_index and wheelhouse is None:
            check_published(spec)
        tmp = root / f".tmp-{key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            t0 = time.monotonic()
            lock_path = None
            if wheelhouse is not None:
                wheelhouse = Path(wheelhouse).expanduser().resolve()
                if not wheelhouse.is_dir():
                    raise ToolchainError(
                        f"The wheelhouse {wheelhouse} does not exist.", "Fill it first with cutediff env download."
                    )
                candidate = wheelhouse / f"cutediff-lock-{key}.txt"
                if candidate.is_file():
                    lock_path = tmp / "lock.txt"
                    shutil.copy(candidate, lock_path)
                    progress(f"using the lock stored in the wheelhouse for {spec.label}")
            if lock_path is None:
                progress(EnvStage(None, "resolving", spec.label, cuda=spec.cuda))
                lock_path = resolve_lock(spec, tmp, wheelhouse=wheelhouse)
            progress(EnvStage(None, "installing", spec.label, final.name))
            # DSL <= 4.5 ships the CUDA-flavoured libraries as files that overwrite the base wheel's
            # (same paths): install them in a second step so that they always win.
            main_lock, flavour_lock = split_lock(lock_path.read_text(), f"{DSL_PACKAGE}-libs-cu")
            for part, text in (("main", main_lock), ("flavour", flavour_lock)):
                if not text.strip():
                    continue
                part_path = tmp / f"lock-{part}.txt"
                part_path.write_text(text)
                args = [
                    "pip",
                    "install",
                    "-q",
                    "--target",
                    str(tmp / "site"),
                    "--no-deps",
                    "--require-hashes",
                    "-r",
                    str(part_path),
                    "--python",
                    spec.executable,
                    "--link-mode",
                    "copy",
                ]
                if part == "flavour":
                    args.append("--reinstall")
                if wheelhouse is not None:
                    args += ["--offline", "--no-index", "--find-links", str(wheelhouse)]
                _run_uv(args, what=f"Installing CuTe DSL {spec.label}")
            lock = parse_lock(lock_path.read_text())
            (tmp / "env.json").write_text(
                json.dumps(
                    {
                        "format": ENV_FORMAT,
                        "key": key,
                        "spec": {"dsl": spec.dsl, "cuda": spec.cuda, "pins": [asdict(p) for p in spec.pins]},
                        "lock": lock,
                        "python": interpreter_tag(spec.python) if spec.python else python_tag(),
                        "interpreter": spec.python,
                        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                        "seconds": round(time.monotonic() - t0, 2),
                        "wheelhouse": str(wheelhouse) if wheelhouse else None,
                    },
                    indent=1,
                )
            )
            os.replace(tmp, final)
            progress(EnvStage(None, "ready", spec.label, final.name, seconds=time.monotonic() - t0))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    env = load_env(final)
    assert env is not None
    env.spec = spec
    return env


def list_envs() -> list[Env]:
    """The created environments, by DSL version in PEP 440 order (4.10.0 after 4.9.0)."""
    envs = [e for e in (load_env(p) for p in _env_dirs()) if e]
    return sorted(envs, key=lambda e: (version_key(e.spec.dsl), e.name))


def remove_env(target: str) -> list[str]:
    """Remove environments whose name or DSL version matches ``target``; returns the names."""
    removed = []
    for env in list_envs():
        if target in (env.name, env.spec.dsl, env.key):
            _discard(env.path)
            removed.append(env.name)
    return removed


def _discard(path: Path) -> None:
    """Remove an environment folder so that no half of it is left looking usable: rename it to a
    temporary name first (swept by :func:`clean_stale` if this process dies), then delete it."""
    tmp = path.with_name(f".tmp-rm-{path.name}-{os.getpid()}")
    try:
        os.replace(path, tmp)
    except OSError:
        tmp = path
    shutil.rmtree(tmp, ignore_errors=True)


def download_env(
    spec: ToolchainSpec,
    dest: Path,
    *,
    python_version: str,
    pip_platform: str,
    progress: Progress = _noop,
) -> Path:
    """Fill a wheelhouse with every wheel ``spec`` needs on another machine; returns the lock path."""
    dest = Path(dest).expanduser().resolve()
    dest.mkdir(parents=True, exist_ok=True)
    check_published(spec)
    machine = "aarch64" if "aarch64" in pip_platform else "x86_64"
    key = env_key(spec, python=python_version, machine=machine)
    work = dest / f".tmp-{key}-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        progress(f"resolving {spec.label} for Python {python_version} on {pip_platform}")
        lock_path = resolve_lock(spec, work, python_version=python_version, pip_platform=pip_platform)
        progress(f"downloading wheels into {dest}")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python_version,
            "--implementation",
            "cp",
            "--platform",
            pip_platform,
            "-d",
            str(dest),
            "-r",
            str(lock_path),
        ]
        if pip_platform.startswith("manylinux_2_"):
            # pip matches platform tags exactly; older manylinux tags are compatible too.
            for older in ("manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"):
                if "x86_64" in pip_platform:
                    cmd += ["--platform", older]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolchainError(
                f"Downloading wheels for {spec.label} failed: {_uv_reason(proc.stderr)}", _uv_hint(proc.stderr)
            )
        final_lock = dest / f"cutediff-lock-{key}.txt"
        shutil.copy(lock_path, final_lock)
        return final_lock
    finally:
        shutil.rmtree(work, ignore_errors=True)


_TAG_MEMO: dict[tuple[str, float], dict] = {}


def _cached_tags() -> dict[str, list[str]]:
    """The DSL's wheel tags from the cached index listing, read once per change of the file."""
    path = _index_cache(DSL_PACKAGE)
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        return {}
    if key not in _TAG_MEMO:
        try:
            data = json.loads(path.read_text())
            _TAG_MEMO.clear()
            _TAG_MEMO[key] = (data.get("pythons") or {}) if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}
    return _TAG_MEMO[key]


def version_needs(version: str, short: bool = False) -> str | None:
    """What DSL ``version`` needs to compile on a machine without a GPU driver (from the cached
    index listing only: no network); None when it runs as it is; ``short`` for a list entry.
    Measured on this project's CPU-only machine: docs/toolchains.md."""
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return None
    notes = []
    tags = _cached_tags().get(version)
    if tags and not runs_on(tags, python_tag()):
        wanted = ", ".join(sorted({f"{t[2]}.{t[3:]}" for t in tags if re.match(r"^cp3\d+$", t)}))
        notes.append(f"Python {wanted}" if short else f"needs Python {wanted} (--python), no wheel for {python_tag()}")
    if v < Version("4.3"):
        notes.append("too old" if short else "lacks cute.sym_int and fake tensors: the samples and FA4 cannot compile")
    elif v < Version("4.4"):
        notes.append("2 shims" if short else "shims: driver check and JIT lookup skipped")
    elif v < Version("4.5"):
        notes.append("shim" if short else "shim: driver check skipped")
    return ("; " if not short else ", ").join(notes) or None
