"""What ``python scripts/annotations.py`` counts as an annotated function (CI asks 99% of the
package): every parameter but the receiver and the return typed, methods and nested functions
counted alike; and ``--at-least`` fails below the share it names."""

from __future__ import annotations

from scripts.annotations import by_folder, counts, main

_SOURCE = '''
def typed(a: int, *rest: str, key: bool = False, **more: float) -> None: ...
def no_return(a: int): ...
def one_bare(a: int, b) -> int: ...
def bare_keywords(a: int, **more) -> int: ...
class Host:
    def method(self, a: int) -> int: ...
    @classmethod
    def build(cls) -> "Host": ...
    def untyped(self): ...
def outer() -> int:
    def inner(x): return x
    return 1
'''


def test_a_function_counts_only_when_all_of_it_is_typed():
    # typed, method, build, outer; not no_return, one_bare, bare_keywords, untyped, inner
    assert counts(_SOURCE) == (4, 9)


def test_the_receiver_needs_no_type_but_a_lambda_is_not_a_function():
    assert counts("class A:\n    def f(self) -> None: ...\nsquare = lambda x: x * x\n") == (1, 1)


def test_the_package_is_counted_through_its_linked_folders():
    folders = by_folder()
    assert {".", "kernels", "numeric", "symbolic", "theorems"} <= set(folders)
    assert all(0 <= annotated <= found for annotated, found in folders.values())


def test_at_least_fails_below_the_share_it_names(capsys):
    assert main(["--at-least", "0"]) == 0
    assert main(["--at-least", "100.1"]) == 1
    assert "is below 100.1%" in capsys.readouterr().err
