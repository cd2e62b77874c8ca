"""Spherical, planar and floating joints in the Simulator: closed-form pendulum physics, PID on
a ball joint against gravity, planar joint limits, a free-falling subtree, collision adjacency
across a planar joint, and bit-exact state round trips."""
import dataclasses
import math

import numpy as np
import pytest

import sim_node

G = 9.81
# ball pendulum: a uniform sphere (mass M, radius R) whose centre hangs L below the ball joint
M, L, R = 1.0, 0.5, 0.05
I_SPHERE = 0.4 * M * R * R


def ball_pendulum_xml(com=(0.0, 0.0, -L)):
    return f"""<robot name="ball_pendulum"><link name="world"/>
  <link name="bob"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/><mass value="{M}"/>
    <inertia ixx="{I_SPHERE}" iyy="{I_SPHERE}" izz="{I_SPHERE}" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="ball" type="spherical"><parent link="world"/><child link="bob"/>
    <origin xyz="0 0 1"/></joint>
</robot>"""


def quat_about(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])


def rotation_angle(q_a, q_b):
    """Angle [rad] of the rotation between two unit quaternions (x, y, z, w)."""
    xa, ya, za, wa = q_a
    xb, yb, zb, wb = q_b
    # the relative rotation conj(q_a) q_b: w = q_a . q_b, vector = wa vb - wb va - va x vb
    w = xa * xb + ya * yb + za * zb + wa * wb
    vec = wa * np.array([xb, yb, zb]) - wb * np.array([xa, ya, za]) - np.cross([xa, ya, za],
                                                                             [xb, yb, zb])
    return 2.0 * math.atan2(np.linalg.norm(vec), abs(w))


def passive_ball_pendulum(q0, w0, physics_dt=0.001):
    world = sim_node.WorldModel()
    world.simulation.physics_dt = physics_dt
    robot = world.loadRobot(ball_pendulum_xml())
    robot.setConfig(q0)
    robot.setVelocity(w0)
    sim = sim_node.Simulator(world)
    sim.controller(0).setTorqueCommand(np.zeros(3))        # a passive joint
    return world, sim


def test_ball_pendulum_swings_with_the_small_oscillation_period():
    # a physical pendulum: T = 2 pi sqrt((I + M L^2) / (M g L)) (1 + theta0^2 / 16)
    theta0 = 0.05
    _, sim = passive_ball_pendulum(quat_about([1, 0, 0], theta0), np.zeros(3))
    c = sim.controller(0)
    times, angles = [], []
    while sim.getTime() < 8.0:
        sim.simulate(0.001)
        q = c.getSensedConfig()
        times.append(sim.getTime())
        angles.append(2.0 * math.atan2(q[0], q[3]))
        assert abs(q[1]) < 1e-12 and abs(q[2]) < 1e-12            # it stays in its plane
    times, angles = np.array(times), np.array(angles)
    k = np.flatnonzero((angles[:-1] < 0) & (angles[1:] >= 0))
    crossings = times[k] - angles[k] * (times[k + 1] - times[k]) / (angles[k + 1] - angles[k])
    period = np.diff(crossings).mean()
    expected = 2 * math.pi * math.sqrt((I_SPHERE + M * L * L) / (M * G * L)) * (1 + theta0 ** 2 / 16)
    assert len(crossings) >= 5
    assert period == pytest.approx(expected, rel=1e-4)
    assert np.abs(angles).max() == pytest.approx(theta0, rel=1e-3)


def pendulum_energy(robot, q, v):
    robot.setConfig(q)
    robot.setVelocity(v)
    return 0.5 * v @ robot.getMassMatrix() @ v + robot.getTotalMass() * G * robot.getCom()[2]


def energy_deviation(physics_dt, duration=10.0):
    """Largest |E - E0| [J] of a spherical pendulum swinging around in 3D (tilted 0.5 rad and
    spun about its axis and the vertical) over `duration`."""
    q0, w0 = quat_about([1, 0, 0], 0.5), np.array([0.0, 0.5, 2.0])
    world, sim = passive_ball_pendulum(q0, w0, physics_dt)
    robot, c = world.robot(0), sim.controller(0)
    e0 = pendulum_energy(robot, q0, w0)
    deviation = 0.0
    while sim.getTime() < duration:
        sim.simulate(0.01)
        deviation = max(deviation, abs(pendulum_energy(robot, c.getSensedConfig(),
                                                       c.getSensedVelocity()) - e0))
    return deviation


