"""equilibrium_torques: the torque balance it claims, against closed forms (a hanging arm needs
its gravity torques; a floating box on four feet needs the COM equilibrium forces) and the l2
solution against scipy's bound-constrained least squares."""
import numpy as np
import pytest
from scipy.optimize import lsq_linear

import sim_node
from sim_node.model import contact_lp
from sim_node.model.contact import ContactPoint, Hold, equilibrium_torques
from sim_node.model.equilibrium_torques import (WEIGHT_CAP, contact_jacobian_transpose_map,
                                                equilibrium_torques as solve)

GRAVITY = (0.0, 0.0, -9.8)


def planar_arm_urdf(efforts=(50.0, 30.0, 10.0)):
    """Three 0.5 m links swinging about y, masses 2, 1.5, 1 kg at their middles."""
    links = ['<link name="base"><inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" '
             'izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>']
    joints = []
    parent = "base"
    for i, (mass, effort) in enumerate(zip((2.0, 1.5, 1.0), efforts)):
        name = f"l{i + 1}"
        links.append(f'<link name="{name}"><inertial><origin xyz="0.25 0 0"/><mass value="{mass}"/>'
                     '<inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/>'
                     '</inertial></link>')
        offset = "0 0 0.3" if i == 0 else "0.5 0 0"
        joints.append(f'<joint name="j{i + 1}" type="revolute"><parent link="{parent}"/>'
                      f'<child link="{name}"/><origin xyz="{offset}"/><axis xyz="0 1 0"/>'
                      f'<limit lower="-3" upper="3" effort="{effort}" velocity="2"/></joint>')
        parent = name
    return f'<robot name="arm">{"".join(links)}{"".join(joints)}</robot>'


BOX_URDF = """<robot name="box"><link name="body"><inertial><origin xyz="0.1 -0.05 0.2"/>
<mass value="3"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
</link></robot>"""


@pytest.fixture
def arm():
    robot = sim_node.WorldModel().loadRobot(planar_arm_urdf(), fixed_base=True)
    robot.setConfig([0.4, -0.9, 0.5])
    return robot


def tip_hold(robot, n=(0.0, 0.0, 1.0), k=0.5):
    """A hold of the last link's tip on a surface with normal n."""
    link = robot.link("l3")
    h = Hold()
    h.link = link.getIndex()
    h.contacts = [ContactPoint(link.getWorldPosition([0.5, 0, 0]), n, k)]
    return h


def test_a_hanging_arm_needs_exactly_its_gravity_torques(arm):
    for norm in (0, 1, 2):
        t, f = equilibrium_torques(arm, [], GRAVITY, norm=norm)
        np.testing.assert_allclose(t, arm.getGravityForces(GRAVITY), atol=1e-9)
        assert f == []
    internal = np.array([0.3, -0.2, 0.1])
    t, _ = equilibrium_torques(arm, [], GRAVITY, internalTorques=internal)
    np.testing.assert_allclose(t, arm.getGravityForces(GRAVITY) + internal, atol=1e-9)


def assert_balance(robot, holds, t, f, fext=GRAVITY, internal=None, tol=1e-7):
    rows = np.array([c.tolist() for h in holds for c in h.contacts]).reshape(-1, 7)
    links = [h.link for h in holds for _ in h.contacts]
    JT = contact_jacobian_transpose_map(robot, rows, links)
    lhs = robot.getGravityForces(fext) + (0 if internal is None else internal)
    np.testing.assert_allclose(lhs, np.asarray(t) + JT @ np.asarray(f).reshape(-1), atol=tol)
    for row, force in zip(rows, np.asarray(f).reshape(-1, 3)):
        fn = force @ row[3:6]
        assert fn >= -tol and np.linalg.norm(force - fn * row[3:6]) <= row[6] * fn + tol


def test_leaning_on_the_tip_lowers_the_torques_and_balances(arm):
    hold = tip_hold(arm)
    gravity_only = np.abs(arm.getGravityForces(GRAVITY) / np.array([50.0, 30.0, 10.0]))
    for norm in (0, 1, 2):
        t, f = equilibrium_torques(arm, [hold], GRAVITY, norm=norm)
        assert_balance(arm, [hold], t, f)
        scaled = np.abs(np.array(t) / np.array([50.0, 30.0, 10.0]))
        p = np.inf if norm == 0 else norm
        assert np.linalg.norm(scaled, p) < np.linalg.norm(gravity_only, p)


