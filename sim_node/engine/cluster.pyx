"""Contacts of a body pair: reduction to at most max_contacts, grouping into friction patches.

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

Rigid pairs (`prune_rigid`, before the above; compliant layers push with every point in the
layer, k depth each, and are left alone): a rigid row lets its gap to the rest gap close within
the step and no more, so a point whose separation exceeds `band` (the rest gap plus the step's
approach; plus APPROACH_SLACK of it) cannot close its gap this step: its row would carry
nothing, and it goes (the deepest point always stays). Among the rest, the points with one
normal (a flat face on a flat face), when they are more than max_contacts (cluster_contacts
would have to choose among them), keep the corners of their outline (the convex hull in the
plane across the normal; a corner dropped while one lies within `tolerance` of the chord of its
neighbours), their deepest point, and, deepest first, each point that no triangle of the points
kept so far holds: one lower than the plane of every triangle around it by more than
FLAT_DEPTH_FRACTION of the band (a bulge under the face carries load of its own). A rigid
body's normal velocity is affine across a flat face, so a dropped point is held by the kept
ones; it may come that fraction of the band closer than the rest gap.

The kept contacts are then grouped by normal (`group_by_normal`): each group gets its own
friction patch. Two contacts are in one group when a chain of contacts joins them whose
neighbouring normals are less than GROUP_NORMAL_ANGLE apart (connected components): a finely
curved surface under a body is one group however much its normal turns across the body, the
faces of a crease (the floor and a wall) are a group each, so friction acts in each face's own
plane. One friction disk across their mean normal would let a plank leaning on a wall slide
down at 60 degrees: its disk, half-way between the floor's and the wall's, cannot hold the foot
along the floor.
"""
from libc.math cimport sqrt

from sim_node.engine.geometry cimport RawContact
from sim_node.engine.spatial cimport tangent_basis

# cosine of the largest angle between the normals of two points that may merge (8.1 degrees:
# neighbouring triangles of a finely curved surface merge, the faces of a crease do not)
cdef double MERGE_NORMAL_COS = 0.99
# cosine of GROUP_NORMAL_ANGLE (20 degrees): neighbouring normals of one friction patch; a
# crease sharper than this gets a patch per face (a disk tilted by half of it loses at most
# 1 - cos(10 deg) = 1.5 % of the friction it should give)
cdef double GROUP_NORMAL_COS = 0.9396926207859084
# cosine of the largest angle between the normals of one flat group of a rigid pair (0.5
# degrees: the face normals of a flat mesh face and float noise, not a curved surface)
cdef double FLAT_NORMAL_COS = 0.99996
# a point of a flat group inside its outline goes when no deeper than this fraction of the band
# below the surface through the outline's corners (at rest: 50 um of a 0.5 mm rest gap)
cdef double FLAT_DEPTH_FRACTION = 0.1
# fraction of the band added to it when deciding which points may close their gap this step: the
# step's approach is taken from the speeds at its start, the solve and the drives change them
# within it (at rest: 50 um, a velocity change of 5 cm/s over a 1 ms step)
cdef double APPROACH_SLACK = 0.1
# barycentric weight by which a point may lie outside the kept points' triangles and still be
# held (the outline's corners within the tolerance of a chord are gone: points near them lie
# outside)
cdef double FAN_OUTSIDE = 0.05


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


cdef int _outline(const double* uv, int m, int* hull) noexcept nogil:
    # corners of the convex hull of the 2-d points uv[0:2m], counter-clockwise from the lowest u
    # (gift wrapping: points on a hull edge are skipped, the farthest of collinear ones kept;
    # coincident points count once). Writes indices into hull; returns their count.
    cdef int start = 0, cur, nxt, q, h = 0
    cdef double cr, ex, ey, qx, qy
    for q in range(1, m):
        if uv[2 * q] < uv[2 * start] or (uv[2 * q] == uv[2 * start]
                                         and uv[2 * q + 1] < uv[2 * start + 1]):
            start = q
    cur = start
    while h < m:
        hull[h] = cur
        h += 1
        nxt = -1
        for q in range(m):
            qx = uv[2 * q] - uv[2 * cur]
            qy = uv[2 * q + 1] - uv[2 * cur + 1]
            if qx == 0.0 and qy == 0.0:
                continue
            if nxt < 0:
                nxt = q
                continue
            ex = uv[2 * nxt] - uv[2 * cur]
            ey = uv[2 * nxt + 1] - uv[2 * cur + 1]
            cr = ex * qy - ey * qx
            # q right of cur -> nxt, or on that line and farther: it wraps tighter
            if cr < -1e-15 or (cr <= 1e-15 and qx * qx + qy * qy > ex * ex + ey * ey):
                nxt = q
        if nxt < 0 or nxt == start:
            break
        cur = nxt
    return h


