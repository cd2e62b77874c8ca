"""joint_commands: each command form moves the turntable as commanded (closed forms from its
gains and inertia, plugin_helpers), modes mix across joints, bad messages are rejected whole
with a throttled warning, commands apply at the next step."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from plugin_helpers import (DT, SLIDE_LIMITS, TURNTABLE_JOINTS, FakeRos, plugin_named, run,
                            simulator, spin_inertia, write_turntable_world)
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

SPIN_KP, SPIN_KD = 50.0, 5.0        # plugin_helpers.turntable_entry's gains
TOPIC = "turntable/joint_commands"


@pytest.fixture
def table(tmp_path):
    ros = FakeRos()
    sim = simulator(write_turntable_world(tmp_path, "      - {name: joint_commands}\n"), ros)
    return sim, ros


def _state(sim):
    return sim.getActualConfig(0), sim.getActualVelocity(0)


def test_the_plugin_subscribes_the_four_topics_of_its_robots_namespace(table):
    _, ros = table
    assert ros.types == {TOPIC: JointState,
                         "turntable/position_commands": Float64MultiArray,
                         "turntable/velocity_commands": Float64MultiArray,
                         "turntable/effort_commands": Float64MultiArray}


def test_a_position_command_by_name_reaches_its_target_and_leaves_other_joints(table):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], position=[1.0]))
    run(sim, 4.0)
    q, v = _state(sim)
    assert q[0] == pytest.approx(1.0, abs=1e-4) and abs(v[0]) < 1e-3
    assert q[1] == pytest.approx(0.0, abs=1e-4)


def test_a_velocity_target_with_a_position_is_the_d_terms_target(table):
    # kp (0 - q) + kd (0.4 - 0) = 0 at rest: q = kd 0.4 / kp; the target does not move
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], position=[0.0], velocity=[0.4]))
    run(sim, 4.0)
    assert sim.getActualConfig(0)[0] == pytest.approx(SPIN_KD * 0.4 / SPIN_KP, rel=1e-3)


def test_an_effort_with_a_position_is_a_feed_forward_torque(table):
    # kp (0 - q) + 1.0 = 0 at rest
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], position=[0.0], effort=[1.0]))
    run(sim, 4.0)
    assert sim.getActualConfig(0)[0] == pytest.approx(1.0 / SPIN_KP, rel=1e-3)


def test_a_velocity_command_moves_at_that_speed_until_the_next_command(table):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], velocity=[2.0]))
    run(sim, 2.0)
    q0 = sim.getActualConfig(0)[0]
    run(sim, 3.0)                    # no timeout: still moving 3 s later
    q1, v1 = _state(sim)
    assert (q1[0] - q0) / 3.0 == pytest.approx(2.0, rel=1e-3)
    assert v1[0] == pytest.approx(2.0, rel=1e-3)
    ros.deliver(TOPIC, JointState(name=["spin"], velocity=[0.0]))
    run(sim, 2.0)
    assert abs(sim.getActualVelocity(0)[0]) < 1e-3


def test_an_effort_alone_is_a_torque_giving_the_acceleration_torque_over_inertia(table):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], effort=[0.6]))
    sim.simulate(DT)                 # the step that applies it
    v0, t0 = sim.getActualVelocity(0)[0], sim.getTime()
    run(sim, 0.2)
    acceleration = (sim.getActualVelocity(0)[0] - v0) / (sim.getTime() - t0)
    assert acceleration == pytest.approx(0.6 / spin_inertia(), rel=2e-3)
    assert sim.controller(0).getControlType() == "mixed"      # slide stays under PID


def test_modes_mix_across_joints_each_message_commanding_its_joints_only(table):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["slide"], position=[0.2]))
    ros.deliver(TOPIC, JointState(name=["spin"], velocity=[0.5]))
    run(sim, 3.0)
    q, v = _state(sim)
    assert q[1] == pytest.approx(0.2, abs=2e-3)
    assert v[0] == pytest.approx(0.5, rel=1e-3)
    ros.deliver(TOPIC, JointState(name=["spin"], effort=[0.0]))
    run(sim, 0.1)
    assert sim.controller(0).getControlType() == "mixed"
    assert sim.getActualVelocity(0)[0] > 0.4          # coasting: no torque, no damping


@pytest.mark.parametrize("topic, values, check", [
    ("turntable/position_commands", [0.5, 0.1], lambda q, v: np.allclose(q, [0.5, 0.1],
                                                                          atol=2e-3)),
    ("turntable/velocity_commands", [0.3, 0.0], lambda q, v: np.allclose(v, [0.3, 0.0],
                                                                          atol=1e-3)),
    ("turntable/effort_commands", [0.0, 0.0], lambda q, v: True),
])
def test_arrays_in_joint_order_command_every_joint(table, topic, values, check):
    sim, ros = table
    ros.deliver(topic, Float64MultiArray(data=values))
    run(sim, 3.0)
    assert check(*_state(sim))
    expected = "torque" if topic.endswith("effort_commands") else "PID"
    assert sim.controller(0).getControlType() == expected


def test_a_command_applies_at_the_next_step_not_in_the_callback(table):
    sim, ros = table
    controller = sim.controller(0)
    ros.deliver(TOPIC, JointState(name=["spin"], position=[0.7]))
    assert controller.getCommandedConfig()[0] == 0.0
    sim.simulate(DT)
    assert controller.getCommandedConfig()[0] == 0.7


def test_a_reset_drops_commands_not_applied_yet(table):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], position=[0.7]))
    sim.reset()
    sim.simulate(DT)
    assert sim.controller(0).getCommandedConfig()[0] == 0.0


BAD_JOINT_STATES = [
    (JointState(name=["spin", "elbow"], position=[0.1, 0.2]), "unknown joint 'elbow'"),
    (JointState(name=["spin", "slide"], position=[0.1]),
     "position has 1 values for 2 joint names"),
    (JointState(name=["spin", "slide"], position=[0.1, 0.1], velocity=[1.0]),
     "velocity has 1 values for 2 joint names"),
    (JointState(name=["spin", "spin"], position=[0.1, 0.1]), "joint(s) listed twice: spin"),
    (JointState(name=["spin", "slide"], position=[0.1, math.nan]),
     "position of joint 'slide' is nan"),
    (JointState(name=["spin"], effort=[math.inf]), "effort of joint 'spin' is inf"),
    (JointState(name=["spin", "slide"], position=[0.1, 0.3]),
     f"position 0.3 rad or m of joint 'slide' is outside its limits "
     f"[{SLIDE_LIMITS[0]:g}, {SLIDE_LIMITS[1]:g}]"),
    (JointState(name=["spin"], velocity=[12.0]), "velocity 12 rad/s or m/s of joint 'spin' is "
                                                 "outside its limits [-10, 10]"),
    (JointState(name=["spin"], effort=[-60.0]), "effort -60 N m or N of joint 'spin' is "
                                                "outside its limits [-50, 50]"),
    (JointState(name=[], position=[]), "no joint names"),
    (JointState(name=["spin"]), "no position, velocity or effort values"),
]


@pytest.mark.parametrize("message, problem", BAD_JOINT_STATES)
def test_a_bad_joint_command_is_rejected_whole_with_a_warning_naming_it(table, caplog,
                                                                       message, problem):
    sim, ros = table
    ros.deliver(TOPIC, JointState(name=["spin"], position=[0.25]))
    run(sim, 0.01)
    with caplog.at_level(logging.WARNING):
        ros.deliver(TOPIC, message)
    run(sim, 0.01)
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith(
        f"{TOPIC}: command rejected, nothing applied: {problem}")
    # the last good command stays in force, for both joints
    np.testing.assert_array_equal(sim.controller(0).getCommandedConfig(), [0.25, 0.0])
    assert sim.controller(0).getControlType() == "PID"
    assert plugin_named(sim, "joint_commands").enabled


@pytest.mark.parametrize("topic, values, problem", [
    ("turntable/position_commands", [0.1], "1 values for 2 joints (spin, slide)"),
    ("turntable/velocity_commands", [0.1, 0.2, 0.3], "3 values for 2 joints (spin, slide)"),
    ("turntable/effort_commands", [0.1, math.nan], "effort of joint 'slide' is nan"),
    ("turntable/position_commands", [0.1, -0.2], "position -0.2 rad or m of joint 'slide' is "
                                                 "outside its limits"),
])
def test_a_bad_array_command_is_rejected_whole(table, caplog, topic, values, problem):
    sim, ros = table
    with caplog.at_level(logging.WARNING):
        ros.deliver(topic, Float64MultiArray(data=values))
    run(sim, 0.01)
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith(f"{topic}: command rejected, nothing "
                                                     f"applied: {problem}")
    np.testing.assert_array_equal(sim.controller(0).getCommandedConfig(), [0.0, 0.0])


def test_warnings_are_throttled_per_topic(table, caplog):
    _, ros = table
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            ros.deliver(TOPIC, JointState(name=["nope"], position=[0.0]))
        ros.deliver("turntable/effort_commands", Float64MultiArray(data=[1.0]))
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        TOPIC, "turntable/effort_commands"]


def test_names_are_the_robots_joints_in_order(table):
    sim, _ = table
    assert plugin_named(sim, "joint_commands").layout.names == tuple(TURNTABLE_JOINTS)
