"""loadURDF / removeBody against the real PyBullet on pybullet_data's robots."""
import math

import numpy as np
import pybullet as pb
import pytest
from core_reference import ROBOTS, ours, quiet, reference, same_rotation
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

POSE = ([1.0, -2.0, 0.5], [0.1, -0.2, 0.3826834, 0.9238795])


def _joint_tables(robot, flags=0, scaling=1.0):
    with ours() as a, reference() as b:
        ua = quiet(p.loadURDF, robot, *POSE, flags=flags, globalScaling=scaling,
                   physicsClientId=a)
        ub = quiet(pb.loadURDF, robot, *POSE, flags=flags, globalScaling=scaling,
                   physicsClientId=b)
        n = p.getNumJoints(ua, physicsClientId=a)
        assert n == pb.getNumJoints(ub, physicsClientId=b)
        return ([p.getJointInfo(ua, j, physicsClientId=a) for j in range(n)],
                [pb.getJointInfo(ub, j, physicsClientId=b) for j in range(n)],
                p.getBodyInfo(ua, physicsClientId=a), pb.getBodyInfo(ub, physicsClientId=b),
                p.getBasePositionAndOrientation(ua, physicsClientId=a),
                pb.getBasePositionAndOrientation(ub, physicsClientId=b))


@pytest.mark.parametrize("robot", ROBOTS)
def test_joint_info_equals_pybullets(robot):
    mine, theirs, info_a, info_b, _, _ = _joint_tables(robot)
    assert info_a == info_b
    for a, b in zip(mine, theirs):
        assert len(a) == 17
        if a[1] == b"imu_joint":
            # husky's origin="$(optenv HUSKY_IMU_XYZ 0.19 0 0.149)": sim_node's loader expands
            # it to its default, Bullet's parser reads zeros
            a, b = a[:14] + a[16:], b[:14] + b[16:]
        # index, name, type, qIndex, uIndex, flags, damping, friction, limits, max force and
        # velocity, link name: equal; parent index equal
        assert a[:13] == b[:13] and a[-1] == b[-1], (a, b)
        assert all(isinstance(x, float) for x in a[6:12])
        assert np.allclose(a[13], b[13], atol=1e-9), (a[1], a[13], b[13])       # axis
        if len(a) == 17:
            assert np.allclose(a[14], b[14], atol=1e-9), (a[1], a[14], b[14])   # parent pos
            assert same_rotation(a[15], b[15], 1e-9), (a[1], a[15], b[15])      # parent orn


@pytest.mark.parametrize("robot", ROBOTS)
def test_base_pose_is_the_base_inertial_frame_as_pybullets(robot):
    *_, base_a, base_b = _joint_tables(robot)
    assert np.allclose(base_a[0], base_b[0], atol=1e-9)
    assert same_rotation(base_a[1], base_b[1], 1e-9)


@pytest.mark.parametrize("flags", [0, pb.URDF_USE_INERTIA_FROM_FILE])
def test_global_scaling_scales_lengths_and_shapes_not_masses_as_bullet(flags):
    mine, theirs, *_ = _joint_tables("r2d2.urdf", scaling=2.0)
    for a, b in zip(mine, theirs):
        assert np.allclose(a[14], b[14], atol=1e-9)
    with ours() as a, reference() as b:
        # masses stay and inertial origins scale by s; by default the inertia comes from the
        # scaled collision shapes (whose 1 mm margins do not scale), with the flag it is the
        # file's tensor, unscaled: Bullet's importer either way
        info = {}
        for module, cid in ((p, a), (pb, b)):
            for s in (1.0, 2.0):
                uid = quiet(module.loadURDF, "r2d2.urdf", globalScaling=s, flags=flags,
                            physicsClientId=cid)
                info[module, s] = [module.getDynamicsInfo(uid, link, physicsClientId=cid)
                                   for link in range(-1, 3)]
        for link in range(4):
            one, two = info[p, 1.0][link], info[p, 2.0][link]
            assert two[0] == one[0]
            assert np.allclose(two[3], 2 * np.array(one[3]), atol=1e-9)
            if flags:
                assert two[2] == one[2]
            for s in (1.0, 2.0):
                mine, theirs = info[p, s][link], info[pb, s][link]
                assert mine[0] == theirs[0]
                # (1e-6: Bullet's cylinder hull box is 4e-8 smaller, in float arithmetic)
                assert np.allclose(mine[2], theirs[2], rtol=1e-6, atol=0)
                assert np.allclose(mine[3], theirs[3], atol=1e-9)


