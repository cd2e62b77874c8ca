"""Commands end to end: the node as a separate process over DDS (tests/ros/node_harness.py), the
pendulum (data/worlds/pendulum.yaml) commanded from a client node in this process.

What is checked, each command form through its topic (and the same through joint_commands by
name):
  effort     torque mode: the angular acceleration from rest hanging down is effort / I, I the
             pendulum's inertia about its pivot from the URDF (gravity's torque sin q ~ 0 there)
  position   the PID reaches the target (the integral term removes the gravity sag)
  velocity   velocity mode: the joint turns on at the commanded speed (mean over 8 s of sim time;
             the PID target moves at that speed, so the error stays bounded)
  trajectory joint_trajectory with a start stamp in sim time: nothing moves before it, the joint
             is near the point at its time and holds the last point
  bad        unknown joint, wrong length, NaN, beyond the effort limit, a trajectory with an
             inf: nothing applied (the pendulum stays hanging at exactly 0), a warning
             naming the problem, the node goes on and takes the next good command

The node runs the world with joint_states at 200 Hz of sim time (so this process keeps up) at
real_time_factor 2. Times are sim time: the stamps of the joint_states.
"""
from __future__ import annotations

import math
import re
import time
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from node_harness import DEEP, REPO, ns, start_node

# Generated message code imports rosidl_parser, whose lark-parser imports sre_parse.
pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
PENDULUM_URDF = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
STATES = "/pendulum/joint_states"
RATE = 200.0                # [Hz] of joint_states
WAIT = 120.0                # [s] of wall time: generous on a loaded 2-core machine


def pivot_inertia() -> float:
    """I about joint1's (y) axis [kg m^2]: the link's iyy about its centre of mass plus m d^2."""
    inertial = ElementTree.parse(PENDULUM_URDF).find("link[@name='link1']/inertial")
    x, _, z = (float(v) for v in inertial.find("origin").get("xyz").split())
    mass = float(inertial.find("mass").get("value"))
    return float(inertial.find("inertia").get("iyy")) + mass * (x * x + z * z)


@pytest.fixture
def pendulum(tmp_path_factory):
    """A node on the pendulum world with its joint_states at RATE; (node, client) with the
    client subscribed to joint_states."""
    directory = tmp_path_factory.mktemp("world")
    text = PENDULUM_WORLD.read_text().replace("../robots/", f"{PENDULUM_URDF.parents[1]}/")
    world = directory / "pendulum.yaml"
    world.write_text(re.sub(
        r"(\n    controller: .*\n)", r"\1    plugins:\n"
        f"      - {{name: joint_state_publisher, config: {{rate: {RATE}}}}}\n"
        "      - {name: joint_commands}\n      - {name: joint_trajectory}\n", text))
    node, client = start_node(tmp_path_factory, "pendulum", {
        "world": str(world), "real_time_factor": 2.0, "status_rate": 0.0})
    try:
        client.subscribe(JointState, STATES, DEEP)
        client.wait_for(STATES, 1, timeout=WAIT)
        yield node, client
    finally:
        client.close()
        node.stop()


def states(client) -> np.ndarray:
    """Rows (t [s], q, v, effort) of the joint_states received, by stamp."""
    rows = [(ns(m.header.stamp) * 1e-9, m.position[0], m.velocity[0], m.effort[0])
            for m in client.messages(STATES)]
    return np.array(sorted(rows))


def latest_time(client) -> float:
    return states(client)[-1, 0]


def wait_until(client, t: float) -> np.ndarray:
    """The states once one stamped t [s] or later has arrived."""
    client.wait_for(STATES, timeout=WAIT, predicate=lambda m: ns(m.header.stamp) >= t * 1e9)
    return states(client)


def send(client, topic: str, message) -> float:
    """Publish once the node's subscription is matched; the latest sim time [s] before."""
    publisher = client.publisher(type(message), topic)
    deadline = time.monotonic() + WAIT
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, f"no subscription of {topic}"
        time.sleep(0.02)
    before = latest_time(client)
    publisher.publish(message)
    return before


def array(*values):
    return Float64MultiArray(data=list(values))


def by_name(**fields):
    return JointState(name=["joint1"], **{k: [v] for k, v in fields.items()})


