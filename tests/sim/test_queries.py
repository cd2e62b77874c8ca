"""sim/queries.py on the Simulator: getClosestPoints, getAABB, getOverlappingObjects and the
collision filters, side by side with PyBullet (test-only dependency) on the same scenes."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scene_helpers import world_from_yaml

import sim_node

pybullet = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

KUKA = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")


@pytest.fixture
def pb():
    client = pybullet.connect(pybullet.DIRECT)
    yield client
    pybullet.disconnect(client)


def _quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


# -- closest points ------------------------------------------------------------------------
PRIMITIVES = {
    # name: (our world-file geometry, PyBullet createCollisionShape arguments)
    "sphere": ("{sphere: 0.12}", dict(shapeType=pybullet.GEOM_SPHERE, radius=0.12)),
    "box": ("{box: [0.3, 0.2, 0.1]}", dict(shapeType=pybullet.GEOM_BOX,
                                          halfExtents=[0.15, 0.1, 0.05])),
    "capsule": ("{capsule: [0.05, 0.3]}", dict(shapeType=pybullet.GEOM_CAPSULE, radius=0.05,
                                              height=0.3)),
}


def _primitive_world(tmp_path, poses):
    text = "rigid_objects:\n"
    for (name, (geometry, _)), (p, q) in zip(PRIMITIVES.items(), poses):
        text += (f"  - name: {name}\n    geometry: {geometry}\n    mass: 1.0\n"
                 f"    pose: {{position: {p.tolist()}, orientation: {q.tolist()}}}\n")
    world = world_from_yaml(text, tmp_path)
    return world, sim_node.Simulator(world)


def _pb_primitives(client, poses):
    ids = []
    for (name, (_, args)), (p, q) in zip(PRIMITIVES.items(), poses):
        shape = pybullet.createCollisionShape(physicsClientId=client, **args)
        ids.append(pybullet.createMultiBody(1.0, shape, basePosition=p.tolist(),
                                            baseOrientation=q.tolist(), physicsClientId=client))
        # PyBullet's boxes keep a 0.04 m margin inside their half extents and round their
        # edges and corners with it: without it they are exact boxes
        pybullet.changeDynamics(ids[-1], -1, collisionMargin=0.0, physicsClientId=client)
    return ids


def test_primitives_agree_with_pybullet_at_random_poses(tmp_path, pb):
    # sphere, box, capsule at random poses in a 0.6 m cube: every pair's distance agrees with
    # PyBullet's getClosestPoints (collision margins 0) to 1e-6 m when apart, 1e-5 m when
    # overlapping (PyBullet's GJK / EPA stop at relative tolerances of that order), points to
    # 1e-5 m and normals to 1e-4
    rng = np.random.default_rng(12)
    compared = 0
    for trial in range(15):
        poses = [(rng.uniform(-0.3, 0.3, 3), _quat(rng)) for _ in PRIMITIVES]
        world, sim = _primitive_world(tmp_path, poses)
        pybullet.resetSimulation(physicsClientId=pb)
        ids = _pb_primitives(pb, poses)
        ours = [world.rigidObject(i).getID() for i in range(world.numRigidObjects())]
        for i in range(3):
            for j in range(3):
                if i == j:
                    continue
                theirs = pybullet.getClosestPoints(ids[i], ids[j], 1.0, physicsClientId=pb)
                mine = sim.getClosestPoints(ours[i], ours[j], 1.0)
                assert len(theirs) == 1 and len(mine) == 1, (trial, i, j)
                t, m = theirs[0], mine[0]
                if t[8] < 0:                # penetration: EPA depth, both exact to 1e-6
                    assert m.distance == pytest.approx(t[8], abs=1e-5)
                    continue
                assert m.distance == pytest.approx(t[8], abs=1e-6), (trial, i, j)
                np.testing.assert_allclose(m.normal, t[7], atol=1e-4)
                np.testing.assert_allclose(m.point_a, t[5], atol=1e-5)
                np.testing.assert_allclose(m.point_b, t[6], atol=1e-5)
                compared += 1
    assert compared > 30


def _kuka(world_or_none=None):
    world = world_or_none or sim_node.WorldModel()
    robot = world.loadRobot(KUKA, fixed_base=True)
    return world, robot


def _pb_link_index(client, body):
    # PyBullet link index (-1: base) of each link name
    names = {pybullet.getBodyInfo(body, physicsClientId=client)[0].decode(): -1}
    for j in range(pybullet.getNumJoints(body, physicsClientId=client)):
        names[pybullet.getJointInfo(body, j, physicsClientId=client)[12].decode()] = j
    return names


def _point_triangles_distance(p, tri):
    # distance from point p (3,) to each triangle tri (n, 3, 3): the plane distance when p
    # projects inside the triangle, else the distance to the nearest of its edges
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    h = np.einsum("ij,ij->i", p - a, n)
    q = p - h[:, None] * n
    inside = np.ones(len(tri), bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(v - u, q - u), n) >= 0
    best = np.where(inside, np.abs(h), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        s = np.clip(np.einsum("ij,ij->i", p - u, e) / np.einsum("ij,ij->i", e, e), 0, 1)
        best = np.minimum(best, np.linalg.norm(p - (u + s[:, None] * e), axis=1))
    return best


def _hull_distance(sim, robot, link, point):
    # distance [m] from a point outside to the convex hull of a link's collision mesh, placed
    # where the simulator has the link now
    import trimesh

    R, t = sim.getLinkTransforms(robot)
    (element,) = robot.link(link).getCollisionGeometry()
    local = element.shape.vertices @ element.origin.R.T + element.origin.p
    hull = trimesh.Trimesh(local @ R[link].T + t[link]).convex_hull
    outside = np.einsum("ij,ij->i", point - hull.triangles[:, 0], hull.face_normals)
    assert outside.max() > 0.0
    return float(_point_triangles_distance(np.asarray(point), hull.triangles).min())


def test_kuka_links_against_a_sphere_agree_with_pybullet(tmp_path, pb):
    # kuka_iiwa (pybullet_data: STL links, convex hulls in both engines) at random configs and
    # a sphere of radius 0.05 near it. Each link's distance equals the exact one (sphere centre
    # to the link's hull surface, trimesh's closest point on the hull's triangles, minus the
    # radius) to 1e-9 m, and PyBullet's plus its URDF collision margin (0.001 m grown outside
    # each hull) to 5e-5 m: PyBullet's GJK on these hulls is only that accurate (measured:
    # up to 3.1e-5 m off, also with the margin set to 0 through changeDynamics)
    rng = np.random.default_rng(7)
    world, robot = _kuka()
    sphere_text = ("rigid_objects:\n  - name: ball\n    geometry: {sphere: 0.05}\n"
                   "    mass: 1.0\n    pose: {position: [0.3, 0.1, 0.6]}\n")
    extra = world_from_yaml(sphere_text, tmp_path)
    ball = extra.rigidObject(0)
    extra.remove(ball)
    world.add(ball)
    sim = sim_node.Simulator(world)
    kuka = pybullet.loadURDF(KUKA, useFixedBase=True, physicsClientId=pb)
    shape = pybullet.createCollisionShape(pybullet.GEOM_SPHERE, radius=0.05, physicsClientId=pb)
    pb_ball = pybullet.createMultiBody(1.0, shape, physicsClientId=pb)
    pb_links = _pb_link_index(pb, kuka)
    lower, upper = robot.getJointLimits()
    compared = 0
    for trial in range(8):
        q = rng.uniform(np.maximum(lower, -2.5), np.minimum(upper, 2.5))
        centre = rng.uniform([-0.4, -0.4, 0.2], [0.4, 0.4, 1.1])
        sim.setActualConfig(robot, q)
        sim.body(ball).setObjectTransform(np.eye(3), centre)
        for k, joint in enumerate(robot.getJointNames()):
            j = [i for i in range(pybullet.getNumJoints(kuka, physicsClientId=pb))
                 if pybullet.getJointInfo(kuka, i, physicsClientId=pb)[1].decode() == joint][0]
            pybullet.resetJointState(kuka, j, q[k], physicsClientId=pb)
        pybullet.resetBasePositionAndOrientation(pb_ball, centre.tolist(), [0, 0, 0, 1],
                                                 physicsClientId=pb)
        mine = {c.link_a: c for c in sim.getClosestPoints(robot.getID(), ball.getID(), 2.0)}
        for link in range(robot.numLinks()):
            if not robot.link(link).getCollisionGeometry():
                continue
            theirs = pybullet.getClosestPoints(kuka, pb_ball, 2.0,
                                               linkIndexA=pb_links[robot.link(link).getName()],
                                               physicsClientId=pb)
            assert theirs and link in mine
            if theirs[0][8] < 0:
                continue
            assert mine[link].distance == pytest.approx(_hull_distance(sim, robot, link, centre)
                                                        - 0.05, abs=1e-9), (trial, link)
            assert mine[link].distance == pytest.approx(theirs[0][8] + 0.001, abs=5e-5), \
                (trial, link)
            compared += 1
    assert compared >= 40


def test_a_query_right_after_a_setter_sees_the_new_pose(tmp_path):
    world = world_from_yaml("rigid_objects:\n"
                            "  - {name: a, geometry: {sphere: 0.1}, mass: 1, pose: {position: [0, 0, 1]}}\n"
                            "  - {name: b, geometry: {sphere: 0.1}, mass: 1, pose: {position: [1, 0, 1]}}\n",
                            tmp_path)
    sim = sim_node.Simulator(world)
    a, b = world.rigidObject("a"), world.rigidObject("b")
    assert sim.getClosestPoints(a.getID(), b.getID(), 5.0)[0].distance == pytest.approx(0.8)
    sim.body(b).setObjectTransform(np.eye(3), [0, 3, 1])
    assert sim.getClosestPoints(a.getID(), b.getID(), 5.0)[0].distance == pytest.approx(2.8)
    assert sim.getClosestPoints(a.getID(), b.getID(), 2.0) == []


def test_robot_links_after_setActualConfig(pb):
    # kuka's self distances: a query after setActualConfig sees the new configuration
    world, robot = _kuka()
    sim = sim_node.Simulator(world)
    before = sim.getClosestPoints(robot.getID(), robot.getID(), 0.5, link_a=7, link_b=2)
    q = np.zeros(7)
    q[3] = 2.0
    sim.setActualConfig(robot, q)
    after = sim.getClosestPoints(robot.getID(), robot.getID(), 0.5, link_a=7, link_b=2)
    assert len(before) <= 1 and len(after) == 1
    assert not before or after[0].distance < before[0].distance


# -- boxes ---------------------------------------------------------------------------------
def test_aabbs_agree_with_pybullet(pb):
    # kuka at a random config: each link's box is the engine's, no margin: the box of the
    # hull in the shape frame turned into the world (Arvo), exact for primitives
    # (tests/engine/test_aabb.py), conservative for turned hulls, as PyBullet's. PyBullet's
    # getAABB of a link is its own such box grown by 0.003 m on every side (measured; its URDF
    # collision margin is 0.001 m, the rest its broadphase's growth)
    world, robot = _kuka()
    sim = sim_node.Simulator(world)
    kuka = pybullet.loadURDF(KUKA, useFixedBase=True, physicsClientId=pb)
    pb_links = _pb_link_index(pb, kuka)
    q = np.array([0.3, -0.5, 0.8, 1.1, -0.4, 0.7, 0.2])
    sim.setActualConfig(robot, q)
    for k, joint in enumerate(robot.getJointNames()):
        j = [i for i in range(pybullet.getNumJoints(kuka, physicsClientId=pb))
             if pybullet.getJointInfo(kuka, i, physicsClientId=pb)[1].decode() == joint][0]
        pybullet.resetJointState(kuka, j, q[k], physicsClientId=pb)
    for link in range(robot.numLinks()):
        if not robot.link(link).getCollisionGeometry():
            continue
        lo, hi = sim.getAABB(robot.getID(), link)
        t_lo, t_hi = map(np.array, pybullet.getAABB(kuka, pb_links[robot.link(link).getName()],
                                                    physicsClientId=pb))
        # ours holds the link's mesh vertices where the simulator has the link
        R, t = sim.getLinkTransforms(robot)
        (element,) = robot.link(link).getCollisionGeometry()
        world_vertices = ((element.shape.vertices @ element.origin.R.T + element.origin.p)
                          @ R[link].T + t[link])
        assert np.all(lo <= world_vertices.min(axis=0) + 1e-12)
        assert np.all(world_vertices.max(axis=0) - 1e-12 <= hi)

        # PyBullet's holds ours grown by its 0.003 m on every side
        assert np.all(t_lo <= lo - 0.003 + 2e-5) and np.all(hi + 0.003 - 2e-5 <= t_hi)
    lo, hi = sim.getAABB(robot.getID())
    boxes = [sim.getAABB(robot.getID(), l) for l in range(robot.numLinks())
             if robot.link(l).getCollisionGeometry()]
    np.testing.assert_array_equal(lo, np.min([b[0] for b in boxes], axis=0))
    np.testing.assert_array_equal(hi, np.max([b[1] for b in boxes], axis=0))


def test_overlapping_objects_by_box(tmp_path):
    world = world_from_yaml(
        "terrains:\n  - {name: ground, geometry: {plane: {}}}\n"
        "rigid_objects:\n"
        "  - {name: a, geometry: {box: [0.2, 0.2, 0.2]}, mass: 1, pose: {position: [0, 0, 0.1]}}\n"
        "  - {name: b, geometry: {sphere: 0.1}, mass: 1, pose: {position: [1, 0, 0.1]}}\n",
        tmp_path)
    sim = sim_node.Simulator(world)
    ground, a, b = world.terrain(0).getID(), world.rigidObject("a").getID(), world.rigidObject("b").getID()
    # a box above the ground around a's upper half; the ground's box ends at z = 0
    assert sim.getOverlappingObjects([-0.05, -0.05, 0.15], [0.05, 0.05, 0.3]) == [(a, -1)]
    assert sim.getOverlappingObjects([-2, -1, 0.0], [2, 1, 0.05]) == [(ground, -1), (a, -1), (b, -1)]
    # touching boxes overlap (closed intervals): b's box starts at x = 0.9
    assert sim.getOverlappingObjects([0.5, -0.1, 0.15], [0.9, 0.1, 0.3]) == [(b, -1)]
    assert sim.getOverlappingObjects([5, 5, 5], [6, 6, 6]) == []


# -- filters -------------------------------------------------------------------------------
STACK = """terrains:
  - {name: ground, geometry: {plane: {}}}
