"""User constraints (PyBullet's createConstraint): their bilateral rows, and the record of
their impulses.

    (constraints, placements at the step's start, vel0) => rows in jw, targets, warm start  [rows]
    (row impulses) => ucons_lam, the next step's warm start                               [record]

A constraint joins a frame F_a on collision body a and a frame F_b on body b (b = -1: the
world), both given in their body's frame. Its rows are velocity-level and bilateral:
    POINT2POINT  3 rows, world x, y, z: the velocity of F_a's origin (a point of a) minus that
                 of F_b's origin (a point of b);
    FIXED        those 3 and 3 angular rows along F_a's axes: w_a - w_b (bullet3's);
    PRISMATIC    2 linear rows across the slide axis (F_a's axes), and the 3 angular rows;
    GEAR         1 row on two robot joint DOFs: qdot_a + ratio qdot_b = qdot_aux (bullet3's
                 btMultiBodyGearConstraint: the aux DOF, of robot a, is read at the step's
                 start).
Each row aims at the velocity that removes the fraction `erp` of its position error this step
(Baumgarte: target = -erp error / dt; the angular errors are bullet3's: the XYZ Euler angles
of R_Fb^T R_Fa, exact at large angles; the gear's error q_a + ratio q_b - target),
its impulse is bounded by max_force dt, and it starts from the impulse of the last step (warm
start, part of the saved state). The rows are rigid: the relative compliance of
rigid contact rows would let a gear slip at a steady rate (its erp is 0 by default) and a
held weight sag; dependent rows (a planar loop closed by a ball joint) are consistent, which
Gauss-Seidel solves as they are.
"""
from libc.math cimport M_PI, asin, atan2, fabs, sqrt

from sim_node.engine.constraint cimport (UCONS_FIXED, UCONS_GEAR, UCONS_MAX_ROWS,
                                         UCONS_POINT2POINT, UCONS_PRISMATIC, UserConstraintC,
                                         UserRowC)
from sim_node.engine.pipeline.constraints cimport jacobian_rows, kinematic_velocity, reserve_jw
from sim_node.engine.pipeline.dynamics cimport robot_minv
from sim_node.engine.spatial cimport cross3, dot3, mat3_mul, mat3_vec
from sim_node.engine.types cimport (BodyC, RobotC, RobotStateC, BODY_FREE, BODY_ROBOT)
from libc.stdlib cimport realloc


