"""Lockstep end to end: the node as a separate process over DDS (tests/ros/node_harness.py), a
topic-based controller in this process.

The controller answers every /pendulum/joint_states it receives with one effort command on
/pendulum/effort_commands (std_msgs/Float64MultiArray, torque mode). The node publishes the
state stamped t_k in step k (before that step's commands are applied), so in lockstep the
command computed from the state t_k is applied in step k + 1, and the effort the node reports is
that of the last physics step: the joint_states stamped t_{k+2} reports the command computed
from the state t_k. That is checked value for value with commands that encode k, while the
controller now and then takes its time, so a node running ahead would report a stale effort.

What is checked:
  every step      each step's joint_states reaches the controller exactly once, stamps k dt
                  consecutive, no lockstep timeout
  one step delay  effort(t_{k+2}) = command(k) exactly, even with a slow controller
  determinism     two node runs with a PD controller: bit-identical joint states over 300 steps
  timeout         a controller that stops: the node steps on after lockstep_timeout, warning
                  with the topic named (lockstep_topics default: every command topic with a
                  publisher)
  lockstep_topics naming one topic: a silent publisher on another command topic is not waited
                  for
  typo            a lockstep topic no plugin subscribes: the warning says so and lists the
                  command topics
  stop            a node waiting for a command stops at once on SIGINT (exit code 0), not after
                  the timeout

The handshake before the run: the node starts paused, the controller's subscription and
publisher exist before ~/set_simulation_state(PLAYING) is called, so the node has discovered
them (DDS announces a participant's endpoints in creation order) before its first step.

Wall time: the node waits for a command at most lockstep_timeout. Where a test expects the
controller's command to make it in time, that timeout is LONG (the controller answers at once;
the bound only has to cover a loaded machine); a short one is used only where nothing depends
on the controller's speed (a topic nobody publishes).
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from simulation_interfaces.msg import SimulationState
from simulation_interfaces.srv import SetSimulationState
from std_msgs.msg import Float64MultiArray

from node_harness import DEEP, REPO, ns, start_node

# Generated message code imports rosidl_parser, whose lark-parser imports sre_parse.
pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
DT_NS = 1_000_000                   # pendulum.yaml's physics_dt, 1 ms
STATES = "/pendulum/joint_states"
EFFORT = "/pendulum/effort_commands"
VELOCITY = "/pendulum/velocity_commands"
WAIT = 120.0                        # [s] generous: a loaded 2-core machine
LONG = 2.0                          # [s] lockstep_timeout when the controller must make it


class Controller:
    """One effort command per joint_states received: law(k, message) for the state stamped
    k dt, after sleeping delays.get(k, 0) s; no command from step `stop_at` on. Keeps the
    states received."""

    def __init__(self, client, law, delays=None, stop_at=None):
        self.law, self.delays, self.stop_at = law, delays or {}, stop_at
        self.states: list[JointState] = []
        self.done = threading.Event()
        self.target = None
        self.publisher = client.publisher(Float64MultiArray, EFFORT, DEEP)
        client.node.create_subscription(JointState, STATES, self._on_state, DEEP)

    def _on_state(self, message):
        self.states.append(message)
        if self.target is not None and len(self.states) >= self.target:
            self.done.set()
        k = ns(message.header.stamp) // DT_NS       # (steps_of checks the stamps)
        if self.stop_at is not None and k >= self.stop_at:
            return
        time.sleep(self.delays.get(k, 0.0))
        self.publisher.publish(Float64MultiArray(data=[float(self.law(k, message))]))

    def wait(self, count: int):
        """The first `count` states received."""
        self.target = count
        if len(self.states) < count:
            assert self.done.wait(WAIT), f"{len(self.states)} of {count} joint_states received"
        return self.states[:count]


def play(client):
    response = client.call(SetSimulationState, "/sim/set_simulation_state",
                           SetSimulationState.Request(
                               state=SimulationState(state=SimulationState.STATE_PLAYING)),
                           timeout=WAIT)
    assert response.result.result == 1, response.result.error_message


@dataclass
class Run:
    states: list            # the joint_states the controller received, in arrival order
    log: str                # the node's output
    exit_code: int          # of the node stopped (SIGINT) after the controller went away


def run(tmp_path_factory, name, law, steps, params=None, delays=None, stop_at=None,
        extra=None) -> Run:
    """A paused pendulum node in lockstep, the controller, play, `steps` states; then the
    controller goes away and the node is stopped. `extra(client)` adds other endpoints before
    the play."""
    node, client = start_node(tmp_path_factory, name, {
        "world": str(PENDULUM_WORLD), "real_time_factor": 0.0, "paused": True,
        "lockstep": True, "lockstep_topics": [EFFORT], "lockstep_timeout": 30.0,
        "status_rate": 0.0, **(params or {})})
    try:
        controller = Controller(client, law, delays, stop_at)
        if extra is not None:
            extra(client)
        play(client)
        states = controller.wait(steps)
    finally:
        client.close()
        # waiting for the controller's next command: the stop must not wait out the timeout
        # (NodeProcess.stop SIGKILLs after 10 s, less than the 30 s timeout)
        exit_code = node.stop()
    return Run(states, node.log(), exit_code)


def steps_of(states) -> np.ndarray:
    """The step k of each state stamped k dt."""
    stamps = np.array([ns(m.header.stamp) for m in states])
    assert np.all(stamps % DT_NS == 0)
    return stamps // DT_NS


def encoded(k):
    """An effort [N m] that names its step: well within the pendulum's 50 N m limit."""
    return 1e-3 * (k + 1)


