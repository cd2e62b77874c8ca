"""Axis-aligned bounding-volume hierarchy (AABB tree) over items, usually a mesh's triangles.

    build_bvh:       item boxes lo, hi (n, 3) => tree arrays (the BVH struct's fields)
    bvh_query_aabb:  tree, box [lo, hi] => the items whose own box overlaps it (_from: in chunks)
    bvh_query_pair:  trees A and B, pose of B in A (R_AB, p_AB), margin => the item pairs (i, j)
                     whose boxes overlap within the margin, B's boxes re-boxed in A's frame

Build (top-down median split): a node's items are split in two halves at the median of their box
centroids along the longest axis of the centroid bounds, until at most `leaf_size` remain. Items
are ordered by (centroid, item index), so the tree is a function of the input alone. The items
are sorted once along x, y and z; a split partitions the other two sorted lists stably in O(n),
so the build is O(n log n) and the depth is ceil(log2(n / leaf_size)). Nodes are numbered in
depth-first preorder (the left child of an inner node k is k + 1) and the leaves' item slots
follow the same order, so a subtree's items are contiguous. Every node box is the exact union
(min, max) of the boxes below it, so pruning with node boxes is exact: the queries return
precisely the items (pairs) a brute-force loop over item boxes returns.

Queries walk the tree depth first with a fixed stack (bvh.pxd), allocate nothing and report
items in slot order (pairs: in the order the walk meets them). Both return the true count and
fill at most the caller's capacity, so a caller can retry with a larger buffer.

The arrays of a tree of n items (n >= 1; n = 0 gives nnode = 0 and empty arrays):
    bounds      (nnode, 6) float64   node box [lo x, y, z, hi x, y, z]
    child       (nnode, 2) int32     left, right child; (-1, -1) for a leaf
    first       (nnode,)   int32     first item slot of the node's subtree
    count       (nnode,)   int32     number of items of a leaf, 0 for inner nodes
    item        (n,)       int32     item index in each slot
    item_bounds (n, 6)     float64   box of the item in each slot
"""
import numpy as np

cimport numpy as cnp

from sim_node.engine.arguments cimport as_matrix, as_vector, data_ptr
from sim_node.engine.geometry cimport BVH

cnp.import_array()

# name: (dtype, columns (0 for a vector), length field)
_BVH_ARRAYS = {
    "bounds": (np.float64, 6, "nnode"),
    "child": (np.int32, 2, "nnode"),
    "first": (np.int32, 0, "nnode"),
    "count": (np.int32, 0, "nnode"),
    "item": (np.int32, 0, "nitem"),
    "item_bounds": (np.float64, 6, "nitem"),
}

# Largest item count build_bvh takes: node numbers (< 2 n) must fit an int.
_MAX_ITEMS = 2 ** 30 - 1


# ---------------------------------------------------------------------------------------------
# Build

cdef struct Builder:
    const double* lo          # [n*3] item boxes
    const double* hi
    const double* centroid    # [n*3]
    int* lists                # [3*n] list k: the items sorted by (centroid_k, item index);
                              # a node's items are always at [start, end) of all three lists
    int* scratch              # [n]
    unsigned char* go_left    # [n] per item: 1 if it goes to the left child of the current split
    int n
    int leaf_size
    int nnode                 # nodes numbered so far
    double* bounds
    int* child
    int* first
    int* count
    int* item
    double* item_bounds


cdef inline void _sort_small(int* x, int n) noexcept nogil:
    # insertion sort of a leaf's few item indices
    cdef int k, m, v
    for k in range(1, n):
        v = x[k]
        m = k - 1
        while m >= 0 and x[m] > v:
            x[m + 1] = x[m]
            m -= 1
        x[m + 1] = v


