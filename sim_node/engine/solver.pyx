"""Projected Gauss-Seidel on the contact, friction and joint constraints of one step.

Velocities after the step are vel = vel_free + M^-1 J^T lambda. The unknowns:
    normal      per contact: lambda_n >= 0 with u_n >= target, complementary (rigid), or the
                compliant-layer law u_n + gamma lambda_n = target;
    friction    per patch (the contacts of one body pair), at its centroid: a tangential
                impulse on the true Coulomb disk |lambda_t| <= mu sum(lambda_n), reaching the
                circle and pointing exactly against the slip when the patch slides, and a
                torsional impulse |lambda_tau| <= mu sum(lambda_n rho) (rho: distance of each
                contact from the centroid). One friction unknown per in-plane DOF of the patch
                makes the problem well posed; per-point friction at four coplanar corners has
                a five-dimensional null space that Gauss-Seidel wanders in for hundreds of
                sweeps (a stack of boxes then jitters);
    joint rows  a bounded impulse per robot DOF: limits (lambda >= 0), dry friction
                (|lambda| <= friction dt);
    user rows   a bounded impulse per row of a user constraint (|lambda| <= max_force dt,
                pipeline/user_constraints.pyx), one row at a time.
Each visit of a patch reads its rows' velocities once, updates its rows keeping those velocities
current through the patch's own Delassus matrix A (normal rows, then t1, t2, torsion; built once
per step) — a column of A per update instead of a pass over the bodies' DOFs, which matters for
robot contacts — and applies the net impulse change to vel once.
The tangential update solves its 2-D problem exactly: minimise 1/2 l^T D l + b^T l over the
disk |l| <= r. When the unconstrained minimum lies outside, the KKT condition (D + nu I) l = -b
with |l| = r gives nu >= 0 by Newton's method in D's eigenbasis; the slip after the update,
D l + b = -nu l, is then anti-parallel to l (radial projection would turn friction sideways
whenever D is anisotropic). Rigid normal rows carry a small relative compliance,
`regularization` x A_ii: the four corner normals of a resting face are statically
indeterminate, and without it Gauss-Seidel cycles between equivalent load distributions for
hundreds of sweeps on a stack; with 0.02 a resting contact yields by 0.02 A_ii lambda dt (a
fraction of a micrometre) and stacks converge in tens of sweeps. Rows marked `exact` (bounces
and impacts, see the scene) and compliant layers carry none: an impact's impulse is large, and
its yield (tens of micrometres at 1.4 m/s) would be pushed back out over the next steps — energy
put back into a body that should only lose it.
Sweeps alternate direction (symmetric Gauss-Seidel), visit the
constraints in a fixed order (same input, same bits), start from the warm-started impulses and
stop when no impulse changes by more than `tolerance` times the largest one, or after
`max_iterations` sweeps. Returns the number of sweeps.
"""
from libc.math cimport fabs, sqrt

from sim_node.engine.constraint cimport ContactC, PatchC, RowC, UserRowC


cdef inline void _side_apply1(const double* W, double* vel, int nv, double d) noexcept nogil:
    cdef int j
    for j in range(nv):
        vel[j] += W[j] * d


cdef inline void _side_apply3(const double* W, double* vel, int nv, double d0, double d1,
                              double d2) noexcept nogil:
    # vel += W dlambda for the nv x 3 matrix W stored as 3 columns
    cdef int j
    for j in range(nv):
        vel[j] += W[j] * d0 + W[nv + j] * d1 + W[2 * nv + j] * d2


cdef inline double _dot_acc(double s, const double* a, const double* b, int nv) noexcept nogil:
    # s + a . b, summed left to right as a loop would (the bits depend on the order); a free
    # body's 6 DOFs unrolled
    cdef int j
    if nv == 6:
        return s + a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]
    for j in range(nv):
        s += a[j] * b[j]
    return s


