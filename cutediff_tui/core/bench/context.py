"""What a recipe's bench hook receives inside the bench worker, on a real GPU.

A bench hook is ``hook(ctx) -> callable``: it makes real inputs for ``ctx.params`` (torch tensors
on the GPU), compiles or looks up the kernels, and returns a function of no arguments that runs
them once. cutediff warms it up, times it with CUDA events, profiles it per kernel (CUPTI) and,
with ``--profile``, under Nsight Compute. Standard library only at import time: this module is
imported inside any toolchain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3fn"}


@dataclass
class BenchContext:
    """Target arch, parameters, a seeded generator and helpers for real GPU inputs."""

    arch: str
    params: dict[str, Any]
    label: str = ""
    seed: int = 0
    notes: list[str] = field(default_factory=list)
    _generator: Any = None

    def note(self, text: str) -> None:
        self.notes.append(text)

    def dtype(self, name: str | None = None):
        """The torch dtype for ``name`` (``bf16``, ``fp16``, ``fp32``, ``fp8``; default: ``params["dtype"]``)."""
        import torch

        name = name or self.params.get("dtype", "bf16")
        return getattr(torch, _TORCH_DTYPES.get(name, name))

    @property
    def generator(self):
        """A CUDA generator seeded with ``seed``: the same inputs on both sides."""
        import torch

        if self._generator is None:
            self._generator = torch.Generator(device="cuda").manual_seed(self.seed)
        return self._generator

    def randn(self, *shape: int, dtype: Any = None):
        """Random normal data on the GPU (never zeros: they hide unwritten outputs and time faster)."""
        import torch

        dt = dtype if dtype is not None and not isinstance(dtype, str) else self.dtype(dtype)
        return torch.randn(*shape, dtype=dt, device="cuda", generator=self.generator)

    def empty(self, *shape: int, dtype: Any = None):
        import torch

        dt = dtype if dtype is not None and not isinstance(dtype, str) else self.dtype(dtype)
        return torch.empty(*shape, dtype=dt, device="cuda")

    def to_cute(self, tensor: Any, *, assumed_align: int = 16):
        """A torch tensor as a ``cute.Tensor`` (``cute.runtime.from_dlpack``), for ``cute.compile``
        and for calling the compiled kernel."""
        from cutlass.cute.runtime import from_dlpack

        return from_dlpack(tensor, assumed_align=assumed_align)
