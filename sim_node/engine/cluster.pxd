# Reduction of a body pair's contacts to at most max_contacts.
from sim_node.engine.geometry cimport RawContact

cdef int cluster_contacts(RawContact* c, int n, int max_contacts, double merge_radius,
                          double band, int* scratch) noexcept nogil
