"""Velocity-level joint motors with force limits, saturation decided jointly: the per-step work of
PyBullet's motors (sim_node.pybullet.control states the model; README "The PyBullet API:
bodies, joints, control"), one robot per call, without Python objects per joint.

A robot's scalar motors live in one table (NROW, njoint) float64, a row per quantity (the
constants below), a column per joint (PyBullet's joint index; columns of joints without a
scalar motor are unused). Per step:

    motor_dynamics(model, data, q, v, gravity, external, step)
        step (nv + 2, nv) <- M(q) (rows 0..nv-1), C + G - external (row nv), v (row nv + 1)
    motor_commands(q, v, dt, stiffness, default_force, joints, qis, vis, table, step,
                   mode, kp, ki, kd, v_des, tau_ff, advance)
        each motor k (joint joints[k], coordinate qis[k], DOF vis[k]) asks for
        v* = v + kp (q_target - q) / dt + kd (v_target - v), |v*| <= max_velocity, with a torque
        of at most `force` (nan: default_force) on top of its known torque (TORQUE row, PD
        torque when PD_ON); the motors that cannot reach v* within their force get +-force
        (motor_clamps); the rest an implicit damping stiffness * M_jj / dt towards v*. Writes
        the robot's engine actuator arrays on the motors' DOFs and the LAST_* rows; clears
        TORQUE.
    motor_record(v, dt, joints, vis, table, step, external, extra)
        after the step: APPLIED (the motors' torques as realised) and external <- what else
        acted over the step, M dv / dt + C + G - actuator torques (extra: other actuator
        torques on DOFs, nv).

Link damping (RobotMotors.set_damping; Bullet's btMultiBody damping, PyBullet's linearDamping
and angularDamping): each moving link with mass m and rotational inertia I_c about its centre
of mass, moving with the COM velocity v_c and angular velocity w, feels
    f = -m (k_lin + k_lin |v_c|) v_c,   n = -I_c (k_ang + k_ang |w|) w   (about its COM)
from the velocities at the start of the step (explicit, as Bullet's articulated-body pass adds
them to the bias forces). Their generalized force (nv) goes to the robot's external generalized
force array of the step (the engine's tau_ext, which the Simulator resets to it under the
applied wrenches: Simulator.hold_robot_forces) and into the bias row the motors predict with.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, isnan, sqrt

from sim_node.engine.cholesky cimport cholesky_solve
from sim_node.engine.crba cimport crba
from sim_node.engine.model cimport Data, DataC, Model, ModelC
from sim_node.engine.rnea cimport body_forces_to_joints, rnea
from sim_node.engine.spatial cimport add_cross3, mat3_vec
from sim_node.engine.types cimport ACTUATOR_PID, ACTUATOR_TORQUE

cnp.import_array()

# the rows of a motor table
cdef enum:
    C_MODE = 0              # the motor: PyBullet's VELOCITY_CONTROL (0) or POSITION_CONTROL (2)
    C_Q_TARGET = 1          # [rad or m]
    C_V_TARGET = 2          # [rad/s or m/s]
    C_KP = 3                # positionGain (0 in VELOCITY_CONTROL)
    C_KD = 4                # velocityGain
    C_FORCE = 5             # [N m or N] the motor's force limit; nan: the default
    C_MAX_VELOCITY = 6      # [rad/s or m/s]
    C_TORQUE = 7            # TORQUE_CONTROL torque for the next step
    C_APPLIED = 8           # the motor's torque over the last step (appliedJointMotorTorque)
    C_LAST_GAIN = 9         # the last step's implicit gain K (0: clamped)
    C_LAST_TARGET = 10      # its v* (or the clamped torque when K = 0)
    C_LAST_KNOWN = 11       # its TORQUE / PD torque
    C_PD_ON = 12            # 1: PD_CONTROL with the next five rows
    C_PD_Q = 13
    C_PD_V = 14
    C_PD_KP = 15
    C_PD_KD = 16
    C_PD_FORCE = 17
    C_NROW = 18

MODE, Q_TARGET, V_TARGET, KP, KD, FORCE, MAX_VELOCITY = 0, 1, 2, 3, 4, 5, 6
TORQUE, APPLIED, LAST_GAIN, LAST_TARGET, LAST_KNOWN = 7, 8, 9, 10, 11
PD_ON, PD_Q, PD_V, PD_KP, PD_KD, PD_FORCE = 12, 13, 14, 15, 16, 17
NROW = C_NROW


cdef class Scratch:
    # work arrays of the kernels: per motor (n) and per DOF (nv)
    cdef double[::1] known, targets, forces, clamp, accel, tau, a, rhs, A, zero_v, actuated
    cdef double[::1] damp       # (nv) the link damping's generalized force of this step
    cdef int[::1] on, active
    cdef Py_ssize_t[::1] free

    def __init__(self, int n, int nv):
        self.known, self.targets, self.forces, self.clamp = (np.zeros(max(n, 1))
                                                             for _ in range(4))
        self.accel, self.tau, self.a, self.rhs, self.zero_v, self.actuated, self.damp = (
            np.zeros(max(nv, 1)) for _ in range(7))
        self.A = np.zeros(max(nv * nv, 1))
        self.on = np.zeros(max(nv, 1), dtype=np.intc)
        self.active = np.zeros(max(n, 1), dtype=np.intc)
        self.free = np.zeros(max(nv, 1), dtype=np.intp)


cdef double[::1] _EMPTY = np.zeros(1)
cdef double _ZERO3[3]
_ZERO3[:] = [0.0, 0.0, 0.0]

# the columns of a damping table (RobotMotors.set_damping), a row per moving link
cdef enum:
    C_DAMP_MASS = 0         # [kg]
    C_DAMP_COM = 1          # 1..3: its COM in its body's frame [m]
    C_DAMP_INERTIA = 4      # 4..12: its rotational inertia about its COM in body axes
    C_DAMP_NCOL = 13

DAMP_MASS, DAMP_COM, DAMP_INERTIA, DAMP_NCOL = 0, 1, 4, 13


cdef double[::1] _external(value, int nv, str what):
    # an optional (nv) array argument as a memoryview (a dummy when None)
    if value is None:
        return _EMPTY
    cdef double[::1] out = np.ascontiguousarray(value, dtype=np.float64)
    if out.shape[0] != nv:
        raise ValueError(f"{what}: expected {nv} entries, got {out.shape[0]}")
    return out



def motor_dynamics(Model model not None, Data data not None, const double[::1] q,
                   const double[::1] v, const double[::1] gravity, external,
                   double[:, ::1] step):
    """step (nv + 2, nv) <- M(q), C(q, v) + G(q) - external (None: 0), v. q (nq), v (nv),
    gravity (3) [m/s^2], external (nv) [N m or N]."""
    cdef int nv = model.nv
    if q.shape[0] != model.nq or v.shape[0] != nv or gravity.shape[0] != 3 \
            or step.shape[0] != nv + 2 or step.shape[1] != nv:
        raise ValueError(f"motor_dynamics: q ({model.nq}), v ({nv}), gravity (3), step "
                         f"({nv + 2}, {nv}) expected")
    cdef double[::1] ext = _external(external, nv, "motor_dynamics")
    _dynamics(model, data, q, v, &gravity[0], ext, external is not None, step, np.zeros(nv))


def motor_commands(const double[::1] q, const double[::1] v, double dt, double stiffness,
                   double default_force, const Py_ssize_t[::1] joints,
                   const Py_ssize_t[::1] qis, const Py_ssize_t[::1] vis,
                   double[:, ::1] table, const double[:, ::1] step, int[::1] mode,
                   double[::1] kp, double[::1] ki, double[::1] kd, double[::1] v_des,
                   double[::1] tau_ff, double[::1] advance):
    """The motors' engine commands for the next step (module docstring)."""
    cdef int n = joints.shape[0], nv = v.shape[0]
    if qis.shape[0] != n or vis.shape[0] != n or table.shape[0] != C_NROW \
            or step.shape[0] != nv + 2 or step.shape[1] != nv or mode.shape[0] != nv:
        raise ValueError("motor_commands: inconsistent motor arrays")
    cdef Scratch scratch = Scratch(n, nv)
    _commands(q, v, dt, stiffness, default_force, joints, qis, vis, table, step, mode, kp, ki,
              kd, v_des, tau_ff, advance, scratch)


