"""Distance, closest points and penetration depth between two convex sets: GJK and EPA.

    support:          a shape, world direction d => the point s(d) of the shape maximising d.x
    convex_distance:  shapes A, B => signed distance [m], closest (overlapping: deepest) points
                      pa, pb [m] and the unit normal from B to A, with pa - pb = distance normal

Every shape is a core C inflated by a radius r, A = C_A + Ball(r_A): the centre of a sphere,
the axis segment of a capsule, any other type itself with r = 0. The signed distance of the
inflated sets is exactly d(C_A, C_B) - r_A - r_B (the support function of a Minkowski sum is
the sum of the support functions), so GJK and EPA only ever see the polyhedral or flat cores
and the radii enter in closed form, exact for sphere-sphere, capsule-capsule and sphere-box.

GJK (Gilbert, Johnson, Keerthi 1988): the distance between the cores is the distance from the
origin to the Minkowski difference M = C_A - C_B, known only through its support mapping
s_M(d) = s_A(d) - s_B(-d). Iterate: w = s_M(-v); v = the point of conv(simplex + w) closest to
the origin; |v| decreases monotonically, and |v| - v.w/|v| bounds the error of |v|. The closest
point of a simplex is found with the signed-volume subalgorithm (Montanari, Petrinic, Barbieri,
ACM TOG 2017): barycentric coordinates from signed sub-volumes, recursing only into the facets
the origin lies beyond; no Gram determinants, so collinear and coplanar simplices are safe.

EPA (expanding polytope, van den Bergen 2001) when the origin is in M (the cores touch or
overlap): grow a polytope P inside M that contains the origin; repeatedly take the face of P
closest to the origin, add s_M(face normal), re-triangulate the visible region (horizon found
by a walk over face adjacency). The closest face's distance d is a lower bound of the depth,
h_M(n) = n.s_M(n) an upper bound and exactly the translation along n that makes the shapes
touch; stop when they agree and report h_M(n), the deepest points being the face's points moved
onto the two support planes. Cores of dimension < 3 (point, segment, flat shapes such as
triangles) give depth 0 in closed form along the missing dimension. A direction pushing out
sideways of a cylinder or capsule is snapped into the plane orthogonal to its axis (EPA's faces
there tilt across the kink of h_M), and nearly coaxial shapes, for which EPA exhausts its
vertices, get a final 1-D minimisation of h_M over the radial directions.

Deterministic: no randomness, fixed iteration caps (GJK_MAX_ITERATIONS, EPA_MAX_VERTICES).
"""
import numpy as np

cimport numpy as cnp
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, M_PI, cos, fabs, sin, sqrt
from libc.string cimport memset

from sim_node.engine.arguments cimport as_matrix, as_vector, data_ptr
from sim_node.engine.geometry cimport (ConvexC, DistanceResult, MeshC, SHAPE_BOX, SHAPE_CAPSULE,
                                       SHAPE_CONVEX, SHAPE_CYLINDER, SHAPE_SPHERE, SHAPE_TRIANGLE)
from sim_node.engine.spatial cimport cross3, dot3, mat3T_vec, mat3_vec, tangent_basis

cnp.import_array()

cdef enum:
    GJK_MAX_ITERATIONS = 128    # polytopes converge in < 10, curved rims (cylinders) in ~30
    EPA_MAX_VERTICES = 128
    EPA_MAX_FACES = 2 * EPA_MAX_VERTICES   # a closed triangulation has 2V - 4 faces

# Tolerances relative to the shape scale (the larger bounding radius of the two shapes).
# GJK stops when the distance is known to within GJK_TOLERANCE (or stops decreasing: rounding);
# on curved rims the closest points are then accurate to about sqrt(GJK_TOLERANCE).
cdef double GJK_TOLERANCE = 1e-12
# |v| below this: the cores touch or overlap; the direction of so short a v is rounding noise.
cdef double OVERLAP_TOLERANCE = 1e-12
# EPA stops when the depth is known to within EPA_TOLERANCE.
cdef double EPA_TOLERANCE = 1e-10
# A polytope thinner than this is flat (lower-dimensional) for EPA.
cdef double FLAT_TOLERANCE = 1e-10


# ---------------------------------------------------------------------------------------------
# Support mappings

cdef double core_radius(const ConvexC* c) noexcept nogil:
    if c.type == SHAPE_SPHERE or c.type == SHAPE_CAPSULE:
        return c.size[0]
    return 0.0


cdef void support_core(const ConvexC* c, const double* dir, double* out) noexcept nogil:
    # (shape, world direction) => the world point of the core furthest along dir. Ties go to
    # the first vertex / the + side, so the result is a deterministic function of dir.
    cdef double d[3]
    cdef double s[3]
    cdef double best, x, rho
    cdef const double* v
    cdef int k, n, ibest
    if c.type == SHAPE_TRIANGLE:
        ibest = 0
        best = dot3(c.tri, dir)
        for k in range(1, 3):
            x = dot3(&c.tri[3 * k], dir)
            if x > best:
                best = x
                ibest = k
        out[0] = c.tri[3 * ibest]
        out[1] = c.tri[3 * ibest + 1]
        out[2] = c.tri[3 * ibest + 2]
        return
    if c.type == SHAPE_SPHERE:
        out[0] = c.p[0]
        out[1] = c.p[1]
        out[2] = c.p[2]
        return
    mat3T_vec(c.R, dir, d)
    if c.type == SHAPE_BOX:
        s[0] = c.size[0] if d[0] >= 0.0 else -c.size[0]
        s[1] = c.size[1] if d[1] >= 0.0 else -c.size[1]
        s[2] = c.size[2] if d[2] >= 0.0 else -c.size[2]
    elif c.type == SHAPE_CAPSULE:
        s[0] = 0.0
        s[1] = 0.0
        s[2] = c.size[1] if d[2] >= 0.0 else -c.size[1]
    elif c.type == SHAPE_CYLINDER:
        # rim point; on the axis (d parallel to z) the whole cap supports: take its centre
        rho = sqrt(d[0] * d[0] + d[1] * d[1])
        if rho > 0.0:
            s[0] = c.size[0] * d[0] / rho
            s[1] = c.size[0] * d[1] / rho
        else:
            s[0] = 0.0
            s[1] = 0.0
        s[2] = c.size[1] if d[2] >= 0.0 else -c.size[1]
    else:  # SHAPE_CONVEX: scan the hull vertices
        n = c.mesh.nvert
        v = c.mesh.verts
        ibest = 0
        best = -INFINITY
        for k in range(n):
            x = d[0] * v[3 * k] + d[1] * v[3 * k + 1] + d[2] * v[3 * k + 2]
            if x > best:
                best = x
                ibest = k
        s[0] = v[3 * ibest]
        s[1] = v[3 * ibest + 1]
        s[2] = v[3 * ibest + 2]
    mat3_vec(c.R, s, out)
    out[0] += c.p[0]
    out[1] += c.p[1]
    out[2] += c.p[2]


cdef void support(const ConvexC* c, const double* dir, double* out) noexcept nogil:
    # s(d) = s_core(d) + r d / |d|  (for d = 0: the core's point)
    cdef double r = core_radius(c)
    cdef double norm
    support_core(c, dir, out)
    if r > 0.0:
        norm = sqrt(dot3(dir, dir))
        if norm > 0.0:
            r /= norm
            out[0] += r * dir[0]
            out[1] += r * dir[1]
            out[2] += r * dir[2]


cdef inline void _support_difference(const ConvexC* A, const ConvexC* B, const double* d,
                                     double* w, double* a, double* b) noexcept nogil:
    # s_M(d) = s_A(d) - s_B(-d) for M = C_A - C_B, with the two core points that produce it
    cdef double nd[3]
    nd[0] = -d[0]
    nd[1] = -d[1]
    nd[2] = -d[2]
    support_core(A, d, a)
    support_core(B, nd, b)
    w[0] = a[0] - b[0]
    w[1] = a[1] - b[1]
    w[2] = a[2] - b[2]


