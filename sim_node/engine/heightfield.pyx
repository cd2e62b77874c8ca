"""Heightfield as triangles: cell queries by direct grid indexing, triangles and heights.

    make_heightfield_arrays:  heights (ny, nx), spacing, origin => verts, tris, grid fields, BVH
    heightfield_cells:        box [lo, hi] in the heightfield frame => triangles it may touch
                              (_from: in chunks)
    heightfield_triangle:     triangle t => its three vertices in the heightfield frame
    heightfield_height_at:    (x, y) => z of the triangle surface over (x, y), NaN off the grid

Triangulation: see heightfield.pxd (each cell is cut along its (i, j)-(i+1, j+1) diagonal). The
height is linear on each triangle; in barycentric form over a cell
    h = (1 - u) z00 + (u - v) z10 + v z11     if u >= v
    h = (1 - v) z00 + (v - u) z01 + u z11     if u <  v
with (u, v) in [0, 1]^2 the position in the cell and z_ab the height at vertex (i + a, j + b):
at a vertex the weights are exactly 0 and 1, so h is the vertex height to the last bit.

The solid lies below the surface, so heightfield_cells reports triangle t when the box meets the
prism under t: the box overlaps t's cell rectangle in x and y (closed intervals), and lo_z <= the
highest vertex of t. A box deep under the surface still gets its triangles (they carry the
penetration); a box above all three vertices of a triangle does not. The cells come from indexing
the grid, O(1 + cells in the box): this is why a heightfield needs no BVH query. Its BVH (in
make_heightfield_arrays) serves the mesh view, where the triangles have zero thickness.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport floor, NAN

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.bvh cimport BVHTree, bvh_bind
from sim_node.engine.geometry cimport BVH
from sim_node.engine.bvh import mesh_bvh

cnp.import_array()


def grid_triangles(int nx, int ny):
    """Vertex indices (2 (nx-1) (ny-1), 3) int32 of the grid's triangles (heightfield.pxd)."""
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))     # (ny-1, nx-1), cell order
    a = (j * nx + i).ravel()                                      # vertex (i, j) of each cell
    tris = np.empty((2 * a.size, 3), dtype=np.int32)
    tris[0::2] = np.stack([a, a + 1, a + nx + 1], axis=1)
    tris[1::2] = np.stack([a, a + nx + 1, a + nx], axis=1)
    return tris


def make_heightfield_arrays(heights, double dx, double dy, double x0=0.0, double y0=0.0,
                            int leaf_size=4):
    """Arrays of a HEIGHTFIELD MeshC: z = heights[j, i] at (x0 + i dx, y0 + j dy) [m].

    heights (ny, nx) with nx, ny >= 2; dx, dy > 0. Returns a dict with
        verts (nx ny, 3) float64, tris (2 (nx-1) (ny-1), 3) int32   the grid as a triangle mesh
        heights (ny, nx) float64, nx, ny, x0, y0, dx, dy            the grid
        bvh                                                          mesh_bvh(verts, tris, leaf_size)
    ready for Heightfield (or heightfield_bind).
    """
    h = np.array(heights, dtype=np.float64, order="C", copy=True)
    if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2:
        raise ValueError(f"heights: expected shape (ny, nx) with nx, ny >= 2, got {h.shape}")
    if not np.isfinite(h).all():
        raise ValueError("heights: contains NaN or infinity")
    for name, value in (("dx", dx), ("dy", dy)):
        if not 0.0 < value < np.inf:
            raise ValueError(f"{name}: expected a finite spacing > 0 [m], got {value}")
    for name, value in (("x0", x0), ("y0", y0)):
        if not np.isfinite(value):
            raise ValueError(f"{name}: expected a finite origin [m], got {value}")
    ny, nx = h.shape
    xs = x0 + np.arange(nx) * dx
    ys = y0 + np.arange(ny) * dy
    if not (np.diff(xs) > 0).all() or not (np.diff(ys) > 0).all():
        raise ValueError(f"dx = {dx}, dy = {dy} are too small to separate grid lines at "
                         f"x0 = {x0}, y0 = {y0} in double precision")
    verts = np.empty((ny, nx, 3))
    verts[:, :, 0] = xs[None, :]
    verts[:, :, 1] = ys[:, None]
    verts[:, :, 2] = h
    verts = verts.reshape(-1, 3)
    tris = grid_triangles(nx, ny)
    return {"verts": verts, "tris": tris, "heights": h, "nx": nx, "ny": ny,
            "x0": float(x0), "y0": float(y0), "dx": float(dx), "dy": float(dy),
            "bvh": mesh_bvh(verts, tris, leaf_size=leaf_size)}


