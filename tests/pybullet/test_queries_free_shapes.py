"""getClosestPoints of free collision shapes (collisionShapeA / B at given poses, alone or with
bodies) against the real PyBullet 3.2.7 on the same shapes.

Tolerances (measured over 3,000 random pairs; README "Queries, camera, dynamics, IK
(decisions)"): spheres, boxes and capsules agree to 1e-12 m in distance and 1e-7 m in points
(compared to 1e-4 m).
Cylinders are where Bullet's GJK / EPA approximate a curved rim: its distances differ by up to
6e-5 m apart (compared to 1e-4 m) and 1.4e-3 m in deep overlaps (compared to 2e-3 m), its
witness points slide along the rim where the distance is flat (1.6e-3 m: compared to 5e-3 m).
Ours are exact there: checked against the closed form of a sphere and a rounded cylinder.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p

pb = pytest.importorskip("pybullet")
pybullet_data = pytest.importorskip("pybullet_data")

KINDS = {"sphere": pb.GEOM_SPHERE, "box": pb.GEOM_BOX, "capsule": pb.GEOM_CAPSULE,
         "cylinder": pb.GEOM_CYLINDER}
MARGIN = 0.001          # PyBullet's collision margin of created shapes [m]


@pytest.fixture(scope="module")
def clients():
    ours = p.connect(pb.DIRECT)
    ref = pb.connect(pb.DIRECT)
    for module, client in ((p, ours), (pb, ref)):
        module.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    yield ours, ref
    p.disconnect(physicsClientId=ours)
    pb.disconnect(physicsClientId=ref)


def _both(clients, make):
    """make(module, client) in sim_node and in PyBullet: (ours, PyBullet's)."""
    ours, ref = clients
    return make(p, ours), make(pb, ref)


def _check_row(row):
    """PyBullet's 14-tuple of Python numbers; point_a - point_b = distance * normal; no force."""
    assert isinstance(row, tuple) and len(row) == 14
    flag, ua, ub, la, lb, pa, pb_, n, d, fn, f1, d1, f2, d2 = row
    assert all(isinstance(x, int) for x in (flag, ua, ub, la, lb))
    assert all(isinstance(x, float) for x in (d, fn, f1, f2))
    np.testing.assert_allclose(np.subtract(pa, pb_), d * np.array(n), atol=1e-9)
    assert abs(np.linalg.norm(n) - 1.0) < 1e-9
    assert (flag, fn, f1, f2) == (0, 0.0, 0.0, 0.0)


def _quaternion(values):
    q = np.asarray(values, dtype=float)
    return (q / np.linalg.norm(q)).tolist()


sizes = st.floats(0.02, 0.3)
shapes = st.tuples(st.sampled_from(sorted(KINDS)), sizes, st.floats(0.02, 0.6),
                   st.tuples(sizes, sizes, sizes))
positions = st.tuples(*[st.floats(-0.6, 0.6)] * 3)
# B is placed off A's grid by this and turned by TWIST: shapes exactly concentric or with
# exactly parallel faces have no unique witness points (either answer is right) and meet the
# EPA gap below (the test's own strategies would find them first: they shrink to 0 and 1)
OFF_GRID = np.array([0.0123, -0.0071, 0.0037])
TWIST = (0.0061, -0.0083, 0.0047, 0.99992)      # B turned off A's faces likewise (x, y, z, w)
quaternions = st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(
    lambda q: np.linalg.norm(q) > 0.2)


def _create(module, client, shape):
    kind, radius, height, half = shape
    return module.createCollisionShape(KINDS[kind], radius=radius, height=height,
                                       halfExtents=list(half), physicsClientId=client)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape_a=shapes, shape_b=shapes, pos_a=positions, pos_b=positions, orn_a=quaternions,
       orn_b=quaternions, gap=st.sampled_from([-2e-3, 2e-3]))
