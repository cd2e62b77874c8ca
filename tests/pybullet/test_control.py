"""Joint motors, external forces, dynamics info: closed forms and the real PyBullet."""
import math

import numpy as np
import pybullet as pb
import pytest
from core_reference import ours, quiet, reference, same_rotation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

# a 1 kg point-like mass 1 m from a hinge about y: I = m l^2 + 0.01 = 1.01 kg m^2
PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""
INERTIA = 1.01
# PyBullet (and sim_node.pybullet) by default make inertias from collision shapes (the arm has
# none: a 2 mm box): with this flag they use the file's
FROM_FILE = pb.URDF_USE_INERTIA_FROM_FILE


@pytest.fixture
def pendulum_file(tmp_path):
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM)
    return str(path)


def test_torque_control_acts_for_one_step_as_pybullet(pendulum_file):
    # no gravity, motor off, the link damping off: one step of tau gives dv = tau dt / I, the
    # next step none
    dt = 1 / 240
    with ours() as a, reference() as b:
        results = []
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                               physicsClientId=cid)
            module.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, force=0,
                                         physicsClientId=cid)
            module.setJointMotorControl2(uid, 0, pb.TORQUE_CONTROL, force=2.0,
                                         physicsClientId=cid)
            module.changeDynamics(uid, 0, linearDamping=0, angularDamping=0,
                                  physicsClientId=cid)
            module.stepSimulation(physicsClientId=cid)
            v1 = module.getJointState(uid, 0, physicsClientId=cid)[1]
            module.stepSimulation(physicsClientId=cid)
            v2 = module.getJointState(uid, 0, physicsClientId=cid)[1]
            results.append((v1, v2))
        (v1, v2), (w1, w2) = results
        assert v1 == pytest.approx(2.0 * dt / INERTIA, rel=1e-12)
        assert v2 == v1
        assert (v1, v2) == pytest.approx((w1, w2), rel=1e-9)


def test_pendulum_under_gravity_and_torque_control_follows_its_equation(pendulum_file):
    # I qdd = tau - m g l cos(q) (q about y from horizontal x: gravity -z gives +m g l cos q
    # about y for the arm at x); semi-implicit Euler of it, step by step (the link damping off)
    dt, g, tau = 1 / 240, 9.81, 3.0
    with ours() as a:
        p.setGravity(0, 0, -g, physicsClientId=a)
        uid = quiet(p.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                    physicsClientId=a)
        p.changeDynamics(uid, -1, linearDamping=0, angularDamping=0, physicsClientId=a)
        p.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, force=0, physicsClientId=a)
        q = v = 0.0
        for _ in range(120):
            p.setJointMotorControl2(uid, 0, pb.TORQUE_CONTROL, force=tau, physicsClientId=a)
            p.stepSimulation(physicsClientId=a)
            v += dt * (tau + 1.0 * g * 1.0 * math.cos(q)) / INERTIA
            q += dt * v
        state = p.getJointState(uid, 0, physicsClientId=a)
        assert state[0] == pytest.approx(q, abs=1e-9)
        assert state[1] == pytest.approx(v, abs=1e-9)


def test_default_motors_hold_a_robot_and_force_zero_makes_it_limp_as_pybullet():
    with ours() as a, reference() as b:
        finals = []
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -10, physicsClientId=cid)
            uid = quiet(module.loadURDF, "kuka_iiwa/model.urdf", physicsClientId=cid)
            for _ in range(240):
                module.stepSimulation(physicsClientId=cid)
            held = [module.getJointState(uid, j, physicsClientId=cid)[0] for j in range(7)]
            for j in range(7):
                module.setJointMotorControl2(uid, j, pb.VELOCITY_CONTROL, force=0,
                                             physicsClientId=cid)
            for _ in range(240):
                module.stepSimulation(physicsClientId=cid)
            limp = [module.getJointState(uid, j, physicsClientId=cid)[0] for j in range(7)]
            finals.append((held, limp))
        for held, limp in finals:
            assert np.abs(held).max() < 2e-3
            assert np.abs(limp).max() > 0.05


def test_default_motor_gives_way_beyond_one_newton_second_per_step(pendulum_file):
    # Bullet's default motor: at most 1 N s per step, i.e. 240 N m at 1/240 s: a 200 N m load
    # is held, 300 N m is not (as the real PyBullet)
    with ours() as a, reference() as b:
        for g, moves in ((200.0, False), (300.0, True)):
            for module, cid in ((p, a), (pb, b)):
                module.resetSimulation(physicsClientId=cid)
                module.setGravity(0, 0, -g, physicsClientId=cid)
                uid = quiet(module.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                               physicsClientId=cid)
                for _ in range(60):
                    module.stepSimulation(physicsClientId=cid)
                q = module.getJointState(uid, 0, physicsClientId=cid)[0]
                assert (abs(q) > 0.01) == moves, (module.__name__, g, q)


