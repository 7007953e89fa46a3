"""The harness checks what ``attnproof prove`` checks (issue 32): under the default profile each
backend's default mode, from the function prove's runner calls; ``--attnproof-profile thorough``
adds every other mode (eager JAX); ``--attnproof-device D`` keeps one device or kind; unknown
words are usage errors; an eager/jit disagreement still makes the theorem "inconsistent"."""

from __future__ import annotations

import json
import os
import re
from types import SimpleNamespace

import pytest

from attnproof import _harness as harness
from attnproof import numeric
from attnproof import pytest_plugin as plugin
from attnproof._runner import Options, _configurations
from attnproof.numeric import NumericRecord
from attnproof.report import describe
from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

n = Dim("n")
i = n.index("i")
x = Tensor("x", (n,))
DOUBLING = Theorem("doubling", Source("doc.txt", "§1"), Equals(x[i] + x[i], 2 * x[i]),
                   inputs=(x,))


@pytest.fixture(autouse=True)
def _no_profile_from_the_environment(monkeypatch):
    monkeypatch.delenv("ATTNPROOF_PROFILE", raising=False)


def _config(profile=None, devices=None):
    option = SimpleNamespace(attnproof_profile=profile, attnproof_device=devices)
    return SimpleNamespace(option=option,
                           getoption=lambda name, default=None: getattr(option, name, default))


def _cases(theorems, config=None) -> list[tuple]:
    return [tuple(case.values[1:]) for case in harness.numeric_cases(theorems, config)]


# -- the default is prove's configuration list ------------------------------------------------


def test_the_default_parametrization_is_proves_configuration_list(catalog):
    for theorem in (*catalog.theorems, DOUBLING):
        assert _cases([theorem]) == _configurations(theorem, Options()), theorem.name
    assert ("jax", "float64", "cpu", "eager") not in _cases([DOUBLING])


@pytest.mark.parametrize("profile", numeric.PROFILE_NAMES)
def test_each_profile_gives_the_configurations_prove_runs_with_it(profile):
    cases = _cases([DOUBLING], _config(profile))
    assert cases == _configurations(DOUBLING, Options(profile=profile))
    assert cases
    every_mode = numeric.profile(profile).every_mode
    for row in numeric.BACKENDS:
        found = {mode for b, _, _, mode in cases if b == row.name}
        if found:
            assert found == (set(row.modes) if every_mode else {row.default_mode}), row.name


def test_thorough_adds_eager_jax_to_the_default():
    pytest.importorskip("jax")
    default, thorough = _cases([DOUBLING]), _cases([DOUBLING], _config("thorough"))
    added = [c for c in thorough if c not in default]
    assert set(default) < set(thorough)
    assert added and all(c[0] == "jax" and c[3] == "eager" for c in added)


def test_attnproof_profile_in_the_environment_is_the_default_profile(monkeypatch):
    monkeypatch.setenv("ATTNPROOF_PROFILE", "thorough")
    assert harness.selection(_config()) == ("thorough", None)
    assert harness.selection(_config("quick")) == ("quick", None)  # the option wins


# -- devices ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("device", "chosen", "kept"), [
    ("cpu", ["cpu"], True), ("gpu", ["cpu"], False), ("gpu:0", ["gpu"], True),
    ("gpu:1", ["gpu:1"], True), ("gpu:0", ["gpu:1"], False), ("gpu:1", ["cpu", "gpu:1"], True),
    ("gpu", None, True), ("gpu", [], True),
])
def test_a_device_word_keeps_that_device_or_every_device_of_that_kind(device, chosen, kept):
    assert harness.on_devices(device, chosen) is kept


def test_attnproof_device_cpu_keeps_the_cpu_configurations():
    every = _cases([DOUBLING])
    assert _cases([DOUBLING], _config(devices=["cpu"])) == [
        c for c in every if c[2].partition(":")[0] == "cpu"]
    assert _cases([DOUBLING], _config(devices=["cpu"]))
    assert _cases([DOUBLING], _config(devices=["cpu"])) == _configurations(
        DOUBLING, Options(devices=("cpu",)))  # as prove --device cpu