def motor_clamps(const double[:, ::1] step, const double[::1] accel,
                 const Py_ssize_t[::1] vis, const double[::1] forces,
                 const double[::1] known, double[::1] clamp):
    """Which motors saturate: clamp[k] <- 0 when motor k reaches its acceleration accel[vis[k]]
    with a torque within +-forces[k], else the torque +-forces[k] it gets (Bullet's clamped
    impulse). step: M (rows 0..nv-1) and the bias b = C + G - other forces (row nv). The DOFs
    without an unsaturated motor move freely under their known torques: with a given on the
    motors' DOFs S and tau on the others N, M a + b = tau; the motor most over its force is
    clamped and the rest solved again, until none exceeds (a weak motor gives way without its
    neighbours paying for holding it, as Bullet's joint solve)."""
    _clamps(step, accel, vis, forces, known, clamp, Scratch(vis.shape[0], accel.shape[0]))


def motor_record(const double[::1] v, double dt, const Py_ssize_t[::1] joints,
                 const Py_ssize_t[::1] vis, double[:, ::1] table, const double[:, ::1] step,
                 external, extra):
    """After the step: the APPLIED row (the implicit motors' K (v* - v) as realised, or the
    clamped torque, plus the known torques) and the other forces of the step, returned as a
    new array (nv): M (v - v_before) / dt + b + external_before - actuated, b = step's bias
    row (C + G - external_before), actuated = the motors' torques + extra (None: 0)."""
    cdef int nv = v.shape[0]
    out = np.zeros(nv)
    _record(v, dt, joints, vis, table, step, _external(external, nv, "motor_record"),
            external is not None, _external(extra, nv, "motor_record"), extra is not None,
            out, Scratch(joints.shape[0], nv))
    return out