cdef inline void _axpy(double* y, const double* x, double d, int nv) noexcept nogil:
    # y += x d; a free body's 6 DOFs unrolled
    cdef int j
    if nv == 6:
        y[0] += x[0] * d
        y[1] += x[1] * d
        y[2] += x[2] * d
        y[3] += x[3] * d
        y[4] += x[4] * d
        y[5] += x[5] * d
        return
    for j in range(nv):
        y[j] += x[j] * d


cdef enum:
    MAX_BLOCK = 64        # rows of a patch block (max_contacts + 3)
    INNER_SWEEPS = 1      # sweeps over a patch's rows per visit (more cost more than they save)

# A row whose Delassus diagonal is below DEGENERATE times the largest of its patch block moves
# nothing the DOFs can change (a prismatic finger's contact normal across its axis, the sideways
# friction and the torsion of a one-DOF body): an impulse on it would divide 0 by 0. Such rows
# get no impulse, and the tangential 2 x 2 block is inverted on its non-degenerate eigenvector only
# (the minimum-norm solution: the other direction's slip is rounding noise, as b lies in D's range).
cdef double DEGENERATE = 1e-12


cdef inline void _disk_minimum(const PatchC* p, double b1, double b2, double r, double floor,
                               double* l1, double* l2) noexcept nogil:
    # argmin over |l| <= r of 1/2 l^T Dt l + b^T l, minimum known to lie on the circle; an
    # eigenvalue <= floor (a direction no DOF moves) takes no impulse
    cdef double c1, c2, d1, d2, nu, f, df, x1, x2, cs, sn
    cdef int it
    if r <= 0.0:
        l1[0] = 0.0
        l2[0] = 0.0
        return
    cs = p.Dt_rot[0]
    sn = p.Dt_rot[1]
    c1 = cs * b1 + sn * b2
    c2 = -sn * b1 + cs * b2
    d1 = p.Dt_eig[0]
    d2 = p.Dt_eig[1]
    if d2 <= floor:
        # (Dt_eig[0] >= Dt_eig[1]: the first is degenerate only when both are, and then the
        # caller's unconstrained step was 0, inside the disk)
        x1 = -c1 / d1
        if x1 > r:
            x1 = r
        elif x1 < -r:
            x1 = -r
        l1[0] = cs * x1
        l2[0] = sn * x1
        return
    # phi(nu) = c1^2/(d1+nu)^2 + c2^2/(d2+nu)^2 - r^2 decreases in nu >= 0; Newton from the
    # lower bound max(0, |b|/r - max(d)) converges monotonically (phi is convex there)
    nu = sqrt(c1 * c1 + c2 * c2) / r - max(d1, d2)
    if nu < 0.0:
        nu = 0.0
    for it in range(30):
        x1 = c1 / (d1 + nu)
        x2 = c2 / (d2 + nu)
        f = x1 * x1 + x2 * x2 - r * r
        df = -2.0 * (x1 * x1 / (d1 + nu) + x2 * x2 / (d2 + nu))
        if f <= 1e-14 * r * r or df == 0.0:
            break
        nu -= f / df
    x1 = -c1 / (d1 + nu)
    x2 = -c2 / (d2 + nu)
    f = sqrt(x1 * x1 + x2 * x2)
    if f > 0.0:
        x1 *= r / f
        x2 *= r / f
    l1[0] = cs * x1 - sn * x2
    l2[0] = sn * x1 + cs * x2


cdef inline void _row_sides(const PatchC* p, const ContactC* contacts, int r, const double* jw,
                            const double** Ja, const double** Wa, const double** Jb,
                            const double** Wb) noexcept nogil:
    # the Jacobian row and W column of block row r on both sides (NULL where no DOFs)
    cdef const ContactC* c
    Ja[0] = Wa[0] = Jb[0] = Wb[0] = NULL
    if r < p.count:
        c = &contacts[p.first + r]
        if c.jw_a >= 0:
            Ja[0] = &jw[c.jw_a]
            Wa[0] = &jw[c.jw_a + c.nv_a]
        if c.jw_b >= 0:
            Jb[0] = &jw[c.jw_b]
            Wb[0] = &jw[c.jw_b + c.nv_b]
    else:
        r -= p.count
        if p.jw_a >= 0:
            Ja[0] = &jw[p.jw_a + r * p.nv_a]
            Wa[0] = &jw[p.jw_a + 3 * p.nv_a + r * p.nv_a]
        if p.jw_b >= 0:
            Jb[0] = &jw[p.jw_b + r * p.nv_b]
            Wb[0] = &jw[p.jw_b + 3 * p.nv_b + r * p.nv_b]


