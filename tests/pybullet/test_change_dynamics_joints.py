"""changeDynamics' joint fields (control.py): jointDamping and jointLowerLimit /
jointUpperLimit against the real PyBullet on pybullet_data's kuka_iiwa, and their hostile
values."""
import math

import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

STEPS = 240                     # 1 s at PyBullet's default 1/240 s


def _kuka(api, c, free: int, gravity: float = 0.0):
    """kuka_iiwa fixed, link damping off (sim_node has none yet), every joint but `free` held
    at 0 by a stiff motor, `free` limp."""
    api.setGravity(0, 0, gravity, physicsClientId=c)
    uid = quiet(api.loadURDF, "kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=c)
    n = api.getNumJoints(uid, physicsClientId=c)
    for j in range(-1, n):
        quiet(api.changeDynamics, uid, j, linearDamping=0, angularDamping=0, physicsClientId=c)
    held = [j for j in range(n) if j != free]
    api.setJointMotorControlArray(uid, held, pb.POSITION_CONTROL, targetPositions=[0] * len(held),
                                  forces=[500] * len(held), physicsClientId=c)
    api.setJointMotorControl2(uid, free, pb.VELOCITY_CONTROL, force=0, physicsClientId=c)
    return uid


def _run(api, c, uid, joint, steps, every=1):
    out = []
    for i in range(steps):
        api.stepSimulation(physicsClientId=c)
        if (i + 1) % every == 0:
            out.append(api.getJointState(uid, joint, physicsClientId=c)[:2])
    return np.array(out)


@pytest.mark.parametrize("damping", [0.05, 0.5, 2.0])
def test_joint_damping_decays_a_spinning_joint_as_pybullet(damping):
    """kuka joint 0 (the vertical axis, arm held straight) spun at 2 rad/s, damped by
    changeDynamics(jointDamping=c). PyBullet adds -c qdot explicitly before each step: v
    shrinks by (1 - x) per step, x = c dt / I; sim_node's damping is implicit: 1 / (1 + x).
    x is measured from PyBullet's decay; sim_node's must be its implicit twin to 1 %, and
    both to 1e-3 when x is small (c = 0.05)."""
    with ours() as a, reference() as b:
        runs = {}
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 0)
            api.changeDynamics(uid, 0, jointDamping=damping, physicsClientId=c)
            api.resetJointState(uid, 0, 0.0, 2.0, physicsClientId=c)
            runs[api] = _run(api, c, uid, 0, STEPS // 4 if damping > 1 else STEPS)
    v_ours, v_ref = runs[p][:, 1], runs[pb][:, 1]
    n = len(v_ref)
    x = 1.0 - (v_ref[-1] / 2.0) ** (1.0 / n)          # PyBullet's decay per step
    assert np.all(np.diff(v_ref) < 0) and np.all(np.diff(v_ours) < 0)
    implicit = 2.0 * (1.0 + x) ** -np.arange(1, n + 1)
    assert np.allclose(v_ours, implicit, rtol=1e-2), (v_ours[-1], implicit[-1])
    if damping <= 0.05:
        assert np.allclose(v_ours, v_ref, rtol=1e-3)
    # without the change: the file's damping (0.5), the implicit twin of PyBullet's too
    with ours() as a, reference() as b:
        ends = []
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 0)
            api.resetJointState(uid, 0, 0.0, 2.0, physicsClientId=c)
            ends.append(_run(api, c, uid, 0, STEPS // 4)[-1, 1])
    x = 1.0 - (ends[1] / 2.0) ** (1.0 / (STEPS // 4))
    assert 0.5 < ends[1] < 0.7 and ends[0] == pytest.approx(2.0 * (1.0 + x) ** -(STEPS // 4),
                                                            rel=1e-3)


def test_implicit_damping_stays_stable_where_pybullets_explicit_one_diverges():
    """kuka joint 6 (the flange, a tiny inertia about its axis): c dt / I >> 2 makes
    PyBullet's explicit damping blow up; sim_node's implicit damping stops the joint."""
    with ours() as a, reference() as b:
        speeds = {}
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 6)
            api.changeDynamics(uid, 6, jointDamping=0.5, physicsClientId=c)
            api.resetJointState(uid, 6, 0.0, 2.0, physicsClientId=c)
            speeds[api] = abs(_run(api, c, uid, 6, 60)[-1, 1])
    assert speeds[pb] > 10.0                          # PyBullet: diverged
    assert speeds[p] < 1e-6


def test_a_joint_stops_at_a_changed_limit_as_pybullet():
    """kuka joint 0 spun at 1 rad/s, its damping 0, limits changed to [-0.2, 0.3]: it moves
    freely to 0.3 and stays there (PyBullet's limit constraint and the engine's limit row);
    joint 1 under gravity falls onto a changed limit 0.5 and rests on it."""
    with ours() as a, reference() as b:
        runs = {}
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 0)
            api.changeDynamics(uid, 0, jointDamping=0.0, jointLowerLimit=-0.2,
                               jointUpperLimit=0.3, physicsClientId=c)
            api.resetJointState(uid, 0, 0.0, 1.0, physicsClientId=c)
            runs[api] = _run(api, c, uid, 0, STEPS)
    q_ours, q_ref = runs[p][:, 0], runs[pb][:, 0]
    free = q_ref < 0.29                               # before the stop: q = t
    assert np.allclose(q_ours[free], q_ref[free], atol=1e-6)
    assert np.allclose(q_ours[free], np.arange(1, free.sum() + 1) / 240.0, atol=1e-6)
    assert np.all(np.abs(q_ref[-60:] - 0.3) < 2e-3)  # (PyBullet's limit is soft: ERP)
    assert np.all(np.abs(q_ours[-60:] - 0.3) < 2e-3)
    assert np.all(q_ours < 0.3 + 2e-3)
    with ours() as a, reference() as b:
        runs = {}
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 1, gravity=-9.81)
            api.changeDynamics(uid, 1, jointLowerLimit=-0.4, jointUpperLimit=0.5,
                               physicsClientId=c)
            api.resetJointState(uid, 1, 0.1, 0.0, physicsClientId=c)
            runs[api] = _run(api, c, uid, 1, 2 * STEPS)
    q_ours, q_ref = runs[p][:, 0], runs[pb][:, 0]
    assert np.allclose(q_ours[:40], q_ref[:40], atol=2e-3)       # the fall
    assert abs(q_ref[-1] - 0.5) < 1e-3 and abs(q_ours[-1] - 0.5) < 1e-3


def test_changed_limits_and_damping_outlive_a_rebuild_and_get_joint_info_keeps_the_files():
    """Another loadURDF rebuilds sim_node's scene: the changed limit still holds. getJointInfo
    reports the file's damping and limits after changeDynamics, as PyBullet's does."""
    with ours() as a, reference() as b:
        infos = {}
        for api, c in ((p, a), (pb, b)):
            uid = _kuka(api, c, 0)
            api.changeDynamics(uid, 0, jointDamping=3.0, jointLowerLimit=-0.1,
                               jointUpperLimit=0.1, physicsClientId=c)
            infos[api] = [api.getJointInfo(uid, j, physicsClientId=c)[6:12] for j in range(7)]
            quiet(api.loadURDF, "cube_small.urdf", [3, 0, 0], physicsClientId=c)
            if api is p:
                api.changeDynamics(uid, 0, jointDamping=0.0, physicsClientId=c)
                api.resetJointState(uid, 0, 0.0, 1.0, physicsClientId=c)
                q = _run(api, c, uid, 0, STEPS)[:, 0]
                assert np.all(q < 0.1 + 2e-3) and abs(q[-1] - 0.1) < 2e-3
        assert infos[p] == pytest.approx(infos[pb])
        assert infos[p][0][:4] == pytest.approx((0.5, 0.0, -2.96705972839, 2.96705972839))


HINGES = """<robot name="hinges">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="continuous" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/></joint>
  <link name="arm2">
    <inertial><origin xyz="1 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="revolute" type="revolute"><parent link="base"/><child link="arm2"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_continuous_joint_gets_limits_and_a_motor_stops_at_them_as_pybullet(tmp_path):
    """A continuous hinge and a revolute one (limits +-3 in the file) given limits +-0.2 and a
    velocity motor (5 rad/s, 50 N m): both stop at 0.2, as in PyBullet (which adds a limit
    constraint to the continuous joint too)."""
    path = tmp_path / "hinges.urdf"
    path.write_text(HINGES)
    with ours() as a, reference() as b:
        states = {}
        for api, c in ((p, a), (pb, b)):
            api.setGravity(0, 0, 0, physicsClientId=c)
            uid = quiet(api.loadURDF, str(path), useFixedBase=True,
                        flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
            for j in (0, 1):
                api.changeDynamics(uid, j, jointLowerLimit=-0.2, jointUpperLimit=0.2,
                                   physicsClientId=c)
                api.setJointMotorControl2(uid, j, pb.VELOCITY_CONTROL, targetVelocity=5,
                                          force=50, physicsClientId=c)
            for _ in range(120):
                api.stepSimulation(physicsClientId=c)
            states[api] = [api.getJointState(uid, j, physicsClientId=c)[:2] for j in (0, 1)]
    assert np.allclose(states[pb], [(0.2, 0.0)] * 2, atol=1e-5)
    assert np.allclose(states[p], states[pb], atol=1e-5)


def test_joint_fields_on_the_base_or_a_fixed_joint():
    """jointDamping on the base or a fixed joint has nothing to damp: accepted, no effect
    (PyBullet's applies it to DOFs only); limits there are refused."""
    with ours() as a:
        uid = quiet(p.loadURDF, "r2d2.urdf", [0, 0, 0.5], physicsClientId=a)
        kinds = [p.getJointInfo(uid, j, physicsClientId=a)[2] for j in range(15)]
        fixed = kinds.index(pb.JOINT_FIXED)
        from sim_node.pybullet.client import get_client
        damping = get_client(a).body(uid).entity.structure.damping.copy()
        for link in (-1, fixed):
            p.changeDynamics(uid, link, jointDamping=2.0, physicsClientId=a)
            with pytest.raises(p.error, match="joint"):
                p.changeDynamics(uid, link, jointLowerLimit=0, jointUpperLimit=1,
                                 physicsClientId=a)
        assert np.array_equal(get_client(a).body(uid).entity.structure.damping, damping)


BAD = [dict(jointDamping=math.nan), dict(jointDamping=-1.0), dict(jointDamping=math.inf),
       dict(jointDamping=1e13),
       dict(jointDamping="x"), dict(jointLowerLimit=0.5, jointUpperLimit=-0.5),
       dict(jointLowerLimit=math.nan, jointUpperLimit=1.0),
       dict(jointLowerLimit=-1.0, jointUpperLimit=math.nan),
       dict(jointLowerLimit=math.inf, jointUpperLimit=math.inf),
       dict(jointLowerLimit=-math.inf, jointUpperLimit=-math.inf),
       dict(jointLowerLimit=-0.5), dict(jointUpperLimit=2.0), dict(jointUpperLimit="x",
                                                                   jointLowerLimit=0)]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.sampled_from(BAD), good=st.sampled_from([{}, dict(mass=2.0),
                                                        dict(jointDamping=1.0),
                                                        dict(jointLowerLimit=-1,
                                                             jointUpperLimit=1)]))
def test_hostile_joint_fields_are_refused_and_nothing_is_half_applied(bad, good):
    """NaN, negative, infinite or absurd (> 1e12) damping, lower > upper, NaN or infinite-on-the-wrong-side
    limits, one limit alone: p.error naming the field, and nothing of the call applied (a
    valid field beside the bad one included). PyBullet skips such values silently."""
    if set(bad) & set(good):
        good = {}
    with ours() as a:
        uid = _kuka(p, a, 2)
        model = p.getDynamicsInfo(uid, 2, physicsClientId=a)
        from sim_node.pybullet.client import get_client
        body = get_client(a).body(uid)
        st_ = body.entity.structure
        before = (st_.damping.copy(), st_.q_lower.copy(), st_.q_upper.copy())
        with pytest.raises(p.error, match="joint|Limit|Damping"):
            p.changeDynamics(uid, 2, **good, **bad, physicsClientId=a)
        assert p.getDynamicsInfo(uid, 2, physicsClientId=a) == model
        after = (st_.damping, st_.q_lower, st_.q_upper)
        assert all(np.array_equal(x, y) for x, y in zip(before, after))
        scene, r = get_client(a).sim.engine, body.robot_index()
        assert scene.get_joint_damping(r, 2) == 0.5
        assert scene.get_joint_limits(r, 2) == (before[1][2], before[2][2])