cdef class RobotMotors:
    """The motor kernels of one robot bound to its arrays once (the scene's q, v and actuator
    arrays of the robot, its motor table and step rows): per step pre() and post() take no
    array arguments. Rebuild it when any of those arrays is replaced."""
    cdef Model model
    cdef Data data
    cdef const double[::1] q, v
    cdef const Py_ssize_t[::1] joints, qis, vis
    cdef double[:, ::1] table, step
    cdef int[::1] mode
    cdef double[::1] kp, ki, kd, v_des, tau_ff, advance
    cdef Scratch scratch
    cdef readonly object arrays     # what it was built on (identity checks by the caller)
    cdef const Py_ssize_t[::1] damp_bodies
    cdef const double[:, ::1] damp_links
    cdef double k_lin, k_ang
    cdef bint damped
    cdef double[::1] tau_ext        # (nv) the robot's external generalized forces

    def __init__(self, Model model not None, Data data not None, q, v, joints, qis, vis,
                 table, step, mode, kp, ki, kd, v_des, tau_ff, advance):
        self.model, self.data = model, data
        self.q, self.v, self.joints, self.qis, self.vis = q, v, joints, qis, vis
        self.table, self.step, self.mode = table, step, mode
        self.kp, self.ki, self.kd, self.v_des, self.tau_ff, self.advance = \
            kp, ki, kd, v_des, tau_ff, advance
        cdef int n = self.joints.shape[0], nv = model.nv
        if self.q.shape[0] != model.nq or self.v.shape[0] != nv or self.qis.shape[0] != n \
                or self.vis.shape[0] != n or self.table.shape[0] != C_NROW \
                or self.step.shape[0] != nv + 2 or self.step.shape[1] != nv \
                or self.mode.shape[0] != nv or self.kp.shape[0] != nv \
                or self.ki.shape[0] != nv or self.kd.shape[0] != nv \
                or self.v_des.shape[0] != nv or self.tau_ff.shape[0] != nv \
                or self.advance.shape[0] != nv:
            raise ValueError("RobotMotors: inconsistent motor arrays")
        self.scratch = Scratch(n, nv)
        self.arrays = (q, v, table, step, mode)
        self.damp_bodies = np.zeros(0, dtype=np.intp)
        self.damp_links = np.zeros((0, DAMP_NCOL))
        self.damped = False

    def set_damping(self, bodies, links, double k_lin, double k_ang, tau_ext):
        """Link damping (module docstring): bodies (L) the engine body of each moving link,
        links (L, DAMP_NCOL) its mass, COM and inertia (the DAMP_* columns), k_lin [1/s and
        1/m], k_ang [1/s and 1/rad] >= 0; tau_ext (nv) the robot's external generalized force
        array, written with the damping's force each step (0 at once when off)."""
        cdef double[::1] ext = tau_ext
        cdef const Py_ssize_t[::1] b = np.ascontiguousarray(bodies, dtype=np.intp)
        cdef const double[:, ::1] rows = np.ascontiguousarray(links, dtype=np.float64)
        cdef Py_ssize_t k
        if rows.shape[0] != b.shape[0] or (rows.shape[0] and rows.shape[1] != C_DAMP_NCOL):
            raise ValueError(f"set_damping: bodies (L) and links (L, {DAMP_NCOL}) expected")
        for k in range(b.shape[0]):
            if not 0 <= b[k] < self.model.nbody:
                raise ValueError(f"set_damping: body {b[k]} out of 0..{self.model.nbody - 1}")
        if not (k_lin >= 0.0 and k_ang >= 0.0):
            raise ValueError(f"set_damping: k_lin, k_ang must be >= 0, got {k_lin}, {k_ang}")
        if ext.shape[0] != self.model.nv:
            raise ValueError(f"set_damping: tau_ext ({self.model.nv}) expected")
        self.damp_bodies, self.damp_links, self.k_lin, self.k_ang = b, rows, k_lin, k_ang
        self.tau_ext = ext
        self.damped = (k_lin > 0.0 or k_ang > 0.0) and b.shape[0] > 0 and self.model.nv > 0
        for k in range(self.scratch.damp.shape[0]):
            self.scratch.damp[k] = 0.0
        for k in range(self.model.nv):
            ext[k] = 0.0

    @property
    def damping_forces(self):
        """(nv) the link damping's generalized force of the step pre() or damp() prepared."""
        return np.asarray(self.scratch.damp)[:self.model.nv]

    def damp(self):
        """The link damping alone (a body without motors) into tau_ext."""
        cdef int i
        if self.damped:
            _damping(&self.model.c, &self.data.c, self.q, self.v, False, self.damp_bodies,
                     self.damp_links, self.k_lin, self.k_ang, self.scratch)
            for i in range(self.model.nv):
                self.tau_ext[i] = self.scratch.damp[i]

    def pre(self, double gx, double gy, double gz, external, bint commands, double dt=0.0,
            double stiffness=0.0, double default_force=0.0):
        """motor_dynamics with gravity (gx, gy, gz) [m/s^2], then (commands) motor_commands."""
        cdef double g[3]
        g[0], g[1], g[2] = gx, gy, gz
        cdef int nv = self.model.nv, i
        _dynamics(self.model, self.data, self.q, self.v, g, _external(external, nv, "pre"),
                  external is not None, self.step, self.scratch.zero_v)
        if self.damped:
            # (the RNEA pass above left the bodies' velocities in data)
            _damping(&self.model.c, &self.data.c, self.q, self.v, True, self.damp_bodies,
                     self.damp_links, self.k_lin, self.k_ang, self.scratch)
            for i in range(nv):
                self.step[nv, i] = self.step[nv, i] - self.scratch.damp[i]
                self.tau_ext[i] = self.scratch.damp[i]
        if commands:
            self.commands(dt, stiffness, default_force)

    def commands(self, double dt, double stiffness, double default_force):
        """motor_commands on the step rows pre() computed."""
        _commands(self.q, self.v, dt, stiffness, default_force, self.joints, self.qis,
                  self.vis, self.table, self.step, self.mode, self.kp, self.ki, self.kd,
                  self.v_des, self.tau_ff, self.advance, self.scratch)

    def post(self, double dt, external, extra):
        """motor_record: the new external array."""
        cdef int nv = self.model.nv
        out = np.zeros(nv)
        _record(self.v, dt, self.joints, self.vis, self.table, self.step,
                _external(external, nv, "post"), external is not None,
                _external(extra, nv, "post"), extra is not None, out, self.scratch)
        return out