cdef int heightfield_bind(MeshC* hf, dict arrays) except -1:
    """Fill hf from `arrays` (make_heightfield_arrays' fields with exact dtypes: float64 verts
    and heights, int32 tris and BVH arrays, all C-contiguous). Checks that verts and tris are
    exactly the grid of heightfield.pxd, with grid lines strictly increasing and within 1e-6
    spacings of x0 + i dx, y0 + j dy (the kernels guess cells from these and read the exact lines
    from verts), and that the BVH (bvh_bind) covers the triangles. hf is unchanged on error. The
    caller keeps `arrays` alive while hf is in use."""
    heights = arrays.get("heights")
    verts = arrays.get("verts")
    tris = arrays.get("tris")
    for name, a, dtype in (("heights", heights, np.float64), ("verts", verts, np.float64),
                           ("tris", tris, np.int32)):
        if not isinstance(a, np.ndarray) or a.dtype != dtype or not a.flags.c_contiguous:
            raise TypeError(f"heightfield {name!r}: expected a C-contiguous "
                            f"{np.dtype(dtype).name} numpy array")
    if heights.ndim != 2 or heights.shape[0] < 2 or heights.shape[1] < 2:
        raise ValueError(f"heightfield 'heights': expected (ny, nx), nx, ny >= 2, got {heights.shape}")
    ny, nx = heights.shape
    if (arrays.get("nx"), arrays.get("ny")) != (nx, ny):
        raise ValueError(f"heightfield nx, ny = {arrays.get('nx')}, {arrays.get('ny')} do not "
                         f"match heights {heights.shape} = (ny, nx)")
    x0, y0, dx, dy = (float(arrays[k]) for k in ("x0", "y0", "dx", "dy"))
    if not (np.isfinite([x0, y0]).all() and 0.0 < dx < np.inf and 0.0 < dy < np.inf):
        raise ValueError(f"heightfield: need finite x0, y0 and dx, dy > 0, got "
                         f"{x0}, {y0}, {dx}, {dy}")
    if not np.isfinite(heights).all() or not np.isfinite(verts).all():
        raise ValueError("heightfield: heights or verts contain NaN or infinity")
    if verts.shape != (nx * ny, 3):
        raise ValueError(f"heightfield 'verts': expected shape ({nx * ny}, 3), got {verts.shape}")
    grid = verts.reshape(ny, nx, 3)
    xs, ys = grid[0, :, 0], grid[:, 0, 1]
    if not ((grid[:, :, 0] == xs[None, :]).all() and (grid[:, :, 1] == ys[:, None]).all()
            and (grid[:, :, 2] == heights).all()):
        raise ValueError("heightfield 'verts': vertex j nx + i must be (x_i, y_j, heights[j, i])")
    if not ((np.diff(xs) > 0).all() and (np.diff(ys) > 0).all()
            and np.abs(xs - (x0 + np.arange(nx) * dx)).max() <= 1e-6 * dx
            and np.abs(ys - (y0 + np.arange(ny) * dy)).max() <= 1e-6 * dy):
        raise ValueError("heightfield 'verts': grid lines must increase and sit at "
                         "x0 + i dx, y0 + j dy")
    if tris.shape != (2 * (nx - 1) * (ny - 1), 3) or not (tris == grid_triangles(nx, ny)).all():
        raise ValueError("heightfield 'tris': must be grid_triangles(nx, ny) (heightfield.pxd)")
    cdef BVH tree
    bvh_bind(&tree, arrays.get("bvh") if isinstance(arrays.get("bvh"), dict) else {})
    items = arrays["bvh"]["item"]
    if tree.nitem != tris.shape[0] or (tree.nitem and items.max() >= tree.nitem):
        raise ValueError(f"heightfield 'bvh': must hold each of the {tris.shape[0]} triangles "
                         f"once, has {tree.nitem} items")
    hf.bvh = tree
    hf.nvert = nx * ny
    hf.verts = <const double*> cnp.PyArray_DATA(verts)
    hf.ntri = tris.shape[0]
    hf.tris = <const int*> cnp.PyArray_DATA(tris)
    hf.nface = 0
    hf.face_start = NULL
    hf.face_verts = NULL
    hf.face_normals = NULL
    hf.nx = nx
    hf.ny = ny
    hf.x0 = x0
    hf.y0 = y0
    hf.dx = dx
    hf.dy = dy
    hf.heights = <const double*> cnp.PyArray_DATA(heights)
    return 0


