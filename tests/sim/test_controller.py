"""Actuators and the robot controller (seed 002): PID against the closed-loop ODE, torque limits,
joint dry and viscous friction, velocity and motion-queue commands, bad commands."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scene_helpers import REPO

import sim_node

G = 9.81
# the pendulum of data/robots/pendulum (seed's Monte Carlo robot): mass 1 kg, com 0.441535 m
# below the pivot, inertia about the com (y) 0.0170400 kg m^2, damping 0.01, effort 50
PENDULUM_M, PENDULUM_L, PENDULUM_ICOM, PENDULUM_B = 1.0, 0.441535433071, 0.0170399652799, 0.01


def pendulum_sim():
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    return world, sim_node.Simulator(world)


def turntable(friction=0.0, damping=0.0, effort=10.0, inertia=0.5):
    """A fixed-base robot with one joint about the vertical axis (gravity exerts no torque on
    it): a disk of the given inertia about z [kg m^2]."""
    urdf = f"""<robot name="turntable">
  <link name="world"/>
  <link name="disk"><inertial><mass value="2"/>
    <inertia ixx="0.3" iyy="0.3" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="spin" type="continuous"><parent link="world"/><child link="disk"/>
    <axis xyz="0 0 1"/><limit effort="{effort}" velocity="10"/>
    <dynamics damping="{damping}" friction="{friction}"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    world.loadRobot(urdf)
    sim = sim_node.Simulator(world)
    return sim, sim.controller(0)


def test_pid_step_response_of_the_pendulum_matches_the_closed_loop_ode():
    kp, ki, kd, target = 20.0, 8.0, 5.0, 0.6
    _, sim = pendulum_sim()
    c = sim.controller(0)
    assert np.allclose(np.concatenate(c.getPIDGains()), [kp, ki, kd])   # from the world file
    c.setPIDCommand([target], [0.0])
    inertia = PENDULUM_ICOM + PENDULUM_M * PENDULUM_L ** 2

    def closed_loop(t, x):
        theta, omega, integral = x
        tau = kp * (target - theta) - kd * omega + ki * integral
        alpha = (tau - PENDULUM_M * G * PENDULUM_L * math.sin(theta) - PENDULUM_B * omega) / inertia
        return [omega, alpha, target - theta]

    times = np.arange(1, 301) * 0.01
    ode = solve_ivp(closed_loop, (0, 3.0), [0.0, 0.0, 0.0], t_eval=times, rtol=1e-10, atol=1e-12)
    angles = []
    for _ in times:
        sim.simulate(0.01)
        angles.append(c.getSensedConfig()[0])
    # semi-implicit Euler at 1 ms against the exact ODE: first-order agreement
    assert np.abs(np.array(angles) - ode.y[0]).max() < 2e-3
    assert abs(angles[-1] - ode.y[0][-1]) < 1e-3
    assert sim.getStatusString() == "normal"


def test_integral_term_removes_the_steady_state_error_that_pd_leaves():
    _, sim = pendulum_sim()
    c = sim.controller(0)
    c.setPIDGains([20.0], [0.0], [5.0])
    c.setPIDCommand([0.6])
    sim.simulate(8.0)
    # PD equilibrium: kp (0.6 - theta) = m g l sin(theta)
    theta_pd = c.getSensedConfig()[0]
    residual = 20.0 * (0.6 - theta_pd) - PENDULUM_M * G * PENDULUM_L * math.sin(theta_pd)
    assert abs(residual) < 1e-4 and theta_pd < 0.5
    c.setPIDGains([20.0], [8.0], [5.0])
    sim.simulate(15.0)
    assert abs(c.getSensedConfig()[0] - 0.6) < 1e-3


def test_torque_commands_are_capped_at_the_torque_limit():
    sim, c = turntable(effort=10.0, inertia=0.5)
    c.setTorqueCommand([25.0])
    sim.simulate(0.5)
    assert c.getCommandedTorque()[0] == pytest.approx(10.0)
    # constant capped torque: omega = tau / I t
    assert c.getSensedVelocity()[0] == pytest.approx(10.0 / 0.5 * 0.5, rel=1e-9)
    c.setTorqueCommand([-3.0])
    sim.simulate(0.001)
    assert c.getCommandedTorque()[0] == pytest.approx(-3.0)
    assert c.getControlType() == "torque"


