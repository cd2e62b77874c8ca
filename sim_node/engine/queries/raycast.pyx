"""Ray casts against the placed collision shapes: the nearest surface along each segment.

    (ray origins and ends, shape placements and AABBs, body filters) => per ray: hit fraction,
    shape, world point, world unit normal

A ray is the segment x(t) = origin + t (end - origin), t in [0, 1]. Its hit is the smallest t
at which it enters a shape; `fraction` = 1 and `shape` = -1 when there is none. Primitives
(sphere, box, capsule, cylinder, plane) are intersected in closed form in the shape's frame,
CONVEX hulls, MESH and HEIGHTFIELD shapes by their triangles (Moller-Trumbore) through their
BVH: a hull is entered where the ray first crosses one of its outward-facing triangles. (Not by
clipping against the face planes: robot link hulls have hundreds of faces — the kuka iiwa's
250 to 1,029 — and the clip visits every one; the BVH visits a few.)

What counts as a hit follows PyBullet's rayTest (Bullet 3.2.7, measured side by side in
tests/sim/test_rays.py):
- solids (sphere, box, capsule, cylinder, convex): hit only where the ray enters from outside;
  a ray starting inside (or on the surface, leaving) does not hit that shape (PyBullet's GJK
  casts report fraction 0 for about half the directions from inside, nothing for the rest:
  we take the consistent rule that lets a sensor inside its own link's hull see out);
- surfaces (plane, mesh, heightfield triangles) are two-sided: a ray crossing from either side
  hits, with the normal turned towards the ray's origin; a ray starting or ending exactly on
  the surface does not hit it;
- grazing rays (tangent to a curved surface, along a face or an edge) do not hit;
- a ray of zero length hits nothing.
Only bodies with `enabled` set and (mask & group) != 0 are hit; the placements are those of
the last kinematics pass (the Scene refreshes them first).
"""
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


cdef inline bint _ray_box(const double* lo, const double* hi, const double* o,
                          const double* inv, double tmax) noexcept nogil:
    # the segment o + t d, t in [0, tmax], meets the closed box [lo, hi] (slabs); inv[k] =
    # 1 / d[k], +-inf where d[k] = 0 (then the slab holds o or nothing)
    cdef double t0 = 0.0, t1 = tmax, a, b
    cdef int k
    for k in range(3):
        if inv[k] == INFINITY or inv[k] == -INFINITY:
            if o[k] < lo[k] or o[k] > hi[k]:
                return False
            continue
        a = (lo[k] - o[k]) * inv[k]
        b = (hi[k] - o[k]) * inv[k]
        if a > b:
            a, b = b, a
        if a > t0:
            t0 = a
        if b < t1:
            t1 = b
        if t0 > t1:
            return False
    return True


cdef inline void _inverse(const double* d, double* inv) noexcept nogil:
    cdef int k
    for k in range(3):
        inv[k] = 1.0 / d[k] if d[k] != 0.0 else INFINITY


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


cdef inline bint _triangle(const double* v0, const double* v1, const double* v2,
                           const double* o, const double* d, double tmax, bint entering,
                           double* t, double* n) noexcept nogil:
    # Moller-Trumbore; hits strictly inside (0, tmax). entering: only where the ray enters
    # the counter-clockwise (outward) side, det = -d . (e1 x e2) > 0; else both sides
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
    if det == 0.0 or (entering and det < 0.0):
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
    if det < 0.0:
        inv = -inv              # towards the ray's origin (d . n > 0)
    for k in range(3):
        n[k] /= inv
    return True


