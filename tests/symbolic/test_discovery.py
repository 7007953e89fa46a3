"""Bad theorem files: each error names the file and the symbol, and the other files still load."""

import textwrap
from pathlib import Path

from attnproof.symbolic import Sizes, discover

GOOD = """
    import sympy as sp
    from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
    n = Dim("n")
    i = n.index("i")
    x = Tensor("x", (n,))
    {name} = Theorem("{name}", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,))
"""


def write(tmp_path, filename, body):
    (tmp_path / filename).write_text(textwrap.dedent(body))


def only_error(catalog):
    assert len(catalog.errors) == 1, catalog.errors
    return catalog.errors[0]


def test_a_file_that_does_not_import_is_reported_and_others_load(tmp_path):
    write(tmp_path, "good.py", GOOD.format(name="doubling"))
    write(tmp_path, "broken.py", "import sympy as sp\ndef broken(:\n")
    catalog = discover([tmp_path])
    assert [t.name for t in catalog.theorems] == ["doubling"]
    error = only_error(catalog)
    assert error.path.endswith("broken.py")
    assert "SyntaxError" in error.message


def _declaration_line(path, name: str) -> int:
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if f'Theorem("{name}"' in line)


def test_one_name_in_two_files_checks_neither_and_names_both_with_their_lines(tmp_path):
    write(tmp_path, "a.py", GOOD.format(name="doubling"))
    write(tmp_path, "b.py", GOOD.format(name="doubling"))
    write(tmp_path, "c.py", GOOD.format(name="tripling"))
    catalog = discover([tmp_path])
    assert [t.name for t in catalog.theorems] == ["tripling"]  # the rest is unaffected
    assert sorted(Path(e.path).name for e in catalog.errors) == ["a.py", "b.py"]
    places = [f"{tmp_path / f}:{_declaration_line(tmp_path / f, 'doubling')}"
              for f in ("a.py", "b.py")]
    for error in catalog.errors:
        assert error.theorem == "doubling"
        assert "'doubling' is declared in more than one file" in error.message
        assert all(place in error.message for place in places)
        assert error.message.startswith(f"{error.path}:")


def test_a_symbol_no_strategy_covers_is_named(tmp_path):
    write(tmp_path, "good.py", GOOD.format(name="doubling"))
    write(tmp_path, "unknown.py", """
        import sympy as sp
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        alpha = sp.Symbol("alpha", real=True)
        scaled = Theorem("scaled", Source("f", "s"), Equals(alpha * x[i], x[i]), inputs=(x,))
    """)
    catalog = discover([tmp_path])
    assert [t.name for t in catalog.theorems] == ["doubling"]
    error = only_error(catalog)
    assert "unknown.py" in error.message
    assert "'scaled'" in error.message and "symbol alpha" in error.message


def test_an_undeclared_tensor_is_named(tmp_path):
    write(tmp_path, "undeclared.py", """
        import sympy as sp
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        y = sp.IndexedBase("y")
        t = Theorem("uses_y", Source("f", "s"), Equals(x[i], y[i]), inputs=(x,))
    """)
    error = only_error(discover([tmp_path]))
    assert "tensor y" in error.message and "'uses_y'" in error.message


def test_mismatched_shapes_are_named(tmp_path):
    write(tmp_path, "shapes.py", """
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n, m = Dim("n"), Dim("m")
        i = n.index("i")
        j = m.index("j")
        x = Tensor("x", (n,))
        t = Theorem("wrong_axis", Source("f", "s"), Equals(x[j], x[i]), inputs=(x,))
    """)
    error = only_error(discover([tmp_path]))
    assert "'wrong_axis'" in error.message
    assert "index j runs over m" in error.message and "axis n of x" in error.message


def test_discovery_is_deterministic(tmp_path):
    for name in ("zeta", "alpha", "mid"):
        write(tmp_path, f"{name}.py", GOOD.format(name=name))
    first = [t.name for t in discover([tmp_path]).theorems]
    assert first == [t.name for t in discover([tmp_path]).theorems] == ["alpha", "mid", "zeta"]


