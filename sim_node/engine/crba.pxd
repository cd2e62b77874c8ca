# Composite rigid body algorithm: the joint-space mass matrix.
from sim_node.engine.model cimport ModelC, DataC

cdef void crba(const ModelC* m, DataC* d, const double* q, double* M) noexcept nogil
