"""Closest points between collision shapes: signed distance, a point on each, the normal.

    (shapes placed by kinematics, max_distance) => per shape pair within max_distance:
        distance [m] (< 0: penetration depth), pa on A, pb on B [m], normal from B to A,
        with pa - pb = distance * normal (gjk.pxd DistanceResult)

Convex pairs (sphere, box, capsule, cylinder, convex hull) go through GJK / EPA (gjk.pyx), which
is exact for the radii of spheres and capsules. A PLANE (the half-space z <= 0 of its frame) is
closed form: the support point of the other shape against the plane normal. A triangle MESH or
HEIGHTFIELD is the closest of its triangles whose boxes lie within max_distance of the other
shape's box (its BVH / grid), each triangle a convex set for GJK / EPA. A MESH is a surface,
possibly open: a shape overlapping it reports EPA's depth against the triangle it overlaps most.
A HEIGHTFIELD is solid below: a shape under or through one of its triangles reports the depth
along that triangle's upward normal (as a plane), so a shape buried under the surface is inside
it. Two planes have no closest points (parallel ones are everywhere equally far).
"""
import numpy as np

from libc.math cimport INFINITY

from sim_node.engine.bvh cimport box_transform, bvh_query_aabb_from
from sim_node.engine.geometry cimport (ConvexC, DistanceResult, SHAPE_BOX, SHAPE_CAPSULE,
                                       SHAPE_CONVEX, SHAPE_CYLINDER, SHAPE_HEIGHTFIELD,
                                       SHAPE_MESH, SHAPE_PLANE, SHAPE_SPHERE, SHAPE_TRIANGLE)
from sim_node.engine.gjk cimport convex_distance, support, DISTANCE_BEYOND
from sim_node.engine.heightfield cimport heightfield_cells_from
from sim_node.engine.narrowphase cimport convex_of
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.spatial cimport cross3, dot3, mat3T_vec, mat3_vec

cdef enum:
    CHUNK = 256         # triangles fetched from a BVH / grid per query call


cdef inline bint _convex(int t) noexcept nogil:
    return (t == SHAPE_SPHERE or t == SHAPE_BOX or t == SHAPE_CAPSULE or t == SHAPE_CYLINDER
            or t == SHAPE_CONVEX)


cdef inline bint _triangles(int t) noexcept nogil:
    return t == SHAPE_MESH or t == SHAPE_HEIGHTFIELD


cdef void _init_triangle(ConvexC* T) noexcept nogil:
    cdef int k
    T.type = SHAPE_TRIANGLE
    T.mesh = NULL
    for k in range(9):
        T.R[k] = 1.0 if k % 4 == 0 else 0.0
    for k in range(3):
        T.p[k] = 0.0
        T.size[k] = 0.0


cdef void _load_triangle(const ShapeC* s, int t, ConvexC* T) noexcept nogil:
    # triangle t of s's mesh (heightfields store theirs in verts / tris too), in the world
    cdef int v, k
    for v in range(3):
        mat3_vec(s.R, &s.mesh.verts[3 * s.mesh.tris[3 * t + v]], &T.tri[3 * v])
        for k in range(3):
            T.tri[3 * v + k] += s.p[k]


cdef void _local_box(const double* lo, const double* hi, double grow, const ShapeC* s,
                     double* local) noexcept nogil:
    # the world box [lo, hi] grown by `grow`, as an AABB in s's frame
    cdef double box[6]
    cdef double Rt[9]
    cdef double pt[3]
    cdef int i, k
    for k in range(3):
        box[k] = lo[k] - grow
        box[3 + k] = hi[k] + grow
    for i in range(3):
        for k in range(3):
            Rt[3 * i + k] = s.R[3 * k + i]
    mat3T_vec(s.R, s.p, pt)
    for k in range(3):
        pt[k] = -pt[k]
    box_transform(box, Rt, pt, local)