cdef void _centre(const ConvexC* c, double* out) noexcept nogil:
    # a point inside the core (the frame origin for CONVEX, which is normally inside the hull)
    if c.type == SHAPE_TRIANGLE:
        out[0] = (c.tri[0] + c.tri[3] + c.tri[6]) / 3.0
        out[1] = (c.tri[1] + c.tri[4] + c.tri[7]) / 3.0
        out[2] = (c.tri[2] + c.tri[5] + c.tri[8]) / 3.0
    else:
        out[0] = c.p[0]
        out[1] = c.p[1]
        out[2] = c.p[2]


cdef double _scale(const ConvexC* c) noexcept nogil:
    # a bounding radius of the shape about its centre [m]: the length scale of the tolerances
    cdef double m = 0.0
    cdef double x
    cdef int k
    if c.type == SHAPE_SPHERE:
        return c.size[0]
    if c.type == SHAPE_BOX:
        return sqrt(c.size[0] * c.size[0] + c.size[1] * c.size[1] + c.size[2] * c.size[2])
    if c.type == SHAPE_CAPSULE or c.type == SHAPE_CYLINDER:
        return c.size[0] + c.size[1]
    if c.type == SHAPE_TRIANGLE:
        for k in range(9):
            x = fabs(c.tri[k] - c.tri[k % 3])
            if x > m:
                m = x
        return m
    # CONVEX: the largest coordinate of the hull (its root box when the mesh has one)
    if c.mesh.bvh.nnode > 0:
        for k in range(6):
            x = fabs(c.mesh.bvh.bounds[k])
            if x > m:
                m = x
        return m
    for k in range(3 * c.mesh.nvert):
        x = fabs(c.mesh.verts[k])
        if x > m:
            m = x
    return m


# ---------------------------------------------------------------------------------------------
# GJK with the signed-volume subalgorithm

cdef struct Simplex:
    int n
    double w[12]        # vertices w_i = a_i - b_i of M
    double a[12]        # the core points of A and B that produced them
    double b[12]
    double lam[4]       # barycentric coordinates of v, the point closest to the origin


cdef struct SubResult:
    # closest point of a sub-simplex: which vertices carry it, their weights, the point
    int n
    int idx[4]
    double lam[4]
    double v[3]
    double vv


cdef inline void _sub(const double* x, const double* y, double* out) noexcept nogil:
    out[0] = x[0] - y[0]
    out[1] = x[1] - y[1]
    out[2] = x[2] - y[2]


cdef inline void _copy3(const double* x, double* out) noexcept nogil:
    out[0] = x[0]
    out[1] = x[1]
    out[2] = x[2]


cdef void _s1d(const double* W, int i, int j, SubResult* r) noexcept nogil:
    # segment [W_i, W_j]: v = W_i + u t, u = -W_i.t / t.t clamped to [0, 1]
    cdef const double* p = &W[3 * i]
    cdef const double* q = &W[3 * j]
    cdef double t[3]
    cdef double tt, u
    _sub(q, p, t)
    tt = dot3(t, t)
    u = -dot3(p, t)
    if tt <= 0.0 or u <= 0.0:
        r.n = 1
        r.idx[0] = i
        r.lam[0] = 1.0
        r.v[0] = p[0]
        r.v[1] = p[1]
        r.v[2] = p[2]
    elif u >= tt:
        r.n = 1
        r.idx[0] = j
        r.lam[0] = 1.0
        r.v[0] = q[0]
        r.v[1] = q[1]
        r.v[2] = q[2]
    else:
        u /= tt
        r.n = 2
        r.idx[0] = i
        r.idx[1] = j
        r.lam[0] = 1.0 - u
        r.lam[1] = u
        r.v[0] = p[0] + u * t[0]
        r.v[1] = p[1] + u * t[1]
        r.v[2] = p[2] + u * t[2]
    r.vv = dot3(r.v, r.v)


cdef void _s2d(const double* W, int i, int j, int k, SubResult* r) noexcept nogil:
    # triangle (W_i, W_j, W_k): project the origin on its plane, P = (W_i.n / n.n) n, which
    # keeps the direction of v exact to rounding even when |v| is tiny; the signed areas
    # C_m = n.((W_b - P) x (W_c - P)) of the sub-triangles opposite each vertex are its
    # barycentric coordinates times n.n. A vertex with C_m <= 0 means P is beyond the opposite
    # edge: the closest point is on one of those edges.
    cdef const double* A = &W[3 * i]
    cdef const double* B = &W[3 * j]
    cdef const double* C = &W[3 * k]
    cdef double e1[3]
    cdef double e2[3]
    cdef double n[3]
    cdef double P[3]
    cdef double pa[3]
    cdef double pb[3]
    cdef double pc[3]
    cdef double x[3]
    cdef double nn, t, ca, cb, cc, s
    cdef bint edge_a = True, edge_b = True, edge_c = True   # edges opposite A, B, C to test
    cdef SubResult tmp
    _sub(B, A, e1)
    _sub(C, A, e2)
    cross3(e1, e2, n)
    nn = dot3(n, n)
    # not a sliver: sin(angle between the edges)^2 > 1e-24
    if nn > 1e-24 * dot3(e1, e1) * dot3(e2, e2):
        t = dot3(A, n) / nn
        P[0] = t * n[0]
        P[1] = t * n[1]
        P[2] = t * n[2]
        _sub(A, P, pa)
        _sub(B, P, pb)
        _sub(C, P, pc)
        cross3(pb, pc, x)
        ca = dot3(n, x)
        cross3(pc, pa, x)
        cb = dot3(n, x)
        cross3(pa, pb, x)
        cc = dot3(n, x)
        if ca > 0.0 and cb > 0.0 and cc > 0.0:
            s = ca + cb + cc
            r.n = 3
            r.idx[0] = i
            r.idx[1] = j
            r.idx[2] = k
            r.lam[0] = ca / s
            r.lam[1] = cb / s
            r.lam[2] = cc / s
            r.v[0] = P[0]
            r.v[1] = P[1]
            r.v[2] = P[2]
            r.vv = dot3(P, P)
            return
        edge_a = ca <= 0.0
        edge_b = cb <= 0.0
        edge_c = cc <= 0.0
    r.vv = INFINITY
    if edge_a:
        _s1d(W, j, k, r)
    if edge_b:
        _s1d(W, k, i, &tmp)
        if tmp.vv < r.vv:
            r[0] = tmp
    if edge_c:
        _s1d(W, i, j, &tmp)
        if tmp.vv < r.vv:
            r[0] = tmp


cdef void _s3d(const double* W, SubResult* r) noexcept nogil:
    # tetrahedron W_0..W_3: barycentric coordinates of the origin C_m / V from signed volumes
    # (C_m: the volume with W_m replaced by the origin). All of the sign of V: the origin is
    # enclosed. Otherwise the closest point lies on a facet the origin is beyond (C_m of the
    # other sign than V, or any facet when V = 0).
    cdef double e1[3]
    cdef double e2[3]
    cdef double e3[3]
    cdef double c23[3]
    cdef double c31[3]
    cdef double c12[3]
    cdef double x[3]
    cdef double C[4]
    cdef double V
    cdef int m
    cdef bint enclosed
    cdef SubResult tmp
    _sub(&W[3], W, e1)
    _sub(&W[6], W, e2)
    _sub(&W[9], W, e3)
    cross3(e2, e3, c23)
    cross3(e3, e1, c31)
    cross3(e1, e2, c12)
    V = dot3(e1, c23)
    C[1] = -dot3(W, c23)
    C[2] = -dot3(W, c31)
    C[3] = -dot3(W, c12)
    cross3(&W[6], &W[9], x)
    C[0] = dot3(&W[3], x)
    enclosed = V != 0.0
    for m in range(4):
        if not ((C[m] > 0.0 and V > 0.0) or (C[m] < 0.0 and V < 0.0)):
            enclosed = False
    if enclosed:
        r.n = 4
        for m in range(4):
            r.idx[m] = m
            r.lam[m] = C[m] / V
        r.v[0] = 0.0
        r.v[1] = 0.0
        r.v[2] = 0.0
        r.vv = 0.0
        return
    r.vv = INFINITY
    for m in range(4):
        if (C[m] > 0.0 and V > 0.0) or (C[m] < 0.0 and V < 0.0):
            continue
        if m == 0:
            _s2d(W, 1, 2, 3, &tmp)
        elif m == 1:
            _s2d(W, 0, 2, 3, &tmp)
        elif m == 2:
            _s2d(W, 0, 1, 3, &tmp)
        else:
            _s2d(W, 0, 1, 2, &tmp)
        if tmp.vv < r.vv:
            r[0] = tmp