# -- the kernels ------------------------------------------------------------------------------
cdef void _dynamics(Model model, Data data, const double[::1] q, const double[::1] v,
                    const double* gravity, const double[::1] ext, bint has_ext,
                    double[:, ::1] step, double[::1] zero_v):
    cdef int nv = model.nv, i
    if nv == 0:
        return
    crba(&model.c, &data.c, &q[0], &step[0, 0])
    rnea(&model.c, &data.c, &q[0], &v[0], &zero_v[0], gravity, &step[nv, 0])
    if has_ext:
        for i in range(nv):
            step[nv, i] = step[nv, i] - ext[i]
    for i in range(nv):
        step[nv + 1, i] = v[i]


cdef void _commands(const double[::1] q, const double[::1] v, double dt, double stiffness,
                    double default_force, const Py_ssize_t[::1] joints,
                    const Py_ssize_t[::1] qis, const Py_ssize_t[::1] vis,
                    double[:, ::1] table, const double[:, ::1] step, int[::1] mode,
                    double[::1] kp, double[::1] ki, double[::1] kd, double[::1] v_des,
                    double[::1] tau_ff, double[::1] advance, Scratch w):
    cdef int n = joints.shape[0], nv = v.shape[0]
    cdef double share = stiffness / (1.0 + stiffness)
    cdef double[::1] known = w.known, targets = w.targets, forces = w.forces
    cdef double[::1] accel = w.accel, clamp = w.clamp
    cdef Py_ssize_t k, j, qi, vi
    cdef double tau, f, target, vmax, gain, clamped
    cdef bint any_active = False
    for k in range(nv):
        accel[k] = 0.0
    for k in range(n):
        j, qi, vi = joints[k], qis[k], vis[k]
        tau = table[C_TORQUE, j]
        if table[C_PD_ON, j] != 0.0:
            f = table[C_PD_FORCE, j]
            tau += min(f, max(-f, table[C_PD_KP, j] * (table[C_PD_Q, j] - q[qi])
                              + table[C_PD_KD, j] * (table[C_PD_V, j] - v[vi])))
        known[k] = tau
        f = table[C_FORCE, j]
        if isnan(f):            # Bullet's default impulse
            f = default_force
        forces[k] = f
        targets[k] = 0.0
        clamp[k] = 0.0
        if f > 0.0:
            target = v[vi] + table[C_KP, j] * (table[C_Q_TARGET, j] - q[qi]) / dt \
                + table[C_KD, j] * (table[C_V_TARGET, j] - v[vi])
            vmax = table[C_MAX_VELOCITY, j]
            target = vmax if target > vmax else (-vmax if target < -vmax else target)
            targets[k] = target
            accel[vi] = share * (target - v[vi]) / dt
            any_active = True
    for k in range(table.shape[1]):
        table[C_TORQUE, k] = 0.0
    for k in range(n):
        vi = vis[k]
        kp[vi] = 0.0
        ki[vi] = 0.0
        advance[vi] = 0.0
    if any_active:
        _clamps(step, accel, vis, forces, known, clamp, w)
    for k in range(n):
        j, vi = joints[k], vis[k]
        gain = 0.0
        clamped = 0.0
        if forces[k] > 0.0 and clamp[k] == 0.0:
            gain = stiffness * max(step[vi, vi], 1e-12) / dt
            mode[vi], kd[vi], v_des[vi], tau_ff[vi] = ACTUATOR_PID, gain, targets[k], known[k]
            table[C_LAST_TARGET, j] = targets[k]
        else:
            if forces[k] > 0.0:
                clamped = clamp[k]
            mode[vi], kd[vi], v_des[vi] = ACTUATOR_TORQUE, 0.0, 0.0
            tau_ff[vi] = known[k] + clamped
            table[C_LAST_TARGET, j] = clamped
        table[C_LAST_GAIN, j] = gain
        table[C_LAST_KNOWN, j] = known[k]


