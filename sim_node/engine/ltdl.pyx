"""LTDL factorisation B = L^T D L exploiting the branch-induced sparsity of the mass matrix
(Featherstone RBDA §6.5). L is unit lower triangular with L[k, i] != 0 only when DOF i is an
ancestor of DOF k (dof_parent chain), so no fill-in occurs; cost O(n d^2) instead of O(n^3).
Storage: one nv x nv row-major matrix holding D on the diagonal and L strictly below it.
Models with mimic joints use a chain dof_parent (dense factorisation), see the model builder.
"""
cimport numpy as cnp

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.crba cimport crba
from sim_node.engine.model cimport Model, Data, ModelC, DataC

cnp.import_array()


cdef int ltdl_factor(const ModelC* m, const double* M, double* L) noexcept nogil:
    # (M) => (L, D packed in L); returns 0 when a pivot is not positive (B singular)
    cdef int n = m.nv
    cdef int k, i, j
    cdef double a
    for k in range(n * n):
        L[k] = M[k]
    for k in range(n - 1, -1, -1):
        if not L[k * n + k] > 0.0:
            return 0
        i = m.dof_parent[k]
        while i >= 0:
            a = L[k * n + i] / L[k * n + k]
            j = i
            while j >= 0:
                L[i * n + j] -= a * L[k * n + j]
                j = m.dof_parent[j]
            L[k * n + i] = a
            i = m.dof_parent[i]
    return 1


cdef void ltdl_solve(const ModelC* m, const double* L, double* x) noexcept nogil:
    # x <- B^-1 x, with B = L^T D L
    cdef int n = m.nv
    cdef int i, j
    for i in range(n - 1, -1, -1):
        j = m.dof_parent[i]
        while j >= 0:
            x[j] -= L[i * n + j] * x[i]
            j = m.dof_parent[j]
    for i in range(n):
        x[i] /= L[i * n + i]
    for i in range(n):
        j = m.dof_parent[i]
        while j >= 0:
            x[i] -= L[i * n + j] * x[j]
            j = m.dof_parent[j]


cdef void ltdl_inverse(const ModelC* m, const double* L, double* Linv, double* Minv) noexcept nogil:
    # (L, D) => (B^-1 = X D^-1 X^T with X = L^-1). X inherits the sparsity of L: X[k, j] != 0
    # only for j an ancestor of k, so B^-1[a, b] sums over the ancestors of b only.
    cdef int n = m.nv
    cdef int k, i, j, a, b
    cdef double s
    cdef double* X = Linv
    for k in range(n * n):
        X[k] = 0.0
    for k in range(n):
        X[k * n + k] = 1.0
        j = m.dof_parent[k]
        while j >= 0:
            # (L X)[k, j] = 0:  X[k, j] = -sum over i on the path k -> j of L[k, i] X[i, j]
            s = L[k * n + j]
            i = m.dof_parent[k]
            while i != j:
                s += L[k * n + i] * X[i * n + j]
                i = m.dof_parent[i]
            X[k * n + j] = -s
            j = m.dof_parent[j]
    for a in range(n):
        for b in range(a + 1):
            s = 0.0
            j = b
            while j >= 0:
                s += X[a * n + j] * X[b * n + j] / L[j * n + j]
                j = m.dof_parent[j]
            Minv[a * n + b] = s
            Minv[b * n + a] = s


def mass_matrix_inverse(Model model not None, Data data not None, q):
    """B(q)^-1 (nv x nv). Returns data.Minv, overwritten by the next call.
    Raises ValueError if B(q) is singular (a moving subtree without mass)."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    crba(&model.c, &data.c, data_ptr(qa), data.c.M)
    if not ltdl_factor(&model.c, data.c.M, data.c.L):
        raise ValueError("the mass matrix is singular: a moving subtree has no mass or inertia")
    ltdl_inverse(&model.c, data.c.L, data.c.Linv, data.c.Minv)
    return data.arrays["Minv"]
