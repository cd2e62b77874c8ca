"""Warm start of the solver from the previous step's impulses, and the record that keeps them.

    (impulses, contacts in their bodies' frames) => contact and patch caches, joint-row
    impulses per DOF, the pairs that separated                 [record, after the step]
    (caches) => initial impulses of this step's contacts and patches   [constraints stage]

A contact finds its predecessor by its position in body a's frame (within WARM_START_RADIUS);
a patch's friction follows the old patch its first cached contact was in. The caches are part
of the saved state (state.pyx)."""
from libc.math cimport sqrt
from libc.stdlib cimport realloc

from sim_node.engine.constraint cimport RowC
from sim_node.engine.spatial cimport dot3, mat3T_vec
from sim_node.engine.types cimport BodyStateC, CacheEntry, PatchCache, WARM_START_RADIUS


cdef int cached_patch(SceneModel m, SceneData d, int body_a, int body_b) noexcept nogil:
    # index of the first of the previous step's patches of this pair, -1 if none: patches
    # are recorded in (body_a, body_b)-sorted order (a stable sort: a pair's patches stay
    # together, in their order), so a binary search finds them
    cdef int lo = 0, hi = d.npcache - 1, mid
    cdef long key = (<long> body_a) * m.nbody + body_b, k
    while lo <= hi:
        mid = (lo + hi) // 2
        k = (<long> d.pcache[mid].body_a) * m.nbody + d.pcache[mid].body_b
        if k == key:
            while mid > 0 and _cached_pair_is(d, mid - 1, body_a, body_b):
                mid -= 1
            return mid
        if k < key:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef inline bint _cached_pair_is(SceneData d, int k, int body_a, int body_b) noexcept nogil:
    return (0 <= k < d.npcache and d.pcache[k].body_a == body_a
            and d.pcache[k].body_b == body_b)


cdef int warm_start_contact(SceneModel m, SceneData d, ContactC* c, int cached) noexcept nogil:
    # normal impulse of the cached contact of the same pair nearest to this one (a's frame);
    # returns the cached patch that contact was in (-1: none within WARM_START_RADIUS)
    cdef BodyStateC* a = &d.bodies[c.body_a]
    cdef double local[3]
    cdef double t[3]
    cdef double d2, best = WARM_START_RADIUS * WARM_START_RADIUS
    cdef int i, hit = -1, k, patch = -1
    c.lam = 0.0
    if cached < 0:
        return -1
    for k in range(3):
        t[k] = c.point[k] - a.p[k]
    mat3T_vec(a.R, t, local)
    while _cached_pair_is(d, cached, c.body_a, c.body_b):
        for i in range(d.pcache[cached].first, d.pcache[cached].first + d.pcache[cached].count):
            d2 = 0.0
            for k in range(3):
                d2 += (d.cache[i].point_A[k] - local[k]) ** 2
            if d2 < best:
                best = d2
                hit = i
                patch = cached
        cached += 1
    if hit >= 0 and c.bounce == 0.0:
        c.lam = d.cache[hit].lam
    return patch


cdef void warm_start_patch(SceneData d, PatchC* p, int cached) noexcept nogil:
    # the pair's friction impulse of the previous step, in the new tangent basis, on its disk
    cdef int i
    cdef double normal = 0.0, spin = 0.0, lt, limit
    p.lam[0] = p.lam[1] = p.lam[2] = 0.0
    if cached >= 0:
        p.lam[0] = dot3(d.pcache[cached].friction, p.t1)
        p.lam[1] = dot3(d.pcache[cached].friction, p.t2)
        p.lam[2] = d.pcache[cached].torsion
    for i in range(p.first, p.first + p.count):
        normal += d.contacts[i].lam
        spin += d.contacts[i].lam * d.contacts[i].rho
    lt = sqrt(p.lam[0] * p.lam[0] + p.lam[1] * p.lam[1])
    limit = p.mu * normal
    if lt > limit and lt > 0.0:
        p.lam[0] *= limit / lt
        p.lam[1] *= limit / lt
    p.lam[2] = min(max(p.lam[2], -p.mu * spin), p.mu * spin)


