"""The simulation node's pacing and start-up, end to end: the node as a separate process over
DDS (tests/ros/node_harness.py), checked from a client node in this process.

What is checked:
  real_time_factor 1 paces sim time to wall time, 0 runs free, changes at run time through the
                  parameter service and ~/set_real_time_factor (integers accepted), bad values
                  refused by both routes
  paused start    no /clock advance
  start-up        a malformed world file: exit code 2, the file and line named; an integer
                  real_time_factor on the command line
  SIGINT          a running node stops with exit code 0 and no traceback

Independent reference: wall time of this process (sim time of ~/status over wall time of its
arrival, over windows of 2 s). The topics of the default world are tests/ros/test_node.py's;
each module runs its own node processes, so these rates are measured without them.
"""
from __future__ import annotations

import math
import re
import time

import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from node_harness import (DEEP, LATCHED, NO_PLUGINS, REPO, Client, NodeProcess, get_parameter,
                          next_domain, ns, received, set_parameter, start_node)
from sim_node.msg import SimStatus
from sim_node.srv import GetRealTimeFactor, SetRealTimeFactor

# Generated message code imports rosidl_parser, whose lark-parser imports sre_parse.
pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"


# -- the pendulum world: the real-time factor --------------------------------------------------
@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    """A node on the pendulum world, ~/status at 5 Hz of wall time."""
    node, client = start_node(tmp_path_factory, "pendulum", {
        "world": str(PENDULUM_WORLD), "real_time_factor": 1.0, "status_rate": 5.0,
        "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(SimStatus, "/sim/status", DEEP)
        client.wait_for("/sim/status", 1, timeout=60)
        yield node, client
    finally:
        client.close()
        node.stop()


def status_window(client: Client, seconds: float = 2.0) -> list:
    """(wall arrival time [s], SimStatus) of the ~/status messages of the next `seconds`."""
    since = time.monotonic() + 0.25         # the node is past the change
    time.sleep(seconds + 0.25)
    window = received(client, "/sim/status", since)
    assert len(window) >= 5
    return window


def sim_over_wall(first, last) -> float:
    """Sim time over wall time between two (arrival, SimStatus)."""
    (wall0, status0), (wall1, status1) = first, last
    return (ns(status1.sim_time) - ns(status0.sim_time)) * 1e-9 / (wall1 - wall0)


def check_reported_rates(window: list):
    """Each status's real_time_factor is the sim time over wall time since the one before: on
    average over the window (the arrival times of single messages jitter in a busy test
    process)."""
    reported = [after[1].real_time_factor for after in window[1:]]
    measured = sim_over_wall(window[0], window[-1])
    assert abs(np.mean(reported) - measured) < 0.1 * measured


def test_real_time_factor_1_runs_sim_time_at_wall_time(pendulum):
    _, client = pendulum
    assert set_parameter(client, "real_time_factor", 1.0).successful
    window = status_window(client)
    assert abs(sim_over_wall(window[0], window[-1]) - 1.0) < 0.1
    assert {status.target_real_time_factor for _, status in window} == {1.0}
    check_reported_rates(window)


def test_real_time_factor_0_set_as_parameter_runs_free(pendulum):
    _, client = pendulum
    assert set_parameter(client, "real_time_factor", 0.0).successful
    window = status_window(client)
    assert sim_over_wall(window[0], window[-1]) > 5.0
    assert {status.target_real_time_factor for _, status in window} == {0.0}
    check_reported_rates(window)
    response = client.call(GetRealTimeFactor, "/sim/get_real_time_factor",
                           GetRealTimeFactor.Request())
    assert response.target_real_time_factor == 0.0


def test_set_real_time_factor_service_changes_rate_and_parameter(pendulum):
    _, client = pendulum
    response = client.call(SetRealTimeFactor, "/sim/set_real_time_factor",
                           SetRealTimeFactor.Request(real_time_factor=2.0))
    assert response.success, response.message
    assert get_parameter(client, "real_time_factor") == 2.0
    window = status_window(client)
    assert abs(sim_over_wall(window[0], window[-1]) - 2.0) < 0.2
    assert {status.target_real_time_factor for _, status in window} == {2.0}


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_bad_real_time_factor_is_refused_by_both_routes(pendulum, bad):
    _, client = pendulum
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


def test_integer_real_time_factor_is_taken_as_a_number(pendulum):
    _, client = pendulum
    result = set_parameter(client, "real_time_factor", 2)
    assert result.successful, result.reason
    assert get_parameter(client, "real_time_factor") == 2.0


# -- start-up ------------------------------------------------------------------------------------
def test_paused_start_does_not_advance_the_clock(tmp_path_factory):
    node, client = start_node(tmp_path_factory, "paused", {
        "world": str(PENDULUM_WORLD), "paused": True, "real_time_factor": 0.0,
        "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(TFMessage, "/tf_static", LATCHED)
        client.wait_for("/tf_static", 1, timeout=60)    # the node is up and matched
        response = client.call(GetRealTimeFactor, "/sim/get_real_time_factor",
                               GetRealTimeFactor.Request())
        assert response.target_real_time_factor == 0.0
        time.sleep(1.0)
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


def test_a_robot_description_topic_gives_the_robot_to_simulate(tmp_path_factory):
    # as robot_state_publisher offers it: std_msgs/String, transient local, published before
    # the node starts; the node simulates that robot and republishes its description
    urdf = (REPO / "data" / "robots" / "pendulum" / "pendulum.urdf").read_text()
    node, client = start_node(tmp_path_factory, "description", {
        "robot_description_topic": "/robot_description", "real_time_factor": 0.0})
    try:
        publisher = client.node.create_publisher(String, "/robot_description", LATCHED)
        publisher.publish(String(data=urdf))
        client.subscribe(JointState, "/pendulum/joint_states", DEEP)
        client.subscribe(String, "/pendulum/robot_description", LATCHED)
        [state] = client.wait_for("/pendulum/joint_states", 1, timeout=60)[:1]
        assert list(state.name) == ["joint1"]
        [description] = client.wait_for("/pendulum/robot_description", 1, timeout=60)
        assert description.data == urdf
    finally:
        client.close()
        assert node.stop() == 0