def test_random_shape_pairs_measure_as_pybullet(clients, shape_a, shape_b, pos_a, pos_b, orn_a,
                                                orn_b, gap):
    """Sphere, box, capsule and cylinder pairs at random poses, apart or overlapping: one row
    each, PyBullet's ids (-1 bodies, -2 links), distance, normal and points; a threshold just
    below or above the distance keeps or drops the row in both."""
    def query(module, client, distance):
        a, b = _create(module, client, shape_a), _create(module, client, shape_b)
        rows = module.getClosestPoints(
            -1, -1, distance, collisionShapeA=a, collisionShapeB=b,
            collisionShapePositionA=list(pos_a),
            collisionShapePositionB=(np.asarray(pos_b) + OFF_GRID).tolist(),
            collisionShapeOrientationA=_quaternion(orn_a),
            collisionShapeOrientationB=pb.multiplyTransforms(
                [0, 0, 0], _quaternion(orn_b), [0, 0, 0], TWIST)[1],
            physicsClientId=client)
        if module is p:     # (PyBullet warns "TODO: dealloc" and keeps them)
            p.removeCollisionShape(a, physicsClientId=client)
            p.removeCollisionShape(b, physicsClientId=client)
        return rows
    rows, rows_ref = _both(clients, lambda module, client: query(module, client, 10.0))
    assert len(rows) == len(rows_ref) == 1
    row, ref = rows[0], rows_ref[0]
    _check_row(row)
    assert row[1:5] == ref[1:5] == (-1, -1, -2, -2)
    cylinder = "cylinder" in (shape_a[0], shape_b[0])
    assert row[8] == pytest.approx(ref[8], abs=2e-3 if cylinder and ref[8] < 0 else 1e-4)
    tol = 5e-3 if cylinder else 1e-4
    for k in (5, 6):
        np.testing.assert_allclose(row[k], ref[k], atol=tol, err_msg=f"point {k - 4}")
    np.testing.assert_allclose(row[7], ref[7], atol=1e-2 if cylinder else 1e-4)
    # a row iff its distance <= the threshold, in both
    assert len(query(p, clients[0], row[8] + gap)) == len(query(pb, clients[1], ref[8] + gap)) \
        == (1 if gap > 0 else 0)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(radius=st.floats(0.02, 0.3), height=st.floats(0.02, 0.6), centre=positions,
       orn=quaternions)
def test_a_sphere_and_a_cylinder_are_the_closed_form_of_the_rounded_cylinder(
        clients, radius, height, centre, orn):
    """Ours is exact where Bullet's GJK is not: a sphere (r 0.1) centred at c against a
    cylinder rounded by the 1 mm margin is |c - inner cylinder| - 1 mm - 0.1."""
    ours, _ = clients
    q = _quaternion(orn)
    R = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
    c = R.T @ np.asarray(centre)
    r, h = radius - MARGIN, height / 2 - MARGIN
    radial, axial = math.hypot(c[0], c[1]) - r, abs(c[2]) - h
    outside = math.hypot(max(radial, 0.0), max(axial, 0.0))
    exact = (outside if outside > 0 else max(radial, axial)) - MARGIN - 0.1
    sphere = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=ours)
    cylinder = p.createCollisionShape(pb.GEOM_CYLINDER, radius=radius, height=height,
                                      physicsClientId=ours)
    rows = p.getClosestPoints(-1, -1, 10.0, collisionShapeA=sphere, collisionShapeB=cylinder,
                              collisionShapePositionA=list(centre),
                              collisionShapeOrientationB=q, physicsClientId=ours)
    p.removeCollisionShape(sphere, physicsClientId=ours)
    p.removeCollisionShape(cylinder, physicsClientId=ours)
    assert rows[0][8] == pytest.approx(exact, abs=1e-9)


def _box_overlap(half_a, R_a, p_a, half_b, R_b, p_b) -> float:
    """The separating axis test of two boxes: the least overlap over the 15 axes (face normals
    and edge cross products) [m]; for two overlapping boxes, their penetration depth."""
    axes = [R_a[:, i] for i in range(3)] + [R_b[:, i] for i in range(3)]
    axes += [np.cross(R_a[:, i], R_b[:, j]) for i in range(3) for j in range(3)]
    least = math.inf
    for axis in axes:
        norm = np.linalg.norm(axis)
        if norm < 1e-9:
            continue
        axis = axis / norm
        reach = half_a @ np.abs(R_a.T @ axis) + half_b @ np.abs(R_b.T @ axis)
        least = min(least, reach - abs(axis @ (p_b - p_a)))
    return least


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(half_a=st.tuples(sizes, sizes, sizes), half_b=st.tuples(sizes, sizes, sizes),
       offset=st.tuples(*[st.floats(-0.05, 0.05)] * 3), orn=quaternions)