def test_a_massless_base_is_static_and_use_fixed_base_fixes_any_base():
    with ours() as a:
        p.setGravity(0, 0, -10, physicsClientId=a)
        kuka = quiet(p.loadURDF, "kuka_iiwa/model.urdf", physicsClientId=a)   # link_0: 0 kg
        r2d2 = quiet(p.loadURDF, "r2d2.urdf", [0, 3, 2], useFixedBase=1, physicsClientId=a)
        free = quiet(p.loadURDF, "r2d2.urdf", [0, -3, 2], physicsClientId=a)
        before = [p.getBasePositionAndOrientation(u, physicsClientId=a) for u in (kuka, r2d2)]
        for _ in range(24):
            p.stepSimulation(physicsClientId=a)
        after = [p.getBasePositionAndOrientation(u, physicsClientId=a) for u in (kuka, r2d2)]
        assert after == before
        assert p.getBasePositionAndOrientation(free, physicsClientId=a)[0][2] < 2 - 0.01


def test_remove_body_keeps_the_other_ids_and_never_reuses_one():
    with ours() as a:
        ids = [quiet(p.loadURDF, "sphere2.urdf", [i, 0, 0], physicsClientId=a) for i in range(3)]
        assert ids == [0, 1, 2]
        p.removeBody(1, physicsClientId=a)
        assert p.getNumBodies(physicsClientId=a) == 2
        assert [p.getBodyUniqueId(i, physicsClientId=a) for i in range(2)] == [0, 2]
        assert quiet(p.loadURDF, "sphere2.urdf", physicsClientId=a) == 3
        assert p.getBasePositionAndOrientation(2, physicsClientId=a)[0] == (2.0, 0.0, 0.0)
        with pytest.raises(p.error, match="no body with unique id 1"):
            p.getBasePositionAndOrientation(1, physicsClientId=a)


def test_search_path_resolves_relative_names_as_pybullet_data_usage_needs():
    import pybullet_data
    with ours() as a:
        p.resetSimulation(physicsClientId=a)
        uid = quiet(p.loadURDF, "plane.urdf", physicsClientId=a)
        assert p.getBodyInfo(uid, physicsClientId=a) == (b"planeLink", b"plane")
        path = pybullet_data.getDataPath() + "/plane.urdf"
        assert quiet(p.loadURDF, path, physicsClientId=a) == uid + 1


def test_self_collision_flag_reaches_the_robot():
    from sim_node.pybullet.client import get_client
    with ours() as a:
        on = quiet(p.loadURDF, "r2d2.urdf", flags=pb.URDF_USE_SELF_COLLISION, physicsClientId=a)
        off = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        client = get_client(a)
        assert client.body(on).entity.settings.self_collision is True
        assert client.body(off).entity.settings.self_collision is False


_finite = st.floats(-10, 10)
_hostile = st.one_of(st.just(math.nan), st.just(math.inf), st.just(None), st.just("a"))


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(["position", "orientation", "zero", "length", "scaling", "flags"]),
       bad=_hostile, n=st.integers(0, 6).filter(lambda k: k not in (3, 4)))
def test_hostile_load_arguments_are_refused_and_nothing_is_added(case, bad, n):
    kwargs = {}
    if case == "position":
        kwargs["basePosition"] = [0.0, bad, 1.0] if bad is not None else [0.0, "x", 1.0]
    elif case == "orientation":
        kwargs["baseOrientation"] = [0.0, 0.0, bad, 1.0] if bad is not None else [0, 0, "x", 1]
    elif case == "zero":
        kwargs["baseOrientation"] = [0.0, 0.0, 0.0, 0.0]
    elif case == "length":
        kwargs["basePosition"] = [0.0] * n
    elif case == "scaling":
        kwargs["globalScaling"] = bad if bad is not None else -1.0
    else:
        kwargs["flags"] = 0.5
    with ours() as a:
        with pytest.raises(p.error, match="loadURDF"):
            p.loadURDF("r2d2.urdf", physicsClientId=a, **kwargs)
        assert p.getNumBodies(physicsClientId=a) == 0
        assert quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a) == 0


