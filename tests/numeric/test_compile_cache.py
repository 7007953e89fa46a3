"""Compiled programs stored whole: loaded for the same identity and shapes, recompiled when the
entry is damaged or anything in its key differs, never stored with caching off."""

import numpy as np
import pytest

from attnproof.numeric import _compile_cache
from attnproof.numeric._backends import backend

jax = pytest.importorskip("jax")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(_compile_cache.DIRECTORY_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "")
    backend("jax").load()  # x64 on, as the checker runs it
    return tmp_path / "cache"


class Counted:
    """A jitted function that counts how often it is lowered (traced)."""

    def __init__(self, scale):
        self.lowerings = 0
        self.jitted = jax.jit(lambda d: {"y": d["x"] * scale, "z": jax.numpy.sin(d["x"])})

    def lower(self, *args):
        self.lowerings += 1
        return self.jitted.lower(*args)

    def __call__(self, *args):
        return self.jitted(*args)


def arrays(n=3, dtype="float32"):
    return {"x": jax.numpy.arange(n, dtype=dtype)}


def programs(cache_dir):
    return sorted(cache_dir.rglob("*.bin"))


def test_a_stored_program_is_loaded_without_tracing(cache_dir):
    first = Counted(2.0)
    expected = _compile_cache.stored_program(first, ("double",))(arrays())
    again = Counted(2.0)
    found = _compile_cache.stored_program(again, ("double",))(arrays())
    assert (first.lowerings, again.lowerings) == (1, 0)
    for name in ("y", "z"):
        np.testing.assert_array_equal(np.asarray(found[name]), np.asarray(expected[name]))


def test_another_identity_shape_or_dtype_compiles_again(cache_dir):
    _compile_cache.stored_program(Counted(2.0), ("double",))(arrays())
    for identity, given in ((("triple",), arrays()), (("double",), arrays(n=4)),
                            (("double",), arrays(dtype="float64"))):
        fresh = Counted(3.0 if identity == ("triple",) else 2.0)
        _compile_cache.stored_program(fresh, identity)(given)
        assert fresh.lowerings == 1
    assert len(programs(cache_dir)) == 4


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "garbage"])
def test_a_damaged_program_is_recompiled_never_run(cache_dir, damage):
    _compile_cache.stored_program(Counted(2.0), ("double",))(arrays())
    (path,) = programs(cache_dir)
    content = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(content[: len(content) // 2])
    elif damage == "flipped byte":
        path.write_bytes(content[:-10] + bytes([content[-10] ^ 0xFF]) + content[-9:])
    else:
        path.write_bytes(b"not a program")
    fresh = Counted(2.0)
    found = _compile_cache.stored_program(fresh, ("double",))(arrays())
    assert fresh.lowerings == 1
    np.testing.assert_array_equal(np.asarray(found["y"]), [0.0, 2.0, 4.0])


def test_nothing_is_stored_with_caching_off(cache_dir, monkeypatch):
    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    counted = Counted(2.0)
    assert _compile_cache.stored_program(counted, ("double",)) is counted
    counted(arrays())
    assert programs(cache_dir) == []
