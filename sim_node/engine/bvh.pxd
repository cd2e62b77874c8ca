# AABB tree over items (a mesh's triangles): binding of the BVH struct and its queries.
#
# A BVH struct only points into numpy arrays (see build_bvh for their names and shapes); whoever
# fills one with bvh_bind keeps the dict alive as long as the struct is used. BVHTree does both.
# Boxes are [lo x, y, z, hi x, y, z] and closed: boxes that touch overlap.
from sim_node.engine.geometry cimport BVH

cdef enum:
    # Deepest tree bvh_bind accepts (edges root -> leaf). build_bvh's median splits give
    # ceil(log2(nitem / leaf_size)) <= 31 for any int count, so only foreign arrays can hit it.
    BVH_MAX_DEPTH = 60
    # Fixed query stacks: a depth-first walk that pops a node and pushes its two children
    # holds at most depth + 1 nodes; the pair walk descends one side per step and holds at most
    # depth_a + depth_b + 1 node pairs.
    BVH_STACK = 64
    BVH_PAIR_STACK = 128


cdef class BVHTree:
    # A BVH struct and the arrays it points into (read-only copies, validated by bvh_bind).
    cdef BVH c
    cdef readonly object arrays


cdef int bvh_bind(BVH* t, dict arrays) except -1
cdef int bvh_query_aabb(const BVH* t, const double* lo, const double* hi, int* out,
                        int max_out) noexcept nogil
cdef int bvh_query_aabb_from(const BVH* t, const double* lo, const double* hi, int skip, int* out,
                             int max_out) noexcept nogil
cdef int bvh_query_pair(const BVH* a, const BVH* b, const double* R_ab, const double* p_ab,
                        double margin, int* out_pairs, int max_pairs) noexcept nogil


cdef inline void box_transform(const double* box, const double* R, const double* p,
                               double* out) noexcept nogil:
    # out = the AABB of {R x + p : x in box} (Arvo): out_r = p_r + sum_k [min, max](R_rk lo_k,
    # R_rk hi_k). Every term is monotone in the box, so a box inside another maps inside the
    # other's image also after rounding: pruning by node boxes never loses an item pair.
    cdef int r, k
    cdef double u, v, lo, hi
    for r in range(3):
        lo = p[r]
        hi = p[r]
        for k in range(3):
            u = R[3 * r + k] * box[k]
            v = R[3 * r + k] * box[3 + k]
            if u < v:
                lo += u
                hi += v
            else:
                lo += v
                hi += u
        out[r] = lo
        out[3 + r] = hi


cdef inline bint box_overlap(const double* box, const double* lo, const double* hi) noexcept nogil:
    # box and [lo, hi] share a point (closed intervals on every axis)
    return (box[0] <= hi[0] and lo[0] <= box[3] and box[1] <= hi[1] and lo[1] <= box[4]
            and box[2] <= hi[2] and lo[2] <= box[5])


cdef inline bint box_overlap_margin(const double* a, const double* b, double margin) noexcept nogil:
    # a grown by `margin` on every side overlaps b: the gap along each axis is <= margin
    return (a[0] - margin <= b[3] and b[0] <= a[3] + margin
            and a[1] - margin <= b[4] and b[1] <= a[4] + margin
            and a[2] - margin <= b[5] and b[2] <= a[5] + margin)