def _multibody(module, cid):
    sphere = module.createCollisionShape(pb.GEOM_SPHERE, radius=0.2, physicsClientId=cid)
    box = module.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.1, 0.2, 0.3],
                                      collisionFramePosition=[0.1, 0, 0], physicsClientId=cid)
    cylinder = module.createCollisionShape(pb.GEOM_CYLINDER, radius=0.1, height=0.5,
                                           physicsClientId=cid)
    visual = module.createVisualShape(pb.GEOM_BOX, halfExtents=[0.1, 0.2, 0.3],
                                      rgbaColor=[1, 0, 0, 1], physicsClientId=cid)
    assert (sphere, box, cylinder, visual) == (0, 1, 2, 0)
    return module.createMultiBody(
        baseMass=1, baseCollisionShapeIndex=sphere, baseVisualShapeIndex=visual,
        basePosition=[0, 0, 1], baseInertialFramePosition=[0, 0, 0.2],
        linkMasses=[1, 1], linkCollisionShapeIndices=[box, cylinder],
        linkVisualShapeIndices=[-1, -1], linkPositions=[[0, 0, 0.5], [0.3, 0, 0]],
        linkOrientations=[[0, 0, 0, 1], [0, 0, 0.7071068, 0.7071068]],
        linkInertialFramePositions=[[0.05, 0, 0], [0, 0, 0.1]],
        linkInertialFrameOrientations=[[0, 0, 0, 1]] * 2, linkParentIndices=[0, 1],
        linkJointTypes=[pb.JOINT_REVOLUTE, pb.JOINT_PRISMATIC],
        linkJointAxis=[[0, 1, 0], [1, 0, 0]], physicsClientId=cid)


def _close(x, y, atol=1e-9):
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_close(u, v, atol) for u, v in zip(x, y))
    if isinstance(x, float):
        return abs(x - y) <= atol
    return x == y


def test_create_multi_body_equals_pybullets():
    with ours() as a, reference() as b:
        ua, ub = _multibody(p, a), _multibody(pb, b)
        assert p.getBodyInfo(ua, physicsClientId=a) == pb.getBodyInfo(ub, physicsClientId=b)
        for j in range(2):
            ja, jb = p.getJointInfo(ua, j, physicsClientId=a), pb.getJointInfo(ub, j,
                                                                                 physicsClientId=b)
            assert _close(ja[:15], jb[:15]), (ja, jb)
            assert same_rotation(ja[15], jb[15], 1e-9) and ja[16] == jb[16]
            sa = p.getLinkState(ua, j, physicsClientId=a)
            sb = pb.getLinkState(ub, j, physicsClientId=b)
            assert np.allclose(sa[0], sb[0], atol=1e-9) and np.allclose(sa[2], sb[2], atol=1e-9)
            assert same_rotation(sa[1], sb[1], 1e-9) and same_rotation(sa[3], sb[3], 1e-9)
            assert np.allclose(sa[4], sb[4], atol=1e-6)     # (PyBullet: single precision)
        for link in (-1, 0, 1):
            da = p.getDynamicsInfo(ua, link, physicsClientId=a)
            db = pb.getDynamicsInfo(ub, link, physicsClientId=b)
            assert _close(da[:5], db[:5]), (link, da, db)
            assert _close(p.getCollisionShapeData(ua, link, physicsClientId=a),
                          pb.getCollisionShapeData(ub, link, physicsClientId=b))
        assert _close(p.getVisualShapeData(ua, physicsClientId=a),
                      pb.getVisualShapeData(ub, physicsClientId=b))
        assert _close(p.getBasePositionAndOrientation(ua, physicsClientId=a),
                      pb.getBasePositionAndOrientation(ub, physicsClientId=b))


def test_batch_positions_make_one_body_each_as_pybullet():
    with ours() as a:
        sphere = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=a)
        uids = p.createMultiBody(1.0, sphere, -1, batchPositions=[[0, 0, 0], [1, 0, 0]],
                                 physicsClientId=a)
        assert uids == (0, 1)
        assert p.getBasePositionAndOrientation(1, physicsClientId=a)[0] == (1.0, 0.0, 0.0)


def test_change_visual_shape_colours_what_get_visual_shape_data_reads():
    with ours() as a:
        uid = quiet(p.loadURDF, "r2d2.urdf", physicsClientId=a)
        p.changeVisualShape(uid, 2, rgbaColor=[0.1, 0.2, 0.3, 1.0], physicsClientId=a)
        colours = {d[1]: d[7] for d in p.getVisualShapeData(uid, physicsClientId=a)}
        assert colours[2] == (0.1, 0.2, 0.3, 1.0) and colours[-1] != (0.1, 0.2, 0.3, 1.0)
        with pytest.raises(p.error, match="rgbaColor"):
            p.changeVisualShape(uid, 2, rgbaColor=[2, 0, 0, 1], physicsClientId=a)


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(["shape", "radius", "index", "parent", "joint", "lengths"]),
       bad=st.one_of(st.just(math.nan), st.just(-1.0), st.just(0.0), st.just(99)))
