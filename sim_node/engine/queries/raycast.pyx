"""Ray casts against the placed collision shapes: the nearest surface along each segment.

    (ray origins and ends, shape placements and AABBs, body filters) => per ray: hit fraction,
    shape, world point, world unit normal

A ray is the segment x(t) = origin + t (end - origin), t in [0, 1]. Its hit is the smallest t
at which it enters a shape; `fraction` = 1 and `shape` = -1 when there is none. Primitives
(sphere, box, capsule, cylinder, plane) are intersected in closed form in the shape's frame,
CONVEX hulls by clipping the segment against their face planes, MESH and HEIGHTFIELD
triangles (Moller-Trumbore) through their BVH.

What counts as a hit follows PyBullet's rayTest (Bullet 3.2.7, measured, tests/engine/
test_raycast.py):
- solids (sphere, box, capsule, cylinder, convex): hit only where the ray enters from outside;
  a ray starting inside (or on the surface, leaving) does not hit that shape;
- surfaces (plane, mesh, heightfield triangles) are two-sided: a ray crossing from either side
  hits, with the normal turned towards the ray's origin; a ray starting or ending exactly on
  the surface does not hit it;
- grazing rays (tangent to a curved surface, along a face or an edge) do not hit;
- a ray of zero length hits nothing.
Only bodies with `enabled` set and (mask & group) != 0 are hit; the placements are those of
the last kinematics pass (the Scene refreshes them first).
"""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs, sqrt
from libc.stdlib cimport free, malloc

from sim_node.engine.bvh cimport BVH_STACK
from sim_node.engine.geometry cimport (BVH, MeshC, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CONVEX,
                                       SHAPE_CYLINDER, SHAPE_HEIGHTFIELD, SHAPE_MESH,
                                       SHAPE_PLANE, SHAPE_SPHERE)
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport BodyC, BodyStateC, ShapeC

cnp.import_array()

# below this many rays per thread, threads cost more than they save
cdef int MIN_RAYS_PER_THREAD = 64


