"""Worker lanes (``attnproof._workers.run_in_lanes``): the lanes side by side, each lane's tasks
in order on one worker while the lane lasts, and a worker that dies replaced with its lane
going on from its next task. Each task reports the worker's process id, so what ran where is
read from the tasks themselves."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from attnproof._workers import Collected, TimeLimit, run_in_lanes

LIMIT = TimeLimit(120.0, per_step=True)  # only a hang would reach it


def report_process(task, emit) -> None:
    """A task ("lane", number, action): say which process ran it; "die" ends that process."""
    lane, number, action = task
    if action == "die":
        os._exit(3)
    emit(("numeric", {"lane": lane, "number": number, "pid": os.getpid()}))
    emit(("done", None))


@dataclass
class _Followed:
    ran: list = field(default_factory=list)
    ended: list = field(default_factory=list)

    def message(self, task):
        return task

    def collector(self, task):
        return Collected()

    def start(self, task) -> None:
        pass

    def finish(self, task, collected, seconds: float) -> None:
        self.ended.append((task, collected.failure))
        self.ran += collected.numeric


def _lane(name: str, count: int, dies_at: int | None = None):
    return [(name, n, "die" if n == dies_at else "report") for n in range(count)]


def test_each_lanes_tasks_run_in_order_on_one_worker_and_lanes_run_side_by_side():
    followed = _Followed()
    run_in_lanes([_lane("a", 4), _lane("b", 4)], report_process, followed, 2, LIMIT)
    by_lane = {lane: [r for r in followed.ran if r["lane"] == lane] for lane in "ab"}
    for records in by_lane.values():
        assert [r["number"] for r in records] == [0, 1, 2, 3]
        assert len({r["pid"] for r in records}) == 1  # one worker for the lane
    assert by_lane["a"][0]["pid"] != by_lane["b"][0]["pid"]  # two workers at once


def test_a_lane_whose_worker_dies_goes_on_from_its_next_task_in_a_fresh_worker():
    followed = _Followed()
    run_in_lanes([_lane("a", 4, dies_at=1), _lane("b", 2)], report_process, followed, 1,
                 LIMIT)
    numbers = [(r["lane"], r["number"]) for r in followed.ran]
    assert numbers == [("a", 0), ("a", 2), ("a", 3), ("b", 0), ("b", 1)]
    died = [task for task, failure in followed.ended if failure]
    assert died == [("a", 1, "die")]
    pids = {(r["lane"], r["number"]): r["pid"] for r in followed.ran}
    assert pids[("a", 0)] != pids[("a", 2)] == pids[("a", 3)]


def test_lanes_are_taken_lazily_as_workers_are_free():
    taken = []

    def lanes():
        for name in "abc":
            taken.append(name)
            yield _lane(name, 1)

    followed = _Followed()
    run_in_lanes(lanes(), report_process, followed, 1, LIMIT)
    assert taken == ["a", "b", "c"]
    assert [r["lane"] for r in followed.ran] == ["a", "b", "c"]
