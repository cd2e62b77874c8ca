"""Geometry3D / GeometricPrimitive: bounding boxes, distances and ray casts against Klamp't 0.10.1
(in a subprocess) on primitives and a pybullet_data mesh, closed-form properties (hypothesis),
the geometry() of links, rigid objects and terrains, and hostile input."""
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import sim_node
from sim_node import GeometricPrimitive, Geometry3D
from sim_node.model.errors import ModelLoadError
from klampt_reference import ARM_URDF, run_klampt

AXIS = np.array([1.0, 2.0, 3.0]) / math.sqrt(14.0)
ANGLE = 0.7


def _rotation(axis, angle):
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def _mesh_path():
    pybullet_data = pytest.importorskip("pybullet_data")
    return os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "meshes", "link_1.stl")


def _ours(mesh):
    def prim(kind, *args):
        p = GeometricPrimitive()
        getattr(p, kind)(*args)
        return Geometry3D(p)
    R = _rotation(AXIS, ANGLE)
    g = {"s1": prim("setSphere", [0, 0, 0], 0.5), "s2": prim("setSphere", [1.2, 0.3, 0], 0.4),
         "s3": prim("setSphere", [0.6, 0, 0], 0.3), "a": prim("setAABB", [1, 1, 1], [2, 1.5, 3]),
         "b": prim("setBox", [0, 2, 0], R, [0.5, 0.6, 0.7])}
    m = Geometry3D()
    assert m.loadFile(mesh)
    m.setCurrentTransform(_rotation(np.array([0.0, 0, 1]), 0.3), [0.1, -2, 0.5])
    g["m"] = m
    return g


KLAMPT_SCRIPT = """
import math
from klampt import Geometry3D, GeometricPrimitive
from klampt.math import so3
def prim(kind, *args):
    p = GeometricPrimitive(); getattr(p, kind)(*args); return Geometry3D(p)
R = so3.rotation(AXIS, ANGLE)
g = {"s1": prim("setSphere", [0,0,0], 0.5), "s2": prim("setSphere", [1.2,0.3,0], 0.4),
     "s3": prim("setSphere", [0.6,0,0], 0.3), "a": prim("setAABB", [1,1,1], [2,1.5,3]),
     "b": prim("setBox", [0,2,0], R, [0.5,0.6,0.7])}
m = Geometry3D(); assert m.loadFile(MESH)
m.setCurrentTransform(so3.rotation([0,0,1], 0.3), [0.1,-2,0.5]); g["m"] = m
out = {"bb": {k: [list(x) for x in v.getBBTight()] for k, v in g.items()}, "d": {}, "pt": {},
       "ray": {}}
for a, b in PAIRS:
    r = g[a].distance(g[b]); out["d"][a + b] = [r.d, list(r.cp1), list(r.cp2)]
for k in g:
    for i, p in enumerate(POINTS):
        r = g[k].distance_point(p); out["pt"][k + str(i)] = [r.d, list(r.cp1)]
for k in g:
    for i, (s, d) in enumerate(RAYS):
        n = math.sqrt(sum(x * x for x in d)); d = [x / n for x in d]   # (Klamp't needs |d| = 1)
        hit, pt = g[k].rayCast(s, d); e, pt2 = g[k].rayCast_ext(s, d)
        out["ray"][k + str(i)] = [hit, list(pt) if hit else None, e]
emit(out)
"""
PAIRS = [("s1", "s2"), ("s1", "s3"), ("s1", "a"), ("s1", "b"), ("a", "b"), ("s1", "m"),
         ("a", "m"), ("m", "b")]
POINTS = [[0.3, -0.2, 2.0], [0.05, 0.0, 0.0], [0.1, -2.0, 1.5], [1.5, 1.2, 0.2]]
RAYS = [([5, 5, 5], [-1, -1, -1]), ([0.1, -2, 3], [0.01, -0.005, -1]), ([3, 0.2, 0], [-1, 0, 0]),
        ([0.3, 5, 0.3], [0, -1, 0.05])]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    mesh = _mesh_path()
    return run_klampt(f"AXIS = {AXIS.tolist()!r}\nANGLE = {ANGLE!r}\nMESH = {mesh!r}\n"
                      f"PAIRS = {PAIRS!r}\nPOINTS = {POINTS!r}\nRAYS = {RAYS!r}\n"
                      + KLAMPT_SCRIPT, tmp_path_factory.mktemp("klampt"))