def test_deep_box_overlaps_are_the_separating_axis_depth(clients, half_a, half_b, offset,
                                                         orn):
    """Two boxes overlapping deeply (centres within 5 cm): ours is the separating axis test's
    depth of the boxes shrunk by the margin, plus both margins (1e-9 m), as PyBullet's
    (1e-4 m). B is turned by TWIST (the EPA gap of exactly parallel faces: below)."""
    ours, _ = clients
    q = pb.multiplyTransforms([0, 0, 0], _quaternion(orn), [0, 0, 0], TWIST)[1]
    R_b = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
    inner_a, inner_b = np.asarray(half_a) - MARGIN, np.asarray(half_b) - MARGIN
    depth = _box_overlap(inner_a, np.eye(3), np.zeros(3), inner_b, R_b, np.asarray(offset))
    assume(depth > 1e-3)            # thin boxes 5 cm apart may not overlap

    def query(module, client):
        a = module.createCollisionShape(pb.GEOM_BOX, halfExtents=list(half_a),
                                        physicsClientId=client)
        b = module.createCollisionShape(pb.GEOM_BOX, halfExtents=list(half_b),
                                        physicsClientId=client)
        rows = module.getClosestPoints(-1, -1, 1.0, collisionShapeA=a, collisionShapeB=b,
                                       collisionShapePositionB=list(offset),
                                       collisionShapeOrientationB=q, physicsClientId=client)
        if module is p:
            p.removeCollisionShape(a, physicsClientId=client)
            p.removeCollisionShape(b, physicsClientId=client)
        return rows
    rows, rows_ref = _both(clients, query)
    assert rows[0][8] == pytest.approx(-depth - 2 * MARGIN, abs=1e-9)
    assert rows[0][8] == pytest.approx(rows_ref[0][8], abs=1e-4)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_shapes_against_a_plane_measure_as_pybullet(clients, kind):
    """A turned shape above (and through) a plane shape, either order: distance and the
    shape's lowest point as PyBullet's (a box's corner sharp, a cylinder's rim rounded).
    With the plane as free shape A, PyBullet 3.2.7 reports the row the other way round
    (positionOnA on the shape, the normal from the plane to the shape; with plane bodies it
    does not): ours keeps positionOnA on A and the normal from B to A (README)."""
    q = pb.getQuaternionFromEuler([0.5, 0.3, 0.2])
    for height in (1.0, 0.05):
        for order in ("shape-plane", "plane-shape"):
            def query(module, client):
                shape = _create(module, client, (kind, 0.2, 0.4, (0.2, 0.1, 0.3)))
                plane = module.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client)
                first, second = (shape, plane) if order == "shape-plane" else (plane, shape)
                placed = "A" if order == "shape-plane" else "B"
                return module.getClosestPoints(
                    -1, -1, 10.0, collisionShapeA=first, collisionShapeB=second,
                    physicsClientId=client,
                    **{f"collisionShapePosition{placed}": [0.1, 0.2, height],
                       f"collisionShapeOrientation{placed}": q})
            rows, rows_ref = _both(clients, query)
            assert len(rows) == len(rows_ref) == 1, (kind, height, order)
            row, ref = rows[0], rows_ref[0]
            _check_row(row)
            assert row[8] == pytest.approx(ref[8], abs=1e-6), (kind, order)
            shape_point, plane_point, up = (row[5], row[6], row[7]) if order == "shape-plane" \
                else (row[6], row[5], tuple(-x for x in row[7]))
            np.testing.assert_allclose(up, (0.0, 0.0, 1.0), atol=1e-12)
            # PyBullet's row has the shape's point first either way
            np.testing.assert_allclose(ref[7], (0.0, 0.0, 1.0), atol=1e-9)
            np.testing.assert_allclose(shape_point, ref[5], atol=1e-6)
            assert plane_point[2] == pytest.approx(0.0, abs=1e-12)
            np.testing.assert_allclose(plane_point[:2], shape_point[:2], atol=1e-12)


