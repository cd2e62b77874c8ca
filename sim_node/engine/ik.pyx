"""Inverse kinematics on a robot Model: residual, Jacobian and a damped least-squares solve.

    ik_eval:  q, goals => r (m), the stacked goal errors, and J = dr/dv (m x nactive)
    ik_solve: q0, goals, active DOFs, limits, bias => q, |r|_inf <= tol when solved

The goals and their errors are Klamp't's (KrisLibrary IKGoal / IKGoalFunction), so that residuals
and Jacobians agree with klampt's IKSolver entry for entry:
  position (rows first), e = p_W(link point) - p_W(destination point):
    fixed (3 rows): e;  linear (2): e . (x, y), the canonical basis orthogonal to the line
    direction d;  planar (1): e . n
  rotation (rows after), with R_L the link's world rotation and R_T = R_D R_goal the target:
    fixed (3 rows): m = log(R_L R_T^T), the rotation vector (axis * angle, angle in [0, pi]);
    axis (2 rows): |c . x| + 1 - c . a and |c . y| + 1 - c . a, with c = R_L a_local, a the
    world axis and (x, y) the canonical basis orthogonal to it (zero only at c = a).
J is taken along the velocity coordinates v (DOF order; a floating base's body-frame twist),
so a step dv moves q by q (+) dv (integrate_config). Rows follow the goals' order.

Goal rows are GOAL_COLS doubles (a (n, GOAL_COLS) array): link, dest (-1 = world), position
kind (0 none, 1 planar, 2 linear, 3 fixed), rotation kind (0 none, 2 axis, 3 fixed), p_local
(3, link coordinates [m]), p_dest (3, world or dest-link coordinates [m]), direction (3, unit:
plane normal or line direction, world axes), R_goal (9, row-major, link rotation relative to
dest), a_local (3, unit, link axes), a_dest (3, unit, world axes). Linear, planar and axis
goals relative to another link are refused by the Python layer (Klamp't has no Jacobian for
them either).

The solver is Levenberg-Marquardt on the least-squares problem min |r(q)|^2: a step
dv = J^T (J J^T + lambda I)^-1 (-r) on the active DOFs, accepted when it lowers |r|^2 (lambda
/= 10) and retried with lambda *= 10 otherwise. Joint limits are kept by projection: the new q
is clamped into [qmin, qmax], and a DOF resting on a bound whose descent direction points out of
the box is frozen for that step (its column removed), so the others take up the motion. A bias
configuration pulls the free DOFs toward it through the damped null-space projector
(I - J^T (J J^T + lambda I)^-1 J) (q_bias - q), which leaves the residual unchanged to first
order (Klamp't's secondary objective); a step the pull makes worse is retried without it. Scratch is allocated once per call; no Python objects
are touched between iterations.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport atan2, cos, fabs, isfinite, sin, sqrt
from libc.stdlib cimport free, malloc

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.cholesky cimport cholesky_resolve, cholesky_solve
from sim_node.engine.integrate cimport integrate_config
from sim_node.engine.kinematics cimport body_columns, forward_kinematics, link_placements
from sim_node.engine.model cimport (Data, DataC, Model, ModelC, JOINT_PRISMATIC,
                                    JOINT_REVOLUTE)
from sim_node.engine.spatial cimport cross3, dot3, mat3_mul, mat3_vec

cnp.import_array()

cdef enum:
    G_LINK = 0
    G_DEST = 1
    G_POS = 2
    G_ROT = 3
    G_PLOCAL = 4
    G_PDEST = 7
    G_DIR = 10
    G_R = 13
    G_ALOCAL = 22
    G_ADEST = 25
    NCOLS = 28

GOAL_COLS = NCOLS
POS_NONE, POS_PLANAR, POS_LINEAR, POS_FIXED = 0, 1, 2, 3
ROT_NONE, ROT_AXIS, ROT_FIXED = 0, 2, 3

# LM damping [m^2, the scale of J J^T for a metre-sized arm]: start, bounds. Starting damped
# (1, not 1e-3) keeps the first steps from a singular start (an arm at zero, straight up) short:
# on 300 random pose targets from zero it solved 98 % of kuka_iiwa's and 51 % of franka_panda's
# in one attempt, against 89 % and 38 % with 1e-3. A step that needs more damping than
# LAMBDA_MAX is a local minimum of |r|^2 (or a corner of the joint-limit box): the solve stops.
cdef double LAMBDA_START = 1.0
cdef double LAMBDA_MIN = 1e-12
cdef double LAMBDA_MAX = 1e8


cdef inline void canonical_basis(const double* x, double* y, double* z) noexcept nogil:
    # (unit x) => (y, z) with (x, y, z) the minimal rotation of the standard basis taking e_x to
    # x (KrisLibrary GetCanonicalBasis, so that 1- and 2-row errors match Klamp't's)
    cdef double scale
    if fabs(x[0] - 1.0) <= 1e-8:
        scale = 0.0
    elif fabs(x[0] + 1.0) <= 1e-8:
        y[0] = 0.0
        y[1] = -1.0
        y[2] = 0.0
        z[0] = 0.0
        z[1] = 0.0
        z[2] = 1.0
        return
    else:
        scale = (1.0 - x[0]) / (1.0 - x[0] * x[0])
    y[0] = -x[1]
    y[1] = x[0] + scale * x[2] * x[2]
    y[2] = -scale * x[1] * x[2]
    z[0] = -x[2]
    z[1] = -scale * x[1] * x[2]
    z[2] = x[0] + scale * x[1] * x[1]


cdef inline void rotation_log(const double* R, double* w) noexcept nogil:
    # (R row-major) => (w = axis * angle, angle in [0, pi]) with R = exp([w]x)
    cdef double c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    cdef double theta, s, k, B[9]
    cdef double v[3]
    cdef int i, j, big
    # R - R^T = 2 sin(theta) [a]x; atan2 keeps theta accurate near 0 and pi (acos does not)
    v[0] = R[7] - R[5]
    v[1] = R[2] - R[6]
    v[2] = R[3] - R[1]
    s = 0.5 * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    theta = atan2(s, c)
    if theta < 1e-6:
        k = 0.5 + theta * theta / 12.0          # theta / (2 sin theta), series
    elif s > 1e-4 or c > 0.0:
        k = theta / (2.0 * s)
    else:
        # near pi, sin(theta) loses the axis: a a^T = ((R + R^T) / 2 - cos(theta) I) / (1 - c)
        for i in range(3):
            for j in range(3):
                B[3 * i + j] = ((0.5 * (R[3 * i + j] + R[3 * j + i]) - (c if i == j else 0.0))
                                / (1.0 - c))
        big = 0
        if B[4] > B[3 * big + big]:
            big = 1
        if B[8] > B[3 * big + big]:
            big = 2
        k = sqrt(B[3 * big + big] if B[3 * big + big] > 0.0 else 0.0)
        for i in range(3):
            w[i] = B[3 * big + i] / k if k > 0.0 else 0.0
        # the sign of the axis is fixed by sin(theta) a = v / 2 while sin > 0
        if w[0] * v[0] + w[1] * v[1] + w[2] * v[2] < 0.0:
            for i in range(3):
                w[i] = -w[i]
        for i in range(3):
            w[i] *= theta
        return
    for i in range(3):
        w[i] = k * v[i]


cdef inline void log_derivative(const double* w, const double* dw, double* out) noexcept nogil:
    # d log(R) for dR = [dw]x R at R = exp([w]x): the inverse left Jacobian of SO(3),
    # out = dw - 1/2 w x dw + c w x (w x dw), c = (1 - theta sin(theta) / (2 (1 - cos theta))) / theta^2
    cdef double th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    cdef double theta = sqrt(th2)
    cdef double c
    cdef double a[3]
    cdef double b[3]
    cdef int k
    if theta < 1e-4:
        c = 1.0 / 12.0 + th2 / 720.0
    else:
        c = (1.0 - theta * sin(theta) / (2.0 * (1.0 - cos(theta)))) / th2
    cross3(w, dw, a)
    cross3(w, a, b)
    for k in range(3):
        out[k] = dw[k] - 0.5 * a[k] + c * b[k]


cdef inline void link_point(const DataC* d, int link, const double* p_L, double* p_W) noexcept nogil:
    # (link placement) => (p_W = R_WL p_L + p_WL)
    cdef int k
    mat3_vec(&d.link_R[9 * link], p_L, p_W)
    for k in range(3):
        p_W[k] += d.link_p[3 * link + k]


cdef void add_point_columns(const ModelC* m, const DataC* d, int link, const double* p_W,
                            const int* dof_col, int na, double sign, double* Jw,
                            double* Jv) noexcept nogil:
    # (S of the bodies on link's chain) => (Jw, Jv (3 x na each, row-major) += sign * angular
    # and linear velocity of the world point p_W fixed to link, per active DOF)
    cdef int i = m.link_body[link]
    cdef int j, col, a, k
    cdef double lin[3]
    cdef const double* S
    while i >= 0:
        for j in range(m.ncolb[i]):
            col = m.icol[i] + j
            a = dof_col[m.col_dof[col]]
            if a < 0:
                continue
            S = &d.S[6 * col]
            cross3(&S[3], p_W, lin)
            for k in range(3):
                Jw[k * na + a] += sign * S[3 + k]
                Jv[k * na + a] += sign * (S[k] + lin[k])
        i = m.parent[i]


cdef int goal_rows(const double* g) noexcept nogil:
    return <int> g[G_POS] + <int> g[G_ROT]


cdef void ik_eval(const ModelC* m, DataC* d, const double* q, const double* goals, int ngoal,
                  const int* dof_col, int na, double* r, double* J, double* scratch) noexcept nogil:
    # (q, goals) => (r (nres), and J (nres x na, row-major) unless J is NULL)
    # scratch: 12 * na doubles
    cdef int gi, row = 0, i, k, a, link, dest, npos, nrot
    cdef const double* g
    cdef double pL[3]
    cdef double pD[3]
    cdef double e[3]
    cdef double dvec[3]
    cdef double bx[3]
    cdef double by[3]
    cdef double RT[9]
    cdef double E[9]
    cdef double w[3]
    cdef double dw[3]
    cdef double dr[3]
    cdef double cur[3]
    cdef double t[3]
    cdef double cx, cy, sx, sy, neg
    cdef double* JwL = scratch
    cdef double* JvL = scratch + 3 * na
    cdef double* JwD = scratch + 6 * na
    cdef double* JvD = scratch + 9 * na
    forward_kinematics(m, d, q)
    link_placements(m, d)
    if J != NULL:
        for i in range(m.nbody):
            body_columns(m, d, i)
    for gi in range(ngoal):
        g = &goals[NCOLS * gi]
        link = <int> g[G_LINK]
        dest = <int> g[G_DEST]
        npos = <int> g[G_POS]
        nrot = <int> g[G_ROT]
        link_point(d, link, &g[G_PLOCAL], pL)
        if dest >= 0:
            link_point(d, dest, &g[G_PDEST], pD)
        else:
            for k in range(3):
                pD[k] = g[G_PDEST + k]
        if J != NULL:
            for k in range(12 * na):
                scratch[k] = 0.0
            add_point_columns(m, d, link, pL, dof_col, na, 1.0, JwL, JvL)
            if dest >= 0:
                add_point_columns(m, d, dest, pD, dof_col, na, 1.0, JwD, JvD)
        # -- position rows
        for k in range(3):
            e[k] = pL[k] - pD[k]
        if npos == 3:
            for k in range(3):
                r[row + k] = e[k]
                if J != NULL:
                    for a in range(na):
                        J[(row + k) * na + a] = JvL[k * na + a] - JvD[k * na + a]
        elif npos == 2:
            canonical_basis(&g[G_DIR], bx, by)
            r[row] = dot3(e, bx)
            r[row + 1] = dot3(e, by)
            if J != NULL:
                for a in range(na):
                    J[row * na + a] = (JvL[a] * bx[0] + JvL[na + a] * bx[1]
                                       + JvL[2 * na + a] * bx[2])
                    J[(row + 1) * na + a] = (JvL[a] * by[0] + JvL[na + a] * by[1]
                                             + JvL[2 * na + a] * by[2])
        elif npos == 1:
            r[row] = dot3(e, &g[G_DIR])
            if J != NULL:
                for a in range(na):
                    J[row * na + a] = (JvL[a] * g[G_DIR] + JvL[na + a] * g[G_DIR + 1]
                                       + JvL[2 * na + a] * g[G_DIR + 2])
        row += npos
        # -- rotation rows
        if nrot == 3:
            # E = R_L R_T^T, R_T = R_D R_goal
            if dest >= 0:
                mat3_mul(&d.link_R[9 * dest], &g[G_R], RT)
            else:
                for k in range(9):
                    RT[k] = g[G_R + k]
            for i in range(3):
                for k in range(3):
                    E[3 * i + k] = (d.link_R[9 * link + 3 * i] * RT[3 * k]
                                    + d.link_R[9 * link + 3 * i + 1] * RT[3 * k + 1]
                                    + d.link_R[9 * link + 3 * i + 2] * RT[3 * k + 2])
            rotation_log(E, w)
            for k in range(3):
                r[row + k] = w[k]
            if J != NULL:
                # dE = [w_L - E w_D]x E
                for a in range(na):
                    for k in range(3):
                        t[k] = JwD[k * na + a]
                    mat3_vec(E, t, dw)
                    for k in range(3):
                        dw[k] = JwL[k * na + a] - dw[k]
                    log_derivative(w, dw, dr)
                    for k in range(3):
                        J[(row + k) * na + a] = dr[k]
        elif nrot == 2:
            # |c . x| + 1 - c . a, |c . y| + 1 - c . a with c = R_L a_local: zero only when
            # c = a (not at c = -a); dc = w x c
            mat3_vec(&d.link_R[9 * link], &g[G_ALOCAL], cur)
            canonical_basis(&g[G_ADEST], bx, by)
            cx = dot3(cur, bx)
            cy = dot3(cur, by)
            neg = 1.0 - dot3(cur, &g[G_ADEST])
            r[row] = fabs(cx) + neg
            r[row + 1] = fabs(cy) + neg
            if J != NULL:
                sx = 1.0 if cx > 0.0 else (-1.0 if cx < 0.0 else 0.0)
                sy = 1.0 if cy > 0.0 else (-1.0 if cy < 0.0 else 0.0)
                for a in range(na):
                    for k in range(3):
                        dw[k] = JwL[k * na + a]
                    cross3(dw, cur, t)
                    J[row * na + a] = sx * dot3(t, bx) - dot3(t, &g[G_ADEST])
                    J[(row + 1) * na + a] = sy * dot3(t, by) - dot3(t, &g[G_ADEST])
        row += nrot


cdef inline double sqnorm(const double* x, int n) noexcept nogil:
    cdef double s = 0.0
    cdef int k
    for k in range(n):
        s += x[k] * x[k]
    return s


cdef inline double maxabs(const double* x, int n) noexcept nogil:
    cdef double s = 0.0
    cdef int k
    for k in range(n):
        if fabs(x[k]) > s:
            s = fabs(x[k])
    return s


cdef int dof_coordinate(const ModelC* m, int dof) noexcept nogil:
    # q index of a 1-DOF joint's coordinate, -1 for DOFs of free and spherical joints
    cdef int b = m.dof_body[dof]
    if m.jtype[b] == JOINT_REVOLUTE or m.jtype[b] == JOINT_PRISMATIC:
        return m.iq[b]
    return -1


cdef int ik_solve(const ModelC* m, DataC* d, double* q, const double* goals, int ngoal,
                  const int* active, int na, const double* qmin, const double* qmax,
                  const double* bias, int max_iters, double tol, double* r,
                  int* iters_out) noexcept nogil:
    # (q0, goals, active DOFs, limits, bias or NULL) => (q, r at q); returns 1 when
    # |r|_inf <= tol, 0 when max_iters ran out or the descent stalled, -1 on allocation failure
    cdef int nres = 0, gi, k, a, it = 0, solved = 0, iq, use_bias = 1
    cdef double lam = LAMBDA_START, err2, err2_new, step2
    for gi in range(ngoal):
        nres += goal_rows(&goals[NCOLS * gi])
    cdef int nv = m.nv, nq = m.nq
    # one block: J, J_new (nres x na each), A (nres^2), y, y2 (nres), r_new (nres),
    # dx (na), z (na), v (nv), q_new (nq), eval scratch (12 na), dof_col (nv), coord (na),
    # frozen (na)
    cdef Py_ssize_t size = (2 * nres * na + nres * nres + 3 * nres + 2 * na + nv + nq
                            + 12 * na)
    cdef double* block = <double*> malloc(size * sizeof(double))
    cdef int* iblock = <int*> malloc((nv + 2 * na + 1) * sizeof(int))
    if block == NULL or iblock == NULL:
        free(block)
        free(iblock)
        return -1
    cdef double* J = block
    cdef double* Jn = J + nres * na
    cdef double* A = Jn + nres * na
    cdef double* y = A + nres * nres
    cdef double* y2 = y + nres
    cdef double* rn = y2 + nres
    cdef double* dx = rn + nres
    cdef double* z = dx + na
    cdef double* v = z + na
    cdef double* qn = v + nv
    cdef double* scratch = qn + nq
    cdef int* dof_col = iblock
    cdef int* coord = dof_col + nv
    cdef int* frozen = coord + na
    cdef double* tmp
    cdef double gk
    cdef int i, j
    for k in range(nv):
        dof_col[k] = -1
    for a in range(na):
        dof_col[active[a]] = a
        coord[a] = dof_coordinate(m, active[a])
        iq = coord[a]
        if iq >= 0:
            if q[iq] < qmin[iq]:
                q[iq] = qmin[iq]
            elif q[iq] > qmax[iq]:
                q[iq] = qmax[iq]
    ik_eval(m, d, q, goals, ngoal, dof_col, na, r, J, scratch)
    err2 = sqnorm(r, nres)
    while True:
        if maxabs(r, nres) <= tol:
            solved = 1
            break
        if it >= max_iters or lam > LAMBDA_MAX:
            break
        it += 1
        # freeze DOFs on a bound whose descent direction -J^T r points out of the box
        for a in range(na):
            frozen[a] = 0
            iq = coord[a]
            if iq < 0:
                continue
            gk = 0.0
            for i in range(nres):
                gk -= J[i * na + a] * r[i]
            if (q[iq] <= qmin[iq] and gk < 0.0) or (q[iq] >= qmax[iq] and gk > 0.0):
                frozen[a] = 1
        # A = Jf Jf^T + lambda I over the unfrozen columns
        for i in range(nres):
            for j in range(i + 1):
                gk = 0.0
                for a in range(na):
                    if not frozen[a]:
                        gk += J[i * na + a] * J[j * na + a]
                A[i * nres + j] = gk
                A[j * nres + i] = gk
            A[i * nres + i] += lam
            y[i] = -r[i]
        if not cholesky_solve(A, nres, y):
            lam *= 10.0
            continue
        for a in range(na):
            dx[a] = 0.0
            if not frozen[a]:
                for i in range(nres):
                    dx[a] += J[i * na + a] * y[i]
        if bias != NULL and use_bias:
            # damped null-space pull toward the bias: z - Jf^T (Jf Jf^T + lambda I)^-1 Jf z
            for a in range(na):
                iq = coord[a]
                z[a] = bias[iq] - q[iq] if (iq >= 0 and not frozen[a]) else 0.0
            for i in range(nres):
                y2[i] = 0.0
                for a in range(na):
                    y2[i] += J[i * na + a] * z[a]
            cholesky_resolve(A, nres, y2)
            for a in range(na):
                if not frozen[a]:
                    gk = z[a]
                    for i in range(nres):
                        gk -= J[i * na + a] * y2[i]
                    dx[a] += gk
        for k in range(nv):
            v[k] = 0.0
        step2 = 0.0
        for a in range(na):
            step2 += dx[a] * dx[a]
        for a in range(na):
            v[active[a]] = dx[a]
        integrate_config(m, q, v, 1.0, qn)
        for a in range(na):
            iq = coord[a]
            if iq >= 0:
                if qn[iq] < qmin[iq]:
                    qn[iq] = qmin[iq]
                elif qn[iq] > qmax[iq]:
                    qn[iq] = qmax[iq]
        ik_eval(m, d, qn, goals, ngoal, dof_col, na, rn, Jn, scratch)
        err2_new = sqnorm(rn, nres)
        if err2_new < err2:
            for k in range(nq):
                q[k] = qn[k]
            for k in range(nres):
                r[k] = rn[k]
            tmp = J
            J = Jn
            Jn = tmp
            err2 = err2_new
            lam = lam * 0.1 if lam * 0.1 > LAMBDA_MIN else LAMBDA_MIN
            use_bias = 1
        elif bias != NULL and use_bias:
            # the null-space pull is first-order neutral only: when it spoils the step, retry
            # the same damping without it before damping more
            use_bias = 0
        else:
            lam *= 10.0
        if step2 < 1e-28:
            break      # no motion left: a stationary point of |r|^2 inside the limits
    iters_out[0] = it
    free(block)
    free(iblock)
    return solved


# -- Python face (validated by sim_node.model.ik; here only shapes and index ranges) ----------

cdef cnp.ndarray _goals(Model model, goals):
    # validated with C loops: numpy's vectorised checks cost more than a whole solve
    cdef cnp.ndarray g = <cnp.ndarray> cnp.PyArray_FROMANY(goals, cnp.NPY_DOUBLE, 2, 2,
                                                          cnp.NPY_ARRAY_C_CONTIGUOUS)
    if g.shape[1] != NCOLS or g.shape[0] < 1:
        raise ValueError(f"goals: expected shape (n >= 1, {NCOLS}), got {np.shape(goals)}")
    cdef const double* p = data_ptr(g)
    cdef Py_ssize_t i, k
    cdef double link, dest, pos, rot
    for i in range(g.shape[0]):
        for k in range(NCOLS):
            if not isfinite(p[NCOLS * i + k]):
                raise ValueError(f"goals: row {i} contains NaN or infinity")
        link, dest = p[NCOLS * i + G_LINK], p[NCOLS * i + G_DEST]
        pos, rot = p[NCOLS * i + G_POS], p[NCOLS * i + G_ROT]
        if (not 0 <= link < model.nlink or not -1 <= dest < model.nlink
                or link != <int> link or dest != <int> dest):
            raise IndexError(f"goals: row {i}: link indices must be in [0, {model.nlink}) "
                             "(dest -1 = world)")
        if not (pos in (0.0, 1.0, 2.0, 3.0) and rot in (0.0, 2.0, 3.0)):
            raise ValueError(f"goals: row {i}: position kind must be 0..3 and rotation kind 0, "
                             "2 or 3")
    return g


cdef cnp.ndarray _active(Model model, active):
    cdef cnp.ndarray act = <cnp.ndarray> np.ascontiguousarray(active, dtype=np.int32)
    if act.ndim != 1 or act.shape[0] < 1:
        raise ValueError("active: expected a non-empty list of DOF indices")
    cdef const int* a = <const int*> cnp.PyArray_DATA(act)
    cdef Py_ssize_t i, j
    for i in range(act.shape[0]):
        if not 0 <= a[i] < model.nv:
            raise IndexError(f"active: DOF indices must be in [0, {model.nv}), got {a[i]}")
        for j in range(i):
            if a[j] == a[i]:
                raise IndexError(f"active: DOF {a[i]} is repeated")
    return act


cdef int _num_rows(cnp.ndarray g):
    cdef const double* p = data_ptr(g)
    cdef int i, n = 0
    for i in range(g.shape[0]):
        n += <int> p[NCOLS * i + G_POS] + <int> p[NCOLS * i + G_ROT]
    return n


def num_rows(goals):
    """Number of residual rows of goals (n, GOAL_COLS)."""
    g = np.asarray(goals)
    return int(g[:, G_POS].sum() + g[:, G_ROT].sum())


def residual(Model model not None, Data data not None, q, goals):
    """Stacked goal errors r (m,) at q (nq); see the module docstring for the rows."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray g = _goals(model, goals)
    cdef cnp.ndarray r = np.empty(_num_rows(g))
    cdef int dummy = -1
    cdef double* qp = data_ptr(qa)
    cdef double* gp = data_ptr(g)
    cdef double* rp = data_ptr(r)
    cdef int ng = g.shape[0]
    with nogil:
        ik_eval(&model.c, &data.c, qp, gp, ng, &dummy, 0, rp, NULL, NULL)
    return r


