"""The simulation node's pacing and start-up, end to end: the node as a separate process over
DDS (tests/ros/node_harness.py), checked from a client node in this process.

What is checked (nothing here measures how fast this machine is: bench/node.py N3 does):
  real_time_factor  changes at run time through the parameter service and
                  ~/set_real_time_factor (integers accepted) and the node reports it (parameter,
                  ~/get_real_time_factor, ~/status); bad values refused by both routes; paced at
                  f, sim time never runs ahead of f x the wall time since play (causality: a
                  status received at wall time w was published before w, by a node that started
                  stepping after play was sent)
  paused start    ~/status says paused at step 0, and /clock stays at 0
  start-up        a malformed world file: exit code 2, the file and line named; an integer
                  real_time_factor on the command line; the robot from robot_description_topic
  SIGINT          a running node stops with exit code 0 and no traceback
The topics of the default world are tests/ros/test_node.py's.
"""
from __future__ import annotations

import math
import re
import time

import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from simulation_interfaces.msg import SimulationState
from simulation_interfaces.srv import SetSimulationState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from node_harness import (DEEP, LATCHED, NO_PLUGINS, REPO, NodeProcess, get_parameter,
                          next_domain, ns, set_parameter, start_node)
from sim_node.msg import SimStatus
from sim_node.srv import GetRealTimeFactor, SetRealTimeFactor

# Generated message code imports rosidl_parser, whose lark-parser imports sre_parse.
pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
DT = 0.001                          # [s] pendulum.yaml's physics_dt
WAIT = 120.0                        # [s] generous: a loaded machine