@pytest.mark.parametrize(("profile", "devices", "message", "word"), [
    ("thorogh", None, "--attnproof-profile: unknown profile 'thorogh'; did you mean 'thorough'?",
     "thorogh"),
    (None, ["cpu", "banana"], "--attnproof-device: unknown device", "'banana'"),
    (None, ["gpu:"], "--attnproof-device: unknown device", "'gpu:'"),
])
def test_an_unknown_profile_or_device_is_a_usage_error(profile, devices, message, word):
    with pytest.raises(pytest.UsageError) as error:
        plugin._check_selection(_config(profile, devices))
    assert str(error.value).startswith(message) and word in str(error.value)


def test_known_words_pass():
    assert plugin._check_selection(_config("thorough", ["cpu", "gpu:1"])) == ["cpu", "gpu:1"]
    assert plugin._check_selection(_config()) == []


# -- an eager/jit disagreement is still "inconsistent" -----------------------------------------


def _record(mode, **fields) -> dict:
    return {"theorem": "doubling", "backend": "jax", "dtype": "float64", "device": "cpu",
            "mode": mode, "status": "passed", "instances": 512, "max_error_bits": 1.0,
            **fields}


def _test_report(nodeid, properties, failed=False):
    return SimpleNamespace(nodeid=nodeid, when="call", failed=failed, skipped=False,
                           user_properties=list(properties.items()),
                           longrepr="AssertionError: status failed" if failed else None)


@pytest.mark.parametrize("eager", [
    _record("eager", status="failed", counterexample={"sizes": {"n": 2}, "x[0]": 1.0}),
    _record("eager", status="inconsistent", reason="float64 strays from the 50-digit value"),
], ids=["float64-counterexample-beside-a-proof", "strays-from-the-50-digit-value"])
def test_an_eager_record_that_disagrees_makes_the_theorem_inconsistent(eager):
    description = json.dumps(describe(DOUBLING), default=str)
    symbolic = {"theorem": "doubling", "status": "proved", "method": "fake", "seconds": 0.1}
    tests = {
        "h.py::test_symbolic[doubling]": {plugin.SYMBOLIC_KEY: json.dumps(symbolic)},
        "h.py::test_numeric[doubling-jax-float64-cpu-jit]": {
            plugin.NUMERIC_KEY: json.dumps(_record("jit"))},
        "h.py::test_numeric[doubling-jax-float64-cpu-eager]": {
            plugin.NUMERIC_KEY: json.dumps(eager)},
    }
    collector = plugin._Collector()
    collector.expect([(nodeid, "doubling") for nodeid in tests])
    for nodeid, properties in tests.items():
        collector.take(_test_report(nodeid, {plugin.THEOREM_KEY: description, **properties},
                                    failed="eager" in nodeid))
    report = collector.report(stopped_early=False, by_node_id=False)
    (result,) = report.theorems
    assert (result.status, result.ok) == ("inconsistent", False)
    assert {r.mode for r in result.numeric} == {"jit", "eager"}
    assert not report.partial


@pytest.mark.parametrize("status", ["inconsistent", "failed"])
def test_the_harness_fails_an_eager_record_that_disagrees_and_searches_by_the_profile(
        monkeypatch, status):
    asked = []

    def check(theorem, backend, dtype, device, mode, profile=None):
        asked.append(profile)
        return NumericRecord(backend, dtype, device, mode, status, examples=2, instances=512,
                             max_error_ulps=1e9, max_error_bits=30.0,
                             counterexample={"x[0]": 1.0}, reason="disagrees")

    monkeypatch.setattr(numeric, "check", check)
    with pytest.raises(pytest.fail.Exception):
        harness.check_numeric(DOUBLING, "jax", "float64", "cpu", "eager", None, "thorough")
    assert asked == ["thorough"]
    with pytest.raises(pytest.fail.Exception):
        harness.check_numeric(DOUBLING, "jax", "float64", "cpu", "eager")
    assert asked == ["thorough", "default"]  # prove's default profile


