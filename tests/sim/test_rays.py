"""Simulator.rayCast (sim/rays.py) against PyBullet's rayTestBatch on the same scenes: random
primitives on a plane, pybullet_data's concave terrain mesh and convex duck, and the kuka iiwa
at a random configuration; plus the RayHits contract and the entity/link naming."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.sim.rays import RayHits

pybullet = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")
DATA = Path(pybullet_data.getDataPath())

# What PyBullet 3.2.7's rayTestBatch is (measured; bench and these tests):
# - planes and triangle meshes: exact triangle tests (btTriangleRaycastCallback);
# - convex shapes (sphere, box, capsule, cylinder, hulls): GJK convex casts accurate to about
#   1 mm (hit points up to 1e-3 m off a sphere's surface), and the hulls of URDF / mesh shapes
#   carry Bullet's 1 mm collision margin (gUrdfDefaultCollisionMargin = 0.001): they are the
#   hull grown by 1 mm;
# - a ray starting inside a convex solid hits it at fraction 0 for about half the directions
#   (GJK's first support point decides), else not at all. We never hit a solid from inside.
# So distances agree to 1e-6 m only where PyBullet is exact (planes: 1e-12 here; meshes
# 1e-5), and within PyBullet's own tolerance on convex shapes, where our points are checked
# against closed-form surfaces instead (tests/engine/test_raycast.py and below).
GJK_GRAZE = 3e-3        # [m] rays this close to a silhouette may graze PyBullet's grown shapes
GJK_TOLERANCE = 1e-3    # [m] PyBullet's hit points off a convex surface (along our normal)
MARGIN = 1e-3           # [m] Bullet's collision margin around URDF / mesh convex hulls


@pytest.fixture
def client():
    cid = pybullet.connect(pybullet.DIRECT)
    yield cid
    pybullet.disconnect(cid)


def _world(path: Path, text: str):
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    return world, sim_node.Simulator(world)


def _pybullet_hits(cid, origins, ends, threads=1):
    out = []
    for start in range(0, len(origins), pybullet.MAX_RAY_INTERSECTION_BATCH_SIZE):
        out += pybullet.rayTestBatch(origins[start:start + pybullet.MAX_RAY_INTERSECTION_BATCH_SIZE].tolist(),
                                     ends[start:start + pybullet.MAX_RAY_INTERSECTION_BATCH_SIZE].tolist(),
                                     numThreads=threads, physicsClientId=cid)
    body = np.array([h[0] for h in out])
    link = np.array([h[1] for h in out])
    fraction = np.array([h[2] for h in out])
    normal = np.array([h[4] for h in out])
    return body, link, fraction, normal


def _grazing(sim, origins, ends, scale):
    """Rays whose hit body or link changes when the ray moves sideways by `scale` in any of 8
    directions around it (45 deg apart: a surface within scale cos 22.5 deg of the ray is
    reached): our own caster's answer, a property of the geometry, not of either engine."""
    base = sim.rayCast(origins, ends, threads=1)
    d = ends - origins
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    helper = np.where((np.abs(d[:, 0]) < 0.9)[:, None], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(d, u)
    flips = np.zeros(len(origins), bool)
    for k in range(8):
        shift = scale * (math.cos(k * math.pi / 4) * u + math.sin(k * math.pi / 4) * v)
        nudged = sim.rayCast(origins + shift, ends + shift, threads=1)
        flips |= nudged.body != base.body
        flips |= nudged.link != base.link
    return flips


def _compare(sim, cid, origins, ends, body_map, link_map, rng, graze, min_hits):
    """Ours and PyBullet's answers side by side. Asserts: away from grazing rays (within
    `graze`) and from rays PyBullet sees starting inside a solid (fraction 0; few), the hit
    body and link are identical. Returns (ours, PyBullet's hit points, its normals, kept hits,
    the along-ray distance between the two hits [m], PyBullet's hit point's offset from ours
    along our normal [m])."""
    ours = sim.rayCast(origins, ends)
    pb_body, pb_link, pb_fraction, pb_normal = _pybullet_hits(cid, origins, ends)
    inside = (pb_body >= 0) & (pb_fraction == 0.0)
    assert inside.mean() < 0.02
    keep = ~_grazing(sim, origins, ends, graze) & ~inside
    assert keep.mean() > 0.95
    theirs_body = np.array([body_map.get(b, -99) if b >= 0 else -1 for b in pb_body])
    theirs_link = np.array([link_map.get((b, l), -99) if b >= 0 else -1
                            for b, l in zip(pb_body, pb_link)])
    mismatch = np.nonzero(keep & ((ours.body != theirs_body) | (ours.link != theirs_link)))[0]
    assert mismatch.size == 0, (
        f"{mismatch.size} rays disagree, e.g. ray {mismatch[0]}: ours body {ours.body[mismatch[0]]} "
        f"link {ours.link[mismatch[0]]} fraction {ours.fraction[mismatch[0]]}; PyBullet "
        f"{theirs_body[mismatch[0]]} {theirs_link[mismatch[0]]} {pb_fraction[mismatch[0]]}")
    hit = keep & (ours.body >= 0)
    assert hit.sum() >= min_hits
    np.testing.assert_array_equal(ours.fraction[keep & ~hit], 1.0)
    d = ends - origins
    along = (pb_fraction - ours.fraction) * np.linalg.norm(d, axis=1)
    pb_point = origins + pb_fraction[:, None] * d
    offset = np.einsum("ij,ij->i", pb_point - ours.point, ours.normal)
    return ours, pb_normal, hit, along, offset


def _random_rays(rng, n, lo, hi):
    return (np.ascontiguousarray(rng.uniform(lo, hi, (n, 3))),
            np.ascontiguousarray(rng.uniform(lo, hi, (n, 3))))


def _matrix(q):
    from transforms3d.quaternions import quat2mat
    return quat2mat([q[3], q[0], q[1], q[2]])


def _quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def test_random_rays_through_primitives_on_a_plane_agree_with_pybullet(tmp_path, client):
    rng = np.random.default_rng(12)
    kinds = ["sphere", "box", "capsule", "cylinder"]
    yaml = "rigid_objects:\n"
    body_map = {}
    shapes = []     # (kind, centre, R, size: radius / full box sizes / (radius, length))
    pb_plane = pybullet.createMultiBody(0, pybullet.createCollisionShape(pybullet.GEOM_PLANE),
                                        physicsClientId=client)
    for i in range(16):
        kind = kinds[i % 4]
        position = rng.uniform([-2, -2, 0.3], [2, 2, 1.5]).round(4)
        q = _quat(rng)
        if kind == "sphere":
            r = round(float(rng.uniform(0.1, 0.4)), 3)
            geometry = f"{{sphere: {r}}}"
            shape = pybullet.createCollisionShape(pybullet.GEOM_SPHERE, radius=r, physicsClientId=client)
        elif kind == "box":
            half = rng.uniform(0.05, 0.4, 3).round(3)
            geometry = f"{{box: {(2 * half).tolist()}}}"
            shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half.tolist(),
                                                  physicsClientId=client)
        else:
            r, h = (float(x) for x in rng.uniform([0.05, 0.1], [0.3, 0.8]).round(3))
            geometry = f"{{{kind}: [{r}, {h}]}}"
            shape = pybullet.createCollisionShape(
                pybullet.GEOM_CAPSULE if kind == "capsule" else pybullet.GEOM_CYLINDER,
                radius=r, height=h, physicsClientId=client)
        yaml += (f"  - name: o{i}\n    geometry: {geometry}\n    mass: 1.0\n"
                 f"    pose: {{position: {position.tolist()}, orientation: {q.tolist()}}}\n")
        shapes.append((kind, position, _matrix(q),
                       r if kind == "sphere" else 2 * half if kind == "box" else np.array([r, h])))
        pb = pybullet.createMultiBody(1.0, shape, basePosition=position.tolist(),
                                      baseOrientation=q.tolist(), physicsClientId=client)
        body_map[pb] = i
    yaml += "terrains:\n  - name: ground\n    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}\n"
    world, sim = _world(tmp_path / "prims.yaml", yaml)
    body_map = {pb: world.rigidObject(i).getID() for pb, i in body_map.items()}
    body_map[pb_plane] = world.terrain(0).getID()
    link_map = {(pb, -1): -1 for pb in body_map}
    origins, ends = _random_rays(rng, 4000, [-3, -3, -0.5], [3, 3, 2.5])
    # and rays from above onto the pile, like a sensor's
    top = np.tile([0.0, 0.0, 4.0], (2000, 1))
    down = np.column_stack([rng.uniform(-3, 3, (2000, 2)), np.full(2000, -1.0)])
    origins = np.concatenate([origins, top])
    ends = np.concatenate([ends, down])
    ours, pb_normal, hit, along, offset = _compare(sim, client, origins, ends, body_map,
                                                   link_map, rng, GJK_GRAZE, 1500)
    # the plane: PyBullet is exact there, and so are we
    plane = hit & (ours.body == world.terrain(0).getID())
    assert plane.sum() > 500
    assert np.abs(along[plane]).max() <= 1e-9
    np.testing.assert_allclose(ours.normal[plane], pb_normal[plane], atol=1e-12)
    # the solids: PyBullet's GJK casts land within its tolerance of our points ...
    solid = hit & ~plane
    assert np.abs(offset[solid]).max() <= GJK_TOLERANCE
    # ... and ours lie on the closed-form surfaces, with their outward normals
    checked = set()
    for i, (kind, position, R, size) in enumerate(shapes):
        mine = solid & (ours.body == world.rigidObject(i).getID())
        x = (ours.point[mine] - position) @ R              # shape frame
        n = ours.normal[mine] @ R
        if kind == "sphere":
            gap, grad = np.linalg.norm(x, axis=1) - size, x / size
        elif kind == "box":
            excess = np.abs(x) - size / 2
            axis = np.argmax(excess, axis=1)
            gap = excess.max(axis=1)
            grad = np.zeros_like(x)
            grad[np.arange(len(x)), axis] = np.sign(x[np.arange(len(x)), axis])
        elif kind == "capsule":
            r, h = size
            core = np.column_stack([0 * x[:, 0], 0 * x[:, 0], np.clip(x[:, 2], -h / 2, h / 2)])
            gap = np.linalg.norm(x - core, axis=1) - r
            grad = (x - core) / r
        else:
            r, h = size
            radial = np.linalg.norm(x[:, :2], axis=1) - r
            cap = np.abs(x[:, 2]) - h / 2
            gap = np.maximum(radial, cap)
            grad = np.where((radial > cap)[:, None],
                            np.column_stack([x[:, :2] / r, 0 * x[:, 0]]),
                            np.column_stack([0 * x[:, :2], np.sign(x[:, 2])]))
        np.testing.assert_allclose(gap, 0.0, atol=1e-9)
        np.testing.assert_allclose(n, grad, atol=1e-9)
        if mine.any():
            checked.add(kind)
    assert checked == set(kinds)


