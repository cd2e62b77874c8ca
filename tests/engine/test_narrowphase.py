"""Contact manifolds between shape pairs against closed-form geometry: which points touch,
where, how far apart, and along which normal (normal from B towards A)."""
import math

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from sim_node.engine.narrowphase import collide_shapes

SPHERE, BOX, CAPSULE, CYLINDER, PLANE = 0, 1, 2, 3, 4
MARGIN = 0.005


def shape(kind, size, R=np.eye(3), p=(0, 0, 0)):
    return {"type": kind, "size": size, "R": np.asarray(R), "p": np.asarray(p, dtype=float)}


def points(contacts):
    return np.array([0.5 * (pa + pb) for pa, pb, _, _ in contacts])


def test_aligned_box_resting_on_a_box_touches_at_the_four_corners_of_the_overlap():
    lower = shape(BOX, (0.1, 0.1, 0.05))
    upper = shape(BOX, (0.05, 0.05, 0.05), p=(0.08, 0.0, 0.1003))   # 0.3 mm above, overhanging
    contacts = collide_shapes(upper, lower, MARGIN)
    assert len(contacts) == 4
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
        assert d == pytest.approx(0.0003, abs=1e-12)
        np.testing.assert_allclose(pa - pb, d * n, atol=1e-12)
    xy = np.sort(points(contacts)[:, :2], axis=0)
    # overlap in x: [0.03, 0.1] (upper spans [0.03, 0.13], lower ends at 0.1); y: [-0.05, 0.05]
    np.testing.assert_allclose(sorted(set(np.round(xy[:, 0], 12))), [0.03, 0.1])
    np.testing.assert_allclose(sorted(set(np.round(xy[:, 1], 12))), [-0.05, 0.05])


def test_yawed_box_on_a_box_keeps_the_whole_overlap_polygon_as_its_support():
    lower = shape(BOX, (0.2, 0.2, 0.05))
    upper = shape(BOX, (0.1, 0.1, 0.05), R=euler2mat(0, 0, math.pi / 4), p=(0.05, 0.0, 0.1001))
    contacts = collide_shapes(upper, lower, MARGIN)
    P = points(contacts)[:, :2]
    # the upper face is a square rotated 45 deg, entirely inside the lower face: its 4 corners
    corners = 0.1 * math.sqrt(2) * np.array([[1, 0], [0, 1], [-1, 0], [0, -1]]) + [0.05, 0.0]
    assert len(contacts) == 4
    for c in corners:
        assert np.min(np.linalg.norm(P - c, axis=1)) < 1e-9


def test_box_tilted_above_a_plane_touches_only_with_its_lowest_edge():
    tilt = math.radians(10)
    box = shape(BOX, (0.1, 0.1, 0.1), R=euler2mat(tilt, 0, 0))
    lowest = 0.1 * math.cos(tilt) + 0.1 * math.sin(tilt)      # depth of the lowest edge below the centre
    box["p"] = np.array([0.0, 0.0, lowest + 0.001])
    contacts = collide_shapes(box, shape(PLANE, (0,)), MARGIN)
    assert len(contacts) == 2                                   # the two corners of that edge
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1])
        assert d == pytest.approx(0.001, abs=1e-12)
        assert pb[2] == pytest.approx(0.0, abs=1e-15)


def test_standing_cylinder_rests_on_its_rim_and_a_lying_one_on_a_line():
    standing = shape(CYLINDER, (0.05, 0.1), p=(0, 0, 0.1005))
    contacts = collide_shapes(standing, shape(PLANE, (0,)), MARGIN)
    assert len(contacts) == 8
    radii = np.linalg.norm(points(contacts)[:, :2], axis=1)
    np.testing.assert_allclose(radii, 0.05, atol=1e-12)
    assert all(d == pytest.approx(0.0005) for *_, d in contacts)
    lying = shape(CYLINDER, (0.05, 0.1), R=euler2mat(math.pi / 2, 0, 0), p=(0, 0, 0.0505))
    contacts = collide_shapes(lying, shape(PLANE, (0,)), MARGIN)
    assert len(contacts) == 2
    np.testing.assert_allclose(sorted(points(contacts)[:, 1]), [-0.1, 0.1], atol=1e-12)


def test_lying_capsule_on_a_box_touches_along_its_segment():
    capsule = shape(CAPSULE, (0.02, 0.08), R=euler2mat(0, math.pi / 2, 0), p=(0.0, 0.0, 0.0702))
    box = shape(BOX, (0.2, 0.2, 0.05))
    contacts = collide_shapes(capsule, box, MARGIN)
    assert len(contacts) == 2
    np.testing.assert_allclose(sorted(points(contacts)[:, 0]), [-0.08, 0.08], atol=1e-9)
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-9)
        assert d == pytest.approx(0.0002, abs=1e-9)


@pytest.mark.parametrize("centre, expected", [
    ((0.0, 0.0, 0.1), 0.1 - 0.05 - 0.03),                    # over a face
    ((0.1, 0.0, 0.1), math.hypot(0.1 - 0.05, 0.1 - 0.05) - 0.03),   # over an edge
    ((0.07, 0.08, 0.09), math.sqrt(0.02 ** 2 + 0.03 ** 2 + 0.04 ** 2) - 0.03),  # corner region
    ((0.01, 0.0, 0.04), -(0.05 - 0.04) - 0.03),               # centre inside: exit by the top
])
def test_sphere_against_box_distance_matches_closed_form(centre, expected):
    sphere = shape(SPHERE, (0.03,), p=centre)
    contacts = collide_shapes(sphere, shape(BOX, (0.05, 0.05, 0.05)), 1.0)
    assert len(contacts) == 1
    pa, pb, n, d = contacts[0]
    assert d == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(pa, np.asarray(centre) - 0.03 * n, atol=1e-12)


def test_overlapping_boxes_report_the_penetration_depth():
    lower = shape(BOX, (0.1, 0.1, 0.05))
    upper = shape(BOX, (0.05, 0.05, 0.05), p=(0.0, 0.0, 0.098))        # 2 mm into the lower box
    contacts = collide_shapes(upper, lower, MARGIN)
    assert len(contacts) == 4
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-9)
        assert d == pytest.approx(-0.002, abs=1e-9)


def test_pairs_farther_than_the_margin_give_no_contact():
    assert collide_shapes(shape(BOX, (0.05,) * 3, p=(0, 0, 0.2)), shape(BOX, (0.1, 0.1, 0.1)),
                          MARGIN) == []
    assert collide_shapes(shape(SPHERE, (0.05,), p=(0, 0, 0.06)), shape(PLANE, (0,)), MARGIN) == []
