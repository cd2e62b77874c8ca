"""Contact generation between two collision shapes: every pair of surface points closer than
`margin` (the summed boundary layers plus the step's sweep), as a contact manifold.

    collide(A, B, margin) => contacts (pa on A, pb on B, normal from B to A, distance)

Manifolds keep the support of the contact patch (all corners of a face resting on a face), so
stacks stand. Plane pairs and sphere pairs are closed form; general convex pairs use GJK / EPA
for the normal and clip the two supporting features against each other; triangle meshes and
heightfields are collided triangle by triangle with face / edge / vertex features (section
"triangle meshes" below). Shapes of A must be convex, or a mesh moving against a plane, a mesh
or a heightfield; the caller orders each pair so that B is the plane / static mesh /
heightfield when there is one. Returns the number of contacts (at most max_out).
"""
cimport numpy as cnp
from libc.math cimport fabs, sqrt, cos, sin

from sim_node.engine.bvh cimport box_transform, bvh_query_aabb_from, BVHTree
from sim_node.engine.cluster cimport cluster_contacts
from sim_node.engine.geometry cimport (ConvexC, DistanceResult, MeshC, SHAPE_SPHERE, SHAPE_BOX,
                                       SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_PLANE, SHAPE_CONVEX,
                                       SHAPE_MESH, SHAPE_HEIGHTFIELD, SHAPE_TRIANGLE)
from sim_node.engine.gjk cimport convex_distance, DISTANCE_BEYOND
from sim_node.engine.heightfield cimport Heightfield, heightfield_cells_from
from sim_node.engine.types cimport ShapeC
from sim_node.engine.spatial cimport cross3, dot3, mat3_vec, mat3T_vec, tangent_basis

cnp.import_array()

# rim points per cylinder cap in plane contacts (an inscribed regular polygon)
cdef enum:
    CYL_RIM = 8


cdef inline int _emit(RawContact* out, int n, int max_out, const double* pa,
                      const double* normal, double distance) noexcept nogil:
    # add the contact whose point on A is pa; the point on B is pa - distance * normal
    cdef int k
    if n >= max_out:
        return n
    for k in range(3):
        out[n].pa[k] = pa[k]
        out[n].pb[k] = pa[k] - distance * normal[k]
        out[n].normal[k] = normal[k]
    out[n].distance = distance
    return n + 1


cdef inline void _axis(const ShapeC* s, int k, double* out) noexcept nogil:
    # world direction of the shape's axis k
    out[0] = s.R[k]
    out[1] = s.R[3 + k]
    out[2] = s.R[6 + k]


cdef int _against_plane(const ShapeC* a, const ShapeC* plane, double margin, RawContact* out,
                        int max_out) noexcept nogil:
    # every feature point of A within `margin` of the plane z = 0 of B's frame
    cdef double n[3]
    cdef double x[3]
    cdef double e[3]
    cdef double ax[3]
    cdef double u[3]
    cdef double w[3]
    cdef double h, r, d, along, norm, angle
    cdef int cnt = 0, i, j, k, cap
    cdef double sx, sy, sz
    _axis(plane, 2, n)
    cdef double offset = dot3(n, plane.p)
    if a.type == SHAPE_SPHERE:
        r = a.size[0]
        for k in range(3):
            x[k] = a.p[k] - r * n[k]
        d = dot3(n, x) - offset
        if d <= margin:
            cnt = _emit(out, cnt, max_out, x, n, d)
    elif a.type == SHAPE_BOX:
        for i in range(8):
            sx = a.size[0] if i & 1 else -a.size[0]
            sy = a.size[1] if i & 2 else -a.size[1]
            sz = a.size[2] if i & 4 else -a.size[2]
            for k in range(3):
                x[k] = a.p[k] + a.R[3 * k] * sx + a.R[3 * k + 1] * sy + a.R[3 * k + 2] * sz
            d = dot3(n, x) - offset
            if d <= margin:
                cnt = _emit(out, cnt, max_out, x, n, d)
    elif a.type == SHAPE_CAPSULE:
        _axis(a, 2, ax)
        r = a.size[0]
        h = a.size[1]
        for i in range(2):
            for k in range(3):
                x[k] = a.p[k] + (h if i == 0 else -h) * ax[k] - r * n[k]
            d = dot3(n, x) - offset
            if d <= margin:
                cnt = _emit(out, cnt, max_out, x, n, d)
    elif a.type == SHAPE_CYLINDER:
        # rim points of both caps, starting at each cap's support point towards the plane
        _axis(a, 2, ax)
        r = a.size[0]
        h = a.size[1]
        along = dot3(n, ax)
        for k in range(3):
            u[k] = -(n[k] - along * ax[k])
        norm = sqrt(dot3(u, u))
        if norm < 1e-9:          # axis along the normal: any radial direction
            _axis(a, 0, u)
        else:
            for k in range(3):
                u[k] /= norm
        cross3(ax, u, w)
        for cap in range(2):
            for j in range(CYL_RIM):
                angle = 2.0 * 3.141592653589793 * j / CYL_RIM
                for k in range(3):
                    x[k] = (a.p[k] + (h if cap == 0 else -h) * ax[k]
                            + r * (cos(angle) * u[k] + sin(angle) * w[k]))
                d = dot3(n, x) - offset
                if d <= margin:
                    cnt = _emit(out, cnt, max_out, x, n, d)
    elif a.type == SHAPE_CONVEX or a.type == SHAPE_MESH:
        for i in range(a.mesh.nvert):
            mat3_vec(a.R, &a.mesh.verts[3 * i], x)
            for k in range(3):
                x[k] += a.p[k]
            d = dot3(n, x) - offset
            if d <= margin:
                cnt = _emit(out, cnt, max_out, x, n, d)
    return cnt


cdef int _sphere_sphere(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                        int max_out) noexcept nogil:
    cdef double n[3]
    cdef double x[3]
    cdef double dist, d
    cdef int k
    for k in range(3):
        n[k] = a.p[k] - b.p[k]
    dist = sqrt(dot3(n, n))
    if dist < 1e-12:                 # concentric: any direction separates
        n[0] = 0.0
        n[1] = 0.0
        n[2] = 1.0
    else:
        for k in range(3):
            n[k] /= dist
    d = dist - a.size[0] - b.size[0]
    if d > margin:
        return 0
    for k in range(3):
        x[k] = a.p[k] - a.size[0] * n[k]
    return _emit(out, 0, max_out, x, n, d)


