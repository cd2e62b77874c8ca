# Distance, closest points and penetration depth between two convex sets (GJK + EPA).
#
# Conventions (shapes and frames: geometry.pxd):
#   * every shape is a core inflated by a radius: SPHERE = centre point + size[0], CAPSULE = axis
#     segment + size[0], every other convex type = itself + 0 (core_radius);
#   * DistanceResult: normal is the unit vector from B towards A and pa - pb = distance * normal.
#     Separated (distance > 0): pa, pb are the closest points. Overlapping (distance < 0):
#     pa is the point of A deepest inside B, pb the point of B deepest inside A, and translating
#     A by -distance * normal makes the two sets touch (the minimal translation).
from sim_node.engine.geometry cimport ConvexC, DistanceResult

cdef enum DistanceStatus:
    # return value of convex_distance
    DISTANCE_EXACT = 0          # GJK converged on the cores: distance is the signed distance
                                # (negative only when the radii of spheres / capsules overlap)
    DISTANCE_PENETRATION = 1    # the cores touch or overlap: distance = -(depth) from EPA
    DISTANCE_BEYOND = 2         # early exit: distance is a lower bound > max_distance, the
                                # points and normal are GJK's current (approximate) estimates


cdef void support(const ConvexC* c, const double* dir, double* out) noexcept nogil
cdef void support_core(const ConvexC* c, const double* dir, double* out) noexcept nogil
cdef double core_radius(const ConvexC* c) noexcept nogil
cdef int convex_distance(const ConvexC* a, const ConvexC* b, double max_distance,
                         DistanceResult* out) noexcept nogil
