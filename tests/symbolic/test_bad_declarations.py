"""Bad declarations inside one theorem file: each is reported with file, line, theorem and
symbol, strings are never parsed, and the file's other theorems still load."""

import textwrap

import pytest
import sympy as sp

from attnproof.symbolic import (
    Defined,
    Dim,
    Equals,
    Rounds,
    Scalar,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    discover,
)

HEADER = """
    import sympy as sp
    from attnproof.symbolic import Defined, Dim, Equals, Source, Tensor, Theorem
    n = Dim("n")
    i = n.index("i")
    x = Tensor("x", (n,))
"""


def good(name):
    return f"""
    {name} = Theorem("{name}", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,))
"""


def load(tmp_path, *parts):
    (tmp_path / "file.py").write_text(textwrap.dedent("".join((HEADER, *parts))))
    catalog = discover([tmp_path])
    return [t.name for t in catalog.theorems], catalog.errors


def test_a_duplicate_name_in_one_file_keeps_the_files_other_theorems(tmp_path):
    names, errors = load(tmp_path, good("first"), good("twice"),
                         good("twice").replace("twice =", "again ="), good("last"))
    assert names == ["first", "last"]
    ((error),) = errors
    assert (error.theorem, "declares theorem 'twice' twice" in error.message) == ("twice", True)


def test_a_wrong_number_of_indices_names_file_line_theorem_and_tensor(tmp_path):
    bad = """
    wrong = Theorem("wrong", Source("f", "s"), Equals(x[i, i], x[i]), inputs=(x,))
"""
    names, errors = load(tmp_path, good("before"), bad, good("after"))
    assert names == ["before", "after"]
    (error,) = errors
    assert error.theorem == "wrong"
    assert f"{tmp_path / 'file.py'}:10: theorem 'wrong'" in error.message
    assert "IndexCountError: tensor x has 1 axes" in error.message


def test_a_theorem_using_a_failed_definition_is_blamed_on_that_definition(tmp_path):
    bad = """
    A = Defined("A", (i,), x[i, i])
    uses_a = Theorem("uses_a", Source("f", "s"), Equals(A[i], x[i]), inputs=(x,),
                     definitions=(A,))
"""
    names, errors = load(tmp_path, bad, good("fine"))
    assert names == ["fine"]
    assert [e.theorem for e in errors] == [None, "uses_a"]
    assert "tensor x has 1 axes" in errors[0].message
    assert "theorem 'uses_a': uses A, whose declaration at line 8 failed" in errors[1].message


@pytest.mark.parametrize("claim", ['"__import__(\'os\').system(\'false\')"', "None"])
def test_a_string_or_none_claim_side_is_rejected_and_never_parsed(tmp_path, claim):
    bad = f"""
    bad = Theorem("bad", Source("f", "s"), Equals({claim}, x[i]), inputs=(x,))
"""
    names, errors = load(tmp_path, bad, good("fine"))
    assert names == ["fine"]
    (error,) = errors
    assert error.theorem == "bad" and "TheoremError: Equals: the left-hand side is" in error.message


def test_strings_are_never_sympified_anywhere_in_a_statement(monkeypatch):
    def no_parsing(*args, **kwargs):
        raise AssertionError("a string reached the parser")

    monkeypatch.setattr(sp.parsing.sympy_parser, "parse_expr", no_parsing)
    n = Dim("n")
    i = n.index("i")
    x = Tensor("x", (n,))
    for declare in (lambda: Equals("x", x[i]), lambda: Equals(x[i], "x"),
                    lambda: Defined("A", (i,), "x"), lambda: Rounds([["1/3"]], [["0.333"]])):
        with pytest.raises(TheoremError, match="strings are never parsed"):
            declare()


def test_a_claim_that_is_none_or_not_a_claim_is_a_theorem_error():
    n = Dim("n")
    x = Tensor("x", (n,))
    with pytest.raises(TheoremError, match="theorem 't': claim must be .* got NoneType"):
        Theorem("t", Source("f", "s"), None, inputs=(x,))


@pytest.mark.parametrize("name", ['x"', "x\\n", "a b", "x'y", "", "1x", "x\n"])
@pytest.mark.parametrize("declare", [
    lambda name: Dim(name), lambda name: Tensor(name, ()), lambda name: Scalar(name),
    lambda name: Dim("n").index(name), lambda name: Defined(name, (), sp.Integer(1)),
], ids=["dim", "tensor", "scalar", "index", "defined"])
def test_names_that_are_not_identifiers_are_rejected_at_declaration(name, declare):
    with pytest.raises(TheoremError, match="is not an identifier"):
        declare(name)


def test_identifiers_and_primed_names_are_accepted():
    assert [Scalar(name).name for name in ("m", "m'", "m''", "lambda", "d_k2")] == [
        "m", "m'", "m''", "lambda", "d_k2"]


def test_a_name_built_with_sympy_directly_is_checked_in_the_theorem():
    n = Dim("n")
    x = Tensor("x", (n,))
    sneaky = sp.Idx(sp.Symbol('k"', integer=True), n.symbol)
    with pytest.raises(TheoremError, match="theorem 't', left-hand side: index name 'k\"'"):
        Theorem("t", Source("f", "s"), Equals(x[sneaky], x[sneaky]), inputs=(x,))


def test_a_file_that_is_not_python_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    catalog = discover([tmp_path / "notes.txt"])
    assert catalog.theorems == ()
    (error,) = catalog.errors
    assert "not a Python (.py) file" in error.message


def test_a_file_run_statement_by_statement_keeps_its_docstring_and_future_imports(tmp_path):
    (tmp_path / "doc.py").write_text(textwrap.dedent('''
        """Claims about doubling."""
        from __future__ import annotations
        import sys
        from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
        n = Dim("n")
        i = n.index("i")
        x = Tensor("x", (n,))
        def annotated(a: NoSuchName) -> None: ...  # fine only with postponed annotations
        twice = Theorem("twice", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,))
        twice_doc = Theorem("twice_doc", Source(sys.modules[__name__].__doc__, "s"),
                            Equals(x[i], x[i]), inputs=(x,))
    '''))
    catalog = discover([tmp_path])
    assert catalog.errors == ()
    assert catalog.by_name()["twice_doc"].source.file == "Claims about doubling."


def test_a_denied_statement_must_be_expected_refuted():
    from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem, TheoremError

    n = Dim("n")
    j = n.index("j")
    x = Tensor("x", (n,))
    with pytest.raises(TheoremError, match="denied"):
        Theorem(name="denied_but_holds", source=Source("notes", "§1"),
                claim=Equals(x[j], x[j]), inputs=(x,), denied=True)


@pytest.mark.parametrize("field", ["lemmas", "given"])
def test_a_lemma_or_condition_that_is_not_a_relation_is_a_theorem_error(field):
    # a condition is read as lhs - rhs, as a lemma is: Rounds has two sides but is no relation,
    # and None none (a given= condition of any other claim raised AttributeError on .lhs)
    n = Dim("n")
    i = n.index("i")
    x = Tensor("x", (n,))
    word = {"lemmas": "lemma", "given": "condition"}[field]
    for wrong, name in ((Rounds([[1]], [[1]]), "Rounds"), (None, "NoneType")):
        with pytest.raises(TheoremError, match=f"theorem 't': {word} 1 must be Equals.*"
                                               f"got {name}"):
            Theorem("t", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,),
                    **{field: (wrong,)})
