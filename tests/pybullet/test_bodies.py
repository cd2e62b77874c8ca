"""Joint and link states (get/resetJointState, getLinkState, base pose and velocity) against the
real PyBullet: the same resets must give the same kinematics."""
import math

import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference, same_rotation
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

# PyBullet reports the URDF link frame (getLinkState 4, 5) in single precision
FLOAT32 = 2e-6
BASE = ([0.3, -0.4, 0.8], [0.0, 0.0, 0.3826834, 0.9238795])


def _pair(robot, a, b, **kwargs):
    ua = quiet(p.loadURDF, robot, *BASE, physicsClientId=a, **kwargs)
    ub = quiet(pb.loadURDF, robot, *BASE, physicsClientId=b, **kwargs)
    return ua, ub


def _scalar_joints(module, uid, cid):
    return [j for j in range(module.getNumJoints(uid, physicsClientId=cid))
            if module.getJointInfo(uid, j, physicsClientId=cid)[2] in (pb.JOINT_REVOLUTE,
                                                                       pb.JOINT_PRISMATIC)]


def _compare_links(ua, ub, a, b, velocity=False):
    n = p.getNumJoints(ua, physicsClientId=a)
    for link in range(n):
        sa = p.getLinkState(ua, link, computeLinkVelocity=int(velocity),
                            computeForwardKinematics=1, physicsClientId=a)
        sb = pb.getLinkState(ub, link, computeLinkVelocity=int(velocity),
                             computeForwardKinematics=1, physicsClientId=b)
        assert len(sa) == len(sb) == (8 if velocity else 6)
        assert np.allclose(sa[0], sb[0], atol=1e-9), (link, sa[0], sb[0])        # COM
        assert same_rotation(sa[1], sb[1], 1e-9), (link, sa[1], sb[1])
        assert np.allclose(sa[2], sb[2], atol=1e-9)                              # inertial
        assert same_rotation(sa[3], sb[3], 1e-9)
        assert np.allclose(sa[4], sb[4], atol=FLOAT32), (link, sa[4], sb[4])     # URDF frame
        assert same_rotation(sa[5], sb[5], FLOAT32)
        if velocity:
            assert np.allclose(sa[6], sb[6], atol=1e-9), (link, sa[6], sb[6])
            assert np.allclose(sa[7], sb[7], atol=1e-9), (link, sa[7], sb[7])


@pytest.mark.parametrize("robot", ["kuka_iiwa/model.urdf", "franka_panda/panda.urdf",
                                   "r2d2.urdf", "laikago/laikago.urdf"])
def test_link_states_after_reset_joint_state_equal_pybullets(robot):
    rng = np.random.default_rng(7)
    with ours() as a, reference() as b:
        ua, ub = _pair(robot, a, b)
        joints = _scalar_joints(pb, ub, b)
        assert joints == _scalar_joints(p, ua, a)
        for j in joints:
            info = pb.getJointInfo(ub, j, physicsClientId=b)
            lo, hi = (info[8], info[9]) if info[8] <= info[9] else (-3.0, 3.0)
            value, rate = rng.uniform(lo, hi), rng.uniform(-2, 2)
            p.resetJointState(ua, j, value, rate, physicsClientId=a)
            pb.resetJointState(ub, j, value, targetVelocity=rate, physicsClientId=b)
            sa, sb = p.getJointState(ua, j, physicsClientId=a), \
                pb.getJointState(ub, j, physicsClientId=b)
            assert sa[:2] == pytest.approx(sb[:2], abs=1e-12)
        _compare_links(ua, ub, a, b, velocity=True)


