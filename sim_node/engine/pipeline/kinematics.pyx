"""Kinematics stage: where every collision body and shape is, and how fast it may move.

    (q, v, free-body states) => body / shape placements, AABBs grown by padding and sweep, speeds

With dt = 0 (building, refresh) everything is placed; during a step, bodies that cannot collide
with anything (SceneData.bodies[i].collidable) and robots without such bodies are skipped."""
from libc.math cimport fabs, sqrt, INFINITY
from libc.string cimport memcpy

from sim_node.engine.geometry cimport (SHAPE_SPHERE, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER,
                                       SHAPE_PLANE, SHAPE_HEIGHTFIELD)
from sim_node.engine.kinematics cimport body_columns, body_placement, body_velocity
from sim_node.engine.spatial cimport cross3, dot3, mat3_mul, mat3_vec, quat_to_R
from sim_node.engine.types cimport (BodyC, BodyStateC, FreeBodyC, RobotC, RobotStateC, ShapeC,
                                    ShapeDefC)


cdef void kinematics(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (q, v, free states) => placements, AABBs and speed bounds of bodies and shapes
    cdef int r, i, k, j
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef const BodyC* bm
    cdef BodyStateC* b
    cdef const ShapeDefC* sd
    cdef ShapeC* s
    cdef const FreeBodyC* f
    cdef const double* state
    cdef double vJ[6]
    cdef double vo[3]
    cdef double t[3]
    cdef double w2, sp
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        rs.minv_valid = 0
        rs.factored = 0
        if dt > 0.0 and not rs.collidable and not rs.constrained:
            continue            # nothing to collide with or hold: placements only on refresh()
        for i in range(rob.model.nbody):
            body_placement(rob.model, rs.data, i, rs.q)
            body_columns(rob.model, rs.data, i)
            body_velocity(rob.model, rs.data, i, rs.v, vJ)
            b = &d.bodies[rob.first_body + i]
            memcpy(b.R, &rs.data.R[9 * i], 9 * sizeof(double))
            memcpy(b.p, &rs.data.p[3 * i], 3 * sizeof(double))
            # speed of the body origin: v_O + w x p
            cross3(&rs.data.v[6 * i + 3], b.p, vo)
            for k in range(3):
                vo[k] += rs.data.v[6 * i + k]
            w2 = dot3(&rs.data.v[6 * i + 3], &rs.data.v[6 * i + 3])
            b.speed = sqrt(dot3(vo, vo)) + sqrt(w2) * m.bodies[rob.first_body + i].extent
    for i in range(m.nfree):
        f = &m.free_bodies[i]
        state = &d.fstate[13 * i]
        b = &d.bodies[f.body]
        quat_to_R(&state[3], b.R)
        mat3_vec(b.R, f.com_B, t)
        for k in range(3):
            b.p[k] = state[k] - t[k]
        b.speed = (sqrt(dot3(&state[7], &state[7]))
                   + sqrt(dot3(&state[10], &state[10])) * (m.bodies[f.body].extent + sqrt(dot3(f.com_B, f.com_B))))
    for i in range(m.nbody):
        b = &d.bodies[i]
        bm = &m.bodies[i]
        if dt > 0.0 and not b.collidable:
            continue
        for k in range(3):
            b.lo[k] = INFINITY
            b.hi[k] = -INFINITY
        for j in range(bm.first_shape, bm.first_shape + bm.nshape):
            sd = &m.shapes[j]
            s = &d.shapes[j]
            mat3_mul(b.R, sd.R_BS, s.R)
            mat3_vec(b.R, sd.p_BS, t)
            for k in range(3):
                s.p[k] = b.p[k] + t[k]
            _shape_aabb(s)
            for k in range(3):
                b.lo[k] = min(b.lo[k], s.lo[k])
                b.hi[k] = max(b.hi[k], s.hi[k])
        sp = bm.padding + b.speed * dt
        for k in range(3):
            d.box[6 * i + k] = b.lo[k] - sp
            d.box[6 * i + 3 + k] = b.hi[k] + sp


cdef inline void _shape_aabb(ShapeC* s) noexcept nogil:
    # world AABB of a placed shape
    cdef double half[3]
    cdef double c[3]
    cdef double a
    cdef int k, j
    for k in range(3):
        c[k] = s.p[k]
    if s.type == SHAPE_SPHERE:
        for k in range(3):
            half[k] = s.size[0]
    elif s.type == SHAPE_BOX:
        for k in range(3):
            half[k] = (fabs(s.R[3 * k]) * s.size[0] + fabs(s.R[3 * k + 1]) * s.size[1]
                       + fabs(s.R[3 * k + 2]) * s.size[2])
    elif s.type == SHAPE_CAPSULE:
        for k in range(3):
            half[k] = fabs(s.R[3 * k + 2]) * s.size[1] + s.size[0]
    elif s.type == SHAPE_CYLINDER:
        for k in range(3):
            a = s.R[3 * k + 2]
            half[k] = fabs(a) * s.size[1] + s.size[0] * sqrt(max(0.0, 1.0 - a * a))
    elif s.type == SHAPE_PLANE:
        for k in range(3):
            s.lo[k] = -INFINITY
            s.hi[k] = INFINITY
        # a plane with an axis-aligned normal is bounded along that axis
        for k in range(3):
            if fabs(s.R[3 * k + 2]) == 1.0:
                if s.R[3 * k + 2] > 0:
                    s.hi[k] = s.p[k]
                else:
                    s.lo[k] = s.p[k]
        return
    else:
        # mesh-like: the shape-frame box of its vertices (the root of its BVH), rotated
        _local_box_aabb(s, half, c)
    for k in range(3):
        s.lo[k] = c[k] - half[k]
        s.hi[k] = c[k] + half[k]
    if s.type == SHAPE_HEIGHTFIELD:
        # solid below the surface: unbounded along the frame's -z
        for k in range(3):
            if s.R[3 * k + 2] > 0.0:
                s.lo[k] = -INFINITY
            elif s.R[3 * k + 2] < 0.0:
                s.hi[k] = INFINITY


cdef inline void _local_box_aabb(const ShapeC* s, double* half, double* c) noexcept nogil:
    # world AABB (centre c, half extents) of the shape-frame box [lo, hi] of a mesh's vertices
    cdef double lc[3]
    cdef double lh[3]
    cdef double wc[3]
    cdef int k
    cdef const double* b = s.mesh.bvh.bounds
    for k in range(3):
        lc[k] = 0.5 * (b[k] + b[3 + k])
        lh[k] = 0.5 * (b[3 + k] - b[k])
    mat3_vec(s.R, lc, wc)
    for k in range(3):
        c[k] = s.p[k] + wc[k]
        half[k] = (fabs(s.R[3 * k]) * lh[0] + fabs(s.R[3 * k + 1]) * lh[1]
                   + fabs(s.R[3 * k + 2]) * lh[2])
