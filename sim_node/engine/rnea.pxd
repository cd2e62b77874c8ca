# Recursive Newton-Euler inverse dynamics and the terms derived from it.
from sim_node.engine.model cimport ModelC, DataC

cdef void rnea(const ModelC* m, DataC* d, const double* q, const double* qd, const double* qdd,
               const double* gravity, double* tau) noexcept nogil
cdef void gravity_forces(const ModelC* m, DataC* d, const double* q, const double* gravity,
                         double* tau) noexcept nogil
cdef void body_forces_to_joints(const ModelC* m, DataC* d, double* tau) noexcept nogil
