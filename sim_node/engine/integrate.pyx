"""Integration of a configuration along a velocity: q' = q (+) v dt.

Revolute and prismatic coordinates add v dt. The free joint moves along the SE(3) geodesic of
its body-frame twist (the exponential map, as Pinocchio's integrate):
    R' = R exp([w dt]x),   p' = p + R V(w dt) v_lin dt,
    V(phi) = I + (1 - cos|phi|)/|phi|^2 [phi]x + (|phi| - sin|phi|)/|phi|^3 [phi]x^2,
and the quaternion is renormalised. Sizes: q, out (nq); v (nv); dt [s].
"""
cimport numpy as cnp
from libc.math cimport cos, sin, sqrt

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.model cimport Model, ModelC, JOINT_FREE
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
    cdef double theta, a, b, s, c, qx, qy, qz, qw, hx, hy, hz, hw, n
    for k in range(m.nq):
        out[k] = q[k]
    for i in range(m.nbody):
        iq = m.iq[i]
        if m.jtype[i] != JOINT_FREE:
            continue
        dof = m.col_dof[m.icol[i]]
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
        # q' = q * exp(w / 2) as quaternions (x, y, z, w)
        if theta < 1e-6:
            s = 0.5 - theta * theta / 48.0
        else:
            s = sin(0.5 * theta) / theta
        c = cos(0.5 * theta)
        hx, hy, hz, hw = w[0] * s, w[1] * s, w[2] * s, c
        qx, qy, qz, qw = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
        out[iq + 3] = qw * hx + qx * hw + qy * hz - qz * hy
        out[iq + 4] = qw * hy - qx * hz + qy * hw + qz * hx
        out[iq + 5] = qw * hz + qx * hy - qy * hx + qz * hw
        out[iq + 6] = qw * hw - qx * hx - qy * hy - qz * hz
        n = sqrt(out[iq + 3] * out[iq + 3] + out[iq + 4] * out[iq + 4]
                 + out[iq + 5] * out[iq + 5] + out[iq + 6] * out[iq + 6])
        for k in range(4):
            out[iq + 3 + k] /= n
    # independent 1-DOF joints: q += v dt (mimic joints carry no coordinate of their own)
    for i in range(m.nbody):
        if m.jtype[i] == JOINT_FREE:
            continue
        dof = m.col_dof[m.icol[i]]
        if m.dof_body[dof] == i:
            out[m.iq[i]] = q[m.iq[i]] + v[dof] * dt


def integrate(Model model not None, q, v, double dt):
    """q (+) v dt as a new array (nq,)."""
    import numpy as np
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(v, model.nv, "v")
    cdef cnp.ndarray out = np.empty(model.nq)
    integrate_config(&model.c, data_ptr(qa), data_ptr(va), dt, data_ptr(out))
    return out