cdef void record(SceneModel m, SceneData d) noexcept nogil:
    # (impulses) => warm-start caches for the next step; row impulses kept per DOF
    cdef int i, k, r
    cdef ContactC* c
    cdef PatchC* p
    cdef BodyStateC* a
    cdef double t[3]
    cdef RowC* row
    if d.ncontact > d.cache_cap:
        d.cache_cap = 2 * d.ncontact
        d.cache = <CacheEntry*> realloc(d.cache, d.cache_cap * sizeof(CacheEntry))
    for i in range(d.ncontact):
        c = &d.contacts[i]
        a = &d.bodies[c.body_a]
        d.cache[i].body_a = c.body_a
        d.cache[i].body_b = c.body_b
        # the point as seen from a's frame at the START of the step (where it was found)
        for k in range(3):
            t[k] = c.point[k] - a.p[k]
        mat3T_vec(a.R, t, d.cache[i].point_A)
        d.cache[i].lam = c.lam
    d.ncache = d.ncontact
    # pairs that touched last step: kept aside to find the ones that separate now
    d.nseparated = 0
    for i in range(d.npcache):
        if d.pcache[i].touched:
            if d.nseparated > 0 and d.separated[2 * d.nseparated - 2] == d.pcache[i].body_a \
                    and d.separated[2 * d.nseparated - 1] == d.pcache[i].body_b:
                continue            # another patch of the pair (the cache is sorted by pair)
            if d.nseparated == d.separated_cap:
                d.separated_cap *= 2
                d.separated = <int*> realloc(d.separated, 2 * d.separated_cap * sizeof(int))
            d.separated[2 * d.nseparated] = d.pcache[i].body_a
            d.separated[2 * d.nseparated + 1] = d.pcache[i].body_b
            d.nseparated += 1
    if d.npatch > d.pcache_cap:
        d.pcache_cap = 2 * d.npatch
        d.pcache = <PatchCache*> realloc(d.pcache, d.pcache_cap * sizeof(PatchCache))
    for i in range(d.npatch):
        p = &d.patches[i]
        d.pcache[i].body_a = p.body_a
        d.pcache[i].body_b = p.body_b
        for k in range(3):
            d.pcache[i].friction[k] = p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k]
        d.pcache[i].torsion = p.lam[2]
        d.pcache[i].first = p.first
        d.pcache[i].count = p.count
        d.pcache[i].touched = 0
        for k in range(p.first, p.first + p.count):
            if d.contacts[k].depth >= 0.0:
                d.pcache[i].touched = 1
    d.npcache = d.npatch
    _sort_patch_cache(d.pcache, d.npcache, m.nbody)
    # drop from the old touching pairs those that still touch (both lists sorted)
    k = 0
    for i in range(d.nseparated):
        if not _pair_touched(m, d, d.separated[2 * i], d.separated[2 * i + 1]):
            d.separated[2 * k] = d.separated[2 * i]
            d.separated[2 * k + 1] = d.separated[2 * i + 1]
            k += 1
    d.nseparated = k
    for i in range(d.nrow):
        row = &d.rows[i]
        for r in range(m.nrobot):
            # a robot without DOFs (a fixed URDF such as a ground plane) shares its vel_offset
            # with the next robot: only the robot that owns the row's DOFs keeps its impulse
            # (matching the empty one wrote past its zero-length row_lam)
            if m.robots[r].vel_offset == row.vel0 and m.robots[r].model.nv == row.nv:
                k = row.vel - row.vel0
                if row.lo == 0.0:
                    d.robots[r].row_lam[3 * k + (0 if row.sign > 0 else 1)] = row.lam
                else:
                    d.robots[r].row_lam[3 * k + 2] = row.lam
                break


cdef bint _pair_touched(SceneModel m, SceneData d, int body_a, int body_b) noexcept nogil:
    # some patch of the pair recorded by the last step was within the boundary layers
    cdef int k = cached_patch(m, d, body_a, body_b)
    while k >= 0 and _cached_pair_is(d, k, body_a, body_b):
        if d.pcache[k].touched:
            return True
        k += 1
    return False


cdef void _sort_patch_cache(PatchCache* c, int n, int nbody) noexcept nogil:
    # insertion sort by (body_a, body_b): patches come nearly sorted (broadphase order)
    cdef int i, j
    cdef PatchCache t
    cdef long key
    for i in range(1, n):
        t = c[i]
        key = (<long> t.body_a) * nbody + t.body_b
        j = i - 1
        while j >= 0 and (<long> c[j].body_a) * nbody + c[j].body_b > key:
            c[j + 1] = c[j]
            j -= 1
        c[j + 1] = t
