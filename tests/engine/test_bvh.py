"""AABB tree (bvh): box and tree-pair queries against brute force over every item (pair), on
random boxes with degenerate cases (zero extent, duplicates, exactly touching faces), plus the
tree's own invariants, capacity overflow, determinism and the validation of foreign arrays."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sim_node.engine import bvh

seeds = st.integers(0, 2 ** 32 - 1)


def random_boxes(rng, n, degenerate=True):
    """n boxes (lo, hi) in [0, 4]^3. With `degenerate`, about half are snapped to a 1/4 grid
    (exact in binary, so faces touch exactly), some have zero extent, some are duplicates."""
    centre = rng.uniform(0.0, 4.0, (n, 3))
    half = rng.uniform(0.0, 0.4, (n, 3))
    lo, hi = centre - half, centre + half
    if degenerate and n:
        snap = rng.random(n) < 0.5
        lo[snap] = np.floor(lo[snap] * 4) / 4
        hi[snap] = lo[snap] + rng.integers(0, 3, (snap.sum(), 3)) / 4   # extents 0, 1/4, 1/2
        flat = rng.random(n) < 0.1
        axis = rng.integers(0, 3)
        hi[flat, axis] = lo[flat, axis]
        point = rng.random(n) < 0.05
        hi[point] = lo[point]
        dup = rng.random(n) < 0.1
        source = rng.integers(0, n, n)
        lo[dup], hi[dup] = lo[source[dup]], hi[source[dup]]
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    return lo, hi


def query_boxes(rng, lo, hi, count=12):
    """Query boxes: random ones, item boxes themselves, a point on an item corner, a box that
    touches an item's face from outside, an everything box and an inverted (empty) box."""
    out = []
    for _ in range(count):
        c = rng.uniform(-0.5, 4.5, 3)
        h = rng.uniform(0.0, 1.0, 3)
        out.append((c - h, c + h))
    if len(lo):
        for k in rng.integers(0, len(lo), 3):
            out.append((lo[k].copy(), hi[k].copy()))
            out.append((hi[k].copy(), hi[k].copy()))
            touch_lo = hi[k].copy()
            touch_lo[1:] = lo[k, 1:]
            out.append((touch_lo, touch_lo + 0.25))        # shares the face x = hi_x
    out.append((np.full(3, -10.0), np.full(3, 10.0)))
    out.append((np.full(3, 2.0), np.full(3, 1.0)))
    return out


def brute_aabb(lo, hi, qlo, qhi):
    return np.flatnonzero(np.all(lo <= qhi, axis=1) & np.all(qlo <= hi, axis=1))


def box_image(lo, hi, R, p):
    """AABB of R [lo, hi] + p, written term by term in the kernel's order (box_transform), so
    that exactly touching boxes compare equal on both sides."""
    out_lo = np.repeat(p[None, :], len(lo), axis=0).astype(float)
    out_hi = out_lo.copy()
    for r in range(3):
        for k in range(3):
            u, v = R[r, k] * lo[:, k], R[r, k] * hi[:, k]
            out_lo[:, r] = out_lo[:, r] + np.minimum(u, v)
            out_hi[:, r] = out_hi[:, r] + np.maximum(u, v)
    return out_lo, out_hi


def brute_pairs(a, b, R, p, margin):
    blo, bhi = box_image(*b, R, p)
    alo, ahi = a
    hit = (np.all((alo[:, None, :] - margin) <= bhi[None, :, :], axis=2)
           & np.all(blo[None, :, :] <= (ahi[:, None, :] + margin), axis=2))
    return sorted(zip(*np.nonzero(hit)))