def test_any_identifier_is_a_name_and_names_differing_in_case_are_one_name(tmp_path):
    write(tmp_path, "a.py", GOOD.format(name="RoPE_relative"))
    write(tmp_path, "b.py", GOOD.format(name="rope_relative"))
    catalog = discover([tmp_path])
    assert catalog.theorems == ()
    assert {e.theorem for e in catalog.errors} == {"RoPE_relative", "rope_relative"}
    assert all("a.py" in e.message and "b.py" in e.message for e in catalog.errors)


def test_a_dimension_used_through_its_indices_alone_needs_no_tensor(tmp_path):
    write(tmp_path, "pairs.py", """
        import sympy as sp
        from attnproof.symbolic import Dim, Equals, Sizes, Source, Tensor, Theorem
        n, P = Dim("n"), Dim("P", Sizes(2, 5))
        i, p = n.index("i"), P.index("p")
        x = Tensor("x", (n,))
        count = Theorem("count", Source("f", "s"),
                        Equals(sp.Sum(x[i], (p, 0, P.symbol - 1)), P.symbol * x[i]),
                        inputs=(x, P))
        undeclared = Theorem("undeclared", Source("f", "s"),
                             Equals(sp.Sum(x[i] * p, (p, 0, P.symbol - 1)),
                                    x[i] * P.symbol * (P.symbol - 1) / 2), inputs=(x,))
    """)
    catalog = discover([tmp_path])
    assert catalog.errors == ()
    theorems = catalog.by_name()
    assert {d.name: d.sizes for d in theorems["count"].dims}["P"] == Sizes(2, 5)
    assert theorems["count"].inputs == (theorems["count"].tensors[0],)
    assert {d.name: d.sizes for d in theorems["undeclared"].dims}["P"] == Sizes()


def test_code_named_in_a_claim_without_implementation_is_an_error_of_its_declaration(tmp_path):
    write(tmp_path, "kernel.py", """
        import sympy as sp
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        my_kernel_doubles = Theorem(
            "my_kernel_doubles", Source("f", "s"),
            Equals(sp.Function("MyKernel")(i), 2 * x[i]), inputs=(x,))
        doubling = Theorem("doubling", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]),
                           inputs=(x,))
    """)
    catalog = discover([tmp_path])
    assert [t.name for t in catalog.theorems] == ["doubling"]
    error = only_error(catalog)
    assert error.theorem == "my_kernel_doubles"
    assert error.message.startswith(f"{tmp_path / 'kernel.py'}:7:")
    assert "MyKernel(i) is an undefined function" in error.message
    assert "no implementation=" in error.message


def test_a_declaration_used_as_a_value_says_what_to_write(tmp_path):
    write(tmp_path, "mistakes.py", """
        import sympy as sp
        from attnproof.symbolic import (Dim, Equals, Positive, Scalar, Source, Tensor,
                                        Theorem, softmax)
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        T = Scalar("T", Positive(0.1, 10))
        scalar_in_softmax = Theorem("scalar_in_softmax", Source("f", "s"),
                                    Equals(softmax(x[i], i, T), softmax(x[i], i, T)),
                                    inputs=(x, T))
        scalar_in_product = Theorem("scalar_in_product", Source("f", "s"),
                                    Equals(x[i] * T, T * x[i]), inputs=(x, T))
        tensor_unindexed = Theorem("tensor_unindexed", Source("f", "s"),
                                   Equals(x + 1, 1 + x), inputs=(x,))
        dimension_as_size = Theorem("dimension_as_size", Source("f", "s"),
                                    Equals(x[i] / n, x[i] / n), inputs=(x,))
    """)
    errors = {e.theorem: e.message for e in discover([tmp_path]).errors}
    assert "write T.symbol in an expression" in errors["scalar_in_softmax"]
    assert "write T.symbol in an expression" in errors["scalar_in_product"]
    assert "indexed (x[i])" in errors["tensor_unindexed"]
    assert "write n.symbol for its size" in errors["dimension_as_size"]
    assert all(m.startswith(f"{tmp_path / 'mistakes.py'}:") for m in errors.values())