cdef bint _mesh(const MeshC* mesh, const double* o, const double* d, double tmax,
                bint entering, double* t, double* n) noexcept nogil:
    # nearest triangle hit: depth-first through the BVH, pruning boxes beyond the best so far.
    # A convex hull (entering = 1; sim/build.py convex_mesh_arrays gives it the full tree over
    # its triangles, counter-clockwise seen from outside) is entered where the ray first
    # crosses one of its triangles from outside; a ray from inside crosses them only outwards.
    cdef const BVH* tree = &mesh.bvh
    cdef int stack[BVH_STACK]
    cdef int top = 0, node, s, tri
    cdef const int* tris = mesh.tris
    cdef const double* verts = mesh.verts
    cdef double best = tmax
    cdef bint found = False
    cdef double inv[3]
    if tree.nnode == 0:
        return False
    _inverse(d, inv)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if not _ray_box(&tree.bounds[6 * node], &tree.bounds[6 * node + 3], o, inv, best):
            continue
        if tree.child[2 * node] < 0:
            for s in range(tree.first[node], tree.first[node] + tree.count[node]):
                tri = tree.item[s]
                if _triangle(&verts[3 * tris[3 * tri]], &verts[3 * tris[3 * tri + 1]],
                             &verts[3 * tris[3 * tri + 2]], o, d, best, entering, t, n):
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
        hit = _mesh(s.mesh, o, d, tmax, True, t, n)
    elif s.type == SHAPE_MESH or s.type == SHAPE_HEIGHTFIELD:
        hit = _mesh(s.mesh, o, d, tmax, False, t, n)
    else:
        hit = False
    if hit:
        for k in range(3):
            n_W[k] = R[3 * k] * n[0] + R[3 * k + 1] * n[1] + R[3 * k + 2] * n[2]
    return hit


cdef enum:
    TOP_LEAF = 2            # bodies per leaf of the per-call tree over the bodies' boxes


cdef struct TopTree:
    # An AABB tree over the bounded candidate bodies, built per call from their world boxes
    # (median splits along the longest axis of the box centres); bodies with an unbounded box
    # (planes, heightfields) are tested by every ray, first, so that their hits prune the tree
    int nnode
    double* box             # [nnode*6] lo x, y, z, hi x, y, z
    int* child              # [nnode*2] left, right (-1: a leaf)
    int* first              # [nnode] a leaf's bodies: item[first : first + count]
    int* count
    int* item               # [nbounded] body indices, leaf-contiguous
    int nunbounded
    int* unbounded          # [nunbounded] body indices


