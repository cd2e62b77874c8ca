# Reduction of a body pair's contacts to at most max_contacts; their grouping into friction patches.
from sim_node.engine.geometry cimport RawContact

cdef enum:
    MAX_GROUPED = 64      # most contacts group_by_normal takes (>= the most a pair keeps)
    MAX_FLAT = 256        # most points prune_rigid outlines at once (more: another round)

cdef int cluster_contacts(RawContact* c, int n, int max_contacts, double merge_radius,
                          double band, int* scratch) noexcept nogil
cdef int prune_rigid(RawContact* c, int n, int max_contacts, double band, double tolerance,
                     int* scratch) noexcept nogil
cdef int group_by_normal(RawContact* c, int n, int* sizes) noexcept nogil
