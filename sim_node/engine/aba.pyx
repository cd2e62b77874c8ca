"""Articulated body algorithm (Featherstone RBDA §7.3, in world coordinates).

Solves the forward dynamics  B(q) qdd = tau - C(q, qd) - G(q)  in O(n):
    pass 1  v_i = v_p + S_i qd_i,  c_i = v_i x (S_i qd_i),  IA_i = I_i,  pA_i = v_i x* I_i v_i
    pass 2  U_i = IA_i S_i,  D_i = S_i^T U_i,  u_i = tau_i - S_i^T pA_i
            IA_p += IA_i - U_i D_i^-1 U_i^T,  pA_p += pA_i + Ia_i c_i + U_i D_i^-1 u_i
    pass 3  a_i = a_p + c_i (a_world = [-g; 0]),  qdd_i = D_i^-1 (u_i - U_i^T a_i),
            a_i += S_i qdd_i
In world coordinates articulated inertias of children add to their parent without transforms.
Mimic joints couple DOFs across branches, which the recursion cannot express: such models are
solved by CRBA + RNEA + the sparse LTDL solve instead (O(n^2)).
"""
cimport numpy as cnp
from libc.math cimport sqrt

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.crba cimport crba
from sim_node.engine.kinematics cimport body_placement, body_columns, body_velocity
from sim_node.engine.ltdl cimport ltdl_factor, ltdl_solve
from sim_node.engine.model cimport Model, Data, ModelC, DataC
from sim_node.engine.rnea cimport rnea
from sim_node.engine.spatial cimport (dot6, motion_cross, force_cross, inertia_world,
                                      inertia_apply, inertia_to_mat, mat6_vec)

cnp.import_array()


cdef inline int spd_inverse(const double* A, int n, double* out) noexcept nogil:
    # out = A^-1 for a symmetric positive definite n x n A, n <= 6, both row-major with stride
    # n (Cholesky); returns 0 if not SPD. Inline: called with a constant n, the compiler
    # unrolls it for that size
    cdef double Lc[36]
    cdef double Li[36]
    cdef double s
    cdef int i, j, k
    for i in range(n * n):
        Lc[i] = 0.0
        Li[i] = 0.0
    for j in range(n):
        s = A[n * j + j]
        for k in range(j):
            s -= Lc[n * j + k] * Lc[n * j + k]
        if not s > 0.0:
            return 0
        Lc[n * j + j] = sqrt(s)
        for i in range(j + 1, n):
            s = A[n * i + j]
            for k in range(j):
                s -= Lc[n * i + k] * Lc[n * j + k]
            Lc[n * i + j] = s / Lc[n * j + j]
    # Li = Lc^-1 (lower triangular), then A^-1 = Li^T Li
    for j in range(n):
        Li[n * j + j] = 1.0 / Lc[n * j + j]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s -= Lc[n * i + k] * Li[n * k + j]
            Li[n * i + j] = s / Lc[n * i + i]
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for k in range(j, n):
                s += Li[n * k + i] * Li[n * k + j]
            out[n * i + j] = s
            out[n * j + i] = s
    return 1


cdef int aba_factored(const ModelC* m, DataC* d, const double* q, const double* qd,
                      const double* tau, const double* gravity, const double* armature,
                      double* ddq) noexcept nogil:
    # (q, qd, tau, g, a) => (qdd) by (B + diag(a)) qdd = tau - (C + G) with the sparse LTDL
    # solve (armature a may be NULL); leaves B + diag(a) in d.M and its factor in d.L (for
    # callers that need its inverse too); 0 if it is singular
    cdef int k
    for k in range(m.nv):
        d.tmp[k] = 0.0
    rnea(m, d, q, qd, d.tmp, gravity, ddq)
    for k in range(m.nv):
        ddq[k] = tau[k] - ddq[k]
    crba(m, d, q, d.M)
    if armature != NULL:
        for k in range(m.nv):
            d.M[k * m.nv + k] += armature[k]
    if not ltdl_factor(m, d.M, d.L):
        return 0
    ltdl_solve(m, d.L, ddq)
    return 1