cdef bint _held(const double* uv, const double* sep, const int* held, int nheld, int j,
                double slack) noexcept nogil:
    # whether point j (uv[2j:2j+2], separation sep[j]) lies in a triangle of the points
    # held[0:nheld] and no more than slack below the plane of their separations (or outside
    # it by at most FAN_OUTSIDE of a barycentric weight and not lower than any of them)
    cdef int a, b, e, ia, ib, ie
    cdef double px, py, ax, ay, bx, by, det, wa, wb, w0
    cdef bint inside = False, near = False
    for a in range(nheld):
        ia = held[a]
        px = uv[2 * j] - uv[2 * ia]
        py = uv[2 * j + 1] - uv[2 * ia + 1]
        for b in range(a + 1, nheld):
            ib = held[b]
            ax = uv[2 * ib] - uv[2 * ia]
            ay = uv[2 * ib + 1] - uv[2 * ia + 1]
            for e in range(b + 1, nheld):
                ie = held[e]
                bx = uv[2 * ie] - uv[2 * ia]
                by = uv[2 * ie + 1] - uv[2 * ia + 1]
                det = ax * by - ay * bx
                if det == 0.0:
                    continue
                wa = (px * by - py * bx) / det
                wb = (ax * py - ay * px) / det
                w0 = 1.0 - wa - wb
                if wa >= 0.0 and wb >= 0.0 and w0 >= 0.0:
                    inside = True
                    if w0 * sep[ia] + wa * sep[ib] + wb * sep[ie] - sep[j] <= slack:
                        return True
                elif (wa >= -FAN_OUTSIDE and wb >= -FAN_OUTSIDE and w0 >= -FAN_OUTSIDE
                        and max(sep[ia], max(sep[ib], sep[ie])) - sep[j] <= slack):
                    # just outside (beside a corner the tolerance dropped) and not lower than
                    # any of the three: held if no triangle holds it inside (no extrapolation)
                    near = True
    return near and not inside


cdef int prune_rigid(RawContact* c, int n, int max_contacts, double band, double tolerance,
                     int* scratch) noexcept nogil:
    # Drops the points of a rigid pair that add nothing this step, before cluster_contacts;
    # works in place on c[0:n] (order kept), returns the new count. scratch: n ints. Module
    # docstring, "Rigid pairs".
    cdef int i, j, k, m, h, g0, deepest, best
    cdef int idx[MAX_FLAT]
    cdef int hull[MAX_FLAT]
    cdef int order[MAX_FLAT]
    cdef double uv[2 * MAX_FLAT]
    cdef double sep[MAX_FLAT]
    cdef double t1[3]
    cdef double t2[3]
    cdef double x0[3]
    cdef double x[3]
    cdef double limit, ex, ey, dx, dy, length2, dev, best_dev
    cdef int* keep = scratch
    if n <= 1:
        return n
    deepest = 0
    for i in range(1, n):
        if c[i].distance < c[deepest].distance:
            deepest = i
    # beyond band (plus the slack) the gap to the rest gap exceeds the step's approach: the
    # point cannot close it this step; the deepest stays (a pair that touches keeps a contact)
    limit = max(band, c[deepest].distance) + APPROACH_SLACK * band
    for i in range(n):
        keep[i] = 0 if c[i].distance <= limit else -1
    # each group of one normal (a flat face on a flat face): its deepest point and the corners
    # of its outline
    while True:
        g0 = -1
        for i in range(n):
            if keep[i] == 0 and (g0 < 0 or c[i].distance < c[g0].distance):
                g0 = i
        if g0 < 0:
            break
        m = 0
        for i in range(n):
            if (keep[i] == 0 and m < MAX_FLAT
                    and (c[g0].normal[0] * c[i].normal[0] + c[g0].normal[1] * c[i].normal[1]
                         + c[g0].normal[2] * c[i].normal[2]) >= FLAT_NORMAL_COS):
                idx[m] = i
                keep[i] = -1
                m += 1
        if m <= 3 or m <= max_contacts:
            for j in range(m):
                keep[idx[j]] = 1
            continue
        tangent_basis(c[g0].normal, t1, t2)
        _mid(&c[g0], x0)
        for j in range(m):
            _mid(&c[idx[j]], x)
            for k in range(3):
                x[k] -= x0[k]
            uv[2 * j] = x[0] * t1[0] + x[1] * t1[1] + x[2] * t1[2]
            uv[2 * j + 1] = x[0] * t2[0] + x[1] * t2[1] + x[2] * t2[2]
        h = _outline(uv, m, hull)
        # a corner closer than tolerance to the chord of its neighbours adds (almost) nothing
        # to the support polygon: drop the flattest one while one is, keeping a triangle
        while h > 3:
            best = -1
            best_dev = tolerance
            for j in range(h):
                i = hull[(j + h - 1) % h]
                k = hull[(j + 1) % h]
                ex = uv[2 * k] - uv[2 * i]
                ey = uv[2 * k + 1] - uv[2 * i + 1]
                dx = uv[2 * hull[j]] - uv[2 * i]
                dy = uv[2 * hull[j] + 1] - uv[2 * i + 1]
                length2 = ex * ex + ey * ey
                dev = (sqrt((ex * dy - ey * dx) ** 2 / length2) if length2 > 0.0
                       else sqrt(dx * dx + dy * dy))
                if dev < best_dev:
                    best_dev = dev
                    best = j
            if best < 0:
                break
            for j in range(best, h - 1):
                hull[j] = hull[j + 1]
            h -= 1
        for j in range(h):
            keep[idx[hull[j]]] = 1
        # the points inside the outline, deepest first: one is held when a triangle of the
        # points kept so far holds it (it is not lower than their plane); one that is not (a
        # bulge under the face) carries load of its own and is kept
        for j in range(m):
            sep[j] = c[idx[j]].distance
            order[j] = j
        for j in range(1, m):
            k = j
            while k > 0 and sep[order[k - 1]] > sep[order[k]]:
                order[k - 1], order[k] = order[k], order[k - 1]
                k -= 1
        for j in range(m):
            i = idx[order[j]]
            if keep[i] != 1 and (i == g0 or not _held(uv, sep, hull, h, order[j],
                                                      FLAT_DEPTH_FRACTION * band)):
                keep[i] = 1
                hull[h] = order[j]
                h += 1
    j = 0
    for i in range(n):
        if keep[i] == 1:
            c[j] = c[i]
            j += 1
    return j


