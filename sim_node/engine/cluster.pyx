"""Reduction of the contacts between one pair of bodies to at most max_contacts.

Points closer than `merge_radius` to a kept, deeper point with (nearly) the same normal are merged
into it first (boundary-layer contact finds many nearly coincident points on fine meshes); points
with different normals stay apart however close they are: a body in a crease or a corner touches
each face near the same place, and each face must keep holding it.

If more than max_contacts remain, the points that hold the body up go first. The supporting
points are those within `band` of the deepest one (the rest gap plus the step's approach: any of
them may carry load this step); the others are speculative (they only matter if the body tips
towards them). Kept, in this order: the deepest point; among the supporting points, the one
farthest from it, then the farthest on either side of the line through those two (with the
first two, the corners of the support quadrilateral: a face lying in a bowl on four corners
keeps all four); then farthest-point sampling over the supporting points, then over the rest.
Plain farthest-point sampling would not do: after two diagonal corners of a rectangle, the
middles of its long sides are farther from both than the other two corners, which lose their
place to points that carry nothing — the body then tips onto them, the next step chooses
differently, and the switching pumps energy into a body that should rest (a box in a
triangulated bowl rocked for ever). Distances are measured in the plane of the contact (across
the normal of the point they are measured from). Deterministic: ties go to the lower index.
Works in place on c[0:n]; returns the new count. scratch: n ints.
"""
from libc.math cimport sqrt

from sim_node.engine.geometry cimport RawContact

# cosine of the largest angle between the normals of two points that may merge (8.1 degrees:
# neighbouring triangles of a finely curved surface merge, the faces of a crease do not)
cdef double MERGE_NORMAL_COS = 0.99


cdef inline void _mid(const RawContact* a, double* x) noexcept nogil:
    cdef int k
    for k in range(3):
        x[k] = 0.5 * (a.pa[k] + a.pb[k])


cdef inline double _planar_dist2(const RawContact* a, const RawContact* b) noexcept nogil:
    # squared distance of the two points projected on the plane normal to a's normal
    cdef double d[3]
    cdef double along
    cdef int k
    for k in range(3):
        d[k] = 0.5 * (a.pa[k] + a.pb[k] - b.pa[k] - b.pb[k])
    along = d[0] * a.normal[0] + d[1] * a.normal[1] + d[2] * a.normal[2]
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along


cdef inline void _swap(RawContact* c, int i, int j) noexcept nogil:
    cdef RawContact tmp
    if i != j:
        tmp = c[i]
        c[i] = c[j]
        c[j] = tmp


cdef int _farthest(const RawContact* c, int kept, int n, double limit) noexcept nogil:
    # index >= kept, with distance <= limit, whose nearest kept point is farthest (-1: none)
    cdef int i, j, best = -1
    cdef double d2, best_d2 = -1.0
    for i in range(kept, n):
        if c[i].distance > limit:
            continue
        d2 = 1e300
        for j in range(kept):
            d2 = min(d2, _planar_dist2(&c[j], &c[i]))
        if d2 > best_d2:
            best_d2 = d2
            best = i
    return best


cdef int _beside_line(const RawContact* c, int kept, int n, double limit,
                      double side) noexcept nogil:
    # index >= kept, with distance <= limit, farthest from the line through c[0] and c[1] on
    # the given side (+1 / -1, about c[0]'s normal), all in the plane across c[0]'s normal;
    # -1 when no point lies off the line on that side
    cdef double x0[3]
    cdef double u[3]
    cdef double d[3]
    cdef double x[3]
    cdef const double* n0 = c[0].normal
    cdef double along, norm, s, d2, best_d2 = 0.0
    cdef int i, k, best = -1
    _mid(&c[0], x0)
    _mid(&c[1], u)
    for k in range(3):
        u[k] -= x0[k]
    along = u[0] * n0[0] + u[1] * n0[1] + u[2] * n0[2]
    for k in range(3):
        u[k] -= along * n0[k]
    norm = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    if norm <= 0.0:
        return -1
    for k in range(3):
        u[k] /= norm
    for i in range(kept, n):
        if c[i].distance > limit:
            continue
        _mid(&c[i], x)
        for k in range(3):
            d[k] = x[k] - x0[k]
        along = d[0] * n0[0] + d[1] * n0[1] + d[2] * n0[2]
        for k in range(3):
            d[k] -= along * n0[k]
        along = d[0] * u[0] + d[1] * u[1] + d[2] * u[2]
        for k in range(3):
            d[k] -= along * u[k]
        d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        # side: sign of (u x d) . n0
        s = ((u[1] * d[2] - u[2] * d[1]) * n0[0] + (u[2] * d[0] - u[0] * d[2]) * n0[1]
             + (u[0] * d[1] - u[1] * d[0]) * n0[2])
        if s * side > 0.0 and d2 > best_d2:
            best_d2 = d2
            best = i
    return best