cdef void user_constraint_rows(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (constraints, placements, vel0) => rows, their Jacobians in jw, targets, warm starts
    cdef int c
    cdef const UserConstraintC* uc
    d.nurow = 0
    for c in range(m.nucons):
        uc = &m.ucons[c]
        if not uc.max_force > 0.0:
            continue            # bullet3: a constraint without force makes no rows
        if uc.kind == UCONS_GEAR:
            _gear_row(m, d, c, uc, dt)
        else:
            _frame_rows(m, d, c, uc, dt)


cdef void user_constraint_record(SceneModel m, SceneData d) noexcept nogil:
    # (row impulses) => ucons_lam (a constraint without rows this step keeps none)
    cdef int i
    for i in range(UCONS_MAX_ROWS * m.nucons):
        d.ucons_lam[i] = 0.0
    for i in range(d.nurow):
        d.ucons_lam[UCONS_MAX_ROWS * d.urows[i].cons + d.urows[i].row] = d.urows[i].lam


cdef UserRowC* _new_row(SceneModel m, SceneData d, int c, int r, double dt) noexcept nogil:
    # a row of constraint c, its bounds and its warm start (the last step's impulse)
    cdef UserRowC* row
    cdef double bound = m.ucons[c].max_force * dt
    if d.nurow == d.urow_cap:
        d.urow_cap *= 2
        d.urows = <UserRowC*> realloc(d.urows, d.urow_cap * sizeof(UserRowC))
    row = &d.urows[d.nurow]
    d.nurow += 1
    row.cons = c
    row.row = r
    row.ja = row.wa = row.jb = row.wb = -1
    row.nv_a = row.nv_b = row.vel_a = row.vel_b = 0
    row.bias = 0.0
    row.lo = -bound
    row.hi = bound
    row.lam = min(max(d.ucons_lam[UCONS_MAX_ROWS * c + r], -bound), bound)
    return row


cdef void _frame_rows(SceneModel m, SceneData d, int c, const UserConstraintC* uc,
                      double dt) noexcept nogil:
    cdef double Ra[9]
    cdef double pa[3]
    cdef double Rb[9]
    cdef double pb[3]
    cdef double lin[3 * UCONS_MAX_ROWS]
    cdef double ang[3 * UCONS_MAX_ROWS]
    cdef double err[UCONS_MAX_ROWS]
    cdef double rot[3]
    cdef double dp[3]
    cdef double axis[3]
    cdef double t1[3]
    cdef double t2[3]
    cdef double va[3]
    cdef double vb[3]
    cdef double wa[3]
    cdef double wb[3]
    cdef int nlin, nrow, r, k, off_a = -1, off_b = -1, nv_a = 0, nv_b = 0, vel_a = 0, vel_b = 0
    cdef UserRowC* row
    _frame_pose(m, d, uc.body_a, uc.R_a, uc.p_a, Ra, pa)
    _frame_pose(m, d, uc.body_b, uc.R_b, uc.p_b, Rb, pb)
    for k in range(3):
        dp[k] = pa[k] - pb[k]
    for k in range(3 * UCONS_MAX_ROWS):
        lin[k] = 0.0
        ang[k] = 0.0
    if uc.kind == UCONS_PRISMATIC:
        mat3_vec(Ra, uc.axis, axis)
        _perpendiculars(axis, t1, t2)
        for k in range(3):
            lin[k] = t1[k]
            lin[3 + k] = t2[k]
        nlin = 2
    else:
        for k in range(3):
            lin[4 * k] = 1.0
        nlin = 3
    for r in range(nlin):
        err[r] = dot3(&lin[3 * r], dp)
    nrow = nlin
    if uc.kind != UCONS_POINT2POINT:
        _rotation_error(Ra, Rb, rot)
        for k in range(3):
            for r in range(3):
                ang[3 * (nlin + k) + r] = Ra[3 * r + k]
            err[nlin + k] = rot[k]
        nrow = nlin + 3
    if uc.body_a >= 0:
        jacobian_rows(m, d, uc.body_a, pa, nrow, lin, ang, 1.0, &off_a, &nv_a, &vel_a)
    if uc.body_b >= 0:
        jacobian_rows(m, d, uc.body_b, pb, nrow, lin, ang, -1.0, &off_b, &nv_b, &vel_b)
    # kinematic sides move with their set velocity
    _kinematic_motion(m, d, uc.body_a, pa, va, wa)
    _kinematic_motion(m, d, uc.body_b, pb, vb, wb)
    for k in range(3):
        va[k] -= vb[k]
        wa[k] -= wb[k]
    for r in range(nrow):
        row = _new_row(m, d, c, r, dt)
        if off_a >= 0:
            row.ja = off_a + r * nv_a
            row.wa = off_a + nrow * nv_a + r * nv_a
            row.nv_a = nv_a
            row.vel_a = vel_a
        if off_b >= 0:
            row.jb = off_b + r * nv_b
            row.wb = off_b + nrow * nv_b + r * nv_b
            row.nv_b = nv_b
            row.vel_b = vel_b
        row.bias = dot3(&lin[3 * r], va) + dot3(&ang[3 * r], wa)
        row.target = -uc.erp * err[r] / dt
        _finish_row(m, d, row)


cdef void _gear_row(SceneModel m, SceneData d, int c, const UserConstraintC* uc,
                    double dt) noexcept nogil:
    cdef const BodyC* ba = &m.bodies[uc.body_a]
    cdef const BodyC* bb = &m.bodies[uc.body_b]
    cdef const RobotC* ra = &m.robots[ba.index]
    cdef const RobotC* rb = &m.robots[bb.index]
    cdef double qa = d.robots[ba.index].q[ra.dof_q[uc.dof_a]]
    cdef double qb = d.robots[bb.index].q[rb.dof_q[uc.dof_b]]
    cdef UserRowC* row = _new_row(m, d, c, 0, dt)
    _dof_side(m, d, ba.index, uc.dof_a, 1.0, &row.ja, &row.wa, &row.nv_a, &row.vel_a)
    _dof_side(m, d, bb.index, uc.dof_b, uc.ratio, &row.jb, &row.wb, &row.nv_b, &row.vel_b)
    row.target = 0.0
    if uc.dof_aux >= 0:
        row.target = d.vel0[ra.vel_offset + uc.dof_aux]
    row.target -= uc.erp * (qa + uc.ratio * qb - uc.target) / dt
    _finish_row(m, d, row)


cdef void _finish_row(SceneModel m, SceneData d, UserRowC* row) noexcept nogil:
    # D = J M^-1 J^T over both sides (cross terms when both are the same robot)
    cdef double D = 0.0
    if row.ja >= 0:
        D += _dot(&d.jw[row.ja], &d.jw[row.wa], row.nv_a)
    if row.jb >= 0:
        D += _dot(&d.jw[row.jb], &d.jw[row.wb], row.nv_b)
    if row.ja >= 0 and row.jb >= 0 and row.vel_a == row.vel_b:
        D += _dot(&d.jw[row.ja], &d.jw[row.wb], row.nv_a)
        D += _dot(&d.jw[row.jb], &d.jw[row.wa], row.nv_b)
    row.D = D
    if not D > 0.0:
        # both sides without DOFs (or a gear on one DOF with ratio -1): nothing can move
        row.lo = row.hi = row.lam = 0.0
        row.D = 1.0


cdef void _dof_side(SceneModel m, SceneData d, int r, int dof, double coef, int* ja, int* wa,
                    int* nv, int* vel) noexcept nogil:
    # the row coef e_dof of robot r and W = M^-1 J^T = coef M^-1 e_dof
    cdef const RobotC* rob = &m.robots[r]
    cdef RobotStateC* rs = &d.robots[r]
    cdef int n = rob.model.nv, j, off
    robot_minv(m, d, r)
    off = reserve_jw(d, 2 * n)
    for j in range(n):
        d.jw[off + j] = 0.0
        d.jw[off + n + j] = coef * rs.data.Minv[j * n + dof]
    d.jw[off + dof] = coef
    ja[0] = off
    wa[0] = off + n
    nv[0] = n
    vel[0] = rob.vel_offset


cdef void _frame_pose(SceneModel m, SceneData d, int body, const double* R_f, const double* p_f,
                      double* R, double* p) noexcept nogil:
    # world pose of a frame given in a body's frame (the world's when body = -1)
    cdef int k
    cdef double t[3]
    if body < 0:
        for k in range(9):
            R[k] = R_f[k]
        for k in range(3):
            p[k] = p_f[k]
        return
    mat3_mul(d.bodies[body].R, R_f, R)
    mat3_vec(d.bodies[body].R, p_f, t)
    for k in range(3):
        p[k] = d.bodies[body].p[k] + t[k]


cdef void _kinematic_motion(SceneModel m, SceneData d, int body, const double* point,
                            double* v, double* w) noexcept nogil:
    # velocity of a point and angular velocity of a kinematic body (zero for any other)
    cdef int k
    for k in range(3):
        v[k] = 0.0
        w[k] = 0.0
    if body < 0:
        return
    kinematic_velocity(m, d, body, point, v)
    if m.bodies[body].kind == BODY_FREE and m.free_bodies[m.bodies[body].index].kinematic:
        for k in range(3):
            w[k] = d.fstate[13 * m.bodies[body].index + 10 + k]


cdef inline void _rotation_error(const double* Ra, const double* Rb, double* out) noexcept nogil:
    # bullet3's (btMultiBodyFixedConstraint, btMultiBodySliderConstraint): the XYZ Euler angles
    # of N = Rb^T Ra (F_a in F_b's axes, N = Rx(x) Ry(y) Rz(z)), one per axis of F_a. Exact at
    # any angle, each in (-pi, pi]: a small-angle vee(N - N^T) / 2 shrinks like sin and turns
    # back past pi / 2, so a target turned far from the body barely pulls (constraint.py).
    cdef double N[9]
    cdef int r, c
    for r in range(3):
        for c in range(3):
            N[3 * r + c] = Rb[r] * Ra[c] + Rb[3 + r] * Ra[3 + c] + Rb[6 + r] * Ra[6 + c]
    if N[2] >= 1.0:         # gimbal lock (y = +pi/2): x + z is all that is defined
        out[0] = atan2(N[3], N[4])
        out[1] = 0.5 * M_PI
        out[2] = 0.0
    elif N[2] <= -1.0:      # y = -pi/2: x - z
        out[0] = -atan2(N[3], N[4])
        out[1] = -0.5 * M_PI
        out[2] = 0.0
    else:
        out[0] = atan2(-N[5], N[8])
        out[1] = asin(N[2])
        out[2] = atan2(-N[1], N[0])


cdef inline void _perpendiculars(const double* n, double* t1, double* t2) noexcept nogil:
    # unit t1, t2 with (t1, t2, n) right-handed
    cdef double s
    if fabs(n[0]) < 0.6:
        t1[0] = 0.0
        t1[1] = n[2]
        t1[2] = -n[1]
    else:
        t1[0] = -n[2]
        t1[1] = 0.0
        t1[2] = n[0]
    s = sqrt(dot3(t1, t1))
    t1[0] /= s
    t1[1] /= s
    t1[2] /= s
    cross3(n, t1, t2)


cdef inline double _dot(const double* a, const double* b, int n) noexcept nogil:
    cdef double s = 0.0
    cdef int j
    for j in range(n):
        s += a[j] * b[j]
    return s