def test_spherical_pendulum_conserves_energy_to_first_order_in_the_step():
    # semi-implicit Euler is not exactly energy-conserving with a configuration-dependent mass
    # matrix; its error shrinks with the step, where a wrong joint model would not
    coarse, fine = energy_deviation(0.001), energy_deviation(0.0005)
    assert coarse < 2e-3 * M * G * L
    assert fine < 0.6 * coarse


def test_pid_holds_a_ball_joint_against_gravity_and_turns_it_to_a_target():
    # the bob sticks out sideways: gravity pulls it down with M g L = 4.9 N m at the start
    world = sim_node.WorldModel()
    world.loadRobot(ball_pendulum_xml(com=(L, 0.0, 0.0)))
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    start = c.getSensedConfig().copy()
    sim.simulate(3.0)
    assert rotation_angle(c.getSensedConfig(), start) < 1e-3
    # held still by the integral: the actuator torque is the gravity torque G(q)
    robot = world.robot(0)
    robot.setConfig(c.getSensedConfig())
    gravity_torque = robot.getGravityForces((0, 0, -G))
    assert np.linalg.norm(gravity_torque) == pytest.approx(M * G * L, rel=1e-3)
    np.testing.assert_allclose(sim.getActualTorque(0), gravity_torque, atol=1e-3 * M * G * L)
    # a new orientation, 0.6 rad away about a skew axis
    target = quat_about([0.3, -0.5, 0.8], 0.6)
    c.setPIDCommand(target)
    assert rotation_angle(c.getCommandedConfig(), target) < 1e-12
    sim.simulate(3.0)
    assert rotation_angle(c.getSensedConfig(), target) < 2e-3
    assert np.linalg.norm(c.getSensedVelocity()) < 1e-2


def test_a_zero_quaternion_is_refused_everywhere():
    world = sim_node.WorldModel()
    robot = world.loadRobot(ball_pendulum_xml())
    with pytest.raises(ValueError, match=r"quaternion is zero at entries 0\.\.3 \(joint 'ball'\)"):
        robot.setConfig(np.zeros(4))
    robot.setConfig([0.0, 0.0, 0.0, 2.0])                  # normalised
    np.testing.assert_array_equal(robot.getConfig(), [0, 0, 0, 1])
    sim = sim_node.Simulator(world)
    with pytest.raises(ValueError, match="quaternion is zero"):
        sim.setActualConfig(0, np.zeros(4))
    with pytest.raises(ValueError, match="quaternion of joint 'ball' is zero"):
        sim.controller(0).setPIDCommand(np.zeros(4))


PLANAR_XML = """<robot name="puck"><link name="world"/>
  <link name="puck"><inertial><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.05"/></geometry></collision></link>
  <joint name="slide" type="planar"><parent link="world"/><child link="puck"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>{limit}</joint>
</robot>"""


def test_a_planar_joint_tracks_targets_in_its_plane_and_stops_at_its_limits():
    world = sim_node.WorldModel()
    world.loadRobot(PLANAR_XML.format(limit=""))
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    c.setPIDCommand([0.2, -0.1, 0.5])
    sim.simulate(3.0)
    np.testing.assert_allclose(c.getSensedConfig(), [0.2, -0.1, 0.5], atol=1e-3)
    R, p = world.robot(0).link("puck").getTransform()
    sim.updateWorld()
    R, p = world.robot(0).link("puck").getTransform()
    np.testing.assert_allclose(p, [0.2, -0.1, 0.5], atol=1e-3)     # gravity is along the normal
    # bounds on each coordinate: pushed along +x and turned, it stops at 0.1 m and 0.1 rad
    world = sim_node.WorldModel()
    world.loadRobot(PLANAR_XML.format(limit='<limit lower="-0.1" upper="0.1" effort="5" '
                                            'velocity="1"/>'))
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    c.setTorqueCommand([5.0, 0.0, 5.0])
    sim.simulate(1.0)
    q = c.getSensedConfig()
    assert 0.099 < q[0] <= 0.1 + 1e-4 and 0.099 < q[2] <= 0.1 + 1e-4 and abs(q[1]) < 1e-9


