"""Reduction of the contacts between one pair of bodies to at most max_contacts.

Points closer than `merge_radius` to a kept, deeper point with (nearly) the same normal are merged
into it first (boundary-layer contact finds many nearly coincident points on fine meshes); points
with different normals stay apart however close they are: a body in a crease or a corner touches
each face near the same place, and each face must keep holding it. If more than max_contacts remain,
the deepest point is kept, then repeatedly the point farthest (in the plane of the contact) from
every point kept so far: farthest-point sampling keeps the extreme points of the patch, so the
support polygon — and the stability of what rests on it — is preserved, which averaging
(k-means) would shrink. Deterministic: ties go to the lower index. Works in place on c[0:n];
returns the new count. scratch: n ints.
"""
from libc.math cimport sqrt

from sim_node.engine.geometry cimport RawContact

# cosine of the largest angle between the normals of two points that may merge (8.1 degrees:
# neighbouring triangles of a finely curved surface merge, the faces of a crease do not)
cdef double MERGE_NORMAL_COS = 0.99


cdef inline double _planar_dist2(const RawContact* a, const RawContact* b) noexcept nogil:
    # squared distance of the two points projected on the plane normal to a's normal
    cdef double d[3]
    cdef double along
    cdef int k
    for k in range(3):
        d[k] = 0.5 * (a.pa[k] + a.pb[k] - b.pa[k] - b.pb[k])
    along = d[0] * a.normal[0] + d[1] * a.normal[1] + d[2] * a.normal[2]
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along


cdef int cluster_contacts(RawContact* c, int n, int max_contacts, double merge_radius,
                          int* scratch) noexcept nogil:
    cdef int i, j, kept, best
    cdef double r2 = merge_radius * merge_radius
    cdef double d2, best_d2
    cdef RawContact tmp
    cdef int* keep = scratch
    if n <= 1:
        return n
    # merge: visit points deepest first (selection order), drop those within merge_radius
    # of an already kept point with the same normal
    kept = 0
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
    # farthest-point sampling from the deepest point
    best = 0
    for i in range(1, n):
        if c[i].distance < c[best].distance:
            best = i
    tmp = c[0]
    c[0] = c[best]
    c[best] = tmp
    kept = 1
    while kept < max_contacts:
        best = -1
        best_d2 = -1.0
        for i in range(kept, n):
            d2 = 1e300
            for j in range(kept):
                d2 = min(d2, _planar_dist2(&c[j], &c[i]))
            if d2 > best_d2:
                best_d2 = d2
                best = i
        tmp = c[kept]
        c[kept] = c[best]
        c[best] = tmp
        kept += 1
    return kept
