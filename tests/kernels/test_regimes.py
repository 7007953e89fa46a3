"""The regimes a property's cases reached, per cell, in the JSON and under the matrix."""

from __future__ import annotations

import json

from attnproof.kernels import Case, check_kernel
from attnproof.kernels._cases import instance
from attnproof.kernels._matrix import to_json, to_markdown
from attnproof.kernels._regimes import reached
from attnproof.symbolic import FLOAT32

from . import planted


def test_one_case_s_regimes():
    case = Case(n_q=3, n_k=5, heads=4, kv_heads=1, mask="fully_masked", garbage="nan",
                offset="-1e4")
    found = reached(instance(case, FLOAT32, FLOAT32), case)
    assert found["n_k"] == 5
    assert {"lse below −88", "length 0", "one K/V head shared",
            "NaN/±∞ padding"} <= set(found["regimes"])
    plain = Case(n_q=2, n_k=1, heads=2, kv_heads=2)
    assert reached(instance(plain, FLOAT32, FLOAT32), plain)["regimes"] == [
        "length 1", "several K/V heads"]


def test_each_property_reaches_its_regimes_and_the_matrix_shows_them():
    properties = ["row_offset", "fully_masked_rows", "mqa", "masked_garbage", "block_lengths"]
    result = check_kernel(planted.correct, properties=properties, examples=10)
    cases = {c.property: c.regimes["cases"] for c in result.cells}
    assert cases["row_offset"]["lse below −88"] > 0
    assert cases["fully_masked_rows"]["length 0"] > 0
    assert cases["mqa"]["one K/V head shared"] > 0
    assert cases["masked_garbage"]["NaN/±∞ padding"] > 0
    residues = result.cell("block_lengths", "float32").regimes["residues"]
    assert {1, 65} <= set(residues["128"])  # the explicit 65, 129 and 257 keys
    shown = json.loads(to_json([result]))["kernels"][0]["cells"][0]["regimes"]
    assert shown["cases"] == cases["row_offset"]
    text = to_markdown([result])
    assert "Regimes reached" in text and "| lse below −88 | length 0 |" in text


def test_the_regimes_the_shape_ladder_may_miss_are_reached_by_explicit_cases():
    # rows whose lse lies below −88 beside fully masked rows and in strided views, and a sink
    # per query head over one shared K/V head: reached at few drawn examples
    result = check_kernel(planted.correct, properties=["fully_masked_rows", "memory_layout",
                                                       "sinks"], examples=5, dtypes=["float32"])
    cases = {c.property: c.regimes["cases"] for c in result.cells}
    assert cases["fully_masked_rows"]["lse below −88"] > 0
    assert cases["memory_layout"]["lse below −88"] > 0
    assert cases["sinks"]["one K/V head shared"] > 0
    assert {c.property: c.status for c in result.cells} == dict.fromkeys(cases, "conforms")