cdef inline int _articulate_multi(const ModelC* m, DataC* d, int i, int nc, const double* tau,
                                  const double* armature) noexcept nogil:
    # ABA pass 2 for body i with nc = 3 (spherical) or 6 (free) columns: U = IA S,
    # D = S^T IA S (nc x nc, its inverse in d.Dinv), u = tau - S^T pA; a body with a parent
    # passes on Ia = IA - U D^-1 U^T and pA + Ia c + U D^-1 u. Inline with a constant nc.
    cdef double D[36]
    cdef double W[36]
    cdef double Ia[36]
    cdef double t6[6]
    cdef double s
    cdef int j, r, k, col
    cdef int c0 = m.icol[i], par = m.parent[i]
    cdef double* IA = &d.IA[36 * i]
    cdef double* pA = &d.pA[6 * i]
    cdef double* Dinv = &d.Dinv[36 * i]
    for j in range(nc):
        col = c0 + j
        mat6_vec(IA, &d.S[6 * col], &d.U[6 * col])
        d.u[col] = tau[m.col_dof[col]] - dot6(&d.S[6 * col], pA)
    for j in range(nc):
        for r in range(nc):
            D[nc * j + r] = dot6(&d.S[6 * (c0 + j)], &d.U[6 * (c0 + r)])
        if armature != NULL:
            D[(nc + 1) * j] += armature[m.col_dof[c0 + j]]
    if not spd_inverse(D, nc, Dinv):
        return 0
    if par < 0:
        return 1
    # W = U D^-1 (6 x nc, stored by columns)
    for r in range(6):
        for j in range(nc):
            s = 0.0
            for k in range(nc):
                s += d.U[6 * (c0 + k) + r] * Dinv[nc * k + j]
            W[6 * j + r] = s
    for r in range(6):
        for k in range(6):
            s = IA[6 * r + k]
            for j in range(nc):
                s -= W[6 * j + r] * d.U[6 * (c0 + j) + k]
            Ia[6 * r + k] = s
    mat6_vec(Ia, &d.c[6 * i], t6)
    for k in range(6):
        s = pA[k] + t6[k]
        for j in range(nc):
            s += W[6 * j + k] * d.u[c0 + j]
        d.pA[6 * par + k] += s
    for k in range(36):
        d.IA[36 * par + k] += Ia[k]
    return 1


cdef inline void _accelerate_multi(const ModelC* m, DataC* d, int i, int nc,
                                   double* ddq) noexcept nogil:
    # ABA pass 3 for body i with nc = 3 or 6 columns (d.a[i] holds a_p + c on entry):
    # qdd = D^-1 (u - U^T a), a += S qdd. Inline with a constant nc.
    cdef double rhs[6]
    cdef double x[6]
    cdef double s
    cdef int j, k, col
    cdef int c0 = m.icol[i]
    cdef double* a = &d.a[6 * i]
    cdef const double* Dinv = &d.Dinv[36 * i]
    for j in range(nc):
        col = c0 + j
        rhs[j] = d.u[col] - dot6(&d.U[6 * col], a)
    for j in range(nc):
        s = 0.0
        for k in range(nc):
            s += Dinv[nc * j + k] * rhs[k]
        x[j] = s
    for j in range(nc):
        col = c0 + j
        ddq[m.col_dof[col]] = x[j]
        for k in range(6):
            a[k] += d.S[6 * col + k] * x[j]


cdef int aba(const ModelC* m, DataC* d, const double* q, const double* qd, const double* tau,
             const double* gravity, double* ddq) noexcept nogil:
    # (q, qd, tau, g) => (qdd); returns 0 if a joint-space articulated inertia is singular
    return aba_armature(m, d, q, qd, tau, gravity, NULL, ddq)


