"""Constraints stage: the rows of contacts, friction patches, joint limits and joint dry
friction (Jacobians, M^-1 J^T, Delassus blocks, targets, warm starts), then their solve.

    (contacts, patches, limits, frictions, vel) => rows in jw, blocks, targets, warm start  [setup]
    (rows, vel) => vel, impulses                                           [solve: pgs_solve]

Boundary layer (seed 002): contacts are generated between the real geometries while they are
closer than padding_a + padding_b (plus the distance they can close during the step, so fast
bodies cannot tunnel through thin geometry). A rigid contact lets the bodies approach until
their real surfaces are REST_GAP_FRACTION x (padding_a + padding_b) apart — inside the layer,
never touching, which keeps normals of zero-thickness shells consistent — and a restitution
target applies on the step the gap closes. An impact (approaching faster than
IMPACT_SPEED when the step starts, closing the gap within it) stops exactly at the rest
gap: its row is solved without the solver's regularisation, whose yield under an impact's
impulse would sink the body tens of micrometres and push it back out, with energy, over the
next steps. A compliant layer (finite kStiffness, kDamping)
pushes with the implicit spring-damper k depth + c d(depth)/dt, depth measured into the layer.
"""
from libc.math cimport atan2, cos, fabs, sin, sqrt, INFINITY
from libc.stdlib cimport realloc
from libc.string cimport memset

from sim_node.engine.constraint cimport ContactC, PatchC, RowC
from sim_node.engine.pipeline.dynamics cimport robot_minv
from sim_node.engine.pipeline.warmstart cimport cached_patch, warm_start_contact, warm_start_patch
from sim_node.engine.solver cimport patch_block, pgs_solve
from sim_node.engine.spatial cimport cross3, dot3, mat3_mul, mat3_vec, quat_to_R
from sim_node.engine.types cimport (BodyC, FreeBodyC, RobotC, RobotStateC, BODY_FREE, BODY_ROBOT,
                                    IMPACT_SPEED, MAX_PUSH_OUT_SPEED, PUSH_OUT_RATE,
                                    REST_GAP_FRACTION, RESTITUTION_THRESHOLD)


