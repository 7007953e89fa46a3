"""conformance.json has a schema (attnproof/kernels/conformance.schema.json): the committed
files and what the checker writes now are valid, a file of another shape is refused with one
line naming the field, and the schema's enums are the checker's own lists."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from attnproof.kernels import _declaration as declaration
from attnproof.kernels import check_kernel
from attnproof.kernels._frameworks import FRAMEWORKS
from attnproof.kernels._matrix import to_json, write
from attnproof.kernels._regimes import REGIMES, TILE_SIZES
from attnproof.kernels._schema import SCHEMA_FILE, ConformanceError, load_conformance, problem
from attnproof.numeric import CellStatus

from . import planted

REFERENCE = Path(__file__).parents[2] / "reports" / "reference"
COMMITTED = sorted(REFERENCE.glob("**/conformance.json"))


@pytest.fixture(scope="module")
def checked() -> dict:
    result = check_kernel(planted.correct, properties=["forward", "fully_masked_rows"],
                          examples=3)
    return json.loads(to_json([result]))


def _schema() -> dict:
    text = resources.files("attnproof.kernels").joinpath(SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def test_the_committed_conformance_files_are_valid():
    assert REFERENCE / "kernels" / "conformance.json" in COMMITTED
    for path in COMMITTED:
        assert load_conformance(path)["kernels"], path


def test_a_conformance_checked_now_is_valid(checked):
    assert [c["property"] for c in checked["kernels"][0]["cells"]] == ["forward",
                                                                      "fully_masked_rows"]
    assert problem(checked) is None


def _broken(data: dict, change) -> dict:
    data = copy.deepcopy(data)
    change(data)
    return data


def _cell(data: dict) -> dict:
    return data["kernels"][0]["cells"][0]


WRONG_SHAPES = {
    "an unknown status": (lambda d: _cell(d).update(status="ok"),
                          "$.kernels[0].cells[0].status: 'ok' is not one of"),
    "a cell without its dtype": (lambda d: _cell(d).pop("dtype"),
                                 "$.kernels[0].cells[0]: 'dtype' is a required property"),
    "a count as a string": (lambda d: _cell(d).update(cases="3"),
                            "$.kernels[0].cells[0].cases: '3' is not of type 'integer'"),
    "kernels not a list": (lambda d: d.update(kernels=d["kernels"][0]),
                           "$.kernels: {'kernel': 'correct', "),
    "a property that is not a string": (lambda d: _cell(d).update(property=1),
                                        "$.kernels[0].cells[0].property: 1 is not of type"),
    "a ratio as a string": (lambda d: _cell(d).update(ratio="0.5"),
                            "$.kernels[0].cells[0].ratio: '0.5' is not of type"),
    "an unknown declared mask": (lambda d: d["kernels"][0]["declared"].update(mask="causal"),
                                 "$.kernels[0].declared.mask: 'causal' is not valid"),
    "an unknown field": (lambda d: _cell(d).update(extra=1),
                         "$.kernels[0].cells[0]: Additional properties are not allowed"),
}


@pytest.mark.parametrize("name", WRONG_SHAPES)
def test_a_wrong_shape_is_refused_naming_the_field(checked, name):
    change, expected = WRONG_SHAPES[name]
    found = problem(_broken(checked, change))
    assert found is not None and found.startswith(expected), found
    assert "\n" not in found and len(found) < 400
    if name == "kernels not a list":  # the value it quotes is cut, not what is wrong with it
        assert found.endswith("… is not of type 'array'")


def test_an_unreadable_file_is_refused_naming_it(tmp_path, checked):
    not_json = tmp_path / "conformance.json"
    not_json.write_text("{kernels: []}", encoding="utf-8")
    with pytest.raises(ConformanceError, match=f"{not_json} is not valid JSON: .* line 1"):
        load_conformance(not_json)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(_broken(checked, lambda d: _cell(d).update(status="ok"))))
    with pytest.raises(ConformanceError, match=rf"{wrong} is not a conformance file: "
                                               rf"\$\.kernels\[0\]\.cells\[0\]\.status"):
        load_conformance(wrong)
    with pytest.raises(ConformanceError, match="cannot read"):
        load_conformance(tmp_path / "missing.json")
    with pytest.raises(ConformanceError, match="is a directory"):
        load_conformance(tmp_path)


def test_a_failing_cell_is_written_valid_and_read_back(tmp_path):
    result = check_kernel(planted.fresh("nan_fully_masked"), properties=["fully_masked_rows"],
                          examples=3)
    write([result], tmp_path)
    cell = _cell(load_conformance(tmp_path / "conformance.json"))
    assert cell["status"] == "fails" and cell["ratio"] == float("inf")  # written as Infinity
    assert cell["counterexample"]["case"] and cell["replay"]


def test_writing_a_json_of_another_shape_is_a_bug_named_after_writing(tmp_path):
    result = check_kernel(planted.correct, properties=["forward"], examples=3)
    result.cells[0].ratio = np.float32(result.cells[0].ratio)  # to_json writes it as a string
    with pytest.raises(ConformanceError, match=r"a bug of the checker.*"
                                               r"\$\.kernels\[0\]\.cells\[0\]\.ratio: '"):
        write([result], tmp_path)
    assert (tmp_path / "conformance.json").is_file() and (tmp_path / "conformance.md").is_file()


def test_the_schema_s_enums_are_the_checker_s():
    defs = _schema()["$defs"]
    declared = defs["declared"]["properties"]
    assert defs["cell"]["properties"]["status"]["enum"] == list(CellStatus)
    assert defs["kernel"]["properties"]["framework"]["enum"] == list(FRAMEWORKS)
    assert defs["dtype"]["enum"] == list(declaration.DTYPES)
    assert defs["compute_precision"]["enum"] == list(declaration.PRECISIONS)
    assert defs["mask_kind"]["enum"] == list(declaration.MASKS)
    assert declared["fully_masked"]["enum"] == [*declaration.FULLY_MASKED, None]
    assert declared["fully_masked_lse"]["enum"] == [*declaration.FULLY_MASKED_LSE, None]
    assert declared["causal_alignment"]["enum"] == [*declaration.ALIGNMENTS, None]
    assert declared["masked_inputs"]["enum"] == list(declaration.MASKED_INPUTS)
    assert declared["mode"]["enum"] == [*declaration.MODES, None]
    regimes = defs["regimes"]["properties"]
    assert regimes["cases"]["required"] == list(REGIMES)
    assert regimes["residues"]["required"] == [str(t) for t in TILE_SIZES]
    for tile in TILE_SIZES:
        assert defs[f"residues_{tile}"]["items"]["maximum"] == tile - 1