cdef void _closest_on_simplex(const Simplex* s, SubResult* r) noexcept nogil:
    # (simplex) => (its point closest to the origin and the sub-simplex carrying it)
    if s.n == 1:
        r.n = 1
        r.idx[0] = 0
        r.lam[0] = 1.0
        _copy3(s.w, r.v)
        r.vv = dot3(r.v, r.v)
    elif s.n == 2:
        _s1d(s.w, 0, 1, r)
    elif s.n == 3:
        _s2d(s.w, 0, 1, 2, r)
    else:
        _s3d(s.w, r)


cdef void _reduce(Simplex* s, SubResult* r) noexcept nogil:
    # keep only the vertices r.idx (with weights r.lam), compacted in place: sorted ascending,
    # vertex idx[m] >= m moves down to slot m before anything overwrites it
    cdef int m, q, j, k
    cdef double l
    for m in range(1, r.n):
        q = m
        while q > 0 and r.idx[q - 1] > r.idx[q]:
            j = r.idx[q]
            r.idx[q] = r.idx[q - 1]
            r.idx[q - 1] = j
            l = r.lam[q]
            r.lam[q] = r.lam[q - 1]
            r.lam[q - 1] = l
            q -= 1
    for m in range(r.n):
        j = r.idx[m]
        s.lam[m] = r.lam[m]
        if j != m:
            for k in range(3):
                s.w[3 * m + k] = s.w[3 * j + k]
                s.a[3 * m + k] = s.a[3 * j + k]
                s.b[3 * m + k] = s.b[3 * j + k]
    s.n = r.n


cdef void _simplex_points(const Simplex* s, double* pa, double* pb) noexcept nogil:
    # the points of the cores whose difference is v: pa = sum lam_i a_i, pb = sum lam_i b_i
    cdef int m, k
    for k in range(3):
        pa[k] = 0.0
        pb[k] = 0.0
    for m in range(s.n):
        for k in range(3):
            pa[k] += s.lam[m] * s.a[3 * m + k]
            pb[k] += s.lam[m] * s.b[3 * m + k]


cdef enum GJKOutcome:
    GJK_SEPARATED = 0
    GJK_OVERLAP = 1
    GJK_BEYOND = 2


cdef int _gjk(const ConvexC* A, const ConvexC* B, double bound, double tol_gap, double tol_zero,
              Simplex* s, double* v, double* lower, int* iterations) noexcept nogil:
    # (cores, bound) => (simplex, v = its point closest to the origin). Returns GJK_SEPARATED
    # when |v| is the distance of the cores to within tol_gap, GJK_OVERLAP when |v| <= tol_zero
    # or the simplex encloses the origin, GJK_BEYOND when the lower bound v.w/|v| > bound.
    cdef double d[3]
    cdef double cb[3]
    cdef double w[3]
    cdef double a[3]
    cdef double b[3]
    cdef double nd[3]
    cdef double vv, vw, vnorm
    cdef SubResult r
    cdef int it, k, n
    # first direction: from the centre of B towards the centre of A
    _centre(A, d)
    _centre(B, cb)
    _sub(d, cb, d)
    if dot3(d, d) == 0.0:
        d[0] = 1.0
    nd[0] = -d[0]
    nd[1] = -d[1]
    nd[2] = -d[2]
    _support_difference(A, B, nd, s.w, s.a, s.b)
    s.n = 1
    s.lam[0] = 1.0
    v[0] = s.w[0]
    v[1] = s.w[1]
    v[2] = s.w[2]
    lower[0] = -INFINITY
    for it in range(GJK_MAX_ITERATIONS):
        iterations[0] = it + 1
        vv = dot3(v, v)
        vnorm = sqrt(vv)
        if vnorm <= tol_zero:
            return GJK_OVERLAP
        d[0] = -v[0]
        d[1] = -v[1]
        d[2] = -v[2]
        _support_difference(A, B, d, w, a, b)
        # every point x of M has v.x >= v.w, so v.w / |v| is a lower bound of the distance;
        # only a positive one proves the cores apart (and bounds the signed distance too)
        vw = dot3(v, w)
        lower[0] = vw / vnorm
        if vw > 0.0 and vw > bound * vnorm:
            return GJK_BEYOND
        if vv - vw <= tol_gap * vnorm:
            return GJK_SEPARATED
        # try the simplex extended by w; commit only on progress (in exact arithmetic |v|
        # always decreases; when it does not, |v| is at the rounding floor: keep the old one)
        n = s.n
        for k in range(3):
            s.w[3 * n + k] = w[k]
            s.a[3 * n + k] = a[k]
            s.b[3 * n + k] = b[k]
        s.n = n + 1
        _closest_on_simplex(s, &r)
        if r.n == 4:
            _reduce(s, &r)
            _copy3(r.v, v)
            return GJK_OVERLAP
        if r.vv >= vv:
            s.n = n
            return GJK_SEPARATED
        _reduce(s, &r)
        _copy3(r.v, v)
    return GJK_SEPARATED


# ---------------------------------------------------------------------------------------------
# EPA

cdef struct Face:
    int v[3]            # vertices, counter-clockwise seen from outside
    int adj[3]          # face across edge e = (v[e], v[e+1])
    int adj_edge[3]     # the index of that edge in the neighbour
    double n[3]         # outward unit normal (zero for a degenerate face)
    double d            # n.x on the face plane: distance of the plane from the origin
                        # (INFINITY for a degenerate face, which is then never expanded)
    bint alive


cdef struct Polytope:
    int nvert
    double w[3 * EPA_MAX_VERTICES]
    double a[3 * EPA_MAX_VERTICES]
    double b[3 * EPA_MAX_VERTICES]
    int nface                   # face slots in use (alive or on the free list)
    Face face[EPA_MAX_FACES]
    double dist[EPA_MAX_FACES]  # face[f].d, INFINITY when deleted: a compact argmin scan
    int nfree
    int free[EPA_MAX_FACES]
    int nhorizon
    int horizon_face[EPA_MAX_FACES]
    int horizon_edge[EPA_MAX_FACES]


cdef void _face_plane(Polytope* P, int f) noexcept nogil:
    cdef Face* F = &P.face[f]
    cdef const double* w0 = &P.w[3 * F.v[0]]
    cdef const double* w1 = &P.w[3 * F.v[1]]
    cdef const double* w2 = &P.w[3 * F.v[2]]
    cdef double e1[3]
    cdef double e2[3]
    _sub(w1, w0, e1)
    _sub(w2, w0, e2)
    cross3(e1, e2, F.n)
    cdef double length = sqrt(dot3(F.n, F.n))
    cdef double inv
    if length > 1e-14 * (dot3(e1, e1) + dot3(e2, e2)):
        inv = 1.0 / length
        F.n[0] *= inv
        F.n[1] *= inv
        F.n[2] *= inv
        # the mean of the three vertices: symmetric in them, smaller rounding
        F.d = (dot3(F.n, w0) + dot3(F.n, w1) + dot3(F.n, w2)) * (1.0 / 3.0)
    else:
        F.n[0] = 0.0
        F.n[1] = 0.0
        F.n[2] = 0.0
        F.d = INFINITY
    P.dist[f] = F.d