cdef void patch_block(const PatchC* p, const ContactC* contacts, const double* jw,
                      double* A) noexcept nogil:
    # A = J W over the patch's rows (count normals, then t1, t2, torsion), both sides; the two
    # sides' DOFs are disjoint unless both bodies belong to one robot (then cross terms count).
    # Each row's pointers are looked up once, not once per entry.
    cdef int m = p.count + 3, r, c, j
    cdef const double* Ja[MAX_BLOCK]
    cdef const double* Wa[MAX_BLOCK]
    cdef const double* Jb[MAX_BLOCK]
    cdef const double* Wb[MAX_BLOCK]
    cdef double s
    cdef bint shared = p.jw_a >= 0 and p.jw_b >= 0 and p.vel_a == p.vel_b
    for r in range(m):
        _row_sides(p, contacts, r, jw, &Ja[r], &Wa[r], &Jb[r], &Wb[r])
    for r in range(m):
        for c in range(m):
            s = 0.0
            if Ja[r] != NULL:
                s = _dot_acc(s, Ja[r], Wa[c], p.nv_a)
            if Jb[r] != NULL:
                s = _dot_acc(s, Jb[r], Wb[c], p.nv_b)
            if shared:
                for j in range(p.nv_a):
                    s += Ja[r][j] * Wb[c][j] + Jb[r][j] * Wa[c][j]
            A[m * r + c] = s


