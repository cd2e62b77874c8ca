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
    sim._scene.robot_v[0][0] = 2.0
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
