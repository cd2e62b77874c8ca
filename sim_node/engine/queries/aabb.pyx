"""The bodies' world axis-aligned bounding boxes: the union of each body's shapes' boxes, as
the kinematics stage placed them (no padding, no sweep: the geometry itself).

    (body placements, shapes) => (nbody, 2, 3) [lower corner, upper corner] [m]
"""
import numpy as np

from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel


def body_aabbs(SceneModel m, SceneData d, out=None):
    """(nbody, 2, 3) float64: row 0 the lower, row 1 the upper corner of each collision body's
    box in the world [m], from the last kinematics pass (Scene.refresh() places every body; a
    step places only the bodies that can collide). A body without shapes gets (+inf, -inf).
    `out`, an array of that shape and dtype, is filled and returned."""
    if out is None:
        out = np.empty((m.nbody, 2, 3))
    elif (not isinstance(out, np.ndarray) or out.shape != (m.nbody, 2, 3)
          or out.dtype != np.float64 or not out.flags.c_contiguous):
        raise ValueError(f"body_aabbs: out must be a C-contiguous float64 array of shape "
                         f"({m.nbody}, 2, 3)")
    cdef double[:, :, ::1] box = out
    cdef int i, k
    for i in range(m.nbody):
        for k in range(3):
            box[i, 0, k] = d.bodies[i].lo[k]
            box[i, 1, k] = d.bodies[i].hi[k]
    return out


def shape_aabbs(SceneModel m, SceneData d, out=None):
    """(nshape, 2, 3) float64: the world box [lower; upper corner] of each collision shape [m]
    from the last kinematics pass (a plane's is unbounded across it). `out` as in body_aabbs."""
    if out is None:
        out = np.empty((m.nshape, 2, 3))
    elif (not isinstance(out, np.ndarray) or out.shape != (m.nshape, 2, 3)
          or out.dtype != np.float64 or not out.flags.c_contiguous):
        raise ValueError(f"shape_aabbs: out must be a C-contiguous float64 array of shape "
                         f"({m.nshape}, 2, 3)")
    cdef double[:, :, ::1] box = out
    cdef int i, k
    for i in range(m.nshape):
        for k in range(3):
            box[i, 0, k] = d.shapes[i].lo[k]
            box[i, 1, k] = d.shapes[i].hi[k]
    return out
