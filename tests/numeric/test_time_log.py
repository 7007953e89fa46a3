"""The time log: each line is a phase's own seconds, so a run's lines add up without counting any
second twice; nothing is measured or written unless the log is asked for."""

import json

from attnproof.numeric import _time_log as time_log


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_phase_excludes_the_phases_and_stages_nested_in_it(tmp_path, monkeypatch):
    log = tmp_path / "time.jsonl"
    monkeypatch.setenv(time_log.ENVIRONMENT_VARIABLE, str(log))
    clock = Clock()
    monkeypatch.setattr(time_log, "_clock", clock)
    with time_log.phase("outer"):
        with time_log.phase("inner"):
            clock.now = 5.0
            time_log.record("compile", 5.0)  # as JAX reports a stage it timed: 0 s to 5 s
            clock.now = 6.0
        clock.now = 8.0
    found = {entry["stage"]: entry["seconds"] for entry in lines(log)}
    # each phase's own seconds: inner 5..6, outer 6..8; together the 8 s that passed, once
    assert found == {"compile": 5.0, "inner": 1.0, "outer": 2.0}


def test_lines_carry_the_configuration_they_were_measured_in(tmp_path, monkeypatch):
    log = tmp_path / "time.jsonl"
    monkeypatch.setenv(time_log.ENVIRONMENT_VARIABLE, str(log))
    with time_log.attributed("t", "jax", "float32", "jit", {"n": 3}):
        time_log.record("lower", 0.5)
    time_log.record("lower", 0.25)
    first, second = lines(log)
    assert (first["theorem"], first["backend"], first["shape"]) == ("t", "jax", "n=3")
    assert "theorem" not in second


def test_nothing_is_written_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(time_log.ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    with time_log.phase("outer"):
        time_log.record("compile", 1.0)
    assert not time_log.enabled()
    assert list(tmp_path.iterdir()) == []
