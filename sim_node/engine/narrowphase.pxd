# Contact generation between two collision shapes within a margin.
from sim_node.engine.geometry cimport ConvexC, RawContact
from sim_node.engine.types cimport ShapeC

cdef int collide(const ShapeC* a, const ShapeC* b, double margin, RawContact* out,
                 int max_out) noexcept nogil

# the convex set of a placed SPHERE/BOX/CAPSULE/CYLINDER/CONVEX shape (GJK's input)
cdef void convex_of(const ShapeC* s, ConvexC* c) noexcept nogil
