# Forward kinematics, link frames, centre of mass and Jacobians.
from sim_node.engine.model cimport (ModelC, DataC, JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_FREE,
                                    JOINT_SPHERICAL)
from sim_node.engine.spatial cimport (mat3_mul, mat3_vec, rodrigues, quat_to_R, cross3,
                                      mul_axis_rotation)


cdef inline void body_placement(const ModelC* m, DataC* d, int i, const double* q) noexcept nogil:
    # (q, R_WB and p_WB of the parent) => (R_WB, p_WB of body i)
    cdef int par = m.parent[i]
    cdef double A[9]
    cdef double Rj[9]
    cdef double t[3]
    cdef double* R = &d.R[9 * i]
    cdef double* p = &d.p[3 * i]
    cdef const double* axis = &m.axis[3 * i]
    cdef double qi
    cdef int k
    # A = R_WP R_tree, p = p_WP + R_WP p_tree: the joint frame at q = 0
    if par >= 0:
        mat3_vec(&d.R[9 * par], &m.p_tree[3 * i], t)
        p[0] = d.p[3 * par] + t[0]
        p[1] = d.p[3 * par + 1] + t[1]
        p[2] = d.p[3 * par + 2] + t[2]
        if m.tree_rot_identity[i]:
            for k in range(9):
                A[k] = d.R[9 * par + k]
        else:
            mat3_mul(&d.R[9 * par], &m.R_tree[9 * i], A)
    else:
        for k in range(3):
            p[k] = m.p_tree[3 * i + k]
        for k in range(9):
            A[k] = m.R_tree[9 * i + k]
    if m.jtype[i] == JOINT_REVOLUTE:
        qi = m.mimic_mult[i] * q[m.iq[i]] + m.mimic_offset[i]
        if m.axis_kind[i] != 0:
            mul_axis_rotation(A, m.axis_kind[i], qi, R)
        else:
            rodrigues(axis, qi, Rj)
            mat3_mul(A, Rj, R)
    elif m.jtype[i] == JOINT_PRISMATIC:
        qi = m.mimic_mult[i] * q[m.iq[i]] + m.mimic_offset[i]
        for k in range(9):
            R[k] = A[k]
        mat3_vec(A, axis, t)
        p[0] += t[0] * qi
        p[1] += t[1] * qi
        p[2] += t[2] * qi
    elif m.jtype[i] == JOINT_SPHERICAL:
        quat_to_R(&q[m.iq[i]], Rj)
        mat3_mul(A, Rj, R)
    else:  # JOINT_FREE
        quat_to_R(&q[m.iq[i] + 3], Rj)
        mat3_mul(A, Rj, R)
        mat3_vec(A, &q[m.iq[i]], t)
        p[0] += t[0]
        p[1] += t[1]
        p[2] += t[2]


cdef inline void body_columns(const ModelC* m, DataC* d, int i) noexcept nogil:
    # (R_WB, p_WB of body i) => (S columns of body i, world axes about the origin)
    cdef double* S = &d.S[6 * m.icol[i]]
    cdef const double* R = &d.R[9 * i]
    cdef const double* p = &d.p[3 * i]
    cdef double mult = m.mimic_mult[i]
    cdef int k
    if m.jtype[i] == JOINT_REVOLUTE:
        # rotation about the world axis a through p: S = [p x a; a]
        mat3_vec(R, &m.axis[3 * i], &S[3])
        S[3] *= mult
        S[4] *= mult
        S[5] *= mult
        cross3(p, &S[3], &S[0])
    elif m.jtype[i] == JOINT_PRISMATIC:
        mat3_vec(R, &m.axis[3 * i], &S[0])
        S[0] *= mult
        S[1] *= mult
        S[2] *= mult
        S[3] = 0.0
        S[4] = 0.0
        S[5] = 0.0
    elif m.jtype[i] == JOINT_SPHERICAL:
        # angular velocity in body axes: rotations about R e_k through p, [p x R e_k; R e_k]
        for k in range(3):
            S[6 * k + 3] = R[k]
            S[6 * k + 4] = R[3 + k]
            S[6 * k + 5] = R[6 + k]
            cross3(p, &S[6 * k + 3], &S[6 * k])
    else:  # JOINT_FREE, velocities in body axes: columns [R e_k; 0] then [p x R e_k; R e_k]
        for k in range(3):
            S[6 * k + 0] = R[k]
            S[6 * k + 1] = R[3 + k]
            S[6 * k + 2] = R[6 + k]
            S[6 * k + 3] = 0.0
            S[6 * k + 4] = 0.0
            S[6 * k + 5] = 0.0
            S[6 * (k + 3) + 0] = 0.0
            S[6 * (k + 3) + 1] = 0.0
            S[6 * (k + 3) + 2] = 0.0
            S[6 * (k + 3) + 3] = R[k]
            S[6 * (k + 3) + 4] = R[3 + k]
            S[6 * (k + 3) + 5] = R[6 + k]
            cross3(p, &S[6 * (k + 3) + 3], &S[6 * (k + 3)])