def test_position_control_first_step_and_convergence_follow_pybullets_motor(pendulum_file):
    # v after a step = positionGain (target - q) / dt (velocityGain 1): 0.1 * 0.5 * 240 = 12
    with ours() as a, reference() as b:
        speeds = []
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                               physicsClientId=cid)
            module.setJointMotorControl2(uid, 0, pb.POSITION_CONTROL, targetPosition=0.5,
                                         physicsClientId=cid)
            module.stepSimulation(physicsClientId=cid)
            speeds.append(module.getJointState(uid, 0, physicsClientId=cid)[1])
            for _ in range(239):
                module.stepSimulation(physicsClientId=cid)
            assert module.getJointState(uid, 0, physicsClientId=cid)[0] == \
                pytest.approx(0.5, abs=1e-4)
        assert speeds[1] == pytest.approx(12.0, rel=1e-6)
        assert speeds[0] == pytest.approx(12.0, rel=0.02)


def test_position_control_brings_a_robot_to_its_targets_under_gravity():
    targets = [0.3, -0.5, 0.4, -1.2, 0.2, 0.8, -0.3]
    with ours() as a:
        p.setGravity(0, 0, -9.81, physicsClientId=a)
        uid = quiet(p.loadURDF, "kuka_iiwa/model.urdf", physicsClientId=a)
        p.setJointMotorControlArray(uid, list(range(7)), pb.POSITION_CONTROL,
                                    targetPositions=targets, forces=[300] * 7,
                                    physicsClientId=a)
        for _ in range(480):
            p.stepSimulation(physicsClientId=a)
        q = [s[0] for s in p.getJointStates(uid, list(range(7)), physicsClientId=a)]
        assert np.allclose(q, targets, atol=1e-3)


def test_velocity_control_saturates_at_force_as_pybullet(pendulum_file):
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                               physicsClientId=cid)
            module.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, targetVelocity=1.0,
                                         force=5.0, physicsClientId=cid)
            module.stepSimulation(physicsClientId=cid)
            state = module.getJointState(uid, 0, physicsClientId=cid)
            # a saturated motor: dv = force dt / I, the applied torque is the force
            assert state[1] == pytest.approx(5.0 / 240 / INERTIA, rel=1e-3)
            assert state[3] == pytest.approx(5.0, rel=1e-9)
            for _ in range(100):
                module.stepSimulation(physicsClientId=cid)
            assert module.getJointState(uid, 0, physicsClientId=cid)[1] == \
                pytest.approx(1.0, abs=1e-3)


