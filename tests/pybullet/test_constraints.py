"""sim_node.pybullet's constraint functions against the real PyBullet 3.2.7: ids, info tuples,
state shapes and signs, a constrained pendulum's trajectory, bullet3's minitaur legs closed by
POINT2POINT constraints, body removal, and hostile input."""
import math

import numpy as np
import pybullet as pb
import pybullet_data
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

DATA = pybullet_data.getDataPath()


@pytest.fixture
def both():
    """(ours, theirs): a DIRECT client of each, gravity -10, search path pybullet_data."""
    ours = p.connect(pb.DIRECT)
    theirs = pb.connect(pb.DIRECT)
    for api, client in ((p, ours), (pb, theirs)):
        api.setAdditionalSearchPath(DATA, physicsClientId=client)
        api.setGravity(0, 0, -10, physicsClientId=client)
    yield ours, theirs
    p.disconnect(ours)
    pb.disconnect(theirs)


def run(api, client, script):
    return script(api, client)


def info_script(api, c):
    box = api.loadURDF("cube_small.urdf", [0, 0, 1], physicsClientId=c)
    other = api.loadURDF("cube_small.urdf", [1, 0, 1], physicsClientId=c)
    out = [api.getNumConstraints(physicsClientId=c)]
    a = api.createConstraint(box, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 1],
                             physicsClientId=c)
    b = api.createConstraint(parentBodyUniqueId=other, parentLinkIndex=-1, childBodyUniqueId=box,
                             childLinkIndex=-1, jointType=pb.JOINT_POINT2POINT,
                             jointAxis=[0, 0, 0], parentFramePosition=[0.1, 0, 0],
                             childFramePosition=[-0.1, 0, 0],
                             parentFrameOrientation=[0, 0, 0, 1],
                             childFrameOrientation=[0, 0, 0.7071067811865476, 0.7071067811865476],
                             physicsClientId=c)
    out += [a, b, api.getNumConstraints(physicsClientId=c),
            api.getConstraintUniqueId(0, physicsClientId=c),
            api.getConstraintUniqueId(1, physicsClientId=c),
            api.getConstraintUniqueId(7, physicsClientId=c),
            api.getConstraintInfo(a, physicsClientId=c), api.getConstraintInfo(b, physicsClientId=c)]
    api.changeConstraint(a, [0.5, 0, 1], maxForce=30, physicsClientId=c)
    api.changeConstraint(b, jointChildFrameOrientation=[0, 0, 0, 1], erp=0.4, gearRatio=2,
                         relativePositionTarget=0.25, physicsClientId=c)
    out += [api.getConstraintInfo(a, physicsClientId=c), api.getConstraintInfo(b, physicsClientId=c)]
    api.removeConstraint(a, physicsClientId=c)
    out += [api.getNumConstraints(physicsClientId=c), api.getConstraintUniqueId(0, physicsClientId=c)]
    d = api.createConstraint(box, -1, -1, -1, pb.JOINT_POINT2POINT, [0, 0, 0], [0, 0, 0],
                             [0, 0, 1], physicsClientId=c)
    out += [d]
    api.removeBody(other, physicsClientId=c)     # its constraint goes with it
    out += [api.getNumConstraints(physicsClientId=c), api.getConstraintUniqueId(0, physicsClientId=c)]
    api.stepSimulation(physicsClientId=c)
    out += [len(api.getConstraintState(d, physicsClientId=c))]
    return out


def test_ids_counts_and_info_tuples_are_pybullets(both):
    ours, theirs = both
    mine, real = info_script(p, ours), info_script(pb, theirs)
    assert mine == real


BOX_URDF = """<?xml version="1.0"?>
<robot name="box">
  <link name="base">
    <inertial><mass value="0.5"/>
      <inertia ixx="0.0008333" iyy="0.0008333" izz="0.0008333" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
</robot>
"""


@pytest.fixture
def box_urdf(tmp_path):
    """A 0.5 kg, 10 cm box whose file inertia is the box's (so both engines agree on it)."""
    path = tmp_path / "box.urdf"
    path.write_text(BOX_URDF)
    return str(path)


