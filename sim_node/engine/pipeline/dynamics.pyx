"""Dynamics stage: the velocities the bodies would reach without constraints, and the robots'
inverse mass matrices the constraint rows need.

    (q, v, tau, tau_ext, free-body wrenches, g) => vel, vel0 (semi-implicit Euler)
    (q, armature) => B(q)^-1 of a robot, once per step, on demand (robot_minv)

Robots: v + dt ddq with ddq from ABA, or from the LTDL factorisation of B + diag(armature) when
the robot has mimic joints or dry friction (types.pxd RobotC.use_factor); the armature makes
joint damping and the PID's kd implicit. A free joint's linear velocity v_B (body axes, of the
body origin) steps as the velocity of its body's centre of mass c in the joint frame instead
(the integration stage moves c on a straight line, see there):
    vel_lin = v_B + dt (ddq_lin + w x (v_B + w x c)),
ddq_lin + w x v_B being the origin's acceleration (body axes) and w x (w x c) the
centripetal term taking it to c. Stepping v_B itself (ddq_lin holds -w x v_B, explicit)
turns each step's velocity by w dt without shrinking it: a 5 mm ball rolling at 0.5 m/s
(w dt = 0.4 at 240 Hz) gained 9 % speed per step, fell through the ground, and flew off.
A robot of one body on a free joint (createMultiBody's single shapes) is a rigid body: its
gyroscopic term is implicit as a free body's (ABA's explicit -dt I^-1 (w x I w) swapped for the
Newton step's, below), its com velocity unchanged (vel_lin -= dw x c); explicit, a box tumbling
at 20 rad/s at 240 Hz gained 13x its energy in 2 s.
Free bodies: gravity and wrench explicit, the gyroscopic term implicit."""
from libc.math cimport sqrt

from sim_node.engine.aba cimport aba_armature, aba_factored
from sim_node.engine.crba cimport crba
from sim_node.engine.ltdl cimport ltdl_factor, ltdl_inverse
from sim_node.engine.model cimport JOINT_FREE, ModelC
from sim_node.engine.spatial cimport cross3, mat3_vec, mat3T_vec, quat_to_R
from sim_node.engine.types cimport FreeBodyC, RobotC, RobotStateC


