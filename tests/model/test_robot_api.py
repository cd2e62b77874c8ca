"""The Klamp't-style robot API: conventions (q/v layout, base handling, Jacobian rows,
dynamics without gravity), the Mass structure and its effect on the dynamics, validation."""
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node import Mass

REPO = Path(__file__).resolve().parents[2]
ROBOTS = REPO / "data" / "robots"


def load(name, **kw):
    world = sim_node.WorldModel()
    return world.loadRobot(str(ROBOTS / name / f"{name}.urdf"), **kw)


def test_fixed_base_defaults_follow_the_world_link_rule():
    assert not load("arm7").isFloatingBase()          # root link is 'world'
    assert load("quadruped").isFloatingBase()          # root link is 'trunk'
    quad_fixed = load("quadruped", fixed_base=True)
    assert not quad_fixed.isFloatingBase() and quad_fixed.model.nq == 12
    arm_free = load("arm7", fixed_base=False)            # the world weld becomes a free joint
    assert arm_free.isFloatingBase() and arm_free.model.nq == 7 + 8 and arm_free.model.nv == 6 + 8


def test_joint_names_are_the_q_order_and_exclude_mimic_joints():
    arm = load("arm7")
    names = arm.getJointNames()
    assert names == [f"joint{i}" for i in range(1, 8)] + ["finger_joint1"]
    assert len(arm.getConfig()) == len(names) == arm.model.nv
    quad = load("quadruped")
    assert quad.model.nq == 7 + 12 and quad.getJointNames()[0] == "FL_hip_abd"


def test_floating_base_config_is_position_quaternion_xyzw_then_joints():
    quad = load("quadruped")
    q = quad.getConfig()
    q[:3] = [1.0, 2.0, 3.0]
    q[3:7] = [0.0, 0.0, np.sin(0.25), np.cos(0.25)]     # 0.5 rad about z, (x, y, z, w)
    quad.setConfig(q)
    R, t = quad.link("trunk").getTransform()
    np.testing.assert_allclose(t, [1, 2, 3])
    np.testing.assert_allclose(R[:2, :2], [[np.cos(0.5), -np.sin(0.5)], [np.sin(0.5), np.cos(0.5)]])
    q[3:7] = [0.0, 0.0, 2 * np.sin(0.25), 2 * np.cos(0.25)]   # normalised on set
    quad.setConfig(q)
    np.testing.assert_allclose(np.linalg.norm(quad.getConfig()[3:7]), 1.0)


def test_base_velocity_is_expressed_in_base_axes():
    quad = load("quadruped")
    q = quad.getConfig()
    q[3:7] = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]   # base yawed by 90 degrees
    quad.setConfig(q)
    v = np.zeros(quad.model.nv)
    v[0] = 1.0                                                    # forward in the base frame
    J = quad.link("trunk").getJacobian([0, 0, 0])
    np.testing.assert_allclose(J[3:] @ v, [0, 1, 0], atol=1e-12)  # = +y in the world


def test_jacobian_rows_are_angular_then_linear_and_predict_point_velocity():
    arm = load("arm7")
    rng = np.random.default_rng(0)
    lower, upper = arm.getJointLimits()
    q = rng.uniform(lower, upper)
    v = rng.normal(size=arm.model.nv)
    arm.setConfig(q)
    link = arm.link("link7")
    p = np.array([0.01, 0.02, 0.05])
    J = link.getJacobian(p)
    np.testing.assert_array_equal(link.getPositionJacobian(p), J[3:])
    h = 1e-6
    arm.setConfig(q + h * v)
    R1, x1 = link.getTransform()
    arm.setConfig(q - h * v)
    R0, x0 = link.getTransform()
    np.testing.assert_allclose(J[3:] @ v, (R1 @ p + x1 - R0 @ p - x0) / (2 * h), atol=1e-7)
    W = (R1 - R0) / (2 * h) @ link.getTransform()[0].T * 0 + ((R1 - R0) / (2 * h)) @ ((R1 + R0) / 2).T
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    np.testing.assert_allclose(J[:3] @ v, omega, atol=1e-6)