def test_base_reset_and_velocities_of_a_floating_robot_equal_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _pair("r2d2.urdf", a, b)
        pose = ([1.0, 2.0, 3.0], [0.2, -0.1, 0.3, 0.9])
        q = np.array(pose[1]) / np.linalg.norm(pose[1])
        p.resetBasePositionAndOrientation(ua, pose[0], q, physicsClientId=a)
        pb.resetBasePositionAndOrientation(ub, pose[0], q, physicsClientId=b)
        p.resetBaseVelocity(ua, [0.1, -0.2, 0.3], [1.0, 0.5, -0.4], physicsClientId=a)
        pb.resetBaseVelocity(ub, [0.1, -0.2, 0.3], [1.0, 0.5, -0.4], physicsClientId=b)
        for j, v in ((2, 1.5), (8, -0.1), (13, 0.7)):
            p.resetJointState(ua, j, 0.2, v, physicsClientId=a)
            pb.resetJointState(ub, j, 0.2, targetVelocity=v, physicsClientId=b)
        base_a = p.getBasePositionAndOrientation(ua, physicsClientId=a)
        base_b = pb.getBasePositionAndOrientation(ub, physicsClientId=b)
        assert np.allclose(base_a[0], base_b[0], atol=1e-9)
        assert same_rotation(base_a[1], base_b[1], 1e-9)
        vel_a = p.getBaseVelocity(ua, physicsClientId=a)
        vel_b = pb.getBaseVelocity(ub, physicsClientId=b)
        assert np.allclose(vel_a, vel_b, atol=1e-9)
        _compare_links(ua, ub, a, b, velocity=True)


def test_spherical_joint_states_equal_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _pair("humanoid/humanoid.urdf", a, b)
        quat = np.array([0.1, 0.3, -0.2, 0.9])
        quat /= np.linalg.norm(quat)
        for module, uid, cid in ((p, ua, a), (pb, ub, b)):
            module.resetJointStateMultiDof(uid, 1, list(quat), [0.3, -0.2, 0.1],
                                           physicsClientId=cid)
        sa = p.getJointStateMultiDof(ua, 1, physicsClientId=a)
        sb = pb.getJointStateMultiDof(ub, 1, physicsClientId=b)
        assert same_rotation(sa[0], sb[0], 1e-12)
        assert np.allclose(sa[1], sb[1], atol=1e-12)
        _compare_links(ua, ub, a, b, velocity=False)


def test_fixed_joint_states_are_zeros_as_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _pair("r2d2.urdf", a, b)
        assert p.getJointState(ua, 0, physicsClientId=a) == \
            pb.getJointState(ub, 0, physicsClientId=b)
        assert p.getJointStates(ua, [0, 2], physicsClientId=a)[1][:2] == (0.0, 0.0)


def test_body_counting_and_info():
    with ours() as a:
        assert p.getNumBodies(physicsClientId=a) == 0
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        assert p.getBodyUniqueId(0, physicsClientId=a) == uid
        assert p.getBodyInfo(uid, physicsClientId=a) == (b"base_link", b"physics")
        with pytest.raises(p.error, match="serialIndex 1 out of range"):
            p.getBodyUniqueId(1, physicsClientId=a)


def test_link_index_minus_one_is_refused_by_get_link_state_as_pybullet():
    with ours() as a, reference() as b:
        ua, ub = _pair("r2d2.urdf", a, b)
        with pytest.raises(pb.error):
            pb.getLinkState(ub, -1, physicsClientId=b)
        with pytest.raises(p.error, match="getLinkState: linkIndex -1 out of range"):
            p.getLinkState(ua, -1, physicsClientId=a)


def test_a_fixed_base_moves_with_its_joint_state_as_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _pair("kuka_iiwa/model.urdf", a, b)
        other = quiet(p.loadURDF, "r2d2.urdf", [3, 0, 1], physicsClientId=a)
        for module, uid, cid in ((p, ua, a), (pb, ub, b)):
            module.resetJointState(uid, 3, -1.1, physicsClientId=cid)
            module.resetBasePositionAndOrientation(uid, [1, 2, 0.5], [0, 0, 0.6, 0.8],
                                                   physicsClientId=cid)
        base_a = p.getBasePositionAndOrientation(ua, physicsClientId=a)
        base_b = pb.getBasePositionAndOrientation(ub, physicsClientId=b)
        assert np.allclose(base_a[0], base_b[0], atol=1e-9)
        assert same_rotation(base_a[1], base_b[1], 1e-9)
        assert p.getJointState(ua, 3, physicsClientId=a)[0] == -1.1
        _compare_links(ua, ub, a, b)
        assert p.getBasePositionAndOrientation(other, physicsClientId=a)[0] == (3.0, 0.0, 1.0)
        p.setGravity(0, 0, -10, physicsClientId=a)
        for _ in range(10):
            p.stepSimulation(physicsClientId=a)
        assert p.getBasePositionAndOrientation(ua, physicsClientId=a) == base_a