cdef inline int _query(const ShapeC* s, const double* local, int skip, int* tris) noexcept nogil:
    # triangles of s whose boxes meet `local` (s's frame), ranks skip .. skip + CHUNK - 1
    if s.type == SHAPE_HEIGHTFIELD:
        return heightfield_cells_from(s.mesh, local, &local[3], skip, tris, CHUNK)
    return bvh_query_aabb_from(&s.mesh.bvh, local, &local[3], skip, tris, CHUNK)


cdef inline void _flip(DistanceResult* r) noexcept nogil:
    # the same result with A and B exchanged
    cdef double x
    cdef int k
    for k in range(3):
        x = r.pa[k]
        r.pa[k] = r.pb[k]
        r.pb[k] = x
        r.normal[k] = -r.normal[k]


cdef bint _keep(DistanceResult* best, const DistanceResult* r) noexcept nogil:
    if r.distance < best.distance:
        best[0] = r[0]
        return True
    return False


cdef void _plane_result(const double* x, const double* n, double offset,
                        DistanceResult* r) noexcept nogil:
    # A's lowest point x against the plane n.y = offset (B): its point below x on the plane
    cdef int k
    r.distance = dot3(n, x) - offset
    for k in range(3):
        r.pa[k] = x[k]
        r.pb[k] = x[k] - r.distance * n[k]
        r.normal[k] = n[k]
    r.iterations = 0


cdef void _convex_plane(const ShapeC* a, const ShapeC* plane, DistanceResult* r) noexcept nogil:
    cdef ConvexC A
    cdef double n[3]
    cdef double down[3]
    cdef double x[3]
    cdef int k
    convex_of(a, &A)
    for k in range(3):
        n[k] = plane.R[3 * k + 2]
        down[k] = -n[k]
    support(&A, down, x)
    _plane_result(x, n, dot3(n, plane.p), r)


cdef void _vertices_plane(const ShapeC* a, const ShapeC* plane, DistanceResult* r) noexcept nogil:
    # a mesh's lowest vertex against the plane
    cdef double n[3]
    cdef double x[3]
    cdef double best[3]
    cdef double h, lowest = INFINITY
    cdef int i, k
    for k in range(3):
        n[k] = plane.R[3 * k + 2]
        best[k] = a.p[k]
    for i in range(a.mesh.nvert):
        mat3_vec(a.R, &a.mesh.verts[3 * i], x)
        for k in range(3):
            x[k] += a.p[k]
        h = dot3(n, x)
        if h < lowest:
            lowest = h
            best[0], best[1], best[2] = x[0], x[1], x[2]
    _plane_result(best, n, dot3(n, plane.p), r)


cdef bint _over_triangle(const ConvexC* T, const double* n, const double* x) noexcept nogil:
    # x projects along the unit normal n into the triangle (inside every edge)
    cdef double e[3]
    cdef double w[3]
    cdef double c[3]
    cdef int v, k
    for v in range(3):
        for k in range(3):
            e[k] = T.tri[3 * ((v + 1) % 3) + k] - T.tri[3 * v + k]
            w[k] = x[k] - T.tri[3 * v + k]
        cross3(e, w, c)
        if dot3(c, n) < 0.0:
            return False
    return True


cdef void _one_sided(const ConvexC* A, const ConvexC* T, DistanceResult* r) noexcept nogil:
    # a heightfield triangle is solid below: when A reaches under its plane (GJK found A
    # overlapping it or on its lower side), the depth is along the triangle's upward normal
    cdef double e1[3]
    cdef double e2[3]
    cdef double n[3]
    cdef double down[3]
    cdef double x[3]
    cdef double norm
    cdef int k
    for k in range(3):
        e1[k] = T.tri[3 + k] - T.tri[k]
        e2[k] = T.tri[6 + k] - T.tri[k]
    cross3(e1, e2, n)
    norm = dot3(n, n) ** 0.5
    if norm <= 0.0:
        return
    for k in range(3):
        n[k] /= norm
        down[k] = -n[k]
    if r.distance > 0.0 and (dot3(r.normal, n) >= 0.0 or not _over_triangle(T, n, r.pa)):
        return                  # separated: above the surface, or beside this triangle
    support(A, down, x)
    if dot3(n, x) - dot3(n, T.tri) < 0.0:
        _plane_result(x, n, dot3(n, T.tri), r)