cdef int _sphere_box(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                     int max_out) noexcept nogil:
    # sphere A against box B: closest box point by clamping in the box frame
    cdef double c[3]
    cdef double q[3]
    cdef double t[3]
    cdef double n[3]
    cdef double x[3]
    cdef double dist, d, best
    cdef int k, axis_best = 0
    cdef bint inside = True
    for k in range(3):
        t[k] = a.p[k] - b.p[k]
    # sphere centre in box coordinates
    c[0] = b.R[0] * t[0] + b.R[3] * t[1] + b.R[6] * t[2]
    c[1] = b.R[1] * t[0] + b.R[4] * t[1] + b.R[7] * t[2]
    c[2] = b.R[2] * t[0] + b.R[5] * t[1] + b.R[8] * t[2]
    for k in range(3):
        q[k] = c[k]
        if q[k] > b.size[k]:
            q[k] = b.size[k]
            inside = False
        elif q[k] < -b.size[k]:
            q[k] = -b.size[k]
            inside = False
    if inside:
        # centre inside the box: leave through the nearest face
        best = 1e300
        for k in range(3):
            if b.size[k] - fabs(c[k]) < best:
                best = b.size[k] - fabs(c[k])
                axis_best = k
        for k in range(3):
            t[k] = 0.0
        t[axis_best] = 1.0 if c[axis_best] >= 0.0 else -1.0
        q[axis_best] = b.size[axis_best] * t[axis_best]
        mat3_vec(b.R, t, n)
        d = -best - a.size[0]
    else:
        for k in range(3):
            t[k] = c[k] - q[k]
        dist = sqrt(dot3(t, t))
        for k in range(3):
            t[k] /= dist
        mat3_vec(b.R, t, n)
        d = dist - a.size[0]
    if d > margin:
        return 0
    for k in range(3):
        x[k] = a.p[k] - a.size[0] * n[k]
    return _emit(out, 0, max_out, x, n, d)



# --- general convex pairs: GJK normal + clipped supporting features --------------------------

cdef enum:
    MAX_FEATURE = 32      # points of one supporting feature
    MAX_CLIP = 80         # points of a clipped polygon
    MAX_TRIS = 512        # triangles of a mesh tested against one shape per call


cdef void convex_of(const ShapeC* s, ConvexC* c) noexcept nogil:
    cdef int k
    c.type = s.type
    for k in range(3):
        c.size[k] = s.size[k]
        c.p[k] = s.p[k]
    for k in range(9):
        c.R[k] = s.R[k]
    c.mesh = s.mesh


cdef inline void _world_point(const ConvexC* c, double x, double y, double z, double* out) noexcept nogil:
    cdef int k
    for k in range(3):
        out[k] = c.p[k] + c.R[3 * k] * x + c.R[3 * k + 1] * y + c.R[3 * k + 2] * z


cdef int _feature(const ConvexC* c, const double* d, double* pts, double* plane_n) noexcept nogil:
    # The supporting feature of c in the world direction d: k points (world) written to pts;
    # for polygons (k >= 3) plane_n receives their outward plane normal. Returns k.
    cdef double dl[3]
    cdef double ax[3]
    cdef double u[3]
    cdef double w[3]
    cdef double x[3]
    cdef double best, val, along, norm, angle, h, r
    cdef int k, i, j, f, bf, axis_k, cnt
    cdef double sgn
    cdef const MeshC* m
    # d in the shape frame
    mat3T_vec(c.R, d, dl)
    if c.type == SHAPE_SPHERE:
        norm = sqrt(dot3(d, d))
        for k in range(3):
            pts[k] = c.p[k] + c.size[0] * d[k] / norm
        return 1
    if c.type == SHAPE_BOX:
        axis_k = 0
        best = -1.0
        for k in range(3):
            if fabs(dl[k]) > best:
                best = fabs(dl[k])
                axis_k = k
        sgn = 1.0 if dl[axis_k] > 0 else -1.0
        i = (axis_k + 1) % 3
        j = (axis_k + 2) % 3
        # counter-clockwise seen from outside along sgn * e_axis
        cnt = 0
        for f in range(4):
            x[axis_k] = sgn * c.size[axis_k]
            x[i] = c.size[i] * (1.0 if f == 0 or f == 1 else -1.0)
            x[j] = c.size[j] * (1.0 if f == 1 or f == 2 else -1.0) * sgn
            _world_point(c, x[0], x[1], x[2], &pts[3 * cnt])
            cnt += 1
        for k in range(3):
            plane_n[k] = sgn * c.R[3 * k + axis_k]
        return 4
    if c.type == SHAPE_CAPSULE or c.type == SHAPE_CYLINDER:
        for k in range(3):
            ax[k] = c.R[3 * k + 2]
        r = c.size[0]
        h = c.size[1]
        norm = sqrt(dot3(d, d))
        along = dot3(ax, d) / norm
        # radial unit direction towards d
        for k in range(3):
            u[k] = d[k] / norm - along * ax[k]
        norm = sqrt(dot3(u, u))
        if c.type == SHAPE_CAPSULE:
            if fabs(along) < 0.1:          # axis across d: the segment of support points
                for k in range(3):
                    u[k] /= norm
                    pts[k] = c.p[k] + h * ax[k] + r * u[k]
                    pts[3 + k] = c.p[k] - h * ax[k] + r * u[k]
                return 2
            sgn = 1.0 if along > 0 else -1.0
            norm = sqrt(dot3(d, d))
            for k in range(3):
                pts[k] = c.p[k] + sgn * h * ax[k] + r * d[k] / norm
            return 1
        if fabs(along) > 0.995:            # a cap faces d: its rim, as an inscribed polygon
            sgn = 1.0 if along > 0 else -1.0
            for k in range(3):
                u[k] = c.R[3 * k]
            cross3(ax, u, w)
            for i in range(CYL_RIM):
                angle = 2.0 * 3.141592653589793 * i / CYL_RIM * sgn
                for k in range(3):
                    pts[3 * i + k] = (c.p[k] + sgn * h * ax[k]
                                      + r * (cos(angle) * u[k] + sin(angle) * w[k]))
            for k in range(3):
                plane_n[k] = sgn * ax[k]
            return CYL_RIM
        for k in range(3):
            u[k] /= norm
        if fabs(along) < 0.1:              # side line
            for k in range(3):
                pts[k] = c.p[k] + h * ax[k] + r * u[k]
                pts[3 + k] = c.p[k] - h * ax[k] + r * u[k]
            return 2
        sgn = 1.0 if along > 0 else -1.0
        for k in range(3):
            pts[k] = c.p[k] + sgn * h * ax[k] + r * u[k]
        return 1
    if c.type == SHAPE_CONVEX:
        m = c.mesh
        bf = 0
        best = -1e300
        for f in range(m.nface):
            val = dot3(&m.face_normals[3 * f], dl)
            if val > best:
                best = val
                bf = f
        cnt = 0
        for i in range(m.face_start[bf], m.face_start[bf + 1]):
            if cnt == MAX_FEATURE:
                break
            j = m.face_verts[i]
            _world_point(c, m.verts[3 * j], m.verts[3 * j + 1], m.verts[3 * j + 2], &pts[3 * cnt])
            cnt += 1
        mat3_vec(c.R, &m.face_normals[3 * bf], plane_n)
        return cnt
    # TRIANGLE: the whole face when it faces d, else its supporting edge or vertex
    for k in range(3):
        u[k] = c.tri[3 + k] - c.tri[k]
        w[k] = c.tri[6 + k] - c.tri[k]
    cross3(u, w, x)
    norm = sqrt(dot3(x, x))
    val = dot3(x, d) / (norm * sqrt(dot3(d, d)))
    if fabs(val) > 0.5:
        for k in range(9):
            pts[k] = c.tri[k]
        for k in range(3):
            plane_n[k] = x[k] / norm
        return 3
    # the two vertices furthest along d, kept when nearly level (an edge), else one
    i = 0
    for k in range(1, 3):
        if dot3(&c.tri[3 * k], d) > dot3(&c.tri[3 * i], d):
            i = k
    j = (i + 1) % 3
    if dot3(&c.tri[3 * ((i + 2) % 3)], d) > dot3(&c.tri[3 * j], d):
        j = (i + 2) % 3
    for k in range(3):
        pts[k] = c.tri[3 * i + k]
    norm = sqrt(dot3(d, d))
    if dot3(&c.tri[3 * i], d) - dot3(&c.tri[3 * j], d) < 1e-3 * norm * sqrt(dot3(u, u) + dot3(w, w)):
        for k in range(3):
            pts[3 + k] = c.tri[3 * j + k]
        return 2
    return 1


