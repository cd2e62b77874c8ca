"""Forward kinematics, link frames, centre of mass and point Jacobians.

    forward_kinematics: q => (R_WB, p_WB) of every body
    link_placements:    body placements => (R_WL, p_WL) of every URDF link
    center_of_mass:     q => c = sum_k m_k c_k / sum_k m_k over all links [m]
    jacobian:           q, link L, point p_L => J (6 x nv), rows [angular; linear] in world
                        axes, such that [w; v_p] = J qd for the point fixed in L
"""
cimport numpy as cnp

from sim_node.engine.arguments cimport as_vector, data_ptr
from sim_node.engine.model cimport Model, Data, ModelC, DataC
from sim_node.engine.spatial cimport R_to_quat, mat3_mul, mat3_vec, mat3T_vec, cross3

cnp.import_array()


cdef void forward_kinematics(const ModelC* m, DataC* d, const double* q) noexcept nogil:
    cdef int i
    for i in range(m.nbody):
        body_placement(m, d, i, q)


cdef void link_placements(const ModelC* m, DataC* d) noexcept nogil:
    # R_WL = R_WB R_BL, p_WL = p_WB + R_WB p_BL (world-attached links: R_BL, p_BL are in world)
    cdef int l, b, k
    cdef double t[3]
    for l in range(m.nlink):
        b = m.link_body[l]
        if b < 0:
            for k in range(9):
                d.link_R[9 * l + k] = m.link_R[9 * l + k]
            for k in range(3):
                d.link_p[3 * l + k] = m.link_p[3 * l + k]
        else:
            mat3_mul(&d.R[9 * b], &m.link_R[9 * l], &d.link_R[9 * l])
            mat3_vec(&d.R[9 * b], &m.link_p[3 * l], t)
            for k in range(3):
                d.link_p[3 * l + k] = d.p[3 * b + k] + t[k]


cdef double center_of_mass(const ModelC* m, DataC* d, const double* q) noexcept nogil:
    # (q) => (com), returns the total mass. Links welded to the world count too.
    cdef int i, l, k
    cdef double total = 0.0
    cdef double c[3]
    forward_kinematics(m, d, q)
    d.com[0] = 0.0
    d.com[1] = 0.0
    d.com[2] = 0.0
    for i in range(m.nbody):
        mat3_vec(&d.R[9 * i], &m.com[3 * i], c)
        for k in range(3):
            d.com[k] += m.mass[i] * (d.p[3 * i + k] + c[k])
        total += m.mass[i]
    for l in range(m.nlink):
        if m.link_mass[l] > 0.0:
            for k in range(3):
                d.com[k] += m.link_mass[l] * m.link_com_W[3 * l + k]
            total += m.link_mass[l]
    if total > 0.0:
        for k in range(3):
            d.com[k] /= total
    return total


cdef void point_jacobian(const ModelC* m, DataC* d, const double* q, int link,
                         const double* p_L, double* J) noexcept nogil:
    # (q, link, p_L) => (J rows [angular; linear], 6 x nv row-major)
    cdef int nv = m.nv
    cdef int b = m.link_body[link]
    cdef int i, k, col, dof, j
    cdef double pw[3]
    cdef double t[3]
    cdef double lin[3]
    cdef const double* S
    for k in range(6 * nv):
        J[k] = 0.0
    forward_kinematics(m, d, q)
    # point in world: p_W = p_WB + R_WB (p_BL + R_BL p_L)
    mat3_vec(&m.link_R[9 * link], p_L, t)
    for k in range(3):
        t[k] += m.link_p[3 * link + k]
    if b >= 0:
        mat3_vec(&d.R[9 * b], t, pw)
        for k in range(3):
            pw[k] += d.p[3 * b + k]
    else:
        for k in range(3):
            pw[k] = t[k]
    i = b
    while i >= 0:
        body_columns(m, d, i)
        for j in range(m.ncolb[i]):
            col = m.icol[i] + j
            dof = m.col_dof[col]
            S = &d.S[6 * col]
            # velocity of the point: v_O + w x p_W
            cross3(&S[3], pw, lin)
            for k in range(3):
                J[k * nv + dof] += S[3 + k]
                J[(3 + k) * nv + dof] += S[k] + lin[k]
        i = m.parent[i]


def body_placements(Model model not None, Data data not None, q):
    """Body placements at q; returns (data.R (nbody,3,3), data.p (nbody,3)), overwritten later."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    forward_kinematics(&model.c, &data.c, data_ptr(qa))
    return data.arrays["R"], data.arrays["p"]


def frames(Model model not None, Data data not None, q):
    """Placements of every link at q: (link_R (nlink,3,3), link_p (nlink,3))."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    forward_kinematics(&model.c, &data.c, data_ptr(qa))
    link_placements(&model.c, &data.c)
    return data.arrays["link_R"], data.arrays["link_p"]


def com(Model model not None, Data data not None, q):
    """Centre of mass [m] of all links at q (data.com, overwritten by the next call)."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    center_of_mass(&model.c, &data.c, data_ptr(qa))
    return data.arrays["com"]


def total_mass(Model model not None):
    return float(model.arrays["mass"].sum() + model.arrays["link_mass"].sum())


def jacobian(Model model not None, Data data not None, q, int link, point=(0.0, 0.0, 0.0)):
    """Jacobian (6 x nv, rows [angular; linear], world axes) of the point `point` [m] given in
    the coordinates of link `link`, at q. Returns data.J (overwritten by the next call)."""
    cdef cnp.ndarray qa = as_vector(q, model.nq, "q")
    cdef cnp.ndarray pa = as_vector(point, 3, "point")
    if not 0 <= link < model.nlink:
        raise IndexError(f"link index {link} out of range [0, {model.nlink})")
    point_jacobian(&model.c, &data.c, data_ptr(qa), link, data_ptr(pa), data.c.J)
    return data.arrays["J"]


def relative_poses(const double[:, :, ::1] R, const double[:, ::1] p,
                   const Py_ssize_t[::1] frames, const Py_ssize_t[::1] parents,
                   double[:, ::1] out):
    """Pose of each frame in its parent's: out[i] = (translation (3), quaternion (x, y, z, w))
    of frame frames[i] in frame parents[i] (the world when parents[i] < 0), from world
    placements R (m, 3, 3), p (m, 3); out (n, 7)."""
    cdef Py_ssize_t n = frames.shape[0], i, f, a, k
    cdef double Rrel[9]
    cdef double d[3]
    if parents.shape[0] != n or out.shape[0] != n or out.shape[1] != 7:
        raise ValueError("relative_poses: frames, parents and out (n, 7) must agree")
    for i in range(n):
        if not (0 <= frames[i] < R.shape[0] and parents[i] < R.shape[0]):
            raise IndexError(f"relative_poses: frame index out of range at {i}")
    with nogil:
        for i in range(n):
            f = frames[i]
            a = parents[i]
            if a < 0:
                for k in range(3):
                    out[i, k] = p[f, k]
                R_to_quat(&R[f, 0, 0], &out[i, 3])
            else:
                for k in range(3):
                    d[k] = p[f, k] - p[a, k]
                mat3T_vec(&R[a, 0, 0], d, &out[i, 0])
                # Rrel = R_a^T R_f
                for k in range(9):
                    Rrel[k] = (R[a, 0, k // 3] * R[f, 0, k % 3] + R[a, 1, k // 3] * R[f, 1, k % 3]
                               + R[a, 2, k // 3] * R[f, 2, k % 3])
                R_to_quat(Rrel, &out[i, 3])