def test_every_step_reaches_the_controller_once_and_its_command_acts_one_step_later(
        tmp_path_factory):
    delays = {k: 0.3 for k in (3, 50, 51, 140)}     # a slow controller now and then
    result = run(tmp_path_factory, "delay", lambda k, m: encoded(k), 200, delays=delays)
    states = result.states
    assert steps_of(states).tolist() == list(range(200))
    efforts = np.array([m.effort[0] for m in states])
    # before any command: the PID holds the pendulum hanging at rest, zero torque
    assert efforts[:2].tolist() == [0.0, 0.0]
    assert efforts[2:].tolist() == [encoded(k) for k in range(198)]
    assert "no command on" not in result.log
    assert result.exit_code == 0        # stopped at once, though waiting for a command


def pd(k, message):
    """A PD controller swinging the pendulum to 0.5 rad [N m]."""
    return -20.0 * (message.position[0] - 0.5) - 2.0 * message.velocity[0]


def test_two_runs_with_the_same_controller_give_bit_identical_joint_states(tmp_path_factory):
    runs = []
    for name, delays in (("first", {}), ("second", {k: 0.2 for k in (10, 150)})):
        result = run(tmp_path_factory, name, pd, 300, delays=delays)
        assert steps_of(result.states).tolist() == list(range(300))
        assert "no command on" not in result.log
        runs.append(np.array([[*m.position, *m.velocity, *m.effort] for m in result.states]))
    first, second = runs
    assert first[-1, 0] > 0.1              # the pendulum did swing (to 0.5 rad)
    assert np.array_equal(first, second)


def test_without_commands_the_node_steps_on_after_the_timeout_naming_the_topic(
        tmp_path_factory):
    # lockstep_topics default: every command topic with a publisher, here the controller's
    result = run(tmp_path_factory, "timeout", lambda k, m: encoded(k), 23, stop_at=20,
                 params={"lockstep_topics": [""], "lockstep_timeout": LONG})
    states = result.states
    assert steps_of(states).tolist() == list(range(23))
    efforts = np.array([m.effort[0] for m in states])
    assert efforts[2:22].tolist() == [encoded(k) for k in range(20)]
    assert efforts[22:].tolist() == [encoded(19)]         # the last command stays in force
    assert f"lockstep: no command on {EFFORT} within {LONG} s for step 20" in result.log
    # the controller made it for every step before
    assert min(int(k) for k in re.findall(r"no command on .* for step (\d+)", result.log)) == 20


def silent_velocity_publisher(client):
    client.publisher(Float64MultiArray, VELOCITY)


@pytest.mark.parametrize("topics, timeout, waited_for", [
    ([EFFORT], 30.0, []),                   # the silent topic is not waited for
    ([""], LONG, [VELOCITY]),               # every command topic with a publisher is
])
def test_lockstep_waits_for_the_configured_topics_only(tmp_path_factory, topics, timeout,
                                                       waited_for):
    result = run(tmp_path_factory, "topics", lambda k, m: encoded(k), 5,
                 params={"lockstep_topics": topics, "lockstep_timeout": timeout},
                 extra=silent_velocity_publisher)
    states = result.states
    assert steps_of(states).tolist() == list(range(5))
    assert [m.effort[0] for m in states[2:]] == [encoded(k) for k in range(3)]
    warnings = [line for line in result.log.splitlines() if "no command on" in line]
    assert bool(warnings) == bool(waited_for)
    assert all(VELOCITY in w and EFFORT not in w for w in warnings)


def test_a_lockstep_topic_that_no_plugin_subscribes_is_named_in_the_warning(tmp_path_factory):
    result = run(tmp_path_factory, "typo", lambda k, m: encoded(k), 3,
                 params={"lockstep_topics": ["/pendulum/efort_commands"],
                         "lockstep_timeout": 0.2})
    warning = next(line for line in result.log.splitlines() if "no command on" in line)
    assert "no command on /pendulum/efort_commands within 0.2 s for step 0" in warning
    assert "no plugin subscribes /pendulum/efort_commands" in warning
    assert EFFORT in warning and VELOCITY in warning            # the command topics listed
