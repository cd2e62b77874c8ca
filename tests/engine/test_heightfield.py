"""Heightfield triangles: grid-indexed cell queries against brute force over every triangle of the
mesh view (verts, tris), triangles against the mesh view, heights against barycentric
interpolation over all triangles, plus degenerate boxes, overflow and validation."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from sim_node.engine import bvh
from sim_node.engine import heightfield as hfm

seeds = st.integers(0, 2 ** 32 - 1)


def random_field(rng, quarter_grid=False):
    """A random heightfield and its arrays. quarter_grid: spacing and origin in quarters, exact
    in binary, so that boxes can sit exactly on grid lines."""
    nx, ny = rng.integers(2, 12, 2)
    heights = rng.normal(size=(ny, nx)) * rng.uniform(0.0, 1.0)
    if quarter_grid:
        dx, dy = rng.integers(1, 5, 2) / 4
        x0, y0 = rng.integers(-8, 8, 2) / 4
    else:
        dx, dy = rng.uniform(0.05, 1.0, 2)
        x0, y0 = rng.uniform(-3.0, 3.0, 2)
    arrays = hfm.make_heightfield_arrays(heights, dx, dy, x0, y0)
    return hfm.Heightfield(arrays), arrays


def brute_cells(arrays, lo, hi):
    """Triangles whose prism (xy footprint, solid below the highest vertex) meets [lo, hi]."""
    corners = arrays["verts"][arrays["tris"]]                   # (ntri, 3, 3)
    tlo, thi = corners.min(axis=1), corners.max(axis=1)
    hit = (np.all(tlo[:, :2] <= hi[:2], axis=1) & np.all(lo[:2] <= thi[:, :2], axis=1)
           & (thi[:, 2] >= lo[2]))
    return np.flatnonzero(hit)


def query_boxes(rng, arrays):
    v = arrays["verts"]
    xs, ys = np.unique(v[:, 0]), np.unique(v[:, 1])
    span_lo, span_hi = v.min(axis=0) - 1.0, v.max(axis=0) + 1.0
    boxes = []
    for _ in range(10):
        a, b = rng.uniform(span_lo, span_hi), rng.uniform(span_lo, span_hi)
        boxes.append((np.minimum(a, b), np.maximum(a, b)))
    # on grid lines: edges of the box exactly on vertex coordinates, and zero-extent boxes
    for _ in range(5):
        i = np.sort(rng.integers(0, len(xs), 2))
        j = np.sort(rng.integers(0, len(ys), 2))
        z = rng.uniform(span_lo[2], span_hi[2], 2)
        boxes.append((np.array([xs[i[0]], ys[j[0]], z.min()]), np.array([xs[i[1]], ys[j[1]], z.max()])))
    k = rng.integers(0, len(v))
    boxes.append((v[k].copy(), v[k].copy()))                    # a vertex exactly
    boxes.append((v[k] - [0, 0, 10], v[k] - [0, 0, 5]))         # deep below a vertex
    boxes.append((v[k] + [0, 0, 1e-9], v[k] + [0, 0, 1]))       # just above a vertex
    boxes.append((span_lo - 5, span_lo - 4))                    # outside: nothing
    boxes.append((np.full(3, -1e300), np.full(3, 1e300)))       # everything, huge numbers
    boxes.append((span_hi, span_lo))                            # inverted: nothing
    return boxes


@given(seeds, st.booleans())
def test_cells_are_exactly_the_triangles_whose_prism_meets_the_box(seed, quarter_grid):
    rng = np.random.default_rng(seed)
    hf, arrays = random_field(rng, quarter_grid)
    for lo, hi in query_boxes(rng, arrays):
        found = hfm.cells(hf, lo, hi)
        assert np.array_equal(found, brute_cells(arrays, lo, hi)), (lo, hi)


def test_cells_on_shared_edges_and_corners():
    hf = hfm.Heightfield(hfm.make_heightfield_arrays(np.zeros((4, 5)), 1.0, 1.0))
    # the vertex (2, 1) is a corner of cells (1, 0), (2, 0), (1, 1), (2, 1): all 8 triangles
    assert hfm.cells(hf, [2, 1, 0], [2, 1, 0]).tolist() == [2, 3, 4, 5, 10, 11, 12, 13]
    # a box touching the grid's right edge from outside still touches the last column
    assert hfm.cells(hf, [4, 0.5, -1], [5, 0.5, 1]).tolist() == [6, 7]
    assert hfm.cells(hf, [4 + 1e-12, 0, -1], [5, 3, 1]).size == 0
    # a box above the flat surface sees nothing; one touching it from above sees the cell
    assert hfm.cells(hf, [0.5, 0.5, 1e-12], [0.6, 0.6, 1]).size == 0
    assert hfm.cells(hf, [0.5, 0.5, 0.0], [0.6, 0.6, 1]).tolist() == [0, 1]


def test_a_box_over_one_triangle_of_a_tilted_cell_sees_only_that_triangle():
    # vertex (1, 0) up: triangle 0 = (0,0), (1,0), (1,1) reaches z = 1, triangle 1 stays at 0
    heights = np.array([[0.0, 1.0], [0.0, 0.0]])
    hf = hfm.Heightfield(hfm.make_heightfield_arrays(heights, 1.0, 1.0))
    assert hfm.cells(hf, [0, 0, 0.5], [1, 1, 2]).tolist() == [0]
    assert hfm.cells(hf, [0, 0, -0.5], [1, 1, 2]).tolist() == [0, 1]


def test_cells_capacity_overflow_returns_true_count_and_prefix():
    hf, arrays = random_field(np.random.default_rng(4))
    everything = hfm.cells(hf, [-1e9] * 3, [1e9] * 3)
    assert np.array_equal(everything, np.arange(hf.ntri))
    for capacity in (0, 1, 5):
        out = np.full(capacity, -1, dtype=np.int32)
        assert hfm.cells_into(hf, [-1e9] * 3, [1e9] * 3, out) == hf.ntri
        assert np.array_equal(out, everything[:capacity])


@given(seeds, st.integers(1, 30))
def test_cells_read_in_chunks_are_the_whole_answer_in_order(seed, chunk):
    # heightfield_cells_from: consecutive skips of `chunk` triangles concatenate to the answer
    rng = np.random.default_rng(seed)
    hf, arrays = random_field(rng)
    lo = rng.uniform(-4, 4, 3)
    hi = lo + rng.uniform(0, 6, 3)
    full = hfm.cells(hf, lo, hi)
    parts = []
    for skip in range(0, max(len(full), 1), chunk):
        out = np.full(chunk, -1, dtype=np.int32)
        assert hfm.cells_into(hf, lo, hi, out, skip=skip) == len(full)
        parts.append(out[:min(chunk, len(full) - skip)])
    assert np.array_equal(np.concatenate(parts), full)
    with pytest.raises(ValueError, match="skip"):
        hfm.cells_into(hf, lo, hi, np.zeros(1, np.int32), skip=-1)


@given(seeds)
def test_triangles_match_the_mesh_view_and_face_up(seed):
    rng = np.random.default_rng(seed)
    hf, arrays = random_field(rng)
    nx = arrays["nx"]
    for t in range(hf.ntri):
        v = hfm.triangle(hf, t)
        assert np.array_equal(v, arrays["verts"][arrays["tris"][t]])
        e1, e2 = v[1] - v[0], v[2] - v[0]
        assert e1[0] * e2[1] - e1[1] * e2[0] > 0, "counter-clockwise seen from +z"
    # the diagonal of cell (i, j) joins vertex (i, j) to (i + 1, j + 1)
    i, j = nx - 2, 0
    c = j * (nx - 1) + i
    assert set(arrays["tris"][2 * c]) & set(arrays["tris"][2 * c + 1]) == {j * nx + i,
                                                                            (j + 1) * nx + i + 1}


def barycentric_height(arrays, x, y):
    """Independent reference: the height of the (first) triangle containing (x, y), from its
    barycentric coordinates; NaN when no triangle contains the point."""
    corners = arrays["verts"][arrays["tris"]]
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    l1 = ((x - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (y - a[:, 1])) / det
    l2 = ((b[:, 0] - a[:, 0]) * (y - a[:, 1]) - (x - a[:, 0]) * (b[:, 1] - a[:, 1])) / det
    l0 = 1 - l1 - l2
    inside = (l0 >= -1e-12) & (l1 >= -1e-12) & (l2 >= -1e-12)
    if not inside.any():
        return np.nan
    t = np.flatnonzero(inside)[0]
    return l0[t] * a[t, 2] + l1[t] * b[t, 2] + l2[t] * c[t, 2]


@given(seeds)
def test_height_matches_barycentric_interpolation(seed):
    rng = np.random.default_rng(seed)
    hf, arrays = random_field(rng)
    v = arrays["verts"]
    xs = rng.uniform(v[:, 0].min(), v[:, 0].max(), 40)
    ys = rng.uniform(v[:, 1].min(), v[:, 1].max(), 40)
    ours = hfm.heightfield_height(hf, xs, ys)
    ref = np.array([barycentric_height(arrays, x, y) for x, y in zip(xs, ys)])
    scale = 1.0 + np.abs(v[:, 2]).max()
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12 * scale)
    # at the vertices: the heights themselves, exactly
    assert np.array_equal(hfm.heightfield_height(hf, v[:, 0], v[:, 1]), v[:, 2])


def test_height_reproduces_a_plane_and_is_nan_off_the_grid():
    x, y = np.meshgrid(0.5 * np.arange(6), 0.25 * np.arange(4))
    plane = 0.3 * x - 1.2 * y + 0.7
    hf = hfm.Heightfield(hfm.make_heightfield_arrays(plane, 0.5, 0.25))
    px, py = np.random.default_rng(5).uniform([0, 0], [2.5, 0.75], (50, 2)).T
    np.testing.assert_allclose(hfm.heightfield_height(hf, px, py), 0.3 * px - 1.2 * py + 0.7,
                               atol=1e-14)
    off = hfm.heightfield_height(hf, [-0.1, 2.6, 1.0, 1.0, np.nan], [0.1, 0.1, -1e-9, 0.8, 0.1])
    assert np.isnan(off).all()
    assert isinstance(hfm.heightfield_height(hf, 2.5, 0.75), float)


def test_the_heightfield_is_a_valid_triangle_mesh_with_a_bvh():
    rng = np.random.default_rng(6)
    hf, arrays = random_field(rng)
    tree = bvh.BVHTree(arrays["bvh"])
    lo, hi = bvh.triangle_boxes(arrays["verts"], arrays["tris"])
    for qlo, qhi in query_boxes(rng, arrays)[:-3]:
        found = np.sort(bvh.query_aabb(tree, qlo, qhi))
        assert np.array_equal(found, np.flatnonzero(np.all(lo <= qhi, 1) & np.all(qlo <= hi, 1)))
        # zero-thickness triangles the box touches are a subset of the prisms it meets
        assert set(found) <= set(hfm.cells(hf, qlo, qhi))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"heights": np.zeros((1, 4))}, ValueError, "nx, ny >= 2"),
    ({"heights": [[0.0, np.nan], [0.0, 0.0]]}, ValueError, "NaN"),
    ({"dx": 0.0}, ValueError, "dx"),
    ({"dy": -1.0}, ValueError, "dy"),
    ({"x0": np.inf}, ValueError, "x0"),
    ({"dx": 1e-300, "x0": 1.0}, ValueError, "too small"),
])
def test_make_heightfield_arrays_rejects_bad_grids(kwargs, error, message):
    args = {"heights": np.zeros((3, 3)), "dx": 1.0, "dy": 1.0, "x0": 0.0, "y0": 0.0} | kwargs
    with pytest.raises(error, match=message):
        hfm.make_heightfield_arrays(**args)


@pytest.mark.parametrize("corrupt, message", [
    (lambda a: a["tris"].__setitem__((0, 1), 2), "grid_triangles"),
    (lambda a: a["verts"].__setitem__((4, 2), 9.0), "heights\\[j, i\\]"),
    (lambda a: a.__setitem__("dx", 2.0), "x0 \\+ i dx"),
    (lambda a: a.__setitem__("nx", 5), "do not match"),
    (lambda a: a.__setitem__("bvh", bvh.build_bvh(np.zeros((2, 3)), np.ones((2, 3)))),
     "must hold each"),
])
def test_heightfield_rejects_inconsistent_arrays(corrupt, message):
    arrays = hfm.make_heightfield_arrays(np.arange(12.0).reshape(3, 4), 1.0, 1.0)
    corrupt(arrays)
    with pytest.raises(ValueError, match=message):
        hfm.Heightfield(arrays)