def test_rays_onto_pybullet_data_s_terrain_mesh_and_convex_duck_agree(tmp_path, client):
    # terrain.obj (30 x 30 m, concave) as a triangle mesh on both sides; duck.obj (one object)
    # as a free body, which both we and PyBullet collide as the convex hull of its vertices
    rng = np.random.default_rng(5)
    scale = 0.05
    terrain = pybullet.createCollisionShape(pybullet.GEOM_MESH, fileName=str(DATA / "terrain.obj"),
                                            flags=pybullet.GEOM_FORCE_CONCAVE_TRIMESH,
                                            physicsClientId=client)
    pb_terrain = pybullet.createMultiBody(0, terrain, physicsClientId=client)
    duck_position = [0.5, -0.3, 0.6]
    duck_q = _quat(rng)
    duck = pybullet.createCollisionShape(pybullet.GEOM_MESH, fileName=str(DATA / "duck.obj"),
                                         meshScale=[scale] * 3, physicsClientId=client)
    pb_duck = pybullet.createMultiBody(1.0, duck, basePosition=duck_position,
                                       baseOrientation=duck_q.tolist(), physicsClientId=client)
    world, sim = _world(tmp_path / "meshes.yaml", f"""
rigid_objects:
  - name: duck
    geometry: {{mesh: {DATA / 'duck.obj'}, scale: [{scale}, {scale}, {scale}]}}
    mass: 1.0
    pose: {{position: {duck_position}, orientation: {duck_q.tolist()}}}
terrains:
  - name: terrain
    geometry: {{mesh: {DATA / 'terrain.obj'}}}
""")
    body_map = {pb_terrain: world.terrain(0).getID(), pb_duck: world.rigidObject(0).getID()}
    link_map = {(pb, -1): -1 for pb in body_map}
    origins, ends = _random_rays(rng, 3000, [-8, -8, -1], [8, 8, 2])
    # and at the duck from all around
    around = rng.normal(size=(3000, 3))
    around *= 0.5 / np.linalg.norm(around, axis=1, keepdims=True)
    origins = np.concatenate([origins, duck_position + around])
    ends = np.concatenate([ends, duck_position + rng.uniform(-0.04, 0.04, (3000, 3))])
    ours, pb_normal, hit, along, offset = _compare(sim, client, origins, ends, body_map,
                                                   link_map, rng, GJK_GRAZE, 1000)
    ground = hit & (ours.body == world.terrain(0).getID())
    duck = hit & (ours.body == world.rigidObject(0).getID())
    assert ground.sum() > 1000 and duck.sum() > 200
    # the triangle mesh: the same point to 1e-5 m (PyBullet keeps the vertices in float32:
    # 1e-6 relative at 15 m) and the same face normal
    assert np.abs(offset[ground]).max() <= 1e-5
    assert np.abs(along[ground]).max() <= 1e-5 / 0.05 and np.median(np.abs(along[ground])) < 1e-6
    # (a ray within float32 rounding of an edge between two triangles may take either's normal)
    same = (np.abs(ours.normal[ground] - pb_normal[ground]) <= 1e-5).all(axis=1)
    assert same.mean() >= 0.995
    # the hull: PyBullet's lies 1 mm outside ours (its margin; its points are further along
    # our outward normal), found to its GJK tolerance
    assert np.abs(offset[duck] - MARGIN).max() <= GJK_TOLERANCE
    assert np.median(offset[duck]) == pytest.approx(MARGIN, abs=2e-4)


