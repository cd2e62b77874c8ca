"""Reduction of a body pair's contacts (engine/cluster.pyx): merging, then the points that hold
the body up before the speculative ones, and the corners of the support quadrilateral.

References are closed-form: the corners of a rectangle, and which points are within the band of
the deepest (counted here with numpy)."""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
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


# --- rigid pairs: prune_rigid before the reduction ------------------------------------------

def polygon_area(points_2d):
    from scipy.spatial import ConvexHull
    return ConvexHull(points_2d).volume if len(points_2d) >= 3 else 0.0


def flat_patch(n, seed, size, rotation):
    """n random points of a plane patch (2-d (n, 2) and placed (n, 3)), its normal, R."""
    rng = np.random.default_rng(seed)
    flat = rng.uniform(-size, size, (n, 2)) * [1.0, 0.6]
    R = Rotation.random(random_state=rotation).as_matrix()
    points, normal = placed(flat, R, np.array([0.1, 0.2, -0.3]))
    return flat, points, normal, R, rng


def lower_envelope(uv, sep, p):
    """The lowest separation at p (2,) of the planes through any triangle of the points uv
    (k, 2) with separations sep (k,) whose triangle holds p: the lower convex hull's value
    (inf when no triangle holds p)."""
    import itertools
    best = np.inf
    for a, b, c in itertools.combinations(range(len(uv)), 3):
        T = np.column_stack([uv[b] - uv[a], uv[c] - uv[a]])
        if abs(np.linalg.det(T)) < 1e-14:
            continue
        wb, wc = np.linalg.solve(T, p - uv[a])
        if min(wb, wc, 1 - wb - wc) >= -1e-9:
            best = min(best, (1 - wb - wc) * sep[a] + wb * sep[b] + wc * sep[c])
    return best


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(21, 120), seed=st.integers(0, 2 ** 32 - 1), size=st.floats(0.02, 0.3),
       rotation=st.integers(0, 2 ** 32 - 1))
def test_a_rigid_flat_face_on_a_flat_face_keeps_the_corners_of_its_outline(n, seed, size,
                                                                           rotation):
    # Claim: more points of one normal than max_contacts (20; a face on a plane seen as many
    # points), the outline at the deepest separation and the inside higher within the band,
    # reduce to corners of their convex hull (scipy's, the reference) whose hull covers the
    # input's to within the 1 mm tolerance along its perimeter
    from scipy.spatial import ConvexHull
    flat, points, normal, R, rng = flat_patch(n, seed, size, rotation)
    hull = ConvexHull(flat)
    distances = rng.uniform(0.0, BAND, n)
    distances[hull.vertices] = 0.0
    kept, _, kept_d = reduce_contacts(points, np.tile(normal, (n, 1)), distances, 20, 0.001,
                                      BAND, rigid=True)
    kept_2d = (kept - [0.1, 0.2, -0.3]) @ R[:, :2]
    corners = {tuple(np.round(flat[v], 9)) for v in hull.vertices}
    assert all(tuple(p) in corners for p in np.round(kept_2d, 9))
    assert polygon_area(kept_2d) >= hull.volume - 0.001 * hull.area - 1e-12
    assert np.all(kept_d == 0.0)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(n=st.integers(4, 40), seed=st.integers(0, 2 ** 32 - 1), size=st.floats(0.02, 0.3),
       rotation=st.integers(0, 2 ** 32 - 1), bulge=st.floats(0.0, 1.0))
