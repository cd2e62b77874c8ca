# Triangle geometry of a HEIGHTFIELD MeshC: grid-indexed cell queries, triangles and heights.
#
# Grid (geometry.pxd): vertex (i, j) = j nx + i at (x_i, y_j, heights[j nx + i]), with
# x_i = x0 + i dx, y_j = y0 + j dy; the kernels read x_i, y_j back from verts so they agree with
# the mesh view to the last bit. Cell (i, j), 0 <= i < nx-1, 0 <= j < ny-1, is cut along its
# diagonal from vertex (i, j) to (i+1, j+1):
#     triangle 2 c     = (i, j), (i+1, j), (i+1, j+1)    (below the diagonal, u >= v)
#     triangle 2 c + 1 = (i, j), (i+1, j+1), (i, j+1)    (above it, v >= u)
# with c = j (nx-1) + i and (u, v) the position in the cell scaled to [0, 1]^2. Both are
# counter-clockwise seen from +z (outside: the solid is below).
from sim_node.engine.geometry cimport MeshC


cdef class Heightfield:
    # A HEIGHTFIELD MeshC and the arrays it points into (read-only copies, see heightfield_bind).
    cdef MeshC c
    cdef readonly object arrays


cdef int heightfield_bind(MeshC* hf, dict arrays) except -1
cdef int heightfield_cells(const MeshC* hf, const double* lo, const double* hi, int* out,
                           int max_out) noexcept nogil
cdef int heightfield_cells_from(const MeshC* hf, const double* lo, const double* hi, int skip,
                                int* out, int max_out) noexcept nogil
cdef void heightfield_triangle(const MeshC* hf, int t, double* v) noexcept nogil
cdef double heightfield_height_at(const MeshC* hf, double x, double y) noexcept nogil
