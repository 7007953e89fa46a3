"""No module of the ``attnproof`` package imports itself back, directly or through others: the
graph of import statements (including those inside functions) has no cycle; and between layers
every import points one way (``python scripts/layers.py`` prints that graph)."""

from __future__ import annotations

from collections import Counter

from scripts.layers import import_graph, layer_edges, upward


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = "open", stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state and (cycle := visit(successor)):
                return cycle
        state[node], _ = "done", stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_names_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_resolved_as_python_resolves_them():
    graph = import_graph()
    assert "attnproof.numeric._plan" in graph["attnproof.numeric._decide"]
    assert "attnproof.numeric._strategies" in graph["attnproof.numeric._search"]  # from . import
    assert "attnproof.symbolic" in graph["attnproof.numeric._plan"]
    assert "attnproof.symbolic._theorem" in graph["attnproof.numeric._plan"]
    assert any(m.startswith("attnproof.theorems.") for m in graph)


def test_no_module_of_the_package_imports_itself_back():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_import_between_layers_points_to_a_lower_layer():
    edges = layer_edges(import_graph())
    assert edges["numeric", "symbolic"] and edges["application", "numeric"]
    assert upward(edges) == []


def test_an_upward_import_is_named():
    edges = Counter({("numeric", "symbolic"): 3, ("symbolic", "numeric"): 1})
    assert upward(edges) == [("symbolic", "numeric")]