def test_external_force_acts_for_one_step_in_world_and_link_frames():
    # sphere2.urdf: a free 1-body robot; F dt / m after one step, nothing the next (the link
    # damping off)
    with ours() as a:
        uid = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 1], [0, 0, 0.7071068, 0.7071068],
                    physicsClientId=a)
        p.changeDynamics(uid, -1, linearDamping=0, angularDamping=0, physicsClientId=a)
        mass = p.getDynamicsInfo(uid, -1, physicsClientId=a)[0]
        com = p.getBasePositionAndOrientation(uid, physicsClientId=a)[0]
        p.applyExternalForce(uid, -1, [3.0, 0, 0], com, pb.WORLD_FRAME, physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        v1 = p.getBaseVelocity(uid, physicsClientId=a)[0]
        assert np.allclose(v1, [3.0 / 240 / mass, 0, 0], atol=1e-12)
        p.stepSimulation(physicsClientId=a)
        assert np.allclose(p.getBaseVelocity(uid, physicsClientId=a)[0], v1, atol=1e-12)
        # LINK_FRAME: the base turned 90 deg about z, link x is world y
        p.resetBaseVelocity(uid, [0, 0, 0], [0, 0, 0], physicsClientId=a)
        p.applyExternalForce(uid, -1, [3.0, 0, 0], [0, 0, 0], pb.LINK_FRAME, physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        lin, ang = p.getBaseVelocity(uid, physicsClientId=a)
        assert np.allclose(lin, [0, 3.0 / 240 / mass, 0], atol=1e-9)
        assert np.allclose(ang, 0, atol=1e-9)


def test_external_torque_spins_a_free_body_by_its_inertia():
    with ours() as a:
        uid = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 1], physicsClientId=a)
        inertia = p.getDynamicsInfo(uid, -1, physicsClientId=a)[2]
        p.applyExternalTorque(uid, -1, [0, 0, 0.5], pb.WORLD_FRAME, physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        assert p.getBaseVelocity(uid, physicsClientId=a)[1][2] == \
            pytest.approx(0.5 / 240 / inertia[2], rel=1e-9)


@pytest.mark.parametrize("robot", ["kuka_iiwa/model.urdf", "r2d2.urdf",
                                   "laikago/laikago.urdf"])
def test_dynamics_info_masses_and_inertias_equal_pybullets(robot):
    with ours() as a, reference() as b:
        # the file's inertia (the default, from the collision shapes: test_loading_inertia)
        flags = pb.URDF_USE_INERTIA_FROM_FILE
        ua = quiet(p.loadURDF, robot, flags=flags, physicsClientId=a)
        ub = quiet(pb.loadURDF, robot, flags=flags, physicsClientId=b)
        for link in range(-1, p.getNumJoints(ua, physicsClientId=a)):
            da = p.getDynamicsInfo(ua, link, physicsClientId=a)
            db = pb.getDynamicsInfo(ub, link, physicsClientId=b)
            assert len(da) == len(db) == 12
            # (also massless links, links without <inertial> and zero tensors: reported as
            # Bullet's importer makes them, where the engine simulates a repaired inertia)
            assert da[0] == db[0], link
            assert np.allclose(da[2], db[2], rtol=1e-6), (link, da[2], db[2])
            assert np.allclose(da[4], db[4], atol=1e-6) or np.allclose(da[4], -np.array(db[4]),
                                                                       atol=1e-6)
            assert np.allclose(da[3], db[3], atol=1e-9)


def test_change_dynamics_mass_changes_the_response_to_a_force():
    with ours() as a:
        uid = quiet(p.loadURDF, "sphere2.urdf", [0, 0, 1], physicsClientId=a)
        p.changeDynamics(uid, -1, mass=4.0, lateralFriction=0.9, restitution=0.3,
                         physicsClientId=a)
        info = p.getDynamicsInfo(uid, -1, physicsClientId=a)
        assert (info[0], info[1], info[5]) == (4.0, 0.9, 0.3)
        com = p.getBasePositionAndOrientation(uid, physicsClientId=a)[0]
        p.applyExternalForce(uid, -1, [0, 8.0, 0], com, pb.WORLD_FRAME, physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        assert p.getBaseVelocity(uid, physicsClientId=a)[0][1] == pytest.approx(8.0 / 240 / 4.0,
                                                                                  rel=1e-12)


_bad = st.one_of(st.just(math.nan), st.just(math.inf), st.just(-1.0), st.just("x"))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])   # (a constant file)
@given(case=st.sampled_from(["mode", "joint", "force", "target", "array", "gain", "dyn"]),
       bad=_bad)
def test_hostile_control_arguments_are_refused_and_nothing_changes(pendulum_file, case, bad):
    with ours() as a:
        uid = quiet(p.loadURDF, pendulum_file, useFixedBase=1, physicsClientId=a)
        from sim_node.pybullet.client import get_client
        from sim_node.pybullet.control import motors
        body = get_client(a).body(uid)
        before = motors(body).copy_state()
        with pytest.raises(p.error):
            if case == "mode":
                p.setJointMotorControl2(uid, 0, 17, physicsClientId=a)
            elif case == "joint":
                p.setJointMotorControl2(uid, 1, pb.POSITION_CONTROL, physicsClientId=a)
            elif case == "force":
                p.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, force=bad,
                                        physicsClientId=a)
            elif case == "target":
                p.setJointMotorControl2(uid, 0, pb.POSITION_CONTROL,
                                        targetPosition=bad if bad != -1.0 else 1e9,
                                        physicsClientId=a)
            elif case == "array":
                p.setJointMotorControlArray(uid, [0], pb.POSITION_CONTROL,
                                            targetPositions=[0.1, 0.2], physicsClientId=a)
            elif case == "gain":
                p.setJointMotorControl2(uid, 0, pb.POSITION_CONTROL, positionGain=bad,
                                        physicsClientId=a)
            else:
                p.changeDynamics(uid, 0, mass=bad, physicsClientId=a)
        after = motors(body).copy_state()
        for key in before:
            if isinstance(before[key], np.ndarray):
                assert np.array_equal(before[key], after[key], equal_nan=True), key
            else:
                assert before[key] == after[key], key
        assert p.getDynamicsInfo(uid, 0, physicsClientId=a)[0] == 1.0


