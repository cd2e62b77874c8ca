"""The last step's contacts, body pairs and contact feedback as numpy arrays (the Scene's
contact_arrays, pair_arrays, feedback_table, feedback)."""
import numpy as np

from sim_node.engine.constraint cimport ContactC, PatchC
from sim_node.engine.pipeline.feedback cimport feedback_entry
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport FeedbackC

_CONTACT_FIELDS = {"body_a": (np.int32, ()), "body_b": (np.int32, ()), "point": (np.float64, (3,)),
                   "normal": (np.float64, (3,)), "distance": (np.float64, ()),
                   "depth": (np.float64, ()), "impulse": (np.float64, (3,)),
                   "torsion": (np.float64, ()), "patch": (np.int32, ())}


def contact_arrays(SceneData d, out=None):
    """The contacts of the last step (see Scene.contact_arrays); `out`, a dict an earlier call
    returned, has its arrays reused when they hold exactly ncontact rows."""
    n = d.ncontact
    if out is None or any(out.get(name) is None or out[name].shape != (n, *shape)
                          or out[name].dtype != dtype
                          for name, (dtype, shape) in _CONTACT_FIELDS.items()):
        out = {name: np.empty((n, *shape), dtype) for name, (dtype, shape) in _CONTACT_FIELDS.items()}
    cdef int[::1] body_a = out["body_a"], body_b = out["body_b"], patch = out["patch"]
    cdef double[:, ::1] point = out["point"], normal = out["normal"], impulse = out["impulse"]
    cdef double[::1] distance = out["distance"], depth = out["depth"], torsion = out["torsion"]
    cdef int i, k, j
    cdef ContactC* c
    cdef PatchC* p
    cdef double total, share
    for i in range(n):
        c = &d.contacts[i]
        p = &d.patches[c.patch]
        total = 0.0
        for j in range(p.first, p.first + p.count):
            total += d.contacts[j].lam
        share = c.lam / total if total > 0.0 else 1.0 / p.count
        body_a[i] = c.body_a
        body_b[i] = c.body_b
        patch[i] = c.patch
        distance[i] = c.distance
        depth[i] = c.depth
        torsion[i] = share * p.lam[2]
        for k in range(3):
            point[i, k] = c.point[k]
            normal[i, k] = c.normal[k]
            impulse[i, k] = c.lam * c.normal[k] + share * (p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k])
    return out


def pair_arrays(SceneData d):
    """The body pairs of the last step, one row per pair (see Scene.pair_arrays)."""
    cdef int i, j, k, row = -1
    cdef PatchC* p
    cdef ContactC* c
    n = sum(1 for i in range(d.npatch) if i == 0
            or d.patches[i].body_a != d.patches[i - 1].body_a
            or d.patches[i].body_b != d.patches[i - 1].body_b)
    out = {"body_a": np.empty(n, np.int32), "body_b": np.empty(n, np.int32),
           "count": np.zeros(n, np.int32), "impulse": np.zeros((n, 3)),
           "angular_impulse": np.zeros((n, 3)), "touched": np.zeros(n, bool),
           "penetrated": np.zeros(n, bool)}
    contacts = contact_arrays(d)
    for i in range(d.npatch):
        p = &d.patches[i]
        if row < 0 or p.body_a != out["body_a"][row] or p.body_b != out["body_b"][row]:
            row += 1        # (a pair's patches are consecutive)
        out["body_a"][row] = p.body_a
        out["body_b"][row] = p.body_b
        out["count"][row] += p.count
        for j in range(p.first, p.first + p.count):
            c = &d.contacts[j]
            out["impulse"][row] += contacts["impulse"][j]
            out["angular_impulse"][row] += np.cross(contacts["point"][j], contacts["impulse"][j])
            if c.depth >= 0.0:
                out["touched"][row] = True
            if c.distance < 0.0:
                out["penetrated"][row] = True
        for k in range(3):
            out["angular_impulse"][row, k] += p.lam[2] * p.normal[k]
    return out


def feedback_table(SceneData d):
    """Every recorded pair as arrays (see Scene.feedback_table)."""
    n = d.nfeedback
    out = {"body_a": np.empty(n, np.int32), "body_b": np.empty(n, np.int32),
           "touching": np.empty(n, bool), "had_contact": np.empty(n, bool),
           "had_separation": np.empty(n, bool), "had_penetration": np.empty(n, bool),
           "force": np.empty((n, 3)), "torque": np.empty((n, 3))}
    cdef int e, k
    for e in range(n):
        out["body_a"][e] = d.fb[e].body_a
        out["body_b"][e] = d.fb[e].body_b
        out["touching"][e] = d.fb[e].touching
        out["had_contact"][e] = d.fb[e].steps_touching > 0
        out["had_separation"][e] = d.fb[e].steps_touching < d.window_steps
        out["had_penetration"][e] = d.fb[e].penetrated
        for k in range(3):
            out["force"][e, k] = d.fb[e].force[k]
            out["torque"][e, k] = d.fb[e].torque[k]
    return out


def feedback(SceneModel m, SceneData d, int body_a, int body_b):
    """Contact feedback of a body pair on body_a, or None (see Scene.feedback); bodies checked
    by the caller."""
    cdef int e = feedback_entry(m, d, min(body_a, body_b), max(body_a, body_b), False)
    if e < 0:
        return None
    cdef FeedbackC* f = &d.fb[e]
    sign = 1.0 if body_a <= body_b else -1.0
    return {
        "touching": bool(f.touching),
        "had_contact": f.steps_touching > 0,
        "had_separation": f.steps_touching < d.window_steps,
        "had_penetration": bool(f.penetrated),
        "force": sign * np.array([f.force[0], f.force[1], f.force[2]]),
        "torque": sign * np.array([f.torque[0], f.torque[1], f.torque[2]]),
        "impulse": sign * np.array([f.impulse[0], f.impulse[1], f.impulse[2]]),
        "angular_impulse": sign * np.array([f.moment[0], f.moment[1], f.moment[2]]),
        "window_steps": d.window_steps, "window_time": d.window_time,
    }
