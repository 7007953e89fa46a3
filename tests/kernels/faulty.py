"""Planted kernels that end or stall the process running them: each is the planted correct
kernel, except on a causal case (the ``causal`` property's), where one segfaults, one sleeps
for ever and one calls ``os._exit``. Every other property's cells conform."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import time

from . import planted


def _segfault() -> None:
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def _hang() -> None:
    while True:
        time.sleep(1)


def _exit() -> None:
    os._exit(3)  # no exception, no cleanup: the process is gone


def _faulty_on_causal_cases(fault, name: str):
    def forward(q, k, v, causal=False, **keywords):
        if causal:
            fault()
        return planted.correct.fn(q, k, v, causal=causal, **keywords)

    return dataclasses.replace(planted.correct, name=name, fn=forward)


segfaults = _faulty_on_causal_cases(_segfault, "segfaults")
hangs = _faulty_on_causal_cases(_hang, "hangs")
exits = _faulty_on_causal_cases(_exit, "exits")