def test_dynamics_methods_follow_the_seed_equation():
    # B qdd + C + G = tau; torquesFromAccel and accelFromTorques leave gravity out
    arm = load("arm7")
    rng = np.random.default_rng(1)
    lower, upper = arm.getJointLimits()
    arm.setConfig(rng.uniform(lower, upper))
    arm.setVelocity(rng.normal(size=arm.model.nv))
    B, C = arm.getMassMatrix(), arm.getCoriolisForces()
    ddq = rng.normal(size=arm.model.nv)
    np.testing.assert_allclose(arm.torquesFromAccel(ddq), B @ ddq + C, atol=1e-10)
    tau = rng.normal(size=arm.model.nv)
    np.testing.assert_allclose(arm.accelFromTorques(tau), np.linalg.solve(B, tau - C), atol=1e-9)
    np.testing.assert_allclose(arm.getMassMatrixInv(), np.linalg.inv(B), atol=1e-8)
    np.testing.assert_allclose(arm.getCoriolisForceMatrix() @ arm.getVelocity(), C, atol=1e-10)


def test_gravity_forces_hold_the_pendulum_still():
    # one link, mass m, com at distance l below the pivot: G(theta) = m g l sin(theta)
    pend = load("pendulum")
    link = pend.link(pend.numLinks() - 1)
    mass = link.getMass()
    com_local = mass.getCom()
    axis_angle = 0.7
    pend.setConfig([axis_angle])
    G = pend.getGravityForces((0, 0, -9.81))
    R, t = link.getTransform()
    lever = R @ com_local + t                        # com relative to the pivot at the origin
    pivot = pend.link("world").getTransform()[1]
    r = lever - pivot
    axis_world = R @ pend.urdf.joints[pend.structure.link_joint[link.getIndex()]].axis
    expected = -np.dot(axis_world, np.cross(r, mass.getMass() * np.array([0, 0, -9.81])))
    assert G[0] == pytest.approx(expected, rel=1e-12)
    assert abs(G[0]) > 1.0


def test_com_is_the_mass_weighted_mean_of_link_coms():
    arm = load("arm7")
    arm.setConfig(np.linspace(-0.5, 0.5, arm.model.nq))
    total = 0.0
    moment = np.zeros(3)
    for i in range(arm.numLinks()):
        link = arm.link(i)
        mass = link.getMass()
        R, t = link.getTransform()
        moment += mass.getMass() * (R @ mass.getCom() + t)
        total += mass.getMass()
    assert arm.getTotalMass() == pytest.approx(total)
    np.testing.assert_allclose(arm.getCom(), moment / total, atol=1e-12)


def test_mass_structure_round_trips():
    m = Mass()
    m.setMass(2.5)
    m.setCom([0.1, -0.2, 0.3])
    m.setInertia([1.0, 2.0, 3.0])
    assert m.getMass() == 2.5 and m.getCom().tolist() == [0.1, -0.2, 0.3]
    assert m.getInertia().tolist() == [1, 0, 0, 0, 2, 0, 0, 0, 3]
    m.setInertia(0.5)
    assert m.getInertia().tolist() == [0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5]
    full = [1.0, 0.1, 0.2, 0.1, 2.0, 0.3, 0.2, 0.3, 3.0]
    m.setInertia(full)
    assert m.getInertia().tolist() == full
    arm = load("arm7")
    link = arm.link("link4")
    link.setMass(m)
    assert link.getMass() == m
    for bad in (lambda: m.setMass(-1), lambda: m.setCom([1, 2]), lambda: m.setInertia([1, 2]),
                lambda: m.setInertia([1, 5, 0, 5, 1, 0, 0, 0, 1])):
        with pytest.raises(ValueError):
            bad()