def test_pid_output_is_capped_at_the_torque_limit():
    sim, c = turntable(effort=2.0, inertia=0.5)
    c.setPIDGains([1000.0], [0.0], [0.0])
    c.setPIDCommand([1.0])
    sim.simulate(0.1)
    assert c.getCommandedTorque()[0] == pytest.approx(2.0)
    assert c.getSensedVelocity()[0] == pytest.approx(2.0 / 0.5 * 0.1, rel=1e-9)


def test_a_dry_friction_joint_holds_until_the_breakaway_torque():
    friction, inertia = 1.5, 0.5
    sim, c = turntable(friction=friction, inertia=inertia)
    c.setTorqueCommand([0.95 * friction])
    sim.simulate(1.0)
    assert abs(c.getSensedConfig()[0]) < 1e-9 and abs(c.getSensedVelocity()[0]) < 1e-9
    c.setTorqueCommand([1.5 * friction])
    sim.simulate(1.0)
    # sliding: I alpha = tau - friction
    assert c.getSensedVelocity()[0] == pytest.approx(0.5 * friction / inertia * 1.0, rel=1e-6)
    # released: the joint decelerates at friction / I and sticks again
    c.setTorqueCommand([0.0])
    sim.simulate(0.5 * friction / inertia / (friction / inertia) + 0.2)
    assert abs(c.getSensedVelocity()[0]) < 1e-9


def test_viscous_joint_friction_decays_the_velocity_exponentially():
    damping, inertia = 0.2, 0.5
    sim, c = turntable(damping=damping, inertia=inertia)
    c.setTorqueCommand([0.0])
    sim.engine.robot_v[0][0] = 2.0
    sim.simulate(1.0)
    # implicit damping: w_n = w0 / (1 + b dt / I)^n, the exact decay w0 exp(-b t / I) to O(dt)
    assert c.getSensedVelocity()[0] == pytest.approx(2.0 / (1 + damping * 0.001 / inertia) ** 1000,
                                                     rel=1e-9)
    assert c.getSensedVelocity()[0] == pytest.approx(2.0 * math.exp(-damping / inertia), rel=1e-3)


def test_velocity_command_moves_the_target_at_that_speed_for_its_duration_then_holds():
    sim, c = turntable(inertia=0.5)
    c.setPIDGains([400.0], [0.0], [40.0])
    c.setVelocity([0.5], 1.0)
    for _ in range(50):
        sim.simulate(0.01)
    assert c.getCommandedConfig()[0] == pytest.approx(0.25, abs=1e-9)
    assert c.getCommandedVelocity()[0] == pytest.approx(0.5)
    sim.simulate(1.0)
    assert c.getCommandedConfig()[0] == pytest.approx(0.5, abs=1e-9)
    assert c.getCommandedVelocity()[0] == 0.0
    sim.simulate(2.0)
    assert c.getSensedConfig()[0] == pytest.approx(0.5, abs=1e-4)


def test_milestone_reaches_its_target_in_the_time_optimal_duration_and_stops():
    sim, c = turntable(inertia=0.5, effort=100.0)
    c.setPIDGains([400.0], [0.0], [40.0])
    vmax = 10.0                                     # URDF velocity limit
    amax = sim.getWorld().robot(0).getAccelerationLimits()[0]
    assert amax == pytest.approx(4 * vmax)
    c.setMilestone([1.0])
    # triangle profile (1 rad < vmax^2 / amax): T = 2 sqrt(d / a)
    assert c.remainingTime() == pytest.approx(2 * math.sqrt(1.0 / amax), rel=1e-6)
    c.addMilestone([0.0])
    assert c.remainingTime() == pytest.approx(4 * math.sqrt(1.0 / amax), rel=1e-6)
    half = 2 * math.sqrt(1.0 / amax)
    sim.simulate(half)
    assert c.getCommandedConfig()[0] == pytest.approx(1.0, abs=1e-9)
    assert c.getCommandedVelocity()[0] == pytest.approx(0.0, abs=1e-6)
    peak = 0.0
    for _ in range(int(half / 0.01) + 60):
        sim.simulate(0.01)
        peak = max(peak, c.getSensedConfig()[0])
    assert 0.97 < peak < 1.05      # PD lag of a 40 rad/s^2 profile: kp e = I a -> e ~ 0.05 rad
    assert c.remainingTime() == 0.0
    assert abs(c.getCommandedConfig()[0]) < 1e-12 and abs(c.getSensedConfig()[0]) < 2e-3