def load_box(api, c, path, position):
    return api.loadURDF(path, position, flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)


@pytest.mark.parametrize("joint_type", [pb.JOINT_FIXED, pb.JOINT_POINT2POINT])
def test_constraint_state_holds_the_weight_as_pybullets(both, box_urdf, joint_type):
    # a 0.5 kg box hanging at rest 0.2 m below a pivot: the parent (the box) feels +m g along z
    ours, theirs = both
    results = []
    for api, c in ((p, ours), (pb, theirs)):
        box = load_box(api, c, box_urdf, [0, 0, 0.8])
        cid = api.createConstraint(box, -1, -1, -1, joint_type, [0, 0, 0], [0, 0, 0.2],
                                   [0, 0, 1.0], physicsClientId=c)
        for _ in range(240):
            api.stepSimulation(physicsClientId=c)
        results.append(np.array(api.getConstraintState(cid, physicsClientId=c)))
    mine, real = results
    assert mine.shape == real.shape == ((6,) if joint_type == pb.JOINT_FIXED else (3,))
    # (PyBullet reports a point-to-point's force with the opposite sign of a fixed one's)
    assert mine[2] == pytest.approx(5.0 if joint_type == pb.JOINT_FIXED else -5.0, rel=0.01)
    np.testing.assert_allclose(mine, real, atol=0.05)


def test_prismatic_state_and_slide_as_pybullets(both, box_urdf):
    # a slide along world x under gravity along -z: the box stays at its height, the rows
    # across the axis carry the weight (PyBullet's first row: -m g)
    ours, theirs = both
    results = []
    for api, c in ((p, ours), (pb, theirs)):
        box = load_box(api, c, box_urdf, [0, 0, 0.8])
        cid = api.createConstraint(box, -1, -1, -1, pb.JOINT_PRISMATIC, [1, 0, 0], [0, 0, 0.2],
                                   [0, 0, 1.0], physicsClientId=c)
        for _ in range(120):
            api.stepSimulation(physicsClientId=c)
        results.append((np.array(api.getConstraintState(cid, physicsClientId=c)),
                        api.getBasePositionAndOrientation(box, physicsClientId=c)[0]))
    (mine, at), (real, real_at) = results
    assert mine.shape == real.shape == (5,)
    np.testing.assert_allclose(mine[:2], real[:2], atol=0.05)
    np.testing.assert_allclose(at, real_at, atol=1e-3)


def test_a_box_swinging_on_a_point2point_pivot_follows_pybullets_trajectory(both, box_urdf):
    # the box on a pivot 0.3 m from its centre, released horizontal: no contact anywhere, so
    # both engines integrate the same rigid-body pendulum; the centres agree within 1 cm over
    # a quarter swing and more (1 s; integrators and Baumgarte terms differ)
    ours, theirs = both
    paths = []
    for api, c in ((p, ours), (pb, theirs)):
        box = load_box(api, c, box_urdf, [0.3, 0, 1.0])     # (both: the default damping)
        api.createConstraint(box, -1, -1, -1, pb.JOINT_POINT2POINT, [0, 0, 0], [-0.3, 0, 0],
                             [0, 0, 1.0], physicsClientId=c)
        path = []
        for _ in range(240):
            api.stepSimulation(physicsClientId=c)
            path.append(api.getBasePositionAndOrientation(box, physicsClientId=c)[0])
        paths.append(np.array(path))
    mine, real = paths
    assert mine[:, 2].min() < 0.75          # it swung through the bottom
    assert np.abs(mine - real).max() < 0.01
    # and the pivot stays put: |centre - pivot| = 0.3 m
    assert np.abs(np.linalg.norm(mine - [0, 0, 1.0], axis=1) - 0.3).max() < 1e-3


