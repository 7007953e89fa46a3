"""Tiny theorem files written into a temporary directory, for the CLI and runner tests."""

import textwrap

HEADER = """
    import sympy as sp
    from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem
    n = Dim("n")
    i = n.index("i")
    x = Tensor("x", (n,))
"""

TRUE = HEADER + """
    {name} = Theorem("{name}", Source("f", "s"), Equals(x[i] + x[i], 2 * x[i]), inputs=(x,),
                     expect="{expect}")
"""

# False for every nonzero x; declared either as a claim to refute or, wrongly, as one that holds.
FALSE = HEADER + """
    {name} = Theorem("{name}", Source("f", "s"), Equals(x[i], 2 * x[i]), inputs=(x,),
                     expect="{expect}")
"""

BROKEN = "import sympy as sp\ndef broken(:\n"

# Loads in the parent and in the worker that loads files for discovery; kills or stalls the
# worker that reloads it to check it (the one that has imported the runner).
DIES_IN_WORKER = """
    import multiprocessing, os, sys
    if multiprocessing.parent_process() is not None and "attnproof._runner" in sys.modules:
        os._exit(7)
""" + TRUE

HANGS_IN_WORKER = """
    import multiprocessing, sys, time
    if multiprocessing.parent_process() is not None and "attnproof._runner" in sys.modules:
        time.sleep(600)
""" + TRUE


def write(directory, filename: str, template: str, name: str = "", expect: str = "holds"):
    text = textwrap.dedent(template).format(name=name, expect=expect)
    (directory / filename).write_text(text)