def test_linear_and_cubic_commands_follow_their_interpolants():
    sim, c = turntable(inertia=0.5)
    c.setRate(0.002)
    c.setLinear([0.4], 0.2)
    sim.simulate(0.1)
    assert c.getCommandedConfig()[0] == pytest.approx(0.2, abs=1e-9)
    sim.simulate(0.2)
    c.setCubic([1.0], [0.0], 0.5)                   # from (0.4, 0) to (1.0, 0)
    sim.simulate(0.25)
    # Hermite at s = 1/2 between equal-velocity-zero ends: the midpoint, velocity 1.5 (q1-q0)/T
    assert c.getCommandedConfig()[0] == pytest.approx(0.7, abs=1e-9)
    assert c.getCommandedVelocity()[0] == pytest.approx(1.5 * 0.6 / 0.5, abs=1e-9)


def test_the_pid_command_of_a_floating_base_robot_takes_joint_or_full_vectors():
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "quadruped.yaml")
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    robot = world.robot(0)
    n = len(robot.getJointNames())
    q = c.getSensedConfig()
    c.setPIDCommand(q)                              # full q: base entries ignored
    assert np.array_equal(c.getCommandedConfig()[7:], q[7:])
    c.setPIDCommand(q[7:] + 0.1, np.zeros(n))
    assert np.allclose(c.getCommandedConfig()[7:], q[7:] + 0.1)
    assert np.array_equal(c.getCommandedConfig()[:7], c.getSensedConfig()[:7])


@pytest.mark.parametrize("call, message", [
    (lambda c: c.setPIDCommand([0.1, 0.2]), "expected 1 joint values"),
    (lambda c: c.setPIDCommand([math.nan]), "must be finite"),
    (lambda c: c.setTorqueCommand([math.inf]), "must be finite"),
    # the bounds of sim_node.sim.bounds, checked by the engine as it takes the command
    (lambda c: c.setPIDCommand([1e300]), r"setPIDCommand: position targets: value 0 = 1e\+300 "
     r"is beyond the bound \|value\| <= 10000 rad or m"),
    (lambda c: c.setPIDCommand([0.0], [-2e4]), r"setPIDCommand: velocity targets: value 0 = "
     r"-20000.0 is beyond the bound \|value\| <= 10000 rad/s or m/s"),
    (lambda c: c.setPIDCommand([0.0], [0.0], [1.5e9]), r"feed-forward torques: value 0 = "
     r"1500000000.0 is beyond the bound \|value\| <= 1e\+09 N m or N"),
    (lambda c: c.setTorqueCommand([-1e308]), r"setTorqueCommand: feed-forward torques: value 0 "
     r"= -1e\+308 is beyond the bound"),
    (lambda c: c.setJointCommands([0], "pid", [2e4]), r"setJointCommands: position targets: "
     r"value 0 = 20000.0 is beyond the bound"),
    (lambda c: c.setVelocity([1.0], -1.0), "positive time"),
    (lambda c: c.setPIDGains([1.0], [-1.0], [0.0]), "non-negative"),
    (lambda c: c.setMilestone([math.nan]), "NaN"),
    (lambda c: c.setRate(0.0), "positive time"),
])
def test_bad_commands_are_rejected_whole_and_change_nothing(call, message):
    sim, c = turntable()
    c.setPIDCommand([0.3], [0.1], [0.2])
    before = sim.getState()
    with pytest.raises(ValueError, match=message):
        call(c)
    assert sim.getState() == before
    assert c.getControlType() == "PID" and c.getCommandedConfig()[0] == 0.3


def test_commands_at_the_bounds_are_taken():
    # Claim: the bounds are inclusive (|value| <= bound): a target of 1e4 rad, a velocity
    # target of -1e4 rad/s and a torque of 1e9 N m are commanded as given
    sim, c = turntable()
    c.setPIDCommand([1e4], [-1e4], [1e9])
    assert c.getCommandedConfig()[0] == 1e4
    c.setTorqueCommand([-1e9])
    c.setJointCommands([0], "pid", [-1e4])
    assert c.getCommandedConfig()[0] == -1e4