def test_types_and_bounding_boxes_match_klampt(reference):
    g = _ours(_mesh_path())
    assert g["s1"].type() == "Primitive" and g["m"].type() == "TriangleMesh"
    for key, (lo, hi) in reference["bb"].items():
        ours = g[key].getBB()
        np.testing.assert_allclose(ours[0], lo, atol=1e-6, err_msg=key)
        np.testing.assert_allclose(ours[1], hi, atol=1e-6, err_msg=key)


def test_distances_and_closest_points_match_klampt(reference):
    g = _ours(_mesh_path())
    for a, b in PAIRS:
        d, cp1, cp2 = reference["d"][a + b]
        r = g[a].distance(g[b])
        if a + b == "s1s3":
            # overlapping spheres: Klamp't 0.10.1 answers 0, we the signed depth (closed form)
            assert d == 0.0 and r.d == pytest.approx(0.6 - 0.5 - 0.3, abs=1e-9)
            assert g[a].collides(g[b])
            continue
        assert r.d == pytest.approx(d, abs=1e-6), a + b
        assert not g[a].collides(g[b])
        if {a, b} <= {"s1", "s2", "m"} or (a, b) == ("s1", "a"):
            # (Klamp't's box closest points are not in world coordinates; skip those)
            np.testing.assert_allclose(r.cp1, cp1, atol=1e-6, err_msg=a + b)
            np.testing.assert_allclose(r.cp2, cp2, atol=1e-6, err_msg=a + b)
        np.testing.assert_allclose(np.linalg.norm(np.subtract(r.cp1, r.cp2)), r.d, atol=1e-9)


def test_point_distances_match_klampt(reference):
    g = _ours(_mesh_path())
    for key in g:
        for i, p in enumerate(POINTS):
            d, cp1 = reference["pt"][key + str(i)]
            r = g[key].distance_point(p)
            if d == 0.0:
                # inside a solid primitive: Klamp't 0, we the signed depth (sphere: r - |p - c|)
                assert key == "s1" and i == 1
                assert r.d == pytest.approx(0.05 - 0.5, abs=1e-9)
                continue
            assert r.d == pytest.approx(d, abs=1e-6), (key, i)
            np.testing.assert_allclose(r.cp1, cp1, atol=1e-6, err_msg=f"{key} {i}")
            assert r.cp2 == p


def test_ray_casts_match_klampt(reference):
    g = _ours(_mesh_path())
    hits = 0
    for key in g:
        for i, (s, d) in enumerate(RAYS):
            hit, point, element = reference["ray"][key + str(i)]
            ours_hit, ours_point = g[key].rayCast(s, d)
            ours_element, _ = g[key].rayCast_ext(s, d)
            assert ours_hit == hit, (key, i)
            if hit:
                hits += 1
                np.testing.assert_allclose(ours_point, point, atol=1e-6, err_msg=f"{key} {i}")
                if key == "m":
                    assert ours_element == element     # the triangle hit, in file order
                else:
                    assert ours_element == 0
            else:
                assert ours_element == -1 and ours_point == list(map(float, s))
    assert hits >= 4 and reference["ray"]["m1"][0]     # (the mesh is hit, off its triangle edges)


# -- closed forms ----------------------------------------------------------------------------
coord = st.floats(-5, 5, allow_nan=False)
radius = st.floats(0.05, 2, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.tuples(coord, coord, coord), radius, st.tuples(coord, coord, coord), radius)
def test_sphere_sphere_distance_is_the_gap_between_the_surfaces(c1, r1, c2, r2):
    a, b = GeometricPrimitive(), GeometricPrimitive()
    a.setSphere(c1, r1)
    b.setSphere(c2, r2)
    ga, gb = Geometry3D(a), Geometry3D(b)
    gap = float(np.linalg.norm(np.subtract(c1, c2))) - r1 - r2
    if np.linalg.norm(np.subtract(c1, c2)) < 1e-3:
        return                       # concentric: any direction, the depth is still r1 + r2
    r = ga.distance(gb)
    assert r.d == pytest.approx(gap, abs=1e-7)
    assert ga.collides(gb) == (gap <= 0)
    assert ga.withinDistance(gb, 0.1) == (gap <= 0.1 + 1e-12) or abs(gap - 0.1) < 1e-7