def minitaur(api, c):
    """bullet3's examples/pybullet/examples/minitaur.py reset(): the legs closed by
    POINT2POINT constraints, motors under POSITION_CONTROL (kp 1, kd 0.1, 3.5 N m)."""
    # (minitaur.py passes the position as three numbers, PyBullet's legacy form). The file's
    # inertias (1 kg m^2 on every link) as the loop tests were written for: with Bullet's default
    # (its collision boxes', 1e-4 to 1e-6 kg m^2) the landing opens the loops by up to 26 mm
    # here for a few steps and 5 mm in PyBullet, then < 0.2 mm here and 3 mm in PyBullet
    robot = api.loadURDF(f"{DATA}/quadruped/minitaur.urdf", [0, 0, .2],
                         flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
    ids = {api.getJointInfo(robot, i, physicsClientId=c)[1].decode(): i
           for i in range(api.getNumJoints(robot, physicsClientId=c))}
    motor_dir = [-1, -1, -1, -1, 1, 1, 1, 1]
    half_pi, knee = 1.57079632679, -2.1834
    constraints = []
    for k, leg in enumerate(("front_left", "back_left", "front_right", "back_right")):
        for side, d in (("L", motor_dir[2 * k]), ("R", motor_dir[2 * k + 1])):
            api.resetJointState(robot, ids[f"motor_{leg}{side}_joint"], d * half_pi,
                                physicsClientId=c)
            api.resetJointState(robot, ids[f"knee_{leg}{side}_link"], d * knee, physicsClientId=c)
        constraints.append(api.createConstraint(
            robot, ids[f"knee_{leg}R_link"], robot, ids[f"knee_{leg}L_link"],
            pb.JOINT_POINT2POINT, [0, 0, 0], [0, 0.005, 0.2], [0, 0.01, 0.2], physicsClientId=c))
        for side, d in (("L", motor_dir[2 * k]), ("R", motor_dir[2 * k + 1])):
            api.setJointMotorControl2(bodyIndex=robot, jointIndex=ids[f"motor_{leg}{side}_joint"],
                                      controlMode=pb.POSITION_CONTROL, targetPosition=d * half_pi,
                                      positionGain=1, velocityGain=0.1, force=3.5,
                                      physicsClientId=c)
            api.setJointMotorControl2(bodyIndex=robot, jointIndex=ids[f"knee_{leg}{side}_link"],
                                      controlMode=pb.VELOCITY_CONTROL, targetVelocity=0, force=0,
                                      physicsClientId=c)
    return robot, ids, constraints


def loop_errors(api, c, robot, ids):
    out = []
    for leg in ("front_left", "back_left", "front_right", "back_right"):
        points = []
        for side, local in (("R", [0, 0.005, 0.2]), ("L", [0, 0.01, 0.2])):
            state = api.getLinkState(robot, ids[f"knee_{leg}{side}_link"], physicsClientId=c)
            points.append(pb.multiplyTransforms(state[0], state[1], local, [0, 0, 0, 1])[0])
        out.append(np.linalg.norm(np.subtract(*points)))
    return out


def test_minitaur_with_its_legs_closed_by_constraints_stands_and_keeps_its_loops_within_2_mm(both):
    ours, theirs = both
    heights = []
    for api, c in ((p, ours), (pb, theirs)):
        api.loadURDF("plane.urdf", physicsClientId=c)
        robot, ids, _ = minitaur(api, c)
        worst = 0.0
        for _ in range(480):
            api.stepSimulation(physicsClientId=c)
            worst = max(worst, max(loop_errors(api, c, robot, ids)))
        position, orientation = api.getBasePositionAndOrientation(robot, physicsClientId=c)
        up = pb.getMatrixFromQuaternion(orientation)[8]
        if api is p:
            assert worst < 2e-3, worst
        assert up > 0.9
        heights.append(position[2])
    # standing about as high as under PyBullet
    assert heights[0] > 0.1
    assert heights[0] == pytest.approx(heights[1], abs=0.05)


def test_unknown_ids_raise_naming_the_function(both):
    ours, _ = both
    with pytest.raises(p.error, match="getConstraintInfo: no constraint with unique id 4"):
        p.getConstraintInfo(4, physicsClientId=ours)
    with pytest.raises(p.error, match="changeConstraint"):
        p.changeConstraint(1, maxForce=3, physicsClientId=ours)
    with pytest.raises(p.error, match="removeConstraint"):
        p.removeConstraint(1, physicsClientId=ours)
    with pytest.raises(p.error, match="createConstraint: parentBodyUniqueId"):
        p.createConstraint(3, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 0],
                           physicsClientId=ours)
    assert p.getNumConstraints(physicsClientId=ours) == 0


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(link=st.integers(-3, 3), child=st.integers(-3, 3), joint_type=st.integers(-1, 8),
       position=st.lists(numbers, min_size=0, max_size=4),
       orientation=st.lists(numbers, min_size=0, max_size=5))
