"""Declarations of the library kernels attnproof checks: JAX, MLX and PyTorch attention.

Each declares only what its documentation states (layouts, arguments, dtypes, GQA support,
the precision it computes in, per device where the documentation says it differs); the
conventions the documentation leaves open (what a fully masked row returns, how ``causal``
aligns when n_q != n_k) are left undeclared, so the check reports what each kernel does as a
finding.

A framework that runs attention through several implementations has each checked as its own
kernel beside the call as users write it: torch's scaled_dot_product_attention is the
dispatcher (``torch``) and each backend it may pick, forced with ``sdpa_kernel``
(``torch-math``, ``torch-flash``, ``torch-efficient``, ``torch-cudnn``); JAX's
dot_product_attention is checked jitted (``jax``, as the checker calls JAX kernels by default),
eagerly (``jax-eager``) and with ``implementation="cudnn"`` (``jax-cudnn``, GPU only).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._declaration import Kernel, Refused

if TYPE_CHECKING:
    from ._frameworks import Array

ALL_DTYPES = ("float64", "float32", "float16", "bfloat16")
HALF_DTYPES = ("float16", "bfloat16")

# "By default, JAX leans toward speed: float32 dot products may be computed with
# reduced-precision arithmetic internally (bfloat16 on TPU, TF32 on recent GPUs)" (JAX, Matmul
# precision). The checker never changes the user's default precision for a kernel.
JAX_DEFAULT_PRECISION_ON = {"gpu": {"float32": "tensorfloat32"},
                            "tpu": {"float32": "bfloat16"}}
# the XLA implementation forms the logits and the softmax in float32 for every input
JAX_COMPUTE = {"float64": "float32", "float32": "float32", "float16": "float32",
               "bfloat16": "float32"}


def _jax(name: str, mode: str, **overrides: Any) -> Kernel:
    import jax

    declared = dict(
        name=name, fn=jax.nn.dot_product_attention, framework="jax",
        layout="bshd", mask="bool", causal_argument="is_causal", gradients="autodiff",
        # "bias array to be added to logits": softmax(QKᵀ/sqrt(d) + B), not scaled
        bias_argument="bias", gqa=True, equal_head_dims=True, dtypes=ALL_DTYPES,
        compute_dtype=JAX_COMPUTE, compute_on=JAX_DEFAULT_PRECISION_ON,
        devices=("cpu", "gpu", "tpu"), mode=mode,
        # float64 exists in JAX only under jax_enable_x64: switched on around the float64
        # calls alone, every other call runs under JAX's configuration as the user has it
        enable_x64=True)
    return Kernel(**{**declared, **overrides})


# "local_window_size: ... the (left_window_size, right_window_size) for each token. E.g., if
# local_window_size == (3, 2) and the sequence is [0, 1, 2, 3, 4, 5, c, 7, 8, 9], token c can
# attend to [3, 4, 5, c, 7, 8]": both bounds inclusive (its alignment when T != S is not
# documented, so windows are asked at n_q = n_k only)
JAX_WINDOW = dict(window_argument="local_window_size", window_form="pair")


def jax_dot_product_attention() -> Kernel:
    return _jax("jax.nn.dot_product_attention (jit)", "jit", **JAX_WINDOW)


def jax_dot_product_attention_eager() -> Kernel:
    return _jax("jax.nn.dot_product_attention (eager)", "eager", **JAX_WINDOW)


def _jax_cudnn(q: Array, k: Array, v: Array, **keywords: Any) -> Array:
    """JAX's attention through cuDNN; a case cuDNN's fused kernel does not implement (JAX's
    NotImplementedError: a head size, a layout, a mask) is refused, not a failure."""
    import jax

    try:
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn", **keywords)
    except NotImplementedError as error:
        raise Refused(f"cuDNN: {error}") from error


def jax_dot_product_attention_cudnn() -> Kernel:
    # cuDNN's fused attention takes half-precision inputs and accumulates in float32
    return _jax("jax.nn.dot_product_attention (cudnn)", "jit", fn=_jax_cudnn,
                dtypes=HALF_DTYPES, devices=("gpu",))


def _mlx_sdpa(q: Array, k: Array, v: Array, scale: float | None = None,
              mask: Array | str | None = None,
              sinks: Array | None = None) -> Array:
    """MLX's fast SDPA with the default scale 1/sqrt(d_k) its signature requires."""
    import mlx.core as mx

    scale = q.shape[-1] ** -0.5 if scale is None else scale
    return mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask, sinks=sinks)


def mlx_fast_sdpa() -> Kernel:
    return Kernel(
        name="mlx.core.fast.scaled_dot_product_attention", fn=_mlx_sdpa, framework="mlx",
        layout="bhsd", causal_argument="mask", causal_value="causal", gradients="autodiff",
        gqa=True, dtypes=ALL_DTYPES,
        # "a boolean or additive mask", whose type "must promote to the promoted type of q"
        mask=("bool", "bias"), mask_dtype="inputs",
        # "sinks (array, optional): An optional array of attention sinks" (one per query head)
        sinks_argument="sinks",
        # float64 runs in float32 on the CPU; half inputs are multiplied in their own format
        # (the documentation promises no wider accumulation)
        compute_dtype={"float64": "float32"},
        # Metal has no float64
        devices=("cpu", "gpu"),
    )


TORCH_COMPUTE = {"float64": "float64", "float32": "float32", "float16": "float32",
                 "bfloat16": "float32"}