@settings(max_examples=60, deadline=None)
@given(st.tuples(coord, coord, coord), st.tuples(radius, radius, radius),
       st.tuples(coord, coord, coord))
def test_point_to_aabb_distance_outside_is_the_clamped_offset(lo, size, p):
    lo = np.array(lo)
    hi = lo + np.array(size)
    box = GeometricPrimitive()
    box.setAABB(lo, hi)
    nearest = np.clip(p, lo, hi)
    outside = float(np.linalg.norm(np.subtract(p, nearest)))
    r = Geometry3D(box).distance_point(p)
    if outside > 1e-6:
        assert r.d == pytest.approx(outside, abs=1e-7)
        np.testing.assert_allclose(r.cp1, nearest, atol=1e-7)
    else:           # inside: minus the distance to the nearest face
        assert r.d == pytest.approx(-min(np.min(p - lo), np.min(hi - p)), abs=1e-7)


@settings(max_examples=60, deadline=None)
@given(st.tuples(coord, coord, coord), radius, st.tuples(coord, coord, coord),
       st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)))
def test_ray_sphere_hit_is_the_first_root_of_the_quadratic(c, r, s, d):
    d = np.array(d)
    if np.linalg.norm(d) < 1e-3:
        return
    u = d / np.linalg.norm(d)
    oc = np.subtract(s, c)
    b, cc = float(oc @ u), float(oc @ oc) - r * r
    disc = b * b - cc
    sphere = GeometricPrimitive()
    sphere.setSphere(c, r)
    hit, point = Geometry3D(sphere).rayCast(s, d)
    if cc > 1e-9 and disc > 1e-9 and -b - math.sqrt(disc) > 1e-9:
        assert hit
        np.testing.assert_allclose(point, s + (-b - math.sqrt(disc)) * u, atol=1e-7)
    elif cc > 1e-9 and (disc < -1e-9 or -b + math.sqrt(max(disc, 0)) < -1e-9):
        assert not hit          # misses, or the sphere is behind the ray


def test_current_transform_moves_queries_and_transform_moves_the_shapes():
    box = GeometricPrimitive()
    box.setAABB([-1, -1, -1], [1, 1, 1])
    g = Geometry3D(box)
    R = _rotation(np.array([0.0, 0.0, 1.0]), math.pi / 4)
    g.setCurrentTransform(R.T.reshape(9).tolist(), [10, 0, 0])     # Klamp't's column-major
    lo, hi = g.getBB()
    np.testing.assert_allclose(lo, [10 - math.sqrt(2), -math.sqrt(2), -1], atol=1e-12)
    np.testing.assert_allclose(hi, [10 + math.sqrt(2), math.sqrt(2), 1], atol=1e-12)
    R_now, t_now = g.getCurrentTransform()
    np.testing.assert_allclose(R_now, R)
    assert g.distance_point([10, 0, 5]).d == pytest.approx(4.0)
    g.transform(np.eye(3), [0, 0, 2])          # the box itself moves up 2 in its frame
    assert g.distance_point([10, 0, 5]).d == pytest.approx(2.0)
    assert g.getCurrentTransform()[1].tolist() == [10, 0, 0]
    g.scale(2.0)
    assert g.distance_point([10, 0, 7]).d == pytest.approx(1.0)   # box z in [2, 6] after scaling
    assert g.getGeometricPrimitive().getType() == "Box"


def test_groups_report_the_element_hit():
    a, b = GeometricPrimitive(), GeometricPrimitive()
    a.setSphere([0, 0, 0], 1)
    b.setAABB([3, -1, -1], [4, 1, 1])
    g = Geometry3D()
    g.setGroup()
    g.setElement(0, Geometry3D(a))
    g.setElement(1, Geometry3D(b))
    assert g.type() == "Group" and g.numElements() == 2
    assert g.rayCast_ext([10, 0, 0], [-1, 0, 0]) == (1, [4.0, 0.0, 0.0])
    assert g.rayCast_ext([-10, 0, 0], [1, 0, 0]) == (0, [-1.0, 0.0, 0.0])
    assert g.distance_point([2, 0, 0]).d == pytest.approx(1.0)
    np.testing.assert_allclose(g.getBB()[0], [-1, -1, -1])
    np.testing.assert_allclose(g.getBB()[1], [4, 1, 1])