def test_hostile_create_constraint_raises_or_adds_one_valid_constraint(both, link, child,
                                                                         joint_type, position,
                                                                         orientation):
    ours, _ = both
    p.resetSimulation(physicsClientId=ours)
    box = p.loadURDF("cube_small.urdf", [0, 0, 1], physicsClientId=ours)
    def ok(values, n):
        return len(values) == n and all(math.isfinite(x) and abs(x) <= 1e6 for x in values)

    # the box has no joints (link -1 only), a body cannot be held on itself, a gear needs two
    # links' joints, REVOLUTE / SPHERICAL / PLANAR / unknown types are refused
    valid = (link == -1 and child == -1 and joint_type in (1, 4, 5) and ok(position, 3)
             and ok(orientation, 4) and math.sqrt(sum(x * x for x in orientation)) > 1e-9)
    try:
        cid = p.createConstraint(box, link, child, -1, joint_type, [0, 0, 1], [0, 0, 0],
                                 position, [0, 0, 0, 1], orientation, physicsClientId=ours)
    except p.error as e:
        assert not valid, e
        assert "createConstraint" in str(e)
        assert p.getNumConstraints(physicsClientId=ours) == 0
        return
    assert valid
    assert p.getNumConstraints(physicsClientId=ours) == 1
    assert p.getConstraintInfo(cid, physicsClientId=ours)[4] == joint_type


WHEELS_URDF = """<?xml version="1.0"?>
<robot name="wheels">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="small">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="small_joint" type="continuous">
    <parent link="base"/><child link="small"/><axis xyz="0 1 0"/>
  </joint>
  <link name="large">
    <inertial><mass value="1"/><inertia ixx="0.04" iyy="0.04" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="large_joint" type="continuous">
    <parent link="base"/><child link="large"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
  </joint>
</robot>
"""


def test_a_gear_couples_two_wheels_as_pybullets(both, tmp_path):
    # racecar_differential.py's pattern: JOINT_GEAR between two wheel links, then
    # changeConstraint(gearRatio, maxForce); a torque on the small wheel: qd_a + ratio qd_b = 0
    # and qdd_a = tau / (I_a + I_b / ratio^2) (1 / (0.01 + 0.01) = 50 rad/s^2 at ratio -2)
    path = tmp_path / "wheels.urdf"
    path.write_text(WHEELS_URDF)
    ours, theirs = both
    speeds = []
    for api, c in ((p, ours), (pb, theirs)):
        robot = api.loadURDF(str(path), useFixedBase=True, flags=pb.URDF_USE_INERTIA_FROM_FILE,
                             physicsClientId=c)
        gear = api.createConstraint(robot, 0, robot, 1, jointType=pb.JOINT_GEAR,
                                    jointAxis=[0, 1, 0], parentFramePosition=[0, 0, 0],
                                    childFramePosition=[0, 0, 0], physicsClientId=c)
        api.changeConstraint(gear, gearRatio=-2, maxForce=10000, physicsClientId=c)
        for j in (0, 1):
            api.setJointMotorControl2(robot, j, pb.VELOCITY_CONTROL, force=0, physicsClientId=c)
            api.changeDynamics(robot, j, linearDamping=0, angularDamping=0, physicsClientId=c)
        for _ in range(240):
            api.setJointMotorControl2(robot, 0, pb.TORQUE_CONTROL, force=0.1, physicsClientId=c)
            api.stepSimulation(physicsClientId=c)
        speeds.append([api.getJointState(robot, j, physicsClientId=c)[1] for j in (0, 1)])
        assert api.getConstraintInfo(gear, physicsClientId=c)[11] == -2.0
    (a, b), (real_a, real_b) = speeds
    assert a - 2 * b == pytest.approx(0.0, abs=1e-6)
    assert a == pytest.approx(0.1 / (0.01 + 0.04 / 4) * 1.0, rel=0.01)
    assert (a, b) == pytest.approx((real_a, real_b), rel=0.02)