def test_spherical_joints_have_default_motors_and_position_control_as_pybullet():
    # humanoid.urdf (y up, turned upright): the spherical joints hold by default, a shoulder
    # under POSITION_CONTROL reaches its target quaternion, force=0 frees a joint
    target = [0.0, 0.0, 0.3826834, 0.9238795]
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -10, physicsClientId=cid)
            uid = quiet(module.loadURDF, "humanoid/humanoid.urdf", [0, 0, 3],
                        [0.7071068, 0, 0, 0.7071068], useFixedBase=1, flags=FROM_FILE,
                        physicsClientId=cid)
            for _ in range(120):
                module.stepSimulation(physicsClientId=cid)
            for j in (1, 2, 3):
                quat = module.getJointStateMultiDof(uid, j, physicsClientId=cid)[0]
                assert same_rotation(quat, [0, 0, 0, 1], 2e-3), (module.__name__, j, quat)
            module.setJointMotorControlMultiDof(uid, 3, pb.POSITION_CONTROL,
                                                targetPosition=target, force=[200] * 3,
                                                physicsClientId=cid)
            for _ in range(240):
                module.stepSimulation(physicsClientId=cid)
            quat = module.getJointStateMultiDof(uid, 3, physicsClientId=cid)[0]
            assert same_rotation(quat, target, 0.01), (module.__name__, quat)
            module.setJointMotorControlMultiDof(uid, 3, pb.POSITION_CONTROL,
                                                targetPosition=[0, 0, 0, 1], positionGain=0,
                                                velocityGain=1, force=[0, 0, 0],
                                                physicsClientId=cid)
            for _ in range(120):
                module.stepSimulation(physicsClientId=cid)
            quat = module.getJointStateMultiDof(uid, 3, physicsClientId=cid)[0]
            assert not same_rotation(quat, target, 0.05), (module.__name__, quat)


def test_joint_reaction_forces_equal_pybullets_on_a_pendulum(pendulum_file):
    # held horizontal by the default motor, turned 90 deg, hanging, falling from horizontal:
    # (Fx, Fy, Fz, Mx, My, Mz) in the child's axes as PyBullet reports them
    with ours() as a, reference() as b:
        readings = []
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -10, physicsClientId=cid)
            uid = quiet(module.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                        physicsClientId=cid)
            assert module.getJointState(uid, 0, physicsClientId=cid)[2] == (0.0,) * 6
            module.enableJointForceTorqueSensor(uid, 0, 1, physicsClientId=cid)
            run = []
            for _ in range(10):
                module.stepSimulation(physicsClientId=cid)
            run.append(module.getJointState(uid, 0, physicsClientId=cid)[2])
            module.resetBasePositionAndOrientation(uid, [0, 0, 0], [0, 0, 0.7071068, 0.7071068],
                                                   physicsClientId=cid)
            for _ in range(10):
                module.stepSimulation(physicsClientId=cid)
            run.append(module.getJointState(uid, 0, physicsClientId=cid)[2])
            module.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, force=0, physicsClientId=cid)
            module.resetBasePositionAndOrientation(uid, [0, 0, 0], [0, 0, 0, 1],
                                                   physicsClientId=cid)
            for angle in (math.pi / 2, 0.0):
                module.resetJointState(uid, 0, angle, physicsClientId=cid)
                module.stepSimulation(physicsClientId=cid)
                run.append(module.getJointState(uid, 0, physicsClientId=cid)[2])
            readings.append(run)
        for mine, theirs in zip(*readings):
            # (ours: the centripetal force of the step's end speed, 2e-3 N, Bullet's: none)
            assert np.allclose(mine, theirs, atol=3e-3), (mine, theirs)
        assert readings[0][0][2] == pytest.approx(10.0, rel=1e-3)      # the weight, m g


def test_r2d2_driving_its_wheels_follows_pybullet_with_the_files_inertia():
    # wheels under VELOCITY_CONTROL (saturated at first, then at speed), contacts with the
    # plane, the chassis pitching from the wheels' reaction: the same trajectory as PyBullet's
    # within 3 cm and 0.03 (quaternion) after 0.5 s, with the inertia of the file in both
    with ours() as a, reference() as b:
        results = []
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -10, physicsClientId=cid)
            quiet(module.loadURDF, "plane.urdf", physicsClientId=cid)
            uid = quiet(module.loadURDF, "r2d2.urdf", [0, 0, 0.5], flags=FROM_FILE,
                        physicsClientId=cid)
            for _ in range(240):
                module.stepSimulation(physicsClientId=cid)
            for j in (2, 3, 6, 7):
                module.setJointMotorControl2(uid, j, pb.VELOCITY_CONTROL, targetVelocity=-10,
                                             force=50, physicsClientId=cid)
            for _ in range(120):
                module.stepSimulation(physicsClientId=cid)
            results.append((module.getBasePositionAndOrientation(uid, physicsClientId=cid),
                            [module.getJointState(uid, j, physicsClientId=cid)[1]
                             for j in (2, 3, 6, 7)]))
        (pose_a, wheels_a), (pose_b, wheels_b) = results
        assert np.allclose(pose_a[0], pose_b[0], atol=0.03), (pose_a, pose_b)
        assert same_rotation(pose_a[1], pose_b[1], 0.03), (pose_a, pose_b)
        assert pose_a[1][0] > 0.15 and pose_b[1][0] > 0.15       # both pitch by > 17 deg
        assert np.allclose(wheels_a, wheels_b, atol=0.05)


