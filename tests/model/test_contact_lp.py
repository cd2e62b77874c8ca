"""contact_lp: polyhedral friction cones, force closure and COM equilibrium against closed
forms and against independent references (scipy's Rotation for the cone basis, NNLS for the
force-closure verdict)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls
from scipy.spatial.transform import Rotation

from sim_node.model import contact_lp

GRAVITY = np.array([0.0, 0.0, -1.0])


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def random_contacts(rng, count, friction=(0.05, 1.2)):
    rows = []
    for _ in range(count):
        rows.append([*rng.normal(size=3), *unit(rng.normal(size=3)), rng.uniform(*friction)])
    return np.array(rows)


def cube_faces(k):
    """A unit cube held at the centres of its 6 faces, normals inward."""
    rows = []
    for axis in range(3):
        for sign in (1.0, -1.0):
            x = np.zeros(3)
            x[axis] = sign
            rows.append([*x, *(-x), k])
    return np.array(rows)


@given(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1))
def test_canonical_basis_is_the_minimal_rotation_taking_x_to_n(a, b, c):
    if math.sqrt(a * a + b * b + c * c) < 1e-3:
        return
    n = unit([a, b, c])
    u, w = contact_lp.canonical_basis(n)
    frame = np.column_stack([n, u, w])
    np.testing.assert_allclose(frame.T @ frame, np.eye(3), atol=1e-12)
    assert np.linalg.det(frame) == pytest.approx(1.0)
    axis = np.cross([1.0, 0.0, 0.0], n)
    if n[0] <= -1 + 1e-8:                 # no unique least rotation: Klamp't's half turn about z
        # (kept orthogonal to n, which is within sqrt(2e-8) = 1.4e-4 of -x here)
        np.testing.assert_allclose(u, [0, -1, 0], atol=2e-4)
        np.testing.assert_allclose(w, [0, 0, 1], atol=2e-4)
    elif np.linalg.norm(axis) > 1e-6:     # the rotation about x × n by the angle between them
        R = Rotation.from_rotvec(unit(axis) * math.acos(np.clip(n[0], -1, 1))).as_matrix()
        np.testing.assert_allclose(u, R[:, 1], atol=1e-9)
        np.testing.assert_allclose(w, R[:, 2], atol=1e-9)


def test_cone_edges_lie_on_the_coulomb_cone_evenly_spaced():
    n = unit([0.2, -0.5, 0.8])
    E = contact_lp.cone_edges(n, 0.7)
    assert E.shape == (4, 3)
    np.testing.assert_allclose(E @ n, 1.0)                          # unit normal component
    tangential = E - np.outer(E @ n, n)
    np.testing.assert_allclose(np.linalg.norm(tangential, axis=1), 0.7)   # on the cone
    np.testing.assert_allclose(tangential[0] @ tangential[1], 0.0, atol=1e-12)  # 90 degrees
    np.testing.assert_allclose(tangential[0], -tangential[2], atol=1e-12)
    np.testing.assert_allclose(contact_lp.cone_edges(n, 0.0), [n])  # frictionless: the ray
    assert contact_lp.cone_edges(n, 0.3, 8).shape == (8, 3)


def closure_by_nnls(contacts):
    """Independent verdict: the wrench cone is R^6 iff every +-axis wrench is a nonnegative
    combination of the edge wrenches (residual 0)."""
    G = contact_lp.wrench_matrix(contacts)
    return max(nnls(G, s * e)[1] for e in np.eye(6) for s in (1.0, -1.0))


def test_force_closure_closed_forms():
    assert contact_lp.force_closure(cube_faces(0.5))
    assert not contact_lp.force_closure(cube_faces(0.0))   # 6 frictionless contacts: < 7
    assert not contact_lp.force_closure(np.zeros((0, 7)))
    table = np.array([[x, y, 0, 0, 0, 1, 0.5] for x in (-1, 1) for y in (-1, 1)], float)
    assert not contact_lp.force_closure(table)             # nothing pulls the box down
    # two opposed frictional fingers: rank 5 (no torque about the line joining them)
    pinch = np.array([[-1, 0, 0, 1, 0, 0, 1.0], [1, 0, 0, -1, 0, 0, 1.0]])
    rank_ratio, _ = contact_lp.force_closure_margin(pinch)
    assert rank_ratio < 1e-12 and not contact_lp.force_closure(pinch)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_two_frictionless_contacts_never_close(seed):
    rng = np.random.default_rng(seed)
    assert not contact_lp.force_closure(random_contacts(rng, 2, friction=(0.0, 0.0)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_force_closure_matches_the_nnls_certificate_and_ignores_the_origin(seed):
    rng = np.random.default_rng(seed)
    contacts = random_contacts(rng, int(rng.integers(2, 6)), friction=(0.2, 1.5))
    verdict = contact_lp.force_closure(contacts)
    _, positivity = contact_lp.force_closure_margin(contacts)
    residual = closure_by_nnls(contacts)
    if abs(positivity) > 1e-6 and (residual > 1e-6 or residual < 1e-10):
        assert verdict == (residual < 1e-10)
    # the 4-edge cones are set by Klamp't's basis, which turns with the frame only for
    # quarter turns about x (they permute the edges): those and translations change nothing
    R = Rotation.from_rotvec([0.5 * math.pi * int(rng.integers(1, 4)), 0, 0]).as_matrix()
    moved = contacts.copy()
    moved[:, 0:3] = contacts[:, 0:3] @ R.T + rng.normal(size=3) * 5
    moved[:, 3:6] = contacts[:, 3:6] @ R.T
    _, moved_positivity = contact_lp.force_closure_margin(moved)
    assert moved_positivity == pytest.approx(positivity, abs=1e-7)


def assert_equilibrium(contacts, forces, fext, com, tol=1e-7):
    forces = np.asarray(forces)
    np.testing.assert_allclose(forces.sum(axis=0) + fext, 0.0, atol=tol)
    moment = np.cross(contacts[:, 0:3] - com, forces).sum(axis=0)
    np.testing.assert_allclose(moment, 0.0, atol=tol)
    for row, f in zip(contacts, forces):
        n, k = row[3:6], row[6]
        fn = f @ n
        assert fn >= -tol
        assert np.linalg.norm(f - fn * n) <= k * fn + tol


def test_box_on_a_table_balances_iff_the_com_is_over_the_footprint():
    table = np.array([[x, y, 0, 0, 0, 1, 0.5] for x in (-1, 1) for y in (-1, 1)], float)
    com = np.array([0.3, -0.6, 2.0])
    f = contact_lp.com_equilibrium_forces(table, 10 * GRAVITY, com)
    assert_equilibrium(table, f, 10 * GRAVITY, com)
    assert contact_lp.com_equilibrium_forces(table, GRAVITY, [1.01, 0, 1]) is None
    assert contact_lp.com_equilibrium_forces(table, GRAVITY, [-0.5, -1.01, 1]) is None
    assert contact_lp.any_com_equilibrium(table, GRAVITY)
    # sideways pull: friction 0.5 holds a force 0.4 m g, not 0.6 m g (edges along x and y)
    assert contact_lp.com_equilibrium_forces(table, [0.4, 0, -1], [0, 0, 0.1]) is not None
    assert contact_lp.com_equilibrium_forces(table, [0.6, 0, -1], [0, 0, 0.1]) is None
    assert not contact_lp.any_com_equilibrium(table, [0.6, 0, -1])
    assert contact_lp.com_equilibrium_forces(np.zeros((0, 7)), GRAVITY, com) is None
    assert not contact_lp.any_com_equilibrium(np.zeros((0, 7)), GRAVITY)


def test_frictionless_tripod_carries_the_weight_in_barycentric_shares():
    corners = np.array([[0.0, 0.0], [2.0, 0.0], [0.5, 1.5]])
    tripod = np.array([[*p, 0.0, 0, 0, 1, 0.0] for p in corners])
    weights = np.array([0.2, 0.5, 0.3])
    com = np.array([*(weights @ corners), 0.7])
    f = contact_lp.com_equilibrium_forces(tripod, 9.8 * GRAVITY, com)
    np.testing.assert_allclose(f, np.column_stack([np.zeros((3, 2)), 9.8 * weights]), atol=1e-9)
    assert contact_lp.com_equilibrium_forces(tripod, GRAVITY, [2.0, 1.0, 0.5]) is None


def test_a_slope_holds_iff_friction_reaches_the_tangent_of_its_angle():
    # the slope's downhill direction is a cone edge (u of the canonical basis), so the
    # polyhedral cone is exact there: tan(0.3) = 0.3093
    n = [math.sin(0.3), 0.0, math.cos(0.3)]
    for k, holds in ((0.31, True), (0.30, False), (0.0, False)):
        slope = np.array([[0, 0, 0, *n, k]])
        f = contact_lp.com_equilibrium_forces(slope, GRAVITY, [0, 0, 1])
        assert (f is not None) == holds, k


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_com_equilibrium_forces_satisfy_the_equations_they_claim(seed):
    rng = np.random.default_rng(seed)
    contacts = random_contacts(rng, int(rng.integers(1, 6)))
    fext, com = rng.normal(size=3), rng.normal(size=3)
    f = contact_lp.com_equilibrium_forces(contacts, fext, com)
    if f is not None:
        assert_equilibrium(contacts, f, fext, com, tol=1e-6)
        assert contact_lp.any_com_equilibrium(contacts, fext)
