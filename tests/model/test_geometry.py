"""Mass properties of the primitive shapes against trimesh's numeric integration of finely
tessellated solids (an independent computation), and mesh loading."""
import math

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_node.model import geometry as geo

CASES = [
    (geo.Box((0.3, 0.2, 0.1)), lambda: trimesh.creation.box(extents=(0.3, 0.2, 0.1)), 1e-12),
    (geo.Sphere(0.2), lambda: trimesh.creation.icosphere(subdivisions=6, radius=0.2), 2e-3),
    (geo.Cylinder(0.1, 0.5), lambda: trimesh.creation.cylinder(radius=0.1, height=0.5, sections=512), 2e-4),
    (geo.Capsule(0.1, 0.3), lambda: trimesh.creation.capsule(height=0.3, radius=0.1, count=[256, 256]), 2e-3),
]


@pytest.mark.parametrize("shape, reference, rtol", CASES, ids=lambda c: type(c).__name__)
def test_primitive_inertia_matches_tessellated_solid(shape, reference, rtol):
    mesh = reference()
    props = geo.mass_properties(shape, 2.0)
    expected = mesh.moment_inertia * (2.0 / mesh.mass)
    np.testing.assert_allclose(props.inertia, expected, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(props.com, mesh.center_mass, atol=1e-9)


def test_mesh_mass_properties_use_the_solid_and_its_hull_when_open(tmp_path):
    box = trimesh.creation.box(extents=(0.4, 0.2, 0.1))
    box.apply_translation([1.0, 0.0, 0.0])
    path = tmp_path / "box.stl"
    box.export(path)
    mesh = geo.load_mesh(str(path))
    props = geo.mass_properties(mesh, 3.0)
    # binary STL stores float32 vertices: agreement to ~1e-7
    np.testing.assert_allclose(props.com, [1.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(props.inertia, np.diag([3 * 0.05 / 12, 3 * 0.17 / 12, 3 * 0.2 / 12]),
                               rtol=1e-6, atol=1e-9)
    open_box = trimesh.Trimesh(box.vertices, box.faces[:-2])      # one face removed
    open_path = tmp_path / "open.stl"
    open_box.export(open_path)
    hull = geo.mass_properties(geo.load_mesh(str(open_path)), 3.0)
    np.testing.assert_allclose(hull.inertia, props.inertia, rtol=1e-9, atol=1e-12)


def test_mesh_scale_and_missing_file(tmp_path):
    box = trimesh.creation.box(extents=(1, 1, 1))
    path = tmp_path / "unit.obj"
    box.export(path)
    mesh = geo.load_mesh(str(path), (0.5, 2.0, 1.0))
    np.testing.assert_allclose(mesh.vertices.max(0) - mesh.vertices.min(0), [0.5, 2.0, 1.0])
    with pytest.raises(FileNotFoundError):
        geo.load_mesh(str(tmp_path / "missing.stl"))
    with pytest.raises(ValueError, match="no volume"):
        geo.mass_properties(geo.Plane((0, 0, 1), 0.0), 1.0)


# ---------------------------------------------------------------------------------------------
# Triangle meshes as collision surfaces: cleaning and the neighbourhood of each triangle,
# against closed-form geometry (which edges are flat, convex or concave, who is whose neighbour)



def features_by_edge(verts, tris):
    """{(undirected edge, triangle): (flat, opposite vertex)} and the flat vertices, from
    triangle_features: independent of the triangles' vertex order."""
    flags, adjacent = geo.triangle_features(verts, tris)
    edges = {}
    for t, tri in enumerate(tris):
        for k in range(3):
            key = (frozenset((int(tri[k]), int(tri[(k + 1) % 3]))), frozenset(int(x) for x in tri))
            edges[key] = (bool(flags[t] & (geo.FLAT_EDGE << k)), int(adjacent[t, k]))
    flat_vertices = {int(tri[k]) for t, tri in enumerate(tris) for k in range(3)
                     if flags[t] & (geo.FLAT_VERTEX << k)}
    return edges, flat_vertices, flags


def test_a_flat_grid_has_flat_interior_edges_and_vertices_and_a_free_boundary():
    n = 4
    xs = np.linspace(0, 1, n + 1)
    X, Y = np.meshgrid(xs, xs)
    verts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    tris = []
    for j in range(n):
        for i in range(n):
            a, b, c, d = j * (n + 1) + i, j * (n + 1) + i + 1, (j + 1) * (n + 1) + i + 1, (j + 1) * (n + 1) + i
            tris += [[a, b, c], [a, c, d]]
    tris = np.array(tris)
    edges, flat_vertices, flags = features_by_edge(verts, tris)
    for (edge, tri), (flat, opposite) in edges.items():
        u, v = (verts[i] for i in edge)
        on_boundary = any(abs(u[k] - v[k]) < 1e-12 and u[k] in (0.0, 1.0) for k in (0, 1))
        assert flat != on_boundary
        assert (opposite == geo.NO_NEIGHBOUR) == on_boundary
        if not on_boundary:                  # the neighbour's vertex is off the shared edge
            assert opposite not in edge and opposite not in tri
    interior = {i for i, p in enumerate(verts) if 0 < p[0] < 1 and 0 < p[1] < 1}
    assert flat_vertices == interior
    assert not np.any(flags & geo.DEGENERATE)


def test_a_ridge_and_a_crease_are_not_flat_and_name_the_far_vertex():
    for sign in (-1.0, 1.0):                  # ridge, crease: z = sign |x| tan 10 deg
        h = sign * math.tan(math.radians(10))
        verts = np.array([[-1, 0, h], [0, -1, 0], [0, 1, 0], [1, 0, h]])
        tris = np.array([[0, 1, 2], [1, 3, 2]])
        flags, adjacent = geo.triangle_features(verts, tris)
        assert adjacent[0].tolist() == [-1, 3, -1] and adjacent[1].tolist() == [-1, -1, 0]
        assert not np.any(flags & (geo.FLAT_EDGE * 7))
    # below the angle the edge is flat
    verts[:, 2] = [1e-5, 0, 0, 1e-5]
    flags, _ = geo.triangle_features(verts, tris)
    assert flags[0] & (geo.FLAT_EDGE << 1) and flags[1] & (geo.FLAT_EDGE << 2)


@given(st.integers(0, 2 ** 32 - 1))
def test_features_do_not_depend_on_winding_or_vertex_order(seed):
    # the same surface with random triangles reversed and rotated: the same flat edges and
    # vertices and the same neighbour across each edge
    import trimesh

    rng = np.random.default_rng(seed)
    mesh = [trimesh.creation.icosphere(1), trimesh.creation.box(),
            trimesh.creation.annulus(0.5, 1.0, 0.3)][int(rng.integers(3))]
    verts = mesh.vertices.copy()
    if rng.random() < 0.5:
        verts[:, 2] = 0.0 if rng.random() < 0.5 else verts[:, 2]
    tris = np.array(mesh.faces)
    shuffled = tris.copy()
    flip = rng.random(len(tris)) < 0.5
    shuffled[flip] = shuffled[flip, ::-1]
    shuffled = np.array([np.roll(t, int(rng.integers(3))) for t in shuffled])
    a = features_by_edge(verts, tris)
    b = features_by_edge(verts, shuffled)
    assert a[0] == b[0] and a[1] == b[1]


def test_slivers_are_degenerate_and_their_neighbours_do_not_lean_on_them():
    verts = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1e-12, 0], [0.5, -1.0, 0.0], [0.5, 1.0, 0.0]])
    tris = np.array([[0, 1, 2], [1, 0, 3], [0, 2, 4], [2, 1, 4]])
    flags, adjacent = geo.triangle_features(verts, tris)
    assert flags[0] & geo.DEGENERATE and not np.any(flags[1:] & geo.DEGENERATE)
    # across the sliver's edges its neighbours see no usable neighbour
    assert adjacent[1, 0] == adjacent[2, 0] == adjacent[3, 0] == geo.MANY_NEIGHBOURS
    assert adjacent[2, 1] == 1 and adjacent[3, 2] == 0        # 0-2-4 and 2-1-4 share 2-4


