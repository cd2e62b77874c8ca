# Broadphase: sweep and prune over world-frame AABBs.

ctypedef struct SAPCounts:
    # Operation counts of one sweep_and_prune call (a cost proxy that does not depend on timing).
    long sort_compares     # key comparisons of the sort
    long sort_moves        # entries shifted by the insertion sort
    int heapsorted         # 1 if the insertion sort hit its budget and heapsort finished the sort
    long sweep_compares    # x-interval comparisons of the sweep (x-overlapping pairs + <= n stops)
    long overlap_tests     # y-z tests, one per pair overlapping in x
    long pairs             # pairs found (the return value)


cdef int sweep_and_prune(int n, const double* boxes, int* order, int* pairs,
                         int max_pairs) noexcept nogil
cdef int sweep_and_prune_counted(int n, const double* boxes, int* order, int* pairs,
                                 int max_pairs, SAPCounts* counts) noexcept nogil