def test_hostile_multi_body_arguments_are_refused_and_nothing_is_added(case, bad):
    with ours() as a:
        sphere = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=a)
        kwargs = dict(linkMasses=[1.0], linkCollisionShapeIndices=[sphere],
                      linkVisualShapeIndices=[-1], linkPositions=[[0, 0, 1]],
                      linkOrientations=[[0, 0, 0, 1]], linkParentIndices=[0],
                      linkJointTypes=[pb.JOINT_REVOLUTE], linkJointAxis=[[0, 0, 1]])
        with pytest.raises(p.error):
            if case == "shape":
                p.createCollisionShape(int(bad) if bad == 99 else 42, physicsClientId=a)
            elif case == "radius":
                p.createCollisionShape(pb.GEOM_SPHERE, radius=bad if bad != 99 else 1e9,
                                       physicsClientId=a)
            else:
                if case == "index":
                    kwargs["linkCollisionShapeIndices"] = [7]
                elif case == "parent":
                    kwargs["linkParentIndices"] = [1]
                elif case == "joint":
                    kwargs["linkJointAxis"] = [[0, 0, 0]]
                else:
                    kwargs["linkPositions"] = [[0, 0, 1], [0, 0, 2]]
                p.createMultiBody(1.0, sphere, physicsClientId=a, **kwargs)
        assert p.getNumBodies(physicsClientId=a) == 0


LEGACY_FORMS = [(1.0, 2.0, 3.0), (1, 2, 3, 0.1, 0.2, 0.3, 0.9), (1.0, -2.0, 0.5, 0, 0, 0, 2)]


@pytest.mark.parametrize("numbers", LEGACY_FORMS)
def test_legacy_positional_pose_places_the_base_as_pybullet(numbers):
    """loadURDF(fileName, x, y, z[, qx, qy, qz, qw]) (constraint.py, kuka_setup.py...): on the
    default client, as pybullet 3.2.7 (which normalises the quaternion)."""
    with ours() as a, reference() as b:
        assert a == 0 and b == 0, "the legacy form has no physicsClientId: client 0 must be free"
        mine = p.getBasePositionAndOrientation(quiet(p.loadURDF, "r2d2.urdf", *numbers))
        theirs = pb.getBasePositionAndOrientation(pb.loadURDF("r2d2.urdf", *numbers))
        assert np.allclose(mine[0], theirs[0], atol=1e-9)
        assert same_rotation(mine[1], theirs[1], 1e-9)


def test_three_numbers_with_a_keyword_are_not_the_legacy_form_as_pybullet():
    with ours() as a, reference() as b:
        with pytest.raises(pb.error):
            pb.loadURDF("r2d2.urdf", 1, 2, 3, physicsClientId=b)
        with pytest.raises(p.error):
            quiet(p.loadURDF, "r2d2.urdf", 1, 2, 3, physicsClientId=a)
        assert p.getNumBodies(physicsClientId=a) == 0


def test_heightfield_shapes_are_refused_and_the_heightfield_keywords_accepted():
    with ours() as a:
        with pytest.raises(p.error, match="GEOM_HEIGHTFIELD"):
            p.createCollisionShape(pb.GEOM_HEIGHTFIELD, meshScale=[0.1, 0.1, 1],
                                   heightfieldData=[0.0] * 16, numHeightfieldRows=4,
                                   numHeightfieldColumns=4, physicsClientId=a)
        # with another shape the heightfield arguments are ignored, as in PyBullet
        sid = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.2, heightfieldData=[0.0] * 4,
                                     physicsClientId=a)
        assert p.createMultiBody(1.0, sid, physicsClientId=a) == 0
    with reference() as b:
        sid = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.2, heightfieldData=[0.0] * 4,
                                      physicsClientId=b)
        assert pb.createMultiBody(1.0, sid, physicsClientId=b) == 0


