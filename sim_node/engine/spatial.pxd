# Spatial (6D) algebra on raw double pointers, inlined into every kernel.
#
# Motion vectors m = [v; w] and force vectors f = [f; n], world axes about the world origin.
# 3x3 matrices are row-major. Outputs never alias inputs unless stated.
# World inertias use 10 numbers: [m, hx, hy, hz, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] with h = m c the
# first mass moment and I the rotational inertia about the world origin.
from libc.math cimport atan2, cos, fabs, sin, sqrt


cdef extern from "math.h" nogil:
    void sincos(double x, double* s, double* c)   # GNU extension: both in one call


cdef inline void mat3_mul(const double* A, const double* B, double* out) noexcept nogil:
    # out = A B
    cdef int r
    for r in range(3):
        out[3*r + 0] = A[3*r] * B[0] + A[3*r + 1] * B[3] + A[3*r + 2] * B[6]
        out[3*r + 1] = A[3*r] * B[1] + A[3*r + 1] * B[4] + A[3*r + 2] * B[7]
        out[3*r + 2] = A[3*r] * B[2] + A[3*r + 1] * B[5] + A[3*r + 2] * B[8]


cdef inline void mat3_vec(const double* A, const double* x, double* out) noexcept nogil:
    # out = A x
    out[0] = A[0] * x[0] + A[1] * x[1] + A[2] * x[2]
    out[1] = A[3] * x[0] + A[4] * x[1] + A[5] * x[2]
    out[2] = A[6] * x[0] + A[7] * x[1] + A[8] * x[2]


cdef inline void mat3T_vec(const double* A, const double* x, double* out) noexcept nogil:
    # out = A^T x
    out[0] = A[0] * x[0] + A[3] * x[1] + A[6] * x[2]
    out[1] = A[1] * x[0] + A[4] * x[1] + A[7] * x[2]
    out[2] = A[2] * x[0] + A[5] * x[1] + A[8] * x[2]


cdef inline void cross3(const double* a, const double* b, double* out) noexcept nogil:
    # out = a x b
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


cdef inline void add_cross3(const double* a, const double* b, double* out) noexcept nogil:
    # out += a x b
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline void tangent_basis(const double* n, double* t1, double* t2) noexcept nogil:
    # a right-handed basis (t1, t2, n) of unit n, t1 from the world axis least aligned with n
    cdef double a[3]
    cdef double norm
    a[0] = 0.0
    a[1] = 0.0
    a[2] = 0.0
    if fabs(n[0]) <= fabs(n[1]) and fabs(n[0]) <= fabs(n[2]):
        a[0] = 1.0
    elif fabs(n[1]) <= fabs(n[2]):
        a[1] = 1.0
    else:
        a[2] = 1.0
    cross3(a, n, t1)
    norm = sqrt(dot3(t1, t1))
    t1[0] /= norm
    t1[1] /= norm
    t1[2] /= norm
    cross3(n, t1, t2)


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


cdef inline void rodrigues(const double* k, double angle, double* R) noexcept nogil:
    # R = rotation by `angle` about the unit axis k: cI + s[k]x + (1-c)kk^T
    cdef double c, s
    sincos(angle, &s, &c)
    cdef double t = 1.0 - c
    R[0] = c + t * k[0] * k[0]
    R[1] = t * k[0] * k[1] - s * k[2]
    R[2] = t * k[0] * k[2] + s * k[1]
    R[3] = t * k[0] * k[1] + s * k[2]
    R[4] = c + t * k[1] * k[1]
    R[5] = t * k[1] * k[2] - s * k[0]
    R[6] = t * k[0] * k[2] - s * k[1]
    R[7] = t * k[1] * k[2] + s * k[0]
    R[8] = c + t * k[2] * k[2]


cdef inline void quat_to_R(const double* q, double* R) noexcept nogil:
    # q = (x, y, z, w), assumed unit
    cdef double x = q[0], y = q[1], z = q[2], w = q[3]
    R[0] = 1.0 - 2.0 * (y * y + z * z)
    R[1] = 2.0 * (x * y - z * w)
    R[2] = 2.0 * (x * z + y * w)
    R[3] = 2.0 * (x * y + z * w)
    R[4] = 1.0 - 2.0 * (x * x + z * z)
    R[5] = 2.0 * (y * z - x * w)
    R[6] = 2.0 * (x * z - y * w)
    R[7] = 2.0 * (y * z + x * w)
    R[8] = 1.0 - 2.0 * (x * x + y * y)


cdef inline void quat_mul(const double* a, const double* b, double* out) noexcept nogil:
    # out = a b (Hamilton product of (x, y, z, w) quaternions); out must not alias a or b
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1]
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0]
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3]
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]