def test_rays_at_the_kuka_iiwa_name_its_links_as_pybullet_does(tmp_path, client):
    rng = np.random.default_rng(9)
    urdf = DATA / "kuka_iiwa" / "model.urdf"
    pb = pybullet.loadURDF(str(urdf), useFixedBase=True, physicsClientId=client)
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(urdf), fixed_base=True)
    lower, upper = (np.asarray(x) for x in robot.getJointLimits())
    q = rng.uniform(np.maximum(lower, -2.0), np.minimum(upper, 2.0))
    robot.setConfig(q)
    sim = sim_node.Simulator(world)
    names = robot.getJointNames()
    for j in range(pybullet.getNumJoints(pb, physicsClientId=client)):
        info = pybullet.getJointInfo(pb, j, physicsClientId=client)
        if info[1].decode() in names:
            pybullet.resetJointState(pb, j, q[names.index(info[1].decode())], physicsClientId=client)
    link_index = {robot.link(i).getName(): i for i in range(robot.numLinks())}
    link_map = {(pb, -1): link_index[pybullet.getBodyInfo(pb, physicsClientId=client)[0].decode()]}
    for j in range(pybullet.getNumJoints(pb, physicsClientId=client)):
        link_map[(pb, j)] = link_index[pybullet.getJointInfo(pb, j, physicsClientId=client)[12].decode()]
    body_map = {pb: robot.getID()}
    # rays from a shell around the arm through its workspace
    n = 6000
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    origins = np.ascontiguousarray(direction * 1.6 + [0, 0, 0.6])
    ends = np.ascontiguousarray(rng.uniform([-0.6, -0.6, 0.0], [0.6, 0.6, 1.3], (n, 3)))
    ours, pb_normal, hit, along, offset = _compare(sim, client, origins, ends, body_map,
                                                   link_map, rng, GJK_GRAZE, 400)
    assert len(set(ours.link[hit].tolist())) >= 6       # most links are seen
    # PyBullet's link hulls lie 1 mm outside ours (its margin), found to its GJK tolerance
    assert np.abs(offset[hit] - MARGIN).max() <= GJK_TOLERANCE
    assert np.median(offset[hit]) == pytest.approx(MARGIN, abs=2e-4)