cdef void _build_node(Builder* b, int node, int start, int end) noexcept nogil:
    # (items at [start, end) of the lists) => (node and its subtree, their item slots [start, end))
    cdef int n_items = end - start
    cdef int axis = 0, k, s, a, mid, n_left, n_right, left, right
    cdef double extent, longest = -1.0
    cdef int* lst
    cdef double* box = &b.bounds[6 * node]
    cdef double* ib
    b.first[node] = start
    if n_items <= b.leaf_size:
        for s in range(start, end):
            b.item[s] = b.lists[s]
        _sort_small(&b.item[start], n_items)   # slot order = item index order within a leaf
        for k in range(3):
            box[k] = b.lo[3 * b.item[start] + k]
            box[3 + k] = b.hi[3 * b.item[start] + k]
        for s in range(start, end):
            a = b.item[s]
            ib = &b.item_bounds[6 * s]
            for k in range(3):
                ib[k] = b.lo[3 * a + k]
                ib[3 + k] = b.hi[3 * a + k]
                if ib[k] < box[k]:
                    box[k] = ib[k]
                if ib[3 + k] > box[3 + k]:
                    box[3 + k] = ib[3 + k]
        b.child[2 * node] = -1
        b.child[2 * node + 1] = -1
        b.count[node] = n_items
        return
    # The centroid extent along k is last - first of list k (sorted): O(1) per axis.
    for k in range(3):
        lst = &b.lists[k * b.n]
        extent = b.centroid[3 * lst[end - 1] + k] - b.centroid[3 * lst[start] + k]
        if extent > longest:
            longest = extent
            axis = k
    mid = start + n_items // 2
    lst = &b.lists[axis * b.n]
    for s in range(start, end):
        b.go_left[lst[s]] = s < mid
    # Stable partition of the other two lists keeps each half sorted along its axis.
    for k in range(3):
        if k == axis:
            continue
        lst = &b.lists[k * b.n]
        n_left = start
        n_right = 0
        for s in range(start, end):
            a = lst[s]
            if b.go_left[a]:
                lst[n_left] = a     # n_left <= s: never overwrites an unread entry
                n_left += 1
            else:
                b.scratch[n_right] = a
                n_right += 1
        for s in range(n_right):
            lst[n_left + s] = b.scratch[s]
    left = b.nnode
    b.nnode += 1
    _build_node(b, left, start, mid)
    right = b.nnode
    b.nnode += 1
    _build_node(b, right, mid, end)
    b.child[2 * node] = left
    b.child[2 * node + 1] = right
    b.count[node] = 0
    for k in range(3):
        box[k] = min(b.bounds[6 * left + k], b.bounds[6 * right + k])
        box[3 + k] = max(b.bounds[6 * left + 3 + k], b.bounds[6 * right + 3 + k])