def _torch(name: str, fn: Callable[..., Any], devices: tuple[str, ...],
           keywords: dict[str, Any] | None = None) -> Kernel:
    return Kernel(
        name=name, fn=fn, framework="torch", layout="bhsd",
        # a boolean mask, or "a float mask of the same type as query, key, value that is added
        # to the attention score"
        mask=("bool", "bias"), mask_dtype="inputs", mask_argument="attn_mask",
        causal_argument="is_causal", gradients="autodiff", gqa=True,
        keywords=keywords or {}, dtypes=ALL_DTYPES, compute_dtype=TORCH_COMPUTE,
        devices=devices)


def torch_sdpa() -> Kernel:
    import torch.nn.functional as F

    return _torch("torch.nn.functional.scaled_dot_product_attention",
                  F.scaled_dot_product_attention, ("cpu", "gpu"), {"enable_gqa": True})


def _forced(backend: str) -> Callable[..., Array]:
    """torch's SDPA with only ``backend`` enabled (``sdpa_kernel``). Where that backend cannot
    run a case, torch raises "No available kernel" after warning why: the case is refused with
    torch's reasons. Grouped heads are asked for only where the heads differ, as a user would."""

    def attention(q: Array, k: Array, v: Array, **keywords: Any) -> Array:
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        grouped = q.shape[-3] != k.shape[-3]
        with warnings.catch_warnings(record=True) as caught, \
                sdpa_kernel(getattr(SDPBackend, backend)):
            warnings.simplefilter("always")
            try:
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=grouped, **keywords)
            except RuntimeError as error:
                if "No available kernel" not in str(error):
                    raise
                raise Refused(f"torch {backend}: {_why_not(caught) or error}") from error

    attention.__name__ = f"sdpa_{backend.lower()}"
    return attention


def _why_not(caught: list[warnings.WarningMessage]) -> str:
    """torch's own reasons, from the warnings it gave before "No available kernel": without
    the headers ("... kernel not used because:"), the backends this check disabled itself
    ("... has been runtime disabled") and where in torch's source each was triggered."""
    reasons = []
    for warning in caught:
        text = " ".join(str(warning.message).split("(Triggered internally")[0].split())
        if text and not text.endswith("because:") and "runtime disabled" not in text:
            reasons.append(text)
    return "; ".join(dict.fromkeys(reasons))[:400]


# torch's SDPA backends, and the device kinds each exists for (flash has a CPU implementation)
TORCH_BACKENDS = {"math": ("MATH", ("cpu", "gpu")),
                  "flash": ("FLASH_ATTENTION", ("cpu", "gpu")),
                  "efficient": ("EFFICIENT_ATTENTION", ("gpu",)),
                  "cudnn": ("CUDNN_ATTENTION", ("gpu",))}


def _torch_backend(short: str) -> Callable[[], Kernel]:
    backend, devices = TORCH_BACKENDS[short]

    def declare() -> Kernel:
        return _torch(f"torch.nn.functional.scaled_dot_product_attention [{backend}]",
                      _forced(backend), devices)

    declare.__name__ = f"torch_sdpa_{short}"
    return declare


def _torch_varlen(q: Array, k: Array, v: Array, cu_seq_q: Array, cu_seq_k: Array, max_q: int,
                  max_k: int, scale: float | None = None, causal: bool = False,
                  window: tuple[int, int] | None = None) -> Array:
    """torch's ``varlen_attn`` (Flash Attention over packed sequences): a causal flag is its
    ``window_size=(-1, 0)`` ("(-1, 0) for causal attention"), a window (left, right) its
    ``window_size`` (right at most 0 beside a causal flag), grouped heads asked for only where
    the heads differ."""
    from torch.nn.attention.varlen import varlen_attn

    left, right = (-1, -1) if window is None else window
    if causal:
        right = 0 if right < 0 else min(right, 0)
    return varlen_attn(q, k, v, cu_seq_q, cu_seq_k, max_q, max_k, scale=scale,
                       window_size=(left, right), enable_gqa=q.shape[1] != k.shape[1])


def torch_varlen() -> Kernel:
    # "query (Tensor): Query tensor; shape (T_q, H_q, D)"; "cu_seq_q (Tensor): Cumulative
    # sequence positions for queries; shape (N+1,)"; Flash Attention: CUDA only (no CPU kernel
    # of aten::_flash_attention_forward in PyTorch 2.14.1), half-precision inputs, float32
    # accumulation. Its causal alignment when n_q != n_k is not documented: not declared
    return Kernel(name="torch.nn.attention.varlen.varlen_attn", fn=_torch_varlen,
                  framework="torch", layout="thd", packed="cu_seqlens",
                  cu_seqlens_arguments=("cu_seq_q", "cu_seq_k"),
                  max_seqlen_arguments=("max_q", "max_k"), causal_argument="causal",
                  window_argument="window", window_form="pair", gradients="autodiff",
                  gqa=True, dtypes=HALF_DTYPES, compute_dtype="float32", devices=("gpu",))


LIBRARY = {"jax": jax_dot_product_attention, "jax-eager": jax_dot_product_attention_eager,
           "jax-cudnn": jax_dot_product_attention_cudnn, "mlx": mlx_fast_sdpa,
           "torch": torch_sdpa,
           **{f"torch-{short}": _torch_backend(short) for short in TORCH_BACKENDS},
           "torch-varlen": torch_varlen}

# the framework each library kernel is written in
FRAMEWORK_OF = {name: name.partition("-")[0] for name in LIBRARY}