def test_save_state_restore_state_continues_bit_for_bit_with_constraints(both, box_urdf):
    ours, _ = both
    box = load_box(p, ours, box_urdf, [0.3, 0, 1.0])
    cid = p.createConstraint(box, -1, -1, -1, pb.JOINT_POINT2POINT, [0, 0, 0], [-0.3, 0, 0],
                             [0, 0, 1.0], physicsClientId=ours)
    for _ in range(50):
        p.stepSimulation(physicsClientId=ours)
    saved = p.saveState(physicsClientId=ours)
    runs = []
    for _ in range(2):
        p.restoreState(saved, physicsClientId=ours)
        for _ in range(50):
            p.stepSimulation(physicsClientId=ours)
        runs.append((p.getBasePositionAndOrientation(box, physicsClientId=ours),
                     p.getConstraintState(cid, physicsClientId=ours)))
    assert runs[0] == runs[1]


def test_change_constraint_moves_a_held_box_and_checks_its_arguments(both, box_urdf):
    # constraint.py's pattern (bullet3 examples): a box held by a FIXED constraint to the world
    # follows the child pivot that changeConstraint moves
    ours, _ = both
    p.setGravity(0, 0, 0, physicsClientId=ours)
    box = load_box(p, ours, box_urdf, [0, 0, 1])
    cid = p.createConstraint(box, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 1],
                             physicsClientId=ours)
    p.changeConstraint(cid, [0.2, 0.1, 1.0], [0, 0, 0.3826834, 0.9238795], maxForce=50,
                       physicsClientId=ours)
    for _ in range(480):
        p.stepSimulation(physicsClientId=ours)
    position, orientation = p.getBasePositionAndOrientation(box, physicsClientId=ours)
    np.testing.assert_allclose(position, [0.2, 0.1, 1.0], atol=1e-3)
    # quaternions q and -q are the same rotation
    assert abs(np.dot(orientation, [0, 0, 0.3826834, 0.9238795])) == pytest.approx(1, abs=1e-5)
    info = p.getConstraintInfo(cid, physicsClientId=ours)
    for bad in (dict(maxForce=-1), dict(erp=1.5), dict(jointChildPivot=[0, float("nan"), 0]),
                dict(jointChildFrameOrientation=[0, 0, 0, 0]), dict(gearRatio=float("inf")),
                dict(jointChildPivot=[1, 2])):
        with pytest.raises(p.error, match="changeConstraint"):
            p.changeConstraint(cid, physicsClientId=ours, **bad)
        assert p.getConstraintInfo(cid, physicsClientId=ours) == info


def constraint_py_script(api, c, inertia, parent_orientation, euler):
    """bullet3's constraint.py loop: cube_small held by a FIXED constraint to the world whose
    child pivot and child frame orientation changeConstraint moves every step (maxForce 50);
    the cube's inertia set to `inertia` on both sides. Returns the cube's orientation every 30
    steps."""
    api.loadURDF("plane.urdf", physicsClientId=c)
    cube = api.loadURDF("cube_small.urdf", [0, 0, 1], physicsClientId=c)
    api.changeDynamics(cube, -1, localInertiaDiagonal=inertia, physicsClientId=c)
    cid = api.createConstraint(cube, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 1],
                               parentFrameOrientation=parent_orientation, physicsClientId=c)
    a, out = -math.pi, []
    for step in range(360):
        if step < 300:
            a += 0.01
        api.stepSimulation(physicsClientId=c)
        if step < 300:
            orn = api.getQuaternionFromEuler(euler(a), physicsClientId=c)
            api.changeConstraint(cid, [a, 0, 1], jointChildFrameOrientation=orn, maxForce=50,
                                 physicsClientId=c)
        if step % 30 == 29:
            out.append(api.getBasePositionAndOrientation(cube, physicsClientId=c))
    return out