def build_bvh(lo, hi, int leaf_size=4):
    """AABB tree over n item boxes [lo_k, hi_k] (lo, hi: (n, 3), lo <= hi, any frame, in m).

    Returns the dict of arrays described in the module docstring (owned, writable numpy arrays;
    give it to BVHTree or bind it with bvh_bind). Deterministic, O(n log n).
    """
    cdef cnp.ndarray lo_a = as_matrix(lo, -1, 3, "lo")
    cdef cnp.ndarray hi_a = as_matrix(hi, -1, 3, "hi")
    cdef Py_ssize_t n = lo_a.shape[0]
    if hi_a.shape[0] != n:
        raise ValueError(f"hi: expected shape ({n}, 3) like lo, got {(<object> hi_a).shape}")
    if leaf_size < 1:
        raise ValueError(f"leaf_size must be >= 1, got {leaf_size}")
    if n > _MAX_ITEMS:
        raise ValueError(f"build_bvh takes at most {_MAX_ITEMS} items, got {n}")
    inverted = np.flatnonzero((lo_a > hi_a).any(axis=1))
    if inverted.size:
        k = int(inverted[0])
        raise ValueError(f"item box {k}: lo {lo_a[k]} > hi {hi_a[k]} on some axis "
                         f"(need lo <= hi; zero extent is fine)")
    centroid = np.ascontiguousarray(0.5 * (lo_a + hi_a))
    lists = np.empty((3, n), dtype=np.int32)
    for k in range(3):
        lists[k] = np.argsort(centroid[:, k], kind="stable")   # ties: item index order
    max_node = max(2 * n - 1, 0)
    bounds = np.zeros((max_node, 6))
    child = np.full((max_node, 2), -1, dtype=np.int32)
    first = np.zeros(max_node, dtype=np.int32)
    count = np.zeros(max_node, dtype=np.int32)
    item = np.zeros(n, dtype=np.int32)
    item_bounds = np.zeros((n, 6))
    scratch = np.empty(n, dtype=np.int32)
    go_left = np.empty(n, dtype=np.uint8)
    cdef Builder b
    b.lo = data_ptr(lo_a)
    b.hi = data_ptr(hi_a)
    b.centroid = <const double*> cnp.PyArray_DATA(centroid)
    b.lists = <int*> cnp.PyArray_DATA(lists)
    b.scratch = <int*> cnp.PyArray_DATA(scratch)
    b.go_left = <unsigned char*> cnp.PyArray_DATA(go_left)
    b.n = <int> n
    b.leaf_size = leaf_size
    b.nnode = 0
    b.bounds = <double*> cnp.PyArray_DATA(bounds)
    b.child = <int*> cnp.PyArray_DATA(child)
    b.first = <int*> cnp.PyArray_DATA(first)
    b.count = <int*> cnp.PyArray_DATA(count)
    b.item = <int*> cnp.PyArray_DATA(item)
    b.item_bounds = <double*> cnp.PyArray_DATA(item_bounds)
    if n > 0:
        b.nnode = 1
        with nogil:
            _build_node(&b, 0, 0, b.n)
    nnode = b.nnode
    return {"bounds": bounds[:nnode].copy(), "child": child[:nnode].copy(),
            "first": first[:nnode].copy(), "count": count[:nnode].copy(),
            "item": item, "item_bounds": item_bounds}


def triangle_boxes(verts, tris):
    """Boxes of a mesh's triangles: lo, hi (ntri, 3), the min and max of their three vertices.

    verts (nvert, 3) float [m]; tris (ntri, 3) integer vertex indices in [0, nvert).
    """
    cdef cnp.ndarray v = as_matrix(verts, -1, 3, "verts")
    t = as_triangles(tris, v.shape[0])
    corners = v[t]                        # (ntri, 3 vertices, 3 coordinates)
    return corners.min(axis=1), corners.max(axis=1)


def mesh_bvh(verts, tris, int leaf_size=4):
    """AABB tree over the triangles of a mesh (build_bvh of triangle_boxes); item = triangle."""
    return build_bvh(*triangle_boxes(verts, tris), leaf_size=leaf_size)


def as_triangles(tris, Py_ssize_t nvert):
    """tris as an int32 C-contiguous (ntri, 3) array of vertex indices in [0, nvert)."""
    t = np.asarray(tris)
    if t.size == 0:
        t = t.reshape(-1, 3)
    if t.dtype.kind not in "iu" and t.size:
        raise TypeError(f"tris: expected integer vertex indices, got dtype {t.dtype}")
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"tris: expected shape (ntri, 3), got {t.shape}")
    if t.size and (t.min() < 0 or t.max() >= nvert):
        bad = int(np.flatnonzero(((t < 0) | (t >= nvert)).any(axis=1))[0])
        raise ValueError(f"tris: triangle {bad} = {t[bad]} indexes outside [0, {nvert})")
    return np.ascontiguousarray(t, dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# Binding

cdef enum TreeError:
    TREE_OK = 0
    TREE_BAD_CHILD       # a child index outside [1, nnode), or only one child
    TREE_NOT_A_TREE      # a node reached twice from the root (shared child or cycle)
    TREE_UNREACHED       # a node not reached from the root
    TREE_TOO_DEEP
    TREE_BAD_SLOTS       # a leaf's slots outside [0, nitem), or an inner node with count != 0
    TREE_SLOT_COVER      # a slot in no leaf or in two leaves
    TREE_BAD_ITEM        # a negative item index
    TREE_NOT_CONTAINED   # a child's or an item's box not inside its node's box


cdef inline bint _inside(const double* inner, const double* outer) noexcept nogil:
    return (outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] <= inner[2]
            and inner[3] <= outer[3] and inner[4] <= outer[4] and inner[5] <= outer[5])