def test_an_edge_of_three_triangles_is_non_manifold_and_never_flat():
    verts = np.array([[0, 0, 0], [1, 0, 0], [0.5, 1, 0], [0.5, -1, 0], [0.5, 0, -1]])
    tris = np.array([[0, 1, 2], [1, 0, 3], [0, 1, 4]])
    flags, adjacent = geo.triangle_features(verts, tris)
    assert adjacent[:, 0].tolist() == [geo.MANY_NEIGHBOURS] * 3
    assert not np.any(flags & (geo.FLAT_EDGE | geo.FLAT_VERTEX * 7))


def test_cleaning_merges_copies_and_drops_empty_and_repeated_triangles():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)
    faces = np.array([[0, 1, 2], [0, 2, 3]])
    soup = square[faces].reshape(-1, 3)                      # STL: 6 vertices for 2 triangles
    tris = np.array([[0, 1, 2], [3, 4, 5], [5, 4, 3], [0, 0, 1], [2, 1, 0]])
    verts, clean = geo.clean_triangles(soup, tris)
    assert len(verts) == 4 and clean.dtype == np.int32
    assert sorted(sorted(map(tuple, verts[t].round(12).tolist())) for t in clean) == sorted(
        sorted(map(tuple, square[t].tolist())) for t in faces)
    flags, adjacent = geo.triangle_features(verts, clean)
    assert np.all(adjacent >= -1) and (adjacent >= 0).sum() == 2    # one shared edge, manifold