cdef inline double _lift(const double* pts, int n, const double* plane_n, const double* n_c,
                         const double* t1, const double* t2, double u, double v) noexcept nogil:
    # depth coordinate (along n_c) of the feature at 2-D position (u, v)
    cdef double a, b, cn, num, s, du, dv, len2
    cdef double x0[3]
    cdef int k
    if n >= 3:
        # on the plane plane_n . x = plane_n . pts[0]
        cn = dot3(plane_n, n_c)
        num = dot3(plane_n, pts) - u * dot3(plane_n, t1) - v * dot3(plane_n, t2)
        return num / cn
    if n == 2:
        du = dot3(&pts[3], t1) - dot3(pts, t1)
        dv = dot3(&pts[3], t2) - dot3(pts, t2)
        len2 = du * du + dv * dv
        s = 0.0
        if len2 > 0.0:
            s = ((u - dot3(pts, t1)) * du + (v - dot3(pts, t2)) * dv) / len2
        s = min(1.0, max(0.0, s))
        return dot3(pts, n_c) + s * (dot3(&pts[3], n_c) - dot3(pts, n_c))
    return dot3(pts, n_c)


cdef int _clip_polygon(double* poly, int n, const double* clip, int m, double slack,
                       double* out) noexcept nogil:
    # Sutherland-Hodgman: the convex 2-D polygon poly (n points, u v pairs; n = 1: a point)
    # intersected with the counter-clockwise convex polygon clip (m points) grown by `slack` [m]
    # on every side; result in out (<= MAX_CLIP points)
    cdef double buf[2 * MAX_CLIP]
    cdef double* src = poly
    cdef double* dst
    cdef int e, i, cnt, ns
    cdef double ex, ey, nx, ny, ox, oy, da, db, t, ax, ay, bx, by, grow
    ns = n
    for e in range(m):
        ox = clip[2 * e]
        oy = clip[2 * e + 1]
        ex = clip[2 * ((e + 1) % m)] - ox
        ey = clip[2 * ((e + 1) % m) + 1] - oy
        grow = slack * sqrt(ex * ex + ey * ey) if slack > 0.0 else 0.0
        # inside: left of the edge moved out by slack (cross >= -slack |e|)
        if e % 2 == 0:
            dst = buf
        else:
            dst = out
        cnt = 0
        for i in range(ns):
            ax = src[2 * i]
            ay = src[2 * i + 1]
            bx = src[2 * ((i + 1) % ns)]
            by = src[2 * ((i + 1) % ns) + 1]
            da = ex * (ay - oy) - ey * (ax - ox) + grow
            db = ex * (by - oy) - ey * (bx - ox) + grow
            if da >= 0.0:
                if cnt < MAX_CLIP:
                    dst[2 * cnt] = ax
                    dst[2 * cnt + 1] = ay
                    cnt += 1
            if (da >= 0.0) != (db >= 0.0):
                t = da / (da - db)
                if cnt < MAX_CLIP:
                    dst[2 * cnt] = ax + t * (bx - ax)
                    dst[2 * cnt + 1] = ay + t * (by - ay)
                    cnt += 1
        src = dst
        ns = cnt
        if ns == 0:
            return 0
    if src != out:
        for i in range(2 * ns):
            out[i] = src[i]
    return ns


