"""Contact manifolds between shape pairs against closed-form geometry: which points touch,
where, how far apart, and along which normal (normal from B towards A)."""
import math

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from hypothesis import given, strategies as st

from sim_node.engine.narrowphase import collide_shapes, collide_with_mesh

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


# ---------------------------------------------------------------------------------------------
# Triangle meshes and heightfields: one contact per touching feature, wherever a body lands
# (interior, shared edge, shared vertex), with the normals and distances of the closed forms.

MESH, HEIGHTFIELD = 6, 7


def surface(vertices, faces):
    """A mesh as the engine gets it (the model's preprocessing: merged vertices, features)."""
    from sim_node.model.geometry import clean_triangles, triangle_features

    v, t = clean_triangles(np.asarray(vertices, float), np.asarray(faces))
    flags, adjacent = triangle_features(v, t)
    return {"verts": v, "tris": t, "tri_flags": flags, "tri_adjacent": adjacent}


def grid(cells, half=1.0, alternate=False):
    """cells x cells squares over [-half, half]^2 at z = 0, each cut along a diagonal (all the
    same way, or alternating: vertices of valence 4 and 8)."""
    xs = np.linspace(-half, half, cells + 1)
    X, Y = np.meshgrid(xs, xs)
    v = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    n, faces = cells + 1, []
    for j in range(cells):
        for i in range(cells):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i
            faces += [[a, b, d], [b, c, d]] if alternate and (i + j) % 2 else [[a, b, c], [a, c, d]]
    return v, np.array(faces)


def with_mesh(kind, size, mesh, margin=MARGIN, **placement):
    """Contacts of the shape placed by `placement` (R, p) with the mesh at the origin."""
    return collide_with_mesh(shape(kind, size, **placement), mesh, margin)


@pytest.mark.parametrize("floor, xy", [
    (grid(1), (0.3, -0.4)),                 # interior of a triangle
    (grid(1), (0.0, 0.0)),                  # on the shared diagonal (measured: fell through)
    (grid(4), (0.0, 0.25)),                 # on a grid-line edge
    (grid(4), (0.5, 0.5)),                  # on a vertex of six triangles
    (grid(4, alternate=True), (0.0, 0.0)),  # on a vertex of eight triangles
    (grid(4, alternate=True), (0.5, 0.0)),  # on a vertex of four triangles
], ids=["interior", "diagonal", "grid-line", "vertex-6", "vertex-8", "vertex-4"])
def test_sphere_over_a_flat_mesh_touches_once_at_its_lowest_point_wherever_it_lands(floor, xy):
    height = 0.05 + 0.0012
    contacts = with_mesh(SPHERE, (0.05,), surface(*floor), p=(xy[0], xy[1], height))
    assert len(contacts) == 1
    pa, pb, n, d = contacts[0]
    np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
    assert d == pytest.approx(0.0012, abs=1e-12)
    np.testing.assert_allclose(pb, [xy[0], xy[1], 0.0], atol=1e-12)


@given(st.integers(0, 2 ** 32 - 1))
def test_on_any_triangulation_of_a_placed_plane_a_sphere_touches_once_along_its_normal(seed):
    # Delaunay triangulations of random points (valences 3..9, thin triangles), the winding of
    # random triangles flipped, the floor tilted and moved: one contact at the sphere's lowest
    # point, along the plane's normal, at the closed-form distance
    from scipy.spatial import Delaunay
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    xy = np.vstack([[[-1, -1], [1, -1], [1, 1], [-1, 1]], rng.uniform(-1, 1, (int(rng.integers(0, 40)), 2))])
    faces = Delaunay(xy).simplices
    flip = rng.random(len(faces)) < 0.5
    faces[flip] = faces[flip, ::-1]
    vertices = np.column_stack([xy, np.zeros(len(xy))])
    if rng.random() < 0.5:                            # land exactly on a vertex or an edge
        a, b = vertices[faces[rng.integers(len(faces))][:2]]
        local = a + rng.choice([0.0, 0.5, rng.random()]) * (b - a)
    else:
        local = np.append(rng.uniform(-0.9, 0.9, 2), 0.0)
    R = Rotation.random(random_state=rng).as_matrix()
    p = rng.uniform(-2, 2, 3)
    gap = rng.uniform(-0.002, 0.004)
    centre = R @ (local + [0, 0, 0.05 + gap]) + p
    contacts = collide_with_mesh(shape(SPHERE, (0.05,), p=centre), surface(vertices, faces),
                                 MARGIN, R=R, p=p)
    if np.abs(local[:2]).max() > 0.95:
        return                                        # at the rim: boundary contacts may tilt
    assert len(contacts) == 1
    pa, pb, n, d = contacts[0]
    np.testing.assert_allclose(n, R[:, 2], atol=1e-9)
    assert d == pytest.approx(gap, abs=1e-9)
    np.testing.assert_allclose(pb, R @ local + p, atol=1e-9)


