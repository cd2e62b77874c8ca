# Contact generation between two collision shapes within a margin.
from sim_node.engine.geometry cimport RawContact
from sim_node.engine.types cimport ShapeC

cdef int collide(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                 int max_out) noexcept nogil
