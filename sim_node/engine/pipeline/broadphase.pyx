"""Broadphase stage: the body pairs whose grown AABBs overlap and that the filters let collide.

    (body AABBs, filters) => candidate body pairs (i < j)

Filters (PyBullet semantics plus the robot rules): disabled bodies, bodies without shapes, pairs
of which neither side is dynamic, a robot's own bodies unless it self-collides (and then never
adjacent bodies), pairs disabled by world ID, and group / mask bits. A pair enabled by world ID
(the pair override) skips the last two, as PyBullet's custom pair filter is consulted before its
group / mask test; the robot rules still hold, as Bullet's self-collision flags do."""
from libc.stdlib cimport realloc

from sim_node.engine.broadphase cimport sweep_and_prune
from sim_node.engine.types cimport BodyC, BODY_FREE, BODY_ROBOT


cdef void count_collidable(SceneModel m, SceneData d) noexcept nogil:
    # (filters) => which bodies can collide with anything, and how many
    cdef int i, j, r
    for i in range(m.nbody):
        d.bodies[i].collidable = 0
    for i in range(m.nbody):
        for j in range(i + 1, m.nbody):
            if not filtered(m, i, j):
                d.bodies[i].collidable = 1
                d.bodies[j].collidable = 1
    d.ncollidable = 0
    for r in range(m.nrobot):
        d.robots[r].collidable = 0
    for i in range(m.nbody):
        if d.bodies[i].collidable:
            d.ncollidable += 1
            if m.bodies[i].kind == BODY_ROBOT:
                d.robots[m.bodies[i].index].collidable = 1
    d.filters_changed = False


cdef bint filtered(SceneModel m, int i, int j) noexcept nogil:
    # True when bodies i and j must not collide
    cdef const BodyC* a = &m.bodies[i]
    cdef const BodyC* b = &m.bodies[j]
    cdef unsigned long long key
    if not a.enabled or not b.enabled or a.nshape == 0 or b.nshape == 0:
        return True
    if not _dynamic(m, a) and not _dynamic(m, b):
        return True
    if a.robot >= 0 and a.robot == b.robot:
        if not m.robots[a.robot].self_collision:
            return True
        # adjacent bodies never collide (robot_body -1: the links welded to the world)
        if a.robot_body >= 0 and m.robots[a.robot].body_adjacent[a.robot_body] == b.robot_body:
            return True
        if b.robot_body >= 0 and m.robots[a.robot].body_adjacent[b.robot_body] == a.robot_body:
            return True
    if m.nenabled > 0 or m.ndisabled > 0:
        key = ((<unsigned long long> min(a.id, b.id)) << 32) | (<unsigned long long> max(a.id, b.id))
        if _listed(m.enabled, m.nenabled, key):
            return False
        if _listed(m.disabled, m.ndisabled, key):
            return True
    return (a.group & b.mask) == 0 or (b.group & a.mask) == 0


cdef inline bint _listed(const unsigned long long* keys, int n, unsigned long long key) noexcept nogil:
    # key is in the sorted keys[0:n] (binary search)
    cdef int lo = 0, hi = n - 1, mid
    while lo <= hi:
        mid = (lo + hi) // 2
        if keys[mid] == key:
            return True
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid - 1
    return False


cdef void broadphase(SceneModel m, SceneData d) noexcept nogil:
    # (body AABBs) => candidate pairs (i < j) whose boxes overlap and that may collide
    cdef int n, i, k = 0
    if d.ncollidable < 2:
        d.ncand = 0
        return
    n = sweep_and_prune(m.nbody, d.box, d.sap_order, d.cand, d.cand_cap)
    if n > d.cand_cap:
        d.cand_cap = 2 * n
        d.cand = <int*> realloc(d.cand, 2 * d.cand_cap * sizeof(int))
        d.pair_raw = <int*> realloc(d.pair_raw, 4 * d.cand_cap * sizeof(int))  # (same capacity)
        n = sweep_and_prune(m.nbody, d.box, d.sap_order, d.cand, d.cand_cap)
    for i in range(n):
        if not filtered(m, d.cand[2 * i], d.cand[2 * i + 1]):
            d.cand[2 * k] = d.cand[2 * i]
            d.cand[2 * k + 1] = d.cand[2 * i + 1]
            k += 1
    d.ncand = k


cdef inline bint _dynamic(SceneModel m, const BodyC* b) noexcept nogil:
    if b.kind == BODY_ROBOT:
        return True
    if b.kind == BODY_FREE:
        return not m.free_bodies[b.index].kinematic
    return False
