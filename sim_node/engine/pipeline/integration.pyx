"""Integration stage: the constrained velocities become the state, and move the positions.

    (vel) => v, q (on the joint manifolds), free-body states (quaternions)

Semi-implicit Euler: positions move with the new velocities. Kinematic free bodies keep their
set velocity. A free joint turns R' = R exp([w dt]x) and moves its body's centre of mass c on a
straight line with the velocity the dynamics stage stepped (v_c = R (v_B + w x c), joint frame):
    p' + R' c = p + R c + dt v_c,    v_B' = R'^T v_c - w x c,
so a body in free flight keeps its momentum whatever it spins at (its origin would move on the
screw of a constant body twist with integrate_config, and its velocity turn with the body)."""
from libc.math cimport cos, sin, sqrt
from libc.string cimport memcpy

from sim_node.engine.integrate cimport integrate_config
from sim_node.engine.model cimport JOINT_FREE, ModelC
from sim_node.engine.spatial cimport cross3, dot3, mat3_vec, mat3T_vec, quat_to_R
from sim_node.engine.types cimport FreeBodyC, RobotC, RobotStateC


cdef void integration(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (vel) => q, v and free-body states at the end of the step
    cdef int r, i, k
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef const FreeBodyC* f
    cdef double* state
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        for k in range(rob.model.nv):
            rs.v[k] = d.vel[rob.vel_offset + k]
        integrate_config(rob.model, rs.q, rs.v, dt, rs.q_next)
        _free_joints_straight(rob.model, rs.q, rs.v, dt, rs.q_next)
        memcpy(rs.q, rs.q_next, rob.model.nq * sizeof(double))
    for i in range(m.nfree):
        f = &m.free_bodies[i]
        state = &d.fstate[13 * i]
        if not f.kinematic:
            for k in range(3):
                state[7 + k] = d.vel[f.vel_offset + k]
                state[10 + k] = d.vel[f.vel_offset + 3 + k]
        for k in range(3):
            state[k] += dt * state[7 + k]
        _quat_mul_exp(&state[3], &state[10], dt)


cdef inline void _free_joints_straight(const ModelC* model, const double* q, double* v, double dt,
                                      double* q_next) noexcept nogil:
    # (q, v, q_next's rotations) => q_next's positions, v's linear parts (the module docstring)
    cdef int i, k, iq, dof
    cdef double R[9]
    cdef double R_next[9]
    cdef double w_c[3]
    cdef double v_c[3]
    cdef double t[3]
    cdef const double* c
    for i in range(model.nbody):
        if model.jtype[i] != JOINT_FREE:
            continue
        iq = model.iq[i]
        dof = model.col_dof[model.icol[i]]
        c = &model.com[3 * i]
        cross3(&v[dof + 3], c, w_c)
        for k in range(3):
            t[k] = v[dof + k] + w_c[k]
        quat_to_R(&q[iq + 3], R)
        quat_to_R(&q_next[iq + 3], R_next)
        mat3_vec(R, t, v_c)                 # v_c, joint frame
        mat3_vec(R, c, t)
        for k in range(3):
            q_next[iq + k] = q[iq + k] + t[k] + dt * v_c[k]
        mat3_vec(R_next, c, t)
        for k in range(3):
            q_next[iq + k] -= t[k]
        mat3T_vec(R_next, v_c, t)
        for k in range(3):
            v[dof + k] = t[k] - w_c[k]


cdef inline void _quat_mul_exp(double* q, const double* w, double dt) noexcept nogil:
    # q <- exp(w dt / 2) * q for a world angular velocity w (x, y, z, w quaternions)
    cdef double ang = sqrt(dot3(w, w)) * dt
    cdef double s, c, hx, hy, hz, hw, qx, qy, qz, qw, n
    if ang < 1e-12:
        return
    s = sin(0.5 * ang) / (ang / dt)
    c = cos(0.5 * ang)
    hx = w[0] * s
    hy = w[1] * s
    hz = w[2] * s
    hw = c
    qx, qy, qz, qw = q[0], q[1], q[2], q[3]
    q[0] = hw * qx + hx * qw + hy * qz - hz * qy
    q[1] = hw * qy - hx * qz + hy * qw + hz * qx
    q[2] = hw * qz + hx * qy - hy * qx + hz * qw
    q[3] = hw * qw - hx * qx - hy * qy - hz * qz
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] /= n
    q[1] /= n
    q[2] /= n
    q[3] /= n