cdef bint _convex_mesh(const ShapeC* a, const ShapeC* b, double max_distance,
                       DistanceResult* best) noexcept nogil:
    # convex A against the triangles of mesh / heightfield B near A's box
    cdef ConvexC A
    cdef ConvexC T
    cdef DistanceResult r
    cdef double local[6]
    cdef int tris[CHUNK]
    cdef int total, chunk, i, skip = 0, status
    cdef bint found = False
    cdef bint hf = b.type == SHAPE_HEIGHTFIELD
    convex_of(a, &A)
    _init_triangle(&T)
    best.distance = INFINITY
    _local_box(a.lo, a.hi, max_distance, b, local)
    while True:
        total = _query(b, local, skip, tris)
        chunk = min(total - skip, <int> CHUNK)
        for i in range(chunk):
            _load_triangle(b, tris[i], &T)
            status = convex_distance(&A, &T, min(max_distance, best.distance), &r)
            if hf:
                _one_sided(&A, &T, &r)
            elif status == DISTANCE_BEYOND:
                continue
            if r.distance <= max_distance and _keep(best, &r):
                found = True
        skip += chunk
        if chunk <= 0 or skip >= total:
            return found


cdef bint _mesh_mesh(const ShapeC* a, const ShapeC* b, double max_distance,
                     DistanceResult* best) noexcept nogil:
    # triangles of A near B's box against triangles of B near each of them
    cdef ConvexC TA
    cdef ConvexC TB
    cdef DistanceResult r
    cdef double local_a[6]
    cdef double local_b[6]
    cdef double lo[3]
    cdef double hi[3]
    cdef int tris_a[CHUNK]
    cdef int tris_b[CHUNK]
    cdef int total_a, chunk_a, skip_a = 0, total_b, chunk_b, skip_b, i, j, k, status
    cdef bint found = False
    _init_triangle(&TA)
    _init_triangle(&TB)
    best.distance = INFINITY
    _local_box(b.lo, b.hi, max_distance, a, local_a)
    while True:
        total_a = _query(a, local_a, skip_a, tris_a)
        chunk_a = min(total_a - skip_a, <int> CHUNK)
        for i in range(chunk_a):
            _load_triangle(a, tris_a[i], &TA)
            for k in range(3):
                lo[k] = min(TA.tri[k], min(TA.tri[3 + k], TA.tri[6 + k]))
                hi[k] = max(TA.tri[k], max(TA.tri[3 + k], TA.tri[6 + k]))
            _local_box(lo, hi, max_distance, b, local_b)
            skip_b = 0
            while True:
                total_b = _query(b, local_b, skip_b, tris_b)
                chunk_b = min(total_b - skip_b, <int> CHUNK)
                for j in range(chunk_b):
                    _load_triangle(b, tris_b[j], &TB)
                    status = convex_distance(&TA, &TB, min(max_distance, best.distance), &r)
                    if status != DISTANCE_BEYOND and r.distance <= max_distance and _keep(best, &r):
                        found = True
                skip_b += chunk_b
                if chunk_b <= 0 or skip_b >= total_b:
                    break
        skip_a += chunk_a
        if chunk_a <= 0 or skip_a >= total_a:
            return found