def test_forces_on_a_static_base_have_no_effect_as_in_pybullet():
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, "kuka_iiwa/model.urdf", physicsClientId=cid)
            before = module.getBasePositionAndOrientation(uid, physicsClientId=cid)
            module.applyExternalForce(uid, -1, [100, 0, 0], [0, 0, 0], pb.WORLD_FRAME,
                                      physicsClientId=cid)
            module.applyExternalTorque(uid, -1, [0, 0, 100], pb.WORLD_FRAME,
                                       physicsClientId=cid)
            module.stepSimulation(physicsClientId=cid)
            assert module.getBasePositionAndOrientation(uid, physicsClientId=cid) == before


def test_motor_commands_on_fixed_joints_do_nothing_as_in_pybullet():
    """mini_cheetah_test.py / jacobian.py command every joint index, fixed ones included:
    PyBullet 3.2.7 accepts it and the fixed joints (and the rest) are as before."""
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, "r2d2.urdf", [0, 0, 0.5], useFixedBase=1,
                        physicsClientId=cid)
            fixed = [j for j in range(module.getNumJoints(uid, physicsClientId=cid))
                     if module.getJointInfo(uid, j, physicsClientId=cid)[2] == pb.JOINT_FIXED]
            assert len(fixed) == 7
            for mode in (pb.POSITION_CONTROL, pb.VELOCITY_CONTROL, pb.TORQUE_CONTROL):
                for j in fixed:
                    module.setJointMotorControl2(uid, j, mode, targetPosition=1.0,
                                                 targetVelocity=1.0, force=5.0,
                                                 physicsClientId=cid)
                    if mode != pb.VELOCITY_CONTROL:     # PyBullet's MultiDof refuses it
                        module.setJointMotorControlMultiDof(uid, j, mode, targetPosition=[1.0],
                                                            force=[5.0], physicsClientId=cid)
                module.setJointMotorControlArray(uid, fixed, mode, forces=[5.0] * len(fixed),
                                                 physicsClientId=cid)
                if mode != pb.VELOCITY_CONTROL:
                    module.setJointMotorControlMultiDofArray(uid, fixed, mode,
                                                             forces=[[5.0]] * len(fixed),
                                                             physicsClientId=cid)
            for _ in range(10):
                module.stepSimulation(physicsClientId=cid)
            for j in fixed:
                assert module.getJointState(uid, j, physicsClientId=cid) == (
                    0.0, 0.0, (0.0,) * 6, 0.0)
    with ours() as a:
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        with pytest.raises(p.error, match="force"):      # the arguments are still checked
            p.setJointMotorControl2(uid, 2, pb.VELOCITY_CONTROL, force=-1.0,
                                    physicsClientId=a)


def test_a_saturated_motor_gives_way_without_saturating_its_neighbours_as_pybullet():
    """biped2d_pybullet.py: POSITION_CONTROL with force=1 on every joint; the height joint's
    motor cannot hold the torso (saturated: applied torque 1.0) and the biped falls freely, so
    the hip / knee / ankle motors need almost nothing: they stay free and the legs straight,
    as in PyBullet (before the fix they were charged with stopping the fall, saturated at +-1
    and swung the legs)."""
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            module.setGravity(0, 0, -9.8, physicsClientId=cid)
            module.setTimeStep(1e-3, physicsClientId=cid)
            uid = quiet(module.loadURDF, "biped/biped2d_pybullet.urdf", [0, 0, 1.13],
                        physicsClientId=cid)
            n = module.getNumJoints(uid, physicsClientId=cid)
            for j in range(n):
                module.setJointMotorControl2(uid, j, pb.POSITION_CONTROL, force=1,
                                             physicsClientId=cid)
            for _ in range(200):
                module.stepSimulation(physicsClientId=cid)
            states = module.getJointStates(uid, range(n), physicsClientId=cid)
            assert states[1][3] == 1.0                            # the height joint: saturated
            assert abs(states[1][0] - (-0.5 * 9.8 * 0.2 ** 2)) < 0.01     # falls freely
            for q, _, _, applied in states[2:]:                   # the rotary joints
                assert abs(q) < 1e-3 and abs(applied) < 0.01, (module.__name__, states)