_hostile = st.one_of(st.just(math.nan), st.just(math.inf), st.just(1e5), st.just("x"),
                     st.just(None))


@settings(max_examples=40, deadline=None)
@given(function=st.sampled_from(["joint", "joint_index", "base", "velocity", "multi"]),
       bad=_hostile, index=st.one_of(st.integers(-5, 30), st.just(1.5), st.just("0")))
def test_hostile_resets_are_refused_and_nothing_changes(function, bad, index):
    with ours() as a:
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        from sim_node.pybullet.client import get_client
        body = get_client(a).body(uid)
        q0, v0 = body.q().copy(), body.v().copy()
        with pytest.raises(p.error):
            if function == "joint":
                p.resetJointState(uid, 2, bad, physicsClientId=a)
            elif function == "joint_index":
                if isinstance(index, int) and 0 <= index < 15:
                    index = 15
                p.resetJointState(uid, index, 0.1, physicsClientId=a)
            elif function == "base":
                p.resetBasePositionAndOrientation(uid, [0, bad, 0], [0, 0, 0, 1],
                                                  physicsClientId=a)
            elif function == "velocity":
                p.resetBaseVelocity(uid, [bad, 0, 0], physicsClientId=a)
            else:
                p.resetJointStatesMultiDof(uid, [2, 3], [[0.1], [bad]], physicsClientId=a)
        assert np.array_equal(body.q(), q0) and np.array_equal(body.v(), v0)


def test_return_types_are_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _pair("r2d2.urdf", a, b)
        for name, args in (("getJointStates", ([0, 2],)), ("getLinkStates", ([0, 2],)),
                           ("getJointStatesMultiDof", ([0, 2],)), ("getJointState", (2,)),
                           ("getJointStateMultiDof", (0,)), ("getJointStateMultiDof", (2,)),
                           ("getBaseVelocity", ()), ("getBasePositionAndOrientation", ()),
                           ("getJointInfo", (2,)), ("getDynamicsInfo", (2,)),
                           ("getVisualShapeData", ()), ("getCollisionShapeData", (2,))):
            mine = getattr(p, name)(ua, *args, physicsClientId=a)
            theirs = getattr(pb, name)(ub, *args, physicsClientId=b)
            assert _shape(mine) == _shape(theirs), name


def _shape(value):
    """The nesting of tuples and the Python types of a return value (not the numbers)."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_shape(x) for x in value))
    return type(value).__name__


def test_joint_states_multi_dof_takes_pybullets_keyword_joint_index():
    """PyBullet 3.2.7 names getJointStatesMultiDof's list jointIndex; the states equal
    getJointStateMultiDof's, by either name."""
    with ours() as a, reference() as b:
        ua, ub = _pair("r2d2.urdf", a, b)
        theirs = pb.getJointStatesMultiDof(ub, jointIndex=[0, 2], physicsClientId=b)
        mine = p.getJointStatesMultiDof(ua, jointIndex=[0, 2], physicsClientId=a)
        assert mine == p.getJointStatesMultiDof(ua, jointIndices=[0, 2], physicsClientId=a)
        assert mine == tuple(p.getJointStateMultiDof(ua, j, physicsClientId=a) for j in (0, 2))
        assert _shape(mine) == _shape(theirs)
        with pytest.raises(p.error, match="jointIndex"):
            p.getJointStatesMultiDof(ua, physicsClientId=a)