cdef class Heightfield:
    """A HEIGHTFIELD MeshC ready for the kernels: read-only copies of make_heightfield_arrays'
    output (`arrays`; arrays["bvh"] are the BVH's arrays) and the struct (`c`)."""

    def __init__(self, arrays):
        owned = {}
        for name, dtype in (("heights", np.float64), ("verts", np.float64), ("tris", np.int32)):
            if name not in arrays:
                raise KeyError(f"heightfield array {name!r} is missing (have {sorted(arrays)})")
            a = np.array(arrays[name], dtype=dtype, order="C", copy=True)
            a.setflags(write=False)
            owned[name] = a
        for name in ("nx", "ny"):
            owned[name] = int(arrays[name])
        for name in ("x0", "y0", "dx", "dy"):
            owned[name] = float(arrays[name])
        if "bvh" not in arrays:
            raise KeyError(f"heightfield array 'bvh' is missing (have {sorted(arrays)})")
        owned["bvh"] = BVHTree(arrays["bvh"]).arrays      # checked, read-only int32 / float64
        heightfield_bind(&self.c, owned)
        self.arrays = owned

    @property
    def nx(self):
        return self.c.nx

    @property
    def ny(self):
        return self.c.ny

    @property
    def ntri(self):
        return self.c.ntri


# ---------------------------------------------------------------------------------------------
# Kernels

cdef inline int _guess(double v, double origin, double step, int lowest, int highest) noexcept nogil:
    # floor((v - origin) / step) clamped to [lowest, highest] before the int conversion
    cdef double g = floor((v - origin) / step)
    if g < lowest:
        return lowest
    if g > highest:
        return highest
    return <int> g


cdef inline int _first_cell(const double* line, int stride, int ncell, double origin,
                            double step, double v) noexcept nogil:
    # smallest cell c in [0, ncell) whose upper line line[(c+1) stride] >= v; ncell if none.
    # The guess is off by at most one for a regular grid; the walks make it exact.
    cdef int c = _guess(v, origin, step, 0, ncell)
    while c > 0 and line[c * stride] >= v:
        c -= 1
    while c < ncell and line[(c + 1) * stride] < v:
        c += 1
    return c


cdef inline int _last_cell(const double* line, int stride, int ncell, double origin,
                           double step, double v) noexcept nogil:
    # largest cell c in [0, ncell) whose lower line line[c stride] <= v; -1 if none
    cdef int c = _guess(v, origin, step, -1, ncell - 1)
    while c < ncell - 1 and line[(c + 1) * stride] <= v:
        c += 1
    while c >= 0 and line[c * stride] > v:
        c -= 1
    return c