cdef int cluster_contacts(RawContact* c, int n, int max_contacts, double merge_radius,
                          double band, int* scratch) noexcept nogil:
    cdef int i, j, kept, best
    cdef double r2 = merge_radius * merge_radius
    cdef double support
    cdef int* keep = scratch
    if n <= 1:
        return n
    # merge: visit points deepest first (selection order), drop those within merge_radius
    # of an already kept point with the same normal
    for i in range(n):
        keep[i] = 0
    while True:
        best = -1
        for i in range(n):
            if keep[i] == 0 and (best < 0 or c[i].distance < c[best].distance):
                best = i
        if best < 0:
            break
        keep[best] = 1
        for i in range(n):
            if (keep[i] == 0 and _planar_dist2(&c[best], &c[i]) <= r2
                    and (c[best].normal[0] * c[i].normal[0] + c[best].normal[1] * c[i].normal[1]
                         + c[best].normal[2] * c[i].normal[2]) >= MERGE_NORMAL_COS):
                keep[i] = -1
    j = 0
    for i in range(n):
        if keep[i] == 1:
            c[j] = c[i]
            j += 1
    n = j
    if n <= max_contacts:
        return n
    # the deepest point, then the support quadrilateral, then farthest-point sampling: over the
    # supporting points (within band of the deepest), then over all
    best = 0
    for i in range(1, n):
        if c[i].distance < c[best].distance:
            best = i
    _swap(c, 0, best)
    support = c[0].distance + band
    kept = 1
    best = _farthest(c, kept, n, support)
    if best >= 0 and kept < max_contacts:
        _swap(c, kept, best)
        kept += 1
        best = _beside_line(c, kept, n, support, 1.0)
        if best >= 0 and kept < max_contacts:
            _swap(c, kept, best)
            kept += 1
        best = _beside_line(c, kept, n, support, -1.0)
        if best >= 0 and kept < max_contacts:
            _swap(c, kept, best)
            kept += 1
    while kept < max_contacts:
        best = _farthest(c, kept, n, support)
        if best < 0:
            best = _farthest(c, kept, n, 1e300)
        _swap(c, kept, best)
        kept += 1
    return kept


def reduce_contacts(points, normals, distances, int max_contacts, double merge_radius=0.0,
                    double band=0.0):
    """The contacts `cluster_contacts` keeps of n contacts given as points (n, 3) midway
    between the surfaces [m], unit normals (n, 3) and separations (n,) [m]: (points, normals,
    distances) of the kept ones, in the order kept. For tests and inspection."""
    import numpy as np
    cdef double[:, ::1] p = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef double[:, ::1] nrm = np.ascontiguousarray(normals, dtype=np.float64).reshape(-1, 3)
    cdef double[::1] d = np.ascontiguousarray(distances, dtype=np.float64).reshape(-1)
    cdef int n = p.shape[0], i, k, kept
    if nrm.shape[0] != n or d.shape[0] != n:
        raise ValueError(f"points, normals and distances must have one row per contact, got "
                         f"{n}, {nrm.shape[0]} and {d.shape[0]}")
    if max_contacts < 1:
        raise ValueError(f"max_contacts must be at least 1, got {max_contacts}")
    raw = np.zeros(max(n, 1), dtype=[("pa", "f8", 3), ("pb", "f8", 3), ("normal", "f8", 3),
                                     ("distance", "f8")])
    scratch = np.zeros(max(n, 1), dtype=np.intc)
    cdef RawContact[::1] c = raw
    cdef int[::1] s = scratch
    for i in range(n):
        for k in range(3):
            c[i].pa[k] = p[i, k] + 0.5 * d[i] * nrm[i, k]
            c[i].pb[k] = p[i, k] - 0.5 * d[i] * nrm[i, k]
            c[i].normal[k] = nrm[i, k]
        c[i].distance = d[i]
    with nogil:
        kept = cluster_contacts(&c[0], n, max_contacts, merge_radius, band, &s[0])
    raw = raw[:kept]
    return 0.5 * (raw["pa"] + raw["pb"]), raw["normal"].copy(), raw["distance"].copy()
