"""Declarations of the library kernels attnproof checks: JAX, MLX and PyTorch attention.

Each declares only what its documentation states (layouts, arguments, dtypes, GQA support,
the precision it computes in); the conventions the documentation leaves open (what a fully
masked row returns, how ``causal`` aligns when n_q != n_k) are left undeclared, so the check
reports what each kernel does as a finding.
"""

from __future__ import annotations

from ._declaration import Kernel

ALL_DTYPES = ("float64", "float32", "float16", "bfloat16")


def jax_dot_product_attention() -> Kernel:
    import jax

    return Kernel(
        name="jax.nn.dot_product_attention", fn=jax.nn.dot_product_attention, framework="jax",
        layout="bshd", mask="bool", causal_argument="is_causal", gradients="autodiff",
        # "bias array to be added to logits": softmax(QKᵀ/sqrt(d) + B), not scaled
        bias_argument="bias", gqa=True, equal_head_dims=True, dtypes=ALL_DTYPES,
        # the XLA implementation forms the logits and the softmax in float32 for every input
        compute_dtype={"float64": "float32", "float32": "float32", "float16": "float32",
                       "bfloat16": "float32"},
    )


def _mlx_sdpa(q, k, v, scale=None, mask=None):
    """MLX's fast SDPA with the default scale 1/sqrt(d_k) its signature requires."""
    import mlx.core as mx

    scale = q.shape[-1] ** -0.5 if scale is None else scale
    return mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)


def mlx_fast_sdpa() -> Kernel:
    return Kernel(
        name="mlx.core.fast.scaled_dot_product_attention", fn=_mlx_sdpa, framework="mlx",
        layout="bhsd", causal_argument="mask", causal_value="causal", gradients="autodiff",
        gqa=True, dtypes=ALL_DTYPES,
        # "a boolean or additive mask", whose type "must promote to the promoted type of q"
        mask=("bool", "bias"), mask_dtype="inputs",
        # float64 runs in float32 on the CPU; half inputs are multiplied in their own format
        # (the documentation promises no wider accumulation)
        compute_dtype={"float64": "float32"},
    )


def torch_sdpa() -> Kernel:
    import torch.nn.functional as F

    return Kernel(
        name="torch.nn.functional.scaled_dot_product_attention",
        fn=F.scaled_dot_product_attention, framework="torch", layout="bhsd",
        # a boolean mask, or "a float mask of the same type as query, key, value that is added
        # to the attention score"
        mask=("bool", "bias"), mask_dtype="inputs", mask_argument="attn_mask",
        causal_argument="is_causal", gradients="autodiff", gqa=True,
        keywords={"enable_gqa": True}, dtypes=ALL_DTYPES,
        compute_dtype={"float64": "float64", "float32": "float32", "float16": "float32",
                       "bfloat16": "float32"},
    )


LIBRARY = {"jax": jax_dot_product_attention, "mlx": mlx_fast_sdpa, "torch": torch_sdpa}