def random_rotation(rng):
    q = rng.normal(size=4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def tree_of(lo, hi, leaf_size=4):
    return bvh.BVHTree(bvh.build_bvh(lo, hi, leaf_size))


@given(seeds, st.integers(0, 300), st.integers(1, 9))
def test_query_aabb_returns_exactly_the_items_whose_box_overlaps(seed, n, leaf_size):
    rng = np.random.default_rng(seed)
    lo, hi = random_boxes(rng, n)
    tree = tree_of(lo, hi, leaf_size)
    slot_of = np.empty(n, dtype=int)
    slot_of[tree.arrays["item"]] = np.arange(n)
    for qlo, qhi in query_boxes(rng, lo, hi):
        found = bvh.query_aabb(tree, qlo, qhi)
        assert np.array_equal(np.sort(found), brute_aabb(lo, hi, qlo, qhi))
        assert np.all(np.diff(slot_of[found]) > 0), "items come once each, in slot order"


@given(seeds, st.integers(0, 120), st.integers(0, 120), st.integers(1, 6),
       st.sampled_from([0.0, 0.01, 0.3]))
def test_query_pair_returns_exactly_the_pairs_overlapping_within_the_margin(seed, na, nb,
                                                                            leaf_size, margin):
    rng = np.random.default_rng(seed)
    a, b = random_boxes(rng, na), random_boxes(rng, nb)
    tree_a, tree_b = tree_of(*a, leaf_size), tree_of(*b, leaf_size + 1)
    poses = [(np.eye(3), np.zeros(3)),                                 # touching faces meet
             (np.eye(3), np.array([0.25, -0.5, 0.0])),
             (random_rotation(rng), rng.uniform(-1.0, 1.0, 3))]
    for R, p in poses:
        found = bvh.query_pair(tree_a, tree_b, R, p, margin)
        pairs = sorted(map(tuple, found.tolist()))
        assert pairs == brute_pairs(a, b, R, p, margin)
        assert len(set(pairs)) == len(pairs)


def test_identical_and_touching_boxes_overlap():
    # a 4 x 4 x 1 grid of unit cells that share faces, each cell twice
    cells = np.array([(i, j, 0) for i in range(4) for j in range(4)], dtype=float)
    lo = np.vstack([cells, cells])
    hi = lo + 1.0
    tree = tree_of(lo, hi, leaf_size=2)
    # cell (1, 1) touches its 8 neighbours (faces and edges) and itself, each twice
    found = bvh.query_aabb(tree, [1, 1, 0], [2, 2, 1])
    assert np.array_equal(np.sort(found), brute_aabb(lo, hi, [1, 1, 0], [2, 2, 1]))
    assert len(found) == 18
    # a zero-extent query on a shared corner
    assert len(bvh.query_aabb(tree, [2, 2, 1], [2, 2, 1])) == 8
    pairs = bvh.query_pair(tree, tree, np.eye(3), np.zeros(3), 0.0)
    assert len(pairs) == len(brute_pairs((lo, hi), (lo, hi), np.eye(3), np.zeros(3), 0.0))


def test_empty_inputs():
    empty = bvh.build_bvh(np.zeros((0, 3)), np.zeros((0, 3)))
    assert all(a.shape[0] == 0 for a in empty.values())
    tree = bvh.BVHTree(empty)
    assert tree.nnode == 0 and tree.nitem == 0
    assert bvh.query_aabb(tree, [-1e9] * 3, [1e9] * 3).shape == (0,)
    other = tree_of(*random_boxes(np.random.default_rng(1), 10))
    assert bvh.query_pair(tree, other, np.eye(3), np.zeros(3), 1.0).shape == (0, 2)
    assert bvh.query_pair(other, tree, np.eye(3), np.zeros(3), 1.0).shape == (0, 2)
    # one item: a single leaf
    one = bvh.build_bvh(np.zeros((1, 3)), np.ones((1, 3)))
    assert one["child"].tolist() == [[-1, -1]] and one["count"].tolist() == [1]



@given(seeds, st.integers(1, 40))
def test_a_query_read_in_chunks_is_the_whole_answer_in_order(seed, chunk):
    # bvh_query_aabb_from: consecutive skips of `chunk` items concatenate to the full answer
    rng = np.random.default_rng(seed)
    lo, hi = random_boxes(rng, int(rng.integers(1, 300)))
    tree = tree_of(lo, hi)
    qlo = rng.uniform(-1, 3, 3)
    qhi = qlo + rng.uniform(0, 3, 3)
    full = bvh.query_aabb(tree, qlo, qhi)
    parts, skip = [], 0
    while True:
        out = np.full(chunk, -7, dtype=np.int32)
        total = bvh.query_aabb_into(tree, qlo, qhi, out, skip=skip)
        assert total == len(full)
        parts.append(out[:max(0, min(chunk, total - skip))])
        assert np.all(out[len(parts[-1]):] == -7)           # nothing written past the answer
        skip += chunk
        if skip >= total:
            break
    assert np.array_equal(np.concatenate(parts), full)
    with pytest.raises(ValueError, match="skip"):
        bvh.query_aabb_into(tree, qlo, qhi, np.zeros(1, np.int32), skip=-1)

def test_capacity_overflow_returns_the_true_count_and_a_prefix():
    rng = np.random.default_rng(2)
    lo, hi = random_boxes(rng, 200)
    tree = tree_of(lo, hi)
    qlo, qhi = np.zeros(3), np.full(3, 3.0)
    full = bvh.query_aabb(tree, qlo, qhi)
    assert len(full) > 10
    for capacity in (0, 1, 10):
        out = np.full(capacity, -7, dtype=np.int32)
        assert bvh.query_aabb_into(tree, qlo, qhi, out) == len(full)
        assert np.array_equal(out, full[:capacity])
    full_pairs = bvh.query_pair(tree, tree, np.eye(3), np.zeros(3), 0.05)
    out = np.full((5, 2), -7, dtype=np.int32)
    assert bvh.query_pair_into(tree, tree, np.eye(3), np.zeros(3), 0.05, out) == len(full_pairs)
    assert np.array_equal(out, full_pairs[:5])


@given(seeds)
def test_build_and_queries_are_deterministic(seed):
    rng = np.random.default_rng(seed)
    lo, hi = random_boxes(rng, 150)
    first, again = bvh.build_bvh(lo, hi), bvh.build_bvh(lo.copy(), hi.copy())
    for name in first:
        assert first[name].tobytes() == again[name].tobytes(), name
    t1, t2 = bvh.BVHTree(first), bvh.BVHTree(again)
    R, p = random_rotation(rng), rng.uniform(-1, 1, 3)
    assert bvh.query_aabb(t1, [1, 1, 1], [3, 3, 3]).tobytes() == \
        bvh.query_aabb(t2, [1, 1, 1], [3, 3, 3]).tobytes()
    assert bvh.query_pair(t1, t2, R, p, 0.1).tobytes() == bvh.query_pair(t1, t2, R, p, 0.1).tobytes()


@given(seeds, st.integers(1, 500), st.integers(1, 9))
def test_tree_invariants(seed, n, leaf_size):
    """Exact union boxes, preorder numbering, contiguous leaf slots holding every item once,
    leaves of at most leaf_size items, depth ceil(log2(n / leaf_size)) (balanced)."""
    rng = np.random.default_rng(seed)
    lo, hi = random_boxes(rng, n)
    t = bvh.build_bvh(lo, hi, leaf_size)
    bounds, child, first, count, item = (t[k] for k in ("bounds", "child", "first", "count", "item"))
    assert sorted(item.tolist()) == list(range(n))
    assert np.array_equal(t["item_bounds"], np.hstack([lo, hi])[item])
    depth = {0: 0}
    for k in range(len(bounds)):
        l, r = child[k]
        if l < 0:
            assert 1 <= count[k] <= leaf_size
            s = slice(first[k], first[k] + count[k])
            box = np.concatenate([lo[item[s]].min(0), hi[item[s]].max(0)])
            assert np.all(np.diff(item[s]) > 0), "leaf items in index order"
        else:
            assert l == k + 1 and count[k] == 0
            depth[l] = depth[r] = depth[k] + 1
            box = np.concatenate([np.minimum(bounds[l, :3], bounds[r, :3]),
                                  np.maximum(bounds[l, 3:], bounds[r, 3:])])
            assert first[l] == first[k] and first[r] == first[l] + _items_below(t, l)
        assert np.array_equal(bounds[k], box)
    assert max(depth.values()) == max(0, math.ceil(math.log2(n / leaf_size)))


def _items_below(t, k):
    l, r = t["child"][k]
    return t["count"][k] if l < 0 else _items_below(t, l) + _items_below(t, r)


def test_median_split_is_along_the_longest_axis():
    # items spread along y only: the root splits them by y into the lower and upper halves
    lo = np.column_stack([np.zeros(8), np.arange(8.0)[::-1], np.zeros(8)])
    t = bvh.build_bvh(lo, lo + 0.5, leaf_size=4)
    left_leaf = t["item"][:4]
    assert sorted(lo[left_leaf, 1].tolist()) == [0.0, 1.0, 2.0, 3.0]
    # all centroids equal: ties go by item index, still balanced
    same = bvh.build_bvh(np.zeros((9, 3)), np.ones((9, 3)), leaf_size=2)
    assert same["item"].tolist() == list(range(9))


def test_mesh_bvh_boxes_are_the_triangle_boxes():
    rng = np.random.default_rng(3)
    verts = rng.normal(size=(60, 3))
    tris = rng.integers(0, 60, (100, 3))
    lo, hi = bvh.triangle_boxes(verts, tris)
    assert np.array_equal(lo, verts[tris].min(axis=1)) and np.array_equal(hi, verts[tris].max(axis=1))
    tree = bvh.BVHTree(bvh.mesh_bvh(verts, tris))
    for qlo, qhi in query_boxes(rng, lo, hi):
        assert np.array_equal(np.sort(bvh.query_aabb(tree, qlo, qhi)), brute_aabb(lo, hi, qlo, qhi))
    with pytest.raises(ValueError, match="indexes outside"):
        bvh.triangle_boxes(verts, [[0, 1, 60]])
    with pytest.raises(TypeError, match="integer"):
        bvh.triangle_boxes(verts, [[0.0, 1.0, 2.0]])


def test_build_rejects_bad_boxes():
    with pytest.raises(ValueError, match="item box 1: lo"):
        bvh.build_bvh([[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [1, 0.5, 1]])
    with pytest.raises(ValueError, match="NaN"):
        bvh.build_bvh([[0, 0, np.nan]], [[1, 1, 1]])
    with pytest.raises(ValueError, match="shape"):
        bvh.build_bvh(np.zeros((3, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="leaf_size"):
        bvh.build_bvh(np.zeros((3, 3)), np.zeros((3, 3)), leaf_size=0)


def _chain(depth):
    """Arrays of a valid but maximally unbalanced tree: inner node k has a leaf and node k + 2."""
    nnode = 2 * depth + 1
    child = np.full((nnode, 2), -1, dtype=np.int32)
    first = np.zeros(nnode, dtype=np.int32)
    count = np.zeros(nnode, dtype=np.int32)
    for d in range(depth):
        k = 2 * d
        child[k] = (k + 1, k + 2)
        first[k + 1], count[k + 1] = d, 1
    first[nnode - 1], count[nnode - 1] = depth, 1
    first[0::2] = np.arange(depth + 1)
    return {"bounds": np.tile([0.0, 0, 0, 1, 1, 1], (nnode, 1)), "child": child, "first": first,
            "count": count, "item": np.arange(depth + 1, dtype=np.int32),
            "item_bounds": np.tile([0.0, 0, 0, 1, 1, 1], (depth + 1, 1))}


def test_bind_accepts_foreign_trees_up_to_the_stack_depth():
    tree = bvh.BVHTree(_chain(60))            # BVH_MAX_DEPTH: queries still fit their stacks
    assert len(bvh.query_aabb(tree, [0, 0, 0], [1, 1, 1])) == 61
    assert len(bvh.query_pair(tree, tree, np.eye(3), np.zeros(3), 0.0)) == 61 * 61
    with pytest.raises(ValueError, match="deeper than BVH_MAX_DEPTH"):
        bvh.BVHTree(_chain(61))


@pytest.mark.parametrize("corrupt, message", [
    (lambda a: a["child"].__setitem__((0, 1), 99), "children must"),
    (lambda a: a["child"].__setitem__((2, 0), 1) or a["child"].__setitem__((2, 1), 3),
     "reached twice"),
    (lambda a: a["bounds"].__setitem__((0, 3), 0.5), "does not contain"),
    (lambda a: a["item_bounds"].__setitem__((0, 0), -1.0), "does not contain"),
    (lambda a: a["count"].__setitem__(1, 0), "slot 0 is in no leaf"),
    (lambda a: a["first"].__setitem__(1, 5), "leaves need"),
    (lambda a: a["item"].__setitem__(0, -3), "negative item"),
    (lambda a: a["bounds"].__setitem__((1, 0), np.inf), "NaN or infinity"),
])
def test_bind_rejects_inconsistent_arrays(corrupt, message):
    arrays = {k: v.copy() for k, v in _chain(3).items()}
    corrupt(arrays)
    with pytest.raises(ValueError, match=message):
        bvh.BVHTree(arrays)


def test_tree_arrays_are_read_only_copies():
    arrays = bvh.build_bvh(np.zeros((5, 3)), np.ones((5, 3)))
    tree = bvh.BVHTree(arrays)
    arrays["bounds"][:] = 0.0                 # the caller's arrays are not the tree's
    assert len(bvh.query_aabb(tree, [0.5] * 3, [0.5] * 3)) == 5
    with pytest.raises(ValueError):
        tree.arrays["bounds"][0, 0] = 1.0