def test_a_box_flat_on_a_fine_grid_touches_at_its_four_corners_only():
    # 20,000 triangles, 1,300 under the box (more than one query chunk): the points where the
    # box face crosses flat interior edges are interior to the patch; its corners hold it up
    yaw = 0.3
    R = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]])
    box = shape(BOX, (0.15, 0.1, 0.05), R=R, p=(0.013, -0.021, 0.0503))
    contacts = collide_with_mesh(box, surface(*grid(100)), MARGIN)
    corners = np.array([R @ [sx * 0.15, sy * 0.1, -0.05] + [0.013, -0.021, 0.0503]
                        for sx in (-1, 1) for sy in (-1, 1)])
    assert len(contacts) == 4
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
        assert d == pytest.approx(0.0003, abs=1e-12)
        assert np.min(np.linalg.norm(corners - pa, axis=1)) < 1e-9


def test_a_capsule_lying_across_shared_edges_touches_at_its_two_ends():
    axis = np.array([1.0, 0.3, 0.0]) / math.hypot(1.0, 0.3)
    R = np.column_stack([np.cross([0, 0, 1], axis), [0, 0, 1], axis])     # z along the axis
    R[:, 1] = np.cross(R[:, 2], R[:, 0])
    capsule = shape(CAPSULE, (0.03, 0.2), R=R, p=(0.01, 0.02, 0.0308))
    contacts = collide_with_mesh(capsule, surface(*grid(10)), MARGIN)
    ends = np.array([[0.01, 0.02, 0.0] + s * 0.2 * axis for s in (-1, 1)])
    assert len(contacts) == 2
    for pa, pb, n, d in contacts:
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
        assert d == pytest.approx(0.0008, abs=1e-12)
        assert np.min(np.linalg.norm(ends - pb, axis=1)) < 1e-9


def roof(slope, sign=-1.0):
    """Two planes z = sign |x| tan(slope) meeting along the y axis: a convex ridge (sign -1) or
    a concave crease (sign +1), each plane two triangles."""
    h = sign * math.tan(slope)
    v = [[-1, -1, h], [0, -1, 0], [0, 1, 0], [-1, 1, h], [1, -1, h], [1, 1, h]]
    return surface(v, [[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]])


def test_a_sphere_over_a_convex_ridge_touches_it_along_the_line_from_the_ridge():
    slope = math.radians(25)
    ridge = roof(slope)
    # above the ridge, and beside it but still nearer the ridge than either face's region
    for centre in ((0.0, 0.1, 0.051), (0.01, -0.2, 0.0505)):
        contacts = with_mesh(SPHERE, (0.05,), ridge, p=centre)
        assert len(contacts) == 1
        pa, pb, n, d = contacts[0]
        c = np.asarray(centre)
        foot = np.array([0.0, c[1], 0.0])
        np.testing.assert_allclose(n, (c - foot) / np.linalg.norm(c - foot), atol=1e-9)
        assert d == pytest.approx(np.linalg.norm(c - foot) - 0.05, abs=1e-9)
    # over a face: the face normal
    n_face = np.array([math.sin(slope), 0, math.cos(slope)])
    c = np.array([0.3, 0.0, -0.3 * math.tan(slope)]) + 0.051 * n_face
    (pa, pb, n, d), = with_mesh(SPHERE, (0.05,), ridge, p=c)
    np.testing.assert_allclose(n, n_face, atol=1e-12)
    assert d == pytest.approx(0.001, abs=1e-12)


def test_a_sphere_in_a_crease_touches_each_face_along_its_normal_and_never_the_crease():
    slope = math.radians(20)
    crease = roof(slope, sign=1.0)
    r = 0.05
    # resting in the crease: one contact per face, at distance h cos(slope) - r
    h = (r + 0.001) / math.cos(slope)
    contacts = with_mesh(SPHERE, (r,), crease, p=(0.0, 0.2, h))
    normals = sorted((tuple(np.round(n, 12)) for _, _, n, _ in contacts))
    expected = sorted([(round(-math.sin(slope), 12), 0.0, round(math.cos(slope), 12)),
                       (round(math.sin(slope), 12), 0.0, round(math.cos(slope), 12))])
    np.testing.assert_allclose(normals, expected, atol=1e-12)
    for *_, d in contacts:
        assert d == pytest.approx(0.001, abs=1e-12)
    # nearer one face: only that face, although the crease is within the margin of the other
    n_right = np.array([-math.sin(slope), 0.0, math.cos(slope)])           # the face at x > 0
    c = np.array([0.05, 0.0, 0.05 * math.tan(slope)]) + 0.0502 * n_right
    contacts = with_mesh(SPHERE, (r,), crease, margin=0.02, p=c)
    assert all(np.allclose(n, n_right, atol=1e-12) or n[0] > 0.3 for _, _, n, _ in contacts)
    assert not any(abs(n[0]) < 1e-6 for _, _, n, _ in contacts)           # no crease normal