def test_a_compound_shape_gives_a_row_per_child_as_pybullet(clients):
    """createCollisionShapeArray's children are PyBullet's compound children: one row each
    (PyBullet's order follows its AABB tree: compared as sets)."""
    def query(module, client):
        compound = module.createCollisionShapeArray(
            [pb.GEOM_SPHERE, pb.GEOM_BOX, pb.GEOM_CAPSULE], radii=[0.1, 0.0, 0.05],
            halfExtents=[[0, 0, 0], [0.1, 0.05, 0.2], [0, 0, 0]], lengths=[0, 0, 0.3],
            collisionFramePositions=[[0, 0, 0], [1, 0, 0], [0, 1, 0]],
            collisionFrameOrientations=[[0, 0, 0, 1], pb.getQuaternionFromEuler([0.3, 0, 0]),
                                        [0, 0, 0, 1]], physicsClientId=client)
        sphere = module.createCollisionShape(pb.GEOM_SPHERE, radius=0.1,
                                             physicsClientId=client)
        return module.getClosestPoints(-1, -1, 5.0, collisionShapeA=compound,
                                       collisionShapeB=sphere,
                                       collisionShapePositionA=[0.1, -0.2, 0.3],
                                       collisionShapeOrientationA=pb.getQuaternionFromEuler(
                                           [0.1, 0.2, 0.3]),
                                       collisionShapePositionB=[0.5, 0.4, 0.6],
                                       physicsClientId=client)
    rows, rows_ref = _both(clients, query)
    assert len(rows) == len(rows_ref) == 3
    for row, ref in zip(sorted(rows, key=lambda r: r[8]), sorted(rows_ref, key=lambda r: r[8])):
        _check_row(row)
        assert row[1:5] == ref[1:5] == (-1, -1, -2, -2)
        assert row[8] == pytest.approx(ref[8], abs=1e-6)
        for k in (5, 6, 7):
            np.testing.assert_allclose(row[k], ref[k], atol=1e-6)


def test_a_mesh_shape_is_its_hull_grown_by_the_margin_as_pybullet(clients):
    """GEOM_MESH collides as its convex hull grown by PyBullet's 1 mm margin: cube.obj (8
    vertices) exactly as PyBullet (1e-9 m); duck.obj (one object, 2,108 vertices, not convex)
    within 2e-4 m and never further than PyBullet's, whose hull of a many-vertex mesh is a
    simplified one inside the full hull (measured 4e-5 .. 1.6e-4 m). (An OBJ of several
    objects, as duck_vhacd.obj, is one hull in sim_node and a compound of one hull per object
    in PyBullet: README.)"""
    compared = 0
    q = pb.getQuaternionFromEuler([1.57, 0, 0.4])
    for name, scale, tol in (("cube.obj", 0.2, 1e-9), ("duck.obj", 1.5, 2e-4)):
        for position in ([0.3, 0.1, 0.05], [0.0, 0.0, 0.4], [-0.2, 0.25, -0.1], [1, 1, 1]):
            def query(module, client):
                mesh = module.createCollisionShape(pb.GEOM_MESH, fileName=name,
                                                   meshScale=[scale] * 3,
                                                   physicsClientId=client)
                sphere = module.createCollisionShape(pb.GEOM_SPHERE, radius=0.05,
                                                     physicsClientId=client)
                return module.getClosestPoints(
                    -1, -1, 5.0, collisionShapeA=mesh, collisionShapeB=sphere,
                    collisionShapeOrientationA=q, collisionShapePositionB=position,
                    physicsClientId=client)
            rows, rows_ref = _both(clients, query)
            assert len(rows) == len(rows_ref) == 1
            _check_row(rows[0])
            assert rows[0][8] == pytest.approx(rows_ref[0][8], abs=tol), (name, position)
            assert rows[0][8] <= rows_ref[0][8] + 1e-9, (name, position)
            compared += 1
    assert compared == 8


