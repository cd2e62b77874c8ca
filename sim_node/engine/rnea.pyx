"""Recursive Newton-Euler algorithm (Featherstone RBDA §5.3) in body coordinates.

Solves the inverse dynamics  tau = B(q) qdd + C(q, qd) + G(q)  in O(n):
    forward pass   v_i = X_i v_p + S_i qd_i
                   a_i = X_i a_p + S_i qdd_i + v_i x (S_i qd_i)     a_world = [-g; 0]
                   f_i = I_i a_i + v_i x* (I_i v_i)
    backward pass  tau_i = S_i^T f_i,  f_p += X_i^T f_i
Each body's quantities are in its own frame, where its inertia I_i and joint axis S_i are
constant; X_i moves motion vectors from the parent frame to the body frame. This needs a third
of the arithmetic of the world-frame form (no inertia rotation per call). Sizes: q (nq),
qd, qdd, tau (nv), gravity (3) [m/s^2]. Mimic joints move with multiplier x their master's rate
and feed their torque back to the master.
"""
cimport numpy as cnp

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.kinematics cimport joint_placement
from sim_node.engine.model cimport (Model, Data, ModelC, DataC, JOINT_REVOLUTE, JOINT_PRISMATIC,
                                    JOINT_SPHERICAL)
from sim_node.engine.spatial cimport (add_cross3, dot3, force_cross, force_to_parent_add,
                                      inertia_apply, motion_cross, motion_to_child)

cnp.import_array()


cdef inline void _world_acceleration(const double* gravity, double* a) noexcept nogil:
    # the world frame's fictitious acceleration that applies gravity to every body: [-g; 0]
    a[0] = -gravity[0]
    a[1] = -gravity[1]
    a[2] = -gravity[2]
    a[3] = 0.0
    a[4] = 0.0
    a[5] = 0.0


cdef inline void _backward(const ModelC* m, DataC* d, double* tau) noexcept nogil:
    # (f_i in body frames) => (tau), accumulating each body's force into its parent
    cdef int i, k, dof, par
    cdef double* f
    for k in range(m.nv):
        tau[k] = 0.0
    for i in range(m.nbody - 1, -1, -1):
        f = &d.f[6 * i]
        dof = m.col_dof[m.icol[i]]
        if m.jtype[i] == JOINT_REVOLUTE:
            tau[dof] += m.mimic_mult[i] * dot3(&m.axis[3 * i], &f[3])
        elif m.jtype[i] == JOINT_PRISMATIC:
            tau[dof] += m.mimic_mult[i] * dot3(&m.axis[3 * i], f)
        elif m.jtype[i] == JOINT_SPHERICAL:
            tau[dof] += f[3]
            tau[dof + 1] += f[4]
            tau[dof + 2] += f[5]
        else:
            for k in range(6):
                tau[dof + k] += f[k]
        par = m.parent[i]
        if par >= 0:
            force_to_parent_add(&d.R_PB[9 * i], &d.p_PB[3 * i], f, &d.f[6 * par])


cdef void body_forces_to_joints(const ModelC* m, DataC* d, double* tau) noexcept nogil:
    # (d.f: a force [f; n] per body at its origin in its axes; R_PB, p_PB of a pass over q)
    # => tau (nv) = the generalized force of those forces, sum_i J_i^T f_i; d.f becomes the
    # subtree sums
    _backward(m, d, tau)