cdef inline double _dot(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline bint _ray_box(const double* lo, const double* hi, const double* o, const double* d,
                          double tmax) noexcept nogil:
    # the segment o + t d, t in [0, tmax], meets the closed box [lo, hi] (slabs)
    cdef double t0 = 0.0, t1 = tmax, a, b, inv
    cdef int k
    for k in range(3):
        if d[k] == 0.0:
            if o[k] < lo[k] or o[k] > hi[k]:
                return False
            continue
        inv = 1.0 / d[k]
        a = (lo[k] - o[k]) * inv
        b = (hi[k] - o[k]) * inv
        if a > b:
            a, b = b, a
        if a > t0:
            t0 = a
        if b < t1:
            t1 = b
        if t0 > t1:
            return False
    return True


cdef inline bint _sphere(const double* o, const double* d, double r, double tmax, double* t,
                         double* n) noexcept nogil:
    # |o + t d| = r entered from outside at t in [0, tmax)
    cdef double a = _dot(d, d), b = _dot(o, d), c = _dot(o, o) - r * r, disc, tin
    cdef int k
    if c <= 0.0 or b >= 0.0:
        return False            # starts inside / on it, or moves away
    disc = b * b - a * c
    if disc <= 0.0:
        return False            # misses or grazes
    tin = c / (-b + sqrt(disc))     # the smaller root, without cancellation
    if tin >= tmax:
        return False
    t[0] = tin
    for k in range(3):
        n[k] = (o[k] + tin * d[k]) / r
    return True


cdef inline bint _box(const double* o, const double* d, const double* h, double tmax,
                      double* t, double* n) noexcept nogil:
    # the slabs |x_k| <= h_k: latest entry before earliest exit
    cdef double tin = -INFINITY, tout = INFINITY, a, b
    cdef int k, axis = -1
    cdef double side = 0.0, s
    for k in range(3):
        if d[k] == 0.0:
            if fabs(o[k]) >= h[k]:
                return False
            continue
        a = (-h[k] - o[k]) / d[k]
        b = (h[k] - o[k]) / d[k]
        s = -1.0
        if a > b:
            a, b = b, a
            s = 1.0
        if a > tin:
            tin = a
            axis = k
            side = s
        if b < tout:
            tout = b
    if not (tin < tout) or tin < 0.0 or tin >= tmax or axis < 0:
        return False
    t[0] = tin
    n[0] = n[1] = n[2] = 0.0
    n[axis] = side
    return True


cdef inline bint _cylinder(const double* o, const double* d, double r, double h, double tmax,
                           double* t, double* n) noexcept nogil:
    # |z| <= h and x^2 + y^2 <= r^2: latest entry before earliest exit of the two intervals
    cdef double tin = -INFINITY, tout = INFINITY, a, b, c, disc, sq, t1, t2, zside = 0.0
    cdef bint radial = False
    if d[2] == 0.0:
        if fabs(o[2]) >= h:
            return False
    else:
        t1 = (-h - o[2]) / d[2]
        t2 = (h - o[2]) / d[2]
        zside = -1.0
        if t1 > t2:
            t1, t2 = t2, t1
            zside = 1.0
        tin = t1
        tout = t2
    a = d[0] * d[0] + d[1] * d[1]
    c = o[0] * o[0] + o[1] * o[1] - r * r
    if a == 0.0:
        if c >= 0.0:
            return False
    else:
        b = o[0] * d[0] + o[1] * d[1]
        disc = b * b - a * c
        if disc <= 0.0:
            return False
        sq = sqrt(disc)
        t1 = (-b - sq) / a
        t2 = (-b + sq) / a
        if t1 > tin:
            tin = t1
            radial = True
        if t2 < tout:
            tout = t2
    if not (tin < tout) or tin < 0.0 or tin >= tmax:
        return False
    t[0] = tin
    if radial:
        n[0] = (o[0] + tin * d[0]) / r
        n[1] = (o[1] + tin * d[1]) / r
        n[2] = 0.0
    else:
        n[0] = n[1] = 0.0
        n[2] = zside
    return True


cdef inline bint _capsule(const double* o, const double* d, double r, double h, double tmax,
                          double* t, double* n) noexcept nogil:
    # the union of the side x^2 + y^2 <= r^2, |z| <= h and the spheres at z = +-h: the entry
    # into a convex union is the earliest entry into a part
    cdef double z = min(max(o[2], -h), h), a, b, c, disc, tin, best = tmax, zt
    cdef double oc[3]
    cdef double nc[3]
    cdef double tc
    cdef bint found = False
    cdef int k, end
    if o[0] * o[0] + o[1] * o[1] + (o[2] - z) * (o[2] - z) <= r * r:
        return False            # starts inside or on it
    a = d[0] * d[0] + d[1] * d[1]
    if a > 0.0:
        b = o[0] * d[0] + o[1] * d[1]
        c = o[0] * o[0] + o[1] * o[1] - r * r
        disc = b * b - a * c
        if c > 0.0 and b < 0.0 and disc > 0.0:
            tin = c / (-b + sqrt(disc))
            zt = o[2] + tin * d[2]
            if tin < best and -h <= zt <= h:
                best = tin
                t[0] = tin
                n[0] = (o[0] + tin * d[0]) / r
                n[1] = (o[1] + tin * d[1]) / r
                n[2] = 0.0
                found = True
    for end in range(2):
        oc[0] = o[0]
        oc[1] = o[1]
        oc[2] = o[2] - (2 * end - 1) * h
        if _sphere(oc, d, r, best, &tc, nc):
            best = tc
            t[0] = tc
            for k in range(3):
                n[k] = nc[k]
            found = True
    return found


cdef inline bint _plane(const double* o, const double* d, double tmax, double* t,
                        double* n) noexcept nogil:
    # the surface z = 0, crossed from either side (PyBullet's plane is two-sided)
    cdef double z0 = o[2], z1 = o[2] + d[2], tin
    if z0 * z1 >= 0.0:
        return False
    tin = z0 / (z0 - z1)
    if tin >= tmax:
        return False
    t[0] = tin
    n[0] = n[1] = 0.0
    n[2] = 1.0 if z0 > 0.0 else -1.0
    return True


cdef inline bint _convex(const MeshC* mesh, const double* o, const double* d, double tmax,
                         double* t, double* n) noexcept nogil:
    # clip the segment by every face plane n_f . x <= n_f . v_f of the hull
    cdef double tin = -INFINITY, tout = INFINITY, dist, denom, tf
    cdef int f, entering = -1
    cdef const double* nf
    cdef const double* v
    for f in range(mesh.nface):
        nf = &mesh.face_normals[3 * f]
        v = &mesh.verts[3 * mesh.face_verts[mesh.face_start[f]]]
        dist = nf[0] * (v[0] - o[0]) + nf[1] * (v[1] - o[1]) + nf[2] * (v[2] - o[2])
        denom = _dot(nf, d)
        if denom == 0.0:
            if dist <= 0.0:
                return False    # outside this face's plane (or on it), moving along it
            continue
        tf = dist / denom
        if denom < 0.0:
            if tf > tin:
                tin = tf
                entering = f
        elif tf < tout:
            tout = tf
        if tin >= tout or tin >= tmax:
            return False
    if entering < 0 or tin < 0.0:
        return False
    t[0] = tin
    nf = &mesh.face_normals[3 * entering]
    n[0] = nf[0]
    n[1] = nf[1]
    n[2] = nf[2]
    return True


cdef inline bint _triangle(const double* v0, const double* v1, const double* v2,
                           const double* o, const double* d, double tmax, double* t,
                           double* n) noexcept nogil:
    # Moller-Trumbore, both sides; hits strictly inside (0, tmax)
    cdef double e1[3]
    cdef double e2[3]
    cdef double pv[3]
    cdef double tv[3]
    cdef double qv[3]
    cdef double det, inv, u, v, tt
    cdef int k
    for k in range(3):
        e1[k] = v1[k] - v0[k]
        e2[k] = v2[k] - v0[k]
        tv[k] = o[k] - v0[k]
    pv[0] = d[1] * e2[2] - d[2] * e2[1]
    pv[1] = d[2] * e2[0] - d[0] * e2[2]
    pv[2] = d[0] * e2[1] - d[1] * e2[0]
    det = _dot(e1, pv)
    if det == 0.0:
        return False
    inv = 1.0 / det
    u = _dot(tv, pv) * inv
    if u < 0.0 or u > 1.0:
        return False
    qv[0] = tv[1] * e1[2] - tv[2] * e1[1]
    qv[1] = tv[2] * e1[0] - tv[0] * e1[2]
    qv[2] = tv[0] * e1[1] - tv[1] * e1[0]
    v = _dot(d, qv) * inv
    if v < 0.0 or u + v > 1.0:
        return False
    tt = _dot(e2, qv) * inv
    if tt <= 0.0 or tt >= tmax:
        return False
    t[0] = tt
    n[0] = e1[1] * e2[2] - e1[2] * e2[1]
    n[1] = e1[2] * e2[0] - e1[0] * e2[2]
    n[2] = e1[0] * e2[1] - e1[1] * e2[0]
    inv = sqrt(_dot(n, n))
    if _dot(n, d) > 0.0:
        inv = -inv              # towards the ray's origin
    for k in range(3):
        n[k] /= inv
    return True


cdef bint _mesh(const MeshC* mesh, const double* o, const double* d, double tmax, double* t,
                double* n) noexcept nogil:
    # nearest triangle hit: depth-first through the BVH, pruning boxes beyond the best so far
    cdef const BVH* tree = &mesh.bvh
    cdef int stack[BVH_STACK]
    cdef int top = 0, node, s, tri
    cdef const int* tris = mesh.tris
    cdef const double* verts = mesh.verts
    cdef double best = tmax
    cdef bint found = False
    if tree.nnode == 0:
        return False
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if not _ray_box(&tree.bounds[6 * node], &tree.bounds[6 * node + 3], o, d, best):
            continue
        if tree.child[2 * node] < 0:
            for s in range(tree.first[node], tree.first[node] + tree.count[node]):
                tri = tree.item[s]
                if _triangle(&verts[3 * tris[3 * tri]], &verts[3 * tris[3 * tri + 1]],
                             &verts[3 * tris[3 * tri + 2]], o, d, best, t, n):
                    best = t[0]
                    found = True
        else:
            stack[top] = tree.child[2 * node]
            stack[top + 1] = tree.child[2 * node + 1]
            top += 2
    if found:
        t[0] = best
    return found


cdef bint ray_shape(const ShapeC* s, const double* o_W, const double* d_W, double tmax,
                    double* t, double* n_W) noexcept nogil:
    """The ray o_W + t d_W (world) enters the placed shape at t < tmax: t and the outward unit
    normal there (world; surfaces: towards the origin)."""
    cdef double o[3]
    cdef double d[3]
    cdef double r[3]
    cdef double n[3]
    cdef bint hit
    cdef int k
    cdef const double* R = s.R
    for k in range(3):
        r[k] = o_W[k] - s.p[k]
    # into the shape frame: x_S = R^T (x_W - p)
    for k in range(3):
        o[k] = R[k] * r[0] + R[3 + k] * r[1] + R[6 + k] * r[2]
        d[k] = R[k] * d_W[0] + R[3 + k] * d_W[1] + R[6 + k] * d_W[2]
    if s.type == SHAPE_SPHERE:
        hit = _sphere(o, d, s.size[0], tmax, t, n)
    elif s.type == SHAPE_BOX:
        hit = _box(o, d, s.size, tmax, t, n)
    elif s.type == SHAPE_CAPSULE:
        hit = _capsule(o, d, s.size[0], s.size[1], tmax, t, n)
    elif s.type == SHAPE_CYLINDER:
        hit = _cylinder(o, d, s.size[0], s.size[1], tmax, t, n)
    elif s.type == SHAPE_PLANE:
        hit = _plane(o, d, tmax, t, n)
    elif s.type == SHAPE_CONVEX:
        hit = _convex(s.mesh, o, d, tmax, t, n)
    elif s.type == SHAPE_MESH or s.type == SHAPE_HEIGHTFIELD:
        hit = _mesh(s.mesh, o, d, tmax, t, n)
    else:
        hit = False
    if hit:
        for k in range(3):
            n_W[k] = R[3 * k] * n[0] + R[3 * k + 1] * n[1] + R[3 * k + 2] * n[2]
    return hit


cdef void _cast_one(const BodyC* bodies, const BodyStateC* states, const ShapeC* shapes,
                    const int* candidates, int ncand, const double* o, const double* e,
                    double* fraction, cnp.int64_t* shape, double* point,
                    double* normal) noexcept nogil:
    # one ray against the candidate bodies: box of the body, box of the shape, the shape
    cdef double d[3]
    cdef double n[3]
    cdef double best = 1.0, t
    cdef int c, b, j, k, found = -1
    for k in range(3):
        d[k] = e[k] - o[k]
        normal[k] = 0.0
    if d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
        for c in range(ncand):
            b = candidates[c]
            if not _ray_box(states[b].lo, states[b].hi, o, d, best):
                continue
            for j in range(bodies[b].first_shape, bodies[b].first_shape + bodies[b].nshape):
                if not _ray_box(shapes[j].lo, shapes[j].hi, o, d, best):
                    continue
                if ray_shape(&shapes[j], o, d, best, &t, n):
                    best = t
                    found = j
                    for k in range(3):
                        normal[k] = n[k]
    fraction[0] = best
    shape[0] = found
    for k in range(3):
        point[k] = e[k] if found < 0 else o[k] + best * d[k]


def ray_cast(SceneModel m, SceneData d, const double[:, ::1] origins, const double[:, ::1] ends,
             double[::1] fraction, cnp.int64_t[::1] shape, double[:, ::1] point,
             double[:, ::1] normal, unsigned int mask, int threads):
    """Cast N rays (origins, ends: (N, 3) [m], finite: the caller checks) against the scene's
    enabled bodies whose group shares a bit with `mask`, on up to `threads` threads. Fills
    fraction (N,) in [0, 1] (1: no hit), shape (N,) the shape index hit (-1: none),
    point (N, 3) the world hit point (the end when none) [m], normal (N, 3) the unit world
    normal (zeros when none). The bodies' placements are those of the last kinematics pass."""
    cdef Py_ssize_t N = origins.shape[0], i
    cdef int ncand = 0, b, nt
    cdef int* candidates = <int*> malloc((m.nbody + 1) * sizeof(int))
    if candidates == NULL:
        raise MemoryError("ray_cast: no memory for the candidate bodies")
    for b in range(m.nbody):
        if m.bodies[b].enabled and m.bodies[b].nshape > 0 and (m.bodies[b].group & mask) != 0:
            candidates[ncand] = b
            ncand += 1
    nt = max(1, min(threads, <int> (N // MIN_RAYS_PER_THREAD)))
    try:
        if N == 0:
            return
        for i in prange(N, nogil=True, schedule="guided", num_threads=nt):
            _cast_one(m.bodies, d.bodies, d.shapes, candidates, ncand, &origins[i, 0],
                      &ends[i, 0], &fraction[i], &shape[i], &point[i, 0], &normal[i, 0])
    finally:
        free(candidates)