def test_bodies_and_shapes_mixed_carry_pybullets_ids_and_links(clients):
    """A body against a free shape, a free shape against a body's one link, and a side that is
    a body and a shape at once: PyBullet's rows, ids and links (-2 for the shape, the side's
    body argument as its id)."""
    ours, ref = clients
    made = {}
    for module, client in ((p, ours), (pb, ref)):
        box = module.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.2, 0.1, 0.3],
                                          physicsClientId=client)
        body = module.createMultiBody(0, box, basePosition=[1.0, 0.2, 0.1],
                                      baseOrientation=pb.getQuaternionFromEuler([0.2, 0, 0.4]),
                                      physicsClientId=client)
        kuka = module.loadURDF("kuka_iiwa/model.urdf", [-1.0, 0.0, 0.0], useFixedBase=True,
                               physicsClientId=client)
        for j, q in enumerate([0.4, 0.7, -0.3, -1.2, 0.5, 0.9, 0.0]):
            module.resetJointState(kuka, j, q, physicsClientId=client)
        sphere = module.createCollisionShape(pb.GEOM_SPHERE, radius=0.1,
                                             physicsClientId=client)
        shape = dict(collisionShapeB=sphere, collisionShapePositionB=[0.0, 0.3, 0.6])
        made[module] = (body, kuka, [
            module.getClosestPoints(body, -1, 5.0, physicsClientId=client, **shape),
            module.getClosestPoints(-1, kuka, 5.0, linkIndexB=3, collisionShapeA=sphere,
                                    collisionShapePositionA=[-0.6, 0.3, 0.9],
                                    physicsClientId=client),
            module.getClosestPoints(kuka, -1, 5.0, physicsClientId=client, **shape),
            module.getClosestPoints(body, kuka, 5.0, linkIndexB=6, collisionShapeA=sphere,
                                    collisionShapePositionA=[0.0, 0.0, 1.5],
                                    physicsClientId=client)])
    body, kuka, queries = made[p]
    body_ref, kuka_ref, queries_ref = made[pb]
    assert (body, kuka) == (body_ref, kuka_ref)
    for rows, rows_ref in zip(queries, queries_ref):
        assert [r[1:5] for r in rows] == [r[1:5] for r in rows_ref]
        for row, ref in zip(rows, rows_ref):
            _check_row(row)
            # boxes and spheres exact; kuka's hulls: Bullet's GJK on hulls (5e-5 m)
            assert row[8] == pytest.approx(ref[8], abs=5e-5), row[1:5]
    assert [r[3:5] for r in queries[0]] == [(-1, -2)]
    assert [r[1:5] for r in queries[1]] == [(-1, kuka, -2, 3)]
    assert [r[3] for r in queries[2]] == list(range(-1, 7))
    assert [r[3:5] for r in queries[3]] == [(-2, 6), (-1, 6)]
    assert {r[1] for r in queries[3]} == {body}


BAD_POSES = [[math.nan, 0, 0], [0, math.inf, 0], [1e5, 0, 0], [0, 0], "xyz", None]
BAD_QUATERNIONS = [[0, 0, 0, 0], [math.nan, 0, 0, 1], [0, 0, 1], "w"]


def test_hostile_shape_arguments_raise_pybullet_error_naming_them(clients):
    """Unknown or removed shape ids, NaN / infinite / huge poses, zero or NaN quaternions and an
    empty side are p.error naming the argument (PyBullet warns and returns no rows)."""
    ours, _ = clients
    sphere = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=ours)
    gone = p.createCollisionShape(pb.GEOM_SPHERE, radius=0.1, physicsClientId=ours)
    p.removeCollisionShape(gone, physicsClientId=ours)

    def call(**kwargs):
        args = dict(collisionShapeA=sphere, collisionShapeB=sphere, physicsClientId=ours)
        args.update(kwargs)
        return p.getClosestPoints(-1, -1, 1.0, **args)
    for shape in (gone, 999):
        with pytest.raises(p.error, match=rf"getClosestPoints: collisionShapeB {shape} is not "
                                          r"a collision shape of this client \(its ids: \["):
            call(collisionShapeB=shape)
    with pytest.raises(p.error, match="getClosestPoints: collisionShapeA -3 is not an id"):
        call(collisionShapeA=-3)
    with pytest.raises(p.error, match="getClosestPoints: collisionShapeA must be an int"):
        call(collisionShapeA=True)
    for pose in BAD_POSES[:-1]:
        with pytest.raises(p.error, match="getClosestPoints: collisionShapePositionB"):
            call(collisionShapePositionB=pose)
    for q in BAD_QUATERNIONS:
        with pytest.raises(p.error, match="getClosestPoints: collisionShapeOrientationA"):
            call(collisionShapeOrientationA=q)
    with pytest.raises(p.error, match="getClosestPoints: side A is empty"):
        call(collisionShapeA=-1)
    with pytest.raises(p.error, match="getClosestPoints: bodyB: "):
        p.getClosestPoints(-1, 99, 1.0, collisionShapeA=sphere, physicsClientId=ours)
    assert len(call(collisionShapePositionB=None)) == 1       # None: the origin, as PyBullet