cdef void _damping(const ModelC* m, DataC* d, const double[::1] q, const double[::1] v,
                   bint velocities_ready, const Py_ssize_t[::1] bodies,
                   const double[:, ::1] links, double k_lin, double k_ang, Scratch w):
    # w.damp (nv) <- the generalized force of the links' damping (module docstring);
    # velocities_ready: d.v holds the bodies' velocities at (q, v) (an RNEA pass just ran)
    cdef int nv = m.nv, i, k
    cdef Py_ssize_t l, b
    cdef double vc[3]
    cdef double Iw[3]
    cdef double f[3]
    cdef double s
    cdef const double* row
    cdef const double* vb
    cdef double* fb
    if not velocities_ready:
        rnea(m, d, &q[0], &v[0], &w.zero_v[0], _ZERO3, &w.damp[0])
    for i in range(6 * m.nbody):
        d.f[i] = 0.0
    for l in range(bodies.shape[0]):
        b = bodies[l]
        row = &links[l, 0]
        vb = &d.v[6 * b]        # [v of the body origin; w], body axes
        fb = &d.f[6 * b]
        for k in range(3):
            vc[k] = vb[k]
        add_cross3(&vb[3], &row[C_DAMP_COM], vc)
        s = -row[C_DAMP_MASS] * k_lin * (1.0 + sqrt(vc[0] * vc[0] + vc[1] * vc[1]
                                                  + vc[2] * vc[2]))
        for k in range(3):
            f[k] = s * vc[k]
            fb[k] += f[k]
        # the torque about the COM, then moved to the body origin: n + c x f
        mat3_vec(&row[C_DAMP_INERTIA], &vb[3], Iw)
        s = -k_ang * (1.0 + sqrt(vb[3] * vb[3] + vb[4] * vb[4] + vb[5] * vb[5]))
        for k in range(3):
            fb[3 + k] += s * Iw[k]
        add_cross3(&row[C_DAMP_COM], f, &fb[3])
    body_forces_to_joints(m, d, &w.damp[0])