cdef bint shape_distance(const ShapeC* a, const ShapeC* b, double max_distance,
                         DistanceResult* out) noexcept nogil:
    # (placed shapes A, B, max_distance) => out (normal from B to A); False when the shapes are
    # further apart than max_distance (out is then undefined)
    cdef ConvexC A
    cdef ConvexC B
    cdef int status
    cdef bint found
    if a.type == SHAPE_PLANE and b.type == SHAPE_PLANE:
        return False
    if b.type == SHAPE_PLANE or (_triangles(b.type) and a.type != SHAPE_PLANE):
        pass                                    # A is the convex / moving side already
    elif a.type == SHAPE_PLANE or _triangles(a.type):
        found = shape_distance(b, a, max_distance, out)
        if found:
            _flip(out)
        return found
    if b.type == SHAPE_PLANE:
        if _convex(a.type):
            _convex_plane(a, b, out)
        else:
            _vertices_plane(a, b, out)
        return out.distance <= max_distance
    if _triangles(b.type):
        if _convex(a.type):
            return _convex_mesh(a, b, max_distance, out)
        return _mesh_mesh(a, b, max_distance, out)
    convex_of(a, &A)
    convex_of(b, &B)
    status = convex_distance(&A, &B, max_distance, out)
    return status != DISTANCE_BEYOND and out.distance <= max_distance


cdef inline bint _boxes_apart(const ShapeC* a, const ShapeC* b, double gap) noexcept nogil:
    # the shapes' world boxes are more than `gap` apart along some axis
    cdef int k
    for k in range(3):
        if a.lo[k] - gap > b.hi[k] or b.lo[k] - gap > a.hi[k]:
            return True
    return False


def closest_points(SceneModel m, SceneData d, shapes_a, shapes_b, double max_distance):
    """The closest points of every pair (shapes_a[i], shapes_b[j]) of placed shapes (Scene
    shape indices, int arrays) within max_distance [m] of each other, as placed by the last
    kinematics pass (Scene.refresh). Pairs of a shape with itself are skipped.

    Returns a dict of arrays, one row per pair found: shape_a, shape_b (n,) int64, distance (n,)
    [m] (< 0: penetration depth), point_a, point_b (n, 3) world [m], normal (n, 3) unit, from
    B towards A; point_a - point_b = distance normal."""
    cdef long[::1] sa = np.ascontiguousarray(shapes_a, dtype=np.int_)
    cdef long[::1] sb = np.ascontiguousarray(shapes_b, dtype=np.int_)
    cdef Py_ssize_t i, j, n = 0
    cdef int k
    for i in range(sa.shape[0]):
        if not 0 <= sa[i] < m.nshape:
            raise IndexError(f"closest_points: shape {sa[i]} out of range [0, {m.nshape})")
    for j in range(sb.shape[0]):
        if not 0 <= sb[j] < m.nshape:
            raise IndexError(f"closest_points: shape {sb[j]} out of range [0, {m.nshape})")
    cdef Py_ssize_t cap = sa.shape[0] * sb.shape[0]
    out_a = np.empty(cap, np.int64)
    out_b = np.empty(cap, np.int64)
    dist = np.empty(cap)
    pa = np.empty((cap, 3))
    pb = np.empty((cap, 3))
    normal = np.empty((cap, 3))
    cdef long long[::1] oa = out_a, ob = out_b
    cdef double[::1] od = dist
    cdef double[:, ::1] opa = pa, opb = pb, on = normal
    cdef DistanceResult r
    cdef const ShapeC* A
    cdef const ShapeC* B
    with nogil:
        for i in range(sa.shape[0]):
            for j in range(sb.shape[0]):
                if sa[i] == sb[j]:
                    continue
                A = &d.shapes[sa[i]]
                B = &d.shapes[sb[j]]
                if _boxes_apart(A, B, max_distance):
                    continue
                if not shape_distance(A, B, max_distance, &r):
                    continue
                oa[n] = sa[i]
                ob[n] = sb[j]
                od[n] = r.distance
                for k in range(3):
                    opa[n, k] = r.pa[k]
                    opb[n, k] = r.pb[k]
                    on[n, k] = r.normal[k]
                n += 1
    return {"shape_a": out_a[:n], "shape_b": out_b[:n], "distance": dist[:n],
            "point_a": pa[:n], "point_b": pb[:n], "normal": normal[:n]}
