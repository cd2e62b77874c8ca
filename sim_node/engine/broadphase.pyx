"""Sweep and prune: the pairs of overlapping axis-aligned boxes among n, world frame.

    sweep_and_prune: boxes (n, 6) [lo x, y, z, hi x, y, z], order (kept between steps)
                     => pairs (i, j), i < j, of boxes that overlap (closed intervals: touching
                        boxes overlap), sorted by (i, j)

1. Sort `order` by the key (lo_x, box index) with insertion sort. Between steps bodies move a
   little, so the previous step's order is nearly sorted and the sort costs O(n + inversions).
   It gets a budget of 4 n + 64 moves; past it (first call, teleports) heapsort finishes the job
   in O(n log n). The key is a total order, so the sorted order, and everything after it, is a
   function of the boxes alone: `order` only makes the sort faster, never changes the result.
2. Sweep: the boxes after box a in that order whose lo_x <= hi_x(a) are exactly those that
   overlap a in x; test y and z for each. O(n + number of pairs overlapping in x).
3. Sort the pairs found by (i, j), in place (heapsort, O(k log k)).

Cost: the sweep visits every pair that overlaps in x. When the boxes spread over a plane along
x (objects on a floor), a box overlaps in x all the boxes of its "column", about sqrt(n) of them
for a square layout, so that term grows like n^1.5, not n (see tests/engine/test_broadphase.py).
"""
import numpy as np

cimport numpy as cnp

from sim_node.engine.arguments cimport as_matrix, data_ptr

cnp.import_array()


cdef inline bint _before(const double* boxes, int a, int b) noexcept nogil:
    # the sort key (lo_x, index), a total order on the boxes
    return boxes[6 * a] < boxes[6 * b] or (boxes[6 * a] == boxes[6 * b] and a < b)


cdef inline void _sift_order(const double* boxes, int* order, int root, int end,
                             SAPCounts* counts) noexcept nogil:
    # max-heap sift-down of order[root] within order[:end]
    cdef int child, v = order[root]
    while True:
        child = 2 * root + 1
        if child >= end:
            break
        if child + 1 < end:
            if counts != NULL:
                counts.sort_compares += 1
            if _before(boxes, order[child], order[child + 1]):
                child += 1
        if counts != NULL:
            counts.sort_compares += 1
        if not _before(boxes, v, order[child]):
            break
        order[root] = order[child]
        root = child
    order[root] = v