cdef void rnea(const ModelC* m, DataC* d, const double* q, const double* qd, const double* qdd,
               const double* gravity, double* tau) noexcept nogil:
    # (q, qd, qdd, g) => (tau); leaves R_PB, p_PB, v, a, f (body frames) in d
    cdef int i, k, par, dof
    cdef double a_world[6]
    cdef double wj[3]
    cdef double Iv[6]
    cdef double tmp[6]
    cdef double s, sdd
    cdef double* v
    cdef double* a
    cdef double* f
    cdef const double* axis
    _world_acceleration(gravity, a_world)
    for i in range(m.nbody):
        par = m.parent[i]
        joint_placement(m, i, q, &d.R_PB[9 * i], &d.p_PB[3 * i])
        v = &d.v[6 * i]
        a = &d.a[6 * i]
        if par >= 0:
            motion_to_child(&d.R_PB[9 * i], &d.p_PB[3 * i], &d.v[6 * par], v)
            motion_to_child(&d.R_PB[9 * i], &d.p_PB[3 * i], &d.a[6 * par], a)
        else:
            for k in range(6):
                v[k] = 0.0
            motion_to_child(&d.R_PB[9 * i], &d.p_PB[3 * i], a_world, a)
        dof = m.col_dof[m.icol[i]]
        axis = &m.axis[3 * i]
        if m.jtype[i] == JOINT_REVOLUTE:
            # vJ = [0; s axis]: a += X v_p x vJ = [v x wj; w x wj] + S qdd
            s = m.mimic_mult[i] * qd[dof]
            sdd = m.mimic_mult[i] * qdd[dof]
            for k in range(3):
                wj[k] = s * axis[k]
            add_cross3(v, wj, a)
            add_cross3(&v[3], wj, &a[3])
            for k in range(3):
                a[3 + k] += sdd * axis[k]
                v[3 + k] += wj[k]
        elif m.jtype[i] == JOINT_PRISMATIC:
            # vJ = [s axis; 0]: a += [w x s axis; 0] + S qdd
            s = m.mimic_mult[i] * qd[dof]
            sdd = m.mimic_mult[i] * qdd[dof]
            for k in range(3):
                wj[k] = s * axis[k]
            add_cross3(&v[3], wj, a)
            for k in range(3):
                a[k] += sdd * axis[k]
                v[k] += wj[k]
        elif m.jtype[i] == JOINT_SPHERICAL:
            # vJ = [0; qd] (angular velocity, body axes): as the revolute joint, per axis
            for k in range(3):
                wj[k] = qd[dof + k]
            add_cross3(v, wj, a)
            add_cross3(&v[3], wj, &a[3])
            for k in range(3):
                a[3 + k] += qdd[dof + k]
                v[3 + k] += wj[k]
        else:
            # free joint: vJ = qd in body axes, a += (X v_p) x vJ (zero at a root: v_p = 0)
            if par >= 0:
                motion_cross(v, &qd[dof], tmp)
                for k in range(6):
                    a[k] += tmp[k]
            for k in range(6):
                v[k] += qd[dof + k]
                a[k] += qdd[dof + k]
        f = &d.f[6 * i]
        inertia_apply(&m.inertia_B[10 * i], a, f)
        inertia_apply(&m.inertia_B[10 * i], v, Iv)
        force_cross(v, Iv, tmp)
        for k in range(6):
            f[k] += tmp[k]
    _backward(m, d, tau)


cdef void gravity_forces(const ModelC* m, DataC* d, const double* q, const double* gravity,
                         double* tau) noexcept nogil:
    # (q, g) => (G(q)): RNEA at rest, where a_i = X_i a_p and f_i = I_i a_i
    cdef int i, k, par
    cdef double a_world[6]
    cdef double* a
    _world_acceleration(gravity, a_world)
    for i in range(m.nbody):
        par = m.parent[i]
        joint_placement(m, i, q, &d.R_PB[9 * i], &d.p_PB[3 * i])
        a = &d.a[6 * i]
        motion_to_child(&d.R_PB[9 * i], &d.p_PB[3 * i], &d.a[6 * par] if par >= 0 else a_world, a)
        inertia_apply(&m.inertia_B[10 * i], a, &d.f[6 * i])
    _backward(m, d, tau)


cdef double _zero_gravity[3]
_zero_gravity[:] = [0.0, 0.0, 0.0]


def inverse_dynamics(Model model not None, Data data not None, q, qd, qdd, gravity=None):
    """tau = B(q) qdd + C(q, qd) + G(q) for the gravity vector `gravity` [m/s^2]
    (None: zero gravity). Returns data.tau (nv,), overwritten by the next call."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(qd, model.nv, "qd")
    cdef cnp.ndarray aa = as_vector(qdd, model.nv, "qdd")
    cdef cnp.ndarray ga
    cdef const double* g = _zero_gravity
    if gravity is not None:
        ga = as_vector(gravity, 3, "gravity")
        g = data_ptr(ga)
    rnea(&model.c, &data.c, data_ptr(qa), data_ptr(va), data_ptr(aa), g, data.c.tau)
    return data.arrays["tau"]


def coriolis_forces(Model model not None, Data data not None, q, qd):
    """C(q, qd) = the Coriolis and centrifugal generalized forces (nv,) [N or N m]."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(qd, model.nv, "qd")
    cdef double* zero = data.c.tmp
    cdef int k
    for k in range(model.nv):
        zero[k] = 0.0
    rnea(&model.c, &data.c, data_ptr(qa), data_ptr(va), zero, _zero_gravity, data.c.tau)
    return data.arrays["tau"]


def generalized_gravity(Model model not None, Data data not None, q, gravity):
    """G(q) for the gravity vector `gravity` [m/s^2]: the generalized force gravity exerts
    with the sign of the seed's equation B qdd + C + G = tau (nv,)."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray ga = as_vector(gravity, 3, "gravity")
    gravity_forces(&model.c, &data.c, data_ptr(qa), data_ptr(ga), data.c.tau)
    return data.arrays["tau"]
