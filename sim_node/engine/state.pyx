"""The complete simulation state of a scene as bytes (DESIGN.md §2: a restored run continues bit
for bit): time, per robot its state, solver warm starts and actuator commands with their
memory, the free bodies' states, the user constraints' impulses and the contact warm-start caches.

Layout (float64 each): time; per array group of `_state_arrays` each robot's array; free_state
(nfree x 13); the user constraints' row impulses (nucons x UCONS_MAX_ROWS: their warm start;
none without constraints, so a scene without them keeps its layout); ncache, npcache; the contact cache (ncache x 6: body_a, body_b, point in a's frame
(3), normal impulse); the patch cache (npcache x 9: body_a, body_b, friction (3), torsion, first,
count, touched)."""
import numpy as np

from libc.stdlib cimport realloc

from sim_node.engine.constraint cimport UCONS_MAX_ROWS
from sim_node.engine.pipeline.kinematics cimport kinematics
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport (ACTUATOR_OFF, ACTUATOR_PID, ACTUATOR_TORQUE, CacheEntry,
                                    PatchCache, STATUS_NORMAL)


def _state_arrays(SceneData d):
    # per robot: state, solver warm starts, and the actuator commands and their memory
    return [d.robot_q, d.robot_v, d.robot_row_lam, d.robot_mode,
            d.robot_tau_ff, d.robot_kp, d.robot_ki, d.robot_kd,
            d.robot_q_des, d.robot_v_des, d.robot_iterm, d.robot_advance,
            d.robot_tau]


def get_state(SceneModel m, SceneData d):
    """Everything a restored run needs to continue bit for bit, as bytes (module docstring)."""
    cdef int i, k
    lam = np.empty(UCONS_MAX_ROWS * m.nucons)
    for i in range(UCONS_MAX_ROWS * m.nucons):
        lam[i] = d.ucons_lam[i]
    parts = [np.array([d.time]), *(a for group in _state_arrays(d) for a in group),
             d.free_state.reshape(-1), lam]
    cache = np.empty((d.ncache, 6))
    for i in range(d.ncache):
        cache[i, 0] = d.cache[i].body_a
        cache[i, 1] = d.cache[i].body_b
        for k in range(3):
            cache[i, 2 + k] = d.cache[i].point_A[k]
        cache[i, 5] = d.cache[i].lam
    pcache = np.empty((d.npcache, 9))
    for i in range(d.npcache):
        pcache[i, 0] = d.pcache[i].body_a
        pcache[i, 1] = d.pcache[i].body_b
        for k in range(3):
            pcache[i, 2 + k] = d.pcache[i].friction[k]
        pcache[i, 5] = d.pcache[i].torsion
        pcache[i, 6] = d.pcache[i].first
        pcache[i, 7] = d.pcache[i].count
        pcache[i, 8] = d.pcache[i].touched
    head = np.array([d.ncache, d.npcache], dtype=np.float64)
    return b"".join(p.astype(np.float64).tobytes()
                    for p in (*parts, head, cache.reshape(-1), pcache.reshape(-1)))


def set_state(SceneModel m, SceneData d, bytes state):
    """Restore a state from get_state (of a scene built the same way); checked whole before
    anything is changed. The contacts of the last step are dropped; placements recomputed."""
    cdef int i, k
    arrays = _state_arrays(d)
    cdef int nlam = UCONS_MAX_ROWS * m.nucons
    fixed = 1 + sum(a.size for group in arrays for a in group) + d.free_state.size + nlam
    values = np.frombuffer(state, dtype=np.float64)
    if values.size < fixed + 2:
        raise ValueError("state does not belong to this scene (too short)")
    if np.isnan(values).any():
        raise ValueError("state contains NaN")
    if not (0 <= values[fixed] <= values.size and 0 <= values[fixed + 1] <= values.size):
        raise ValueError("state does not belong to this scene (cache sizes)")
    ncache, npcache = int(values[fixed]), int(values[fixed + 1])
    if values.size != fixed + 2 + 6 * ncache + 9 * npcache:
        raise ValueError("state does not belong to this scene (size mismatch)")
    _check_state_indices(values[fixed + 2:fixed + 2 + 6 * ncache].reshape(ncache, 6),
                         values[fixed + 2 + 6 * ncache:].reshape(npcache, 9),
                         m.nbody)
    offset = 1 + sum(a.size for a in arrays[0] + arrays[1] + arrays[2])
    modes = values[offset:offset + sum(a.size for a in arrays[3])]
    if not np.isin(modes, (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID)).all():
        raise ValueError("state holds an unknown actuator mode")
    d.time = values[0]
    offset = 1
    for group in arrays:
        for a in group:
            a[:] = values[offset:offset + a.size]
            offset += a.size
    d.free_state[:] = values[offset:offset + d.free_state.size].reshape(d.free_state.shape)
    offset += d.free_state.size
    for i in range(nlam):
        d.ucons_lam[i] = values[offset + i]
    cache = values[fixed + 2:fixed + 2 + 6 * ncache].reshape(ncache, 6)
    pcache = values[fixed + 2 + 6 * ncache:].reshape(npcache, 9)
    if ncache > d.cache_cap:
        d.cache_cap = ncache
        d.cache = <CacheEntry*> realloc(d.cache, d.cache_cap * sizeof(CacheEntry))
    if npcache > d.pcache_cap:
        d.pcache_cap = npcache
        d.pcache = <PatchCache*> realloc(d.pcache, d.pcache_cap * sizeof(PatchCache))
    for i in range(ncache):
        d.cache[i].body_a = int(cache[i, 0])
        d.cache[i].body_b = int(cache[i, 1])
        for k in range(3):
            d.cache[i].point_A[k] = cache[i, 2 + k]
        d.cache[i].lam = cache[i, 5]
    for i in range(npcache):
        d.pcache[i].body_a = int(pcache[i, 0])
        d.pcache[i].body_b = int(pcache[i, 1])
        for k in range(3):
            d.pcache[i].friction[k] = pcache[i, 2 + k]
        d.pcache[i].torsion = pcache[i, 5]
        d.pcache[i].first = int(pcache[i, 6])
        d.pcache[i].count = int(pcache[i, 7])
        d.pcache[i].touched = int(pcache[i, 8])
    d.ncache = ncache
    d.npcache = npcache
    d.status = STATUS_NORMAL
    # the contacts of the last step belong to the state left behind: none until a step
    d.ncontact = d.npatch = d.nrow = d.nurow = 0
    with nogil:
        kinematics(m, d, 0.0)


def _check_state_indices(cache, pcache, int nbody):
    # a restored state's warm-start caches index bodies and cache rows: out of range they would
    # read outside the arrays in the step
    for table in (cache, pcache):
        for column in (0, 1):
            ids = table[:, column]
            if ((ids < 0) | (ids >= nbody) | (ids != np.floor(ids))).any():
                raise ValueError("state does not belong to this scene (body index)")
    first, count, touched = pcache[:, 6], pcache[:, 7], pcache[:, 8]
    if ((first < 0) | (count < 0) | (first + count > cache.shape[0])
            | (first != np.floor(first)) | (count != np.floor(count))
            | ((touched != 0) & (touched != 1))).any():
        raise ValueError("state does not belong to this scene (cache rows)")
