# Sparse LTDL factorisation of the mass matrix, solves and the inverse.
from sim_node.engine.model cimport ModelC

cdef int ltdl_factor(const ModelC* m, const double* M, double* L) noexcept nogil
cdef void ltdl_solve(const ModelC* m, const double* L, double* x) noexcept nogil
cdef void ltdl_inverse(const ModelC* m, const double* L, double* Linv, double* Minv) noexcept nogil