cdef void _clamps(const double[:, ::1] step, const double[::1] accel,
                  const Py_ssize_t[::1] vis, const double[::1] forces,
                  const double[::1] known, double[::1] clamp, Scratch w):
    # motor_clamps (its docstring)
    cdef int nv = accel.shape[0], n = vis.shape[0]
    cdef Py_ssize_t i, k, r, c, s, best_i = -1
    cdef double ratio, best, need, x, best_need
    cdef int it, nfree, nactive = 0
    cdef double[::1] tau = w.tau, a = w.a, A = w.A, rhs = w.rhs
    cdef int[::1] on = w.on, active = w.active
    cdef Py_ssize_t[::1] free = w.free
    for i in range(nv):
        tau[i] = 0.0
    for k in range(n):
        clamp[k] = 0.0
        active[k] = 0
        tau[vis[k]] += known[k]
        if forces[k] > 0.0:
            active[k] = 1
            nactive += 1
    for it in range(n + 1):
        if nactive == 0:
            break
        for i in range(nv):
            on[i] = 0
            a[i] = 0.0
        for k in range(n):
            if active[k]:
                on[vis[k]] = 1
                a[vis[k]] = accel[vis[k]]
        nfree = 0
        for i in range(nv):
            if not on[i]:
                free[nfree] = i
                nfree += 1
        if nfree:
            # M_NN a_N = tau_N - b_N - M_NS a_S
            for r in range(nfree):
                x = tau[free[r]] - step[nv, free[r]]
                for i in range(nv):
                    if on[i]:
                        x -= step[free[r], i] * a[i]
                rhs[r] = x
                for c in range(nfree):
                    A[r * nfree + c] = step[free[r], free[c]]
            if not cholesky_solve(&A[0], nfree, &rhs[0], 1e-300):
                _least_squares(step, free, rhs, nfree)
            for r in range(nfree):
                a[free[r]] = rhs[r]
        # the most overloaded motor gives way first (ties: the later one)
        best = -1.0
        best_i = -1
        best_need = 0.0
        for k in range(n):
            if not active[k]:
                continue
            s = vis[k]
            need = 0.0
            for i in range(nv):
                need += step[s, i] * a[i]
            need = need + step[nv, s] - tau[s]
            ratio = fabs(need) / forces[k]
            if ratio >= best:
                best, best_i, best_need = ratio, k, need
        if best <= 1.0:
            break
        k = best_i
        clamp[k] = forces[k] if best_need > 0.0 else -forces[k]
        active[k] = 0
        nactive -= 1
        tau[vis[k]] += clamp[k]