cdef int _check_tree(const BVH* t, int* stack, int* depth, int* reached, int* cover,
                     int* where) noexcept nogil:
    # Walks the tree from the root once; work arrays: stack, depth, reached [nnode], cover [nitem]
    # (zeroed). Returns a TreeError and the offending node (or slot) in where[0].
    cdef int top = 1, node, c, k, s, l, r
    if t.nnode == 0:
        where[0] = 0
        return TREE_OK if t.nitem == 0 else TREE_SLOT_COVER
    stack[0] = 0
    depth[0] = 0
    reached[0] = 1
    while top > 0:
        top -= 1
        node = stack[top]
        where[0] = node
        if depth[node] > BVH_MAX_DEPTH:
            return TREE_TOO_DEEP
        l = t.child[2 * node]
        r = t.child[2 * node + 1]
        if l < 0 and r < 0:
            if t.count[node] < 0 or t.first[node] < 0 or t.first[node] > t.nitem - t.count[node]:
                return TREE_BAD_SLOTS
            for s in range(t.first[node], t.first[node] + t.count[node]):
                where[0] = s
                if t.item[s] < 0:
                    return TREE_BAD_ITEM
                if cover[s]:
                    return TREE_SLOT_COVER
                cover[s] = 1
                if not _inside(&t.item_bounds[6 * s], &t.bounds[6 * node]):
                    where[0] = node
                    return TREE_NOT_CONTAINED
            continue
        if not (0 < l < t.nnode and 0 < r < t.nnode):
            return TREE_BAD_CHILD
        if t.count[node] != 0:
            return TREE_BAD_SLOTS
        for k in range(2):
            c = t.child[2 * node + k]
            if reached[c]:
                where[0] = c
                return TREE_NOT_A_TREE
            if not _inside(&t.bounds[6 * c], &t.bounds[6 * node]):
                where[0] = c
                return TREE_NOT_CONTAINED
            reached[c] = 1
            depth[c] = depth[node] + 1
            stack[top] = c
            top += 1
    for node in range(t.nnode):
        if not reached[node]:
            where[0] = node
            return TREE_UNREACHED
    for s in range(t.nitem):
        if not cover[s]:
            where[0] = s
            return TREE_SLOT_COVER
    return TREE_OK


_TREE_ERRORS = {
    TREE_BAD_CHILD: "node {}: children must both be -1 (leaf) or both in [1, nnode)",
    TREE_NOT_A_TREE: "node {} is reached twice from the root: not a tree",
    TREE_UNREACHED: "node {} is not reached from the root",
    TREE_TOO_DEEP: "node {} is deeper than BVH_MAX_DEPTH = " + str(BVH_MAX_DEPTH),
    TREE_BAD_SLOTS: "node {}: leaves need 0 <= first, first + count <= nitem; inner nodes count 0",
    TREE_SLOT_COVER: "item slot {} is in no leaf or in two leaves",
    TREE_BAD_ITEM: "item slot {}: negative item index",
    TREE_NOT_CONTAINED: "node {}: its box does not contain the boxes below it",
}