def test_per_joint_commands_mix_modes_and_leave_the_other_joints_alone():
    world = sim_node.WorldModel()
    world.loadRobot(str(REPO / "data" / "robots" / "arm7" / "arm7.urdf"), fixed_base=True)
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    before = c.getCommandedConfig()
    c.setJointCommands(["joint2", "joint4"], "pid", [0.3, -1.0])
    c.setJointCommands([6], "torque", tfeedforward=[1.5])
    c.setJointCommands(["joint1"], "pid", dqdes=[0.5], duration=math.inf)
    sim.simulate(0.2)
    q = c.getCommandedConfig()
    assert q[1] == 0.3 and q[3] == -1.0 and q[2] == before[2]
    assert q[0] == pytest.approx(before[0] + 0.1, abs=1e-12)     # moving at 0.5 rad/s
    assert c.getCommandedTorque()[6] == pytest.approx(1.5) and c.getControlType() == "mixed"
    state = sim.getState()
    for bad, message in [(lambda: c.setJointCommands(["nope"], "pid", [0.0]), "no joint"),
                         (lambda: c.setJointCommands([0, 0], "pid", [0.0, 0.0]), "twice"),
                         (lambda: c.setJointCommands([1], "pid", [math.nan]), "finite"),
                         (lambda: c.setJointCommands([1], "velocity", [0.0]), "mode")]:
        with pytest.raises(ValueError, match=message):
            bad()
    assert sim.getState() == state