cdef inline void joint_placement(const ModelC* m, int i, const double* q, double* R,
                                 double* p) noexcept nogil:
    # (q) => (R_PB: body axes in the parent frame, p_PB: body origin in the parent frame)
    cdef double Rj[9]
    cdef double t[3]
    cdef double qi
    cdef int k
    if m.jtype[i] == JOINT_REVOLUTE:
        qi = m.mimic_mult[i] * q[m.iq[i]] + m.mimic_offset[i]
        if m.axis_kind[i] != 0:
            mul_axis_rotation(&m.R_tree[9 * i], m.axis_kind[i], qi, R)
        else:
            rodrigues(&m.axis[3 * i], qi, Rj)
            mat3_mul(&m.R_tree[9 * i], Rj, R)
        for k in range(3):
            p[k] = m.p_tree[3 * i + k]
    elif m.jtype[i] == JOINT_PRISMATIC:
        qi = m.mimic_mult[i] * q[m.iq[i]] + m.mimic_offset[i]
        for k in range(9):
            R[k] = m.R_tree[9 * i + k]
        mat3_vec(R, &m.axis[3 * i], t)
        for k in range(3):
            p[k] = m.p_tree[3 * i + k] + t[k] * qi
    elif m.jtype[i] == JOINT_SPHERICAL:
        quat_to_R(&q[m.iq[i]], Rj)
        mat3_mul(&m.R_tree[9 * i], Rj, R)
        for k in range(3):
            p[k] = m.p_tree[3 * i + k]
    else:  # JOINT_FREE
        quat_to_R(&q[m.iq[i] + 3], Rj)
        mat3_mul(&m.R_tree[9 * i], Rj, R)
        mat3_vec(&m.R_tree[9 * i], &q[m.iq[i]], t)
        for k in range(3):
            p[k] = m.p_tree[3 * i + k] + t[k]


cdef inline void body_velocity(const ModelC* m, DataC* d, int i, const double* qd,
                               double* vJ) noexcept nogil:
    # (S columns of body i, v of its parent, qd) => (vJ = S_i qd_i, v_i = v_p + vJ), world frame
    cdef int j, k, col
    cdef int par = m.parent[i]
    cdef double* v = &d.v[6 * i]
    for k in range(6):
        vJ[k] = 0.0
    for j in range(m.ncolb[i]):
        col = m.icol[i] + j
        for k in range(6):
            vJ[k] += d.S[6 * col + k] * qd[m.col_dof[col]]
    for k in range(6):
        v[k] = (d.v[6 * par + k] if par >= 0 else 0.0) + vJ[k]


cdef void forward_kinematics(const ModelC* m, DataC* d, const double* q) noexcept nogil
cdef void link_placements(const ModelC* m, DataC* d) noexcept nogil
cdef double center_of_mass(const ModelC* m, DataC* d, const double* q) noexcept nogil
cdef void point_jacobian(const ModelC* m, DataC* d, const double* q, int link,
                         const double* p_L, double* J) noexcept nogil