cdef int bvh_bind(BVH* t, dict arrays) except -1:
    """Point t at `arrays` (the fields of build_bvh, exact dtypes, C-contiguous), after checking
    that they describe a tree the queries can trust: shapes, finite boxes, children forming a
    tree from node 0 no deeper than BVH_MAX_DEPTH, leaves covering every slot once, and every
    box containing the boxes below it. t is unchanged on error. The caller keeps `arrays` alive
    while t is in use."""
    cdef BVH tmp
    cdef int where = 0
    cdef int code
    sizes = {}
    for name, (dtype, cols, length) in _BVH_ARRAYS.items():
        a = arrays.get(name)
        if not isinstance(a, np.ndarray):
            raise TypeError(f"BVH array {name!r}: missing or not a numpy array")
        if a.dtype != dtype or not a.flags.c_contiguous:
            raise TypeError(f"BVH array {name!r}: must be C-contiguous {np.dtype(dtype).name}, "
                            f"got {a.dtype}{'' if a.flags.c_contiguous else ', non-contiguous'}")
        expected_ndim = 2 if cols else 1
        if a.ndim != expected_ndim or (cols and a.shape[1] != cols):
            raise ValueError(f"BVH array {name!r}: expected shape ({length}{', ' + str(cols) if cols else ','}), "
                             f"got {a.shape}")
        if sizes.setdefault(length, a.shape[0]) != a.shape[0]:
            raise ValueError(f"BVH array {name!r}: {a.shape[0]} rows, but {length} = {sizes[length]}")
        if a.dtype == np.float64 and not np.isfinite(a).all():
            raise ValueError(f"BVH array {name!r}: contains NaN or infinity")
    if sizes["nnode"] > _MAX_ITEMS * 2 or sizes["nitem"] > _MAX_ITEMS:
        raise ValueError("BVH arrays too large for int indices")
    tmp.nnode = sizes["nnode"]
    tmp.nitem = sizes["nitem"]
    tmp.bounds = <const double*> cnp.PyArray_DATA(arrays["bounds"])
    tmp.child = <const int*> cnp.PyArray_DATA(arrays["child"])
    tmp.first = <const int*> cnp.PyArray_DATA(arrays["first"])
    tmp.count = <const int*> cnp.PyArray_DATA(arrays["count"])
    tmp.item = <const int*> cnp.PyArray_DATA(arrays["item"])
    tmp.item_bounds = <const double*> cnp.PyArray_DATA(arrays["item_bounds"])
    work = np.zeros(3 * tmp.nnode + tmp.nitem + 1, dtype=np.int32)
    cdef int* w = <int*> cnp.PyArray_DATA(work)
    code = _check_tree(&tmp, w, w + tmp.nnode, w + 2 * tmp.nnode, w + 3 * tmp.nnode, &where)
    if code != TREE_OK:
        raise ValueError("BVH arrays: " + _TREE_ERRORS[code].format(where))
    t[0] = tmp
    return 0


cdef class BVHTree:
    """An AABB tree ready for queries: read-only copies of build_bvh's arrays (`arrays`) and the
    BVH struct pointing into them (`c`, for kernels of other modules)."""

    def __init__(self, arrays):
        owned = {}
        for name, (dtype, _, _) in _BVH_ARRAYS.items():
            if name not in arrays:
                raise KeyError(f"BVH array {name!r} is missing (have {sorted(arrays)})")
            source = np.asarray(arrays[name])
            if np.dtype(dtype).kind == "i" and source.dtype.kind not in "iu" and source.size:
                raise TypeError(f"BVH array {name!r}: expected integers, got {source.dtype}")
            a = np.array(source, dtype=dtype, order="C", copy=True)
            a.setflags(write=False)
            owned[name] = a
        bvh_bind(&self.c, owned)
        self.arrays = owned

    @property
    def nnode(self):
        return self.c.nnode

    @property
    def nitem(self):
        return self.c.nitem


# ---------------------------------------------------------------------------------------------
# Queries

cdef int bvh_query_aabb(const BVH* t, const double* lo, const double* hi, int* out,
                        int max_out) noexcept nogil:
    # (tree, box [lo, hi] in the tree frame) => (out: items whose box overlaps, in slot order);
    # returns the number of such items, of which the first max_out are written
    return bvh_query_aabb_from(t, lo, hi, 0, out, max_out)


