"""Robots with spherical, planar and floating joints under the joint plugins: joint_states and
joint commands carry the scalar joints only (at their own q and v entries); commands and
trajectories naming a multi-DOF joint are rejected by name with the throttled warning."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from plugin_helpers import GROUND, FakeRos, run, simulator
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

ARM_URDF = """<robot name="arm"><link name="world"/>
  <link name="upper"><inertial><origin xyz="0 0 -0.15"/><mass value="1.5"/>
    <inertia ixx="0.012" iyy="0.012" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0 0 -0.12"/><mass value="0.8"/>
    <inertia ixx="0.005" iyy="0.005" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hand"><inertial><origin xyz="0 0 -0.03"/><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tag"><inertial><mass value="0.05"/>
    <inertia ixx="1e-5" iyy="1e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="spherical"><parent link="world"/><child link="upper"/>
    <origin xyz="0 0 1"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="40" velocity="3"/></joint>
  <joint name="palm" type="planar"><parent link="fore"/><child link="hand"/>
    <origin xyz="0 0 -0.25"/><axis xyz="0 0 1"/></joint>
  <joint name="wrist" type="continuous"><parent link="hand"/><child link="tag"/>
    <origin xyz="0 0 -0.05"/><axis xyz="0 0 1"/><limit effort="5" velocity="4"/></joint>
</robot>"""
SCALAR = ["elbow", "wrist"]       # q 4 and 8, v 3 and 7 (shoulder q 0..3, palm q 5..7)


@pytest.fixture
def arm(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM_URDF)
    world = tmp_path / "arm.yaml"
    world.write_text(f"""simulation: {{physics_dt: 0.001}}
robots:
  - name: arm
    urdf: {urdf}
    initial_config: {{elbow: 0.4, wrist: -0.3}}
    plugins:
      - {{name: joint_state_publisher}}
      - {{name: joint_commands}}
      - {{name: joint_trajectory}}
""" + GROUND)
    ros = FakeRos()
    return simulator(world, ros), ros


def test_joint_states_carry_the_scalar_joints_at_their_own_entries(arm):
    sim, ros = arm
    run(sim, 0.05)
    message = ros.messages("joint_states")[-1]
    assert list(message.name) == SCALAR
    q, v, tau = sim.getActualConfig(0), sim.getActualVelocity(0), sim.getActualTorque(0)
    # the next message reports this state (before the next step) and the last step's torque
    sim.simulate(0.001)
    message = ros.messages("joint_states")[-1]
    np.testing.assert_array_equal(message.position, q[[4, 8]])
    np.testing.assert_array_equal(message.velocity, v[[3, 7]])
    np.testing.assert_array_equal(message.effort, tau[[3, 7]])


def test_commands_move_the_scalar_joints_and_refuse_multi_dof_joints_by_name(arm, caplog):
    sim, ros = arm
    ros.deliver("joint_commands", JointState(name=["wrist"], position=[0.9]))
    ros.deliver("position_commands", Float64MultiArray(data=[-0.5, 0.9]))
    run(sim, 3.0)
    q = sim.getActualConfig(0)
    assert q[4] == pytest.approx(-0.5, abs=2e-3) and q[8] == pytest.approx(0.9, abs=2e-3)
    before = sim.controller(0).getCommandedConfig()
    with caplog.at_level(logging.WARNING):
        ros.deliver("joint_commands", JointState(name=["elbow", "shoulder"],
                                                     position=[0.1, 0.2]))
        ros.deliver("effort_commands", Float64MultiArray(data=[0.0, 0.0, 0.0]))
    run(sim, 0.01)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("joint_commands: command rejected, nothing applied: joint "
                                  "'shoulder' is a spherical joint: joint states and joint "
                                  "commands carry scalar joints only")
    assert messages[1].startswith("effort_commands: command rejected, nothing applied: 3 "
                                  "values for 2 joints (elbow, wrist)")
    np.testing.assert_allclose(sim.controller(0).getCommandedConfig(), before, atol=0)


def _trajectory(names, positions, seconds=1.0):
    point = JointTrajectoryPoint(positions=positions,
                                 time_from_start=Duration(sec=int(seconds),
                                                          nanosec=int(seconds % 1 * 1e9)))
    return JointTrajectory(joint_names=names, points=[point])


def test_trajectories_drive_scalar_joints_and_refuse_multi_dof_joints_by_name(arm, caplog):
    sim, ros = arm
    with caplog.at_level(logging.WARNING):
        ros.deliver("joint_trajectory", _trajectory(["palm"], [0.1]))
    assert caplog.records[0].getMessage().startswith(
        "joint_trajectory: trajectory rejected, nothing changed: joint 'palm' is a planar "
        "joint")
    ros.deliver("joint_trajectory", _trajectory(["wrist", "elbow"], [1.2, 0.7]))
    run(sim, 1.0)
    commanded = sim.controller(0).getCommandedConfig()
    assert commanded[8] == pytest.approx(1.2, abs=1e-9) and commanded[4] == pytest.approx(0.7, abs=1e-9)
    run(sim, 2.0)
    q = sim.getActualConfig(0)
    assert q[8] == pytest.approx(1.2, abs=2e-3) and q[4] == pytest.approx(0.7, abs=2e-3)