cdef void constraint_setup(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (contacts, patches, limits, frictions) => Jacobians, Delassus blocks, targets, warm start
    cdef int i, k, j
    cdef ContactC* c
    cdef PatchC* p
    cdef double zero[9]
    cdef double lin[9]
    cdef double ang[9]
    cdef double gap, rest, u_n, u_start, kdt, v_imp, acc
    cdef double va[3]
    cdef double vb[3]
    cdef double D1[1]
    cdef int cached = -1, hit
    cdef const BodyC* ba
    cdef const BodyC* bb
    for k in range(9):
        zero[k] = 0.0
    d.jw_size = 0
    _world_inverse_inertias(m, d)
    for i in range(d.ncontact):
        c = &d.contacts[i]
        jacobian_rows(m, d, c.body_a, c.point, 1, c.normal, zero, 1.0, &c.jw_a, &c.nv_a, &c.vel_a)
        jacobian_rows(m, d, c.body_b, c.point, 1, c.normal, zero, -1.0, &c.jw_b, &c.nv_b, &c.vel_b)
        D1[0] = 0.0
        _add_jw(D1, 1, d.jw, c.jw_a, c.nv_a, c.jw_a, c.nv_a)
        _add_jw(D1, 1, d.jw, c.jw_b, c.nv_b, c.jw_b, c.nv_b)
        if c.jw_a >= 0 and c.jw_b >= 0 and c.vel_a == c.vel_b:
            _add_jw(D1, 1, d.jw, c.jw_a, c.nv_a, c.jw_b, c.nv_b)
            _add_jw(D1, 1, d.jw, c.jw_b, c.nv_b, c.jw_a, c.nv_a)
        c.D = D1[0]
        # kinematic sides move with their set velocity: its part of the relative velocity
        kinematic_velocity(m, d, c.body_a, c.point, va)
        kinematic_velocity(m, d, c.body_b, c.point, vb)
        for k in range(3):
            va[k] -= vb[k]
        c.bias = dot3(va, c.normal)
        # normal velocity before the solve, and at the start of the step
        u_n = c.bias
        u_start = c.bias
        if c.jw_a >= 0:
            for j in range(c.nv_a):
                u_n += d.jw[c.jw_a + j] * d.vel[c.vel_a + j]
                u_start += d.jw[c.jw_a + j] * d.vel0[c.vel_a + j]
        if c.jw_b >= 0:
            for j in range(c.nv_b):
                u_n += d.jw[c.jw_b + j] * d.vel[c.vel_b + j]
                u_start += d.jw[c.jw_b + j] * d.vel0[c.vel_b + j]
        rest = REST_GAP_FRACTION * (m.bodies[c.body_a].padding + m.bodies[c.body_b].padding)
        gap = c.distance - rest
        c.gamma = 0.0
        c.bounce = 0.0
        c.exact = 0.0
        if c.stiffness < INFINITY and c.damping < INFINITY:
            if c.depth > 0.0:
                # compliant layer: u_n + gamma lambda = k depth / (k dt + c)
                kdt = c.stiffness * dt + c.damping
                c.gamma = 1.0 / (dt * kdt)
                c.target = c.stiffness * c.depth / kdt
            else:
                c.target = -INFINITY            # outside the layer: no force
        elif gap >= 0.0:
            # rigid: the gap may close, not more. An impact that would close it this step
            # bounces now, from the gap it is at: the approach speed is taken when the gap
            # closes (a fraction gap / (-u_n dt) into the step, over which the velocity went
            # from u_start to u_n), reversed and scaled by the restitution, and slowed by the
            # normal acceleration a over the gap it no longer travels, v^2 = (e v)^2 + 2 a gap.
            # The bounce then carries exactly the energy it would have at that height, so
            # neither the apex nor the energy depends on where in the step the impact falls.
            c.target = -gap / dt
            if c.restitution > 0.0 and u_n < -RESTITUTION_THRESHOLD and gap + u_n * dt <= 0.0:
                v_imp = -(u_start + (u_n - u_start) * gap / (-u_n * dt))
                acc = (u_n - u_start) / dt
                v_imp = (c.restitution * v_imp) ** 2 + 2.0 * acc * gap
                if v_imp > 0.0:
                    c.target = sqrt(v_imp)
                    c.bounce = 1.0
                    c.exact = 1.0
        else:
            c.target = min(-PUSH_OUT_RATE * gap / dt, MAX_PUSH_OUT_SPEED)
        if (c.stiffness == INFINITY or c.damping == INFINITY) and u_start < -IMPACT_SPEED \
                and gap + u_n * dt <= 0.0:
            # an impact (module docstring): it stops at the rest gap, not inside it
            c.exact = 1.0
        if i == d.patches[c.patch].first:
            cached = cached_patch(m, d, c.body_a, c.body_b)
            d.patches[c.patch].cached = -1
        # the patch's friction follows the old patch that its first cached contact was in
        hit = warm_start_contact(m, d, c, cached)
        if d.patches[c.patch].cached < 0:
            d.patches[c.patch].cached = hit
    for i in range(d.npatch):
        p = &d.patches[i]
        for k in range(3):
            lin[k] = p.t1[k]
            lin[3 + k] = p.t2[k]
            lin[6 + k] = 0.0
            ang[k] = 0.0
            ang[3 + k] = 0.0
            ang[6 + k] = p.normal[k]
        kinematic_velocity(m, d, p.body_a, p.point, va)
        kinematic_velocity(m, d, p.body_b, p.point, vb)
        for k in range(3):
            va[k] -= vb[k]
        p.bias[0] = dot3(va, p.t1)
        p.bias[1] = dot3(va, p.t2)
        p.bias[2] = 0.0
        ba = &m.bodies[p.body_a]
        bb = &m.bodies[p.body_b]
        if ba.kind == BODY_FREE and m.free_bodies[ba.index].kinematic:
            p.bias[2] += dot3(&d.fstate[13 * ba.index + 10], p.normal)
        if bb.kind == BODY_FREE and m.free_bodies[bb.index].kinematic:
            p.bias[2] -= dot3(&d.fstate[13 * bb.index + 10], p.normal)
        jacobian_rows(m, d, p.body_a, p.point, 3, lin, ang, 1.0, &p.jw_a, &p.nv_a, &p.vel_a)
        jacobian_rows(m, d, p.body_b, p.point, 3, lin, ang, -1.0, &p.jw_b, &p.nv_b, &p.vel_b)
        for k in range(9):
            p.D[k] = 0.0
        _add_jw(p.D, 3, d.jw, p.jw_a, p.nv_a, p.jw_a, p.nv_a)
        _add_jw(p.D, 3, d.jw, p.jw_b, p.nv_b, p.jw_b, p.nv_b)
        if p.jw_a >= 0 and p.jw_b >= 0 and p.vel_a == p.vel_b:
            _add_jw(p.D, 3, d.jw, p.jw_a, p.nv_a, p.jw_b, p.nv_b)
            _add_jw(p.D, 3, d.jw, p.jw_b, p.nv_b, p.jw_a, p.nv_a)
        _eig2(p.D[0], p.D[1], p.D[4], p.Dt_eig, p.Dt_rot)
        warm_start_patch(d, p, p.cached)
    # patch blocks, after every Jacobian is in place (jw may move while it grows)
    d.blocks_size = 0
    for i in range(d.npatch):
        p = &d.patches[i]
        k = (p.count + 3) * (p.count + 3)
        if d.blocks_size + k > d.blocks_cap:
            d.blocks_cap = 2 * (d.blocks_size + k)
            d.blocks = <double*> realloc(d.blocks, d.blocks_cap * sizeof(double))
        p.block = d.blocks_size
        patch_block(p, d.contacts, d.jw, &d.blocks[p.block])
        d.blocks_size += k
    _joint_rows(m, d, dt)


cdef void solve(SceneModel m, SceneData d) noexcept nogil:
    # (rows, blocks, vel) => vel, impulses (projected Gauss-Seidel); work counters
    d.last_iterations = pgs_solve(d.contacts, d.patches, d.npatch, d.rows, d.nrow, d.urows,
                                  d.nurow, d.jw, d.blocks, d.vel, m.max_iterations,
                                  m.tolerance, m.regularization)
    d.count_contacts += d.ncontact
    d.count_row_updates += d.last_iterations * (d.ncontact + 3 * d.npatch + d.nrow + d.nurow)


cdef int reserve_jw(SceneData d, int n) noexcept nogil:
    # room for n more doubles in jw; returns the offset of the block
    cdef int off = d.jw_size
    if d.jw_size + n > d.jw_cap:
        d.jw_cap = 2 * (d.jw_size + n)
        d.jw = <double*> realloc(d.jw, d.jw_cap * sizeof(double))
    d.jw_size += n
    return off


cdef void jacobian_rows(SceneModel m, SceneData d, int body, const double* point, int nrow,
                         const double* lin, const double* ang, double sign, int* jw_off,
                         int* nv, int* vel) noexcept nogil:
    # Rows r < nrow of `body`'s velocity: lin[r] . (velocity of the body point at `point`)
    # + ang[r] . (its angular velocity), times sign; then W = M^-1 J^T. Stored in jw as
    # nrow x nv rows and nv x nrow columns; jw_off = -1 when the body has no DOFs.
    cdef const BodyC* b = &m.bodies[body]
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef const FreeBodyC* f
    cdef const double* state
    cdef int n, off, k, j, i, col, dof, npath
    cdef int* path = d.path_dofs
    cdef double r[3]
    cdef double rd[3]
    cdef double lv[3]
    cdef double x[3]
    cdef const double* Iinv
    cdef double s
    cdef double* J
    cdef double* W
    cdef const double* S
    jw_off[0] = -1
    nv[0] = 0
    vel[0] = 0
    if b.kind == BODY_FREE:
        f = &m.free_bodies[b.index]
        if f.kinematic:
            return
        state = &d.fstate[13 * b.index]
        n = 6
        off = reserve_jw(d, 2 * nrow * n)
        J = &d.jw[off]
        W = &d.jw[off + nrow * n]
        for k in range(3):
            r[k] = point[k] - state[k]
        Iinv = &d.iinv_world[9 * b.index]
        for k in range(nrow):
            # [v_com, w] -> lin . (v_com + w x r) + ang . w = lin . v_com + (r x lin + ang) . w
            cross3(r, &lin[3 * k], rd)
            for j in range(3):
                rd[j] += ang[3 * k + j]
                J[k * n + j] = sign * lin[3 * k + j]
                J[k * n + 3 + j] = sign * rd[j]
            mat3_vec(Iinv, rd, x)
            for j in range(3):
                W[k * n + j] = sign * lin[3 * k + j] / f.mass
                W[k * n + 3 + j] = sign * x[j]
        jw_off[0] = off
        nv[0] = n
        vel[0] = f.vel_offset
    elif b.kind == BODY_ROBOT:
        rob = &m.robots[b.index]
        rs = &d.robots[b.index]
        robot_minv(m, d, b.index)
        n = rob.model.nv
        off = reserve_jw(d, 2 * nrow * n)
        J = &d.jw[off]
        W = &d.jw[off + nrow * n]
        memset(J, 0, nrow * n * sizeof(double))
        npath = 0
        i = b.robot_body
        while i >= 0:
            for col in range(rob.model.icol[i], rob.model.icol[i] + rob.model.ncolb[i]):
                S = &rs.data.S[6 * col]
                dof = rob.model.col_dof[col]
                path[npath] = dof
                npath += 1
                # velocity of the point for a unit rate: S_v + S_w x point; rotation: S_w
                cross3(&S[3], point, lv)
                for j in range(3):
                    lv[j] += S[j]
                for k in range(nrow):
                    J[k * n + dof] += sign * (dot3(&lin[3 * k], lv) + dot3(&ang[3 * k], &S[3]))
            i = rob.model.parent[i]
        # W = M^-1 J^T over the DOFs J can be nonzero on (the body's path to the root; a mimic
        # column adds its leader's DOF), ascending: the terms left out are exact zeros, so
        # the sums are those of the dense product, bit for bit, at path/n of its cost
        npath = _sorted_unique(path, npath)
        for k in range(nrow):
            for j in range(n):
                s = 0.0
                for i in range(npath):
                    s += rs.data.Minv[j * n + path[i]] * J[k * n + path[i]]
                W[k * n + j] = s
        jw_off[0] = off
        nv[0] = n
        vel[0] = rob.vel_offset


cdef void _world_inverse_inertias(SceneModel m, SceneData d) noexcept nogil:
    # (free-body orientations) => iinv_world = R I_B^-1 R^T, once per body and step (every
    # contact and patch row of the body uses it)
    cdef int i
    cdef double R[9]
    cdef double tmp[9]
    for i in range(m.nfree):
        if m.free_bodies[i].kinematic:
            continue
        quat_to_R(&d.fstate[13 * i + 3], R)
        mat3_mul(R, m.free_bodies[i].Iinv_B, tmp)
        _mul_transpose(tmp, R, &d.iinv_world[9 * i])


cdef inline int _sorted_unique(int* a, int n) noexcept nogil:
    # sorts a[:n] ascending in place (insertion: paths are short and come descending), drops
    # repeats; returns the new length
    cdef int i, j, t, m = 0
    for i in range(1, n):
        t = a[i]
        j = i - 1
        while j >= 0 and a[j] > t:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t
    for i in range(n):
        if m == 0 or a[i] != a[m - 1]:
            a[m] = a[i]
            m += 1
    return m


cdef void kinematic_velocity(SceneModel m, SceneData d, int body, const double* point,
                              double* out) noexcept nogil:
    # velocity of the point of a kinematic body (it has no DOFs in vel); zero otherwise
    cdef const BodyC* b = &m.bodies[body]
    cdef const double* state
    cdef double r[3]
    cdef int k
    out[0] = out[1] = out[2] = 0.0
    if b.kind != BODY_FREE:
        return
    if not m.free_bodies[b.index].kinematic:
        return
    state = &d.fstate[13 * b.index]
    for k in range(3):
        r[k] = point[k] - state[k]
    cross3(&state[10], r, out)
    for k in range(3):
        out[k] += state[7 + k]


cdef void _joint_rows(SceneModel m, SceneData d, double dt) noexcept nogil:
    # joint limits (unilateral, speculative) and joint dry friction (bounded) rows
    cdef int r, k, qi, side, j
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef RowC* row
    cdef double gap, speed
    d.nrow = 0
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        for k in range(rob.model.nv):
            qi = rob.dof_q[k]
            if qi < 0:
                continue
            speed = fabs(d.vel[rob.vel_offset + k])
            for side in range(3):
                if side == 0:
                    gap = rs.q[qi] - rob.q_lower[qi]
                elif side == 1:
                    gap = rob.q_upper[qi] - rs.q[qi]
                else:
                    gap = 0.0
                    if rob.dry_friction[k] <= 0.0:
                        rs.row_lam[3 * k + 2] = 0.0
                        continue
                if side < 2 and not (gap <= speed * dt + 1e-3):
                    rs.row_lam[3 * k + side] = 0.0
                    continue
                robot_minv(m, d, r)
                if d.nrow == d.row_cap:
                    d.row_cap *= 2
                    d.rows = <RowC*> realloc(d.rows, d.row_cap * sizeof(RowC))
                row = &d.rows[d.nrow]
                row.vel = rob.vel_offset + k
                row.vel0 = rob.vel_offset
                row.nv = rob.model.nv
                row.wcol = reserve_jw(d, rob.model.nv)
                for j in range(rob.model.nv):
                    d.jw[row.wcol + j] = rs.data.Minv[j * rob.model.nv + k]
                row.D = rs.data.Minv[k * rob.model.nv + k]
                row.lam = rs.row_lam[3 * k + side]
                if side == 2:
                    row.sign = 1.0
                    row.lo = -rob.dry_friction[k] * dt
                    row.hi = rob.dry_friction[k] * dt
                    row.target = 0.0
                else:
                    row.sign = 1.0 if side == 0 else -1.0
                    row.lo = 0.0
                    row.hi = INFINITY
                    row.target = -gap / dt if gap >= 0.0 else min(-PUSH_OUT_RATE * gap / dt, MAX_PUSH_OUT_SPEED)
                d.nrow += 1


cdef inline void _eig2(double a, double b, double dd, double* eig, double* rot) noexcept nogil:
    # eigenvalues and first eigenvector (cos, sin) of the symmetric [[a, b], [b, dd]]
    cdef double half = 0.5 * (a - dd)
    cdef double rad = sqrt(half * half + b * b)
    cdef double angle = 0.5 * atan2(2.0 * b, a - dd)
    eig[0] = 0.5 * (a + dd) + rad
    eig[1] = 0.5 * (a + dd) - rad
    rot[0] = cos(angle)
    rot[1] = sin(angle)


cdef inline void _mul_transpose(const double* A, const double* B, double* out) noexcept nogil:
    # out = A B^T
    cdef int r, c
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = A[3 * r] * B[3 * c] + A[3 * r + 1] * B[3 * c + 1] + A[3 * r + 2] * B[3 * c + 2]


cdef inline void _add_jw(double* D, int nrow, const double* jw, int off_j, int nv_j, int off_w,
                         int nv_w) noexcept nogil:
    # D += J W (nrow x nrow) for the side whose J is at off_j and the side whose W is at off_w
    # (both on the same DOFs)
    cdef int k, l, j
    cdef double s
    if off_j < 0 or off_w < 0:
        return
    for k in range(nrow):
        for l in range(nrow):
            s = 0.0
            for j in range(nv_j):
                s += jw[off_j + k * nv_j + j] * jw[off_w + nrow * nv_w + l * nv_w + j]
            D[nrow * k + l] += s