cdef inline double _solve_patch(PatchC* p, ContactC* contacts, const double* A, const double* jw,
                                double* vel, bint forward, double tolerance, double regularization,
                                double* scale) noexcept nogil:
    # one visit of a patch: inner sweeps on its block, then the net change applied to vel
    cdef int n = p.count, m = p.count + 3
    cdef double u[MAX_BLOCK]
    cdef double l[MAX_BLOCK]
    cdef double l0[MAX_BLOCK]
    cdef double lam, d, change, total, normal, spin, b1, b2, t1, t2, det, limit, largest, eps
    cdef double trace, floor = 0.0
    cdef int it, k, r, i, j
    cdef const double* Ja
    cdef const double* Wa
    cdef const double* Jb
    cdef const double* Wb
    cdef ContactC* c
    # current velocities and impulses of the block rows
    for r in range(m):
        _row_sides(p, contacts, r, jw, &Ja, &Wa, &Jb, &Wb)
        u[r] = contacts[p.first + r].bias if r < n else p.bias[r - n]
        if Ja != NULL:
            u[r] = _dot_acc(u[r], Ja, &vel[p.vel_a], p.nv_a)
        if Jb != NULL:
            u[r] = _dot_acc(u[r], Jb, &vel[p.vel_b], p.nv_b)
        l[r] = contacts[p.first + r].lam if r < n else p.lam[r - n]
        l0[r] = l[r]
        floor = max(floor, A[m * r + r])
    floor *= DEGENERATE
    largest = 0.0
    for it in range(INNER_SWEEPS):
        change = 0.0
        for k in range(n):
            i = k if forward else n - 1 - k
            c = &contacts[p.first + i]
            eps = 0.0 if (c.exact > 0.0 or c.gamma > 0.0) else regularization * A[m * i + i]
            if A[m * i + i] + eps + c.gamma <= floor:
                continue
            lam = l[i] - (u[i] - c.target + c.gamma * l[i] + eps * l[i]) / (A[m * i + i] + eps + c.gamma)
            if lam < 0.0:
                lam = 0.0
            d = lam - l[i]
            if d != 0.0:
                l[i] = lam
                for r in range(m):
                    u[r] += A[m * r + i] * d
                change = max(change, fabs(d))
        normal = 0.0
        spin = 0.0
        for i in range(n):
            normal += l[i]
            spin += l[i] * contacts[p.first + i].rho
        # tangential: unconstrained 2 x 2 step, else the exact minimum on the disk
        trace = A[m * n + n] + A[m * (n + 1) + n + 1]
        det = A[m * n + n] * A[m * (n + 1) + n + 1] - A[m * n + n + 1] * A[m * (n + 1) + n]
        b1 = u[n] - (A[m * n + n] * l[n] + A[m * n + n + 1] * l[n + 1])
        b2 = u[n + 1] - (A[m * (n + 1) + n] * l[n] + A[m * (n + 1) + n + 1] * l[n + 1])
        if det > DEGENERATE * trace * trace:
            t1 = l[n] - (A[m * (n + 1) + n + 1] * u[n] - A[m * n + n + 1] * u[n + 1]) / det
            t2 = l[n + 1] - (-A[m * (n + 1) + n] * u[n] + A[m * n + n] * u[n + 1]) / det
        elif p.Dt_eig[0] > floor:
            # rank one: -b along the eigenvector that moves, over its eigenvalue
            d = -(p.Dt_rot[0] * b1 + p.Dt_rot[1] * b2) / p.Dt_eig[0]
            t1 = p.Dt_rot[0] * d
            t2 = p.Dt_rot[1] * d
        else:
            t1 = t2 = 0.0
        limit = p.mu * normal
        if sqrt(t1 * t1 + t2 * t2) > limit:
            _disk_minimum(p, b1, b2, limit, floor, &t1, &t2)
        for k in range(2):
            d = (t1 if k == 0 else t2) - l[n + k]
            if d != 0.0:
                l[n + k] += d
                for r in range(m):
                    u[r] += A[m * r + n + k] * d
                change = max(change, fabs(d))
        # torsion: 1-D, bounded by mu sum(lambda_n rho)
        if A[m * (n + 2) + n + 2] <= floor:
            lam = 0.0
        else:
            lam = l[n + 2] - u[n + 2] / A[m * (n + 2) + n + 2]
            lam = min(max(lam, -p.mu * spin), p.mu * spin)
        d = lam - l[n + 2]
        if d != 0.0:
            l[n + 2] = lam
            for r in range(m):
                u[r] += A[m * r + n + 2] * d
            change = max(change, fabs(d))
        largest = max(largest, normal)
        if change <= tolerance * largest:
            break
    # apply the net change, write the impulses back
    total = 0.0
    for r in range(m):
        d = l[r] - l0[r]
        if d != 0.0:
            _row_sides(p, contacts, r, jw, &Ja, &Wa, &Jb, &Wb)
            if Wa != NULL:
                _axpy(&vel[p.vel_a], Wa, d, p.nv_a)
            if Wb != NULL:
                _axpy(&vel[p.vel_b], Wb, d, p.nv_b)
            total = max(total, fabs(d))
        if r < n:
            contacts[p.first + r].lam = l[r]
            scale[0] = max(scale[0], l[r])
        else:
            p.lam[r - n] = l[r]
    return total


cdef inline double _solve_row(RowC* r, const double* jw, double* vel) noexcept nogil:
    # one update of a robot row: u = sign * vel[dof], bounded impulse along sign * e_dof
    cdef double u = r.sign * vel[r.vel]
    cdef double lam = r.lam - (u - r.target) / r.D
    cdef double d
    cdef int j
    cdef const double* w = &jw[r.wcol]
    if lam < r.lo:
        lam = r.lo
    elif lam > r.hi:
        lam = r.hi
    d = lam - r.lam
    r.lam = lam
    if d != 0.0:
        for j in range(r.nv):
            vel[r.vel0 + j] += w[j] * r.sign * d
    return fabs(d)