cdef void _least_squares(const double[:, ::1] step, const Py_ssize_t[::1] free,
                         double[::1] rhs, int nfree):
    # M_NN not positive definite (a massless DOF): numpy's least squares, rare
    cdef int r
    M = np.asarray(step)[:step.shape[1]]
    index = np.asarray(free)[:nfree]
    solution = np.linalg.lstsq(M[np.ix_(index, index)], np.asarray(rhs)[:nfree].copy(),
                               rcond=None)[0]
    for r in range(nfree):
        rhs[r] = solution[r]


cdef void _record(const double[::1] v, double dt, const Py_ssize_t[::1] joints,
                  const Py_ssize_t[::1] vis, double[:, ::1] table, const double[:, ::1] step,
                  const double[::1] ext, bint has_ext, const double[::1] extra, bint has_extra,
                  double[::1] out, Scratch w):
    cdef int n = joints.shape[0], nv = v.shape[0]
    cdef Py_ssize_t k, j, i, c
    cdef double gain, x
    cdef double[::1] actuated = w.actuated, dv = w.a
    for i in range(nv):
        actuated[i] = extra[i] if has_extra else 0.0   # (DOFs other than the scalar motors')
    for k in range(n):
        j = joints[k]
        gain = table[C_LAST_GAIN, j]
        x = gain * (table[C_LAST_TARGET, j] - v[vis[k]]) if gain > 0.0 \
            else table[C_LAST_TARGET, j]
        table[C_APPLIED, j] = x + table[C_LAST_KNOWN, j]
        actuated[vis[k]] = table[C_APPLIED, j]
    for i in range(nv):
        dv[i] = v[i] - step[nv + 1, i]
    for i in range(nv):
        x = 0.0
        for c in range(nv):
            x += step[i, c] * dv[c]
        out[i] = x / dt + step[nv, i]
        if has_ext:
            out[i] += ext[i]
        out[i] -= actuated[i]