# -- spherical joints ------------------------------------------------------------------------------
def shoulder_elbow():
    """A fixed-base arm: a ball joint (shoulder, q 0..3, v 0..2), then a revolute elbow (q 4,
    v 3) about y; gravity along -z."""
    urdf = """<robot name="shoulder_elbow"><link name="world"/>
  <link name="upper"><inertial><origin xyz="0 0 -0.15"/><mass value="1.5"/>
    <inertia ixx="0.012" iyy="0.012" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0 0 -0.12"/><mass value="0.8"/>
    <inertia ixx="0.005" iyy="0.005" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="spherical"><parent link="world"/><child link="upper"/>
    <origin xyz="0 0 1"/><dynamics damping="0.05"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="40" velocity="3"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    world.loadRobot(urdf)
    sim = sim_node.Simulator(world)
    return world, sim, sim.controller(0)


def quat_about(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])


def rotation_between(q_a, q_b):
    """Rotation vector of conj(q_a) q_b (the shorter way round)."""
    xa, ya, za, wa = q_a
    xb, yb, zb, wb = q_b
    w = xa * xb + ya * yb + za * zb + wa * wb
    vec = wa * np.array([xb, yb, zb]) - wb * np.array([xa, ya, za]) - np.cross([xa, ya, za],
                                                                             [xb, yb, zb])
    vec, w = (vec, w) if w >= 0 else (-vec, -w)
    n = np.linalg.norm(vec)
    return np.zeros(3) if n == 0 else 2 * math.atan2(n, w) * vec / n


def test_a_ball_joint_turns_along_the_geodesic_on_a_linear_milestone_and_is_tracked():
    _, sim, c = shoulder_elbow()
    q0 = c.getCommandedConfig()
    target = np.array([*quat_about([1, -1, 0.5], 0.8), 0.6])
    c.addMilestoneLinear(target)
    axis_angle = rotation_between(q0[:4], target[:4])
    while c.remainingTime() > 0:
        sim.simulate(0.01)
        commanded = c.getCommandedConfig()
        turned = rotation_between(q0[:4], commanded[:4])
        # the commanded orientation stays on the great circle from q0 to the target, in step
        # with the elbow
        assert np.linalg.norm(np.cross(turned, axis_angle)) < 1e-9
        s = np.linalg.norm(turned) / np.linalg.norm(axis_angle)
        assert commanded[4] == pytest.approx(q0[4] + s * (0.6 - q0[4]), abs=1e-9)
    np.testing.assert_allclose(c.getCommandedConfig(), target, atol=1e-12)
    sim.simulate(2.0)
    sensed = c.getSensedConfig()
    assert np.linalg.norm(rotation_between(sensed[:4], target[:4])) < 2e-3
    assert abs(sensed[4] - 0.6) < 2e-3
    # a time-optimal milestone ends exactly at its target too (its path is per DOF, as for
    # scalar joints)
    back = np.array([*quat_about([0, 0, 1], -0.5), -0.2])
    c.setMilestone(back)
    sim.simulate(c.remainingTime() + 1e-9)
    np.testing.assert_allclose(c.getCommandedConfig(), back, atol=1e-12)


def test_joint_vectors_hold_quaternions_and_per_joint_commands_take_scalar_joints_only():
    _, sim, c = shoulder_elbow()
    assert c.getPIDGains()[0].shape == (4,)                  # one gain per DOF
    with pytest.raises(ValueError, match=r"expected 5 joint coordinates \(or 5\)"):
        c.setPIDCommand(np.zeros(4))
    with pytest.raises(ValueError, match="joint 'shoulder' is spherical \\(3 DOFs\\)"):
        c.setJointCommands(["shoulder"], "pid", [0.1])
    with pytest.raises(ValueError, match="joint 'shoulder' is spherical"):
        c.setJointCommands([0], "torque", None, None, [1.0])
    before = c.getCommandedConfig()
    c.setJointCommands(["elbow"], "pid", [0.7])              # the elbow's DOF is v[3]
    after = c.getCommandedConfig()
    assert after[4] == 0.7 and np.array_equal(after[:4], before[:4])
    c.setPIDCommand([0.0, 0.0, 0.0, 2.0, -0.3])              # normalised at the boundary
    np.testing.assert_array_equal(c.getCommandedConfig(), [0, 0, 0, 1, -0.3])


def test_fake_simulate_turns_a_ball_joint_under_a_velocity_command():
    _, sim, c = shoulder_elbow()
    q0 = c.getSensedConfig()
    w = np.array([0.3, -0.2, 0.5])
    c.setVelocity([*w, 0.2], 1.0)
    sim.fakeSimulate(0.4)
    q = c.getSensedConfig()
    np.testing.assert_allclose(rotation_between(q0[:4], q[:4]), w * 0.4, atol=1e-9)
    assert q[4] == pytest.approx(q0[4] + 0.08, abs=1e-9)


# -- setTorque (Klamp't's torque command) -------------------------------------------------------
def test_set_torque_first_step_accelerates_the_pendulum_by_tau_over_inertia():
    # hanging at rest (theta = 0: no gravity torque), a torque tau gives qdd = tau / I about
    # the pivot. The first physics step (semi-implicit Euler, the joint damping b implicit in
    # the solve) ends at v = tau dt / (I + b dt) (= qdd dt to 5e-5 here), theta = v dt.
    world, sim = pendulum_sim()
    c = sim.controller(0)
    tau = 2.0
    inertia = PENDULUM_ICOM + PENDULUM_M * PENDULUM_L ** 2
    dt = world.simulation.physics_dt
    c.setTorque([tau])
    assert c.getControlType() == "torque"
    sim.simulate(dt)
    v1 = tau * dt / (inertia + PENDULUM_B * dt)
    assert c.getSensedVelocity()[0] == pytest.approx(v1, rel=1e-9)
    assert c.getSensedConfig()[0] == pytest.approx(v1 * dt, rel=1e-9)
    assert v1 / dt == pytest.approx(tau / inertia, rel=1e-4)
    np.testing.assert_allclose(c.getCommandedTorque(), [tau])
    np.testing.assert_allclose(c.getSensedTorque(), [tau])


def test_set_torque_swing_follows_the_torque_driven_pendulum_ode():
    _, sim = pendulum_sim()
    c = sim.controller(0)
    tau = 3.0
    inertia = PENDULUM_ICOM + PENDULUM_M * PENDULUM_L ** 2
    c.setTorque([tau])

    def dynamics(t, x):
        theta, omega = x
        return [omega, (tau - PENDULUM_M * G * PENDULUM_L * math.sin(theta)
                        - PENDULUM_B * omega) / inertia]

    times = np.arange(1, 101) * 0.01
    ode = solve_ivp(dynamics, (0, 1.0), [0.0, 0.0], t_eval=times, rtol=1e-10, atol=1e-12)
    angles = []
    for _ in times:
        sim.simulate(0.01)
        angles.append(c.getSensedConfig()[0])
    # first-order integration at 1 ms: agreement to a few 1e-3 rad over the swing
    np.testing.assert_allclose(angles, ode.y[0], atol=5e-3)
    assert max(angles) > 0.5         # it did swing


def test_set_torque_takes_one_torque_per_driver_and_skips_joints_without_one():
    # a spherical joint (3 DOFs, no driver) then a revolute one (a driver): setTorque with one
    # value drives the revolute joint and leaves the ball joint without torque
    urdf = """<robot name="ballarm">
  <link name="world"/>
  <link name="a"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="world"/><child link="a"/></joint>
  <joint name="twist" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 -1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="5" velocity="5"/>
  </joint>
</robot>"""
    world = sim_node.WorldModel()
    robot = world.loadRobot(urdf)
    assert robot.numDrivers() == 1 and robot.driver(0).getName() == "b"
    sim = sim_node.Simulator(world)
    c = sim.controller(0)
    c.setTorque([1.5])
    sim.simulate(world.simulation.physics_dt)
    np.testing.assert_allclose(c.getCommandedTorque(), [0.0, 0.0, 0.0, 1.5])
    with pytest.raises(ValueError, match="setTorque: .*or give 1 driver torques"):
        c.setTorque([1.0, 2.0])