cdef inline double _solve_user_row(UserRowC* r, const double* jw, double* vel) noexcept nogil:
    # one update of a user constraint row: u = bias + J_a vel_a + J_b vel_b, bounded impulse
    cdef double u = r.bias
    cdef double lam, d
    if r.ja >= 0:
        u = _dot_acc(u, &jw[r.ja], &vel[r.vel_a], r.nv_a)
    if r.jb >= 0:
        u = _dot_acc(u, &jw[r.jb], &vel[r.vel_b], r.nv_b)
    lam = r.lam - (u - r.target) / r.D
    if lam < r.lo:
        lam = r.lo
    elif lam > r.hi:
        lam = r.hi
    d = lam - r.lam
    r.lam = lam
    if d != 0.0:
        if r.wa >= 0:
            _axpy(&vel[r.vel_a], &jw[r.wa], d, r.nv_a)
        if r.wb >= 0:
            _axpy(&vel[r.vel_b], &jw[r.wb], d, r.nv_b)
    return fabs(d)


cdef int pgs_solve(ContactC* contacts, PatchC* patches, int npatch, RowC* rows, int nrow,
                   UserRowC* urows, int nurow, const double* jw, const double* blocks,
                   double* vel, int max_iterations, double tolerance,
                   double regularization) noexcept nogil:
    # (vel_free, warm-started impulses) => (vel, impulses)
    cdef int it, i, k
    cdef double change, scale
    cdef ContactC* c
    cdef PatchC* p
    # apply the warm start
    for k in range(npatch):
        p = &patches[k]
        for i in range(p.first, p.first + p.count):
            c = &contacts[i]
            if c.lam != 0.0:
                if c.jw_a >= 0:
                    _side_apply1(&jw[c.jw_a + c.nv_a], &vel[c.vel_a], c.nv_a, c.lam)
                if c.jw_b >= 0:
                    _side_apply1(&jw[c.jw_b + c.nv_b], &vel[c.vel_b], c.nv_b, c.lam)
        if p.jw_a >= 0:
            _side_apply3(&jw[p.jw_a + 3 * p.nv_a], &vel[p.vel_a], p.nv_a, p.lam[0], p.lam[1], p.lam[2])
        if p.jw_b >= 0:
            _side_apply3(&jw[p.jw_b + 3 * p.nv_b], &vel[p.vel_b], p.nv_b, p.lam[0], p.lam[1], p.lam[2])
    for i in range(nrow):
        if rows[i].lam != 0.0:
            for k in range(rows[i].nv):
                vel[rows[i].vel0 + k] += jw[rows[i].wcol + k] * rows[i].sign * rows[i].lam
    for i in range(nurow):
        if urows[i].lam != 0.0:
            if urows[i].wa >= 0:
                _axpy(&vel[urows[i].vel_a], &jw[urows[i].wa], urows[i].lam, urows[i].nv_a)
            if urows[i].wb >= 0:
                _axpy(&vel[urows[i].vel_b], &jw[urows[i].wb], urows[i].lam, urows[i].nv_b)
    for it in range(max_iterations):
        change = 0.0
        scale = 0.0
        if it % 2 == 0:
            for k in range(npatch):
                change = max(change, _solve_patch(&patches[k], contacts, &blocks[patches[k].block],
                                                  jw, vel, True, tolerance, regularization, &scale))
            for i in range(nrow):
                change = max(change, _solve_row(&rows[i], jw, vel))
                scale = max(scale, fabs(rows[i].lam))
            for i in range(nurow):
                change = max(change, _solve_user_row(&urows[i], jw, vel))
                scale = max(scale, fabs(urows[i].lam))
        else:
            for i in range(nurow - 1, -1, -1):
                change = max(change, _solve_user_row(&urows[i], jw, vel))
                scale = max(scale, fabs(urows[i].lam))
            for i in range(nrow - 1, -1, -1):
                change = max(change, _solve_row(&rows[i], jw, vel))
                scale = max(scale, fabs(rows[i].lam))
            for k in range(npatch - 1, -1, -1):
                change = max(change, _solve_patch(&patches[k], contacts, &blocks[patches[k].block],
                                                  jw, vel, False, tolerance, regularization, &scale))
        if change <= tolerance * scale:
            return it + 1
    return max_iterations
