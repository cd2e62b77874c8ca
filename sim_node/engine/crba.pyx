"""Composite rigid body algorithm (Featherstone RBDA §6.2, in world coordinates).

Computes the joint-space inertia matrix B(q) (nv x nv, symmetric positive definite for a robot
whose every subtree has mass) in O(n d), d the tree depth:
    Ic_i = I_i + sum over children Ic_c                     (composite inertia, world frame)
    B[j, i] = S_j^T Ic_i S_i   for every j on the path from i to the root
Expressed in world coordinates the composite inertias add without frame transforms.
Mimic columns accumulate into their master's DOF: B = sum_k J_k^T I_k J_k holds column-wise.
"""
cimport numpy as cnp

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.kinematics cimport body_placement, body_columns
from sim_node.engine.model cimport Model, Data, ModelC, DataC
from sim_node.engine.spatial cimport dot6, inertia_world, inertia_apply, inertia_add

cnp.import_array()


cdef void crba(const ModelC* m, DataC* d, const double* q, double* M) noexcept nogil:
    # (q) => (M nv x nv row-major); also leaves R, p, S, Iw, Ic in d
    cdef int nv = m.nv
    cdef int i, j, k, c, c2, dof, dof2, par
    cdef double F[6]
    cdef double val
    cdef double* Ic
    for i in range(m.nbody):
        body_placement(m, d, i, q)
        body_columns(m, d, i)
        inertia_world(m.mass[i], &m.com[3 * i], &m.inertia[9 * i], &d.R[9 * i], &d.p[3 * i],
                      &d.Iw[10 * i])
        for k in range(10):
            d.Ic[10 * i + k] = d.Iw[10 * i + k]
    for k in range(nv * nv):
        M[k] = 0.0
    for i in range(m.nbody - 1, -1, -1):
        Ic = &d.Ic[10 * i]   # complete: every child (higher index) was added already
        for c in range(m.icol[i], m.icol[i] + m.ncolb[i]):
            inertia_apply(Ic, &d.S[6 * c], F)
            dof = m.col_dof[c]
            # within the body, columns up to c (mirrored, so B is exactly symmetric)
            for c2 in range(m.icol[i], c + 1):
                val = dot6(&d.S[6 * c2], F)
                dof2 = m.col_dof[c2]
                M[dof2 * nv + dof] += val
                if c2 != c:
                    M[dof * nv + dof2] += val
            j = m.parent[i]
            while j >= 0:
                for c2 in range(m.icol[j], m.icol[j] + m.ncolb[j]):
                    val = dot6(&d.S[6 * c2], F)
                    dof2 = m.col_dof[c2]
                    M[dof2 * nv + dof] += val
                    M[dof * nv + dof2] += val
                j = m.parent[j]
        par = m.parent[i]
        if par >= 0:
            inertia_add(Ic, &d.Ic[10 * par])


def mass_matrix(Model model not None, Data data not None, q):
    """B(q) (nv x nv) [kg, kg m, kg m^2]. Returns data.M, overwritten by the next call."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    crba(&model.c, &data.c, data_ptr(qa), data.c.M)
    return data.arrays["M"]
