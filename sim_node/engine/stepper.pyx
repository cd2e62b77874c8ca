"""One environment step in one call: the actions' feed-forward torques written on one or more
robots (a task's copies), the scene stepped, the observations read and the episode's bounds
checked.

sim_node.gym's environments step robots of a few DOFs whose physics takes about a microsecond
each; done from Python (write command arrays, Scene.step, read q and v as numpy scalars, build
the observations) the step costs several times that. RobotStep does the same in one call with
no Python object made but the result arrays and tuple.

    step = RobotStep(scene, robots, dt, substeps, observe, bound, table)
    result = step.step_choice(action)   # one robot: (obs (k,), terminated bool), or None: the
                                        # action is not an int in range (nothing changed)
    obs, terminated = step.step_dof(dof, tau)
    obs, terminated = step.step_choices(actions)   # every robot: (N, k), (N,) bool
    obs, terminated = step.step_dofs(dof, taus)
    obs = step.observe()                           # (N, k) at the current state

robots: the robot indices (N; the same nq and nv each). observe (k,) int: the observation's
entries as indices into a robot's (q, v) concatenated (q's nq entries first). bound (nq,): an
episode ends when |q_i| > bound_i (inf: never). table (choices, nv): the feed-forward torques
[N m or N] of each discrete action. The actuator modes stay as set (the driven DOFs must be
ACTUATOR_TORQUE or PID for tau_ff to act). Each step is Scene.step's: every substep
step_adaptive, stopping at STATUS_UNSTABLE; `status` holds the step's status.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, isfinite

from sim_node.engine.pipeline.step cimport step_adaptive
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport RobotStateC, STATUS_NORMAL, STATUS_UNSTABLE

cnp.import_array()

_INT64 = np.int64


cdef class RobotStep:
    cdef SceneModel m
    cdef SceneData d
    cdef int[::1] robots
    cdef int nrobot, substeps, nq, nv, nobs, nchoice
    cdef double h
    cdef Py_ssize_t[::1] index
    cdef double[::1] bound
    cdef double[:, ::1] table
    cdef readonly int status        # the engine's status of the last step (Status)

    def __init__(self, scene, robots, double dt, int substeps, observe, bound, table=None):
        """scene: an engine Scene (sim_node.engine.api); robots: robot indices; each step lasts
        dt [s] in `substeps` equal substeps. observe, bound, table: the module docstring."""
        cdef SceneModel m = scene.model
        chosen = np.ascontiguousarray(robots, dtype=np.intc).reshape(-1)
        if chosen.size == 0 or not ((chosen >= 0) & (chosen < m.nrobot)).all():
            raise ValueError(f"RobotStep: robots must be indices in [0, {m.nrobot}), got "
                             f"{np.asarray(robots).tolist()}")
        if not (isfinite(dt) and dt > 0.0) or substeps < 1:
            raise ValueError(f"RobotStep: dt must be a positive time and substeps >= 1, "
                             f"got {dt} and {substeps}")
        self.nq, self.nv = m.robots[chosen[0]].model.nq, m.robots[chosen[0]].model.nv
        for r in chosen:
            if (m.robots[r].model.nq, m.robots[r].model.nv) != (self.nq, self.nv):
                raise ValueError(f"RobotStep: robot {r} has {m.robots[r].model.nq} coordinates "
                                 f"and {m.robots[r].model.nv} DOFs, robot {chosen[0]} "
                                 f"{self.nq} and {self.nv}: the robots must be copies")
        self.m, self.d, self.robots, self.nrobot = m, scene.data, chosen, chosen.size
        self.h, self.substeps = dt / substeps, substeps
        index = np.ascontiguousarray(observe, dtype=np.intp).reshape(-1)
        if index.size and not ((index >= 0) & (index < self.nq + self.nv)).all():
            raise ValueError(f"RobotStep: observe indices must be in [0, {self.nq + self.nv}), "
                             f"got {index.tolist()}")
        self.index, self.nobs = index, index.size
        limits = np.ascontiguousarray(bound, dtype=np.float64).reshape(-1)
        if limits.shape != (self.nq,) or np.isnan(limits).any():
            raise ValueError(f"RobotStep: bound must be {self.nq} numbers (inf: unbounded), "
                             f"got {bound!r}")
        self.bound = limits
        rows = np.zeros((0, self.nv)) if table is None else \
            np.ascontiguousarray(table, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != self.nv or not np.isfinite(rows).all():
            raise ValueError(f"RobotStep: table must be finite torques of shape (choices, "
                             f"{self.nv}), got shape {rows.shape}")
        self.table, self.nchoice = rows, rows.shape[0]
        self.status = STATUS_NORMAL

    def step_choice(self, action):
        """One robot: step with the torques of discrete action `action` (a Python int or numpy
        int64 in [0, choices)): (obs (k,), terminated). Anything else (bools, other types,
        out of range) returns None and changes nothing: the caller's full check says what is
        wrong."""
        cdef long k
        self._single("step_choice")
        kind = type(action)
        if kind is not int and kind is not _INT64:
            return None
        try:
            k = action
        except OverflowError:
            return None
        if k < 0 or k >= self.nchoice:
            return None
        self._write_row(self.robots[0], k)
        self._advance()
        return self._outcome_one()

    def step_dof(self, int dof, double tau):
        """One robot: step with tau_ff[dof] = tau [N m or N] (its other commands as they are):
        (obs (k,), terminated)."""
        self._single("step_dof")
        self._check_dof(dof, "step_dof")
        if not isfinite(tau):
            raise ValueError(f"RobotStep.step_dof: tau must be finite, got {tau}")
        self.d.robots[self.robots[0]].tau_ff[dof] = tau
        self._advance()
        return self._outcome_one()

    def step_choices(self, const long[::1] actions):
        """Every robot: robot i steps with the torques of action actions[i] (int64 (N,), each
        in [0, choices)): (obs (N, k), terminated (N,) bool)."""
        cdef int i
        if actions.shape[0] != self.nrobot:
            raise ValueError(f"RobotStep.step_choices: {actions.shape[0]} actions for "
                             f"{self.nrobot} robots")
        for i in range(self.nrobot):
            if actions[i] < 0 or actions[i] >= self.nchoice:
                raise ValueError(f"RobotStep.step_choices: actions[{i}] = {actions[i]} is not "
                                 f"in [0, {self.nchoice})")
        for i in range(self.nrobot):
            self._write_row(self.robots[i], actions[i])
        self._advance()
        return self._outcome_all()

    def step_dofs(self, int dof, const double[::1] taus):
        """Every robot: robot i steps with tau_ff[dof] = taus[i] [N m or N] ((N,) finite):
        (obs (N, k), terminated (N,) bool)."""
        cdef int i
        self._check_dof(dof, "step_dofs")
        if taus.shape[0] != self.nrobot:
            raise ValueError(f"RobotStep.step_dofs: {taus.shape[0]} torques for "
                             f"{self.nrobot} robots")
        for i in range(self.nrobot):
            if not isfinite(taus[i]):
                raise ValueError(f"RobotStep.step_dofs: taus[{i}] = {taus[i]} is not finite")
        for i in range(self.nrobot):
            self.d.robots[self.robots[i]].tau_ff[dof] = taus[i]
        self._advance()
        return self._outcome_all()

    def observe(self):
        """The observations (N, k) of every robot at the current state."""
        return self._outcome_all()[0]

    # -- internals ---------------------------------------------------------------------------
    cdef _single(self, str what):
        if self.nrobot != 1:
            raise ValueError(f"RobotStep.{what} steps one robot; this one has {self.nrobot} "
                             f"(step_choices / step_dofs)")

    cdef _check_dof(self, int dof, str what):
        if not 0 <= dof < self.nv:
            raise ValueError(f"RobotStep.{what}: dof must be in [0, {self.nv}), got {dof}")

    cdef void _write_row(self, int robot, long k) noexcept:
        cdef RobotStateC* rs = &self.d.robots[robot]
        cdef int i
        for i in range(self.nv):
            rs.tau_ff[i] = self.table[k, i]

    cdef void _advance(self) noexcept:
        cdef SceneModel m = self.m
        cdef SceneData d = self.d
        cdef int k
        d.status = STATUS_NORMAL
        with nogil:
            for k in range(self.substeps):
                step_adaptive(m, d, self.h, 0)
                if d.status == STATUS_UNSTABLE:
                    break
        self.status = d.status

    cdef bint _fill(self, int robot, double* out) noexcept:
        # the robot's observation into out (k), and whether its episode ended
        cdef RobotStateC* rs = &self.d.robots[robot]
        cdef Py_ssize_t j
        cdef int k
        cdef bint ended = False
        for k in range(self.nobs):
            j = self.index[k]
            out[k] = rs.q[j] if j < self.nq else rs.v[j - self.nq]
        for k in range(self.nq):
            if fabs(rs.q[k]) > self.bound[k]:
                ended = True
        return ended

    cdef tuple _outcome_one(self):
        cdef cnp.npy_intp n = self.nobs
        obs = cnp.PyArray_EMPTY(1, &n, cnp.NPY_DOUBLE, 0)
        ended = self._fill(self.robots[0], <double*> cnp.PyArray_DATA(obs))
        return obs, ended

    cdef tuple _outcome_all(self):
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = self.nrobot, self.nobs
        obs = cnp.PyArray_EMPTY(2, dims, cnp.NPY_DOUBLE, 0)
        ended = cnp.PyArray_EMPTY(1, dims, cnp.NPY_BOOL, 0)
        cdef double* out = <double*> cnp.PyArray_DATA(obs)
        cdef cnp.npy_bool* flags = <cnp.npy_bool*> cnp.PyArray_DATA(ended)
        cdef int i
        for i in range(self.nrobot):
            flags[i] = self._fill(self.robots[i], out + i * self.nobs)
        return obs, ended
