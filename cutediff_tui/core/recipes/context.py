"""What a recipe receives inside the worker."""

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
