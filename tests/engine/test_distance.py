"""queries/distance.pyx: closest points and signed distance between placed shapes, against
closed-form geometry (every expected value below is worked out by hand in its comment)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

import sim_node
from sim_node.model.scene import build_scene


def _scene(tmp_path, text: str):
    path = tmp_path / "world.yaml"
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    layout = build_scene(world)
    return world, layout, layout.scene


def _shapes(world, layout, name):
    entity = (world.rigidObject(name) if name in [world.rigidObject(i).getName()
                                                 for i in range(world.numRigidObjects())]
              else world.terrain(name))
    first, n = layout.scene.body_shapes(layout.body_of_id[entity.getID()])
    return np.arange(first, first + n)


def _closest(world, layout, a, b, max_distance=10.0):
    found = layout.scene.closest_points(_shapes(world, layout, a), _shapes(world, layout, b),
                                        max_distance)
    assert len(found["distance"]) == 1
    return {k: v[0] for k, v in found.items()}


def _obj(name, geometry, position, orientation=(0, 0, 0, 1)):
    return (f"  - name: {name}\n    geometry: {geometry}\n    mass: 1.0\n"
            f"    pose: {{position: {list(position)}, orientation: {list(orientation)}}}\n")


def _quat(axis, angle):
    s = math.sin(angle / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)]


def _check(r, distance, point_a, point_b, normal, tol=1e-9):
    assert r["distance"] == pytest.approx(distance, abs=tol)
    np.testing.assert_allclose(r["point_a"], point_a, atol=tol)
    np.testing.assert_allclose(r["point_b"], point_b, atol=tol)
    np.testing.assert_allclose(r["normal"], normal, atol=tol)
    # the contract: pa - pb = distance normal
    np.testing.assert_allclose(r["point_a"] - r["point_b"], r["distance"] * r["normal"],
                               atol=1e-12)


def test_sphere_sphere_separated_and_penetrating(tmp_path):
    # radii 0.1 (A at the origin) and 0.2 (B at x): distance x - 0.3 along -x (B to A)
    for x in (1.0, 0.25):
        world, layout, _ = _scene(tmp_path, "rigid_objects:\n"
                                  + _obj("a", "{sphere: 0.1}", [0, 0, 1])
                                  + _obj("b", "{sphere: 0.2}", [x, 0, 1]))
        r = _closest(world, layout, "a", "b")
        _check(r, x - 0.3, [0.1, 0, 1], [x - 0.2, 0, 1], [-1, 0, 0])


@pytest.mark.parametrize("angle", [0.0, 0.3, math.pi / 6, 1.2])
def test_a_turned_box_above_the_ground_plane(tmp_path, angle):
    # a box of half extents (0.1, 0.2, 0.3) turned by `angle` about x at height 1: its lowest
    # point is 0.2 |sin| + 0.3 |cos| below the centre, the plane's normal is +z
    world, layout, _ = _scene(tmp_path, "terrains:\n  - name: ground\n    geometry: {plane: {}}\n"
                              "rigid_objects:\n"
                              + _obj("box", "{box: [0.2, 0.4, 0.6]}", [0.5, 0, 1],
                                     _quat((1, 0, 0), angle)))
    drop = 0.2 * abs(math.sin(angle)) + 0.3 * abs(math.cos(angle))
    r = _closest(world, layout, "box", "ground")
    assert r["distance"] == pytest.approx(1 - drop, abs=1e-12)
    np.testing.assert_allclose(r["normal"], [0, 0, 1])
    assert r["point_a"][2] == pytest.approx(1 - drop, abs=1e-12)
    assert r["point_b"][2] == pytest.approx(0.0, abs=1e-12)
    # the other way round: normal from the box to the plane, points exchanged
    rev = _closest(world, layout, "ground", "box")
    np.testing.assert_allclose(rev["normal"], [0, 0, -1])
    np.testing.assert_allclose(rev["point_a"], r["point_b"], atol=1e-12)


def test_capsule_above_a_box(tmp_path):
    # capsule radius 0.05, axis length 0.4 (half 0.2) upright at z0 above a box of half height
    # 0.1 at the origin: gap z0 - 0.2 - 0.05 - 0.1; penetrating when z0 = 0.33 (-0.02)
    for z0 in (1.0, 0.33):
        world, layout, _ = _scene(tmp_path, "rigid_objects:\n"
                                  + _obj("cap", "{capsule: [0.05, 0.4]}", [0.01, 0.02, z0])
                                  + _obj("box", "{box: [0.4, 0.4, 0.2]}", [0, 0, 0]))
        r = _closest(world, layout, "cap", "box")
        gap = z0 - 0.35
        _check(r, gap, [0.01, 0.02, z0 - 0.25], [0.01, 0.02, 0.1], [0, 0, 1], tol=1e-9)


def test_rotated_boxes_corner_to_face(tmp_path):
    # B (half 0.1) turned 45 deg about z at x: its corner reaches x - 0.1 sqrt(2); A's face is
    # at 0.1: distance x - 0.1 - 0.1 sqrt(2)
    x = 0.5
    world, layout, _ = _scene(tmp_path, "rigid_objects:\n"
                              + _obj("a", "{box: [0.2, 0.2, 0.2]}", [0, 0, 0])
                              + _obj("b", "{box: [0.2, 0.2, 0.2]}", [x, 0, 0],
                                     _quat((0, 0, 1), math.pi / 4)))
    r = _closest(world, layout, "a", "b")
    assert r["distance"] == pytest.approx(x - 0.1 - 0.1 * math.sqrt(2), abs=1e-9)
    np.testing.assert_allclose(r["normal"], [-1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(r["point_b"][:2], [x - 0.1 * math.sqrt(2), 0], atol=1e-9)


def test_overlapping_boxes_report_the_penetration_depth(tmp_path):
    # two axis-aligned boxes of half 0.1 whose centres are 0.15 apart in x: depth 0.05
    world, layout, _ = _scene(tmp_path, "rigid_objects:\n"
                              + _obj("a", "{box: [0.2, 0.2, 0.2]}", [0, 0, 0])
                              + _obj("b", "{box: [0.2, 0.2, 0.2]}", [0.15, 0.01, 0.02]))
    r = _closest(world, layout, "a", "b")
    assert r["distance"] == pytest.approx(-0.05, abs=1e-9)
    np.testing.assert_allclose(r["normal"], [-1, 0, 0], atol=1e-9)


def test_beyond_max_distance_nothing_is_reported(tmp_path):
    world, layout, scene = _scene(tmp_path, "rigid_objects:\n"
                                  + _obj("a", "{sphere: 0.1}", [0, 0, 0])
                                  + _obj("b", "{sphere: 0.1}", [1, 0, 0]))
    a, b = _shapes(world, layout, "a"), _shapes(world, layout, "b")
    assert len(scene.closest_points(a, b, 0.79)["distance"]) == 0
    assert scene.closest_points(a, b, 0.81)["distance"] == pytest.approx([0.8])
    # a shape against itself is skipped
    assert len(scene.closest_points(a, a, 1.0)["distance"]) == 0


def test_a_query_sees_the_state_set_just_before(tmp_path):
    # free_state written from Python (as the Simulator's setters do): the query refreshes
    world, layout, scene = _scene(tmp_path, "rigid_objects:\n"
                                  + _obj("a", "{sphere: 0.1}", [0, 0, 0])
                                  + _obj("b", "{sphere: 0.1}", [1, 0, 0]))
    scene.free_state[1, 0] = 2.0
    assert _closest(world, layout, "a", "b")["distance"] == pytest.approx(1.8)


def _square_mesh(tmp_path, z=0.0):
    path = tmp_path / "square.obj"
    trimesh.Trimesh([[-1, -1, z], [1, -1, z], [1, 1, z], [-1, 1, z]],
                    [[0, 1, 2], [0, 2, 3]]).export(path)
    return path


def test_sphere_and_box_above_a_triangle_mesh(tmp_path):
    # a zero-thickness square at z = 0 (terrain mesh, BVH): sphere r 0.1 at z 0.3: 0.2; a box
    # of half 0.1 turned 30 deg about x at z 0.5: 0.5 - 0.1 (cos + sin)
    mesh = _square_mesh(tmp_path)
    world, layout, _ = _scene(tmp_path, f"terrains:\n  - name: floor\n    geometry: "
                              f"{{mesh: {mesh}, concave: true}}\nrigid_objects:\n"
                              + _obj("ball", "{sphere: 0.1}", [0.3, -0.2, 0.3])
                              + _obj("box", "{box: [0.2, 0.2, 0.2]}", [-0.4, 0.4, 0.5],
                                     _quat((1, 0, 0), math.pi / 6)))
    r = _closest(world, layout, "ball", "floor")
    _check(r, 0.2, [0.3, -0.2, 0.2], [0.3, -0.2, 0.0], [0, 0, 1])
    r = _closest(world, layout, "box", "floor")
    assert r["distance"] == pytest.approx(0.5 - 0.1 * (math.cos(math.pi / 6) + math.sin(math.pi / 6)),
                                          abs=1e-9)


def test_a_heightfield_is_solid_below(tmp_path):
    # a ramp z = 0.5 x over [-1, 1]^2 (exact on its triangles): a sphere r 0.1 centred at
    # (0, 0, h) is at distance (h - 0) cos(atan 0.5) - 0.1 from it, above or buried below
    heights = [[0.5 * float(x) for x in np.linspace(-1, 1, 5)] for _ in range(5)]
    for h in (0.4, -0.4):
        world, layout, _ = _scene(tmp_path, "terrains:\n  - name: hill\n    geometry: "
                                  f"{{heightfield: {{heights: {heights}, size: [2, 2]}}}}\n"
                                  "rigid_objects:\n" + _obj("ball", "{sphere: 0.1}", [0, 0, h]))
        r = _closest(world, layout, "ball", "hill")
        assert r["distance"] == pytest.approx(h * math.cos(math.atan(0.5)) - 0.1, abs=1e-9)
        np.testing.assert_allclose(r["normal"], np.array([-0.5, 0, 1]) / math.sqrt(1.25),
                                   atol=1e-9)


def test_two_planes_have_no_closest_points(tmp_path):
    world, layout, scene = _scene(tmp_path, "terrains:\n  - name: a\n    geometry: {plane: {}}\n"
                                  "  - name: b\n    geometry: {plane: {offset: -1}}\n")
    assert len(scene.closest_points(_shapes(world, layout, "a"), _shapes(world, layout, "b"),
                                    5.0)["distance"]) == 0


def test_bad_arguments_are_refused(tmp_path):
    world, layout, scene = _scene(tmp_path, "rigid_objects:\n" + _obj("a", "{sphere: 0.1}", [0, 0, 0]))
    with pytest.raises(ValueError, match="max_distance must be finite"):
        scene.closest_points([0], [0], float("nan"))
    with pytest.raises(IndexError, match=r"shape 5 out of range \[0, 1\)"):
        scene.closest_points([0], [5], 1.0)