# -- geometry() of world items ------------------------------------------------------------------
def test_link_geometry_is_placed_at_the_link_and_object_geometry_writes_back(tmp_path):
    world = sim_node.WorldModel()
    robot = world.loadRobot(ARM_URDF.replace('<link name="l1">', '<link name="l1"><collision>'
                                             '<geometry><box size="0.2 0.2 0.2"/></geometry>'
                                             '</collision>'), fixed_base=True)
    q = robot.getConfig()
    q[0] = 0.5
    robot.setConfig(q)
    g = robot.link("l1").geometry()
    R, t = robot.link("l1").getTransform()
    np.testing.assert_allclose(g.getCurrentTransform()[1], t)
    lo, hi = g.getBB()
    np.testing.assert_allclose((lo + hi) / 2, t, atol=1e-12)
    # a rigid object's geometry() is bound to it, as Klamp't's reference
    obj = world.loadRigidObject(_mesh_path(), t=[0, 0, 3])
    sphere = GeometricPrimitive()
    sphere.setSphere([0, 0, 0.1], 0.25)
    obj.geometry().setGeometricPrimitive(sphere)
    (element,) = obj.getCollisionGeometry()
    assert isinstance(element.shape, sim_node.model.geometry.Sphere)
    np.testing.assert_allclose(element.origin.p, [0, 0, 0.1])
    assert obj.geometry().distance_point([0, 0, 4]).d == pytest.approx(1 - 0.1 - 0.25)
    # a terrain's too, and a simulator built afterwards collides with the new shape
    terrain = world.loadTerrain(_mesh_path())
    assert terrain.geometry().type() == "TriangleMesh"


def test_hostile_input_gives_clear_errors(tmp_path):
    g = Geometry3D()
    assert g.empty() and g.type() == ""
    with pytest.raises(ModelLoadError, match="nowhere.stl.*no such file"):
        g.loadFile(tmp_path / "nowhere.stl")
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"\x00garbage")
    with pytest.raises(ModelLoadError, match="bad.stl"):
        g.loadFile(bad)
    assert g.empty()                                  # nothing half-loaded
    with pytest.raises(ValueError, match="two non-empty"):
        g.distance(g)
    s = GeometricPrimitive()
    with pytest.raises(ValueError, match="finite"):
        s.setSphere([0, float("nan"), 0], 1)
    with pytest.raises(ValueError, match="positive"):
        s.setSphere([0, 0, 0], -1)
    s.setSphere([0, 0, 0], 1)
    g = Geometry3D(s)
    with pytest.raises(ValueError, match="finite"):
        g.setCurrentTransform(np.eye(3), [0, math.inf, 0])
    with pytest.raises(ValueError, match="not a rotation"):
        g.setCurrentTransform(2 * np.eye(3), [0, 0, 0])
    with pytest.raises(ValueError, match="direction d is zero"):
        g.rayCast([5, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="uniform"):
        g.scale(1, 2, 3)
    with pytest.raises(ValueError, match="not a GeometricPrimitive"):
        Geometry3D().getGeometricPrimitive()


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0,
                          max_size=12),
                 st.lists(st.lists(st.floats(-2, 2), min_size=3, max_size=3), min_size=3,
                          max_size=3), st.text(max_size=5), st.none()),
       st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=4))
def test_any_transform_is_a_rotation_or_a_value_error(R, t):
    sphere = GeometricPrimitive()
    sphere.setSphere([0, 0, 0], 1)
    g = Geometry3D(sphere)
    try:
        g.setCurrentTransform(R, t)
    except ValueError:
        assert g.getCurrentTransform()[1].tolist() == [0, 0, 0]      # unchanged
        return
    R_now, t_now = g.getCurrentTransform()
    np.testing.assert_allclose(R_now @ R_now.T, np.eye(3), atol=1e-6)
    assert np.linalg.det(R_now) > 0 and np.all(np.isfinite(t_now))
    assert g.distance_point(t_now).d == pytest.approx(-1.0)
