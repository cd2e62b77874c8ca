# Contact generation between two collision shapes within a margin.
from sim_node.engine.scene cimport ShapeC

ctypedef struct RawContact:
    double pa[3]          # point on the surface of A, world
    double pb[3]          # point on the surface of B, world
    double normal[3]      # unit, from B towards A
    double distance       # signed separation of the real surfaces along normal [m]

cdef int collide(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                 int max_out) noexcept nogil