def test_sleep_threshold_and_multi_dof_damping_are_checked_and_ignored_with_a_warning():
    """PyBullet 3.2.7 takes changeDynamics(sleepThreshold=) and
    setJointMotorControlMultiDof(damping=); sim_node has no sleeping bodies and no separate
    spherical-motor damping: accepted (one warning each), the motion unchanged."""
    with ours() as a, reference() as b:
        pb.changeDynamics(pb.loadURDF("r2d2.urdf", physicsClientId=b), -1, sleepThreshold=0.1,
                          physicsClientId=b)
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        with pytest.warns(UserWarning, match="sleepThreshold"):
            p.changeDynamics(uid, -1, sleepThreshold=0.1, physicsClientId=a)
        with pytest.warns(UserWarning, match="damping"):
            p.setJointMotorControlMultiDof(uid, 2, pb.POSITION_CONTROL, targetPosition=[0.5],
                                           damping=[0.3], physicsClientId=a)
        for bad in (math.nan, "x"):
            with pytest.raises(p.error):
                p.changeDynamics(uid, -1, sleepThreshold=bad, physicsClientId=a)
            with pytest.raises(p.error):
                p.setJointMotorControlMultiDof(uid, 2, pb.POSITION_CONTROL, damping=[bad],
                                               physicsClientId=a)


def test_each_mode_writes_its_settings_and_leaves_the_others(pendulum_file):
    """The motor table (one row per quantity, sim_node.engine.motors): a command writes its
    mode's rows of its joint only; PD_CONTROL and a later motor command replace each other,
    TORQUE_CONTROL adds up for the next step."""
    from sim_node.engine import motors as K
    from sim_node.pybullet.client import get_client
    from sim_node.pybullet.control import motors

    with ours() as a:
        uid = quiet(p.loadURDF, pendulum_file, useFixedBase=1, physicsClientId=a)
        table = motors(get_client(a).body(uid)).table
        default = table.copy()
        p.setJointMotorControl2(uid, 0, pb.POSITION_CONTROL, targetPosition=0.5,
                                targetVelocity=0.25, force=7.0, positionGain=0.3,
                                velocityGain=0.9, maxVelocity=2.0, physicsClientId=a)
        expected = default.copy()
        expected[[K.MODE, K.Q_TARGET, K.V_TARGET, K.KP, K.KD, K.FORCE, K.MAX_VELOCITY], 0] = \
            (pb.POSITION_CONTROL, 0.5, 0.25, 0.3, 0.9, 7.0, 2.0)
        assert np.array_equal(table, expected, equal_nan=True)
        p.setJointMotorControl2(uid, 0, pb.PD_CONTROL, targetPosition=0.1, targetVelocity=0.2,
                                force=3.0, positionGain=4.0, velocityGain=5.0,
                                physicsClientId=a)
        expected[[K.PD_ON, K.PD_Q, K.PD_V, K.PD_KP, K.PD_KD, K.PD_FORCE], 0] = \
            (1.0, 0.1, 0.2, 4.0, 5.0, 3.0)
        assert np.array_equal(table, expected, equal_nan=True)
        for torque in (1.5, 2.0):
            p.setJointMotorControl2(uid, 0, pb.TORQUE_CONTROL, force=torque, physicsClientId=a)
        expected[K.TORQUE, 0] = 3.5
        assert np.array_equal(table, expected, equal_nan=True)
        p.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, targetVelocity=-1.0,
                                physicsClientId=a)
        expected[[K.PD_ON, K.MODE, K.Q_TARGET, K.V_TARGET, K.KP, K.KD, K.FORCE], 0] = \
            (0.0, pb.VELOCITY_CONTROL, 0.0, -1.0, 0.0, 1.0, 100000.0)
        expected[K.MAX_VELOCITY, 0] = np.inf
        assert np.array_equal(table, expected, equal_nan=True)
        p.stepSimulation(physicsClientId=a)
        assert table[K.TORQUE, 0] == 0.0        # used by the step


def test_a_motor_state_of_the_format_before_the_table_restores():
    """saveBullet files written before the motor table held one array per quantity and
    PD_CONTROL in a dict: set_state reads them into the table."""
    from sim_node.engine import motors as K
    from sim_node.pybullet.control import Motors

    old = {"mode": np.array([2, 0]), "q_target": np.array([0.5, 0.0]),
           "v_target": np.array([0.0, -1.0]), "kp": np.array([0.1, 0.0]),
           "kd": np.array([1.0, 1.0]), "force": np.array([7.0, np.nan]),
           "max_velocity": np.array([np.inf, 3.0]), "pd": {1: (0.2, 0.3, 4.0, 5.0, 6.0)},
           "spherical": {}, "spherical_torque": {}, "spherical_last": None,
           "spherical_applied": {}, "torque": np.array([0.0, 1.5]),
           "applied": np.array([2.0, -2.0]), "last_gain": np.array([9.0, 0.0]),
           "last_target": np.array([0.4, -2.0]), "last_known": np.array([0.0, 0.5]),
           "external": None, "step": None}
    m = Motors(2)
    m.set_state(old)
    for name in ("mode", "q_target", "v_target", "kp", "kd", "force", "max_velocity",
                 "torque", "applied"):
        assert np.array_equal(getattr(m, name), old[name], equal_nan=True), name
    assert m.table[K.LAST_GAIN].tolist() == [9.0, 0.0]
    assert m.table[K.PD_ON:K.PD_FORCE + 1, 1].tolist() == [1.0, 0.2, 0.3, 4.0, 5.0, 6.0]
    assert m.table[K.PD_ON, 0] == 0.0 and m.step is None and not m.stepping


