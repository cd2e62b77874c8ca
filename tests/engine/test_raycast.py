"""queries/raycast.pyx (Scene.ray_cast): rays against every shape type, checked against
closed-form geometry; the hit rules (inside, grazing, two-sided surfaces) as PyBullet's."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node
from sim_node.engine.api import MAX_RAYS

ATOL = 1e-12


def _world(tmp_path, objects="", terrains="", name="world.yaml"):
    path = tmp_path / name
    path.write_text(("rigid_objects:\n" + objects if objects else "")
                    + ("terrains:\n" + terrains if terrains else ""))
    world = sim_node.WorldModel()
    world.readFile(path)
    return world, sim_node.Simulator(world)


def _object(name, geometry, position=(0, 0, 0), orientation=(0, 0, 0, 1)):
    return (f"  - name: {name}\n    geometry: {geometry}\n    mass: 1.0\n"
            f"    pose: {{position: {list(position)}, orientation: {list(orientation)}}}\n")


def _cast(sim, origins, ends, **kw):
    return sim.engine.ray_cast(np.atleast_2d(origins), np.atleast_2d(ends), **kw)


def _one(sim, origin, end):
    f, shape, point, normal = _cast(sim, origin, end)
    return f[0], shape[0], point[0], normal[0]


def test_a_ray_enters_a_sphere_at_the_near_root_with_the_radial_normal(tmp_path):
    world, sim = _world(tmp_path, _object("ball", "{sphere: 0.5}", (1.0, 2.0, 3.0)))
    # the line x = 1 + 0.3, z = 3 crosses the sphere where (y - 2)^2 = 0.25 - 0.09
    f, shape, point, normal = _one(sim, [1.3, 0.0, 3.0], [1.3, 4.0, 3.0])
    y = 2.0 - math.sqrt(0.25 - 0.09)
    assert shape == 0
    assert f == pytest.approx(y / 4.0, abs=ATOL)
    np.testing.assert_allclose(point, [1.3, y, 3.0], atol=ATOL)
    np.testing.assert_allclose(normal, (point - [1.0, 2.0, 3.0]) / 0.5, atol=ATOL)


def test_a_rotated_box_is_entered_through_the_face_the_ray_meets_first(tmp_path):
    # box 0.4 x 0.2 x 0.2 turned 90 deg about z: its long side lies along y
    q = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))
    world, sim = _world(tmp_path, _object("box", "{box: [0.4, 0.2, 0.2]}", (0, 0, 1), q))
    f, _, point, normal = _one(sim, [0.0, -2.0, 1.05], [0.0, 2.0, 1.05])
    assert f == pytest.approx((2.0 - 0.2) / 4.0, abs=ATOL)
    np.testing.assert_allclose(normal, [0, -1, 0], atol=ATOL)
    f, _, point, normal = _one(sim, [3.0, 0.05, 1.0], [-1.0, 0.05, 1.0])
    assert f == pytest.approx((3.0 - 0.1) / 4.0, abs=ATOL)
    np.testing.assert_allclose(normal, [1, 0, 0], atol=ATOL)
    # a diagonal ray onto the top face z = 1.1
    f, _, point, normal = _one(sim, [0.05, 0.1, 2.1], [0.05, 0.1, 0.1])
    assert f == pytest.approx(0.5, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, 1], atol=ATOL)


def test_a_capsule_is_hit_on_its_side_and_on_its_caps(tmp_path):
    # radius 0.2, axis segment 0.6 long along z (caps centred at z = +-0.3)
    world, sim = _world(tmp_path, _object("pill", "{capsule: [0.2, 0.6]}"))
    f, _, point, normal = _one(sim, [-1.0, 0.0, 0.1], [1.0, 0.0, 0.1])
    assert f == pytest.approx(0.4, abs=ATOL)
    np.testing.assert_allclose(normal, [-1, 0, 0], atol=ATOL)
    # from above along the axis: the top of the cap at z = 0.5
    f, _, point, normal = _one(sim, [0.0, 0.0, 2.0], [0.0, 0.0, 0.0])
    assert f == pytest.approx(0.75, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, 1], atol=ATOL)
    # a horizontal ray at z = 0.4 meets the cap sphere where x^2 = 0.04 - 0.01
    f, _, point, normal = _one(sim, [-1.0, 0.0, 0.4], [1.0, 0.0, 0.4])
    x = -math.sqrt(0.04 - 0.01)
    assert f == pytest.approx((x + 1.0) / 2.0, abs=ATOL)
    np.testing.assert_allclose(normal, [x / 0.2, 0, 0.1 / 0.2], atol=ATOL)


def test_a_cylinder_is_hit_on_its_side_and_its_flat_ends(tmp_path):
    # radius 0.3, length 0.8 along z, tilted 90 deg about x: its axis along -y
    q = (math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4))
    world, sim = _world(tmp_path, _object("can", "{cylinder: [0.3, 0.8]}", (0, 0, 1), q))
    f, _, point, normal = _one(sim, [0.0, 2.0, 1.1], [0.0, -2.0, 1.1])
    assert f == pytest.approx((2.0 - 0.4) / 4.0, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 1, 0], atol=ATOL)
    f, _, point, normal = _one(sim, [0.0, 0.2, 3.0], [0.0, 0.2, 1.0])
    assert f == pytest.approx((2.0 - 0.3) / 2.0, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, 1], atol=ATOL)


def test_a_plane_is_a_two_sided_surface_as_in_pybullet(tmp_path):
    # PyBullet: a ray from below the plane hits it with the normal facing down; one starting
    # or ending on it does not
    world, sim = _world(tmp_path, terrains="  - name: g\n    geometry: {plane: {normal: [0, 0, 1], offset: 0.5}}\n")
    f, shape, point, normal = _one(sim, [1.0, 1.0, 1.5], [1.0, 1.0, -0.5])
    assert (f, shape) == (pytest.approx(0.5, abs=ATOL), 0)
    np.testing.assert_allclose(normal, [0, 0, 1], atol=ATOL)
    f, shape, point, normal = _one(sim, [1.0, 1.0, -0.5], [1.0, 1.0, 1.5])
    assert f == pytest.approx(0.5, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, -1], atol=ATOL)
    for o, e in (([0, 0, 0.5], [0, 0, -1]), ([0, 0, 1], [0, 0, 0.5]), ([0, 0, 0], [0, 0, -1])):
        f, shape, point, normal = _one(sim, o, e)
        assert (f, shape) == (1.0, -1)
        np.testing.assert_array_equal(point, e)
        np.testing.assert_array_equal(normal, [0, 0, 0])


@pytest.mark.parametrize("geometry", ["{sphere: 0.5}", "{box: [1, 1, 1]}", "{capsule: [0.3, 0.4]}",
                                      "{cylinder: [0.5, 1.0]}"])
def test_a_ray_starting_inside_a_solid_does_not_hit_it(tmp_path, geometry):
    # PyBullet's rayTest (measured on 3.2.7): no hit from inside, none leaving from the surface
    world, sim = _world(tmp_path, _object("solid", geometry))
    for o in ([0, 0, 0], [0.1, 0.05, 0.0]):
        assert _one(sim, o, [2.0, 0.3, 0.0])[1] == -1
    assert _one(sim, [0.5, 0, 0], [3, 0, 0])[1] == -1
    assert _one(sim, [2.0, 0, 0], [0, 0, 0])[1] == 0


@pytest.mark.parametrize("geometry,graze", [
    ("{sphere: 0.5}", ([-1, 0.5, 0], [1, 0.5, 0])),            # tangent
    ("{box: [1, 1, 1]}", ([-1, 0.5, 0.2], [1, 0.5, 0.2])),     # along a face
    ("{box: [1, 1, 1]}", ([-1, 0.5, 0.5], [1, 0.5, 0.5])),     # along an edge
    ("{cylinder: [0.5, 1.0]}", ([-1, 0.5, 0.1], [1, 0.5, 0.1])),
    ("{capsule: [0.5, 1.0]}", ([0.5, -3, 0], [0.5, 3, 0])),
])
def test_grazing_rays_do_not_hit(tmp_path, geometry, graze):
    world, sim = _world(tmp_path, _object("solid", geometry))
    assert _one(sim, *graze)[1] == -1


def test_the_nearest_of_several_shapes_wins_and_a_zero_length_ray_hits_nothing(tmp_path):
    world, sim = _world(tmp_path, _object("far", "{sphere: 0.2}", (3, 0, 0))
                        + _object("near", "{box: [0.2, 0.2, 0.2]}", (1, 0, 0)))
    f, shape, point, normal = _one(sim, [0, 0, 0], [4, 0, 0])
    assert shape == 1 and f == pytest.approx(0.9 / 4.0, abs=ATOL)
    f, shape, point, normal = _one(sim, [1.0, 0, 0], [1.0, 0, 0])
    assert (f, shape) == (1.0, -1)
    # reversed, the sphere is nearer
    f, shape, point, normal = _one(sim, [4, 0, 0], [0, 0, 0])
    assert shape == 0 and f == pytest.approx(0.8 / 4.0, abs=ATOL)


def test_mask_and_disabled_bodies_are_honoured(tmp_path):
    world, sim = _world(tmp_path, _object("a", "{sphere: 0.2}", (1, 0, 0))
                        + _object("b", "{sphere: 0.2}", (2, 0, 0)))
    scene = sim.engine
    scene.set_collision_filter(0, 0b10, 0xFFFFFFFF)
    assert _cast(sim, [0, 0, 0], [3, 0, 0], mask=0b01)[1][0] == 1
    assert _cast(sim, [0, 0, 0], [3, 0, 0], mask=0b10)[1][0] == 0
    assert _cast(sim, [0, 0, 0], [3, 0, 0], mask=0b100)[1][0] == -1
    scene.set_body_enabled(0, False)
    assert _cast(sim, [0, 0, 0], [3, 0, 0])[1][0] == 1


def test_a_convex_hull_is_entered_through_its_face_planes(tmp_path):
    # an octahedron |x| + |y| + |z| <= 1 as a rigid-object mesh: collides as its hull
    import trimesh

    verts = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)
    hull = trimesh.Trimesh(verts).convex_hull
    hull.export(tmp_path / "octa.stl")
    world, sim = _world(tmp_path, _object("octa", f"{{mesh: {tmp_path / 'octa.stl'}}}", (0, 0, 1)))
    assert sim.engine.model.nshape == 1
    # along x at y = 0.1, z = 1.2 (0.2 above the centre): enters the face -x + y + z = 1
    f, shape, point, normal = _one(sim, [-2.0, 0.1, 1.2], [2.0, 0.1, 1.2])
    assert f == pytest.approx((2.0 - 0.7) / 4.0, abs=ATOL)
    np.testing.assert_allclose(normal, np.array([-1.0, 1.0, 1.0]) / math.sqrt(3), atol=ATOL)
    # from inside: no hit
    assert _one(sim, [0, 0, 1], [3, 0, 1])[1] == -1


def test_a_mesh_terrain_is_two_sided_and_its_nearest_triangle_wins(tmp_path):
    import trimesh

    # two stacked squares: z = 0 and z = 0.5, each two triangles
    v = [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]
    verts = np.array(v + [[x, y, 0.5] for x, y, _ in v], float)
    faces = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    trimesh.Trimesh(verts, faces, process=False).export(tmp_path / "sheets.stl")
    world, sim = _world(tmp_path, terrains=f"  - name: sheets\n    geometry: {{mesh: {tmp_path / 'sheets.stl'}}}\n")
    f, shape, point, normal = _one(sim, [0.3, -0.2, 2.0], [0.3, -0.2, -1.0])
    assert f == pytest.approx(1.5 / 3.0, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, 1], atol=ATOL)
    f, shape, point, normal = _one(sim, [0.3, -0.2, -1.0], [0.3, -0.2, 2.0])
    assert f == pytest.approx(1.0 / 3.0, abs=ATOL)
    np.testing.assert_allclose(normal, [0, 0, -1], atol=ATOL)
    # between the sheets, rising: the upper one from below
    f, shape, point, normal = _one(sim, [0.5, 0.5, 0.25], [0.5, 0.5, 1.25])
    assert f == pytest.approx(0.25, abs=ATOL)
    assert _one(sim, [1.5, 0, 2], [1.5, 0, -2])[1] == -1


def test_a_heightfield_ray_meets_the_closed_form_surface(tmp_path):
    # h(x, y) = 0.2 x + 0.1 y on a 2 x 2 m grid: planar, so the triangulation is exact
    n = 21
    xs = np.linspace(-1, 1, n)
    heights = 0.2 * xs[None, :] + 0.1 * xs[:, None]          # rows along y
    np.save(tmp_path / "h.npy", heights)
    world, sim = _world(tmp_path, terrains=f"  - name: hf\n    geometry: {{heightfield: {{file: {tmp_path / 'h.npy'}, size: [2.0, 2.0]}}}}\n")
    rng = np.random.default_rng(3)
    o = np.column_stack([rng.uniform(-0.9, 0.9, (200, 2)), np.full(200, 2.0)])
    e = o + np.column_stack([rng.uniform(-0.5, 0.5, (200, 2)), np.full(200, -4.0)])
    e[:, :2] = np.clip(e[:, :2], -0.95, 0.95)
    f, shape, point, normal = _cast(sim, o, e)
    assert (shape == 0).all()
    np.testing.assert_allclose(point[:, 2], 0.2 * point[:, 0] + 0.1 * point[:, 1], atol=1e-12)
    up = np.array([-0.2, -0.1, 1.0]) / math.sqrt(1.05)
    np.testing.assert_allclose(normal, np.broadcast_to(up, normal.shape), atol=1e-12)
    # a curved field: the hit lies on the triangle surface, which is within the grid's
    # interpolation error of h(x, y) = sin(x) cos(y) / 4
    n = 101
    xs = np.linspace(-1, 1, n)
    np.save(tmp_path / "c.npy", 0.25 * np.sin(xs)[None, :] * np.cos(xs)[:, None])
    world, sim = _world(tmp_path, terrains=f"  - name: hf\n    geometry: {{heightfield: {{file: {tmp_path / 'c.npy'}, size: [2.0, 2.0]}}}}\n",
                        name="curved.yaml")
    f, shape, point, normal = _cast(sim, o, e)
    assert (shape == 0).all()
    spacing = 2.0 / (n - 1)
    # |linear interpolation error| <= spacing^2 / 8 * max|second derivative| (<= 0.5 here)
    np.testing.assert_allclose(point[:, 2], 0.25 * np.sin(point[:, 0]) * np.cos(point[:, 1]),
                               atol=spacing ** 2 / 8 * 0.5 * 2)


def test_a_ray_cast_after_setting_a_pose_sees_the_new_pose(tmp_path):
    world, sim = _world(tmp_path, _object("ball", "{sphere: 0.5}"))
    assert _one(sim, [3, 0, 0], [-3, 0, 0])[0] == pytest.approx(2.5 / 6, abs=ATOL)
    sim.body(world.rigidObject(0)).setTransform(np.eye(3), [1.0, 0.0, 0.0])
    assert _one(sim, [3, 0, 0], [-3, 0, 0])[0] == pytest.approx(1.5 / 6, abs=ATOL)


def test_bad_input_is_refused_with_what_and_where(tmp_path):
    world, sim = _world(tmp_path, _object("ball", "{sphere: 0.5}"))
    scene = sim.engine
    with pytest.raises(ValueError, match=r"origins must have shape \(N, 3\), got \(2, 2\)"):
        scene.ray_cast(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"2 origins but 3 ends"):
        scene.ray_cast(np.zeros((2, 3)), np.zeros((3, 3)))
    bad = np.zeros((4, 3))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"ends\[2, 1\] = nan; coordinates must be finite"):
        scene.ray_cast(np.zeros((4, 3)), bad)
    bad[2, 1] = 1e7
    with pytest.raises(ValueError, match=r"within \+-1e\+06 m"):
        scene.ray_cast(bad, np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"at most 2,000,000"):
        scene.ray_cast(np.broadcast_to(np.zeros(3), (MAX_RAYS + 1, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"must be an \(N, 3\) array of numbers"):
        scene.ray_cast([["a", "b", "c"]], np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"threads must be None or an int"):
        scene.ray_cast(np.zeros((1, 3)), np.ones((1, 3)), threads=0)
    with pytest.raises(ValueError, match=r"mask .* does not fit in 32 bits"):
        scene.ray_cast(np.zeros((1, 3)), np.ones((1, 3)), mask=1 << 40)
    with pytest.raises(ValueError, match=r"out must be 4 writeable C-contiguous arrays"):
        scene.ray_cast(np.zeros((1, 3)), np.ones((1, 3)), out=(np.zeros(1),) * 4)
    # no rays: empty answers
    f, shape, point, normal = scene.ray_cast(np.zeros((0, 3)), np.zeros((0, 3)))
    assert f.shape == (0,) and point.shape == (0, 3)


def test_out_arrays_are_filled_in_place(tmp_path):
    world, sim = _world(tmp_path, _object("ball", "{sphere: 0.5}"))
    out = (np.empty(2), np.empty(2, np.int64), np.empty((2, 3)), np.empty((2, 3)))
    got = sim.engine.ray_cast([[2, 0, 0], [2, 2, 2]], [[-2, 0, 0], [3, 3, 3]], out=out)
    assert all(a is b for a, b in zip(got, out))
    np.testing.assert_array_equal(out[1], [0, -1])


_coordinate = st.floats(-3.0, 3.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*[_coordinate] * 6), min_size=1, max_size=300))
def test_random_rays_give_consistent_answers_on_one_or_two_threads(pile, rays):
    sim = pile
    r = np.array(rays)
    o, e = np.ascontiguousarray(r[:, :3]), np.ascontiguousarray(r[:, 3:])
    o = np.concatenate([o] * 3)        # enough rays for two threads to share them
    e = np.concatenate([e] * 3)
    one = sim.engine.ray_cast(o, e, threads=1)
    two = sim.engine.ray_cast(o, e, threads=2)
    for a, b in zip(one, two):
        assert a.tobytes() == b.tobytes()
    f, shape, point, normal = one
    assert np.isfinite(f).all() and np.isfinite(point).all() and np.isfinite(normal).all()
    assert ((f >= 0.0) & (f <= 1.0)).all()
    hit = shape >= 0
    assert (f[~hit] == 1.0).all() and (normal[~hit] == 0.0).all()
    np.testing.assert_array_equal(point[~hit], e[~hit])
    np.testing.assert_allclose(point[hit], o[hit] + f[hit, None] * (e - o)[hit], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(normal[hit], axis=1), 1.0, atol=1e-12)
    # the normal faces the ray (it enters there)
    assert (np.einsum("ij,ij->i", normal[hit], (e - o)[hit]) <= 0.0).all()


@pytest.fixture(scope="module")
def pile(tmp_path_factory):
    """Every shape type in random poses over a plane (module-wide: hypothesis reuses it)."""
    import trimesh

    tmp = tmp_path_factory.mktemp("pile")
    rng = np.random.default_rng(7)
    trimesh.creation.icosphere(1, 0.3).export(tmp / "ico.stl")
    geometries = ["{sphere: 0.3}", "{box: [0.5, 0.3, 0.2]}", "{capsule: [0.15, 0.5]}",
                  "{cylinder: [0.25, 0.4]}", f"{{mesh: {tmp / 'ico.stl'}}}"]
    objects = ""
    for i in range(12):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        objects += _object(f"o{i}", geometries[i % len(geometries)],
                           rng.uniform(-2, 2, 3).round(3).tolist(), q.tolist())
    terrain = "  - name: ground\n    geometry: {plane: {normal: [0, 0, 1], offset: -2.5}}\n"
    world, sim = _world(tmp, objects, terrain)
    return sim