cdef void _select(int* item, const double* centre, int axis, int lo, int hi,
                  int nth) noexcept nogil:
    # Hoare's selection: reorder item[lo:hi] so that item[nth] holds the nth smallest centre
    # along axis, no larger ones before it and no smaller ones after
    cdef int i, j, swap
    cdef double pivot
    while hi - lo > 1:
        pivot = centre[3 * item[(lo + hi) // 2] + axis]
        i = lo
        j = hi - 1
        while i <= j:
            while centre[3 * item[i] + axis] < pivot:
                i += 1
            while centre[3 * item[j] + axis] > pivot:
                j -= 1
            if i <= j:
                swap = item[i]
                item[i] = item[j]
                item[j] = swap
                i += 1
                j -= 1
        if nth <= j:
            hi = j + 1
        elif nth >= i:
            lo = i
        else:
            return


cdef int _build(TopTree* t, const BodyStateC* states, const double* centre, int start,
                int end) noexcept nogil:
    # the node over item[start:end]; returns its index
    cdef int node = t.nnode, s, k, axis = 0, left, right
    cdef double* box = &t.box[6 * node]
    cdef double cmin[3]
    cdef double cmax[3]
    cdef const BodyStateC* b
    t.nnode += 1
    for k in range(3):
        box[k] = cmin[k] = INFINITY
        box[3 + k] = cmax[k] = -INFINITY
    for s in range(start, end):
        b = &states[t.item[s]]
        for k in range(3):
            box[k] = min(box[k], b.lo[k])
            box[3 + k] = max(box[3 + k], b.hi[k])
            cmin[k] = min(cmin[k], centre[3 * t.item[s] + k])
            cmax[k] = max(cmax[k], centre[3 * t.item[s] + k])
    for k in range(1, 3):
        if cmax[k] - cmin[k] > cmax[axis] - cmin[axis]:
            axis = k
    t.child[2 * node] = t.child[2 * node + 1] = -1
    t.first[node] = start
    t.count[node] = end - start
    if end - start <= TOP_LEAF or cmax[axis] == cmin[axis]:
        return node
    _select(t.item, centre, axis, start, end, (start + end) // 2)
    left = _build(t, states, centre, start, (start + end) // 2)
    right = _build(t, states, centre, (start + end) // 2, end)
    t.child[2 * node] = left
    t.child[2 * node + 1] = right
    t.count[node] = 0
    return node


cdef inline void _cast_body(const BodyC* body, const ShapeC* shapes, const double* o,
                            const double* d, const double* inv, double* best, int* found,
                            double* normal) noexcept nogil:
    # the ray against a body's shapes, keeping the nearest hit so far
    cdef int j, k
    cdef double t
    cdef double n[3]
    for j in range(body.first_shape, body.first_shape + body.nshape):
        # (a body of one shape: its box, tested already, is that shape's)
        if body.nshape > 1 and not _ray_box(shapes[j].lo, shapes[j].hi, o, inv, best[0]):
            continue
        if ray_shape(&shapes[j], o, d, best[0], &t, n):
            best[0] = t
            found[0] = j
            for k in range(3):
                normal[k] = n[k]


cdef void _cast_one(const BodyC* bodies, const BodyStateC* states, const ShapeC* shapes,
                    const TopTree* tree, const double* o, const double* e, double* fraction,
                    cnp.int64_t* shape, double* point, double* normal) noexcept nogil:
    # one ray: the unbounded bodies, then down the tree: box of a node, of a body, a shape
    cdef double d[3]
    cdef double inv[3]
    cdef double best = 1.0
    cdef int stack[BVH_STACK]
    cdef int top, node, s, k, found = -1
    for k in range(3):
        d[k] = e[k] - o[k]
        normal[k] = 0.0
    _inverse(d, inv)
    if d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
        for s in range(tree.nunbounded):
            _cast_body(&bodies[tree.unbounded[s]], shapes, o, d, inv, &best, &found, normal)
        top = 0
        if tree.nnode > 0:
            stack[0] = 0
            top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if not _ray_box(&tree.box[6 * node], &tree.box[6 * node + 3], o, inv, best):
                continue
            if tree.child[2 * node] < 0:
                for s in range(tree.first[node], tree.first[node] + tree.count[node]):
                    if tree.count[node] == 1 or _ray_box(states[tree.item[s]].lo,
                                                         states[tree.item[s]].hi, o, inv, best):
                        _cast_body(&bodies[tree.item[s]], shapes, o, d, inv, &best, &found,
                                   normal)
            else:
                stack[top] = tree.child[2 * node]
                stack[top + 1] = tree.child[2 * node + 1]
                top += 2
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
    cdef int nbounded = 0, b, k, nt
    cdef bint bounded
    cdef int nb = max(m.nbody, 1)
    cdef TopTree tree
    cdef double* centre = <double*> malloc(3 * nb * sizeof(double))
    tree.nnode = 0
    tree.nunbounded = 0
    tree.box = <double*> malloc(12 * nb * sizeof(double))
    tree.child = <int*> malloc(4 * nb * sizeof(int))
    tree.first = <int*> malloc(2 * nb * sizeof(int))
    tree.count = <int*> malloc(2 * nb * sizeof(int))
    tree.item = <int*> malloc(nb * sizeof(int))
    tree.unbounded = <int*> malloc(nb * sizeof(int))
    try:
        if (centre == NULL or tree.box == NULL or tree.child == NULL or tree.first == NULL
                or tree.count == NULL or tree.item == NULL or tree.unbounded == NULL):
            raise MemoryError("ray_cast: no memory for the tree over the bodies")
        for b in range(m.nbody):
            if not (m.bodies[b].enabled and m.bodies[b].nshape > 0
                    and (m.bodies[b].group & mask) != 0):
                continue
            bounded = True
            for k in range(3):
                centre[3 * b + k] = 0.5 * (d.bodies[b].lo[k] + d.bodies[b].hi[k])
                if not (-INFINITY < d.bodies[b].lo[k] and d.bodies[b].hi[k] < INFINITY):
                    bounded = False
            if bounded:
                tree.item[nbounded] = b
                nbounded += 1
            else:
                tree.unbounded[tree.nunbounded] = b
                tree.nunbounded += 1
        if N == 0:
            return
        with nogil:
            if nbounded > 0:
                _build(&tree, d.bodies, centre, 0, nbounded)
        nt = max(1, min(threads, <int> (N // MIN_RAYS_PER_THREAD)))
        for i in prange(N, nogil=True, schedule="guided", num_threads=nt):
            _cast_one(m.bodies, d.bodies, d.shapes, &tree, &origins[i, 0], &ends[i, 0],
                      &fraction[i], &shape[i], &point[i, 0], &normal[i, 0])
    finally:
        free(centre)
        free(tree.box)
        free(tree.child)
        free(tree.first)
        free(tree.count)
        free(tree.item)
        free(tree.unbounded)