def test_set_mass_changes_the_dynamics_like_an_edited_urdf(tmp_path):
    # the reference: the same robot loaded from a URDF whose <inertial> says the new values
    path = ROBOTS / "arm7" / "arm7.urdf"
    arm = load("arm7")
    new = Mass(5.0, [0.01, 0.02, 0.1], [0.05, 0.001, 0.002, 0.001, 0.04, 0.003, 0.002, 0.003, 0.03])
    arm.link("link3").setMass(new)
    from lxml import etree
    tree = etree.parse(str(path))
    inertial = tree.find("link[@name='link3']/inertial")
    inertial.find("origin").set("xyz", "0.01 0.02 0.1")
    inertial.find("origin").set("rpy", "0 0 0")
    inertial.find("mass").set("value", "5.0")
    inertia = inertial.find("inertia")
    for key, value in dict(ixx=0.05, ixy=0.001, ixz=0.002, iyy=0.04, iyz=0.003, izz=0.03).items():
        inertia.set(key, repr(value))
    edited = tmp_path / "arm7.urdf"
    tree.write(str(edited))
    (tmp_path / "meshes").symlink_to(path.parent / "meshes")
    ref = sim_node.WorldModel().loadRobot(str(edited))
    q = np.linspace(-1, 1, arm.model.nq)
    v = np.linspace(1, -1, arm.model.nv)
    for robot in (arm, ref):
        robot.setConfig(q)
        robot.setVelocity(v)
    np.testing.assert_allclose(arm.getMassMatrix(), ref.getMassMatrix(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(arm.getGravityForces(), ref.getGravityForces(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(arm.getCom(), ref.getCom(), rtol=1e-12)


def test_bad_state_input_is_rejected_with_a_clear_message():
    arm = load("arm7")
    q = arm.getConfig()
    with pytest.raises(ValueError, match="expected 8 values"):
        arm.setConfig(q[:-1])
    with pytest.raises(ValueError, match="NaN"):
        arm.setVelocity(np.full(8, np.nan))
    quad = load("quadruped")
    q = quad.getConfig()
    q[3:7] = 0
    with pytest.raises(ValueError, match="quaternion is zero"):
        quad.setConfig(q)
    with pytest.raises(KeyError, match="no link 'elbow'"):
        arm.link("elbow")
    with pytest.raises(ValueError, match="expected length 8"):
        arm.torquesFromAccel(np.zeros(3))
    assert np.array_equal(arm.getConfig(), load("arm7").getConfig())   # nothing half-applied


MIXED_URDF = """<robot name="mixed"><link name="base"><inertial><mass value="3"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="base"/><child link="a"/></joint>
  <joint name="slide" type="planar"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/></joint>
  <joint name="loose" type="floating"><parent link="b"/><child link="c"/></joint>
</robot>"""


def test_multi_dof_joints_report_their_type_size_entries_and_coordinate_names():
    robot = sim_node.WorldModel().loadRobot(MIXED_URDF)        # floating base: q 7, v 6 first
    assert robot.getJointNames() == ["ball", "slide", "loose"]
    assert [robot.jointType(n) for n in robot.getJointNames()] == ["spherical", "planar",
                                                                   "floating"]
    assert [robot.jointSize(n) for n in robot.getJointNames()] == [(4, 3), (3, 3), (7, 6)]
    assert [robot.jointIndices(n) for n in robot.getJointNames()] == [(7, 6), (11, 9), (14, 12)]
    q_names, v_names = robot.getJointCoordinateNames()
    assert q_names == ["ball.qx", "ball.qy", "ball.qz", "ball.qw", "slide.x", "slide.y",
                       "slide.theta", "loose.px", "loose.py", "loose.pz", "loose.qx", "loose.qy",
                       "loose.qz", "loose.qw"]
    assert len(q_names) == robot.model.nq - 7 and len(v_names) == robot.model.nv - 6
    with pytest.raises(KeyError, match="no movable joint 'base'"):
        robot.jointSize("base")


def test_every_quaternion_is_normalised_on_set_and_a_zero_one_names_its_joint():
    robot = sim_node.WorldModel().loadRobot(MIXED_URDF)
    q = robot.getConfig()
    q[7:11] = [0.0, 0.0, 3.0, 4.0]             # ball
    q[17:21] = [0.0, 2.0, 0.0, 0.0]            # loose's orientation
    robot.setConfig(q)
    np.testing.assert_allclose(robot.getConfig()[7:11], [0, 0, 0.6, 0.8], rtol=1e-15)
    np.testing.assert_array_equal(robot.getConfig()[17:21], [0, 1, 0, 0])
    q[17:21] = 0.0
    with pytest.raises(ValueError, match=r"quaternion is zero at entries 17\.\.20 \(joint 'loose'\)"):
        robot.setConfig(q)