def test_a_device_restriction_marks_the_report_partial():
    collector = plugin._Collector(restrictions=["numeric checks only on devices cpu"])
    assert collector._partial_reasons(False, False) == ["numeric checks only on devices cpu"]


# -- in child pytest sessions: the options reach both harnesses --------------------------------

USER_THEOREM = '''
from attnproof import Dim, Equals, Source, Tensor, Theorem, softmax

n = Dim("n")
i = n.index("i")
x = Tensor("x", (n,))

shift = Theorem(name="softmax_shift_invariance", source=Source("my notes", "§1"),
                claim=Equals(softmax(x[i] + 3, i), softmax(x[i], i)), inputs=(x,))
'''


def _numeric_ids(result) -> list[str]:
    return re.findall(r"test_numeric\[([^\]]+)\]", result.stdout.str())


@pytest.fixture
def user(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "shift.py").write_text(USER_THEOREM)

    def collect(*args):
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q",
                                             "--attnproof-theorems", "mine", *args, timeout=300)

    return collect


@pytest.mark.slow
def test_a_users_harness_follows_the_profile_and_device_options(user):
    pytest.importorskip("jax")
    default = _numeric_ids(user())
    thorough = _numeric_ids(user("--attnproof-profile", "thorough"))
    on_cpu = _numeric_ids(user("--attnproof-device", "cpu"))
    expected = [f"softmax_shift_invariance-{'-'.join(c)}"
                for c in _configurations(_user_theorem(), Options())]
    assert default == expected
    assert not [t for t in default if t.startswith("softmax_shift_invariance-jax-")
                and t.endswith("-eager")]
    assert [t for t in thorough if t not in default] and all(
        "-jax-" in t and t.endswith("-eager") for t in thorough if t not in default)
    assert on_cpu == [t for t in default if t.rsplit("-", 2)[1].partition(":")[0] == "cpu"]


def _user_theorem():
    namespace: dict = {}
    exec(USER_THEOREM, namespace)
    return namespace["shift"]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (["--attnproof-profile", "fast"], "--attnproof-profile: unknown profile 'fast'"),
    (["--attnproof-device", "banana"], "--attnproof-device: unknown device"),
])
def test_an_unknown_word_ends_the_session_as_a_usage_error(user, args, message):
    result = user(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


@pytest.mark.slow
def test_a_run_on_one_device_writes_a_partial_report_that_names_it(pytester):
    (pytester.path / "mine").mkdir()
    (pytester.path / "mine" / "shift.py").write_text(USER_THEOREM)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--attnproof-theorems", "mine", "--attnproof-device", "cpu",
        "-k", "symbolic or numpy-float64", timeout=300)
    result.assert_outcomes(passed=2)
    data = json.loads((pytester.path / "reports" / "pytest" / "results.json").read_text())
    assert (data["run"]["profile"], data["run"]["devices"]) == ("default", ["cpu"])
    assert data["partial"] and "numeric checks only on devices cpu" in data["partial_reason"]


@pytest.mark.slow  # collects the catalog and the planted theorems
def test_the_repositorys_harness_follows_the_profile_option(pytester):
    pytest.importorskip("jax")

    def collect(*args):
        return _numeric_ids(pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--rootdir", REPO, "--collect-only", "-q",
            os.path.join(REPO, "tests", "test_harness.py"), "-k",
            "test_numeric and softmax_shift_invariance", *args, timeout=300))

    default, thorough = collect(), collect("--attnproof-profile", "thorough")
    assert default and not [t for t in default if "-jax-" in t and t.endswith("-eager")]
    added = [t for t in thorough if t not in default]
    assert added and all("-jax-" in t and t.endswith("-eager") for t in added)
