"""The one format table: its figures against NumPy's and ml_dtypes' own, and the one spelling of
an epsilon across the package."""

import ast
import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from attnproof.kernels._frameworks import precision_format, rounded
from attnproof.symbolic import FORMATS, TENSORFLOAT32, format_named, with_precision

PACKAGE = Path(__file__).resolve().parents[2] / "attnproof"


@pytest.mark.parametrize("name", FORMATS)
def test_every_figure_of_a_format_is_its_finfo(name):
    fmt = format_named(name)
    info = ml_dtypes.finfo(fmt.numpy_dtype)  # NumPy's finfo for the IEEE types, and bfloat16
    assert fmt.epsilon == float(info.eps)
    assert fmt.unit_roundoff == float(info.eps) / 2
    assert fmt.largest == float(info.max)
    assert fmt.smallest_normal == float(info.smallest_normal)
    assert fmt.smallest_subnormal == float(info.smallest_subnormal)
    assert fmt.precision == info.nmant + 1
    assert fmt.width == info.bits
    assert fmt.numpy_dtype.name == name


def test_tensorfloat32_is_float32_s_range_with_ten_fraction_bits():
    float32 = FORMATS["float32"]
    assert TENSORFLOAT32.epsilon == 2.0 ** -10
    assert (TENSORFLOAT32.emin, TENSORFLOAT32.emax) == (float32.emin, float32.emax)
    assert TENSORFLOAT32.numpy_dtype == np.float32
    # its largest number is what rounding float32's largest to 11 bits keeps below overflow
    assert rounded(np.array([TENSORFLOAT32.largest]), TENSORFLOAT32)[0] == TENSORFLOAT32.largest


@pytest.mark.parametrize("bits", [8, 11, 24, 53])
def test_a_probe_has_the_precision_of_its_name_and_float64_s_range(bits):
    probe = precision_format(f"bits{bits}")
    assert probe == with_precision(bits)
    assert probe.unit_roundoff == 2.0 ** -bits
    assert probe.smallest_normal == FORMATS["float64"].smallest_normal
    assert probe.numpy_dtype == np.float64


KNOWN = "known: float64, float32, float16, bfloat16, tensorfloat32"


@pytest.mark.parametrize(("name", "message"), [
    ("float8", KNOWN), ("int32", KNOWN), ("", KNOWN), ("bits", KNOWN),
    ("bits0", "0 bits is outside 2 … 53"), ("bits54", "54 bits is outside 2 … 53")])
def test_an_unknown_precision_is_refused_saying_what_is_known(name, message):
    with pytest.raises(ValueError, match=message):
        precision_format(name)


def _finfo_calls(path: Path) -> list[str]:
    """The ``finfo(...)`` calls of a module, as source text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "finfo"]


def test_no_module_asks_finfo_for_a_format_of_the_table():
    """One spelling of a format's figures: the package reads them from the table. NumPy's
    ``finfo`` is asked once, of the host's long double, which is no format of the table."""
    modules = [Path(folder, name) for folder, _, names in os.walk(PACKAGE, followlinks=True)
               for name in names if name.endswith(".py")]
    calls = {str(path.relative_to(PACKAGE)): found for path in modules
             if (found := _finfo_calls(path))}
    assert calls == {"numeric/kinds/error_bound.py": ["np.finfo(wider)"]}


def test_the_scan_sees_a_finfo_call(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import numpy as np\neps = float(np.finfo('float32').eps)\n")
    assert _finfo_calls(planted) == ["np.finfo('float32')"]