cdef inline void quat_exp(const double* r, double* out) noexcept nogil:
    # unit quaternion (x, y, z, w) of the rotation vector r (angle |r| about r / |r|)
    cdef double theta = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    cdef double s, c
    if theta < 1e-6:    # series of sin(theta / 2) / theta
        s = 0.5 - theta * theta / 48.0
    else:
        s = sin(0.5 * theta) / theta
    c = cos(0.5 * theta)
    out[0] = r[0] * s
    out[1] = r[1] * s
    out[2] = r[2] * s
    out[3] = c


cdef inline void quat_log(const double* q, double* out) noexcept nogil:
    # rotation vector (angle in [0, pi] times the unit axis) of the rotation of the quaternion
    # q (x, y, z, w), not necessarily unit; q and -q give the same vector
    cdef double sign = -1.0 if q[3] < 0.0 else 1.0
    cdef double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2])
    cdef double f
    if n == 0.0:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return
    f = sign * 2.0 * atan2(n, sign * q[3]) / n
    out[0] = f * q[0]
    out[1] = f * q[1]
    out[2] = f * q[2]


cdef inline void R_to_quat(const double* R, double* q) noexcept nogil:
    # unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (Shepperd: from the largest of
    # 4w^2, 4x^2, 4y^2, 4z^2, accurate everywhere)
    cdef double tr = R[0] + R[4] + R[8]
    cdef double s, n
    if tr >= R[0] and tr >= R[4] and tr >= R[8]:
        s = 2.0 * sqrt(1.0 + tr)
        q[3] = 0.25 * s
        q[0] = (R[7] - R[5]) / s
        q[1] = (R[2] - R[6]) / s
        q[2] = (R[3] - R[1]) / s
    elif R[0] >= R[4] and R[0] >= R[8]:
        s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8])
        q[0] = 0.25 * s
        q[3] = (R[7] - R[5]) / s
        q[1] = (R[1] + R[3]) / s
        q[2] = (R[2] + R[6]) / s
    elif R[4] >= R[8]:
        s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8])
        q[1] = 0.25 * s
        q[3] = (R[2] - R[6]) / s
        q[0] = (R[1] + R[3]) / s
        q[2] = (R[5] + R[7]) / s
    else:
        s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4])
        q[2] = 0.25 * s
        q[3] = (R[3] - R[1]) / s
        q[0] = (R[2] + R[6]) / s
        q[1] = (R[5] + R[7]) / s
    if q[3] < 0.0:
        q[0] = -q[0]
        q[1] = -q[1]
        q[2] = -q[2]
        q[3] = -q[3]
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] /= n
    q[1] /= n
    q[2] /= n
    q[3] /= n


cdef inline void motion_cross(const double* m, const double* n, double* out) noexcept nogil:
    # out = m x n = [w x n_v + v x n_w; w x n_w]
    cross3(&m[3], &n[0], &out[0])
    add_cross3(&m[0], &n[3], &out[0])
    cross3(&m[3], &n[3], &out[3])


cdef inline void force_cross(const double* m, const double* f, double* out) noexcept nogil:
    # out = m x* f = [w x f; w x n + v x f]
    cross3(&m[3], &f[0], &out[0])
    cross3(&m[3], &f[3], &out[3])
    add_cross3(&m[0], &f[0], &out[3])


cdef inline void inertia_world(double mass, const double* com_B, const double* Icom_B,
                               const double* R, const double* p, double* out) noexcept nogil:
    # Body inertia (mass, com and inertia about the com in body axes) to the 10-number world form.
    cdef double c[3]
    cdef double RI[9]
    cdef double Ic[9]
    cdef double cc
    cdef int r, k
    mat3_vec(R, com_B, c)
    c[0] += p[0]
    c[1] += p[1]
    c[2] += p[2]
    # Ic = R Icom R^T (only the 6 distinct entries are needed)
    mat3_mul(R, Icom_B, RI)
    for r in range(3):
        for k in range(r, 3):
            Ic[3*r + k] = RI[3*r] * R[3*k] + RI[3*r + 1] * R[3*k + 1] + RI[3*r + 2] * R[3*k + 2]
    cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    out[0] = mass
    out[1] = mass * c[0]
    out[2] = mass * c[1]
    out[3] = mass * c[2]
    # parallel axis: I_O = I_c + m (|c|^2 E - c c^T)
    out[4] = Ic[0] + mass * (cc - c[0] * c[0])
    out[5] = Ic[4] + mass * (cc - c[1] * c[1])
    out[6] = Ic[8] + mass * (cc - c[2] * c[2])
    out[7] = Ic[1] - mass * c[0] * c[1]
    out[8] = Ic[2] - mass * c[0] * c[2]
    out[9] = Ic[5] - mass * c[1] * c[2]