cdef int _new_face(Polytope* P, int i, int j, int k) noexcept nogil:
    # a face slot (recycled first), or -1 when full
    cdef int f
    if P.nfree > 0:
        P.nfree -= 1
        f = P.free[P.nfree]
    elif P.nface < EPA_MAX_FACES:
        f = P.nface
        P.nface += 1
    else:
        return -1
    P.face[f].v[0] = i
    P.face[f].v[1] = j
    P.face[f].v[2] = k
    P.face[f].alive = True
    _face_plane(P, f)
    return f


cdef inline void _link(Polytope* P, int f, int e, int g, int h) noexcept nogil:
    P.face[f].adj[e] = g
    P.face[f].adj_edge[e] = h
    P.face[g].adj[h] = f
    P.face[g].adj_edge[h] = e


cdef bint _silhouette(Polytope* P, int f, int e, const double* w) noexcept nogil:
    # Depth-first walk from a deleted face into face f through its edge e: f is deleted too if
    # it sees w (w above its plane), otherwise edge e is a horizon edge. Visiting the two other
    # edges in counter-clockwise order lists the horizon as one counter-clockwise loop.
    # Returns False when the horizon list overflows.
    cdef Face* F = &P.face[f]
    if not F.alive:
        return True
    if dot3(F.n, w) - F.d <= 0.0:
        if P.nhorizon == EPA_MAX_FACES:
            return False
        P.horizon_face[P.nhorizon] = f
        P.horizon_edge[P.nhorizon] = e
        P.nhorizon += 1
        return True
    F.alive = False
    P.dist[f] = INFINITY
    P.free[P.nfree] = f
    P.nfree += 1
    if not _silhouette(P, F.adj[(e + 1) % 3], F.adj_edge[(e + 1) % 3], w):
        return False
    return _silhouette(P, F.adj[(e + 2) % 3], F.adj_edge[(e + 2) % 3], w)


cdef bint _expand(Polytope* P, int f, int iw) noexcept nogil:
    # Replace the faces visible from vertex iw (starting from f, which sees it) by a fan of new
    # faces from iw to the horizon. Returns False when the topology could not be rebuilt
    # (polytope full or inconsistent after rounding); the caller then keeps its last answer.
    cdef const double* w = &P.w[3 * iw]
    cdef Face* F = &P.face[f]
    cdef int e, k, m, g, h, nh, first_new
    cdef int newf[EPA_MAX_FACES]
    cdef int start[EPA_MAX_FACES]     # new face k runs start[k] -> end[k] -> iw
    cdef int end[EPA_MAX_FACES]
    P.nhorizon = 0
    F.alive = False
    P.dist[f] = INFINITY
    P.free[P.nfree] = f
    P.nfree += 1
    for e in range(3):
        if not _silhouette(P, F.adj[e], F.adj_edge[e], w):
            return False
    nh = P.nhorizon
    if nh < 3:
        return False
    for k in range(nh):
        g = P.horizon_face[k]
        h = P.horizon_edge[k]
        # the horizon edge runs v[h] -> v[h+1] in the kept face: reversed in the new face
        start[k] = P.face[g].v[(h + 1) % 3]
        end[k] = P.face[g].v[h]
        newf[k] = _new_face(P, start[k], end[k], iw)
        if newf[k] < 0:
            return False
        _link(P, newf[k], 0, g, h)
    # edge 1 of new face k (end[k] -> iw) is edge 2 (iw -> start[m]) of the new face m with
    # start[m] == end[k]; exactly one such m when the horizon is a simple loop
    for k in range(nh):
        # the walk lists the horizon as a loop, so m is normally the next edge
        m = k + 1 if k + 1 < nh else 0
        if start[m] != end[k]:
            first_new = -1
            for m in range(nh):
                if start[m] == end[k]:
                    if first_new >= 0:
                        return False
                    first_new = m
            if first_new < 0:
                return False
            m = first_new
        _link(P, newf[k], 1, newf[m], 2)
    return True


cdef inline void _add_vertex(Polytope* P, const double* w, const double* a,
                             const double* b) noexcept nogil:
    cdef int k
    for k in range(3):
        P.w[3 * P.nvert + k] = w[k]
        P.a[3 * P.nvert + k] = a[k]
        P.b[3 * P.nvert + k] = b[k]
    P.nvert += 1


cdef double _line_distance(const double* x, const double* p, const double* t) noexcept nogil:
    # distance of x from the line through p along the unit vector t
    cdef double r[3]
    cdef double c[3]
    _sub(x, p, r)
    cross3(r, t, c)
    return sqrt(dot3(c, c))


