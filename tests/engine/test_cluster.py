"""Reduction of a body pair's contacts (engine/cluster.pyx): merging, then the points that hold
the body up before the speculative ones, and the corners of the support quadrilateral.

References are closed-form: the corners of a rectangle, and which points are within the band of
the deepest (counted here with numpy)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation

from sim_node.engine.cluster import group_normals, reduce_contacts

BAND = 5e-4                 # [m] the scene's default: the rest gap of two 2.5 mm paddings


def rectangle_outline(hx, hy, per_side):
    """(corners (4, 2), outline points (4 per_side, 2)) of the rectangle [-hx, hx] x [-hy, hy],
    corners first on each side, counter-clockwise from (-hx, -hy)."""
    corners = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])
    points = [corners[k] + t * (corners[(k + 1) % 4] - corners[k])
              for k in range(4) for t in np.arange(per_side) / per_side]
    return corners, np.array(points)


def placed(points_2d, rotation, offset):
    """Points in the plane z = 0 rotated and moved: (n, 3), and the plane's normal (3,)."""
    p = np.column_stack([points_2d, np.zeros(len(points_2d))])
    return p @ rotation.T + offset, rotation[:, 2]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hx=st.floats(0.01, 0.3), aspect=st.floats(0.2, 1.0), per_side=st.integers(3, 30),
       max_contacts=st.integers(4, 20), deepest=st.integers(0, 3),
       corner_depths=st.lists(st.floats(0.0, 0.9 * BAND), min_size=4, max_size=4),
       rotation=st.integers(0, 2 ** 32 - 1))
def test_a_face_resting_on_its_four_corners_keeps_all_four(hx, aspect, per_side, max_contacts,
                                                           deepest, corner_depths, rotation):
    # Claim: a flat face lying in a bowl touches at its four corners (within the band of the
    # deepest), the rest of its outline hovering 1.5 mm higher; reduced to any 4 .. 20 points,
    # all four corners stay (plain farthest-point sampling kept two diagonal corners and the
    # middles of the long sides, and the box rocked on the diagonal for ever)
    corners, outline = rectangle_outline(hx, aspect * hx, per_side)
    R = Rotation.random(random_state=rotation).as_matrix()
    points, normal = placed(outline, R, np.array([0.3, -0.2, 0.1]))
    distances = np.full(len(points), 5e-4 + 1.5e-3)
    corner_rows = np.arange(4) * per_side
    distances[corner_rows] = 5e-4 + np.asarray(corner_depths)
    distances[corner_rows[deepest]] = 5e-4 - 1e-6
    kept, _, _ = reduce_contacts(points, np.tile(normal, (len(points), 1)), distances,
                                 max_contacts, 0.001, BAND)
    assert len(kept) <= max_contacts
    for corner in placed(corners, R, np.array([0.3, -0.2, 0.1]))[0]:
        assert np.min(np.linalg.norm(kept - corner, axis=1)) < 1e-12


@pytest.mark.parametrize("max_contacts", [4, 8, 20])
def test_a_face_touching_all_along_its_outline_keeps_its_corners_first(max_contacts):
    # Claim: when the whole outline touches (a face on a plane seen as many points), the
    # deepest corner, the opposite corner and the two corners beside their diagonal are the
    # first four points kept
    corners, outline = rectangle_outline(0.05, 0.04, 20)
    points = np.column_stack([outline, np.zeros(len(outline))])
    kept, _, _ = reduce_contacts(points, np.tile([0.0, 0.0, 1.0], (len(points), 1)),
                                 np.full(len(points), 5e-4), max_contacts, 0.001, BAND)
    assert {tuple(p) for p in np.round(kept[:4, :2], 12)} == {tuple(c) for c in corners}


@settings(max_examples=100, deadline=None, derandomize=True)
@given(n=st.integers(2, 60), max_contacts=st.integers(1, 20), seed=st.integers(0, 2 ** 32 - 1),
       spread=st.floats(1e-4, 5e-3))