@pytest.mark.parametrize("topic, message", [
    ("/pendulum/effort_commands", array(2.0)),
    ("/pendulum/joint_commands", by_name(effort=2.0)),
])
def test_an_effort_accelerates_the_pendulum_at_effort_over_inertia(pendulum, topic, message):
    node, client = pendulum
    before = send(client, topic, message)
    rows = wait_until(client, before + 1.0)
    # the samples whose last step had the torque, up to 20 ms (q < 3 mrad: sin q ~ 0)
    torqued = rows[rows[:, 3] == 2.0]
    window = torqued[torqued[:, 0] <= torqued[0, 0] + 0.02 + 1e-9]
    assert len(window) == 5
    t, _, v, _ = window.T
    acceleration = np.polyfit(t, v, 1)[0]
    assert acceleration == pytest.approx(2.0 / pivot_inertia(), rel=1e-2)


@pytest.mark.parametrize("topic, message", [
    ("/pendulum/position_commands", array(0.5)),
    ("/pendulum/joint_commands", by_name(position=0.5)),
])
def test_a_position_command_is_reached(pendulum, topic, message):
    node, client = pendulum
    before = send(client, topic, message)
    rows = wait_until(client, before + 10.0)
    _, q, v, _ = rows[-1]
    assert q == pytest.approx(0.5, abs=2e-3) and abs(v) < 1e-2


@pytest.mark.parametrize("topic, message", [
    ("/pendulum/velocity_commands", array(1.5)),
    ("/pendulum/joint_commands", by_name(velocity=1.5)),
])
def test_a_velocity_command_turns_the_joint_at_that_speed(pendulum, topic, message):
    node, client = pendulum
    before = send(client, topic, message)
    rows = wait_until(client, before + 10.0)
    later = rows[rows[:, 0] >= before + 2.0]            # after the start-up transient
    t, q, _, _ = later.T
    assert (q[-1] - q[0]) / (t[-1] - t[0]) == pytest.approx(1.5, abs=0.05)


def test_a_trajectory_runs_in_sim_time_from_its_stamp(pendulum):
    node, client = pendulum
    start = latest_time(client) + 1.0
    points = [JointTrajectoryPoint(positions=[0.4], velocities=[0.0],
                                   time_from_start=Duration(sec=2)),
              JointTrajectoryPoint(positions=[-0.3], velocities=[0.0],
                                   time_from_start=Duration(sec=4))]
    stamp = Time(sec=int(start), nanosec=round((start - int(start)) * 1e9))
    trajectory = JointTrajectory(joint_names=["joint1"], points=points)
    trajectory.header.stamp = stamp
    send(client, "/pendulum/joint_trajectory", trajectory)
    rows = wait_until(client, start + 14.0)
    t, q, _, _ = rows.T
    assert np.all(q[t < start - 1e-9] == 0.0)          # hanging still until the start
    at_first = q[np.argmin(abs(t - (start + 2.0)))]
    assert at_first == pytest.approx(0.4, abs=0.1)      # PID lag under gravity
    assert q[-1] == pytest.approx(-0.3, abs=5e-3)       # the last point held (integral term)


BAD = [  # topic, message, the problem named in the warning
    ("/pendulum/joint_commands",
     JointState(name=["joint1", "nope"], position=[0.5, 0.5]), "unknown joint 'nope'"),
    ("/pendulum/position_commands", array(0.1, 0.2), "2 values for 1 joints"),
    ("/pendulum/velocity_commands", array(math.nan), "is nan"),
    ("/pendulum/effort_commands", array(60.0), "outside its limits [-50, 50]"),
    ("/pendulum/joint_trajectory",
     JointTrajectory(joint_names=["joint1"], points=[JointTrajectoryPoint(
         positions=[math.inf], time_from_start=Duration(sec=1))]), "inf"),
]


def test_bad_commands_are_rejected_whole_with_a_warning_and_the_node_goes_on(pendulum):
    node, client = pendulum
    for topic, message, _ in BAD:
        before = send(client, topic, message)
    rows = wait_until(client, before + 2.0)
    assert np.all(rows[:, 1:] == 0.0)                   # still hanging at rest: nothing applied
    log = node.log()
    for topic, _, problem in BAD:
        # a ROS warning of the node, from the plugin's logger, naming the topic (relative to
        # the node's namespace, as the plugins subscribe to it)
        [warning] = [line for line in log.splitlines()
                     if f"] {topic[1:]}: " in line or f"] {topic}: " in line]
        assert warning.startswith("[WARN]") and "[sim]:" in warning and "[plugins." in warning
        assert "rejected" in warning and problem in warning
    assert node.process.poll() is None
    after = send(client, "/pendulum/position_commands", array(0.5))    # then a good one
    rows = wait_until(client, after + 10.0)
    assert rows[-1, 1] == pytest.approx(0.5, abs=2e-3)
