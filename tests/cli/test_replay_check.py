"""benchmarks/replay_check.py: which failures it replays, and how it reads a replay's exit."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def replay_check():
    spec = importlib.util.spec_from_file_location("replay_check",
                                                  ROOT / "benchmarks" / "replay_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RESULTS = {"theorems": [
    {"name": "false_claim", "numeric": [
        {"status": "failed", "backend": "jax", "dtype": "float32", "device": "gpu:1",
         "mode": "jit", "replay": "attnproof replay false_claim --device gpu:1"},
        {"status": "failed", "backend": "numpy", "dtype": "float64", "device": "cpu",
         "mode": "eager", "replay": "attnproof replay false_claim --device cpu"},
        {"status": "passed", "backend": "jax", "dtype": "float64", "device": "gpu",
         "mode": "jit", "replay": None}]},
    {"name": "true_claim", "numeric": [
        {"status": "passed", "backend": "numpy", "dtype": "float64", "device": "cpu",
         "mode": "eager"}]}]}

CONFORMANCE = {"kernels": [{"kernel": "k", "cells": [
    {"property": "forward", "dtype": "float16", "device": "gpu", "status": "fails",
     "replay": "attnproof replay forward --kernel k --case '{}'"},
    {"property": "forward", "dtype": "float32", "device": "gpu", "status": "raised",
     "replay": "attnproof replay forward --kernel k --dtype float32 --case '{}'"},
    {"property": "mask", "dtype": "float32", "device": "gpu", "status": "conforms"},
    {"property": "mask", "dtype": "float32", "device": "cpu", "status": "fails",
     "replay": "attnproof replay mask --kernel k --case '{}'",
     "other_failures": [{"mechanism": {"status": "raised", "output": None, "values": None,
                                       "regime": "n_k past 1024"},
                         "counterexample": {},
                         "replay": "attnproof replay mask --kernel k --case '{\"n_k\":1025}'"}]}
]}]}


def test_only_failures_on_the_device_asked_for_are_replayed(replay_check):
    on_gpu = replay_check.failed_records(RESULTS, "gpu")
    assert [(r.what, r.where) for r in on_gpu] == [("false_claim", "jax float32 gpu:1 jit")]
    assert len(replay_check.failed_records(RESULTS, None)) == 2
    cells = replay_check.failing_cells(CONFORMANCE, "gpu")
    assert [(c.what, c.where) for c in cells] == [("k forward", "float16 gpu"),
                                                  ("k forward", "float32 gpu")]


def test_each_further_failure_of_a_cell_is_replayed_too(replay_check):
    cells = replay_check.failing_cells(CONFORMANCE, "cpu")
    assert [(c.what, c.command) for c in cells] == [
        ("k mask", "attnproof replay mask --kernel k --case '{}'"),
        ("k mask (raised, n_k past 1024)",
         "attnproof replay mask --kernel k --case '{\"n_k\":1025}'")]


@pytest.mark.parametrize(("code", "reproduced"), [(1, True), (0, False), (2, False)])
def test_a_replay_reproduces_only_when_it_exits_1(replay_check, monkeypatch, tmp_path, code,
                                                  reproduced):
    # the command runs as ``CLI + its arguments``: a stand-in program that exits with ``code``
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text(f"import sys\nprint('last line')\nsys.exit({code})\n")
    monkeypatch.setattr(replay_check, "CLI", [sys.executable, str(stand_in)])
    replay = replay_check.Replay("false_claim", "numpy float64 cpu eager",
                                 "attnproof replay false_claim --seed 3")
    outcome = replay_check.run_replay(replay, seconds=60)
    assert (outcome.exit_code == 1) is reproduced
    text = replay_check.table([outcome])
    assert text.startswith(f"{int(reproduced)} of 1 replays reproduce")
    assert ("last line" in text) is not reproduced  # a replay that passes shows why


def test_a_record_without_a_replay_command_is_not_counted_as_reproduced(replay_check):
    outcome = replay_check.run_replay(replay_check.Replay("x", "cpu", ""), seconds=1)
    assert outcome.exit_code == -1 and outcome.last_line == "no replay command"


@pytest.mark.parametrize("command, says", [
    ("rm -rf /", "no replay command"),
    ("attnproof prove --out /", "no replay command"),
    ("attnproof replay x --theorems elsewhere/evil.py", "imports elsewhere/evil.py"),
    ("attnproof replay forward --kernel evil:kernel --case '{}'", "imports evil:kernel"),
    ("attnproof replay x --theorems=elsewhere/evil.py", "imports elsewhere/evil.py"),
    ("attnproof replay 'unclosed", "no replay command")])
def test_a_report_cannot_run_anything_but_a_replay_or_import_code_by_default(replay_check,
                                                                           command, says):
    outcome = replay_check.run_replay(replay_check.Replay("x", "cpu", command), seconds=1)
    assert outcome.exit_code == -1 and says in outcome.last_line


def test_code_a_report_names_runs_only_when_allowed(replay_check, monkeypatch, tmp_path):
    stand_in = tmp_path / "stand_in.py"
    stand_in.write_text("import sys\nsys.exit(1)\n")
    monkeypatch.setattr(replay_check, "CLI", [sys.executable, str(stand_in)])
    replay = replay_check.Replay("x", "cpu", "attnproof replay x --theorems mine/claims.py")
    assert replay_check.run_replay(replay, seconds=60, allow_code=True).exit_code == 1
