"""Stand-ins for packages that kernel sources import but a compile never runs.

quack-kernels >= 0.5 imports triton at module level (its autotuner and fused Triton kernels), and
flash-attn-4 betas that depend on it import it through quack. torch's CPU build has no triton, and
a compile of CuTe kernels never calls it. The worker installs a finder at the *end* of
``sys.meta_path`` before any recipe runs, so a real triton always wins; the stand-in acts only when
nothing else supplies the package, and says so once in the build's notes.

Standard library only: this runs inside every toolchain worker.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

#: Compile-time-only imports a stand-in can serve: top-level module → the pin that supplies it.
COMPILE_ONLY = {"triton": "triton==3.5.0"}

#: Top-level modules kernel sources import → the distribution (pin) that supplies them.
PACKAGE_OF = {
    "triton": "triton",
    "quack": "quack-kernels",
    "flash_attn": "flash-attn-4",
    "einops": "einops",
    "tvm_ffi": "apache-tvm-ffi",
    "cuda": "cuda-python",
    "numpy": "numpy",
    "torch": "torch",
    "cutlass": "nvidia-cutlass-dsl",
}


def _stand_in(name: str, root: str) -> Any:
    """A class for names that look like classes (usable in ``isinstance`` and as a base), else an object."""
    if name[:1].isupper():
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__module__": root})
    return Anything(root)


class Anything:
    """Stands in for any object at import time: attribute, call, decorator, base class."""

    def __init__(self, root: str = "stub", *_a: Any, **_k: Any) -> None:
        self._root = root if isinstance(root, str) else "stub"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator: keep the function (it is never run here)
        return Anything(self._root)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(name, self._root)

    def __getitem__(self, _key: Any) -> Any:
        return Anything(self._root)

    def __mro_entries__(self, _bases: tuple) -> tuple:
        return (object,)


class StubModule(types.ModuleType):
    """A module whose every attribute is a stand-in (the same object each time)."""

    def __getattr__(self, name: str) -> Any:
        if name == "__version__":  # torch probes `import triton; triton.__version__` under except ImportError
            raise ImportError(f"{self.__name__} is not installed (cutediff stub)")
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stand_in(name, self.__name__.split(".")[0])
        setattr(self, name, value)
        return value


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves stand-ins for ``roots`` when no finder before it found the real package."""

    def __init__(self, roots: tuple[str, ...], note: Callable[[str], None] | None = None) -> None:
        self.roots = roots
        self.note = note
        self.used: set[str] = set()
        self._probing = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        root = fullname.split(".")[0]
        if root not in self.roots or self._probing:
            return None
        if root not in self.used:
            self._first_use(root)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _first_use(self, root: str) -> None:
        if root == "triton":  # torch asks once and caches the answer: let it hear "no triton" first
            self._probing = True
            try:
                if importlib.util.find_spec("torch") is not None:
                    from torch.utils import _triton as torch_triton

                    torch_triton.has_triton_package()
                    if hasattr(torch_triton, "get_triton_version"):
                        torch_triton.get_triton_version()
            except Exception:
                pass
            finally:
                self._probing = False
        self.used.add(root)
        if self.note is not None:
            self.note(
                f"{root} is not installed: a stub stands in for its imports (compile only; "
                f"pin {COMPILE_ONLY.get(root, root)} for the real one)"
            )

    def create_module(self, spec):
        mod = StubModule(spec.name)
        mod.__path__ = []  # a package: any submodule imports
        mod.__cutediff_stub__ = True
        return mod

    def exec_module(self, module) -> None:
        pass


def install(note: Callable[[str], None] | None = None) -> StubFinder | None:
    """Put the stand-in finder last on ``sys.meta_path`` (once); None if it is already there."""
    if any(isinstance(f, StubFinder) for f in sys.meta_path):
        return None
    finder = StubFinder(tuple(COMPILE_ONLY), note)
    sys.meta_path.append(finder)
    return finder


def pin_for_missing(module: str | None) -> str | None:
    """The distribution that supplies a missing top-level module, if cutediff knows it."""
    if not module:
        return None
    return PACKAGE_OF.get(module.split(".")[0])
