# The Coriolis matrix C(q, qd) with B' - 2C skew-symmetric.
from sim_node.engine.model cimport ModelC, DataC

cdef void coriolis_matrix(const ModelC* m, DataC* d, const double* q, const double* qd,
                          double* C) noexcept nogil
