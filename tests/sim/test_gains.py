"""Default PID gains (sim_node.sim.gains): any robot holds its pose and tracks position commands
without tuning; explicit gains win."""
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

import sim_node
from sim_node.sim.gains import DEFAULT_BANDWIDTH, SATURATION_ERROR, default_pid_gains


def test_gains_place_a_triple_real_pole_at_the_bandwidth():
    # m s^3 + kD s^2 + kP s + kI = m (s + w)^3 for a joint whose effort limit does not bind
    m = np.array([0.01, 0.5, 3.0])
    kp, ki, kd = default_pid_gains(m, np.full(3, np.inf))
    for j in range(3):
        poles = np.roots([m[j], kd[j], kp[j], ki[j]])
        np.testing.assert_allclose(poles, -DEFAULT_BANDWIDTH, rtol=1e-4)


def test_a_weak_joint_reaches_its_effort_limit_at_the_saturation_error():
    m, effort = np.array([2.0]), np.array([10.0])
    kp, ki, kd = default_pid_gains(m, effort)
    assert kp[0] * SATURATION_ERROR == pytest.approx(10.0)
    w = kd[0] / (3 * m[0])                       # still a triple pole, at a lower frequency
    assert w < DEFAULT_BANDWIDTH
    np.testing.assert_allclose(np.roots([m[0], kd[0], kp[0], ki[0]]), -w, rtol=1e-4)


def test_joints_that_cannot_act_get_zero_gains():
    kp, ki, kd = default_pid_gains([1.0, 0.0, 1.0], [0.0, 5.0, np.nan])
    np.testing.assert_array_equal(kp, 0.0)
    np.testing.assert_array_equal(ki, 0.0)
    np.testing.assert_array_equal(kd, 0.0)


PENDULUM = """<robot name="p">
  <link name="world"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="j" type="continuous"><parent link="world"/><child link="arm"/>
    <axis xyz="0 0 1"/></joint>
</robot>"""


def test_a_small_step_follows_the_linear_closed_loop_response():
    # a horizontal pendulum (axis along gravity: no gravity torque); a 0.01 rad step stays in the
    # linear range, so q(t) is the step response of (kP s + kI) / (m (s + w)^3) (kD acts on the
    # measured velocity only), computed independently by scipy.signal
    world = sim_node.WorldModel()
    world.loadRobot(PENDULUM)
    sim = sim_node.Simulator(world)
    sim.setSimStep(1e-4)               # W dt = 0.005: the discrete loop follows the continuous one
    controller = sim.controller(0)
    kp, ki, kd = (g[0] for g in controller.getPIDGains())
    m = 2.0 * 0.25 + 0.001
    assert kd == pytest.approx(3 * m * DEFAULT_BANDWIDTH)
    step = 0.01
    controller.setPIDCommand([step])
    times, q = [], []
    while sim.getTime() < 0.3 - 1e-9:
        sim.simulate(0.001)
        times.append(sim.getTime())
        q.append(controller.getSensedConfig()[0])
    # (scipy's step response starts at T[0])
    _, reference = signal.step(([kp, ki], [m, kd, kp, ki]), T=np.array([0.0, *times]))
    np.testing.assert_allclose(q, step * reference[1:], atol=0.01 * step)


def _pybullet_data():
    pybullet_data = pytest.importorskip("pybullet_data")
    return Path(pybullet_data.getDataPath())


ARMS = {
    "pybullet kuka_iiwa": lambda: _pybullet_data() / "kuka_iiwa" / "model.urdf",
}


@pytest.fixture(params=sorted(ARMS), scope="module")
def arm(request):
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(ARMS[request.param]()), fixed_base=True)
    return world, robot


def test_an_arm_from_a_third_party_urdf_holds_its_pose_for_3_s(arm):
    world, robot = arm
    sim = sim_node.Simulator(world)
    controller = sim.controller(0)
    q0 = controller.getSensedConfig()
    worst = 0.0
    while sim.getTime() < 3.0 - 1e-9:
        sim.simulate(0.01)
        worst = max(worst, np.max(np.abs(controller.getSensedConfig() - q0)))
    assert worst < 0.05, f"{robot.getName()}: a joint moved {worst:.4f} rad from its start"


def test_an_arm_from_a_third_party_urdf_tracks_a_step_within_2_percent_after_1_s(arm):
    world, robot = arm
    sim = sim_node.Simulator(world)
    controller = sim.controller(0)
    q0 = controller.getSensedConfig()
    lower, upper = robot.getJointLimits()
    # 0.3 rad (or 3 cm for prismatic joints) towards the middle of the range
    size = np.full(len(q0), 0.3)
    for name in robot.getJointNames():
        i = robot.structure.joint_q_index[name]
        joint = robot.urdf.joints[name]
        size[i] = 0.03 if joint.type == "prismatic" else 0.3
    middle = np.where(np.isfinite(lower) & np.isfinite(upper), (lower + upper) / 2, q0 + 1)
    target = np.clip(q0 + np.sign(middle - q0 + 1e-12) * size, lower, upper)
    controller.setPIDCommand(target)
    sim.simulate(1.0)
    moved = np.abs(target - q0)
    error = np.abs(controller.getSensedConfig() - target)
    assert np.all(error <= 0.02 * moved + 1e-9), (
        f"{robot.getName()}: relative errors {np.round(error / np.maximum(moved, 1e-12), 4)}")


ONE_JOINT_GAINS = """
robots:
  - name: pendulum
    urdf: {urdf}
    controller: {{kp: {{j: 7.0}}}}
"""


def test_gains_given_in_the_world_file_win_joint_by_joint(tmp_path):
    urdf = tmp_path / "two.urdf"
    urdf.write_text(PENDULUM.replace('</robot>', '''
  <link name="arm2"><inertial><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="arm"/><child link="arm2"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="1"/>
  </joint>
</robot>'''))
    world_file = tmp_path / "world.yaml"
    world_file.write_text(ONE_JOINT_GAINS.format(urdf=urdf))
    world = sim_node.WorldModel()
    world.readFile(world_file)
    kp, ki, kd = sim_node.Simulator(world).controller(0).getPIDGains()
    assert (kp[0], ki[0], kd[0]) == (7.0, 0.0, 0.0)      # named: all three from the file
    m = world.robot(0).getMassMatrix()[1, 1]
    expected = default_pid_gains([m], [5.0])
    np.testing.assert_allclose([kp[1], ki[1], kd[1]], [e[0] for e in expected], rtol=1e-12)
