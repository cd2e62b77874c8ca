"""Feedback stage: per body pair, the contact force of the step and its sums over the feedback
window (types.pxd FeedbackC), for the pairs asked for (or all that touch).

    (patches, impulses) => feedback table: force, torque, impulse and moment sums, flags
"""
from libc.stdlib cimport realloc
from libc.string cimport memmove, memset

from sim_node.engine.constraint cimport ContactC, PatchC
from sim_node.engine.spatial cimport cross3
from sim_node.engine.types cimport FeedbackC


cdef int feedback_entry(SceneModel m, SceneData d, int a, int b, bint create) noexcept nogil:
    # index of pair (a < b) in the feedback table; inserted (zeroed) when create, else -1
    cdef int lo = 0, hi = d.nfeedback, mid
    cdef long key = (<long> a) * m.nbody + b, k
    while lo < hi:
        mid = (lo + hi) // 2
        k = (<long> d.fb[mid].body_a) * m.nbody + d.fb[mid].body_b
        if k == key:
            return mid
        if k < key:
            lo = mid + 1
        else:
            hi = mid
    if not create:
        return -1
    if d.nfeedback == d.feedback_cap:
        d.feedback_cap *= 2
        d.fb = <FeedbackC*> realloc(d.fb, d.feedback_cap * sizeof(FeedbackC))
    memmove(&d.fb[lo + 1], &d.fb[lo], (d.nfeedback - lo) * sizeof(FeedbackC))
    memset(&d.fb[lo], 0, sizeof(FeedbackC))
    d.fb[lo].body_a = a
    d.fb[lo].body_b = b
    d.nfeedback += 1
    return lo


cdef void feedback(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (patches, impulses) => per-pair contact feedback of this step, accumulated
    cdef int i, j, k, e
    cdef PatchC* p
    cdef ContactC* c
    cdef FeedbackC* f
    cdef double sign, touching, lin[3]
    cdef double ang[3]
    for e in range(d.nfeedback):
        f = &d.fb[e]
        f.touching = 0
        for k in range(3):
            f.force[k] = 0.0
            f.torque[k] = 0.0
    for i in range(d.npatch):
        p = &d.patches[i]
        e = feedback_entry(m, d, min(p.body_a, p.body_b), max(p.body_a, p.body_b),
                           d.feedback_all)
        if e < 0:
            continue
        f = &d.fb[e]
        sign = 1.0 if p.body_a < p.body_b else -1.0
        # impulse on a: normal impulses, the patch friction at its centroid, torsion
        for k in range(3):
            lin[k] = p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k]
        cross3(p.point, lin, ang)
        for k in range(3):
            ang[k] += p.lam[2] * p.normal[k]
        touching = 0
        for j in range(p.first, p.first + p.count):
            c = &d.contacts[j]
            for k in range(3):
                lin[k] += c.lam * c.normal[k]
            ang[0] += c.lam * (c.point[1] * c.normal[2] - c.point[2] * c.normal[1])
            ang[1] += c.lam * (c.point[2] * c.normal[0] - c.point[0] * c.normal[2])
            ang[2] += c.lam * (c.point[0] * c.normal[1] - c.point[1] * c.normal[0])
            if c.depth >= 0.0:
                touching = 1
            if c.distance < 0.0:
                f.penetrated = 1
        if touching:
            f.touching = 1
        for k in range(3):
            f.force[k] += sign * lin[k] / dt
            f.torque[k] += sign * ang[k] / dt
            f.impulse[k] += sign * lin[k]
            f.moment[k] += sign * ang[k]
    for e in range(d.nfeedback):
        if d.fb[e].touching:
            d.fb[e].steps_touching += 1
