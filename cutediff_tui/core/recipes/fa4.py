"""FlashAttention-4 recipes (``flash_attn.cute``), run inside a toolchain worker.

Imports of torch and flash_attn happen inside the functions: the host lists these recipes
without either installed.
"""

from __future__ import annotations

from typing import Any


def _shapes(ctx) -> dict[str, Any]:
    p = ctx.params
    hdim = p["hdim"]
    hdim_v = p["hdim_v"] or hdim
    heads = p["heads"]
    kv_heads = p["kv_heads"] or heads
    if p["varlen"]:
        total, docs = p["total"], p["docs"]
        if docs < 1 or total < docs:
            raise ValueError(f"--total {total} must be at least --docs {docs} (>= 1)")
        return dict(
            varlen=True,
            q=(total, heads, hdim),
            k=(total, kv_heads, hdim),
            v=(total, kv_heads, hdim_v),
            o=(total, heads, hdim_v),
            lse=(heads, total),
            docs=docs,
            max_seqlen=(total + docs - 1) // docs,
        )
    b, s = p["batch"], p["seqlen"]
    return dict(
        varlen=False,
        q=(b, s, heads, hdim),
        k=(b, s, kv_heads, hdim),
        v=(b, s, kv_heads, hdim_v),
        o=(b, s, heads, hdim_v),
        lse=(b, heads, s),
    )


def _window(ctx) -> dict[str, Any]:
    w = ctx.params.get("window")
    if not w:
        return {}
    return {"window_size_left": int(w[0]), "window_size_right": int(w[1])}


def _varlen_kwargs(ctx, sh) -> dict[str, Any]:
    import torch

    if not sh["varlen"]:
        return {}
    cu = ctx.empty(sh["docs"] + 1, dtype=torch.int32)
    return dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=sh["max_seqlen"], max_seqlen_k=sh["max_seqlen"])


def _fwd(ctx, sh):
    from flash_attn.cute.interface import _flash_attn_fwd

    q, k, v = ctx.empty(*sh["q"]), ctx.empty(*sh["k"]), ctx.empty(*sh["v"])
    return _flash_attn_fwd(
        q, k, v, causal=ctx.params["causal"], return_lse=True, **_varlen_kwargs(ctx, sh), **_window(ctx)
    )


def _bwd(ctx, sh, out=None, lse=None):
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd

    q, k, v = ctx.empty(*sh["q"]), ctx.empty(*sh["k"]), ctx.empty(*sh["v"])
    if out is None:
        out = ctx.empty(*sh["o"])
    if lse is None:
        lse = ctx.empty(*sh["lse"], dtype=torch.float32)
    dout = ctx.empty(*sh["o"])
    # Autograd's .backward() needs a real CUDA torch; the backward entry point works under fakes.
    return _flash_attn_bwd(
        q, k, v, out, dout, lse, causal=ctx.params["causal"], **_varlen_kwargs(ctx, sh), **_window(ctx)
    )


def fa4_fwd(ctx) -> None:
    """Compile the FA4 forward kernel for ``ctx.arch``."""
    sh = _shapes(ctx)
    with ctx.fake_mode():
        _fwd(ctx, sh)


def fa4_bwd(ctx) -> None:
    """Compile the FA4 backward kernels (preprocess, main, postprocess)."""
    sh = _shapes(ctx)
    with ctx.fake_mode():
        _bwd(ctx, sh)


def fa4_fwdbwd(ctx) -> None:
    """Compile FA4 forward, then backward with the forward's outputs."""
    sh = _shapes(ctx)
    with ctx.fake_mode():
        result = _fwd(ctx, sh)
        out, lse = (result[0], result[1]) if isinstance(result, tuple) else (None, None)
        _bwd(ctx, sh, out, lse)


# ---------------------------------------------------------------- bench hooks (real GPU inputs)


def _bench(ctx, mode: str):
    """Real inputs for ``ctx.params`` and a callable running FA4 ``mode`` once (``cutediff bench``)."""
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd, _flash_attn_fwd

    sh = _shapes(ctx)
    gen = ctx.generator
    dt = ctx.dtype()
    q, k, v = (torch.randn(*sh[n], dtype=dt, device="cuda", generator=gen) for n in ("q", "k", "v"))
    kw: dict[str, Any] = dict(causal=ctx.params["causal"], **_window(ctx))
    if sh["varlen"]:
        seqlen = ctx.params["total"] // sh["docs"]  # equal documents (the bench shapes' TOTALxHEADSh/DOCS)
        cu = torch.arange(0, sh["docs"] + 1, dtype=torch.int32, device="cuda") * seqlen
        kw.update(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=seqlen, max_seqlen_k=seqlen)

    def fwd():
        return _flash_attn_fwd(q, k, v, return_lse=True, **kw)

    out, lse = fwd()[:2]
    dout = torch.randn_like(out)

    def bwd():
        return _flash_attn_bwd(q, k, v, out, dout, lse, **kw)

    def fwdbwd():
        o, lse_ = fwd()[:2]
        return _flash_attn_bwd(q, k, v, o, dout, lse_, **kw)

    return {"fwd": fwd, "bwd": bwd, "fwdbwd": fwdbwd}[mode]


def fa4_fwd_bench(ctx):
    """Bench hook of fa4-fwd: the forward call on random inputs."""
    return _bench(ctx, "fwd")


def fa4_bwd_bench(ctx):
    """Bench hook of fa4-bwd: the backward call (preprocess, main, postprocess) on random inputs."""
    return _bench(ctx, "bwd")


def fa4_fwdbwd_bench(ctx):
    """Bench hook of fa4-fwdbwd: forward then backward."""
    return _bench(ctx, "fwdbwd")