cdef int _clip_segment(double* seg, const double* clip, int m, double slack,
                       double* out) noexcept nogil:
    # the 2-D segment seg (2 points) inside the counter-clockwise convex polygon clip grown by
    # `slack` [m] on every side
    cdef double t0 = 0.0, t1 = 1.0, da, db, t, ox, oy, ex, ey, grow
    cdef int e
    for e in range(m):
        ox = clip[2 * e]
        oy = clip[2 * e + 1]
        ex = clip[2 * ((e + 1) % m)] - ox
        ey = clip[2 * ((e + 1) % m) + 1] - oy
        grow = slack * sqrt(ex * ex + ey * ey) if slack > 0.0 else 0.0
        da = ex * (seg[1] - oy) - ey * (seg[0] - ox) + grow
        db = ex * (seg[3] - oy) - ey * (seg[2] - ox) + grow
        if da < 0.0 and db < 0.0:
            return 0
        if da < 0.0:
            t0 = max(t0, da / (da - db))
        elif db < 0.0:
            t1 = min(t1, da / (da - db))
    if t0 > t1:
        return 0
    out[0] = seg[0] + t0 * (seg[2] - seg[0])
    out[1] = seg[1] + t0 * (seg[3] - seg[1])
    out[2] = seg[0] + t1 * (seg[2] - seg[0])
    out[3] = seg[1] + t1 * (seg[3] - seg[1])
    return 2