cdef int bvh_query_aabb_from(const BVH* t, const double* lo, const double* hi, int skip, int* out,
                             int max_out) noexcept nogil:
    # bvh_query_aabb from the item of rank `skip` on: out[0 : max_out] receives the items of
    # rank skip, skip + 1, ... (slot order); returns the total number of items found. Callers
    # with a fixed buffer walk a large answer in chunks (skip = 0, max_out, 2 max_out, ...).
    cdef int stack[BVH_STACK]
    cdef int top = 1, node, s, end, found = 0
    if t.nnode == 0:
        return 0
    stack[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        if not box_overlap(&t.bounds[6 * node], lo, hi):
            continue
        if t.child[2 * node] < 0:
            end = t.first[node] + t.count[node]
            for s in range(t.first[node], end):
                if box_overlap(&t.item_bounds[6 * s], lo, hi):
                    # skip <= found < skip + max_out, in one unsigned comparison
                    if <unsigned int> (found - skip) < <unsigned int> max_out:
                        out[found - skip] = t.item[s]
                    found += 1
        else:
            stack[top] = t.child[2 * node + 1]    # the left child is popped first
            stack[top + 1] = t.child[2 * node]
            top += 2
    return found


cdef inline double _box_size(const double* box) noexcept nogil:
    return (box[3] - box[0]) + (box[4] - box[1]) + (box[5] - box[2])


cdef int bvh_query_pair(const BVH* a, const BVH* b, const double* R_ab, const double* p_ab,
                        double margin, int* out_pairs, int max_pairs) noexcept nogil:
    # (trees A, B; x_A = R_ab x_B + p_ab; margin >= 0) => (out_pairs [k*2]: item of A, item of B)
    # for every item pair whose boxes overlap within margin, B's item box taken as the AABB of
    # its image in A (box_transform). Returns the number of pairs; the first max_pairs are written.
    # Simultaneous descent: pop a node pair, drop it if the boxes are apart, else split the
    # larger node (an inner one if the other is a leaf); two leaves test their items.
    cdef int stack[2 * BVH_PAIR_STACK]
    cdef int top = 1, na, nb, sa, sb, first_a, end_a, end_b, found = 0
    cdef bint leaf_a, leaf_b
    cdef double box_b[6]
    if a.nnode == 0 or b.nnode == 0:
        return 0
    stack[0] = 0
    stack[1] = 0
    while top > 0:
        top -= 1
        na = stack[2 * top]
        nb = stack[2 * top + 1]
        box_transform(&b.bounds[6 * nb], R_ab, p_ab, box_b)
        if not box_overlap_margin(&a.bounds[6 * na], box_b, margin):
            continue
        leaf_a = a.child[2 * na] < 0
        leaf_b = b.child[2 * nb] < 0
        if leaf_a and leaf_b:
            first_a = a.first[na]
            end_a = first_a + a.count[na]
            end_b = b.first[nb] + b.count[nb]
            for sb in range(b.first[nb], end_b):
                box_transform(&b.item_bounds[6 * sb], R_ab, p_ab, box_b)
                for sa in range(first_a, end_a):
                    if box_overlap_margin(&a.item_bounds[6 * sa], box_b, margin):
                        if found < max_pairs:
                            out_pairs[2 * found] = a.item[sa]
                            out_pairs[2 * found + 1] = b.item[sb]
                        found += 1
        elif leaf_b or (not leaf_a and _box_size(&a.bounds[6 * na]) >= _box_size(&b.bounds[6 * nb])):
            stack[2 * top] = a.child[2 * na + 1]
            stack[2 * top + 1] = nb
            stack[2 * top + 2] = a.child[2 * na]
            stack[2 * top + 3] = nb
            top += 2
        else:
            stack[2 * top] = na
            stack[2 * top + 1] = b.child[2 * nb + 1]
            stack[2 * top + 2] = na
            stack[2 * top + 3] = b.child[2 * nb]
            top += 2
    return found


cdef cnp.ndarray _int_buffer(object out, int cols, str name):
    # a caller's output buffer: writable C-contiguous int32 of shape (m,) or (m, cols)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: expected a numpy int32 array, got {type(out).__name__}")
    if out.dtype != np.int32 or not out.flags.c_contiguous or not out.flags.writeable:
        raise TypeError(f"{name}: must be a writable C-contiguous int32 array")
    if (cols == 0 and out.ndim != 1) or (cols and (out.ndim != 2 or out.shape[1] != cols)):
        raise ValueError(f"{name}: expected shape (m,{' ' + str(cols) if cols else ''}), got {out.shape}")
    return <cnp.ndarray> out


def query_aabb_into(BVHTree tree not None, lo, hi, out, int skip=0):
    """bvh_query_aabb_from: items whose box overlaps [lo, hi] (tree frame, [m]), from the one
    of rank `skip` (>= 0) on, into out (m,) int32. Returns the true total count; only the items
    of rank skip .. skip + len(out) - 1 are written (a large answer read in chunks)."""
    cdef cnp.ndarray lo_a = as_vector(lo, 3, "lo")
    cdef cnp.ndarray hi_a = as_vector(hi, 3, "hi")
    cdef cnp.ndarray buf = _int_buffer(out, 0, "out")
    if skip < 0:
        raise ValueError(f"skip: expected a rank >= 0, got {skip}")
    return bvh_query_aabb_from(&tree.c, data_ptr(lo_a), data_ptr(hi_a), skip,
                               <int*> cnp.PyArray_DATA(buf), <int> buf.shape[0])


def query_aabb(BVHTree tree not None, lo, hi):
    """Items (int32, slot order) whose box overlaps the box [lo, hi] given in the tree frame.
    An inverted box (lo > hi on some axis) overlaps nothing."""
    cdef cnp.ndarray lo_a = as_vector(lo, 3, "lo")
    cdef cnp.ndarray hi_a = as_vector(hi, 3, "hi")
    cdef cnp.ndarray out = np.empty(min(tree.c.nitem, 64), dtype=np.int32)
    cdef int found = bvh_query_aabb(&tree.c, data_ptr(lo_a), data_ptr(hi_a),
                                    <int*> cnp.PyArray_DATA(out), <int> out.shape[0])
    if found > out.shape[0]:
        out = np.empty(found, dtype=np.int32)
        bvh_query_aabb(&tree.c, data_ptr(lo_a), data_ptr(hi_a), <int*> cnp.PyArray_DATA(out),
                       found)
    return out[:found]


cdef inline _check_margin(double margin):
    if not 0.0 <= margin < np.inf:
        raise ValueError(f"margin: expected a finite value >= 0 [m], got {margin}")


def query_pair_into(BVHTree a not None, BVHTree b not None, R_ab, p_ab, double margin, out):
    """bvh_query_pair into out (m, 2) int32 (columns: item of a, item of b). Returns the true
    pair count; only the first len(out) pairs are written."""
    cdef cnp.ndarray R = as_matrix(R_ab, 3, 3, "R_ab")
    cdef cnp.ndarray p = as_vector(p_ab, 3, "p_ab")
    cdef cnp.ndarray buf = _int_buffer(out, 2, "out")
    _check_margin(margin)
    return bvh_query_pair(&a.c, &b.c, data_ptr(R), data_ptr(p), margin,
                          <int*> cnp.PyArray_DATA(buf), <int> buf.shape[0])


def query_pair(BVHTree a not None, BVHTree b not None, R_ab, p_ab, double margin=0.0):
    """Item pairs (k, 2) int32 [item of a, item of b] whose boxes overlap within `margin` [m],
    b placed in a's frame by x_a = R_ab x_b + p_ab (R_ab (3, 3), p_ab (3,)). b's item boxes are
    compared as the AABBs of their images in a's frame (conservative for a rotation). With
    a and b the same tree each unordered pair comes twice and every (i, i) once."""
    cdef cnp.ndarray R = as_matrix(R_ab, 3, 3, "R_ab")
    cdef cnp.ndarray p = as_vector(p_ab, 3, "p_ab")
    _check_margin(margin)
    cdef cnp.ndarray out = np.empty((64, 2), dtype=np.int32)
    cdef int found = bvh_query_pair(&a.c, &b.c, data_ptr(R), data_ptr(p), margin,
                                    <int*> cnp.PyArray_DATA(out), 64)
    if found > 64:
        out = np.empty((found, 2), dtype=np.int32)
        bvh_query_pair(&a.c, &b.c, data_ptr(R), data_ptr(p), margin,
                       <int*> cnp.PyArray_DATA(out), found)
    return out[:found]