cdef int _initial_polytope(const ConvexC* A, const ConvexC* B, const Simplex* s, double eps,
                           Polytope* P, double* flat_normal) noexcept nogil:
    # GJK's simplex (origin inside or within rounding) => a tetrahedron in M with the origin in
    # it (possibly on its boundary), vertices 0..3 of P. Returns the dimension of M found:
    # 3, or 0 / 1 / 2 when M is a point / segment / flat within eps; for 1 and 2, flat_normal
    # is a unit vector orthogonal to M.
    # First the simplex is reduced to affinely independent vertices still holding the origin
    # (a flat tetrahedron to the sub-triangle that holds it best, a collinear triangle to its
    # two extreme points); then it grows by support points along directions orthogonal to its
    # span. Each added vertex keeps the previous simplex as a face, hence the origin inside.
    cdef double e1[3]
    cdef double e2[3]
    cdef double e3[3]
    cdef double n[3]
    cdef double t[3]
    cdef double u[3]
    cdef double w[3]
    cdef double a[3]
    cdef double b[3]
    cdef double bw[3]
    cdef double ba[3]
    cdef double bb[3]
    cdef double x, best, height, area, V
    cdef int i, j, k, m
    cdef int keep[4]
    cdef int nkeep
    cdef double Wt[9]
    P.nvert = 0
    for i in range(s.n):
        _add_vertex(P, &s.w[3 * i], &s.a[3 * i], &s.b[3 * i])
    if P.nvert == 4:
        _sub(&P.w[3], P.w, e1)
        _sub(&P.w[6], P.w, e2)
        _sub(&P.w[9], P.w, e3)
        cross3(e1, e2, n)
        V = fabs(dot3(n, e3))
        # thickness: volume / the largest face area (x2 both)
        area = 0.0
        for i in range(4):
            _sub(&P.w[3 * ((i + 1) % 4)], &P.w[3 * i], e1)
            _sub(&P.w[3 * ((i + 2) % 4)], &P.w[3 * i], e2)
            cross3(e1, e2, n)
            x = sqrt(dot3(n, n))
            if x > area:
                area = x
        if V <= eps * area:
            # flat: keep the triangle whose plane projection of the origin is most interior
            best = -INFINITY
            nkeep = 0
            for m in range(4):
                k = 0
                for i in range(4):
                    if i != m:
                        keep[k] = i
                        k += 1
                for i in range(3):
                    for j in range(3):
                        Wt[3 * i + j] = P.w[3 * keep[i] + j]
                x = _triangle_interior(Wt)
                if x > best:
                    best = x
                    nkeep = m
            _drop_vertex(P, nkeep)
    if P.nvert == 3:
        _sub(&P.w[3], P.w, e1)
        _sub(&P.w[6], P.w, e2)
        cross3(e1, e2, n)
        # height over the longest edge
        x = max(dot3(e1, e1), dot3(e2, e2))
        _sub(&P.w[6], &P.w[3], e3)
        x = max(x, dot3(e3, e3))
        if sqrt(dot3(n, n)) <= eps * sqrt(x):
            # collinear: keep the two extreme points (drop the one opposite the longest edge)
            if dot3(e3, e3) >= dot3(e1, e1) and dot3(e3, e3) >= dot3(e2, e2):
                _drop_vertex(P, 0)
            elif dot3(e2, e2) >= dot3(e1, e1):
                _drop_vertex(P, 1)
            else:
                _drop_vertex(P, 2)
    if P.nvert == 2:
        _sub(&P.w[3], P.w, e1)
        if sqrt(dot3(e1, e1)) <= eps:
            P.nvert = 1
    if P.nvert == 1:
        # a second point: the support point along a coordinate axis furthest from w_0
        best = -1.0
        for k in range(6):
            e1[0] = 0.0
            e1[1] = 0.0
            e1[2] = 0.0
            e1[k // 2] = 1.0 if k % 2 == 0 else -1.0
            _support_difference(A, B, e1, w, a, b)
            _sub(w, P.w, e2)
            x = dot3(e2, e2)
            if x > best:
                best = x
                _copy3(w, bw)
                _copy3(a, ba)
                _copy3(b, bb)
        if sqrt(best) <= eps:
            return 0
        _add_vertex(P, bw, ba, bb)
    if P.nvert == 2:
        _sub(&P.w[3], P.w, t)
        x = sqrt(dot3(t, t))
        t[0] /= x
        t[1] /= x
        t[2] /= x
        tangent_basis(t, u, n)
        # a third point: furthest from the line along +-u, +-n (one of them leaves the line
        # unless M is a segment)
        best = -1.0
        for k in range(4):
            if k < 2:
                _copy3(u, e1)
            else:
                _copy3(n, e1)
            if k % 2 == 1:
                e1[0] = -e1[0]
                e1[1] = -e1[1]
                e1[2] = -e1[2]
            _support_difference(A, B, e1, w, a, b)
            x = _line_distance(w, P.w, t)
            if x > best:
                best = x
                _copy3(w, bw)
                _copy3(a, ba)
                _copy3(b, bb)
        if best <= eps:
            _copy3(u, flat_normal)
            return 1
        _add_vertex(P, bw, ba, bb)
    if P.nvert == 3:
        # a fourth point: the support along +-n furthest from the plane
        _sub(&P.w[3], P.w, e1)
        _sub(&P.w[6], P.w, e2)
        cross3(e1, e2, n)
        x = sqrt(dot3(n, n))
        n[0] /= x
        n[1] /= x
        n[2] /= x
        best = -1.0
        for k in range(2):
            _copy3(n, e1)
            if k == 1:
                e1[0] = -n[0]
                e1[1] = -n[1]
                e1[2] = -n[2]
            _support_difference(A, B, e1, w, a, b)
            _sub(w, P.w, e2)
            height = fabs(dot3(e2, n))
            if height > best:
                best = height
                _copy3(w, bw)
                _copy3(a, ba)
                _copy3(b, bb)
        if best <= eps:
            _copy3(n, flat_normal)
            return 2
        _add_vertex(P, bw, ba, bb)
    return 3


cdef double _triangle_interior(const double* W) noexcept nogil:
    # min barycentric coordinate of the origin's projection on the triangle's plane (< 0:
    # outside); -INFINITY for a degenerate triangle
    cdef double e1[3]
    cdef double e2[3]
    cdef double n[3]
    cdef double P[3]
    cdef double pa[3]
    cdef double pb[3]
    cdef double pc[3]
    cdef double x[3]
    cdef double nn, t, ca, cb, cc
    _sub(&W[3], W, e1)
    _sub(&W[6], W, e2)
    cross3(e1, e2, n)
    nn = dot3(n, n)
    if not nn > 0.0:
        return -INFINITY
    t = dot3(W, n) / nn
    P[0] = t * n[0]
    P[1] = t * n[1]
    P[2] = t * n[2]
    _sub(W, P, pa)
    _sub(&W[3], P, pb)
    _sub(&W[6], P, pc)
    cross3(pb, pc, x)
    ca = dot3(n, x)
    cross3(pc, pa, x)
    cb = dot3(n, x)
    cross3(pa, pb, x)
    cc = dot3(n, x)
    return min(ca, min(cb, cc)) / nn


cdef void _drop_vertex(Polytope* P, int m) noexcept nogil:
    cdef int i, k
    for i in range(m, P.nvert - 1):
        for k in range(3):
            P.w[3 * i + k] = P.w[3 * (i + 1) + k]
            P.a[3 * i + k] = P.a[3 * (i + 1) + k]
            P.b[3 * i + k] = P.b[3 * (i + 1) + k]
    P.nvert -= 1


cdef void _tetrahedron_faces(Polytope* P) noexcept nogil:
    # faces of the tetrahedron P.w[0..3], oriented outwards: with orient(w0, w1, w2, w3) < 0
    # the faces (0 1 2), (0 3 1), (1 3 2), (2 3 0) all have the opposite vertex behind them
    cdef double e1[3]
    cdef double e2[3]
    cdef double e3[3]
    cdef double n[3]
    cdef double tmp
    cdef int k
    _sub(&P.w[3], P.w, e1)
    _sub(&P.w[6], P.w, e2)
    _sub(&P.w[9], P.w, e3)
    cross3(e1, e2, n)
    if dot3(n, e3) > 0.0:
        for k in range(3):
            tmp = P.w[3 + k]
            P.w[3 + k] = P.w[6 + k]
            P.w[6 + k] = tmp
            tmp = P.a[3 + k]
            P.a[3 + k] = P.a[6 + k]
            P.a[6 + k] = tmp
            tmp = P.b[3 + k]
            P.b[3 + k] = P.b[6 + k]
            P.b[6 + k] = tmp
    P.nface = 0
    P.nfree = 0
    _new_face(P, 0, 1, 2)
    _new_face(P, 0, 3, 1)
    _new_face(P, 1, 3, 2)
    _new_face(P, 2, 3, 0)
    _link(P, 0, 0, 1, 2)    # 0->1 / 1->0
    _link(P, 0, 1, 2, 2)    # 1->2 / 2->1
    _link(P, 0, 2, 3, 2)    # 2->0 / 0->2
    _link(P, 1, 0, 3, 1)    # 0->3 / 3->0
    _link(P, 1, 1, 2, 0)    # 3->1 / 1->3
    _link(P, 2, 1, 3, 0)    # 3->2 / 2->3


cdef double _face_weights(const Polytope* P, const int* v, const double* p, const double* n,
                          double* lam) noexcept nogil:
    # barycentric coordinates lam of p in the triangle P.w[v[0..2]], areas measured along n;
    # returns the smallest (< 0: p is outside), -INFINITY for a degenerate triangle
    cdef double r1[3]
    cdef double r2[3]
    cdef double x[3]
    cdef double total = 0.0
    cdef int m
    for m in range(3):
        _sub(&P.w[3 * v[(m + 1) % 3]], p, r1)
        _sub(&P.w[3 * v[(m + 2) % 3]], p, r2)
        cross3(r1, r2, x)
        lam[m] = dot3(n, x)
        total += lam[m]
    if not total > 0.0:
        return -INFINITY
    for m in range(3):
        lam[m] /= total
    return min(lam[0], min(lam[1], lam[2]))


cdef inline double _h(const ConvexC* A, const ConvexC* B, const double* u, double* a,
                      double* b) noexcept nogil:
    # h_M(u) = u.s_M(u), the support function of M, with the core points that realise it
    cdef double w[3]
    _support_difference(A, B, u, w, a, b)
    return dot3(u, w)


cdef bint _snap_to_axis_planes(const ConvexC* A, const ConvexC* B, bint converged, double* n,
                               double* a, double* b) noexcept nogil:
    # EPA's faces on the side of a cylinder join points of its two rims at different angles, so
    # their normals tilt off the plane orthogonal to the axis, across which h_M has a kink (it
    # grows with |n.axis| at first order). When the depth direction lies in that plane (a shape
    # pushed sideways out of a cylinder or capsule) removing the tilt removes that error.
    # Accepted only where it lowers h_M(n): never worse than EPA. When EPA has not converged,
    # the direction is refined further (_coaxial_refine). Returns True when that replaced a, b
    # by points of their own (no longer supports along the face normal).
    cdef const ConvexC* c
    cdef double e[3]
    cdef double u[3]
    cdef double a2[3]
    cdef double b2[3]
    cdef double h0, h1, proj, norm
    cdef int m, k
    h0 = dot3(n, a) - dot3(n, b)
    for m in range(2):
        c = A if m == 0 else B
        if c.type != SHAPE_CYLINDER and c.type != SHAPE_CAPSULE:
            continue
        # the axis is the third column of R
        e[0] = c.R[2]
        e[1] = c.R[5]
        e[2] = c.R[8]
        proj = dot3(n, e)
        if fabs(proj) > 1e-2:
            continue
        for k in range(3):
            u[k] = n[k] - proj * e[k]
        norm = sqrt(dot3(u, u))
        for k in range(3):
            u[k] /= norm
        h1 = _h(A, B, u, a2, b2)
        if h1 <= h0:
            h0 = h1
            _copy3(u, n)
            _copy3(a2, a)
            _copy3(b2, b)
            if not converged:
                return _coaxial_refine(A, B, e, n, a, b)
            return False
    return False


cdef bint _coaxial_refine(const ConvexC* A, const ConvexC* B, const double* e, double* n,
                          double* a, double* b) noexcept nogil:
    # Nearly coaxial shapes (a sphere near the axis of a cylinder, ...) are nearly equally deep
    # in every radial direction, so EPA runs out of vertices before it resolves the best one.
    # n is orthogonal to the axis e; minimise h_M over the circle of such directions,
    # u(x) = cos(x) n + sin(x) t (t = e x n): 24 samples, then golden-section search between
    # the neighbours of the best (h_M restricted to the circle is smooth and, for nearly
    # coaxial shapes, unimodal). If that lowers h_M, n becomes the new direction. Either way
    # a, b become the midpoints of the two support segments along e (where the contact lines
    # overlap), so that a - b stays along n: EPA's face points are unreliable when it stopped at
    # its vertex cap. Returns True.
    cdef double t[3]
    cdef double u[3]
    cdef double a2[3]
    cdef double b2[3]
    cdef double lo_a[3]
    cdef double hi_a[3]
    cdef double lo_b[3]
    cdef double hi_b[3]
    cdef double d[3]
    cdef double h0 = dot3(n, a) - dot3(n, b)
    cdef double golden = 0.6180339887498949
    cdef double step = 2.0 * M_PI / 24.0
    cdef double x, h, best_x, best_h, lo, hi, x1, x2, h1, h2, ta0, ta1, tb0, tb1, lo_t, hi_t, mid
    cdef int k, it
    cross3(e, n, t)
    best_x = 0.0
    best_h = h0
    for k in range(1, 24):
        x = k * step
        h = _h_at(A, B, n, t, x)
        if h < best_h:
            best_h = h
            best_x = x
    lo = best_x - step
    hi = best_x + step
    x1 = hi - golden * (hi - lo)
    x2 = lo + golden * (hi - lo)
    h1 = _h_at(A, B, n, t, x1)
    h2 = _h_at(A, B, n, t, x2)
    for it in range(56):      # 2 step * 0.618^56: 1e-12 rad
        if h1 <= h2:
            hi = x2
            x2 = x1
            h2 = h1
            x1 = hi - golden * (hi - lo)
            h1 = _h_at(A, B, n, t, x1)
        else:
            lo = x1
            x1 = x2
            h1 = h2
            x2 = lo + golden * (hi - lo)
            h2 = _h_at(A, B, n, t, x2)
    x = 0.5 * (lo + hi)
    for k in range(3):
        u[k] = cos(x) * n[k] + sin(x) * t[k]
    h = _h(A, B, u, a2, b2)
    if not h < h0:
        _copy3(n, u)
    # the support sets of A along u and of B along -u contain segments along e (the side of a
    # cylinder, a capsule's axis): their ends are the supports along the slightly tilted
    # directions +-u + 1e-7 e
    for k in range(3):
        d[k] = u[k] + 1e-7 * e[k]
    support_core(A, d, hi_a)
    for k in range(3):
        d[k] = u[k] - 1e-7 * e[k]
    support_core(A, d, lo_a)
    for k in range(3):
        d[k] = -u[k] + 1e-7 * e[k]
    support_core(B, d, hi_b)
    for k in range(3):
        d[k] = -u[k] - 1e-7 * e[k]
    support_core(B, d, lo_b)
    ta0 = dot3(lo_a, e)
    ta1 = dot3(hi_a, e)
    tb0 = dot3(lo_b, e)
    tb1 = dot3(hi_b, e)
    lo_t = max(ta0, tb0)
    hi_t = min(ta1, tb1)
    mid = 0.5 * (lo_t + hi_t)
    _point_at(lo_a, hi_a, ta0, ta1, mid, a)
    _point_at(lo_b, hi_b, tb0, tb1, mid, b)
    _copy3(u, n)
    return True


cdef void _point_at(const double* p0, const double* p1, double t0, double t1, double t,
                    double* out) noexcept nogil:
    # the point of the segment [p0, p1] whose coordinate (t0 at p0, t1 at p1) is t, clamped
    cdef double s = 0.0
    if t1 > t0:
        s = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
    out[0] = p0[0] + s * (p1[0] - p0[0])
    out[1] = p0[1] + s * (p1[1] - p0[1])
    out[2] = p0[2] + s * (p1[2] - p0[2])


cdef double _h_at(const ConvexC* A, const ConvexC* B, const double* n, const double* t,
                  double x) noexcept nogil:
    # h_M(cos(x) n + sin(x) t)
    cdef double u[3]
    cdef double a[3]
    cdef double b[3]
    cdef double c = cos(x), s = sin(x)
    u[0] = c * n[0] + s * t[0]
    u[1] = c * n[1] + s * t[1]
    u[2] = c * n[2] + s * t[2]
    return _h(A, B, u, a, b)


cdef int _epa(const ConvexC* A, const ConvexC* B, const Simplex* s, double eps, double tol,
              Polytope* P, double* depth, double* normal, double* pa, double* pb) noexcept nogil:
    # (cores touching or overlapping, GJK's simplex) => (depth >= 0 of the origin in M,
    # normal from B to A, deepest core points pa, pb). Returns the iteration count.
    cdef double flat_normal[3]
    cdef double ca[3]
    cdef double cb[3]
    cdef double c[3]
    cdef double w[3]
    cdef double a[3]
    cdef double b[3]
    cdef double Pp[3]
    cdef double lam[3]
    cdef double r1[3]
    cdef double x[3]
    cdef double dmin, gap, lsum, sign, shift_a, shift_b
    cdef int dim, it, f, k, m
    cdef int best_v[3]
    cdef double best_n[3]
    cdef double best_d, inside
    cdef double best_a[3]
    cdef double best_b[3]
    cdef double lam2[3]
    cdef bint intact = True
    cdef bint converged = False
    flat_normal[0] = 0.0
    flat_normal[1] = 0.0
    flat_normal[2] = 1.0
    dim = _initial_polytope(A, B, s, eps, P, flat_normal)
    if dim < 3:
        # M is a point, segment or flat: the origin is on its boundary in 3-D, depth 0 along
        # any direction orthogonal to M. Take the one closest to the centre offset (A's side),
        # so that e.g. a sphere centred on a triangle's plane is pushed to the side it is on.
        _centre(A, ca)
        _centre(B, cb)
        _sub(ca, cb, c)
        if dim == 0:
            normal[0] = 0.0
            normal[1] = 0.0
            normal[2] = 1.0
            lsum = sqrt(dot3(c, c))
            if lsum > 0.0:
                normal[0] = c[0] / lsum
                normal[1] = c[1] / lsum
                normal[2] = c[2] / lsum
        elif dim == 1:
            # c without its component along the segment, else the chosen perpendicular
            _sub(&P.w[3], P.w, r1)
            lsum = dot3(r1, r1)
            sign = dot3(c, r1) / lsum
            x[0] = c[0] - sign * r1[0]
            x[1] = c[1] - sign * r1[1]
            x[2] = c[2] - sign * r1[2]
            lsum = sqrt(dot3(x, x))
            if lsum > 1e-12 * sqrt(dot3(c, c)) and lsum > 0.0:
                normal[0] = x[0] / lsum
                normal[1] = x[1] / lsum
                normal[2] = x[2] / lsum
            else:
                _copy3(flat_normal, normal)
        else:
            sign = -1.0 if dot3(flat_normal, c) < 0.0 else 1.0
            normal[0] = sign * flat_normal[0]
            normal[1] = sign * flat_normal[1]
            normal[2] = sign * flat_normal[2]
        _simplex_points(s, pa, pb)
        depth[0] = 0.0
        return 0
    _tetrahedron_faces(P)
    best_d = INFINITY
    for k in range(3):
        best_a[k] = 0.0
        best_b[k] = 0.0
    for it in range(EPA_MAX_VERTICES):
        # the face closest to the origin (first on ties: deterministic)
        f = -1
        dmin = INFINITY
        for k in range(P.nface):
            if P.dist[k] < dmin:
                dmin = P.dist[k]
                f = k
        if f < 0:
            break
        best_d = dmin
        _copy3(P.face[f].n, best_n)
        best_v[0] = P.face[f].v[0]
        best_v[1] = P.face[f].v[1]
        best_v[2] = P.face[f].v[2]
        _support_difference(A, B, P.face[f].n, w, a, b)
        _copy3(a, best_a)
        _copy3(b, best_b)
        gap = dot3(w, P.face[f].n) - dmin
        if gap <= tol:
            converged = True
            break
        if P.nvert == EPA_MAX_VERTICES:
            break
        _add_vertex(P, w, a, b)
        if not _expand(P, f, P.nvert - 1):
            intact = False
            break
    if best_d == INFINITY:
        # no usable face (cannot happen for a proper tetrahedron): report touching
        _simplex_points(s, pa, pb)
        depth[0] = 0.0
        normal[0] = 0.0
        normal[1] = 0.0
        normal[2] = 1.0
        return it + 1
    # the origin's projection d n on the closest face, in barycentric coordinates. Coplanar
    # faces tie in distance (a box face of M is two triangles or more): take the one of them
    # that holds the projection, then clamp into it (rounding can leave P slightly concave).
    Pp[0] = best_d * best_n[0]
    Pp[1] = best_d * best_n[1]
    Pp[2] = best_d * best_n[2]
    inside = _face_weights(P, best_v, Pp, best_n, lam)
    if intact and inside < 0.0:
        for k in range(P.nface):
            if (P.face[k].alive and P.face[k].d <= best_d + tol
                    and dot3(P.face[k].n, best_n) >= 1.0 - 1e-9):
                x[0] = _face_weights(P, P.face[k].v, Pp, best_n, lam2)
                if x[0] > inside:
                    inside = x[0]
                    best_v[0] = P.face[k].v[0]
                    best_v[1] = P.face[k].v[1]
                    best_v[2] = P.face[k].v[2]
                    _copy3(lam2, lam)
    lsum = 0.0
    for m in range(3):
        lam[m] = max(lam[m], 0.0)
        lsum += lam[m]
    for m in range(3):
        lam[m] = lam[m] / lsum if lsum > 0.0 else 1.0 / 3.0
    for k in range(3):
        pa[k] = 0.0
        pb[k] = 0.0
        for m in range(3):
            pa[k] += lam[m] * P.a[3 * best_v[m] + k]
            pb[k] += lam[m] * P.b[3 * best_v[m] + k]
    # The face lies inside M: its distance is a lower bound of the depth, h_M(n) = n.(a - b)
    # with a = s_A(n), b = s_B(-n) an upper bound, and exactly the translation along n that
    # makes A and B touch. Report that one (on a curved M, where EPA can stop at its vertex
    # cap, it is also the far better estimate: second order in the direction error), with the
    # face's points moved along n onto the support planes n.x = n.a and n.x = n.b.
    if _snap_to_axis_planes(A, B, converged, best_n, best_a, best_b):
        _copy3(best_a, pa)
        _copy3(best_b, pb)
    shift_a = dot3(best_n, best_a) - dot3(best_n, pa)
    shift_b = dot3(best_n, best_b) - dot3(best_n, pb)
    for k in range(3):
        pa[k] += shift_a * best_n[k]
        pb[k] += shift_b * best_n[k]
        # the outward normal of M at the deepest point points from A towards B
        normal[k] = -best_n[k]
    depth[0] = dot3(best_n, best_a) - dot3(best_n, best_b)
    return it + 1


# ---------------------------------------------------------------------------------------------
# Distance

cdef int convex_distance(const ConvexC* a, const ConvexC* b, double max_distance,
                         DistanceResult* out) noexcept nogil:
    # (A, B, max_distance) => (out: signed distance, pa, pb, normal from B to A, iterations);
    # returns a DistanceStatus. Cores first (GJK), EPA only when the cores touch or overlap.
    cdef double ra = core_radius(a)
    cdef double rb = core_radius(b)
    cdef double scale = max(_scale(a), _scale(b))
    cdef double ca[3]
    cdef double cb[3]
    cdef double coord, tol_gap, tol_zero, lower, dcore, depth, half_residual
    cdef double v[3]
    cdef double pa[3]
    cdef double pb[3]
    cdef double n[3]
    cdef Simplex s
    cdef Polytope P
    cdef int outcome, iterations = 0, k
    # rounding of world coordinates: a few ulps of the largest coordinate in play
    _centre(a, ca)
    _centre(b, cb)
    coord = max(max(fabs(ca[0]), fabs(ca[1])), max(fabs(ca[2]), fabs(cb[0])))
    coord = max(coord, max(fabs(cb[1]), fabs(cb[2]))) + scale
    tol_gap = GJK_TOLERANCE * scale + 8.0 * DBL_EPSILON * coord
    tol_zero = OVERLAP_TOLERANCE * scale + 8.0 * DBL_EPSILON * coord
    outcome = _gjk(a, b, max_distance + ra + rb, tol_gap, tol_zero, &s, v, &lower, &iterations)
    if outcome == GJK_OVERLAP:
        iterations += _epa(a, b, &s, FLAT_TOLERANCE * scale + 8.0 * DBL_EPSILON * coord,
                           EPA_TOLERANCE * scale + 8.0 * DBL_EPSILON * coord,
                           &P, &depth, n, pa, pb)
        dcore = -depth
    else:
        _simplex_points(&s, pa, pb)
        dcore = sqrt(dot3(v, v))
        for k in range(3):
            n[k] = v[k] / dcore
        if outcome == GJK_BEYOND:
            dcore = lower
    # v and the depth come from plane projections and support values (accurate even for
    # sliver simplices), the points from barycentric weights: split their small disagreement
    # (rounding) so that pa - pb = dcore n holds to the last bits
    for k in range(3):
        half_residual = 0.5 * (dcore * n[k] - (pa[k] - pb[k]))
        pa[k] += half_residual
        pb[k] -= half_residual
    out.distance = dcore - ra - rb
    for k in range(3):
        out.normal[k] = n[k]
        out.pa[k] = pa[k] - ra * n[k]
        out.pb[k] = pb[k] + rb * n[k]
    out.iterations = iterations
    if outcome == GJK_OVERLAP:
        return DISTANCE_PENETRATION
    if outcome == GJK_BEYOND:
        return DISTANCE_BEYOND
    return DISTANCE_EXACT


# ---------------------------------------------------------------------------------------------
# Python interface (tests, debugging, benchmarks)

_TYPES = {"sphere": SHAPE_SPHERE, "box": SHAPE_BOX, "capsule": SHAPE_CAPSULE,
          "cylinder": SHAPE_CYLINDER, "convex": SHAPE_CONVEX, "triangle": SHAPE_TRIANGLE}
_SIZES = {"sphere": 1, "box": 3, "capsule": 2, "cylinder": 2, "convex": 0, "triangle": 0}


cdef object _convex_from_dict(object shape, str name, ConvexC* c, MeshC* mesh):
    """Fill c (and mesh for a convex polytope) from a shape description; returns the array
    that must outlive c (the polytope's vertices) or None.

    shape: {"type": "sphere" | "box" | "capsule" | "cylinder" | "convex" | "triangle",
            "size": sphere (radius,), box (hx, hy, hz), capsule and cylinder (radius, half
                    length) [m], not used by convex and triangle,
            "R": 3x3 rotation shape -> world (default identity), "p": origin in world [m]
                 (default 0),
            "vertices": (N, 3) convex hull vertices (convex, N >= 1) or the 3 triangle
                        vertices, in the shape frame [m]}
    """
    if not isinstance(shape, dict):
        raise TypeError(f"{name}: expected a dict shape description, got {type(shape).__name__}")
    kind = shape.get("type")
    if kind not in _TYPES:
        raise ValueError(f"{name}: type {kind!r} is not one of {sorted(_TYPES)}")
    unknown = set(shape) - {"type", "size", "R", "p", "vertices"}
    if unknown:
        raise ValueError(f"{name}: unknown keys {sorted(unknown)}")
    memset(c, 0, sizeof(ConvexC))
    memset(mesh, 0, sizeof(MeshC))
    c.type = _TYPES[kind]
    cdef cnp.ndarray R = as_matrix(shape.get("R", np.eye(3)), 3, 3, f"{name}['R']")
    cdef cnp.ndarray p = as_vector(shape.get("p", np.zeros(3)), 3, f"{name}['p']")
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0.0:
        raise ValueError(f"{name}['R']: not a rotation matrix (orthonormal, det +1 to 1e-9)")
    cdef int nsize = _SIZES[kind]
    cdef cnp.ndarray size
    cdef int k
    if nsize:
        size = as_vector(np.atleast_1d(np.asarray(shape.get("size", ()), dtype=float)), nsize,
                         f"{name}['size'] ({kind})")
        if (size < 0.0).any():
            raise ValueError(f"{name}['size']: must be >= 0, got {size.tolist()}")
        for k in range(nsize):
            c.size[k] = size[k]
    cdef const double* Rp = data_ptr(R)
    cdef const double* pp = data_ptr(p)
    cdef cnp.ndarray verts
    cdef const double* vp
    if kind == "convex" or kind == "triangle":
        if "vertices" not in shape:
            raise ValueError(f"{name}: {kind} needs 'vertices'")
        verts = as_matrix(shape["vertices"], 3 if kind == "triangle" else -1, 3,
                          f"{name}['vertices']")
        if kind == "convex" and verts.shape[0] < 1:
            raise ValueError(f"{name}['vertices']: a convex shape needs at least one vertex")
    for k in range(9):
        c.R[k] = Rp[k]
    for k in range(3):
        c.p[k] = pp[k]
    if kind == "triangle":
        # world vertices; the triangle itself has the identity frame
        vp = data_ptr(verts)
        for k in range(3):
            mat3_vec(Rp, &vp[3 * k], &c.tri[3 * k])
            c.tri[3 * k] += pp[0]
            c.tri[3 * k + 1] += pp[1]
            c.tri[3 * k + 2] += pp[2]
        for k in range(9):
            c.R[k] = 1.0 if k % 4 == 0 else 0.0
        for k in range(3):
            c.p[k] = 0.0
        return None
    if kind == "convex":
        mesh.nvert = verts.shape[0]
        mesh.verts = data_ptr(verts)
        c.mesh = mesh
        return verts
    return None


def distance(a, b, max_distance=float("inf")):
    """Signed distance between two convex shapes (dict descriptions, see below).

    Returns (distance [m], pa (3,), pb (3,), normal (3,), status): distance > 0 separation,
    < 0 minus the penetration depth; pa, pb the closest (overlapping: deepest) points of A
    and B; normal the unit vector from B towards A, pa - pb = distance * normal; status 0
    (exact, GJK), 1 (the cores overlap: EPA), 2 (farther than max_distance: distance is only a
    lower bound).

    A shape is {"type": "sphere" | "box" | "capsule" | "cylinder" | "convex" | "triangle",
    "size": (radius,) | (hx, hy, hz) | (radius, half length), "R": 3x3 shape -> world,
    "p": (3,) origin [m], "vertices": (N, 3) in the shape frame (convex, triangle)}; R and p
    default to the identity and zero.
    """
    cdef ConvexC ca, cb
    cdef MeshC ma, mb
    cdef DistanceResult res
    cdef double md = float(max_distance)
    if md != md:
        raise ValueError("max_distance: NaN")
    keep_a = _convex_from_dict(a, "a", &ca, &ma)
    keep_b = _convex_from_dict(b, "b", &cb, &mb)
    cdef int status
    with nogil:
        status = convex_distance(&ca, &cb, md, &res)
    return (res.distance, np.array([res.pa[0], res.pa[1], res.pa[2]]),
            np.array([res.pb[0], res.pb[1], res.pb[2]]),
            np.array([res.normal[0], res.normal[1], res.normal[2]]), status)


def iterations(a, b, max_distance=float("inf")):
    """GJK + EPA iteration count of distance(a, b, max_distance) (diagnostics)."""
    cdef ConvexC ca, cb
    cdef MeshC ma, mb
    cdef DistanceResult res
    keep_a = _convex_from_dict(a, "a", &ca, &ma)
    keep_b = _convex_from_dict(b, "b", &cb, &mb)
    convex_distance(&ca, &cb, float(max_distance), &res)
    return res.iterations


def support_point(shape, direction, core=False):
    """The world point of `shape` (dict, as for distance) furthest along the world direction
    (3,); core=True: of its core (sphere centre, capsule segment)."""
    cdef ConvexC c
    cdef MeshC m
    cdef cnp.ndarray d = as_vector(direction, 3, "direction")
    cdef double out[3]
    keep = _convex_from_dict(shape, "shape", &c, &m)
    if core:
        support_core(&c, data_ptr(d), out)
    else:
        support(&c, data_ptr(d), out)
    return np.array([out[0], out[1], out[2]])


def time_distance(a, b, int calls=10000, max_distance=float("inf")):
    """Mean CPU time [s] of one convex_distance call on (a, b), measured over `calls` calls in
    C (no Python overhead; process time, so that other loads on the machine do not count): the
    benchmark's probe."""
    import time
    cdef ConvexC ca, cb
    cdef MeshC ma, mb
    cdef DistanceResult res
    cdef double md = float(max_distance)
    cdef int k
    keep_a = _convex_from_dict(a, "a", &ca, &ma)
    keep_b = _convex_from_dict(b, "b", &cb, &mb)
    if calls < 1:
        raise ValueError(f"calls: must be >= 1, got {calls}")
    t0 = time.process_time()
    with nogil:
        for k in range(calls):
            convex_distance(&ca, &cb, md, &res)
    return (time.process_time() - t0) / calls