def test_visual_shape_array_takes_plane_normals_and_flags_as_pybullet():
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            vid = module.createVisualShapeArray(
                [pb.GEOM_PLANE, pb.GEOM_BOX], halfExtents=[[1, 1, 1], [0.1, 0.2, 0.3]],
                planeNormals=[[0, 1, 0], [0, 0, 1]], flags=[pb.VISUAL_SHAPE_DOUBLE_SIDED, 0],
                physicsClientId=cid)
            assert vid >= 0
            uid = module.createMultiBody(0, -1, vid, physicsClientId=cid)
            data = module.getVisualShapeData(uid, physicsClientId=cid)
            assert [d[2] for d in data] == [pb.GEOM_PLANE, pb.GEOM_BOX], module.__name__
            assert np.allclose(data[1][3], [0.2, 0.4, 0.6])
        with pytest.raises(p.error, match="planeNormals"):
            p.createVisualShapeArray([pb.GEOM_PLANE], planeNormals=[[0, 0, 1], [0, 1, 0]],
                                     physicsClientId=a)
        with pytest.raises(p.error, match="flags"):     # one per part (PyBullet: SystemError)
            p.createVisualShapeArray([pb.GEOM_PLANE], flags=0, physicsClientId=a)


def test_collision_shape_array_parts_and_frames_are_pybullets():
    # a box and a sphere placed in the base's frame: getCollisionShapeData (frames in the
    # inertial frame) and getDynamicsInfo (the parts' bounding box) as PyBullet's
    with ours() as a, reference() as b:
        seen = []
        for module, cid in ((p, a), (pb, b)):
            sid = module.createCollisionShapeArray(
                [pb.GEOM_BOX, pb.GEOM_SPHERE], radii=[0, 0.1],
                halfExtents=[[0.1, 0.2, 0.3], [0, 0, 0]],
                collisionFramePositions=[[0, 0, 0], [0.5, 0, 0]],
                collisionFrameOrientations=[[0, 0, 0, 1], [0, 0, 0.3826834, 0.9238795]],
                physicsClientId=cid)
            uid = module.createMultiBody(2.0, sid, physicsClientId=cid)
            seen.append((module.getCollisionShapeData(uid, -1, physicsClientId=cid),
                         module.getDynamicsInfo(uid, -1, physicsClientId=cid)[2]))
        (mine, inertia_a), (theirs, inertia_b) = seen
        assert [d[2] for d in mine] == [d[2] for d in theirs] == [pb.GEOM_BOX, pb.GEOM_SPHERE]
        for x, y in zip(mine, theirs):
            assert np.allclose(x[3], y[3]) and np.allclose(x[5], y[5], atol=1e-9)
            assert same_rotation(x[6], y[6], 1e-6)
        assert np.allclose(inertia_a, inertia_b, rtol=1e-6)
        with pytest.raises(p.error, match="collisionFramePositions"):
            p.createCollisionShapeArray([pb.GEOM_SPHERE], radii=[0.1],
                                        collisionFramePositions=[[0, 0, 0]] * 2,
                                        physicsClientId=a)
        with pytest.raises(p.error, match=r"radius\[0\]"):
            p.createCollisionShapeArray([pb.GEOM_SPHERE], radii=[math.nan], physicsClientId=a)


def test_limits_read_by_their_leading_number_as_bullets_parser():
    """biped2d_pybullet.urdf writes lower="-1.57." : Bullet's parser reads -1.57, and so must
    getJointInfo; its right hip has effort 0, which PyBullet reports but does not apply to the
    motors: a torque moves it."""
    with ours() as a, reference() as b:
        ua = quiet(p.loadURDF, "biped/biped2d_pybullet.urdf", useFixedBase=1, physicsClientId=a)
        ub = pb.loadURDF("biped/biped2d_pybullet.urdf", useFixedBase=1, physicsClientId=b)
        for j in range(pb.getNumJoints(ub, physicsClientId=b)):
            assert (p.getJointInfo(ua, j, physicsClientId=a)[8:10]
                    == pb.getJointInfo(ub, j, physicsClientId=b)[8:10])
        hip = 3                                                   # torso_to_rightleg
        assert p.getJointInfo(ua, hip, physicsClientId=a)[8] == -1.57
        assert p.getJointInfo(ua, hip, physicsClientId=a)[10] == 0.0          # its effort
        moved = []
        for module, uid, cid in ((p, ua, a), (pb, ub, b)):
            module.setJointMotorControl2(uid, hip, pb.VELOCITY_CONTROL, force=0,
                                         physicsClientId=cid)
            for _ in range(60):
                module.setJointMotorControl2(uid, hip, pb.TORQUE_CONTROL, force=-5.0,
                                             physicsClientId=cid)
                module.stepSimulation(physicsClientId=cid)
            moved.append(module.getJointState(uid, hip, physicsClientId=cid)[0])
        assert moved[1] < -0.01 and moved[0] == pytest.approx(moved[1], rel=0.15), moved