def test_points_within_the_band_of_the_deepest_are_kept_before_any_other(n, max_contacts, seed,
                                                                          spread):
    # Claim: the supporting points (separation within the band of the deepest) go first:
    # all of them are kept when they fit, and when they do not, only they are kept
    rng = np.random.default_rng(seed)
    points = rng.uniform(-0.1, 0.1, (n, 3))
    normals = rng.normal(size=(n, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    distances = rng.uniform(-1e-3, -1e-3 + spread, n)
    supporting = distances <= distances.min() + BAND
    kept, kept_normals, kept_distances = reduce_contacts(points, normals, distances, max_contacts,
                                                         0.0, BAND)
    assert len(kept) == min(n, max_contacts)
    kept_supporting = np.count_nonzero(kept_distances <= distances.min() + BAND)
    assert kept_supporting == min(np.count_nonzero(supporting), max_contacts)
    # every kept point is one of the input points, unchanged
    for p, m, d in zip(kept, kept_normals, kept_distances):
        i = np.argmin(np.linalg.norm(points - p, axis=1))
        assert np.allclose([*points[i], *normals[i], distances[i]], [*p, *m, d], atol=1e-15)


def test_near_points_merge_into_the_deeper_one_only_when_their_normals_agree():
    # Claim: within the merge radius (1 mm), points with normals less than 8 degrees apart are
    # one contact, the deeper; a crease's two faces keep a point each however close they are
    up = [0.0, 0.0, 1.0]
    tilted = [math.sin(math.radians(5)), 0.0, math.cos(math.radians(5))]
    crease = [math.sin(math.radians(30)), 0.0, math.cos(math.radians(30))]
    points = [[0.0, 0.0, 0.0], [0.0005, 0.0, 0.0]]
    kept, _, d = reduce_contacts(points, [up, tilted], [2e-4, 1e-4], 20, 0.001, BAND)
    assert len(kept) == 1 and d[0] == 1e-4 and kept[0][0] == 0.0005
    kept, _, _ = reduce_contacts(points, [up, crease], [2e-4, 1e-4], 20, 0.001, BAND)
    assert len(kept) == 2
    kept, _, _ = reduce_contacts([[0.0, 0.0, 0.0], [0.0015, 0.0, 0.0]], [up, up], [2e-4, 1e-4], 20,
                                 0.001, BAND)
    assert len(kept) == 2


def test_bad_arguments_say_what_is_valid():
    with pytest.raises(ValueError, match="one row per contact"):
        reduce_contacts(np.zeros((3, 3)), np.zeros((2, 3)), np.zeros(3), 4)
    with pytest.raises(ValueError, match="at least 1"):
        reduce_contacts(np.zeros((3, 3)), np.zeros((3, 3)), np.zeros(3), 0)


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def test_the_faces_of_a_crease_or_a_room_corner_get_a_friction_patch_each():
    # Claim: contacts on a 40-degree crease's two faces, or on the floor and two walls of a
    # room, form a patch per face, each patch holding exactly that face's contacts, patches in
    # the order of their first contact
    left, right = unit([-math.sin(0.35), 0, math.cos(0.35)]), unit([math.sin(0.35), 0, math.cos(0.35)])
    groups = group_normals([left, right, right, left, left, right])
    assert [g.tolist() for g in groups] == [[0, 3, 4], [1, 2, 5]]
    floor, wall_x, wall_y = [0, 0, 1.0], [1.0, 0, 0], [0, 1.0, 0]
    groups = group_normals([wall_y, floor, wall_x, floor, wall_y, wall_x])
    assert [g.tolist() for g in groups] == [[0, 4], [1, 3], [2, 5]]


def test_a_curved_surface_under_a_body_is_one_patch_however_far_its_normal_turns():
    # Claim: normals joined by a chain of neighbours less than 20 degrees apart are one patch:
    # a body on a cylinder-like surface whose normal turns 60 degrees in 5-degree steps has one
    # friction patch (in any order of its contacts); a 25-degree gap splits it in two
    angles = np.radians(np.arange(0, 61, 5))
    normals = np.column_stack([np.sin(angles), np.zeros_like(angles), np.cos(angles)])
    order = np.random.default_rng(3).permutation(len(normals))
    groups = group_normals(normals[order])
    assert len(groups) == 1 and sorted(groups[0].tolist()) == list(range(len(normals)))
    angles = np.radians([0, 5, 10, 35, 40])
    normals = np.column_stack([np.sin(angles), np.zeros_like(angles), np.cos(angles)])
    assert [g.tolist() for g in group_normals(normals)] == [[0, 1, 2], [3, 4]]
    assert [g.tolist() for g in group_normals([[0, 0, 1.0]] * 4)] == [[0, 1, 2, 3]]
