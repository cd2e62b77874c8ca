"""Clustering stage: each body pair's raw contacts reduced to at most max_contacts and grouped
into friction patches.

    (raw contacts per pair) => contacts, patches (per pair, normal from b to a)

The points kept support the pair within the rest gap plus the step's approach of the deepest
(of a rigid pair, only those that may close their gap this step, and of a flat face only its
outline: cluster.pyx);
the contacts of a pair with near normals form a patch (a face, or a curved surface): each
contact carries its own normal impulse, the patch the friction (constraint.pxd)."""
from libc.math cimport sqrt, INFINITY
from libc.stdlib cimport realloc
from libc.string cimport memset

from sim_node.engine.cluster cimport MAX_GROUPED, cluster_contacts, group_by_normal, prune_rigid
from sim_node.engine.constraint cimport ContactC, PatchC
from sim_node.engine.geometry cimport RawContact
from sim_node.engine.spatial cimport dot3, tangent_basis
from sim_node.engine.types cimport BodyC, MERGE_RADIUS, REST_GAP_FRACTION


cdef void clustering(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (raw contacts per pair) => contacts clustered per pair, friction patches
    cdef int p, i, j, n, k, c, mc, g, ngroup
    cdef int sizes[MAX_GROUPED]
    cdef const BodyC* A
    cdef const BodyC* B
    cdef double norm, along, band
    cdef double rel[3]
    cdef RawContact* raw
    cdef RawContact* rc
    cdef ContactC* out
    cdef PatchC* patch
    d.ncontact = 0
    d.npatch = 0
    for p in range(d.ncand):
        n = d.pair_raw[4 * p + 3]
        if n == 0:
            continue
        i = d.pair_raw[4 * p]
        j = d.pair_raw[4 * p + 1]
        raw = &d.raw[d.pair_raw[4 * p + 2]]
        A = &m.bodies[i]
        B = &m.bodies[j]
        # supporting points: within the rest gap plus the step's approach of the deepest
        band = (REST_GAP_FRACTION * (A.padding + B.padding)
                + (d.bodies[i].speed + d.bodies[j].speed) * dt)
        if _harmonic(A.stiffness, B.stiffness) == INFINITY \
                or _harmonic(A.damping, B.damping) == INFINITY:
            # rigid (constraints.pyx): only the points that may close their gap this step,
            # of a flat face too many for max_contacts its outline
            n = prune_rigid(raw, n, m.max_contacts, band, MERGE_RADIUS, d.scratch)
        n = cluster_contacts(raw, n, m.max_contacts, MERGE_RADIUS, band, d.scratch)
        d.pair_raw[4 * p + 3] = n
        # a friction patch per group of near normals (a face, or a curved surface)
        ngroup = group_by_normal(raw, n, sizes)
        if d.npatch + ngroup > d.patch_cap:
            d.patch_cap = 2 * (d.npatch + ngroup)
            d.patches = <PatchC*> realloc(d.patches, d.patch_cap * sizeof(PatchC))
        if d.ncontact + n > d.contact_cap:
            d.contact_cap = 2 * (d.ncontact + n)
            d.contacts = <ContactC*> realloc(d.contacts, d.contact_cap * sizeof(ContactC))
        mc = 0
        for g in range(ngroup):
            patch = &d.patches[d.npatch]
            memset(patch, 0, sizeof(PatchC))
            patch.body_a = i
            patch.body_b = j
            patch.first = d.ncontact
            patch.count = sizes[g]
            patch.mu = _harmonic(A.friction, B.friction)
            for c in range(mc, mc + sizes[g]):
                rc = &raw[c]
                out = &d.contacts[d.ncontact]
                memset(out, 0, sizeof(ContactC))
                out.body_a = i
                out.body_b = j
                out.patch = d.npatch
                for k in range(3):
                    out.point[k] = 0.5 * (rc.pa[k] + rc.pb[k])
                    out.normal[k] = rc.normal[k]
                    patch.point[k] += out.point[k] / sizes[g]
                    patch.normal[k] += out.normal[k]
                out.distance = rc.distance
                out.depth = A.padding + B.padding - rc.distance
                out.restitution = 0.5 * (A.restitution + B.restitution)
                out.stiffness = _harmonic(A.stiffness, B.stiffness)
                out.damping = _harmonic(A.damping, B.damping)
                d.ncontact += 1
            mc += sizes[g]
            norm = sqrt(dot3(patch.normal, patch.normal))
            for k in range(3):
                patch.normal[k] /= norm
            tangent_basis(patch.normal, patch.t1, patch.t2)
            for c in range(patch.first, patch.first + patch.count):
                out = &d.contacts[c]
                for k in range(3):
                    rel[k] = out.point[k] - patch.point[k]
                along = dot3(rel, patch.normal)
                out.rho = sqrt(max(0.0, dot3(rel, rel) - along * along))
            d.npatch += 1


cdef inline double _harmonic(double a, double b) noexcept nogil:
    # 2 / (1/a + 1/b) with 1/inf = 0 (the seed's blending rule)
    if a == 0.0 or b == 0.0:
        return 0.0
    if a == INFINITY and b == INFINITY:
        return INFINITY
    return 2.0 / (1.0 / a + 1.0 / b)
