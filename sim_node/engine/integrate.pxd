# Configuration integration on the joint manifolds.
from sim_node.engine.model cimport ModelC

cdef void integrate_config(const ModelC* m, const double* q, const double* v, double dt,
                           double* out) noexcept nogil
