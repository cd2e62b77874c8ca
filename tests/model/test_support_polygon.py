"""support_polygon against closed forms (a box, a tripod, a point, a segment, walls that make it
unbounded) and against the COM equilibrium LP it summarises: a COM is inside the polygon iff
contact forces balance gravity there."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_node.model import contact_lp
from sim_node.model.support_polygon import support_polygon

GRAVITY = np.array([0.0, 0.0, -1.0])


def inside(planes, xy, tol=1e-9):
    P = np.array(planes, dtype=float).reshape(-1, 3)
    return bool(np.all(P[:, 0:2] @ xy <= P[:, 2] + tol))


def margin(planes, xy):
    P = np.array(planes, dtype=float).reshape(-1, 3)
    return float(np.min(P[:, 2] - P[:, 0:2] @ xy)) if len(P) else math.inf


def supported(contacts, xy, z=0.5):
    return contact_lp.com_equilibrium_forces(contacts, GRAVITY, [*xy, z]) is not None


def assert_planes(actual, expected):
    assert len(actual) == len(expected)
    for plane in expected:
        assert any(np.allclose(plane, p, atol=1e-9) for p in actual), (plane, actual)


def test_box_on_a_table_supports_its_footprint_in_klampt_order():
    table = np.array([[x, y, 0, 0, 0, 1, 0.5] for x in (-1, 1) for y in (-1, 2)], float)
    planes = support_polygon(table)
    # counter-clockwise from the edge leaving the lowest-x, lowest-y corner
    np.testing.assert_allclose(planes, [[0, -1, 1], [1, 0, 1], [0, 1, 2], [-1, 0, 1]],
                               atol=1e-9)


def test_tripod_on_uneven_ground_and_frictionless_feet_support_their_triangle():
    corners = [(0.0, 0.0), (2.0, 0.0), (0.5, 1.5)]
    for k in (0.0, 0.8):
        tripod = np.array([[*p, 0.0, 0, 0, 1, k] for p in corners])
        planes = support_polygon(tripod)
        s = 1 / math.sqrt(2)
        edges = [[0, -1, 0], [s, s, 2 * s], [-1.5 / math.hypot(1.5, 0.5), 0.5 / math.hypot(1.5, 0.5), 0]]
        assert_planes(planes, edges)


def test_a_point_a_segment_and_nothing():
    point = support_polygon(np.array([[0.3, -0.2, 0.1, 0, 0, 1, 0.5]]))
    assert_planes(point, [[1, 0, 0.3], [-1, 0, -0.3], [0, 1, -0.2], [0, -1, 0.2]])
    s = 1 / math.sqrt(2)
    segment = support_polygon(np.array([[0, 0, 0, 0, 0, 1, 0.0], [1, 1, 0, 0, 0, 1, 0.0]]))
    assert_planes(segment, [[s, s, 2 * s], [-s, -s, 0], [-s, s, 0], [s, -s, 0]])
    assert support_polygon(np.zeros((0, 7))) == [[0, 0, -1]]
    # a single foot on a slope steeper than its friction: nowhere
    steep = np.array([[0, 0, 0, math.sin(0.6), 0, math.cos(0.6), 0.3]])
    assert support_polygon(steep) == [[0, 0, -1]]


def test_walls_that_squeeze_with_a_moment_make_it_unbounded():
    # a body wedged between walls at x = 0 (contact at height 0) and x = 1 (height 1), k = 1:
    # internal squeezing has a moment about y that any COM further out in +x can use
    chimney = np.array([[0, 0, 0, 1, 0, 0, 1.0], [1, 0, 1, -1, 0, 0, 1.0]])
    planes = support_polygon(chimney)
    for x in (1.0, 1.5, 30.0):
        assert inside(planes, [x, 0.0]) and supported(chimney, [x, 0.0])
    for xy in ([0.9, 0.0], [2.0, 0.01], [-5.0, 0.0]):
        assert not inside(planes, xy) and not supported(chimney, xy)


def random_feet(rng, count):
    """Feet on uneven ground: normals within ~40 degrees of vertical (bounded polygons)."""
    rows = []
    for _ in range(count):
        n = np.array([*rng.normal(size=2) * 0.4, 1.0])
        rows.append([*rng.uniform(-1, 1, 2), rng.uniform(-0.3, 0.3), *(n / np.linalg.norm(n)),
                     rng.uniform(0.05, 1.2)])
    return np.array(rows)


def random_grip(rng, count):
    """Contacts round a ball with inward normals: squeezing makes many polygons unbounded."""
    rows = []
    for _ in range(count):
        p = rng.normal(size=3)
        p /= np.linalg.norm(p)
        n = -p + 0.25 * rng.normal(size=3)
        rows.append([*(p * rng.uniform(0.5, 1.5)), *(n / np.linalg.norm(n)), rng.uniform(0.05, 1.2)])
    return np.array(rows)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_a_com_is_inside_iff_the_equilibrium_lp_finds_forces(seed, grip):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 6))
    contacts = random_grip(rng, count) if grip else random_feet(rng, count)
    planes = support_polygon(contacts)
    for plane in planes if planes != [[0, 0, -1]] else []:
        assert np.hypot(plane[0], plane[1]) == pytest.approx(1.0)
    # COMs spread over the polygon's neighbourhood and far away
    probes = [rng.uniform(-3, 3, 2) for _ in range(12)] + [rng.uniform(-40, 40, 2)]
    for xy in probes:
        if abs(margin(planes, xy)) > 1e-6:
            assert inside(planes, xy) == supported(contacts, xy), (xy, planes)