rigid_objects:
  - {name: lower, geometry: {box: [0.1, 0.1, 0.1]}, mass: 0.5, pose: {position: [0, 0, 0.05]}}
  - {name: upper, geometry: {box: [0.1, 0.1, 0.1]}, mass: 0.5, pose: {position: [0, 0, 0.16]}}
"""


def _and_mode(client):
    # PyBullet documents group / mask as AND ((group_a & mask_b) and (group_b & mask_a)) but
    # 3.2.7 defaults to OR (bullet3 issue #4148); ours is the documented AND: compare with it
    pybullet.setPhysicsEngineParameter(collisionFilterMode=0, physicsClientId=client)


def _pb_stack(client):
    _and_mode(client)
    pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
    plane = pybullet.createMultiBody(0, pybullet.createCollisionShape(
        pybullet.GEOM_PLANE, physicsClientId=client), physicsClientId=client)
    box = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[0.05] * 3,
                                        physicsClientId=client)
    lower = pybullet.createMultiBody(0.5, box, basePosition=[0, 0, 0.05], physicsClientId=client)
    upper = pybullet.createMultiBody(0.5, box, basePosition=[0, 0, 0.16], physicsClientId=client)
    return plane, lower, upper


def _settle(sim, pbc, seconds=1.0):
    sim.simulate(seconds)
    for _ in range(int(seconds * 240)):
        pybullet.stepSimulation(physicsClientId=pbc)


def test_a_pair_override_re_enables_a_masked_pair_as_in_pybullet(tmp_path, pb):
    # upper in group 2 masks out group 1 (lower); the ground meets both. Before: upper falls
    # through lower onto the ground (z 0.05); after enabling the pair it rests on lower (0.15)
    world = world_from_yaml(STACK, tmp_path)
    ground, lower, upper = (world.terrain(0).getID(), world.rigidObject("lower").getID(),
                            world.rigidObject("upper").getID())
    for enable in (False, True):
        sim = sim_node.Simulator(world)
        pybullet.resetSimulation(physicsClientId=pb)
        p_ground, p_lower, p_upper = _pb_stack(pb)
        sim.setCollisionFilterGroupMask(upper, -1, 2, 0xFFFFFFFF & ~1)
        sim.setCollisionFilterGroupMask(ground, -1, 3, -1)
        pybullet.setCollisionFilterGroupMask(p_upper, -1, 2, _int32(0xFFFFFFFF & ~1),
                                             physicsClientId=pb)
        pybullet.setCollisionFilterGroupMask(p_ground, -1, 3, -1, physicsClientId=pb)
        if enable:
            sim.setCollisionFilterPair(lower, upper, -1, -1, True)
            pybullet.setCollisionFilterPair(p_lower, p_upper, -1, -1, 1, physicsClientId=pb)
        _settle(sim, pb)
        ours = sim.body(upper).getTransform()[1][2]
        theirs = pybullet.getBasePositionAndOrientation(p_upper, physicsClientId=pb)[0][2]
        expected = 0.15 if enable else 0.05
        assert ours == pytest.approx(expected, abs=3e-3)
        assert theirs == pytest.approx(expected, abs=3e-3)
        assert sim.getCollisionFilterGroupMask(upper, -1) == (2, 0xFFFFFFFE)


def _int32(bits):
    # PyBullet takes group and mask as C ints: the same 32 bits, signed
    return bits - (1 << 32) if bits >= 1 << 31 else bits


GROUP_MASKS = [(1, 0xFFFFFFFF), (2, 0xFFFFFFFF), (2, 0xFFFFFFFD), (1, 2), (4, 1), (3, 0), (6, 4)]


@pytest.mark.parametrize("filter_a", GROUP_MASKS)
@pytest.mark.parametrize("filter_b", GROUP_MASKS)
def test_group_and_mask_decide_as_in_pybullet(tmp_path, pb, filter_a, filter_b):
    # two overlapping boxes in the air (no ground): PyBullet's contact points after collision
    # detection and ours after one step agree on whether the pair collides
    world = world_from_yaml(
        "rigid_objects:\n"
        "  - {name: a, geometry: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {position: [0, 0, 1]}}\n"
        "  - {name: b, geometry: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {position: [0.09, 0, 1]}}\n",
        tmp_path)
    sim = sim_node.Simulator(world)
    sim.enableContactFeedbackAll()
    a, b = world.rigidObject("a").getID(), world.rigidObject("b").getID()
    _and_mode(pb)
    box = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[0.05] * 3,
                                        physicsClientId=pb)
    pa = pybullet.createMultiBody(1, box, basePosition=[0, 0, 1], physicsClientId=pb)
    pbb = pybullet.createMultiBody(1, box, basePosition=[0.09, 0, 1], physicsClientId=pb)
    sim.setCollisionFilterGroupMask(a, None, *filter_a)
    sim.setCollisionFilterGroupMask(b, None, *filter_b)
    pybullet.setCollisionFilterGroupMask(pa, -1, *map(_int32, filter_a), physicsClientId=pb)
    pybullet.setCollisionFilterGroupMask(pbb, -1, *map(_int32, filter_b), physicsClientId=pb)
    pybullet.performCollisionDetection(physicsClientId=pb)
    theirs = len(pybullet.getContactPoints(pa, pbb, physicsClientId=pb)) > 0
    sim.simulate(0.001)
    assert sim.hadContact(a, b) == theirs
    assert theirs == bool((filter_a[0] & filter_b[1]) and (filter_b[0] & filter_a[1]))


def test_a_pair_override_does_not_beat_a_robots_self_collision_rules_as_in_pybullet(pb):
    # kuka folded so that link 5 dips 5.5 cm into the base link 0 (found by a random search
    # with getClosestPoints); the robot loads without self-collision in both engines: enabling
    # the pair makes no contact in either
    world, robot = _kuka()
    sim = sim_node.Simulator(world)
    sim.enableContactFeedbackAll()
    q = np.array([-2.31, 2.06, -2.84, 2.06, -1.21, -0.16, 0.28])
    sim.setActualConfig(robot, q)
    inner = sim.getClosestPoints(robot.getID(), robot.getID(), 0.0, link_a=5, link_b=0)
    kuka = pybullet.loadURDF(KUKA, useFixedBase=True, physicsClientId=pb)
    for j in range(7):
        pybullet.resetJointState(kuka, j, q[j], physicsClientId=pb)
    pb_links = _pb_link_index(pb, kuka)
    l5, l0 = pb_links[robot.link(5).getName()], pb_links[robot.link(0).getName()]
    theirs = pybullet.getClosestPoints(kuka, kuka, 0.0, l5, l0, physicsClientId=pb)
    assert inner and theirs and inner[0].distance < -0.05 and theirs[0][8] < -0.05
    sim.setCollisionFilterPair(robot.getID(), robot.getID(), 5, 0, True)
    pybullet.setCollisionFilterPair(kuka, kuka, l5, l0, 1, physicsClientId=pb)
    pybullet.performCollisionDetection(physicsClientId=pb)
    assert pybullet.getContactPoints(kuka, kuka, physicsClientId=pb) == ()
    sim.simulate(0.001)
    assert not sim.hadContact(robot.link(5).getID(), robot.link(0).getID())
    assert sim.engine.enabled_pairs() == [tuple(sorted((robot.link(5).getID(),
                                                        robot.link(0).getID())))]


def test_filters_are_settings_kept_by_reset_and_carried_over_a_spawn(tmp_path):
    world = world_from_yaml(STACK, tmp_path)
    sim = sim_node.Simulator(world)
    lower, upper = world.rigidObject("lower"), world.rigidObject("upper")
    sim.setCollisionFilterGroupMask(upper.getID(), -1, 2, 0xFFFFFFF0)
    sim.setCollisionFilterPair(lower.getID(), upper.getID(), -1, -1, False)
    sim.simulate(0.1)
    sim.reset()
    assert sim.getCollisionFilterGroupMask(upper.getID(), -1) == (2, 0xFFFFFFF0)
    assert sim.engine.disabled_pairs() == [(lower.getID(), upper.getID())]
    extra = world_from_yaml("rigid_objects:\n  - {name: first, geometry: {sphere: 0.1}, "
                            "mass: 1, pose: {position: [2, 0, 1]}}\n", tmp_path, "extra.yaml")
    spawned = extra.rigidObject(0)
    extra.remove(spawned)
    sim.addEntity(spawned)          # IDs move: the filters follow their entities
    assert sim.getCollisionFilterGroupMask(upper.getID(), -1) == (2, 0xFFFFFFF0)
    assert sim.engine.disabled_pairs() == [tuple(sorted((lower.getID(), upper.getID())))]
    sim.setCollisionFilterPair(lower.getID(), upper.getID(), -1, -1, None)
    assert sim.engine.disabled_pairs() == [] and sim.engine.enabled_pairs() == []


def test_no_filter_set_changes_nothing(tmp_path):
    # the same run with and without touching the query API ends bit for bit alike
    runs = []
    for query in (False, True):
        world = world_from_yaml(STACK, tmp_path)
        sim = sim_node.Simulator(world)
        for _ in range(20):
            sim.simulate(0.01)
            if query:
                sim.getClosestPoints(world.rigidObject(0).getID(), world.rigidObject(1).getID(), 1.0)
                sim.getAABB(world.rigidObject(1).getID())
                sim.getOverlappingObjects([-1, -1, -1], [1, 1, 1])
        runs.append(sim.getState())
    assert runs[0] == runs[1]


# -- hostile arguments ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def stack_sim(tmp_path_factory):
    world = world_from_yaml(STACK, tmp_path_factory.mktemp("stack"))
    return world, sim_node.Simulator(world)


@settings(max_examples=60, deadline=None)
@given(id_a=st.one_of(st.integers(-5, 10), st.floats(allow_nan=True), st.text(max_size=3)),
       distance=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30)),
       link=st.one_of(st.none(), st.integers(-3, 3)))
def test_hostile_arguments_get_clear_errors(stack_sim, id_a, distance, link):
    world, sim = stack_sim
    upper = world.rigidObject("upper").getID()
    try:
        result = sim.getClosestPoints(id_a, upper, distance, link_a=link)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert message.startswith("getClosestPoints:")
        assert any(word in message for word in ("entity ID", "max_distance", "link", "ID"))
        return
    assert isinstance(result, list)
    for c in result:
        assert math.isfinite(c.distance) and abs(c.distance) <= 1e4


@settings(max_examples=40, deadline=None)
@given(lo=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=4),
       group=st.one_of(st.integers(-2**40, 2**40), st.floats(), st.none()))
def test_hostile_boxes_and_filter_bits(stack_sim, lo, group):
    world, sim = stack_sim
    upper = world.rigidObject("upper").getID()
    try:
        sim.getOverlappingObjects(lo, [1, 1, 1])
    except (ValueError, TypeError) as error:
        assert str(error).startswith("getOverlappingObjects:")
    try:
        sim.setCollisionFilterGroupMask(upper, -1, group, -1)
    except (ValueError, TypeError) as error:
        assert str(error).startswith("setCollisionFilterGroupMask:")
    sim.setCollisionFilterGroupMask(upper, -1, 1, -1)
