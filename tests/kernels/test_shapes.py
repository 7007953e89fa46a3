"""The shape ladder: every case of every property is drawn at a rung of ``_shapes.RUNGS`` (one
bounded set for the run), each property's rungs begin with its cheapest (where shrinking
goes), and a jitted JAX kernel compiles each (shape, dtype, keywords) once, its later cases
and cells reusing the program.

Measured before the ladder: 102 cases of three jitted-JAX float32 cells compiled 120 programs
at 27 distinct shapes (nearly every case a new program, 0.19 s each on two cores)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from attnproof.kernels import PROPERTIES, check_kernel
from attnproof.kernels._shapes import LENGTH_RUNGS, RUNGS, Shape, kind, rungs_of

from . import planted


def _shape(case) -> Shape:
    return Shape(case.n_q, case.n_k, case.d_k, case.d_v, case.batch, case.kv_heads,
                 case.heads // case.kv_heads)


def _calls(case):
    return [case, *(call for _, call in case.history)]


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.name)
def test_every_drawn_case_of_every_property_is_at_a_rung_of_the_ladder(prop):
    kernel = planted.kernel("ladder")
    if prop.unsupported(kernel) is not None:
        pytest.skip(f"{prop.name} is n/a for this kernel: {prop.unsupported(kernel)}")
    seen = set()

    @settings(max_examples=40, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(prop.strategy(kernel))
    def drawn(case):
        for call in _calls(case):
            assert _shape(call) in RUNGS, (prop.name, call.sizes())
            seen.add(_shape(call))

    drawn()
    assert seen  # the property drew cases at all


def test_each_kind_of_rung_begins_with_its_cheapest_and_an_empty_kind_is_refused():
    for where in (kind(), kind(lengths="apart"), kind(dims="apart", lengths="any"),
                  kind(kv_heads=(1, 1), group=(2, 6), lengths="any")):
        chosen = rungs_of(where)
        assert list(chosen) == sorted(chosen, key=lambda s: (s.cost, s))
        assert len(chosen) >= 3
    with pytest.raises(ValueError, match="no shape of the ladder"):
        rungs_of(kind(n=(2000, 3000)))


def test_each_kind_of_the_properties_begins_at_its_smallest_shape():
    # a freely drawn search shrank to these, and some backends fail only there (XLA's CPU
    # backend cannot emit a bfloat16 dot of one feature): a kind must reach them first
    kinds = {"any": kind(), "apart": kind(lengths="apart"),
             "dims apart": kind(lengths="any", dims="apart"),
             "batches": kind(lengths="any", batch=(2, 4)),
             "batches apart": kind(lengths="apart", batch=(2, 4)),
             "grouped": kind(lengths="any", kv_heads=(2, 3), group=(2, 7)),
             "multi-query": kind(lengths="any", kv_heads=(1, 1), group=(2, 6)),
             "two halves of keys": kind(lengths="any", n_k=(2, 17))}
    for name, where in kinds.items():
        first = rungs_of(where)[0]
        assert (first.n_q, first.d_k) == (1, 1), name
        assert first.n_k == (2 if name in ("apart", "batches apart", "two halves of keys")
                             else 1), name
        assert first.d_v == (2 if name == "dims apart" else 1), name
        assert first.batch == (2 if name.startswith("batches") else 1), name


def test_the_ladder_holds_the_lengths_and_head_dims_where_kernels_break():
    lengths = {n for shape in RUNGS for n in (shape.n_q, shape.n_k)}
    dims = {d for shape in RUNGS for d in (shape.d_k, shape.d_v)}
    assert {1, 2, 3, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024,
            1025} <= lengths
    assert {1, 2, 8, 64, 128, 256, 576} <= dims
    # bounded: every property, dtype and cell shares these; precision across lengths adds its
    # four rungs of many rows (one per length), which no other property draws
    assert len(RUNGS) - len(LENGTH_RUNGS) < 100 and len(LENGTH_RUNGS) == 4


jax = pytest.importorskip("jax")


def test_a_jitted_jax_kernel_compiles_each_signature_once_and_a_second_cell_reuses_them():
    from attnproof.kernels.library import jax_dot_product_attention
    from attnproof.numeric import kernel_compilations

    kernel = dataclasses.replace(jax_dot_product_attention(), name="jitted")
    first = check_kernel(kernel, properties=["forward"], dtypes=["float32"], examples=8)
    again = check_kernel(kernel, properties=["forward"], dtypes=["float32"], examples=8)
    programs, repeated = first.cells[0].programs, again.cells[0].programs
    assert programs["compiled"] >= 1 and programs["shapes"] >= 1
    assert repeated["compiled"] == 0  # the same cases: every program already built
    assert repeated["compiled_twice"] == programs["compiled_twice"] == 0
    assert all(count == 1 for count in kernel_compilations().values())
    assert first.to_json()["programs"]["shapes"] == programs["shapes"]


def test_a_compilation_that_failed_is_raised_again_without_compiling_again():
    from attnproof.numeric import _backends

    class Jitted:  # jax.jit's lower/compile, the compile failing as XLA's CPU emitter can
        compiled = 0

        def lower(self, *arguments):
            return self

        def compile(self):
            Jitted.compiled += 1
            raise RuntimeError("INVALID_ARGUMENT: Algorithm not supported")

    x = jax.numpy.ones((2, 3))
    for _ in range(3):
        with pytest.raises(RuntimeError, match="Algorithm not supported"):
            _backends._compiled_call(("test", "failing"), Jitted(), x, x)
    assert Jitted.compiled == 1


def test_the_graphs_a_torch_compiled_kernel_builds_are_counted():
    torch = pytest.importorskip("torch")
    from attnproof.kernels import Kernel

    @torch.compile(backend="eager")  # TorchDynamo's graphs, without Inductor's C++ build
    def compiled(q, k, v, scale=None):
        scale = q.shape[-1] ** -0.5 if scale is None else scale
        weights = torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1)
        return weights @ v

    kernel = Kernel("compiled", compiled, "torch", dtypes=("float32",))
    cell = check_kernel(kernel, properties=["forward"], examples=6).cells[0]
    assert cell.status == "conforms", cell.reason
    assert 1 <= cell.programs["compiled"] <= cell.programs["shapes"]