# -- the pendulum world: the real-time factor --------------------------------------------------
@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    """A node on the pendulum world, started paused at real_time_factor 0.25 and played at
    `played` [s, monotonic], ~/status at 5 Hz of wall time."""
    node, client = start_node(tmp_path_factory, "pendulum", {
        "world": str(PENDULUM_WORLD), "real_time_factor": 0.25, "paused": True,
        "status_rate": 5.0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(SimStatus, "/sim/status", DEEP)
        client.wait_for("/sim/status", 1, timeout=WAIT)
        played = time.monotonic()
        response = client.call(SetSimulationState, "/sim/set_simulation_state",
                               SetSimulationState.Request(state=SimulationState(
                                   state=SimulationState.STATE_PLAYING)), timeout=WAIT)
        assert response.result.result == 1, response.result.error_message
        yield node, client, played
    finally:
        client.close()
        node.stop()


def status_reporting(client, factor: float) -> SimStatus:
    """The first ~/status that reports the target `factor` (waited for, not timed)."""
    return client.wait_for("/sim/status", timeout=WAIT,
                           predicate=lambda m: m.target_real_time_factor == factor)[0]


def test_paced_sim_time_never_runs_ahead_of_the_wall_clock(pendulum):
    """At real_time_factor 0.25 (unchanged since play): every ~/status's sim time is at most
    0.25 x the wall time since play was sent, plus two steps (the pacer anchors after the first
    step). A node that ignored the factor would run far ahead; a slow machine only lags."""
    _, client, played = pendulum
    status_reporting(client, 0.25)
    client.wait_for("/sim/status", timeout=WAIT, predicate=lambda m: ns(m.sim_time) > 0.3e9)
    checked = 0
    for arrival, status in list(client.received["/sim/status"]):
        if status.target_real_time_factor != 0.25 or arrival < played:
            continue
        assert ns(status.sim_time) * 1e-9 <= 0.25 * (arrival - played) + 2 * DT
        checked += 1
    assert checked >= 2


def test_real_time_factor_set_as_parameter_is_reported(pendulum):
    _, client, _ = pendulum
    for factor in (2.0, 0.0, 0.25):
        assert set_parameter(client, "real_time_factor", factor).successful
        assert status_reporting(client, factor).target_real_time_factor == factor
        response = client.call(GetRealTimeFactor, "/sim/get_real_time_factor",
                               GetRealTimeFactor.Request())
        assert response.target_real_time_factor == factor
        assert get_parameter(client, "real_time_factor") == factor


def test_set_real_time_factor_service_changes_the_parameter(pendulum):
    _, client, _ = pendulum
    try:
        response = client.call(SetRealTimeFactor, "/sim/set_real_time_factor",
                               SetRealTimeFactor.Request(real_time_factor=2.0))
        assert response.success, response.message
        assert get_parameter(client, "real_time_factor") == 2.0
        assert status_reporting(client, 2.0).target_real_time_factor == 2.0
    finally:
        assert set_parameter(client, "real_time_factor", 0.25).successful


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_bad_real_time_factor_is_refused_by_both_routes(pendulum, bad):
    _, client, _ = pendulum
    try:
        assert set_parameter(client, "real_time_factor", 1.5).successful
        result = set_parameter(client, "real_time_factor", bad)
        assert not result.successful
        assert "real_time_factor" in result.reason and ">= 0" in result.reason
        response = client.call(SetRealTimeFactor, "/sim/set_real_time_factor",
                               SetRealTimeFactor.Request(real_time_factor=bad))
        assert not response.success
        assert "real_time_factor" in response.message and ">= 0" in response.message
        assert get_parameter(client, "real_time_factor") == 1.5
        response = client.call(GetRealTimeFactor, "/sim/get_real_time_factor",
                               GetRealTimeFactor.Request())
        assert response.target_real_time_factor == 1.5
    finally:
        assert set_parameter(client, "real_time_factor", 0.25).successful


def test_integer_real_time_factor_is_taken_as_a_number(pendulum):
    _, client, _ = pendulum
    try:
        result = set_parameter(client, "real_time_factor", 2)
        assert result.successful, result.reason
        assert get_parameter(client, "real_time_factor") == 2.0
    finally:
        assert set_parameter(client, "real_time_factor", 0.25).successful


# -- start-up ------------------------------------------------------------------------------------
def test_paused_start_does_not_advance_the_clock(tmp_path_factory):
    node, client = start_node(tmp_path_factory, "paused", {
        "world": str(PENDULUM_WORLD), "paused": True, "real_time_factor": 0.0,
        "status_rate": 20.0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(SimStatus, "/sim/status", DEEP)
        # ~/status goes on while paused (in wall time): three of them, all at step 0
        statuses = client.wait_for("/sim/status", 3, timeout=WAIT)
        for status in statuses:
            assert status.paused and status.step_count == 0 and ns(status.sim_time) == 0
        response = client.call(GetRealTimeFactor, "/sim/get_real_time_factor",
                               GetRealTimeFactor.Request())
        assert response.target_real_time_factor == 0.0
        assert all(ns(m.clock) == 0 for m in client.messages("/clock"))
        assert node.process.poll() is None
    finally:
        client.close()
        node.stop()


MALFORMED_WORLDS = {
    # a YAML syntax error: an unclosed flow sequence that runs into the end of the file (line 6)
    "syntax": ("simulation:\n  physics_dt: 0.001\nrobots:\n  - name: a\n    urdf: [unclosed\n",
               6),
    # an unknown key in the 4th line's entry
    "unknown_key": ("simulation:\n  physics_dt: 0.001\nterrains:\n  - name: ground\n"
                    "    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}\n"
                    "    colour: red\n", 4),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_WORLDS))
def test_malformed_world_file_exits_with_code_2_naming_file_and_line(tmp_path, case):
    text, line = MALFORMED_WORLDS[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    node = NodeProcess(next_domain(), {"world": str(path), "default_plugins": NO_PLUGINS},
                       log_path=tmp_path / "node.log")
    try:
        code = node.process.wait(timeout=60)
    finally:
        node.stop()
    log = node.log()
    assert code == 2, log
    assert re.search(rf"{re.escape(str(path))}:{line}\b", log), log
    assert "Traceback" not in log


def test_integer_real_time_factor_on_the_command_line_starts_the_node(tmp_path_factory):
    node, client = start_node(tmp_path_factory, "integer", {
        "world": str(PENDULUM_WORLD), "real_time_factor": 0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        deadline = time.monotonic() + 60
        while node.process.poll() is None and not client.messages("/clock"):
            assert time.monotonic() < deadline, "neither /clock nor an exit within 60 s"
            time.sleep(0.05)
        assert node.process.poll() is None, node.log()
    finally:
        client.close()
        node.stop()


def test_sigint_stops_a_running_node_cleanly(tmp_path_factory):
    node, client = start_node(tmp_path_factory, "sigint", {
        "world": str(PENDULUM_WORLD), "real_time_factor": 1.0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.wait_for("/clock", 10, timeout=60)
    finally:
        client.close()
        code = node.stop()
    assert code == 0
    assert "Traceback" not in node.log(), node.log()


@pytest.mark.parametrize("source", ["/upstream/robot_description", "/robot_description"])
def test_a_robot_description_topic_gives_the_robot_to_simulate(tmp_path_factory, source):
    """As robot_state_publisher offers it: std_msgs/String, transient local, published before
    the node starts. The node simulates that robot, the world's only one, at the root, and
    offers its description on /robot_description unless it came from there."""
    urdf = (REPO / "data" / "robots" / "pendulum" / "pendulum.urdf").read_text()
    node, client = start_node(tmp_path_factory, "description", {
        "robot_description_topic": source, "real_time_factor": 0.0})
    try:
        publisher = client.node.create_publisher(String, source, LATCHED)
        publisher.publish(String(data=urdf))
        client.subscribe(JointState, "/joint_states", DEEP, keep=10)
        client.subscribe(String, "/robot_description", LATCHED)
        [state] = client.wait_for("/joint_states", 1, timeout=WAIT)[:1]
        assert list(state.name) == ["joint1"]
        [description] = client.wait_for("/robot_description", 1, timeout=WAIT)[:1]
        assert description.data == urdf
        # the node's services are announced after its publishers: once one answers, the graph
        # here holds every publisher the node made
        client.call(GetRealTimeFactor, "/sim/get_real_time_factor", GetRealTimeFactor.Request(),
                    timeout=WAIT)
        publishers = {info.node_name for info in
                      client.node.get_publishers_info_by_topic("/robot_description")}
        assert publishers == ({"test_client"} if source == "/robot_description" else {"sim"})
    finally:
        client.close()
        assert node.stop() == 0