junk = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**40, 2**40),
                 st.text(max_size=2), st.none(), st.booleans(),
                 st.lists(st.one_of(st.floats(), st.integers(-5, 5)), max_size=5))


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape_a=junk, shape_b=junk, position=junk, orientation=junk, distance=junk)
def test_junk_shape_arguments_give_rows_or_pybullet_error(clients, shape_a, shape_b, position,
                                                          orientation, distance):
    """Anything in the shape arguments: a tuple of valid rows or p.error naming
    getClosestPoints, never another exception."""
    ours, _ = clients
    try:
        rows = p.getClosestPoints(-1, -1, distance, collisionShapeA=shape_a,
                                  collisionShapeB=shape_b, collisionShapePositionA=position,
                                  collisionShapeOrientationB=orientation,
                                  physicsClientId=ours)
    except p.error as e:
        assert str(e).startswith("getClosestPoints: "), str(e)
        return
    assert isinstance(rows, tuple)
    for row in rows:
        _check_row(row)


@pytest.mark.xfail(strict=True, reason=(
    "GAP (engine gjk.pyx EPA): two equal boxes overlapping deeply with exactly parallel faces "
    "(one centre, one turned about the common z axis: coplanar top and bottom faces) report a "
    "depth that is not the least (-0.83 m for -0.5 m); another such case (near one centre, "
    "turned by 180 degrees about an axis whose w was 1e-250) came and went with the rotation "
    "matrix's last bits; turned by 1e-6 rad more, or at random poses (the separating axis "
    "test above), EPA is exact"))
def test_equal_concentric_boxes_turned_about_z_overlap_by_their_height(clients):
    """Two 0.5 m cubes with one centre, one turned by 1.29 rad about z: the least translation
    that separates them is 0.5 m along z (the separating axis test's; PyBullet: -0.5)."""
    ours, _ = clients
    q = _quaternion([0.0, 0.0, 0.75, 1.0])
    R_b = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
    half = np.full(3, 0.25)
    assert _box_overlap(half, np.eye(3), np.zeros(3), half, R_b, np.zeros(3)) == \
        pytest.approx(0.5, abs=1e-12)
    box = p.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.25] * 3, physicsClientId=ours)
    rows = p.getClosestPoints(-1, -1, 10.0, collisionShapeA=box, collisionShapeB=box,
                              collisionShapeOrientationB=q, physicsClientId=ours)
    p.removeCollisionShape(box, physicsClientId=ours)
    assert rows[0][8] == pytest.approx(-0.5, abs=1e-9)


@pytest.mark.parametrize("concave", [True, False])
def test_a_concave_triangle_mesh_has_no_margin_a_hull_has_bullets(clients, tmp_path, concave):
    """A sphere (r 0.1) above a flat square mesh (z = 0) at a height 0.5: PyBullet's
    btBvhTriangleMeshShape (GEOM_FORCE_CONCAVE_TRIMESH) measures 0.4 exactly (margin 0); its hull
    of the same square is grown by the 1 mm margin (0.399)."""
    path = tmp_path / "quad.obj"
    path.write_text("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3\nf 1 3 4\n")
    flags = pb.GEOM_FORCE_CONCAVE_TRIMESH if concave else 0

    def make(module, client):
        mesh = module.createCollisionShape(module.GEOM_MESH, fileName=str(path), flags=flags,
                                           physicsClientId=client)
        ground = module.createMultiBody(0, mesh, physicsClientId=client)
        ball = module.createCollisionShape(module.GEOM_SPHERE, radius=0.1, physicsClientId=client)
        body = module.createMultiBody(1, ball, basePosition=[0.2, 0.1, 0.5],
                                      physicsClientId=client)
        rows = module.getClosestPoints(body, ground, 1.0, physicsClientId=client)
        for uid in (body, ground):
            module.removeBody(uid, physicsClientId=client)
        return min(r[8] for r in rows)

    ours, theirs = _both(clients, make)
    expected = 0.4 if concave else 0.4 - MARGIN
    assert theirs == pytest.approx(expected, abs=1e-9)
    assert ours == pytest.approx(expected, abs=1e-9)