cdef int aba_armature(const ModelC* m, DataC* d, const double* q, const double* qd,
                      const double* tau, const double* gravity, const double* armature,
                      double* ddq) noexcept nogil:
    # (q, qd, tau, g, a) => (qdd) of (B + diag(a)) qdd = tau - (C + G): a joint-space inertia
    # a (NULL: none) added to each DOF (rotor armature, or dt times a damping made implicit)
    cdef int i, k, r, col, par, nc
    cdef double vJ[6]
    cdef double Iv[6]
    cdef double Ia[36]
    cdef double t6[6]
    cdef double x[1]
    cdef double Dv, uv
    cdef double* v
    cdef double* IA
    cdef double* pA
    cdef double* U
    cdef const double* S
    if m.has_mimic:
        return aba_factored(m, d, q, qd, tau, gravity, armature, ddq)
    # pass 1: kinematics, velocities, bias forces
    for i in range(m.nbody):
        body_placement(m, d, i, q)
        body_columns(m, d, i)
        body_velocity(m, d, i, qd, vJ)
        v = &d.v[6 * i]
        motion_cross(v, vJ, &d.c[6 * i])
        inertia_world(m.mass[i], &m.com[3 * i], &m.inertia[9 * i], &d.R[9 * i], &d.p[3 * i],
                      &d.Iw[10 * i])
        inertia_to_mat(&d.Iw[10 * i], &d.IA[36 * i])
        inertia_apply(&d.Iw[10 * i], v, Iv)
        force_cross(v, Iv, &d.pA[6 * i])
    # pass 2: articulated inertias and bias forces, leaves to root
    for i in range(m.nbody - 1, -1, -1):
        IA = &d.IA[36 * i]
        pA = &d.pA[6 * i]
        par = m.parent[i]
        nc = m.ncolb[i]
        if nc == 1:
            col = m.icol[i]
            S = &d.S[6 * col]
            U = &d.U[6 * col]
            mat6_vec(IA, S, U)
            Dv = dot6(S, U)
            if armature != NULL:
                Dv += armature[m.col_dof[col]]
            if not Dv > 0.0:
                return 0
            d.Dinv[36 * i] = 1.0 / Dv
            uv = tau[m.col_dof[col]] - dot6(S, pA)
            d.u[col] = uv
            if par >= 0:
                for r in range(6):
                    for k in range(6):
                        Ia[6 * r + k] = IA[6 * r + k] - U[r] * U[k] / Dv
                mat6_vec(Ia, &d.c[6 * i], t6)
                for k in range(6):
                    d.pA[6 * par + k] += pA[k] + t6[k] + U[k] * uv / Dv
                for k in range(36):
                    d.IA[36 * par + k] += Ia[k]
        elif nc == 6:
            if not _articulate_multi(m, d, i, 6, tau, armature):
                return 0
        elif not _articulate_multi(m, d, i, 3, tau, armature):
            return 0
    # pass 3: accelerations, root to leaves
    for i in range(m.nbody):
        par = m.parent[i]
        v = &d.a[6 * i]   # spatial acceleration of body i
        if par >= 0:
            for k in range(6):
                v[k] = d.a[6 * par + k] + d.c[6 * i + k]
        else:
            v[0] = -gravity[0] + d.c[6 * i]
            v[1] = -gravity[1] + d.c[6 * i + 1]
            v[2] = -gravity[2] + d.c[6 * i + 2]
            v[3] = d.c[6 * i + 3]
            v[4] = d.c[6 * i + 4]
            v[5] = d.c[6 * i + 5]
        nc = m.ncolb[i]
        if nc == 1:
            col = m.icol[i]
            x[0] = d.Dinv[36 * i] * (d.u[col] - dot6(&d.U[6 * col], v))
            ddq[m.col_dof[col]] = x[0]
            for k in range(6):
                v[k] += d.S[6 * col + k] * x[0]
        elif nc == 6:
            _accelerate_multi(m, d, i, 6, ddq)
        else:
            _accelerate_multi(m, d, i, 3, ddq)
    return 1


cdef double _zero_gravity[3]
_zero_gravity[:] = [0.0, 0.0, 0.0]


def forward_dynamics(Model model not None, Data data not None, q, qd, tau, gravity=None):
    """qdd = B(q)^-1 (tau - C(q, qd) - G(q)) for the gravity vector `gravity` [m/s^2]
    (None: zero gravity). Returns data.ddq (nv,), overwritten by the next call."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray va = as_vector(qd, model.nv, "qd")
    cdef cnp.ndarray ta = as_vector(tau, model.nv, "tau")
    cdef cnp.ndarray ga
    cdef const double* g = _zero_gravity
    if gravity is not None:
        ga = as_vector(gravity, 3, "gravity")
        g = data_ptr(ga)
    if not aba(&model.c, &data.c, data_ptr(qa), data_ptr(va), data_ptr(ta), g, data.c.ddq):
        raise ValueError("forward dynamics is singular: a moving subtree has no mass or inertia")
    return data.arrays["ddq"]