cdef inline double _max3(double a, double b, double c) noexcept nogil:
    if b > a:
        a = b
    return c if c > a else a


cdef int heightfield_cells(const MeshC* hf, const double* lo, const double* hi, int* out,
                           int max_out) noexcept nogil:
    # (box [lo, hi], heightfield frame) => (out: triangles whose prism the box meets, ascending);
    # returns their number, of which the first max_out are written
    return heightfield_cells_from(hf, lo, hi, 0, out, max_out)


cdef int heightfield_cells_from(const MeshC* hf, const double* lo, const double* hi, int skip,
                                int* out, int max_out) noexcept nogil:
    # heightfield_cells from the triangle of rank `skip` on: out[0 : max_out] receives those of
    # rank skip, skip + 1, ...; returns the total number (walking a large box in chunks)
    cdef int ncx = hf.nx - 1, ncy = hf.ny - 1, nx = hf.nx
    cdef const double* z = &hf.verts[2]
    cdef int i0 = _first_cell(hf.verts, 3, ncx, hf.x0, hf.dx, lo[0])
    cdef int i1 = _last_cell(hf.verts, 3, ncx, hf.x0, hf.dx, hi[0])
    cdef int j0 = _first_cell(&hf.verts[1], 3 * nx, ncy, hf.y0, hf.dy, lo[1])
    cdef int j1 = _last_cell(&hf.verts[1], 3 * nx, ncy, hf.y0, hf.dy, hi[1])
    cdef int i, j, a, t, found = 0
    cdef double z00, z10, z11, z01
    for j in range(j0, j1 + 1):
        for i in range(i0, i1 + 1):
            a = j * nx + i
            z00 = z[3 * a]
            z10 = z[3 * (a + 1)]
            z11 = z[3 * (a + nx + 1)]
            z01 = z[3 * (a + nx)]
            t = 2 * (j * ncx + i)
            if _max3(z00, z10, z11) >= lo[2]:
                # skip <= found < skip + max_out, in one unsigned comparison
                if <unsigned int> (found - skip) < <unsigned int> max_out:
                    out[found - skip] = t
                found += 1
            if _max3(z00, z11, z01) >= lo[2]:
                # skip <= found < skip + max_out, in one unsigned comparison
                if <unsigned int> (found - skip) < <unsigned int> max_out:
                    out[found - skip] = t + 1
                found += 1
    return found