def test_a_sphere_over_a_hole_narrower_than_it_rests_on_the_four_rim_edges():
    a, r, h = 0.03, 0.05, 0.041
    outer = [[-1, -1], [1, -1], [1, 1], [-1, 1]]
    inner = [[-a, -a], [a, -a], [a, a], [-a, a]]
    v = [[x, y, 0.0] for x, y in outer + inner]
    faces = sum(([[k, (k + 1) % 4, 4 + (k + 1) % 4], [k, 4 + (k + 1) % 4, 4 + k]] for k in range(4)), [])
    contacts = with_mesh(SPHERE, (r,), surface(v, faces), p=(0, 0, h))
    assert len(contacts) == 4
    for pa, pb, n, d in contacts:
        assert d == pytest.approx(math.hypot(a, h) - r, abs=1e-12)
        assert abs(np.abs(pb[:2]).max() - a) < 1e-12 and abs(pb[2]) < 1e-12     # on the rim
        np.testing.assert_allclose(n, (np.array([0, 0, h]) - pb) / math.hypot(a, h), atol=1e-12)


def test_a_heightfield_pushes_up_a_sphere_sunk_below_its_surface_where_a_shell_pushes_down():
    from sim_node.engine.heightfield import make_heightfield_arrays

    field = make_heightfield_arrays(np.zeros((5, 5)), 0.5, 0.5, -1.0, -1.0)
    sunk = shape(SPHERE, (0.05,), p=(0.1, 0.2, -0.01))      # centre 1 cm under the surface
    (pa, pb, n, d), = collide_with_mesh(sunk, field, MARGIN, heightfield=True)
    np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
    assert d == pytest.approx(-0.06, abs=1e-12)
    shell = surface(field["verts"], field["tris"])
    (pa, pb, n, d), = collide_with_mesh(sunk, shell, MARGIN)
    np.testing.assert_allclose(n, [0, 0, -1], atol=1e-12)
    assert d == pytest.approx(-0.04, abs=1e-12)


def test_a_sphere_lands_on_degenerate_meshes_as_on_their_plane():
    def strip(width):
        # the square split by a strip of slivers `width` wide along y = 0 (coplanar
        # neighbours of near-zero area), with a T-junction on its upper side
        xs = np.linspace(-1, 1, 9)
        v = [[x, 0, 0] for x in xs] + [[x, width, 0] for x in xs] + [[0, 1, 0], [0, -1, 0],
                                                                     [0.125, width, 0]]
        top, bottom, mid = 18, 19, 20
        f = []
        for k in range(8):
            f += [[k, k + 1, 10 + k], [k, 10 + k, 9 + k], [k + 1, k, bottom]]
            f += [[9 + k, mid, top], [mid, 10 + k, top]] if k == 4 else [[9 + k, 10 + k, top]]
        return v, f

    v, f = grid(4)
    fins = np.vstack([v, [[-0.25, -0.25, -0.2]], [[0.0, 0.25, -0.3]]])
    finned = np.vstack([f, [[6, 12, 25], [7, 12, 26]]])            # 3 triangles on two edges
    soup = v[f].reshape(-1, 3)
    unmerged = np.arange(len(soup)).reshape(-1, 3)
    double = np.vstack([unmerged, unmerged[:, ::-1]])               # both windings of each
    cases = {"slivers 1e-12": (strip(1e-12), (0.0625, 0.0)), "slivers 1e-6": (strip(1e-6), (0.125, 1e-6)),
             "non-manifold": ((fins, finned), (-0.25, -0.25)),
             "unmerged, double-sided": ((soup, double), (0.0, 0.0)),
             "flipped": ((v, f[:, ::-1]), (0.25, 0.0))}
    for name, ((vertices, faces), xy) in cases.items():
        contacts = with_mesh(SPHERE, (0.05,), surface(vertices, faces), p=(xy[0], xy[1], 0.0507))
        assert len(contacts) == 1, name
        pa, pb, n, d = contacts[0]
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-9, err_msg=name)
        assert d == pytest.approx(0.0007, abs=1e-9), name


def test_without_feature_data_every_edge_counts_and_nothing_is_lost():
    # a mesh handed over without tri_flags / tri_adjacent (every edge a boundary): still one
    # contact on the shared diagonal, along the normal
    v, f = grid(1)
    contacts = with_mesh(SPHERE, (0.05,), {"verts": v, "tris": f}, p=(0.2, 0.2, 0.0504))
    assert len(contacts) == 1
    np.testing.assert_allclose(contacts[0][2], [0, 0, 1], atol=1e-12)
    assert contacts[0][3] == pytest.approx(0.0004, abs=1e-12)
