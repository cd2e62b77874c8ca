# Velocity-level constraint solver (projected Gauss-Seidel).
from sim_node.engine.constraint cimport ContactC, PatchC, RowC, UserRowC

cdef enum:
    MAX_PATCH_CONTACTS = 61   # a patch block holds its contacts + 3 friction rows (<= 64)

cdef void patch_block(const PatchC* p, const ContactC* contacts, const double* jw,
                      double* A) noexcept nogil
cdef int pgs_solve(ContactC* contacts, PatchC* patches, int npatch, RowC* rows, int nrow,
                   UserRowC* urows, int nurow, const double* jw, const double* blocks,
                   double* vel, int max_iterations, double tolerance,
                   double regularization) noexcept nogil
