# Closest points and signed distance between two placed collision shapes (queries/distance.pyx).
from sim_node.engine.geometry cimport DistanceResult
from sim_node.engine.types cimport ShapeC

cdef bint shape_distance(const ShapeC* a, const ShapeC* b, double max_distance,
                         DistanceResult* out) noexcept nogil