def _coast(api, client, uid, steps, joints=()):
    """(steps, n) the base velocity (6) and joint velocities after each step."""
    out = []
    for _ in range(steps):
        api.stepSimulation(physicsClientId=client)
        lin, ang = api.getBaseVelocity(uid, physicsClientId=client)
        js = [s[1] for s in api.getJointStates(uid, joints, physicsClientId=client)] \
            if joints else []
        out.append(list(lin) + list(ang) + js)
    return np.array(out)


@pytest.mark.parametrize("motion", ["linear", "angular"])
def test_a_free_cube_coasting_loses_speed_by_bullets_link_damping(motion):
    """A free cube in zero gravity, moving or spinning: PyBullet's default link damping (0.04:
    f = -m (k + k |v|) v, n = -I (k + k |w|) w) slows it as PyBullet's over 1 s (to 1e-6 of
    the speed; it loses 8 %); changeDynamics(linearDamping=, angularDamping=) on any link
    sets the body's as PyBullet's, 0 leaves the speed as it is."""
    lin, ang = ([3.0, -1.0, 2.0], [0.0, 0.0, 0.0]) if motion == "linear" else \
        ([0.0, 0.0, 0.0], [4.0, 2.0, -7.0])
    start = np.array(lin + ang)
    for damping in (None, 0.3, 0.0):
        runs = []
        with ours() as a, reference() as b:
            for api, client in ((p, a), (pb, b)):
                api.setGravity(0, 0, 0, physicsClientId=client)
                uid = quiet(api.loadURDF, "cube_small.urdf", [0, 0, 1], physicsClientId=client)
                api.resetBaseVelocity(uid, lin, ang, physicsClientId=client)
                if damping is not None:
                    api.changeDynamics(uid, -1, linearDamping=damping, angularDamping=damping,
                                       physicsClientId=client)
                runs.append(_coast(api, client, uid, 240))
        mine, theirs = runs
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-6 * np.abs(start).max())
        if damping == 0.0:
            np.testing.assert_allclose(mine[-1], start, rtol=1e-12, atol=1e-12)
        else:
            assert np.linalg.norm(mine[-1]) < 0.95 * np.linalg.norm(start)


@pytest.mark.parametrize("gravity", [0.0, -9.8])
def test_a_pendulum_swinging_decays_as_pybullets(pendulum_file, gravity):
    """The pendulum (1 kg at 1 m on a hinge), its motor off, started at 3 rad/s: its rate
    follows PyBullet's over 1 s with the default link damping (to 1e-6 of the rate); with the
    damping off (ours) it misses PyBullet's by far more: the damping makes the difference."""
    runs = {}
    with ours() as a, reference() as b, ours() as c:
        for key, api, client in (("ours", p, a), ("ref", pb, b), ("undamped", p, c)):
            api.setGravity(0, 0, gravity, physicsClientId=client)
            uid = quiet(api.loadURDF, pendulum_file, useFixedBase=1, flags=FROM_FILE,
                        physicsClientId=client)
            api.setJointMotorControl2(uid, 0, pb.VELOCITY_CONTROL, force=0,
                                      physicsClientId=client)
            api.resetJointState(uid, 0, 0.0, 3.0, physicsClientId=client)
            if key == "undamped":
                api.changeDynamics(uid, 0, linearDamping=0, angularDamping=0,
                                   physicsClientId=client)
            runs[key] = _coast(api, client, uid, 240, [0])[:, 6]
    error = np.abs(runs["ours"] - runs["ref"]).max()
    gap = np.abs(runs["undamped"] - runs["ref"]).max()
    assert error < 3e-6, (error, gap)
    assert gap > 100 * error, (error, gap)


