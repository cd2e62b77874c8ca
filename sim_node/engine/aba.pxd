# Articulated body algorithm: forward dynamics.
from sim_node.engine.model cimport ModelC, DataC

cdef int aba(const ModelC* m, DataC* d, const double* q, const double* qd, const double* tau,
             const double* gravity, double* ddq) noexcept nogil
cdef int aba_armature(const ModelC* m, DataC* d, const double* q, const double* qd,
                      const double* tau, const double* gravity, const double* armature,
                      double* ddq) noexcept nogil
cdef int aba_factored(const ModelC* m, DataC* d, const double* q, const double* qd,
                      const double* tau, const double* gravity, const double* armature,
                      double* ddq) noexcept nogil