def test_a_t_junction_is_split_so_that_both_sides_share_its_edges():
    # two triangles below y = 0 share nothing with the three above, whose middle vertex (0, 0)
    # lies on the lower left triangle's edge: after cleaning that edge is cut at it and every
    # edge along y = 0 has a neighbour on each side, all flat
    verts = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 0], [-1, 1, 0], [1, 1, 0],
                      [0.5, 0, 0]], float)
    tris = np.array([[1, 0, 2], [3, 0, 4], [3, 4, 5], [6, 3, 5], [1, 6, 5]])
    v, t = geo.clean_triangles(verts, tris)
    assert len(t) == 7                                   # the lower triangle in three pieces
    trimesh_area = 0.5 * np.linalg.norm(np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]), axis=1)
    assert trimesh_area.sum() == pytest.approx(3.0, abs=1e-12)
    flags, adjacent = geo.triangle_features(v, t)
    for k_tri, tri in enumerate(t):
        for k in range(3):
            a, b = v[tri[k]], v[tri[(k + 1) % 3]]
            if a[1] == 0 and b[1] == 0:                  # an edge along y = 0
                assert adjacent[k_tri, k] >= 0 and flags[k_tri] & (geo.FLAT_EDGE << k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-0.99, 0.99), min_size=1, max_size=40, unique=True), st.randoms())
def test_every_t_junction_along_an_edge_is_split(inner, rng):
    # one triangle below y = 0, a fan of triangles above whose vertices x_k all lie on its top
    # edge, in any order: after cleaning every edge along y = 0 has a neighbour on each side,
    # the bottom triangle is cut into one piece per top triangle, and the area is unchanged
    xs = np.unique(np.round(np.array([-1.0, 1.0, *inner]), 4))
    n = len(xs) - 1
    verts = np.array([[x, 0.0, 0.0] for x in xs] + [[0, -1, 0], [0, 1, 0]], float)
    below, above = len(xs), len(xs) + 1
    tris = [[n, 0, below]] + [[k, k + 1, above] for k in range(n)]
    rng.shuffle(tris)
    v, t = geo.clean_triangles(verts, np.array(tris))
    assert len(t) == 2 * n
    area = 0.5 * np.linalg.norm(np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]), axis=1)
    assert area.sum() == pytest.approx(2.0, abs=1e-12)
    flags, adjacent = geo.triangle_features(v, t)
    along = 0
    for k_tri, tri in enumerate(t):
        for k in range(3):
            a, b = v[tri[k]], v[tri[(k + 1) % 3]]
            if a[1] == 0 and b[1] == 0:
                along += 1
                assert adjacent[k_tri, k] >= 0 and flags[k_tri] & (geo.FLAT_EDGE << k)
    assert along == 2 * n


def test_a_mesh_file_beyond_the_size_cap_is_refused_without_reading_it(tmp_path):
    # a sparse 2 GB "mesh": refused from its size, in bounded time and memory
    path = tmp_path / "huge.stl"
    with open(path, "wb") as f:
        f.truncate(geo.MAX_MESH_FILE_SIZE + 1)
    with pytest.raises(geo.MeshLoadError, match="more than the 1024 MB"):
        geo.load_mesh(str(path))