def test_a_rigid_flat_group_drops_only_points_its_kept_points_hold(n, seed, size, rotation,
                                                                  bulge):
    # Claim: with any separations within the band (a sole whose bottom bulges, bulge = 1: the
    # middle lowest) and max_contacts below the count, the deepest point stays, and every dropped point inside the kept points'
    # outline is at most a tenth of the band below the lower convex hull of the kept points
    # (it is held by them: brute force over their triangles, the reference)
    from scipy.spatial import Delaunay
    flat, points, normal, R, rng = flat_patch(n, seed, size, rotation)
    r = np.linalg.norm(flat, axis=1) / (np.sqrt(1.36) * size)
    distances = np.clip(bulge * r * BAND + (1 - bulge) * rng.uniform(0.0, BAND, n), 0, BAND)
    kept, _, kept_d = reduce_contacts(points, np.tile(normal, (n, 1)), distances, n - 1, 0.001,
                                      BAND, rigid=True)
    assert kept_d.min() == distances.min()
    assume(len(kept) < n - 1)                   # else max_contacts chose, not the outline
    kept_2d = (kept - [0.1, 0.2, -0.3]) @ R[:, :2]
    inside = Delaunay(kept_2d).find_simplex(flat) >= 0 if len(kept) >= 3 else np.zeros(n, bool)
    dropped = [i for i in range(n)
               if np.min(np.linalg.norm(kept_2d - flat[i], axis=1)) > 1e-12 and inside[i]]
    for i in dropped:
        assert lower_envelope(kept_2d, kept_d, flat[i]) <= distances[i] + 0.1 * BAND + 1e-12


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(2, 60), seed=st.integers(0, 2 ** 32 - 1), lowest=st.floats(-2e-3, 3e-3))
def test_a_rigid_pair_drops_exactly_the_points_that_cannot_close_their_gap_this_step(n, seed,
                                                                                      lowest):
    # Claim: with normals all different (no flat group to outline), rigid reduction keeps
    # exactly the points that may close their gap this step (separation within the band, plus
    # its 10 % slack) and the deepest, and only those
    rng = np.random.default_rng(seed)
    points = rng.uniform(-0.1, 0.1, (n, 3))
    normals = unit(rng.normal(size=3)) + 0.5 * rng.normal(size=(n, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    distances = lowest + rng.uniform(0.0, 5e-3, n)
    distances[rng.integers(n)] = lowest
    kept, _, kept_d = reduce_contacts(points, normals, distances, 64, 0.0, BAND, rigid=True)
    limit = max(BAND, lowest) + 0.1 * BAND
    assert sorted(kept_d) == sorted(distances[distances <= limit])


def test_a_rigid_crease_keeps_the_outline_of_each_face_and_a_compliant_pair_keeps_all():
    # Claim: a box edge lying in a 90-degree crease touches both faces along a 5 x 5 grid of
    # points each (more than max_contacts 20): rigid, each face keeps its outline's 4 corners
    # (8 points); compliant (rigid=False), the reduction keeps max_contacts of the 50 as before;
    # with max_contacts 50, rigid, nothing needs choosing and each face keeps its 25
    g = np.stack(np.meshgrid(np.linspace(0, 0.1, 5), np.linspace(0, 0.1, 5)), -1).reshape(-1, 2)
    floor = np.column_stack([g, np.zeros(25)])
    wall = np.column_stack([np.zeros(25), g[:, 0], g[:, 1]])
    points = np.vstack([floor, wall])
    normals = np.vstack([np.tile([0, 0, 1.0], (25, 1)), np.tile([1.0, 0, 0], (25, 1))])
    kept, kept_n, _ = reduce_contacts(points, normals, np.full(50, 1e-4), 20, 0.001, BAND,
                                      rigid=True)
    assert len(kept) == 8
    for face, normal in ((floor, [0, 0, 1.0]), (wall, [1.0, 0, 0])):
        on_face = kept[np.all(kept_n == normal, axis=1)]
        corners = face[[0, 4, 20, 24]]
        assert {tuple(p) for p in np.round(on_face, 12)} == {tuple(p) for p in np.round(corners, 12)}
    kept, _, _ = reduce_contacts(points, normals, np.full(50, 1e-4), 20, 0.001, BAND)
    assert len(kept) == 20
    kept, _, _ = reduce_contacts(points, normals, np.full(50, 1e-4), 50, 0.001, BAND, rigid=True)
    assert len(kept) == 50
