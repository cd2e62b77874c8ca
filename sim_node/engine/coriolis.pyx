"""The Coriolis matrix C(q, qd): C qd = the Coriolis/centrifugal forces and dB/dt = C + C^T
(so dB/dt - 2C is skew-symmetric), the factorisation given by the Christoffel symbols.

With body Jacobians J_k (world coordinates), C = sum_k J_k^T (I_k dJ_k/dt + B_k J_k) where
    B_k = 1/2 [ (v_k x*) I_k - I_k (v_k x) + (I_k v_k) xbar* ],   (f xbar*) m := m x* f
(Echeandia & Wensing 2021). B_k + B_k^T = dI_k/dt gives the skew property; B_k v_k = v_k x* I_k v_k
gives C qd. Grouping the sum by subtrees, for a column a of body A and b of body B:
    B an ancestor of A (or A itself):  C[a, b] = S_a^T (Ic_A Sdot_b + Bc_A S_b)
    A a strict ancestor of B:          C[a, b] = S_a^T (Ic_B Sdot_b + Bc_B S_b)
with Ic, Bc the composite (subtree) sums and Sdot_b = v_B x S_b. Cost O(n d).
"""
cimport numpy as cnp

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.kinematics cimport body_placement, body_columns, body_velocity
from sim_node.engine.model cimport Model, Data, ModelC, DataC
from sim_node.engine.spatial cimport (dot6, motion_cross, inertia_world, inertia_apply,
                                      inertia_add, inertia_to_mat, mat6_vec, mat6T_vec)

cnp.import_array()


cdef inline void _body_B(const double* I10, const double* v, double* B) noexcept nogil:
    # B = 1/2 [ (v x*) I - I (v x) + (I v) xbar* ]  (6x6 row-major), world coordinates
    cdef double I6[36]
    cdef double Xm[36]
    cdef double Xf[36]
    cdef double Iv[6]
    cdef double s
    cdef int r, c, k
    inertia_to_mat(I10, I6)
    inertia_apply(I10, v, Iv)
    for k in range(36):
        Xm[k] = 0.0
    # motion cross matrix (v x) = [[w x, v_lin x], [0, w x]]
    _skew_into(&v[3], Xm, 0, 0)
    _skew_into(&v[0], Xm, 0, 3)
    _skew_into(&v[3], Xm, 3, 3)
    # force cross matrix (v x*) = -(v x)^T
    for r in range(6):
        for c in range(6):
            Xf[6 * r + c] = -Xm[6 * c + r]
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += Xf[6 * r + k] * I6[6 * k + c] - I6[6 * r + k] * Xm[6 * k + c]
            B[6 * r + c] = 0.5 * s
    # (f xbar*) m = m x* f = [-[f]x w; -[f]x v_lin - [n]x w]   for f = [f; n] = I v
    _add_skew(Iv, B, 0, 3, -0.5)
    _add_skew(Iv, B, 3, 0, -0.5)
    _add_skew(&Iv[3], B, 3, 3, -0.5)


cdef inline void _skew_into(const double* x, double* A, int r0, int c0) noexcept nogil:
    # A[r0:r0+3, c0:c0+3] = [x]x
    A[6 * r0 + c0 + 1] = -x[2]
    A[6 * r0 + c0 + 2] = x[1]
    A[6 * (r0 + 1) + c0] = x[2]
    A[6 * (r0 + 1) + c0 + 2] = -x[0]
    A[6 * (r0 + 2) + c0] = -x[1]
    A[6 * (r0 + 2) + c0 + 1] = x[0]


cdef inline void _add_skew(const double* x, double* A, int r0, int c0, double s) noexcept nogil:
    # A[r0:r0+3, c0:c0+3] += s [x]x
    A[6 * r0 + c0 + 1] -= s * x[2]
    A[6 * r0 + c0 + 2] += s * x[1]
    A[6 * (r0 + 1) + c0] += s * x[2]
    A[6 * (r0 + 1) + c0 + 2] -= s * x[0]
    A[6 * (r0 + 2) + c0] -= s * x[1]
    A[6 * (r0 + 2) + c0 + 1] += s * x[0]


cdef void coriolis_matrix(const ModelC* m, DataC* d, const double* q, const double* qd,
                          double* C) noexcept nogil:
    # (q, qd) => (C nv x nv row-major); d.IA holds the composite B matrices
    cdef int nv = m.nv
    cdef int i, j, k, c, b, col, par, dof_c, dof_b
    cdef double vJ[6]
    cdef double F[6]
    cdef double G[6]
    cdef double H[6]
    cdef double t6[6]
    cdef double* v
    cdef double* Bc
    cdef double* Ic
    for i in range(m.nbody):
        body_placement(m, d, i, q)
        body_columns(m, d, i)
        body_velocity(m, d, i, qd, vJ)
        v = &d.v[6 * i]
        for j in range(m.ncolb[i]):
            col = m.icol[i] + j
            motion_cross(v, &d.S[6 * col], &d.Sdot[6 * col])
        inertia_world(m.mass[i], &m.com[3 * i], &m.inertia[9 * i], &d.R[9 * i], &d.p[3 * i],
                      &d.Iw[10 * i])
        for k in range(10):
            d.Ic[10 * i + k] = d.Iw[10 * i + k]
        _body_B(&d.Iw[10 * i], v, &d.IA[36 * i])
    for k in range(nv * nv):
        C[k] = 0.0
    for i in range(m.nbody - 1, -1, -1):
        Ic = &d.Ic[10 * i]
        Bc = &d.IA[36 * i]
        for c in range(m.icol[i], m.icol[i] + m.ncolb[i]):
            dof_c = m.col_dof[c]
            inertia_apply(Ic, &d.S[6 * c], F)              # F = Ic S_c
            mat6T_vec(Bc, &d.S[6 * c], G)                  # G = Bc^T S_c
            inertia_apply(Ic, &d.Sdot[6 * c], H)           # H = Ic Sdot_c + Bc S_c
            mat6_vec(Bc, &d.S[6 * c], t6)
            for k in range(6):
                H[k] += t6[k]
            j = i
            while j >= 0:
                for b in range(m.icol[j], m.icol[j] + m.ncolb[j]):
                    dof_b = m.col_dof[b]
                    C[dof_c * nv + dof_b] += dot6(F, &d.Sdot[6 * b]) + dot6(G, &d.S[6 * b])
                    if j != i:
                        C[dof_b * nv + dof_c] += dot6(&d.S[6 * b], H)
                j = m.parent[j]
        par = m.parent[i]
        if par >= 0:
            inertia_add(Ic, &d.Ic[10 * par])
            for k in range(36):
                d.IA[36 * par + k] += Bc[k]


def coriolis(Model model not None, Data data not None, q, qd):
    """C(q, qd) (nv x nv) with C qd = Coriolis forces and dB/dt - 2C skew-symmetric.
    Returns data.C, overwritten by the next call."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(qd, model.nv, "qd")
    coriolis_matrix(&model.c, &data.c, data_ptr(qa), data_ptr(va), data.c.C)
    return data.arrays["C"]
