"""The node's blow-up recovery policy (sim_node/ros/node.py SimNode._recover), in process on a
stand-in simulator whose states are their times: a blow-up restores the latest good state; the
same blow-up again (no later than the last) goes one kept state further back (at most 2 s of
sim time back with a state kept every second); from both, the simulation pauses, says so and
ends a running step request. (The node-level path with a real blow-up: test_safety.py.)"""
from __future__ import annotations

import logging

import pytest

from sim_node.ros.node import (SNAPSHOT_PERIOD, SimNode, StepRequestInterrupted, _Pacer,
                               _StepRequest)
from sim_node.sim.runstate import RunState
from sim_node.sim.simulator import STATUS_NORMAL, STATUS_UNSTABLE


class _Sim:
    def __init__(self):
        self.t = 0.0

    def getTime(self):
        return self.t

    def getState(self):
        return repr(self.t).encode()

    def setState(self, state):
        self.t = float(state.decode())

    def getStatus(self):
        return STATUS_NORMAL

    def getStatusString(self):
        return "normal"


class _Services:
    def __init__(self):
        self.recovered_calls = 0

    def recovered(self):
        self.recovered_calls += 1


@pytest.fixture
def node():
    # a SimNode without ROS: only what _recover and the snapshots use
    n = object.__new__(SimNode)
    n.sim, n.simulation_services = _Sim(), _Services()
    n.run_state = RunState(n.sim)
    n.physics_dt, n.paused, n.recoveries = 0.001, False, 0
    n._pacer, n._engine_report, n._stepping = _Pacer(0.0), None, None
    n.get_logger = lambda: logging.getLogger("test")
    n.forget_good_states()
    return n


def run_to(node, t):
    # good steps up to sim time t (kept states every SNAPSHOT_PERIOD)
    while node.sim.t < t - 1e-9:
        node.sim.t = round(node.sim.t + 0.25, 9)
        node._keep_good_state()


def test_a_blow_up_restores_the_latest_good_state_and_repeats_go_further_back(node):
    run_to(node, 2.5)                   # kept: 1.0 and 2.0 (0.0 dropped: the latest two)
    assert [t for t, _ in node._snapshots] == [1.0, 2.0]
    node._recover(2.5)
    assert node.sim.t == 2.0 and not node.paused and node.recoveries == 1
    assert node.engine_report() == (STATUS_UNSTABLE, "unstable at t = 2.500000 s: restored "
                                    "the state of t = 2.000000 s (recovery 1)")
    assert node.engine_report() == (STATUS_NORMAL, "normal")     # reported once
    run_to(node, 2.5)
    node._recover(2.5)                  # the same blow-up again: one state further back
    assert node.sim.t == 1.0 and 2.5 - node.sim.t <= 2 * SNAPSHOT_PERIOD
    request = _StepRequest(10 ** 9)
    node._stepping = request
    run_to(node, 2.5)
    node._recover(2.5)                  # and again: nothing recent is good
    assert node.paused and node.recoveries == 2 and node.sim.t == 2.5
    status, text = node.engine_report()
    assert status == STATUS_UNSTABLE and "paused" in text
    with pytest.raises(StepRequestInterrupted, match="unstable at t = 2.500000 s"):
        request.future.result(0)
    assert node.simulation_services.recovered_calls == 2


def test_a_later_blow_up_starts_again_from_the_latest_state(node):
    run_to(node, 2.5)
    node._recover(2.5)
    run_to(node, 2.75)
    node._recover(2.75)                 # progress past the last blow-up: the latest again
    assert node.sim.t == 2.0 and not node.paused


def test_a_blow_up_right_after_a_reset_restores_the_reset_state(node):
    node.sim.t = 7.0
    node.forget_good_states()           # a reset, restore or world change kept this state
    node.sim.t = 7.001
    node._recover(7.001)
    assert node.sim.t == 7.0 and not node.paused