def test_ray_hits_is_a_frozen_dataclass_that_unpacks_and_one_ray_drops_the_axis(tmp_path):
    world, sim = _world(tmp_path / "w.yaml", """
rigid_objects:
  - name: ball
    geometry: {sphere: 0.5}
    mass: 1.0
    pose: {position: [0, 0, 1]}
terrains:
  - name: ground
    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}
""")
    hits = sim.rayCast([[0, 0, 3], [2, 0, 3], [2, 0, 3]], [[0, 0, -1], [2, 0, -1], [2, 0, 2]])
    assert [f.name for f in dataclasses.fields(RayHits)] == ["fraction", "body", "link", "point",
                                                              "normal"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        hits.fraction = None
    fraction, body, link, point, normal = hits
    np.testing.assert_allclose(fraction, [1.5 / 4, 3 / 4, 1.0], atol=1e-12)
    assert body.tolist() == [world.rigidObject(0).getID(), world.terrain(0).getID(), -1]
    assert link.tolist() == [-1, -1, -1]
    assert body.dtype == link.dtype == np.int64
    np.testing.assert_allclose(point, [[0, 0, 1.5], [2, 0, 0], [2, 0, 2]], atol=1e-12)
    np.testing.assert_allclose(normal, [[0, 0, 1], [0, 0, 1], [0, 0, 0]], atol=1e-12)
    one = sim.rayCast([0, 0, 3], [0, 0, -1])
    assert one.fraction.shape == () and one.point.shape == (3,) and one.normal.shape == (3,)
    assert int(one.body) == world.rigidObject(0).getID() and float(one.fraction) == pytest.approx(0.375)
    # the mask against the bodies' groups (default group 1)
    assert int(sim.rayCast([0, 0, 3], [0, 0, -1], mask=2).body) == -1
    with pytest.raises(ValueError, match=r"rayCast: origins and ends must both have shape"):
        sim.rayCast([[0, 0, 3]], [0, 0, -1])
    with pytest.raises(ValueError, match=r"ends\[0, 2\] = nan"):
        sim.rayCast([0, 0, 3], [0, 0, math.nan])
    with pytest.raises(ValueError, match=r"arrays of numbers"):
        sim.rayCast("up", [0, 0, 1])


def test_a_ray_cast_sees_a_robot_after_setConfig_and_after_a_step(tmp_path):
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(DATA / "kuka_iiwa" / "model.urdf"), fixed_base=True)
    sim = sim_node.Simulator(world)     # nothing else to collide with: steps skip its placement
    # a ray along y at the height of the upright arm's top links
    o, e = [0.0, -1.0, 1.1], [0.0, 1.0, 1.1]
    assert int(sim.rayCast(o, e).body) == robot.getID()
    q = np.zeros(len(robot.getJointNames()))
    q[1] = math.pi / 2                  # shoulder down: the arm lies along x
    sim.controller(0).setPIDCommand(q, np.zeros_like(q))
    sim.simulate(3.0)
    assert int(sim.rayCast(o, e).body) == -1
    sim.setActualConfig(0, np.zeros_like(q))
    assert int(sim.rayCast(o, e).body) == robot.getID()


def test_a_ray_cast_changes_no_bit_of_the_run(tmp_path):
    path = Path(__file__).resolve().parents[2] / "data" / "worlds" / "box_pile.yaml"
    runs = []
    for ask in (False, True):
        world = sim_node.WorldModel()
        world.readFile(path)
        sim = sim_node.Simulator(world)
        for _ in range(40):
            sim.simulate(0.002)
            if ask:
                sim.rayCast([[0, 0, 2]] * 100, np.random.default_rng(1).uniform(-1, 1, (100, 3)))
        runs.append(sim.getState())
    assert runs[0] == runs[1]