cdef bint free_velocity(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (q, v, tau, wrenches, g) => vel without constraints (semi-implicit Euler); False when
    # the forward dynamics fails (a singular mass matrix)
    cdef int r, i, k
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef const FreeBodyC* f
    cdef double* state
    cdef double* wrench
    cdef double* ddq
    cdef double R[9]
    cdef double Iw[9]
    cdef double Iinv[9]
    cdef double tmp[9]
    cdef double L[3]
    cdef double gyro[3]
    cdef double rhs[3]
    cdef double dw[3]
    cdef double wb[3]
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        ddq = rs.data.ddq
        # (not data.tmp: ABA's fallback for mimic joints uses it)
        for k in range(rob.model.nv):
            rs.tau_net[k] = rs.tau[k] + rs.tau_ext[k] - rob.damping[k] * rs.v[k]
        if rob.use_factor:
            if not aba_factored(rob.model, rs.data, rs.q, rs.v, rs.tau_net, m.g,
                                rs.armature, ddq):
                return False
            rs.factored = 1
        elif not aba_armature(rob.model, rs.data, rs.q, rs.v, rs.tau_net, m.g,
                              rs.armature, ddq):
            return False
        for k in range(rob.model.nv):
            d.vel0[rob.vel_offset + k] = rs.v[k]
            d.vel[rob.vel_offset + k] = rs.v[k] + dt * ddq[k]
        _free_joints_com_velocity(rob.model, rs.v, dt, &d.vel[rob.vel_offset])
        if rob.model.nbody == 1 and rob.model.jtype[0] == JOINT_FREE:
            _rigid_body_gyroscopic_implicit(rob.model, rs.v, dt, &d.vel[rob.vel_offset])
    for i in range(m.nfree):
        f = &m.free_bodies[i]
        if f.vel_offset < 0:
            continue
        state = &d.fstate[13 * i]
        wrench = &d.fwrench[6 * i]
        if f.kinematic:             # (its entries stay in vel, untouched by the solve)
            for k in range(6):
                d.vel[f.vel_offset + k] = 0.0
                d.vel0[f.vel_offset + k] = 0.0
            continue
        quat_to_R(&state[3], R)
        # rotation in body axes, gyroscopic term implicit (one Newton step of
        # I (w' - w) + dt w' x I w' = 0, Catto 2015): explicit Euler would add energy to
        # every tumbling body, the implicit step never does
        mat3T_vec(R, &state[10], wb)
        mat3_vec(f.I_B, wb, L)
        cross3(wb, L, gyro)
        _skew_mul(wb, f.I_B, tmp)           # [w]x I
        for k in range(9):
            Iw[k] = f.I_B[k] + dt * tmp[k]
        Iw[1] += dt * L[2]                  # - dt [I w]x
        Iw[2] -= dt * L[1]
        Iw[3] -= dt * L[2]
        Iw[5] += dt * L[0]
        Iw[6] += dt * L[1]
        Iw[7] -= dt * L[0]
        _inverse3(Iw, Iinv)
        mat3_vec(Iinv, gyro, dw)
        # external torque (world) into body axes
        mat3T_vec(R, &wrench[3], rhs)
        mat3_vec(f.Iinv_B, rhs, L)
        for k in range(3):
            wb[k] += -dt * dw[k] + dt * L[k]
        mat3_vec(R, wb, dw)
        for k in range(3):
            d.vel0[f.vel_offset + k] = state[7 + k]
            d.vel0[f.vel_offset + 3 + k] = state[10 + k]
            d.vel[f.vel_offset + k] = state[7 + k] + dt * (m.g[k] + wrench[k] / f.mass)
            d.vel[f.vel_offset + 3 + k] = dw[k]
    return True


cdef inline void _free_joints_com_velocity(const ModelC* model, const double* v, double dt,
                                           double* vel) noexcept nogil:
    # vel_lin += dt w x (v_B + w x c) on every free joint (the module docstring)
    cdef int i, k, dof
    cdef double v_com[3]
    cdef double turn[3]
    for i in range(model.nbody):
        if model.jtype[i] != JOINT_FREE:
            continue
        dof = model.col_dof[model.icol[i]]
        cross3(&v[dof + 3], &model.com[3 * i], v_com)
        for k in range(3):
            v_com[k] += v[dof + k]
        cross3(&v[dof + 3], v_com, turn)
        for k in range(3):
            vel[dof + k] += dt * turn[k]


cdef inline void _rigid_body_gyroscopic_implicit(const ModelC* model, const double* v, double dt,
                                                 double* vel) noexcept nogil:
    # a one-body robot (its free joint's DOFs are 0..5): vel_w += dt (I^-1 - J^-1) (w x I w),
    # J = I + dt ([w]x I - [I w]x) the Newton step of I (w' - w) + dt w' x I w' = 0 (as the free
    # bodies'), I about the com in body axes; vel_lin -= dw x c keeps the com's velocity
    cdef const double* w = &v[3]
    cdef const double* I = model.inertia
    cdef double L[3]
    cdef double gyro[3]
    cdef double J[9]
    cdef double Jinv[9]
    cdef double Iinv[9]
    cdef double explicit_[3]
    cdef double implicit_[3]
    cdef double dw[3]
    cdef double shift[3]
    cdef int k
    mat3_vec(I, w, L)
    cross3(w, L, gyro)
    _skew_mul(w, I, J)                  # [w]x I
    for k in range(9):
        J[k] = I[k] + dt * J[k]
    J[1] += dt * L[2]                   # - dt [I w]x
    J[2] -= dt * L[1]
    J[3] -= dt * L[2]
    J[5] += dt * L[0]
    J[6] += dt * L[1]
    J[7] -= dt * L[0]
    _inverse3(J, Jinv)
    _inverse3(I, Iinv)
    mat3_vec(Iinv, gyro, explicit_)
    mat3_vec(Jinv, gyro, implicit_)
    for k in range(3):
        dw[k] = dt * (explicit_[k] - implicit_[k])
        vel[3 + k] += dw[k]
    cross3(dw, model.com, shift)
    for k in range(3):
        vel[k] -= shift[k]


cdef void robot_minv(SceneModel m, SceneData d, int r) noexcept nogil:
    # (q, armature) => data.Minv = (B(q) + diag(armature))^-1, factorising B first unless the
    # forward dynamics already did
    cdef const RobotC* rob = &m.robots[r]
    cdef RobotStateC* rs = &d.robots[r]
    cdef int k
    if rs.minv_valid:
        return
    if not rs.factored:
        crba(rob.model, rs.data, rs.q, rs.data.M)
        for k in range(rob.model.nv):
            rs.data.M[k * rob.model.nv + k] += rs.armature[k]
        ltdl_factor(rob.model, rs.data.M, rs.data.L)
        rs.factored = 1
    ltdl_inverse(rob.model, rs.data.L, rs.data.Linv, rs.data.Minv)
    rs.minv_valid = 1


cdef inline void _skew_mul(const double* w, const double* A, double* out) noexcept nogil:
    # out = [w]x A
    cdef int c
    for c in range(3):
        out[c] = w[1] * A[6 + c] - w[2] * A[3 + c]
        out[3 + c] = w[2] * A[c] - w[0] * A[6 + c]
        out[6 + c] = w[0] * A[3 + c] - w[1] * A[c]


cdef inline void _inverse3(const double* A, double* out) noexcept nogil:
    # inverse of a 3 x 3 matrix by cofactors (the Delassus blocks are positive definite)
    cdef double det
    cdef int k
    out[0] = A[4] * A[8] - A[5] * A[7]
    out[1] = A[2] * A[7] - A[1] * A[8]
    out[2] = A[1] * A[5] - A[2] * A[4]
    out[3] = A[5] * A[6] - A[3] * A[8]
    out[4] = A[0] * A[8] - A[2] * A[6]
    out[5] = A[2] * A[3] - A[0] * A[5]
    out[6] = A[3] * A[7] - A[4] * A[6]
    out[7] = A[1] * A[6] - A[0] * A[7]
    out[8] = A[0] * A[4] - A[1] * A[3]
    det = A[0] * out[0] + A[1] * out[3] + A[2] * out[6]
    for k in range(9):
        out[k] /= det