cdef inline void _make_ccw(double* poly, int n) noexcept nogil:
    cdef double area = 0.0, t
    cdef int i
    for i in range(n):
        area += poly[2 * i] * poly[2 * ((i + 1) % n) + 1] - poly[2 * ((i + 1) % n)] * poly[2 * i + 1]
    if area < 0.0:
        for i in range(n // 2):
            t = poly[2 * i]
            poly[2 * i] = poly[2 * (n - 1 - i)]
            poly[2 * (n - 1 - i)] = t
            t = poly[2 * i + 1]
            poly[2 * i + 1] = poly[2 * (n - 1 - i) + 1]
            poly[2 * (n - 1 - i) + 1] = t


cdef int _manifold(const ConvexC* A, const ConvexC* B, const double* normal, const DistanceResult* res,
                   double margin, RawContact* out, int max_out) noexcept nogil:
    # contacts between A and B given the separating normal (from B to A): the overlap of their
    # supporting features in the plane across the normal, each point with its own separation
    cdef double fa[3 * MAX_FEATURE]
    cdef double fb[3 * MAX_FEATURE]
    cdef double pa2[2 * MAX_CLIP]
    cdef double pb2[2 * MAX_CLIP]
    cdef double res2[2 * MAX_CLIP]
    cdef double na[3]
    cdef double nb[3]
    cdef double neg[3]
    cdef double t1[3]
    cdef double t2[3]
    cdef double x[3]
    cdef double wa, wb, sep, cr, lx, ly, mx, my, ax_, ay_, bx_, by_
    cdef int ka, kb, k, i, cnt = 0, nres
    for k in range(3):
        neg[k] = -normal[k]
    ka = _feature(A, neg, fa, na)
    kb = _feature(B, normal, fb, nb)
    if ka == 1 or kb == 1:
        return 0
    tangent_basis(normal, t1, t2)
    for i in range(ka):
        pa2[2 * i] = dot3(&fa[3 * i], t1)
        pa2[2 * i + 1] = dot3(&fa[3 * i], t2)
    for i in range(kb):
        pb2[2 * i] = dot3(&fb[3 * i], t1)
        pb2[2 * i + 1] = dot3(&fb[3 * i], t2)
    if ka >= 3 and kb >= 3:
        _make_ccw(pb2, kb)
        nres = _clip_polygon(pa2, ka, pb2, kb, 0.0, res2)
    elif ka == 2 and kb >= 3:
        _make_ccw(pb2, kb)
        nres = _clip_segment(pa2, pb2, kb, 0.0, res2)
    elif kb == 2 and ka >= 3:
        _make_ccw(pa2, ka)
        nres = _clip_segment(pb2, pa2, ka, 0.0, res2)
    else:
        # two segments: their overlap when parallel (else the single closest pair suffices)
        lx = pa2[2] - pa2[0]
        ly = pa2[3] - pa2[1]
        mx = pb2[2] - pb2[0]
        my = pb2[3] - pb2[1]
        cr = lx * my - ly * mx
        if fabs(cr) > 1e-3 * sqrt((lx * lx + ly * ly) * (mx * mx + my * my)):
            return 0
        # clip A's segment to the slab of B's segment along its direction
        ax_ = (pb2[0] - pa2[0]) * lx + (pb2[1] - pa2[1]) * ly
        bx_ = (pb2[2] - pa2[0]) * lx + (pb2[3] - pa2[1]) * ly
        ay_ = lx * lx + ly * ly
        if ay_ <= 0.0:
            return 0
        ax_, bx_ = min(ax_, bx_) / ay_, max(ax_, bx_) / ay_
        ax_ = max(ax_, 0.0)
        bx_ = min(bx_, 1.0)
        if ax_ > bx_:
            return 0
        res2[0] = pa2[0] + ax_ * lx
        res2[1] = pa2[1] + ax_ * ly
        res2[2] = pa2[0] + bx_ * lx
        res2[3] = pa2[1] + bx_ * ly
        nres = 2
    for i in range(nres):
        wa = _lift(fa, ka, na, normal, t1, t2, res2[2 * i], res2[2 * i + 1])
        wb = _lift(fb, kb, nb, normal, t1, t2, res2[2 * i], res2[2 * i + 1])
        sep = wa - wb
        if sep > margin:
            continue
        for k in range(3):
            x[k] = res2[2 * i] * t1[k] + res2[2 * i + 1] * t2[k] + wa * normal[k]
        cnt = _emit(out, cnt, max_out, x, normal, sep)
    return cnt


cdef int _convex_pair(const ConvexC* A, const ConvexC* B, double margin, RawContact* out,
                      int max_out) noexcept nogil:
    # convex A against convex B: the GJK / EPA closest pair and the clipped features
    cdef DistanceResult res
    cdef int status, cnt
    status = convex_distance(A, B, margin, &res)
    if status == DISTANCE_BEYOND or res.distance > margin:
        return 0
    cnt = _manifold(A, B, res.normal, &res, margin, out, max_out)
    if cnt == 0:
        cnt = _emit(out, 0, max_out, res.pa, res.normal, res.distance)
    return cnt


# --- triangle meshes and heightfields --------------------------------------------------------
#
# A body (convex A) meets a mesh triangle by triangle. Per triangle, in this order:
#   1. the face: A's supporting feature towards the triangle's plane, clipped to the triangle
#      (grown by CLIP_SLACK, so that a point on an edge shared by two triangles belongs to both
#      and never to neither), each point with its own separation along the face normal. Points
#      on flat edges and vertices of the mesh that are not corners of A's feature are dropped:
#      they lie inside a patch that the neighbouring triangles continue (a box on a fine grid
#      would bring thousands of them, and the patch's corners are what holds it up);
#   2. where A's feature is not over the face, the closest pair (GJK), when it lies on a feature
#      that carries contacts of its own: an edge that is convex seen from A's side (the
#      neighbour bends away), a boundary or non-manifold edge, or a vertex at such an edge.
#      Closest pairs on flat or concave edges and vertices are dropped: the faces around them
#      carry the contact (1), with their exact normals; their own normals would be artefacts
#      of the triangulation (a box sliding across a flat floor would bump on its edges).
# One point reported by two triangles (a sphere resting on a shared edge or vertex) is kept
# once. Mesh triangles are two-sided shells, the side being the one A is on (GJK), so winding
# does not matter; heightfield triangles are one-sided (solid below: the counter-clockwise
# normal, whatever side A is on). Large bodies on fine meshes take their triangles in chunks
# of MAX_TRIS, and a full contact buffer is reduced to the contacts that keep the patch's
# support, so no resolution loses the far side of a patch.

cdef enum:
    TRI_FLAT_EDGE = 1          # MeshC.tri_flags bit k: edge k flat
    TRI_FLAT_VERTEX = 8        # bit 3 + k: vertex k flat
    TRI_DEGENERATE = 64        # no reliable normal
    RAW_LIMIT = 256            # most contacts one mesh pair holds before clustering
    RAW_SPARE = MAX_CLIP + 8   # free slots needed for one more triangle's contacts
    RAW_KEEP = 64              # contacts kept when a full buffer is reduced

cdef double CLIP_SLACK = 1e-9     # [m] triangles grow by this when A's feature is clipped to them
cdef double FEATURE_TOL = 1e-8    # [m] a contact this close to a triangle's vertex / edge is on it
cdef double BARY_TOL = 1e-9       # barycentric coordinate below which a closest point is on an edge
cdef double SAME_POINT = 1e-7     # [m] contacts of two triangles this close, with the same
cdef double SAME_NORMAL = 1e-6    # normal (to this much), are one contact on their shared feature


ctypedef struct MeshTriangle:
    # One triangle of a MESH or HEIGHTFIELD placed in the world, and its neighbourhood.
    ConvexC convex            # type TRIANGLE: convex.tri holds the vertices (world)
    double opposite[9]        # the neighbour's vertex across edge k (world), where has_opposite
    bint has_opposite[3]      # False: edge k is a boundary or non-manifold edge
    unsigned char flags       # MeshC.tri_flags of the triangle (0 when the mesh has none)
    bint one_sided            # HEIGHTFIELD: solid below, the counter-clockwise normal is outside


cdef void _init_triangle(MeshTriangle* T, bint one_sided) noexcept nogil:
    cdef int k
    T.convex.type = SHAPE_TRIANGLE
    T.convex.mesh = NULL
    for k in range(9):
        T.convex.R[k] = 1.0 if k % 4 == 0 else 0.0
    for k in range(3):
        T.convex.p[k] = 0.0
        T.convex.size[k] = 0.0
    T.one_sided = one_sided


cdef void _load_triangle(const ShapeC* b, int t, MeshTriangle* T) noexcept nogil:
    # triangle t of b's mesh, placed in the world
    cdef const MeshC* m = b.mesh
    cdef int v, k, o
    for v in range(3):
        mat3_vec(b.R, &m.verts[3 * m.tris[3 * t + v]], &T.convex.tri[3 * v])
        for k in range(3):
            T.convex.tri[3 * v + k] += b.p[k]
    T.flags = m.tri_flags[t] if m.tri_flags != NULL else 0
    for v in range(3):
        o = m.tri_adjacent[3 * t + v] if m.tri_adjacent != NULL else -1
        T.has_opposite[v] = o >= 0
        if o >= 0:
            mat3_vec(b.R, &m.verts[3 * o], &T.opposite[3 * v])
            for k in range(3):
                T.opposite[3 * v + k] += b.p[k]


cdef bint _edge_active(const MeshTriangle* T, int k, const double* normal) noexcept nogil:
    # edge k carries contacts of its own, seen from the side the face normal `normal` points
    # to: a boundary or non-manifold edge, or a convex one (the neighbour's far vertex lies
    # behind the plane). Flat and concave edges are covered by the faces beside them.
    cdef double rel[3]
    cdef int i
    if T.flags & (TRI_FLAT_EDGE << k):
        return False
    if not T.has_opposite[k]:
        return True
    for i in range(3):
        rel[i] = T.opposite[3 * k + i] - T.convex.tri[3 * k + i]
    return dot3(normal, rel) < 0.0


cdef bint _vertex_active(const MeshTriangle* T, int k, const double* normal) noexcept nogil:
    # vertex k carries contacts of its own when one of the triangle's edges at it does (a
    # vertex of this triangle's that no edge of its own makes active may still be active for
    # another triangle around it, which then reports the same closest point)
    if T.flags & (TRI_FLAT_VERTEX << k):
        return False
    return _edge_active(T, k, normal) or _edge_active(T, (k + 2) % 3, normal)


cdef bint _inside_patch(const MeshTriangle* T, const double* tri2, const double* feat2, int nfeat,
                        double u, double v) noexcept nogil:
    # the clipped point (u, v) is not a corner of A's feature (feat2, nfeat points) and lies
    # on a flat vertex or flat edge of the triangle (tri2: its vertices in the same 2-D frame,
    # in vertex order): a point inside the patch that the neighbours continue
    cdef double ex, ey, length
    cdef int i, k
    for i in range(nfeat):
        if fabs(u - feat2[2 * i]) <= FEATURE_TOL and fabs(v - feat2[2 * i + 1]) <= FEATURE_TOL:
            return False
    for k in range(3):
        if fabs(u - tri2[2 * k]) <= FEATURE_TOL and fabs(v - tri2[2 * k + 1]) <= FEATURE_TOL:
            return (T.flags & (TRI_FLAT_VERTEX << k)) != 0
    for k in range(3):
        if T.flags & (TRI_FLAT_EDGE << k):
            ex = tri2[2 * ((k + 1) % 3)] - tri2[2 * k]
            ey = tri2[2 * ((k + 1) % 3) + 1] - tri2[2 * k + 1]
            length = sqrt(ex * ex + ey * ey)
            # (u, v) is in the triangle: on the line of edge k means on the edge
            if fabs(ex * (v - tri2[2 * k + 1]) - ey * (u - tri2[2 * k])) <= FEATURE_TOL * length:
                return True
    return False


cdef int _face_contacts(const ConvexC* A, const MeshTriangle* T, const double* normal,
                        double margin, RawContact* out, int max_out, bint* covered) noexcept nogil:
    # step 1 (section comment): A's supporting feature against the face whose unit normal on
    # A's side is `normal`. covered: some of the feature lies over the face within the margin
    # (then this triangle's contacts are complete, even when all of them were interior).
    cdef double fa[3 * MAX_FEATURE]
    cdef double feat2[2 * MAX_FEATURE]
    cdef double tri2[6]
    cdef double clip2[6]
    cdef double res2[2 * MAX_CLIP]
    cdef double na[3]
    cdef double neg[3]
    cdef double t1[3]
    cdef double t2[3]
    cdef double x[3]
    cdef double plane, wa, sep
    cdef int ka, i, k, nres, cnt = 0
    covered[0] = False
    for k in range(3):
        neg[k] = -normal[k]
    ka = _feature(A, neg, fa, na)
    tangent_basis(normal, t1, t2)
    for i in range(ka):
        feat2[2 * i] = dot3(&fa[3 * i], t1)
        feat2[2 * i + 1] = dot3(&fa[3 * i], t2)
    for i in range(3):
        tri2[2 * i] = clip2[2 * i] = dot3(&T.convex.tri[3 * i], t1)
        tri2[2 * i + 1] = clip2[2 * i + 1] = dot3(&T.convex.tri[3 * i], t2)
    _make_ccw(clip2, 3)
    if ka == 2:
        nres = _clip_segment(feat2, clip2, 3, CLIP_SLACK, res2)
    else:
        nres = _clip_polygon(feat2, ka, clip2, 3, CLIP_SLACK, res2)
    plane = dot3(normal, T.convex.tri)
    for i in range(nres):
        wa = _lift(fa, ka, na, normal, t1, t2, res2[2 * i], res2[2 * i + 1])
        sep = wa - plane
        if sep > margin:
            continue
        covered[0] = True
        if ka > 1 and _inside_patch(T, tri2, feat2, ka, res2[2 * i], res2[2 * i + 1]):
            continue
        for k in range(3):
            x[k] = res2[2 * i] * t1[k] + res2[2 * i + 1] * t2[k] + wa * normal[k]
        cnt = _emit(out, cnt, max_out, x, normal, sep)
    return cnt


cdef int _against_triangle(const ConvexC* A, const MeshTriangle* T, double margin,
                           RawContact* out, int max_out) noexcept nogil:
    # convex A against one mesh triangle: the section comment's steps 1 and 2
    cdef DistanceResult res
    cdef double e1[3]
    cdef double e2[3]
    cdef double m[3]
    cdef double rel[3]
    cdef double bary[3]
    cdef double d00, d01, d11, d20, d21, den, norm
    cdef int status, cnt, k, low, nlow
    cdef bint covered, active
    cdef bint have_pair = False
    if T.flags & TRI_DEGENERATE:
        return 0
    for k in range(3):
        e1[k] = T.convex.tri[3 + k] - T.convex.tri[k]
        e2[k] = T.convex.tri[6 + k] - T.convex.tri[k]
    cross3(e1, e2, m)
    norm = sqrt(dot3(m, m))
    if norm <= 0.0:
        return 0
    if not T.one_sided:
        # a shell: the face normal on A's side, from the closest pair
        status = convex_distance(A, &T.convex, margin, &res)
        if status == DISTANCE_BEYOND or res.distance > margin:
            return 0
        have_pair = True
        if dot3(m, res.normal) < 0.0:
            norm = -norm
    for k in range(3):
        m[k] /= norm
    cnt = _face_contacts(A, T, m, margin, out, max_out, &covered)
    if covered:
        return cnt
    if not have_pair:
        status = convex_distance(A, &T.convex, margin, &res)
        if status == DISTANCE_BEYOND or res.distance > margin:
            return 0
        if dot3(m, res.normal) < 0.0:
            # under a one-sided face and not over it: the triangles A is over carry the contact
            return 0
    # barycentric coordinates of the closest point on the triangle
    for k in range(3):
        rel[k] = res.pb[k] - T.convex.tri[k]
    d00 = dot3(e1, e1)
    d01 = dot3(e1, e2)
    d11 = dot3(e2, e2)
    d20 = dot3(rel, e1)
    d21 = dot3(rel, e2)
    den = d00 * d11 - d01 * d01
    bary[1] = (d11 * d20 - d01 * d21) / den
    bary[2] = (d00 * d21 - d01 * d20) / den
    bary[0] = 1.0 - bary[1] - bary[2]
    nlow = 0
    low = 0
    for k in range(3):
        if bary[k] <= BARY_TOL:
            nlow += 1
            low = k
    if nlow == 0:
        # over the face after all (A's feature missed it only by rounding)
        return _emit(out, 0, max_out, res.pa, m, dot3(m, res.pa) - dot3(m, res.pb))
    if nlow == 1:
        # on edge (low + 1, low + 2): the edge opposite vertex `low`
        active = _edge_active(T, (low + 1) % 3, m)
    else:
        # at the vertex whose coordinate is not ~0
        for k in range(3):
            if bary[k] > BARY_TOL:
                low = k
        active = _vertex_active(T, low, m)
    if not active:
        return 0
    cnt = _manifold(A, &T.convex, res.normal, &res, margin, out, max_out)
    if cnt == 0:
        cnt = _emit(out, 0, max_out, res.pa, res.normal, res.distance)
    return cnt


cdef void _box_in_frame(const double* lo, const double* hi, double margin, const double* R,
                        const double* p, double* local) noexcept nogil:
    # the world box [lo, hi] grown by margin, as an AABB in the frame (R, p) (world = R x + p)
    cdef double box[6]
    cdef double Rt[9]
    cdef double pt[3]
    cdef int i, k
    for k in range(3):
        box[k] = lo[k] - margin
        box[3 + k] = hi[k] + margin
    for i in range(3):
        for k in range(3):
            Rt[3 * i + k] = R[3 * k + i]
    mat3T_vec(R, p, pt)
    for k in range(3):
        pt[k] = -pt[k]
    box_transform(box, Rt, pt, local)


cdef inline int _mesh_query(const ShapeC* b, const double* local, int skip,
                            int* tris) noexcept nogil:
    # triangles of mesh / heightfield b whose boxes (prisms) meet the box `local` (b's frame),
    # ranks skip .. skip + MAX_TRIS - 1 into tris; returns the total
    if b.type == SHAPE_HEIGHTFIELD:
        return heightfield_cells_from(b.mesh, local, &local[3], skip, tris, MAX_TRIS)
    return bvh_query_aabb_from(&b.mesh.bvh, local, &local[3], skip, tris, MAX_TRIS)


cdef int _append_unique(RawContact* out, int first, int n) noexcept nogil:
    # out[first : first + n], one triangle's contacts, after out[0 : first] from the triangles
    # before it: a point an earlier triangle reported already with the same normal (on an
    # edge or vertex they share) is kept once, the deeper of the two. Returns the new count.
    cdef int i, j, k, same, total = first
    cdef double dp, dn
    for i in range(first, first + n):
        same = -1
        for j in range(first):
            dp = 0.0
            dn = 0.0
            for k in range(3):
                dp += (out[i].pb[k] - out[j].pb[k]) * (out[i].pb[k] - out[j].pb[k])
                dn += (out[i].normal[k] - out[j].normal[k]) * (out[i].normal[k] - out[j].normal[k])
            if dp <= SAME_POINT * SAME_POINT and dn <= SAME_NORMAL * SAME_NORMAL:
                same = j
                break
        if same < 0:
            out[total] = out[i]
            total += 1
        elif out[i].distance < out[same].distance:
            out[same] = out[i]
    return total


cdef inline int _make_room(RawContact* out, int cnt, int max_out, double margin) noexcept nogil:
    # keep room for one more triangle's contacts: a full buffer is reduced to the RAW_KEEP
    # contacts that keep the patch's support (cluster.pyx; only exact duplicates merge). The
    # supporting band, a tenth of the margin, is the rest gap plus a tenth of the sweep: within
    # the scene's own band, so the points the scene will count as supporting go first here too.
    cdef int scratch[RAW_LIMIT]
    if max_out - cnt >= RAW_SPARE or cnt <= 1:
        return cnt
    return cluster_contacts(out, cnt, max(1, min(RAW_KEEP, max_out // 4)), 0.0, 0.1 * margin,
                            scratch)


cdef int _against_mesh(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                       int max_out) noexcept nogil:
    # convex A against the triangle mesh or heightfield B: every triangle near A's box, in
    # chunks of MAX_TRIS
    cdef ConvexC A
    cdef MeshTriangle T
    cdef double local[6]
    cdef int tris[MAX_TRIS]
    cdef int total, chunk, i, skip = 0, cnt = 0
    max_out = min(max_out, RAW_LIMIT)
    convex_of(a, &A)
    _init_triangle(&T, b.type == SHAPE_HEIGHTFIELD)
    _box_in_frame(a.lo, a.hi, margin, b.R, b.p, local)
    while True:
        total = _mesh_query(b, local, skip, tris)
        chunk = min(total - skip, MAX_TRIS)
        for i in range(chunk):
            cnt = _make_room(out, cnt, max_out, margin)
            _load_triangle(b, tris[i], &T)
            cnt = _append_unique(out, cnt, _against_triangle(&A, &T, margin, &out[cnt],
                                                             max_out - cnt))
        skip += chunk
        if chunk <= 0 or skip >= total:
            return cnt


cdef int collide(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                 int max_out) noexcept nogil:
    # (shape A, shape B, margin) => contacts, normal from B to A
    cdef ConvexC A
    cdef ConvexC B
    if b.type == SHAPE_PLANE:
        return _against_plane(a, b, margin, out, max_out)
    if a.type == SHAPE_SPHERE and b.type == SHAPE_SPHERE:
        return _sphere_sphere(a, b, margin, out, max_out)
    if a.type == SHAPE_SPHERE and b.type == SHAPE_BOX:
        return _sphere_box(a, b, margin, out, max_out)
    if b.type == SHAPE_MESH or b.type == SHAPE_HEIGHTFIELD:
        if a.type == SHAPE_MESH or a.type == SHAPE_HEIGHTFIELD or a.type == SHAPE_PLANE:
            return _mesh_mesh(a, b, margin, out, max_out)
        return _against_mesh(a, b, margin, out, max_out)
    convex_of(a, &A)
    convex_of(b, &B)
    return _convex_pair(&A, &B, margin, out, max_out)


cdef int _mesh_mesh(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                    int max_out) noexcept nogil:
    # a moving triangle mesh A against a mesh / heightfield B: every triangle of A near a
    # triangle of B near A's box, each A triangle a convex body against B's triangle
    cdef ConvexC TA
    cdef MeshTriangle TB
    cdef double local[6]
    cdef double local_a[6]
    cdef double lo[3]
    cdef double hi[3]
    cdef int tris[MAX_TRIS]
    cdef int mine[MAX_TRIS]
    cdef int total_b, chunk_b, skip_b = 0, total_a, chunk_a, skip_a
    cdef int i, j, v, k, cnt = 0
    cdef const MeshC* ma = a.mesh
    if a.type != SHAPE_MESH:
        return 0
    max_out = min(max_out, RAW_LIMIT)
    TA.type = SHAPE_TRIANGLE
    TA.mesh = NULL
    for k in range(9):
        TA.R[k] = 1.0 if k % 4 == 0 else 0.0
    for k in range(3):
        TA.p[k] = 0.0
        TA.size[k] = 0.0
    _init_triangle(&TB, b.type == SHAPE_HEIGHTFIELD)
    _box_in_frame(a.lo, a.hi, margin, b.R, b.p, local)
    while True:
        total_b = _mesh_query(b, local, skip_b, tris)
        chunk_b = min(total_b - skip_b, MAX_TRIS)
        for i in range(chunk_b):
            _load_triangle(b, tris[i], &TB)
            for k in range(3):
                lo[k] = min(TB.convex.tri[k], min(TB.convex.tri[3 + k], TB.convex.tri[6 + k]))
                hi[k] = max(TB.convex.tri[k], max(TB.convex.tri[3 + k], TB.convex.tri[6 + k]))
            _box_in_frame(lo, hi, margin, a.R, a.p, local_a)
            skip_a = 0
            while True:
                total_a = bvh_query_aabb_from(&ma.bvh, local_a, &local_a[3], skip_a, mine, MAX_TRIS)
                chunk_a = min(total_a - skip_a, MAX_TRIS)
                for j in range(chunk_a):
                    for v in range(3):
                        mat3_vec(a.R, &ma.verts[3 * ma.tris[3 * mine[j] + v]], &TA.tri[3 * v])
                        for k in range(3):
                            TA.tri[3 * v + k] += a.p[k]
                    cnt = _make_room(out, cnt, max_out, margin)
                    cnt = _append_unique(out, cnt, _against_triangle(&TA, &TB, margin, &out[cnt],
                                                                     max_out - cnt))
                skip_a += chunk_a
                if chunk_a <= 0 or skip_a >= total_a:
                    break
        skip_b += chunk_b
        if chunk_b <= 0 or skip_b >= total_b:
            return cnt


cdef void _shape_from_dict(spec, ShapeC* s):
    import numpy as np
    cdef int k
    s.type = int(spec["type"])
    size = np.zeros(3)
    size[:len(spec["size"])] = spec["size"]
    R = np.asarray(spec.get("R", np.eye(3)), dtype=float).reshape(9)
    p = np.asarray(spec.get("p", np.zeros(3)), dtype=float)
    for k in range(3):
        s.size[k] = size[k]
        s.p[k] = p[k]
        s.lo[k] = -1e30
        s.hi[k] = 1e30
    for k in range(9):
        s.R[k] = R[k]
    s.mesh = NULL


def collide_shapes(a, b, double margin, int max_out=256):
    """Contacts between two primitive shapes given as dicts {"type": code, "size": (3,),
    "R": 3x3, "p": (3,)} (geometry.pxd codes; no meshes): a list of (pa, pb, normal, distance)
    with the normal from b towards a. For tests and inspection."""
    import numpy as np
    cdef ShapeC sa
    cdef ShapeC sb
    cdef RawContact buf[256]
    cdef int n, i
    _shape_from_dict(a, &sa)
    _shape_from_dict(b, &sb)
    n = collide(&sa, &sb, margin, buf, min(max_out, 256))
    return [(np.array([buf[i].pa[0], buf[i].pa[1], buf[i].pa[2]]),
             np.array([buf[i].pb[0], buf[i].pb[1], buf[i].pb[2]]),
             np.array([buf[i].normal[0], buf[i].normal[1], buf[i].normal[2]]), buf[i].distance)
            for i in range(n)]


def collide_with_mesh(a, mesh, double margin, R=None, p=None, bint heightfield=False,
                      int max_out=256):
    """Contacts between the primitive shape `a` (a dict as for collide_shapes) and a triangle
    mesh placed at world = R x + p (R (3, 3), p (3,); identity by default), as a list of
    (pa, pb, normal, distance) with the normal from the mesh towards a. Every triangle is
    tested (no box query). mesh: a dict with verts (V, 3) [m] and tris (T, 3), and optionally
    tri_flags (T,) uint8 and tri_adjacent (T, 3) int32 (model.geometry.triangle_features;
    without them every edge counts as a boundary); heightfield=True: make_heightfield_arrays'
    dict (+ the same optional fields), collided as a one-sided HEIGHTFIELD. For tests and
    inspection."""
    import numpy as np
    from sim_node.engine.bvh import mesh_bvh
    cdef ShapeC sa
    cdef ShapeC sb
    cdef MeshC mc
    cdef Heightfield hf
    cdef BVHTree tree
    cdef RawContact buf[256]
    cdef int n, i
    cdef cnp.ndarray verts, tris, flags = None, adjacent = None
    _shape_from_dict(a, &sa)
    _shape_from_dict({"type": SHAPE_HEIGHTFIELD if heightfield else SHAPE_MESH, "size": [0.0],
                      "R": np.eye(3) if R is None else R, "p": np.zeros(3) if p is None else p},
                     &sb)
    if heightfield:
        hf = Heightfield(mesh)
        mc = hf.c
    else:
        verts = np.ascontiguousarray(mesh["verts"], dtype=np.float64).reshape(-1, 3)
        tris = np.ascontiguousarray(mesh["tris"], dtype=np.int32).reshape(-1, 3)
        tree = BVHTree(mesh_bvh(verts, tris))
        mc.nvert = verts.shape[0]
        mc.verts = <const double*> cnp.PyArray_DATA(verts)
        mc.ntri = tris.shape[0]
        mc.tris = <const int*> cnp.PyArray_DATA(tris)
        mc.bvh = tree.c
    mc.tri_flags = NULL
    mc.tri_adjacent = NULL
    if mesh.get("tri_flags") is not None:
        flags = np.ascontiguousarray(mesh["tri_flags"], dtype=np.uint8).reshape(-1)
        if flags.shape[0] != mc.ntri:
            raise ValueError(f"tri_flags: expected {mc.ntri} values, got {flags.shape[0]}")
        mc.tri_flags = <const unsigned char*> cnp.PyArray_DATA(flags)
    if mesh.get("tri_adjacent") is not None:
        adjacent = np.ascontiguousarray(mesh["tri_adjacent"], dtype=np.int32).reshape(-1)
        if adjacent.shape[0] != 3 * mc.ntri or (adjacent.shape[0] and adjacent.max() >= mc.nvert):
            raise ValueError(f"tri_adjacent: expected {3 * mc.ntri} vertex indices < {mc.nvert}")
        mc.tri_adjacent = <const int*> cnp.PyArray_DATA(adjacent)
    sb.mesh = &mc
    n = collide(&sa, &sb, margin, buf, min(max_out, 256))
    return [(np.array([buf[i].pa[0], buf[i].pa[1], buf[i].pa[2]]),
             np.array([buf[i].pb[0], buf[i].pb[1], buf[i].pb[2]]),
             np.array([buf[i].normal[0], buf[i].normal[1], buf[i].normal[2]]), buf[i].distance)
            for i in range(n)]
