# cython: boundscheck=False, wraparound=False
# Timing loops around the collision kernels (bvh, broadphase), compiled by bench/collision.py
# with pyximport: the kernels run back to back without the Python wrappers' validation, as the
# simulation step calls them. Times are in ns per call, best of `rounds` rounds.
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from sim_node.engine.broadphase cimport sweep_and_prune
from sim_node.engine.bvh cimport BVHTree, bvh_query_aabb, bvh_query_pair


cdef double _now_ns() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec * 1e9 + t.tv_nsec


def query_aabb_ns(BVHTree tree, double[:, ::1] boxes, int[::1] out, int rounds=7):
    """Mean ns per bvh_query_aabb over the query boxes (m, 6), best round; and the hit count."""
    cdef int k, r, m = boxes.shape[0], hits = 0
    cdef double best = 1e300, t0
    for r in range(rounds):
        t0 = _now_ns()
        hits = 0
        with nogil:
            for k in range(m):
                hits += bvh_query_aabb(&tree.c, &boxes[k, 0], &boxes[k, 3], &out[0], out.shape[0])
        best = min(best, (_now_ns() - t0) / m)
    return best, hits


def query_pair_ns(BVHTree a, BVHTree b, double[:, :, ::1] R, double[:, ::1] p, double margin,
                  int[:, ::1] out, int rounds=7):
    """Mean ns per bvh_query_pair over the poses (R (m, 3, 3), p (m, 3)); and the pair count."""
    cdef int k, r, m = R.shape[0], pairs = 0
    cdef double best = 1e300, t0
    for r in range(rounds):
        t0 = _now_ns()
        pairs = 0
        with nogil:
            for k in range(m):
                pairs += bvh_query_pair(&a.c, &b.c, &R[k, 0, 0], &p[k, 0], margin, &out[0, 0],
                                        out.shape[0])
        best = min(best, (_now_ns() - t0) / m)
    return best, pairs


def sap_ns(double[:, :, ::1] frames, int[::1] order, int[::1] start, int[:, ::1] out,
           bint from_scratch, int rounds=7):
    """Mean ns per sweep_and_prune over the frames (T, n, 6) in sequence. from_scratch: `order`
    is reset to `start` before every call (the reset, an n-int copy, is included); otherwise
    it is kept between frames (temporal coherence)."""
    cdef int t, r, k, n = frames.shape[1], T = frames.shape[0], pairs = 0
    cdef double best = 1e300, t0
    for r in range(rounds):
        for k in range(n):
            order[k] = start[k]
        t0 = _now_ns()
        pairs = 0
        with nogil:
            for t in range(T):
                if from_scratch:
                    for k in range(n):
                        order[k] = start[k]
                pairs += sweep_and_prune(n, &frames[t, 0, 0], &order[0], &out[0, 0], out.shape[0])
        best = min(best, (_now_ns() - t0) / T)
    return best, pairs / T
