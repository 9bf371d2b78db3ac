"""What a recipe receives inside the worker.

Two ways to give ``cute.compile`` its arguments without a GPU, both here:

* torch tensors on ``"cuda"`` made inside :meth:`RecipeContext.fake_mode` (torch's
  ``FakeTensorMode``), for kernel packages whose entry points take torch tensors (FA4);
* the DSL's own fake tensors (:meth:`RecipeContext.fake_tensor`, ``cute.runtime.make_fake_*``),
  which need no torch at all, with :meth:`RecipeContext.fake_stream` for a stream argument.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecipeContext:
    """Target arch, parameters and helpers to make fake tensors (no GPU needed)."""

    arch: str
    params: dict[str, Any]
    num_sms: int
    notes: list[str] = field(default_factory=list)
    _mode: Any = None

    @contextlib.contextmanager
    def fake_mode(self):
        """``torch._subclasses.fake_tensor.FakeTensorMode``: tensors on "cuda" without a GPU."""
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode() as mode:
            self._mode = mode
            try:
                yield mode
            finally:
                self._mode = None

    def dtype(self, name: str | None = None):
        import torch

        name = name or self.params.get("dtype", "bf16")
        return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp8": torch.float8_e4m3fn}[name]

    def empty(self, *shape: int, dtype=None, device: str = "cuda"):
        """A tensor of ``shape`` (fake when inside :meth:`fake_mode`)."""
        import torch

        if dtype is None:
            dtype = self.dtype()
        elif isinstance(dtype, str):
            dtype = self.dtype(dtype) if dtype in ("bf16", "fp16", "fp32", "fp8") else getattr(torch, dtype)
        return torch.empty(*shape, dtype=dtype, device=device)

    def note(self, text: str) -> None:
        """Record a remark in the manifest."""
        self.notes.append(text)

    # ------------------------------------------------------------------ DSL-only helpers

    @property
    def dsl_version(self) -> tuple[int, ...]:
        """The toolchain's ``nvidia-cutlass-dsl`` version, e.g. ``(4, 8, 0)`` (``(0,)`` if unknown)."""
        import importlib.metadata as md
        import re

        try:
            return tuple(int(x) for x in re.findall(r"\d+", md.version("nvidia-cutlass-dsl"))[:3])
        except md.PackageNotFoundError:
            return (0,)

    @property
    def arch_number(self) -> int:
        """``sm_103a`` → 103, ``sm_90a`` → 90."""
        return int("".join(c for c in self.arch if c.isdigit()))

    def cute_dtype(self, name: Any = None):
        """A ``cutlass`` numeric type from ``bf16``/``fp16``/``fp32``/``fp8``/``int8``/``int32``/``int64``
        (default: the ``dtype`` parameter); a ``cutlass`` type is returned as it is."""
        import cutlass

        if name is None:
            name = self.params.get("dtype", "bf16")
        if not isinstance(name, str):
            return name
        table = {
            "bf16": "BFloat16",
            "fp16": "Float16",
            "fp32": "Float32",
            "fp64": "Float64",
            "fp8": "Float8E4M3FN",
            "e4m3": "Float8E4M3FN",
            "e5m2": "Float8E5M2",
            "int8": "Int8",
            "int16": "Int16",
            "int32": "Int32",
            "int64": "Int64",
            "uint8": "Uint8",
            "uint32": "Uint32",
            "bool": "Boolean",
        }
        return getattr(cutlass, table.get(name, name))

    def sym_int(self, divisibility: int = 1):
        """A dynamic extent for a fake tensor (``cute.sym_int``)."""
        import cutlass.cute as cute

        return cute.sym_int(divisibility=divisibility)

    def fake_tensor(
        self,
        dtype: Any,
        shape: tuple,
        *,
        stride: tuple | None = None,
        order: tuple | None = None,
        align: int | None = None,
    ):
        """A DSL fake tensor for ``cute.compile`` (no torch, no GPU).

        ``shape`` entries may be ints or ``None`` (a dynamic extent). Without ``stride`` the layout
        is compact and row-major (last mode contiguous, as torch); ``order`` gives the DSL's
        ``stride_order`` instead (0 = fastest mode). ``align`` is the assumed byte alignment.
        """
        import cutlass.cute as cute

        dt = self.cute_dtype(dtype)
        shape = tuple(cute.sym_int() if s is None else s for s in shape)
        kw: dict[str, Any] = {}
        if align is not None:
            kw["assumed_align"] = align
        if stride is not None:
            stride = tuple(cute.sym_int64() if s is None else s for s in stride)
            return cute.runtime.make_fake_tensor(dt, shape, stride, **kw)
        if order is None:
            order = tuple(reversed(range(len(shape))))
        return cute.runtime.make_fake_compact_tensor(dt, shape, stride_order=order, **kw)

    def fake_stream(self, *, tvm_ffi_env_stream: bool = False):
        """A placeholder CUDA stream argument for ``cute.compile`` (``cute.runtime.make_fake_stream``)."""
        import cutlass.cute as cute

        return cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=tvm_ffi_env_stream)