cdef inline void _heapsort_order(const double* boxes, int* order, int n,
                                 SAPCounts* counts) noexcept nogil:
    cdef int k, v
    for k in range(n // 2 - 1, -1, -1):
        _sift_order(boxes, order, k, n, counts)
    for k in range(n - 1, 0, -1):
        v = order[0]
        order[0] = order[k]
        order[k] = v
        _sift_order(boxes, order, 0, k, counts)


cdef inline void _sort_order(const double* boxes, int* order, int n,
                             SAPCounts* counts) noexcept nogil:
    # insertion sort with a move budget, heapsort past it (module docstring, step 1)
    cdef long budget = 4 * <long> n + 64, moves = 0
    cdef int k, m, a
    for k in range(1, n):
        a = order[k]
        m = k - 1
        while m >= 0:
            if counts != NULL:
                counts.sort_compares += 1
            if not _before(boxes, a, order[m]):
                break
            order[m + 1] = order[m]
            m -= 1
        order[m + 1] = a
        moves += k - 1 - m
        if moves > budget:
            if counts != NULL:
                counts.sort_moves += moves
                counts.heapsorted = 1
            _heapsort_order(boxes, order, n, counts)
            return
    if counts != NULL:
        counts.sort_moves += moves


cdef inline bint _pair_before(const int* pairs, int a, int b) noexcept nogil:
    return (pairs[2 * a] < pairs[2 * b]
            or (pairs[2 * a] == pairs[2 * b] and pairs[2 * a + 1] < pairs[2 * b + 1]))


cdef inline void _sift_pairs(int* pairs, int root, int end) noexcept nogil:
    cdef int child
    cdef int i = pairs[2 * root], j = pairs[2 * root + 1]
    while True:
        child = 2 * root + 1
        if child >= end:
            break
        if child + 1 < end and _pair_before(pairs, child, child + 1):
            child += 1
        if not (pairs[2 * child] > i or (pairs[2 * child] == i and pairs[2 * child + 1] > j)):
            break
        pairs[2 * root] = pairs[2 * child]
        pairs[2 * root + 1] = pairs[2 * child + 1]
        root = child
    pairs[2 * root] = i
    pairs[2 * root + 1] = j


cdef inline void _heapsort_pairs(int* pairs, int n) noexcept nogil:
    cdef int k, i, j
    for k in range(n // 2 - 1, -1, -1):
        _sift_pairs(pairs, k, n)
    for k in range(n - 1, 0, -1):
        i = pairs[0]
        j = pairs[1]
        pairs[0] = pairs[2 * k]
        pairs[1] = pairs[2 * k + 1]
        pairs[2 * k] = i
        pairs[2 * k + 1] = j
        _sift_pairs(pairs, 0, k)


cdef inline int _sweep_and_prune(int n, const double* boxes, int* order, int* pairs,
                                 int max_pairs, SAPCounts* counts) noexcept nogil:
    # counts == NULL in sweep_and_prune: the compiler drops the counting from that copy
    cdef int k, m, a, b, found = 0
    cdef const double* box_a
    cdef const double* box_b
    _sort_order(boxes, order, n, counts)
    for k in range(n):
        a = order[k]
        box_a = &boxes[6 * a]
        for m in range(k + 1, n):
            b = order[m]
            box_b = &boxes[6 * b]
            if counts != NULL:
                counts.sweep_compares += 1
            if box_b[0] > box_a[3]:       # lo_x(b) >= lo_x(a) by the sort
                break
            if counts != NULL:
                counts.overlap_tests += 1
            if (box_b[1] <= box_a[4] and box_a[1] <= box_b[4]
                    and box_b[2] <= box_a[5] and box_a[2] <= box_b[5]):
                if found < max_pairs:
                    pairs[2 * found] = a if a < b else b
                    pairs[2 * found + 1] = b if a < b else a
                found += 1
    _heapsort_pairs(pairs, found if found < max_pairs else max_pairs)
    if counts != NULL:
        counts.pairs += found
    return found


cdef int sweep_and_prune(int n, const double* boxes, int* order, int* pairs,
                         int max_pairs) noexcept nogil:
    # (boxes [n*6], order: a permutation of 0..n-1) => (order sorted by (lo_x, index),
    # pairs [2*k]: (i, j), i < j, overlapping, sorted); returns the number of overlapping pairs,
    # of which max_pairs are written (a deterministic subset, sorted) when there are more
    return _sweep_and_prune(n, boxes, order, pairs, max_pairs, NULL)


cdef int sweep_and_prune_counted(int n, const double* boxes, int* order, int* pairs,
                                 int max_pairs, SAPCounts* counts) noexcept nogil:
    # sweep_and_prune, adding its operation counts to *counts
    return _sweep_and_prune(n, boxes, order, pairs, max_pairs, counts)


# ---------------------------------------------------------------------------------------------
# Python wrappers (validated)

cdef cnp.ndarray _as_boxes(boxes):
    cdef cnp.ndarray b = as_matrix(boxes, -1, 6, "boxes")
    if b.shape[0] >= 2 ** 31 - 1:
        raise ValueError(f"boxes: at most 2**31 - 2 boxes, got {b.shape[0]}")
    inverted = np.flatnonzero(((<object> b)[:, :3] > (<object> b)[:, 3:]).any(axis=1))
    if inverted.size:
        k = int(inverted[0])
        raise ValueError(f"boxes: box {k} = {(<object> b)[k]} has lo > hi on some axis "
                         f"(rows are [lo x, y, z, hi x, y, z]; zero extent is fine)")
    return b


cdef cnp.ndarray _as_order(order, Py_ssize_t n):
    if not isinstance(order, np.ndarray) or order.dtype != np.int32 or order.ndim != 1 \
            or not order.flags.c_contiguous or not order.flags.writeable:
        raise TypeError("order: expected a writable C-contiguous int32 vector (it is updated "
                        "in place; keep it between calls)")
    if order.shape[0] != n or (n and (order.min() < 0 or order.max() >= n
                                      or not (np.bincount(order, minlength=n) == 1).all())):
        raise ValueError(f"order: expected a permutation of 0..{n - 1} (length {n})")
    return <cnp.ndarray> order


def overlapping_pairs_into(boxes, order, out):
    """sweep_and_prune on boxes (n, 6) [lo x, y, z, hi x, y, z] [m]: order (n,) int32, a
    permutation updated in place; out (m, 2) int32 receives at most m pairs. Returns the true
    number of overlapping pairs."""
    cdef cnp.ndarray b = _as_boxes(boxes)
    cdef cnp.ndarray o = _as_order(order, b.shape[0])
    if not isinstance(out, np.ndarray) or out.dtype != np.int32 or out.ndim != 2 \
            or out.shape[1] != 2 or not out.flags.c_contiguous or not out.flags.writeable:
        raise TypeError("out: expected a writable C-contiguous int32 array of shape (m, 2)")
    cdef cnp.ndarray buf = <cnp.ndarray> out
    return sweep_and_prune(<int> b.shape[0], data_ptr(b), <int*> cnp.PyArray_DATA(o),
                           <int*> cnp.PyArray_DATA(buf), <int> buf.shape[0])


def overlapping_pairs(boxes, order=None):
    """Pairs (k, 2) int32, rows (i, j) with i < j sorted by (i, j), of the boxes (n, 6)
    [lo x, y, z, hi x, y, z] that overlap (touching counts). `order`: None (sort from scratch)
    or the int32 permutation returned through the previous call's order, updated in place."""
    cdef cnp.ndarray b = _as_boxes(boxes)
    cdef int n = <int> b.shape[0]
    cdef cnp.ndarray o = (np.arange(n, dtype=np.int32) if order is None
                          else _as_order(order, n))
    cdef cnp.ndarray out = np.empty((max(2 * n, 16), 2), dtype=np.int32)
    cdef int found = sweep_and_prune(n, data_ptr(b), <int*> cnp.PyArray_DATA(o),
                                     <int*> cnp.PyArray_DATA(out), <int> out.shape[0])
    if found > out.shape[0]:
        out = np.empty((found, 2), dtype=np.int32)
        sweep_and_prune(n, data_ptr(b), <int*> cnp.PyArray_DATA(o),
                        <int*> cnp.PyArray_DATA(out), found)
    return out[:found]


def operation_counts(boxes, order):
    """Run sweep_and_prune_counted (order updated in place as above) and return its operation
    counts: dict with the SAPCounts fields."""
    cdef cnp.ndarray b = _as_boxes(boxes)
    cdef cnp.ndarray o = _as_order(order, b.shape[0])
    cdef SAPCounts counts
    counts.sort_compares = 0
    counts.sort_moves = 0
    counts.heapsorted = 0
    counts.sweep_compares = 0
    counts.overlap_tests = 0
    counts.pairs = 0
    cdef cnp.ndarray out = np.empty((0, 2), dtype=np.int32)
    sweep_and_prune_counted(<int> b.shape[0], data_ptr(b), <int*> cnp.PyArray_DATA(o),
                            <int*> cnp.PyArray_DATA(out), 0, &counts)
    return dict(counts)