@pytest.mark.parametrize("parent_orientation, euler", [
    ((0, 0, 0, 1), lambda a: [a, 0, 0]),            # constraint.py itself
    (pb.getQuaternionFromEuler([0.3, -0.2, 0.5]), lambda a: [a, 0.4, 0.5 * a]),
])
def test_constraint_py_child_frame_orientation_turns_the_cube_as_pybullets(both, parent_orientation,
                                                                          euler):
    # jointChildFrameOrientation of a constraint to the world (childBodyUniqueId -1) is in world
    # axes and turns the constrained body: its frame parentFrameOrientation goes onto it.
    # PyBullet's default cube_small inertia comes from its collision box times the file's
    # <inertia_scaling> 3 (1.25e-4 kg m^2), sim_node's from the file (1 kg m^2, see README
    # "loadURDF flags"): both get PyBullet's here, so this compares the constraint alone.
    ours, theirs = both
    probe = pb.loadURDF("cube_small.urdf", [5, 5, 5], physicsClientId=theirs)
    inertia = pb.getDynamicsInfo(probe, -1, physicsClientId=theirs)[2]
    pb.removeBody(probe, physicsClientId=theirs)
    assert inertia == pytest.approx([1.25e-4] * 3)
    got = constraint_py_script(p, ours, inertia, parent_orientation, euler)
    want = constraint_py_script(pb, theirs, inertia, parent_orientation, euler)
    for k, ((pos, orn), (pos_pb, orn_pb)) in enumerate(zip(got, want)):
        # the angle between the two orientations [rad]: the first step turns the target by
        # ~pi (small-angle errors made that 0.23 rad at step 29, and 5e-4 rad of lag later)
        angle = 2 * math.acos(min(1.0, abs(float(np.dot(orn, orn_pb)))))
        assert angle < (5e-3 if k == 0 else 1e-4), (30 * k + 29, angle)
        # the first step also moves the pivot 3.1 m: at maxForce 50 N the 0.1 kg cube's
        # approach overshoots differently for ~90 steps (up to 0.3 m), then matches
        if k >= 3:
            np.testing.assert_allclose(pos, pos_pb, atol=1e-3)
    # constraint.py's end: the target's roll, -0.1416 rad, in both
    if euler(0)[1] == 0:
        roll = p.getEulerFromQuaternion(got[-1][1])[0]
        assert roll == pytest.approx(-math.pi + 3.0, abs=1e-3)


def test_a_fixed_constraints_torque_is_along_the_parent_frames_axes_as_pybullets(both):
    # a cube held 0.2 m off its centre by a FIXED constraint whose frames are turned: the
    # torque that holds its weight, reported along the turned parent frame's axes (bullet3's
    # angular rows), not world axes
    ours, theirs = both
    turned = pb.getQuaternionFromEuler([0.3, -0.5, 0.9])
    states = []
    for api, c in ((p, ours), (pb, theirs)):
        cube = api.loadURDF("cube_small.urdf", [0, 0, 1], physicsClientId=c)
        api.changeDynamics(cube, -1, localInertiaDiagonal=[1.25e-4] * 3, physicsClientId=c)
        cid = api.createConstraint(cube, -1, -1, -1, pb.JOINT_FIXED, [0, 0, 0], [0.2, 0, 0],
                                   [0.2, 0, 1], parentFrameOrientation=turned,
                                   childFrameOrientation=turned, physicsClientId=c)
        for _ in range(240):
            api.stepSimulation(physicsClientId=c)
        states.append(api.getConstraintState(cid, physicsClientId=c))
    # m g = 1 N at 0.2 m: 0.2 N m, about world y, spread over the turned axes
    assert np.linalg.norm(states[1][3:]) == pytest.approx(0.2, rel=1e-2)
    np.testing.assert_allclose(states[0], states[1], atol=2e-3)
