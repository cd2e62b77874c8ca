"""Default PID gains (sim_node.sim.gains): any robot holds its pose and tracks position commands
without tuning; explicit gains win."""
import importlib.metadata
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

import sim_node
from sim_node.sim.gains import (DEFAULT_BANDWIDTH, SATURATION_ERROR, default_pid_gains,
                               largest_mass_diagonal)


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


def test_a_damped_joint_keeps_a_critically_damped_pair_at_the_bandwidth():
    # the URDF damping b adds to kD: (m s + beta)(s + w)^2 with beta = max(m w, b - 2 m w)
    m, b = np.array([1e-4, 1.0, 0.5]), np.array([1.0, 10.0, 0.0])
    kp, ki, kd = default_pid_gains(m, np.full(3, np.inf), b)
    w = DEFAULT_BANDWIDTH
    for j in range(3):
        assert kd[j] >= 0
        poles = np.sort_complex(np.roots([m[j], kd[j] + b[j], kp[j], ki[j]]))
        beta = max(m[j] * w, b[j] - 2 * m[j] * w)
        np.testing.assert_allclose(poles, np.sort_complex([-beta / m[j], -w, -w]), rtol=1e-4)


def test_a_damped_weak_joint_reaches_its_effort_limit_with_its_pair_still_critically_damped():
    # a damping-dominated joint (b^2 > 3 m kP) whose effort limit binds: kP E = tau, and the
    # closed loop is (m s + beta)(s + w)^2, beta = b - 2 m w, for the w below the bandwidth
    m, b, effort = np.array([1e-4]), np.array([1.0]), np.array([2.0])
    kp, ki, kd = default_pid_gains(m, effort, b)
    assert kp[0] * SATURATION_ERROR == pytest.approx(2.0, rel=1e-12)
    poles = np.sort_complex(np.roots([m[0], kd[0] + b[0], kp[0], ki[0]]))
    w = -poles[-1].real
    assert w < DEFAULT_BANDWIDTH
    np.testing.assert_allclose(poles, np.sort_complex([-(b[0] - 2 * m[0] * w) / m[0], -w, -w]),
                               rtol=1e-4)


def test_a_robot_whose_joints_have_no_joint_below_them_keeps_its_mass_diagonal_everywhere():
    # the controller samples no configurations when every DOF is a root of the tree (B_jj
    # depends only on the coordinates of DOF j's descendants): the pendulum's B_11 at 64
    # random angles equals the one at its start
    from sim_node.engine import crba
    from sim_node.engine.model import Data

    world = sim_node.WorldModel()
    world.readFile(str(Path(__file__).parents[2] / "data" / "worlds" / "pendulum.yaml"))
    robot = world.robot(0)
    model, data = robot.model, Data(robot.model)
    assert (model.arrays["dof_parent"] < 0).all() and not model.has_mimic
    q0 = robot.getConfig()
    sampled = largest_mass_diagonal(lambda q: crba.mass_matrix(model, data, q), q0,
                                    np.full(model.nq, -np.pi), np.full(model.nq, np.pi),
                                    list(range(model.nq)), [])
    np.testing.assert_allclose(sampled, crba.mass_matrix(model, data, q0).diagonal(),
                               rtol=1e-12)


def test_the_inertia_is_the_largest_mass_matrix_diagonal_within_the_limits():
    # a planar two-link arm: B_11 = I1 + I2 + m2 (l1^2 + 2 l1 c2 cos q2) + ...: largest at q2 = 0
    def mass_matrix(q):
        c = np.cos(q[1])
        return np.array([[3.0 + 2.0 * c, 1.0 + c], [1.0 + c, 1.0]])
    largest = largest_mass_diagonal(mass_matrix, np.array([0.0, 2.0]), np.array([-1.0, -3.0]),
                                    np.array([1.0, 3.0]), [0, 1], [], samples=400)
    assert largest[1] == 1.0
    assert 4.99 < largest[0] <= 5.0              # close to cos q2 = 1, never above


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


def _example_robot_data():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))


def _pybullet_data():
    pybullet_data = pytest.importorskip("pybullet_data")
    return Path(pybullet_data.getDataPath())


ARMS = {
    "pybullet kuka_iiwa": lambda: _pybullet_data() / "kuka_iiwa" / "model.urdf",
    "pybullet franka_panda": lambda: _pybullet_data() / "franka_panda" / "panda.urdf",
    "pybullet xarm6": lambda: _pybullet_data() / "xarm" / "xarm6_robot.urdf",
    "erd ur5": lambda: _example_robot_data() / "ur_description" / "urdf" / "ur5_robot.urdf",
    "erd panda": lambda: _example_robot_data() / "panda_description" / "urdf" / "panda.urdf",
    "erd talos arm": lambda: _example_robot_data() / "talos_data" / "robots"
                                                   / "talos_left_arm.urdf",
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
    # a joint whose dry friction is at least its effort limit cannot move (talos' gripper: 1 N m
    # of each): it holds, which the previous test checks
    for name in robot.getJointNames():
        joint = robot.urdf.joints[name]
        if joint.limit is not None and joint.friction >= joint.limit.effort:
            error[robot.structure.joint_q_index[name]] = 0.0
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


def test_default_gains_follow_a_changed_link_mass():
    # Claim: the default gains remembered between Simulators of one robot (a Monte Carlo run
    # builds one per sample) are those of the robot as it is: equal for an unchanged robot;
    # when the link's mass and inertia double, kP stays at effort / 0.05 rad (the pendulum's
    # 50 N m limit binds) and the bandwidth drops as 1 / sqrt(m): kD + b = 3 m w grows by
    # sqrt(2) (b the URDF damping), kI = m w^3 shrinks by sqrt(2); back to the old mass, the
    # old gains
    world = sim_node.WorldModel()
    world.readFile(str(Path(__file__).parents[2] / "data" / "worlds" / "pendulum.yaml"))
    robot = world.robot(0)
    robot.settings = {}                     # no world-file gains: the defaults are seen
    kp, ki, kd = sim_node.Simulator(world).controller(0).getPIDGains()
    assert kp[0] == pytest.approx(50.0 / SATURATION_ERROR)
    np.testing.assert_array_equal(sim_node.Simulator(world).controller(0).getPIDGains(),
                                  (kp, ki, kd))
    link = robot.link(robot.numLinks() - 1)
    mass = link.getMass()
    link.setMass(sim_node.Mass(2 * mass.getMass(), mass.getCom(), 2 * mass.getInertia()))
    kp2, ki2, kd2 = sim_node.Simulator(world).controller(0).getPIDGains()
    assert kp2[0] == pytest.approx(kp[0], rel=1e-12)
    b = robot.structure.damping[0]
    assert kd2[0] + b == pytest.approx((kd[0] + b) * np.sqrt(2), rel=1e-9)
    assert ki2[0] == pytest.approx(ki[0] / np.sqrt(2), rel=1e-9)
    link.setMass(mass)
    np.testing.assert_array_equal(sim_node.Simulator(world).controller(0).getPIDGains(),
                                  (kp, ki, kd))