def test_a_subtree_on_a_floating_joint_falls_freely_and_is_not_actuated():
    xml = """<robot name="dropper"><link name="world"/>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="load"><inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
    <inertia ixx="0.002" iyy="0.003" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="50" velocity="3"/></joint>
  <joint name="release" type="floating"><parent link="arm"/><child link="load"/>
    <origin xyz="0.3 0 0"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    robot = world.loadRobot(xml)
    assert robot.getJointNames() == ["hinge", "release"]
    assert robot.jointSize("release") == (7, 6) and robot.jointIndices("release") == (1, 1)
    v0 = np.zeros(7)
    v0[1:4] = [0.4, 0.0, 1.0]                              # the load thrown along x and up
    robot.setVelocity(v0)
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    c.setTorqueCommand([0.0, 5, 5, 5, 5, 5, 5])            # the floating joint ignores torques
    t = 0.5
    sim.simulate(t)
    sim.updateWorld()
    R, p = robot.link("load").getTransform()
    com = p + R @ [0.05, 0, 0]
    # a projectile (its spin is zero: the com moves like a point), to the step's first order
    expected = np.array([0.3 + 0.05 + 0.4 * t, 0.0, 1.0 + 1.0 * t - 0.5 * G * t * t])
    np.testing.assert_allclose(com, expected, atol=3e-3)
    assert np.all(sim.getActualTorque(0)[1:] == 0.0)
    assert abs(c.getSensedConfig()[0]) < 1e-12             # the hinge holds: nothing pulls it


def test_links_across_a_planar_joint_are_adjacent_and_never_self_collide():
    xml = """<robot name="slider"><link name="base">
    <inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.4 0.1"/></geometry></collision></link>
  <link name="carriage"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="tip"><inertial><mass value="0.2"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.04"/></geometry></collision></link>
  <joint name="slide" type="planar"><parent link="base"/><child link="carriage"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/></joint>
  <joint name="stick" type="fixed"><parent link="carriage"/><child link="tip"/>
    <origin xyz="0 0 -0.05"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    robot = world.loadRobot(xml, fixed_base=True)
    robot.settings = dataclasses.replace(robot.settings, self_collision=True)
    sim = sim_node.Simulator(world)
    sim.enableContactFeedbackAll()
    sim.simulate(0.05)
    # base and carriage (with its tip) overlap at the joint: adjacent, so no contact
    assert not sim.inContact(robot.link("base").getID(), robot.link("carriage").getID())
    assert not sim.hadContact(robot.link("base").getID(), robot.link("tip").getID())


def test_state_round_trip_continues_bit_for_bit_with_multi_dof_joints():
    xml = """<robot name="mixed"><link name="world"/>
  <link name="a"><inertial><origin xyz="0.1 0 -0.2"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.1 -0.1"/><mass value="0.7"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="world"/><child link="a"/><origin xyz="0 0 2"/></joint>
  <joint name="plane" type="planar"><parent link="a"/><child link="b"/><origin xyz="0 0 -0.3"/>
    <axis xyz="0 1 1"/><limit lower="-0.2" upper="0.2" effort="20" velocity="2"/></joint>
  <joint name="free" type="floating"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    world.loadRobot(xml)
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    target = c.getCommandedConfig()
    target[0:4] = quat_about([1, 1, 0], 0.7)
    target[4:7] = [0.15, -0.1, 0.4]
    c.setMilestone(target)
    sim.simulate(0.3)
    state = sim.getState()
    sim.simulate(0.5)
    after = sim.getState()
    q_after = c.getSensedConfig()
    sim.setState(state)
    sim.simulate(0.5)
    assert sim.getState() == after
    assert np.array_equal(c.getSensedConfig(), q_after)


def test_world_files_give_multi_dof_joints_their_initial_coordinates_as_lists(tmp_path):
    urdf = tmp_path / "puck.urdf"
    urdf.write_text(PLANAR_XML.format(limit=""))
    ball = tmp_path / "ball.urdf"
    ball.write_text(ball_pendulum_xml())

    def world_file(puck_initial, ball_initial):
        path = tmp_path / "w.yaml"
        path.write_text(f"""robots:
  - name: puck
    urdf: {urdf}
    initial_config: {{slide: {puck_initial}}}
  - name: pendulum
    urdf: {ball}
    initial_config: {{ball: {ball_initial}}}
""")
        world = sim_node.WorldModel()
        world.readFile(path)
        return world

    world = world_file("[0.1, -0.2, 0.3]", "[0, 0, 0.6, 0.8]")
    np.testing.assert_array_equal(world.robot("puck").getConfig(), [0.1, -0.2, 0.3])
    np.testing.assert_array_equal(world.robot("pendulum").getConfig(), [0, 0, 0.6, 0.8])
    with pytest.raises(sim_node.model.errors.WorldFileError,
                       match=r"initial_config\.ball.*a spherical joint takes a list of 4 numbers"):
        world_file("[0, 0, 0]", "0.5")
    with pytest.raises(sim_node.model.errors.WorldFileError, match="quaternion is zero"):
        world_file("[0, 0, 0]", "[0, 0, 0, 0]")