cdef void heightfield_triangle(const MeshC* hf, int t, double* v) noexcept nogil:
    # (triangle t) => (v [9]: its vertices, counter-clockwise from +z, heightfield frame)
    cdef int ncx = hf.nx - 1
    cdef int cell = t >> 1
    cdef int a = (cell // ncx) * hf.nx + cell % ncx
    cdef int corner[3]
    cdef int k, m
    corner[0] = a
    if t & 1:
        corner[1] = a + hf.nx + 1
        corner[2] = a + hf.nx
    else:
        corner[1] = a + 1
        corner[2] = a + hf.nx + 1
    for k in range(3):
        for m in range(3):
            v[3 * k + m] = hf.verts[3 * corner[k] + m]


cdef double heightfield_height_at(const MeshC* hf, double x, double y) noexcept nogil:
    # (x, y) => z on the triangle over (x, y) (module docstring); NaN outside the grid
    cdef int ncx = hf.nx - 1, ncy = hf.ny - 1, nx = hf.nx
    cdef const double* xs = hf.verts
    cdef const double* ys = &hf.verts[1]
    cdef int i, j, a
    cdef double u, v, z00, z10, z11, z01
    if not (xs[0] <= x <= xs[3 * ncx] and ys[0] <= y <= ys[3 * nx * ncy]):
        return NAN
    i = _last_cell(xs, 3, ncx, hf.x0, hf.dx, x)
    j = _last_cell(ys, 3 * nx, ncy, hf.y0, hf.dy, y)
    u = (x - xs[3 * i]) / (xs[3 * (i + 1)] - xs[3 * i])
    v = (y - ys[3 * nx * j]) / (ys[3 * nx * (j + 1)] - ys[3 * nx * j])
    a = j * nx + i
    z00 = hf.verts[3 * a + 2]
    z10 = hf.verts[3 * (a + 1) + 2]
    z11 = hf.verts[3 * (a + nx + 1) + 2]
    z01 = hf.verts[3 * (a + nx) + 2]
    if u >= v:
        return (1.0 - u) * z00 + (u - v) * z10 + v * z11
    return (1.0 - v) * z00 + (v - u) * z01 + u * z11


# ---------------------------------------------------------------------------------------------
# Python wrappers (validated)

def cells_into(Heightfield hf not None, lo, hi, out, int skip=0):
    """heightfield_cells_from into out (m,) int32: the triangles of rank skip (>= 0) ..
    skip + len(out) - 1; returns the true total count (a large box read in chunks)."""
    cdef cnp.ndarray lo_a = as_vector(lo, 3, "lo")
    cdef cnp.ndarray hi_a = as_vector(hi, 3, "hi")
    if not isinstance(out, np.ndarray) or out.dtype != np.int32 or out.ndim != 1 \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise TypeError("out: expected a writable C-contiguous int32 vector")
    if skip < 0:
        raise ValueError(f"skip: expected a rank >= 0, got {skip}")
    cdef cnp.ndarray buf = <cnp.ndarray> out
    return heightfield_cells_from(&hf.c, data_ptr(lo_a), data_ptr(hi_a), skip,
                                  <int*> cnp.PyArray_DATA(buf), <int> buf.shape[0])


def cells(Heightfield hf not None, lo, hi):
    """Triangles (int32, ascending) whose prism meets the box [lo, hi] (heightfield frame, [m]):
    cell rectangle overlapping the box in x, y and highest vertex >= lo[2]."""
    cdef cnp.ndarray lo_a = as_vector(lo, 3, "lo")
    cdef cnp.ndarray hi_a = as_vector(hi, 3, "hi")
    cdef cnp.ndarray out = np.empty(64, dtype=np.int32)
    cdef int found = heightfield_cells(&hf.c, data_ptr(lo_a), data_ptr(hi_a),
                                       <int*> cnp.PyArray_DATA(out), 64)
    if found > 64:
        out = np.empty(found, dtype=np.int32)
        heightfield_cells(&hf.c, data_ptr(lo_a), data_ptr(hi_a), <int*> cnp.PyArray_DATA(out),
                          found)
    return out[:found]


def triangle(Heightfield hf not None, int t):
    """Vertices (3, 3) of triangle t (rows: vertices, counter-clockwise from +z) [m]."""
    if not 0 <= t < hf.c.ntri:
        raise IndexError(f"triangle {t} out of range [0, {hf.c.ntri})")
    out = np.empty((3, 3))
    heightfield_triangle(&hf.c, t, <double*> cnp.PyArray_DATA(out))
    return out


def heightfield_height(Heightfield hf not None, x, y):
    """Surface height z(x, y) [m] of the triangle surface (linear on each triangle, equal to
    heights at the grid vertices), NaN outside the grid. x, y broadcast; returns an array of
    their broadcast shape (a float for scalars)."""
    xb, yb = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    xa = np.ascontiguousarray(xb).ravel()
    ya = np.ascontiguousarray(yb).ravel()
    out = np.empty(xa.shape[0])
    cdef const double* px = <const double*> cnp.PyArray_DATA(xa)
    cdef const double* py = <const double*> cnp.PyArray_DATA(ya)
    cdef double* po = <double*> cnp.PyArray_DATA(out)
    cdef Py_ssize_t k, n = xa.shape[0]
    with nogil:
        for k in range(n):
            po[k] = heightfield_height_at(&hf.c, px[k], py[k])
    out = out.reshape(xb.shape)
    return float(out) if out.ndim == 0 else out