def test_remove_collision_shape_frees_its_id_for_the_next_shape_as_pybullet():
    """PyBullet hands a removed (unused) shape's id to the next createCollisionShape; a
    removed id is no longer a shape (sim_node: p.error; PyBullet: a warning, no result)."""
    made = {}
    for module, connect in ((p, ours), (pb, reference)):
        with connect() as cid:
            ids = [module.createCollisionShape(pb.GEOM_SPHERE, radius=0.1 * (k + 1),
                                               physicsClientId=cid) for k in range(3)]
            module.removeCollisionShape(ids[1], physicsClientId=cid)
            ids += [module.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.1] * 3,
                                                physicsClientId=cid) for _ in range(2)]
            made[module] = ids
            if module is p:
                body = p.createMultiBody(0, ids[0], physicsClientId=cid)
                p.removeCollisionShape(ids[0], physicsClientId=cid)     # its body keeps it
                assert p.getCollisionShapeData(body, -1, physicsClientId=cid)[0][2:4] == \
                    (pb.GEOM_SPHERE, (0.1, 0.1, 0.1))
                with pytest.raises(p.error, match=r"removeCollisionShape: collisionShapeId 0 "
                                                  r"is not a collision shape of this client"):
                    p.removeCollisionShape(ids[0], physicsClientId=cid)
    assert made[p] == made[pb] == [0, 1, 2, 1, 3]


def _v_trough(path, slope):
    """An open V-shaped sheet z = slope |x| over [-1, 1]^2 (concave; its convex hull is a solid
    prism whose top face is z = slope)."""
    with open(path, "w") as f:
        for x, z in ((-1.0, slope), (0.0, 0.0), (1.0, slope)):
            f.write(f"v {x} -1 {z}\nv {x} 1 {z}\n")
        f.write("f 1 3 4\nf 1 4 2\nf 3 5 6\nf 3 6 4\n")


@pytest.mark.parametrize("array", [False, True])
@pytest.mark.parametrize("concave", [False, True])
def test_force_concave_trimesh_makes_a_mesh_collide_as_its_triangles_as_pybullet(
        tmp_path, concave, array):
    # a ball dropped into a V trough: GEOM_FORCE_CONCAVE_TRIMESH lands it in the groove, touching
    # both faces (centre at (r + gap) sqrt(1 + slope^2)); without the flag it lands on the
    # trough's convex hull (z = slope + r + gap); sim_node rests 0.5 mm apart (its boundary
    # layer), PyBullet within its collision margin
    slope, radius = 0.5, 0.05
    path = str(tmp_path / "trough.obj")
    _v_trough(path, slope)
    flags = pb.GEOM_FORCE_CONCAVE_TRIMESH if concave else 0
    heights = []
    for api, client in ((p, ours), (pb, reference)):
        with client() as c:
            if array:
                trough = api.createCollisionShapeArray([api.GEOM_MESH], fileNames=[path],
                                                       flags=[flags], physicsClientId=c)
            else:
                trough = api.createCollisionShape(api.GEOM_MESH, fileName=path, flags=flags,
                                                  physicsClientId=c)
            api.createMultiBody(0, trough, physicsClientId=c)
            ball = api.createCollisionShape(api.GEOM_SPHERE, radius=radius, physicsClientId=c)
            uid = api.createMultiBody(1.0, ball, basePosition=[0, 0, 1.0], physicsClientId=c)
            api.setGravity(0, 0, -10, physicsClientId=c)
            for _ in range(480):
                api.stepSimulation(physicsClientId=c)
            heights.append(api.getBasePositionAndOrientation(uid, physicsClientId=c)[0][2])
    ours_z, pybullet_z = heights
    gap = 0.0005
    expected = (radius + gap) * math.sqrt(1 + slope ** 2) if concave else slope + radius + gap
    assert ours_z == pytest.approx(expected, abs=0.00025 * math.sqrt(1 + slope ** 2))
    assert pybullet_z == pytest.approx(expected, abs=0.005)
