"""Integration of a configuration along a velocity: q' = q (+) v dt.

Revolute and prismatic coordinates add v dt. The free joint moves along the SE(3) geodesic of
its body-frame twist (the exponential map, as Pinocchio's integrate):
    R' = R exp([w dt]x),   p' = p + R V(w dt) v_lin dt,
    V(phi) = I + (1 - cos|phi|)/|phi|^2 [phi]x + (|phi| - sin|phi|)/|phi|^3 [phi]x^2;
the spherical joint along the SO(3) geodesic of its body-frame angular velocity, R' = R exp([w dt]x).
Quaternions are renormalised. Sizes: q, out (nq); v (nv); dt [s].
"""
cimport numpy as cnp
from libc.math cimport cos, sin, sqrt

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.model cimport Model, ModelC, JOINT_FREE, JOINT_SPHERICAL
from sim_node.engine.spatial cimport cross3, mat3_vec, quat_to_R

cnp.import_array()


cdef void integrate_config(const ModelC* m, const double* q, const double* v, double dt,
                           double* out) noexcept nogil:
    # (q, v, dt) => (q')
    cdef int i, iq, k, dof
    cdef double w[3]
    cdef double u[3]
    cdef double t[3]
    cdef double R[9]
    cdef double theta, a, b
    for k in range(m.nq):
        out[k] = q[k]
    for i in range(m.nbody):
        iq = m.iq[i]
        dof = m.col_dof[m.icol[i]]
        if m.jtype[i] == JOINT_SPHERICAL:
            _quat_integrate(&q[iq], &v[dof], dt, &out[iq])
            continue
        if m.jtype[i] != JOINT_FREE:
            # independent 1-DOF joints: q += v dt (mimic joints carry no coordinate of their own)
            if m.dof_body[dof] == i:
                out[iq] = q[iq] + v[dof] * dt
            continue
        for k in range(3):
            w[k] = v[dof + 3 + k] * dt
            u[k] = v[dof + k] * dt
        theta = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
        if theta < 1e-6:   # series expansions of (1 - cos)/theta^2 and (theta - sin)/theta^3
            a = 0.5 - theta * theta / 24.0
            b = 1.0 / 6.0 - theta * theta / 120.0
        else:
            a = (1.0 - cos(theta)) / (theta * theta)
            b = (theta - sin(theta)) / (theta * theta * theta)
        # t = V(w) u = u + a w x u + b w x (w x u)
        cross3(w, u, t)
        cross3(w, t, R)          # R used as scratch for w x (w x u)
        for k in range(3):
            t[k] = u[k] + a * t[k] + b * R[k]
        quat_to_R(&q[iq + 3], R)
        mat3_vec(R, t, u)
        for k in range(3):
            out[iq + k] = q[iq + k] + u[k]
        _quat_integrate(&q[iq + 3], &v[dof + 3], dt, &out[iq + 3])


cdef inline void _quat_integrate(const double* q, const double* w_B, double dt,
                                 double* out) noexcept nogil:
    # out = q * exp(w_B dt / 2) as unit quaternions (x, y, z, w), renormalised
    cdef double w[3]
    cdef double theta, s, c, hx, hy, hz, hw, qx, qy, qz, qw, n
    cdef int k
    for k in range(3):
        w[k] = w_B[k] * dt
    theta = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    if theta < 1e-6:
        s = 0.5 - theta * theta / 48.0
    else:
        s = sin(0.5 * theta) / theta
    c = cos(0.5 * theta)
    hx, hy, hz, hw = w[0] * s, w[1] * s, w[2] * s, c
    qx, qy, qz, qw = q[0], q[1], q[2], q[3]
    out[0] = qw * hx + qx * hw + qy * hz - qz * hy
    out[1] = qw * hy - qx * hz + qy * hw + qz * hx
    out[2] = qw * hz + qx * hy - qy * hx + qz * hw
    out[3] = qw * hw - qx * hx - qy * hy - qz * hz
    n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
    for k in range(4):
        out[k] /= n


def integrate(Model model not None, q, v, double dt):
    """q (+) v dt as a new array (nq,)."""
    import numpy as np
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(v, model.nv, "v")
    cdef cnp.ndarray out = np.empty(model.nq)
    integrate_config(&model.c, data_ptr(qa), data_ptr(va), dt, data_ptr(out))
    return out