def jacobian(Model model not None, Data data not None, q, goals, active):
    """dr/dv (m, len(active)) at q: column k is the derivative along velocity DOF active[k]."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray g = _goals(model, goals)
    cdef cnp.ndarray act = _active(model, active)
    cdef int na = act.shape[0], k
    cdef int nres = _num_rows(g)
    cdef cnp.ndarray r = np.empty(nres)
    cdef cnp.ndarray J = np.empty((nres, na))
    cdef cnp.ndarray dof_col = np.full(model.nv, -1, dtype=np.int32)
    cdef cnp.ndarray scratch = np.empty(12 * na)
    for k in range(na):
        dof_col[act[k]] = k
    cdef double* qp = data_ptr(qa)
    cdef double* gp = data_ptr(g)
    cdef double* rp = data_ptr(r)
    cdef double* Jp = data_ptr(J)
    cdef double* sp = data_ptr(scratch)
    cdef int* cp = <int*> cnp.PyArray_DATA(dof_col)
    cdef int ng = g.shape[0]
    with nogil:
        ik_eval(&model.c, &data.c, qp, gp, ng, cp, na, rp, Jp, sp)
    return J


def solve(Model model not None, Data data not None, double[::1] q not None, goals, active,
          qmin, qmax, bias, int max_iters, double tol):
    """Levenberg-Marquardt from q (nq, overwritten with the result; quaternions unit) toward
    |r|_inf <= tol over the active DOFs within [qmin, qmax] (nq each, inf where unbounded),
    pulled toward bias (nq) or None in the null space. Returns (solved, iterations, r)."""
    if q.shape[0] != model.nq:
        raise ValueError(f"q: expected length {model.nq}, got {q.shape[0]}")
    cdef cnp.ndarray g = _goals(model, goals)
    cdef cnp.ndarray act = _active(model, active)
    cdef cnp.ndarray lo = <cnp.ndarray> np.ascontiguousarray(qmin, dtype=np.float64)
    cdef cnp.ndarray hi = <cnp.ndarray> np.ascontiguousarray(qmax, dtype=np.float64)
    cdef cnp.ndarray b = None if bias is None else as_vector(bias, model.nq, "bias")
    cdef Py_ssize_t k
    if lo.ndim != 1 or hi.ndim != 1 or lo.shape[0] != model.nq or hi.shape[0] != model.nq:
        raise ValueError(f"qmin, qmax: expected {model.nq} numbers each")
    for k in range(model.nq):
        if not data_ptr(lo)[k] <= data_ptr(hi)[k]:
            raise ValueError(f"qmin, qmax: entry {k} is NaN or qmin > qmax")
    if max_iters < 0 or not tol >= 0.0:
        raise ValueError("max_iters must be >= 0 and tol >= 0")
    cdef cnp.ndarray r = np.empty(_num_rows(g))
    cdef int iters = 0, status
    cdef double* bp = NULL if b is None else data_ptr(b)
    cdef double* gp = data_ptr(g)
    cdef double* lop = data_ptr(lo)
    cdef double* hip = data_ptr(hi)
    cdef double* rp = data_ptr(r)
    cdef int* ap = <int*> cnp.PyArray_DATA(act)
    cdef int ng = g.shape[0], na = act.shape[0]
    with nogil:
        status = ik_solve(&model.c, &data.c, &q[0], gp, ng, ap, na, lop, hip, bp, max_iters,
                          tol, rp, &iters)
    if status < 0:
        raise MemoryError("ik.solve: out of memory for the solver's scratch")
    return bool(status), iters, r