def test_the_three_norms_each_win_at_their_own_objective(arm):
    hold = tip_hold(arm, n=np.array([0.3, 0.0, 1.0]) / np.hypot(0.3, 1.0), k=0.2)
    w = np.array([50.0, 30.0, 10.0])
    scaled = {norm: np.array(equilibrium_torques(arm, [hold], GRAVITY, norm=norm)[0]) / w
              for norm in (0, 1, 2)}
    for norm, p in ((0, np.inf), (1, 1), (2, 2)):
        mine = np.linalg.norm(scaled[norm], p)
        assert all(mine <= np.linalg.norm(other, p) + 1e-7 for other in scaled.values())


def test_l2_solution_is_scipy_bounded_least_squares(arm):
    hold = tip_hold(arm, n=np.array([-0.4, 0.0, 1.0]) / np.hypot(0.4, 1.0), k=0.6)
    rows = np.array([hold.contacts[0].tolist()])
    t, f = solve(arm, rows, [hold.link], np.array(GRAVITY), norm=2)
    # reference: min || (lhs - JT E a) / w || over a >= 0, by scipy's trust-region solver
    E, owner = contact_lp.generators(rows)
    JT = contact_jacobian_transpose_map(arm, rows, [hold.link])
    w = np.minimum(WEIGHT_CAP, arm.getTorqueLimits())
    C = (JT @ E.T) / w[:, None]
    d = arm.getGravityForces(GRAVITY) / w
    a = lsq_linear(C, d, bounds=(0, np.inf), tol=1e-14).x
    np.testing.assert_allclose(t, (d - C @ a) * w, atol=1e-6)


def test_a_floating_box_on_four_feet_needs_the_com_equilibrium_forces():
    robot = sim_node.WorldModel().loadRobot(BOX_URDF, fixed_base=False)
    q = robot.getConfig()
    q[0:3] = [0.0, 0.0, 0.0]
    robot.setConfig(q)
    h = Hold()
    h.link = 0
    h.contacts = [ContactPoint((x, y, 0.0), (0, 0, 1), 0.4) for x in (-0.3, 0.5) for y in (-0.2, 0.2)]
    t, f = equilibrium_torques(robot, [h], GRAVITY)
    np.testing.assert_allclose(t, np.zeros(6), atol=1e-12)    # nothing actuates the base
    assert_balance(robot, [h], t, f)
    np.testing.assert_allclose(np.sum(f, axis=0), [0, 0, 3 * 9.8], atol=1e-7)
    com = robot.getCom()
    moment = np.cross(np.array([c.x for c in h.contacts]) - com, np.array(f)).sum(axis=0)
    np.testing.assert_allclose(moment, 0.0, atol=1e-7)
    # feet all on one side of the COM: no balance
    h.contacts = [ContactPoint((x, y, 0.0), (0, 0, 1), 0.4) for x in (0.3, 0.5) for y in (-0.2, 0.2)]
    assert equilibrium_torques(robot, [h], GRAVITY) is None
    assert equilibrium_torques(robot, [], GRAVITY) is None     # a falling box


def test_hostile_arguments_are_refused_with_reasons(arm):
    hold = tip_hold(arm)
    with pytest.raises(ValueError, match="norm must be 0"):
        equilibrium_torques(arm, [hold], GRAVITY, norm=3)
    with pytest.raises(ValueError, match="internalTorques must be 3"):
        equilibrium_torques(arm, [hold], GRAVITY, internalTorques=[1.0, 2.0])
    with pytest.raises(ValueError, match="fext"):
        equilibrium_torques(arm, [hold], (0, float("nan"), -9.8))
    bad = Hold()
    bad.link = 7
    with pytest.raises(ValueError, match=r"holdList\[0\].link"):
        equilibrium_torques(arm, [bad], GRAVITY)
    with pytest.raises(TypeError, match="RobotModel"):
        equilibrium_torques("arm", [hold], GRAVITY)
    with pytest.raises(TypeError, match="must be a Hold"):
        equilibrium_torques(arm, [hold.contacts[0]], GRAVITY)