def test_a_free_robot_tumbling_in_zero_gravity_decays_as_pybullets():
    """r2d2 (a free base with 14 links) thrown spinning in zero gravity, its motors off: every
    link's damping on its own mass and inertia. The base's and joints' velocities follow
    PyBullet's over 1 s within 3e-4 (1.5e-4 of the speed; undamped on both sides the engines
    differ by 4e-3 there: the articulated free body's own integration), against 0.1 with our
    damping off."""
    runs = {}
    with ours() as a, reference() as b, ours() as c:
        for key, api, client in (("ours", p, a), ("ref", pb, b), ("undamped", p, c)):
            api.setGravity(0, 0, 0, physicsClientId=client)
            uid = quiet(api.loadURDF, "r2d2.urdf", [0, 0, 3], flags=FROM_FILE,
                        physicsClientId=client)
            joints = list(range(api.getNumJoints(uid, physicsClientId=client)))
            for j in joints:
                api.setJointMotorControl2(uid, j, pb.VELOCITY_CONTROL, force=0,
                                          physicsClientId=client)
            if key == "undamped":
                api.changeDynamics(uid, 3, angularDamping=0, physicsClientId=client)
                api.changeDynamics(uid, 5, linearDamping=0, physicsClientId=client)
            api.resetBaseVelocity(uid, [1.0, -2.0, 0.5], [0.3, -0.2, 1.5],
                                  physicsClientId=client)
            runs[key] = _coast(api, client, uid, 240, joints)
    error = np.abs(runs["ours"] - runs["ref"]).max()
    gap = np.abs(runs["undamped"] - runs["ref"]).max()
    assert error < 3e-4, (error, gap)
    assert gap > 0.05, (error, gap)


def test_hostile_damping_is_refused_with_nothing_applied():
    """linearDamping / angularDamping: finite and >= 0, else p.error before anything of the
    call applies (the mass given with it stays, the body keeps its damping)."""
    with ours() as a:
        p.setGravity(0, 0, 0, physicsClientId=a)
        uid = quiet(p.loadURDF, "cube_small.urdf", [0, 0, 1], physicsClientId=a)
        mass = p.getDynamicsInfo(uid, -1, physicsClientId=a)[0]
        for bad in (-0.1, math.nan, math.inf, "x"):
            for field in ("linearDamping", "angularDamping"):
                with pytest.raises(p.error, match=field):
                    p.changeDynamics(uid, -1, mass=2 * mass, **{field: bad},
                                     physicsClientId=a)
        assert p.getDynamicsInfo(uid, -1, physicsClientId=a)[0] == mass
        p.resetBaseVelocity(uid, [1.0, 0, 0], [0, 0, 0], physicsClientId=a)
        p.stepSimulation(physicsClientId=a)
        # still the default damping: 1 - dt (0.04 + 0.04 * 1)
        assert p.getBaseVelocity(uid, physicsClientId=a)[0][0] == \
            pytest.approx(1.0 - 0.08 / 240, rel=1e-12)


def test_bodies_in_maximal_coordinates_are_undamped_as_pybullets_rigid_bodies():
    """useMaximalCoordinates makes PyBullet's body a btRigidBody without damping: its speed
    stays (sim_node simulates it reduced, without the link damping); changeDynamics' damping
    on it is accepted and ignored with a warning (btRigidBody's formula differs)."""
    with ours() as a, reference() as b:
        runs = []
        for api, client in ((p, a), (pb, b)):
            api.setGravity(0, 0, 0, physicsClientId=client)
            shape = api.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=client)
            uids = [api.createMultiBody(1.0, shape, -1, [0, 0, 1], useMaximalCoordinates=1,
                                        physicsClientId=client),
                    quiet(api.loadURDF, "cube_small.urdf", [1, 0, 1], useMaximalCoordinates=1,
                          physicsClientId=client)]
            for uid in uids:
                api.resetBaseVelocity(uid, [1.0, 0, 0], [0, 0, 5.0], physicsClientId=client)
            for _ in range(10):
                api.stepSimulation(physicsClientId=client)
            runs.append([api.getBaseVelocity(uid, physicsClientId=client) for uid in uids])
        np.testing.assert_allclose(np.array(runs[0]).reshape(-1), np.array(runs[1]).reshape(-1),
                                   atol=1e-9)
        with pytest.warns(UserWarning, match="linearDamping"):
            p.changeDynamics(0, -1, linearDamping=0.5, physicsClientId=a)


def test_damping_switched_off_after_steps_stops_at_once():
    """A free cube damped for some steps, then changeDynamics(0, 0): it coasts on at the
    speed it had (no damping force left over from the earlier steps)."""
    with ours() as a:
        p.setGravity(0, 0, 0, physicsClientId=a)
        uid = quiet(p.loadURDF, "cube_small.urdf", [0, 0, 1], physicsClientId=a)
        p.resetBaseVelocity(uid, [2.0, 0, 0], [0, 0, 3.0], physicsClientId=a)
        for _ in range(5):
            p.stepSimulation(physicsClientId=a)
        p.changeDynamics(uid, -1, linearDamping=0, angularDamping=0, physicsClientId=a)
        before = np.concatenate(p.getBaseVelocity(uid, physicsClientId=a))
        assert before[0] < 2.0
        for _ in range(5):
            p.stepSimulation(physicsClientId=a)
        np.testing.assert_allclose(np.concatenate(p.getBaseVelocity(uid, physicsClientId=a)),
                                   before, rtol=1e-12, atol=1e-12)
