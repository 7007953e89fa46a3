"""A user's kernel runs under the user's configuration of its framework: the checker switches no
JAX setting on for the process (``jax_enable_x64`` was, before), a float64 cell needs x64 on or
a declaration that asks for it around that cell's calls alone, and the numeric checker's own
configuration, in a process that checks theorems too, never reaches a kernel's call.

Each check runs in a fresh interpreter: JAX's settings are the process's, and this test process
may have had them changed by the tests before it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

PROPERTIES = ["forward", "backward_dq", "causal", "mask"]
REPO = Path(__file__).resolve().parents[2]


def _run(code: str, *env_pairs: tuple[str, str]) -> dict:
    import os

    pytest.importorskip("jax")
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env.update(dict(env_pairs))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_kernel_written_for_jax_defaults_raises_under_x64_and_is_correct_without_it():
    found = _run(
        "import json, numpy as np, jax\n"
        "from tests.kernels import planted_jax\n"
        "x = np.random.default_rng(0).standard_normal((3, 1, 2, 6, 4)).astype(np.float32)\n"
        "out = np.asarray(planted_jax.attention(*x, is_causal=True))\n"
        "try:\n"
        "    with jax.enable_x64(True):\n"
        "        planted_jax.attention(*x)\n"
        "    raised = None\n"
        "except TypeError as error:\n"
        "    raised = str(error)\n"
        "print(json.dumps({'dtype': str(out.dtype), 'finite': bool(np.isfinite(out).all()),"
        " 'raised': raised}))\n")
    assert found["dtype"] == "float32" and found["finite"]
    assert "lax.div requires arguments to have the same dtypes" in found["raised"]


CHECK = (
    "import json, jax, jax.numpy as jnp\n"
    "from attnproof.kernels import check_kernel\n"
    "from tests.kernels import planted_jax\n"
    "before = bool(jax.config.jax_enable_x64)\n"
    "{prelude}"
    "r = check_kernel(planted_jax.default_dtypes_only, properties={properties!r}, examples=5)\n"
    "print(json.dumps({{'before': before, 'after': bool(jax.config.jax_enable_x64),\n"
    "    'zeros': str(jnp.zeros(()).dtype),\n"
    "    'cells': [[c.property, c.dtype, c.status, c.reason] for c in r.cells],\n"
    "    'messages': [(c.counterexample or {{}}).get('message', '') for c in r.cells]}}))\n")


def test_the_kernel_conforms_in_every_property_and_x64_stays_off():
    found = _run(CHECK.format(prelude="", properties=PROPERTIES))
    assert found["before"] is False and found["after"] is False
    assert found["zeros"] == "float32"
    assert [(p, d, s) for p, d, s, _ in found["cells"]] == \
        [(p, "float32", "conforms") for p in PROPERTIES], found["messages"]


def test_the_numeric_checkers_own_x64_never_reaches_a_kernel_and_stays_its_own():
    """A process that checks theorems (attnproof's pytest plugin, say) has the numeric
    checker switch x64 on for itself; a kernel checked there still runs with the user's."""
    prelude = ("from attnproof.numeric import backend\n"
               "backend('jax').load()\n"
               "assert jax.config.jax_enable_x64\n")
    found = _run(CHECK.format(prelude=prelude, properties=["forward", "causal"]))
    assert found["before"] is False and found["after"] is True  # the numeric checker's
    assert [s for _, _, s, _ in found["cells"]] == ["conforms", "conforms"], found["messages"]


FLOAT64 = (
    "import json, dataclasses, jax\n"
    "from attnproof.kernels import check_kernel\n"
    "from attnproof.kernels.library import LIBRARY\n"
    "asks = LIBRARY['jax']()\n"
    "plain = dataclasses.replace(asks, enable_x64=False)\n"
    "cells = [check_kernel(k, properties=['forward'], dtypes=['float64'], examples=3).cells[0]\n"
    "         for k in (asks, plain)]\n"
    "print(json.dumps({'x64': bool(jax.config.jax_enable_x64), 'declared': "
    "[k.enable_x64 for k in (asks, plain)],\n"
    "    'cells': [[c.status, c.reason, c.cases] for c in cells]}))\n")


def test_a_float64_cell_runs_where_the_declaration_asks_and_is_skipped_naming_x64_otherwise():
    found = _run(FLOAT64)
    assert found["x64"] is False and found["declared"] == [True, False]
    (asked, reason, cases), (skipped, why, none) = found["cells"]
    assert asked == "conforms" and cases >= 3
    assert skipped == "skipped" and none == 0
    assert "jax_enable_x64" in why and "enable_x64=True" in why


def test_where_the_user_switched_x64_on_a_float64_cell_runs_without_asking():
    found = _run(FLOAT64, ("JAX_ENABLE_X64", "1"))
    assert found["x64"] is True
    assert [status for status, _, _ in found["cells"]] == ["conforms", "conforms"]


def test_enable_x64_is_jaxs_alone():
    from attnproof.kernels import Kernel, KernelError

    with pytest.raises(KernelError, match="enable_x64: is JAX's setting; numpy has none"):
        Kernel("k", lambda q, k, v: q, "numpy", enable_x64=True)


def test_a_float64_mask_is_refused_where_x64_is_off_and_the_cell_decides_on_the_others():
    found = _run(
        "import json, jax\n"
        "from attnproof.kernels import check_kernel\n"
        "from tests.kernels import planted_jax\n"
        "c = check_kernel(planted_jax.float_masks, properties=['mask'], examples=8).cells[0]\n"
        "print(json.dumps({'x64': bool(jax.config.jax_enable_x64), 'status': c.status,\n"
        "    'refused': c.refused, 'decided': c.decided, 'refusal': c.refusal}))\n")
    assert found["x64"] is False and found["status"] == "conforms"
    assert found["refused"] >= 1 and found["decided"] >= 3
    assert "jax_enable_x64" in found["refusal"]

