"""Narrowphase stage: contact points between the shapes of every candidate body pair.

    (candidate pairs, placed shapes, paddings, speeds) => raw contacts per pair (normal from b to a)

Contacts are generated between the real geometries while they are closer than
padding_a + padding_b plus the distance the pair can close during the step (so fast bodies
cannot tunnel through thin geometry). A pair is oriented so that b is the static side when
there is one; its contacts are d.raw[first : first + count] (d.pair_raw), reduced in place by
the clustering stage."""
from libc.stdlib cimport realloc

from sim_node.engine.geometry cimport (RawContact, SHAPE_SPHERE, SHAPE_PLANE, SHAPE_MESH,
                                       SHAPE_HEIGHTFIELD)
from sim_node.engine.narrowphase cimport collide
from sim_node.engine.types cimport BodyC, BODY_STATIC, RAW_PER_SHAPE_PAIR, ShapeC


cdef void narrowphase(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (candidate pairs, shapes) => raw contacts per pair (normal from b to a)
    cdef int p, i, j, sa, sb, n, c, mc
    cdef const BodyC* A
    cdef const BodyC* B
    cdef double margin
    cdef bint flip
    d.nraw = 0
    for p in range(d.ncand):
        i = d.cand[2 * p]
        j = d.cand[2 * p + 1]
        # orient the pair so that b is the static / plane side when there is one
        if m.bodies[i].kind == BODY_STATIC:
            i, j = j, i
        A = &m.bodies[i]
        B = &m.bodies[j]
        margin = A.padding + B.padding + (d.bodies[i].speed + d.bodies[j].speed) * dt
        n = d.nraw
        for sa in range(A.first_shape, A.first_shape + A.nshape):
            for sb in range(B.first_shape, B.first_shape + B.nshape):
                if d.raw_cap - n < RAW_PER_SHAPE_PAIR:
                    d.raw_cap = 2 * d.raw_cap + RAW_PER_SHAPE_PAIR
                    d.raw = <RawContact*> realloc(d.raw, d.raw_cap * sizeof(RawContact))
                    d.scratch = <int*> realloc(d.scratch, d.raw_cap * sizeof(int))
                flip = _flip_shapes(&d.shapes[sa], &d.shapes[sb])
                d.count_shape_pairs += 1
                if flip:
                    mc = collide(&d.shapes[sb], &d.shapes[sa], margin, &d.raw[n],
                                 RAW_PER_SHAPE_PAIR)
                    for c in range(n, n + mc):
                        _flip_raw(&d.raw[c])
                else:
                    mc = collide(&d.shapes[sa], &d.shapes[sb], margin, &d.raw[n],
                                 RAW_PER_SHAPE_PAIR)
                n += mc
        d.pair_raw[4 * p] = i
        d.pair_raw[4 * p + 1] = j
        d.pair_raw[4 * p + 2] = d.nraw
        d.pair_raw[4 * p + 3] = n - d.nraw
        d.nraw = n


cdef inline bint _flip_shapes(const ShapeC* a, const ShapeC* b) noexcept nogil:
    # collide() wants the plane / mesh / heightfield as B, and the sphere first among spheres
    if a.type == SHAPE_PLANE or a.type == SHAPE_HEIGHTFIELD:
        return True
    if a.type == SHAPE_MESH and b.type != SHAPE_PLANE and b.type != SHAPE_HEIGHTFIELD and b.type != SHAPE_MESH:
        return True
    if b.type == SHAPE_SPHERE and a.type != SHAPE_SPHERE and a.type != SHAPE_PLANE:
        return True
    return False


cdef inline void _flip_raw(RawContact* c) noexcept nogil:
    cdef double t
    cdef int k
    for k in range(3):
        t = c.pa[k]
        c.pa[k] = c.pb[k]
        c.pb[k] = t
        c.normal[k] = -c.normal[k]
