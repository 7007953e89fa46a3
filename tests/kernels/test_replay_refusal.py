"""A replay asks only what the check would ask: a case written by hand (or replayed on another
kernel) that sets a field the declaration fixes, a mask or grouped heads the kernel does not
take, or a property that does not apply to it, is refused, naming
what, where it used to run and read as the kernel's failure ("raised: TypeError") or pass a
property the kernel does not have. Every case the check itself draws is askable."""

from __future__ import annotations

import dataclasses

import pytest

from attnproof.cli import main
from attnproof.kernels import Case, replay
from attnproof.kernels._check import unaskable
from attnproof.kernels._properties import PROPERTIES
from attnproof.kernels.library import jax_dot_product_attention, mlx_fast_sdpa

from . import planted, planted_packed, planted_paged, planted_segments
from ._cells import every_case_holds

# a kernel that takes none of the knobs the cases below ask for
BARE = dataclasses.replace(planted.correct, name="bare", mask="none", sinks_argument=None,
                           window_argument=None, softcap_argument=None, gqa=False,
                           causal_argument=None)
ALWAYS_CAUSAL = dataclasses.replace(BARE, name="always_causal", always_causal=True)


@pytest.mark.parametrize(("prop", "case", "dtype", "refusal"), [
    ("forward", Case(mask="random"), "float32", "a random mask, and the kernel takes no mask"),
    ("forward", Case(mask="causal"), "float32", "takes no mask nor causal flag"),
    ("forward", Case(sinks="comparable"), "float32", "sets sinks"),
    ("forward", Case(softcap=2.0), "float32", "sets softcap"),
    ("forward", Case(window_left=2, window_right=0), "float32", "sets window_left, window_right"),
    ("forward", Case(heads=4, kv_heads=2), "float32", "2 K/V heads for 4 query heads"),
    ("sinks", Case(), "float32", "the property does not apply (takes no sinks)"),
    ("mask", Case(), "float32", "the property does not apply (takes no mask)"),
])
def test_a_case_the_check_never_asks_is_refused_naming_what(prop, case, dtype, refusal):
    with pytest.raises(ValueError, match="kernel 'bare', property") as raised:
        replay(BARE, prop, dtype, case)
    assert refusal in str(raised.value)


def test_the_askable_case_of_the_same_kernel_runs():
    assert replay(BARE, "forward", "float32", Case()).status == "pass"


def test_the_command_refuses_an_unaskable_case_with_exit_2(capsys):
    argv = ["replay", "forward", "--kernel", "tests.kernels.test_replay_refusal:BARE",
            "--dtype", "float32", "--case", '{"softcap": 2.0}']
    assert main(argv) == 2
    assert "the case sets softcap" in capsys.readouterr().err


def test_a_dtype_the_kernel_does_not_declare_replays_as_the_check_runs_it():
    # check_kernel runs a dtype its caller names (dtypes=), declared or not: so does its replay
    assert replay(BARE, "forward", "float16", Case()).status == "pass"


KERNELS = (planted.correct, BARE, ALWAYS_CAUSAL, planted_packed.correct, planted_paged.correct,
           planted_segments.correct)
# the library's JAX and MLX declarations too, where their framework is installed
LIBRARY = {"jax": jax_dot_product_attention, "mlx": mlx_fast_sdpa}


@pytest.mark.parametrize("kernel", [*KERNELS, *LIBRARY], ids=lambda k: getattr(k, "name", k))
def test_every_case_the_check_draws_is_askable(kernel):
    if isinstance(kernel, str):
        pytest.importorskip(f"{kernel}.core" if kernel == "mlx" else kernel)
        kernel = LIBRARY[kernel]()
    applicable = [p for p in PROPERTIES if p.unsupported(kernel) is None]
    assert applicable
    for prop in applicable:
        def askable(case, prop=prop):
            assert unaskable(kernel, prop, case) is None, (prop.name, case)

        every_case_holds(prop, kernel, askable, examples=15)