cdef inline void inertia_apply(const double* I, const double* m, double* out) noexcept nogil:
    # out = I m: [mass v - h x w; h x v + I_O w]
    cdef const double* h = &I[1]
    cdef const double* v = &m[0]
    cdef const double* w = &m[3]
    out[0] = I[0] * v[0] - (h[1] * w[2] - h[2] * w[1])
    out[1] = I[0] * v[1] - (h[2] * w[0] - h[0] * w[2])
    out[2] = I[0] * v[2] - (h[0] * w[1] - h[1] * w[0])
    out[3] = h[1] * v[2] - h[2] * v[1] + I[4] * w[0] + I[7] * w[1] + I[8] * w[2]
    out[4] = h[2] * v[0] - h[0] * v[2] + I[7] * w[0] + I[5] * w[1] + I[9] * w[2]
    out[5] = h[0] * v[1] - h[1] * v[0] + I[8] * w[0] + I[9] * w[1] + I[6] * w[2]


cdef inline void inertia_add(const double* I, double* out) noexcept nogil:
    # out += I (10-number form)
    cdef int k
    for k in range(10):
        out[k] += I[k]


cdef inline void inertia_to_mat(const double* I, double* out) noexcept nogil:
    # 6x6 row-major matrix of a 10-number inertia: [[m E, -[h]x], [[h]x, I_O]]
    cdef double m = I[0], hx = I[1], hy = I[2], hz = I[3]
    out[0] = m;    out[1] = 0.0;  out[2] = 0.0;  out[3] = 0.0;  out[4] = hz;   out[5] = -hy
    out[6] = 0.0;  out[7] = m;    out[8] = 0.0;  out[9] = -hz;  out[10] = 0.0; out[11] = hx
    out[12] = 0.0; out[13] = 0.0; out[14] = m;   out[15] = hy;  out[16] = -hx; out[17] = 0.0
    out[18] = 0.0; out[19] = -hz; out[20] = hy;  out[21] = I[4]; out[22] = I[7]; out[23] = I[8]
    out[24] = hz;  out[25] = 0.0; out[26] = -hx; out[27] = I[7]; out[28] = I[5]; out[29] = I[9]
    out[30] = -hy; out[31] = hx;  out[32] = 0.0; out[33] = I[8]; out[34] = I[9]; out[35] = I[6]


cdef inline void mat6_vec(const double* A, const double* x, double* out) noexcept nogil:
    # out = A x for a 6x6 row-major A
    cdef int r
    for r in range(6):
        out[r] = (A[6*r] * x[0] + A[6*r + 1] * x[1] + A[6*r + 2] * x[2]
                  + A[6*r + 3] * x[3] + A[6*r + 4] * x[4] + A[6*r + 5] * x[5])


cdef inline void mat6T_vec(const double* A, const double* x, double* out) noexcept nogil:
    # out = A^T x for a 6x6 row-major A
    cdef int c
    for c in range(6):
        out[c] = (A[c] * x[0] + A[6 + c] * x[1] + A[12 + c] * x[2]
                  + A[18 + c] * x[3] + A[24 + c] * x[4] + A[30 + c] * x[5])


cdef inline void mul_axis_rotation(const double* A, int kind, double angle, double* R) noexcept nogil:
    # R = A Rot_k(angle) for a coordinate axis k = |kind| - 1 (kind < 0: about -e_k): only the
    # two columns of A orthogonal to the axis mix, 12 multiplications instead of 27 + Rodrigues
    cdef double c, s
    cdef int i, a, b, r
    if kind < 0:
        angle = -angle
        kind = -kind
    sincos(angle, &s, &c)
    # (a, b) such that Rot_k maps e_a -> c e_a + s e_b and e_b -> -s e_a + c e_b
    if kind == 1:
        a, b, r = 1, 2, 0
    elif kind == 2:
        a, b, r = 2, 0, 1
    else:
        a, b, r = 0, 1, 2
    for i in range(3):
        R[3 * i + a] = c * A[3 * i + a] + s * A[3 * i + b]
        R[3 * i + b] = -s * A[3 * i + a] + c * A[3 * i + b]
        R[3 * i + r] = A[3 * i + r]


cdef inline void motion_to_child(const double* R, const double* p, const double* m,
                                 double* out) noexcept nogil:
    # out = X m: a motion [v; w] at the parent origin in parent axes, seen at the child origin
    # in child axes (R: child axes in the parent, p: child origin in the parent):
    # w_B = R^T w, v_B = R^T (v - p x w)
    cdef double t[3]
    cross3(p, &m[3], t)
    t[0] = m[0] - t[0]
    t[1] = m[1] - t[1]
    t[2] = m[2] - t[2]
    mat3T_vec(R, t, out)
    mat3T_vec(R, &m[3], &out[3])


cdef inline void force_to_parent_add(const double* R, const double* p, const double* f,
                                     double* out) noexcept nogil:
    # out += X^T f: a force [f; n] at the child origin in child axes, moved to the parent:
    # f_P = R f, n_P = R n + p x f_P
    cdef double fl[3]
    cdef double n[3]
    mat3_vec(R, f, fl)
    mat3_vec(R, &f[3], n)
    add_cross3(p, fl, n)
    out[0] += fl[0]
    out[1] += fl[1]
    out[2] += fl[2]
    out[3] += n[0]
    out[4] += n[1]
    out[5] += n[2]