cdef int group_by_normal(RawContact* c, int n, int* sizes) noexcept nogil:
    # Reorders c[0:n] (n <= MAX_GROUPED) so that each group is contiguous, groups in the order
    # of their first member and members in their order; sizes[g] = members of group g. Returns
    # the number of groups.
    cdef int label[MAX_GROUPED]
    cdef int order[MAX_GROUPED]
    cdef RawContact tmp[MAX_GROUPED]
    cdef int i, j, g, head, tail, ngroup = 0, out = 0
    for i in range(n):
        label[i] = -1
    for i in range(n):
        if label[i] >= 0:
            continue
        # breadth-first over the chain of near normals from the first unlabelled contact
        label[i] = ngroup
        order[0] = i
        head = 0
        tail = 1
        while head < tail:
            j = order[head]
            head += 1
            for g in range(n):
                if label[g] < 0 and (c[j].normal[0] * c[g].normal[0] + c[j].normal[1] * c[g].normal[1]
                                     + c[j].normal[2] * c[g].normal[2]) >= GROUP_NORMAL_COS:
                    label[g] = ngroup
                    order[tail] = g
                    tail += 1
        sizes[ngroup] = tail
        ngroup += 1
    if ngroup == 1:
        return 1
    for g in range(ngroup):
        for i in range(n):
            if label[i] == g:
                tmp[out] = c[i]
                out += 1
    for i in range(n):
        c[i] = tmp[i]
    return ngroup


def reduce_contacts(points, normals, distances, int max_contacts, double merge_radius=0.0,
                    double band=0.0, bint rigid=False):
    """The contacts `cluster_contacts` keeps of n contacts given as points (n, 3) midway
    between the surfaces [m], unit normals (n, 3) and separations (n,) [m]: (points, normals,
    distances) of the kept ones, in the order kept. rigid: `prune_rigid` first (tolerance
    merge_radius), as the clustering stage does for a rigid pair. For tests and inspection."""
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
        kept = n
        if rigid:
            kept = prune_rigid(&c[0], n, max_contacts, band, merge_radius, &s[0])
        kept = cluster_contacts(&c[0], kept, max_contacts, merge_radius, band, &s[0])
    raw = raw[:kept]
    return 0.5 * (raw["pa"] + raw["pb"]), raw["normal"].copy(), raw["distance"].copy()


def group_normals(normals):
    """The friction patches `group_by_normal` makes of contacts with the unit normals (n, 3):
    a list of index arrays into normals, in patch order. For tests and inspection."""
    import numpy as np
    cdef double[:, ::1] nrm = np.ascontiguousarray(normals, dtype=np.float64).reshape(-1, 3)
    cdef int n = nrm.shape[0], i, k, ngroup
    cdef int sizes[MAX_GROUPED]
    if n > MAX_GROUPED:
        raise ValueError(f"at most {MAX_GROUPED} contacts are grouped, got {n}")
    raw = np.zeros(max(n, 1), dtype=[("pa", "f8", 3), ("pb", "f8", 3), ("normal", "f8", 3),
                                     ("distance", "f8")])
    cdef RawContact[::1] c = raw
    for i in range(n):
        for k in range(3):
            c[i].normal[k] = nrm[i, k]
        c[i].distance = i               # carries the index through the reordering
    if n == 0:
        return []
    with nogil:
        ngroup = group_by_normal(&c[0], n, sizes)
    order = raw["distance"][:n].astype(int)
    bounds = np.cumsum([0] + [sizes[i] for i in range(ngroup)])
    return [order[bounds[g]:bounds[g + 1]] for g in range(ngroup)]
