"""One environment step of one robot in one call: the action's feed-forward torques written, the
scene stepped, the observation read and the episode's bounds checked.

sim_node.gym's single environments step a robot of a few DOFs whose physics takes about a
microsecond; done from Python (write a command array, Scene.step, read q and v as numpy
scalars, build the observation) the step costs several times that. RobotStep does the same in
one call with no Python object made but the observation array and the result tuple.

    step = RobotStep(scene, robot, dt, substeps, observe, bound, table)
    result = step.step_choice(action)   # (obs, terminated), or None: not an int in range
    obs, terminated = step.step_dof(dof, tau)

observe (k,) int: the observation's entries as indices into the robot's (q, v) concatenated
(q's nq entries first). bound (nq,): the episode ends when |q_i| > bound_i (inf: never).
table (choices, nv): the feed-forward torques [N m or N] of each discrete action. The actuator
modes stay as set (the driven DOFs must be ACTUATOR_TORQUE or PID for tau_ff to act).
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
    cdef int robot, substeps, nq, nv, nobs, nchoice
    cdef double h
    cdef Py_ssize_t[::1] observe
    cdef double[::1] bound
    cdef double[:, ::1] table
    cdef readonly int status        # the engine's status of the last step (Status)

    def __init__(self, scene, int robot, double dt, int substeps, observe, bound, table=None):
        """scene: an engine Scene (sim_node.engine.api); robot: its index; each step lasts
        dt [s] in `substeps` equal substeps. observe, bound, table: the module docstring."""
        cdef SceneModel m = scene.model
        if not 0 <= robot < m.nrobot:
            raise ValueError(f"RobotStep: robot {robot} is not in [0, {m.nrobot})")
        if not (isfinite(dt) and dt > 0.0) or substeps < 1:
            raise ValueError(f"RobotStep: dt must be a positive time and substeps >= 1, "
                             f"got {dt} and {substeps}")
        self.m, self.d, self.robot = m, scene.data, robot
        self.nq, self.nv = m.robots[robot].model.nq, m.robots[robot].model.nv
        self.h, self.substeps = dt / substeps, substeps
        index = np.ascontiguousarray(observe, dtype=np.intp).reshape(-1)
        if index.size and not ((index >= 0) & (index < self.nq + self.nv)).all():
            raise ValueError(f"RobotStep: observe indices must be in [0, {self.nq + self.nv}), "
                             f"got {index.tolist()}")
        self.observe, self.nobs = index, index.size
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
        """Step with the torques of discrete action `action` (a Python int or numpy int64 in
        [0, choices)): (obs, terminated). Anything else (bools, other types, out of range)
        returns None and changes nothing: the caller's full check says what is wrong."""
        cdef long k
        kind = type(action)
        if kind is not int and kind is not _INT64:
            return None
        try:
            k = action
        except OverflowError:
            return None
        if k < 0 or k >= self.nchoice:
            return None
        cdef RobotStateC* rs = &self.d.robots[self.robot]
        cdef int i
        for i in range(self.nv):
            rs.tau_ff[i] = self.table[k, i]
        return self._advance()

    def step_dof(self, int dof, double tau):
        """Step with tau_ff[dof] = tau [N m or N] (the robot's other commands as they are):
        (obs, terminated)."""
        if not 0 <= dof < self.nv or not isfinite(tau):
            raise ValueError(f"RobotStep.step_dof: dof must be in [0, {self.nv}) and tau "
                             f"finite, got {dof} and {tau}")
        self.d.robots[self.robot].tau_ff[dof] = tau
        return self._advance()

    cdef tuple _advance(self):
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
        cdef RobotStateC* rs = &d.robots[self.robot]
        cdef cnp.npy_intp n = self.nobs
        obs = cnp.PyArray_EMPTY(1, &n, cnp.NPY_DOUBLE, 0)
        cdef double* out = <double*> cnp.PyArray_DATA(obs)
        cdef Py_ssize_t j
        for k in range(self.nobs):
            j = self.observe[k]
            out[k] = rs.q[j] if j < self.nq else rs.v[j - self.nq]
        cdef bint ended = False
        for k in range(self.nq):
            if fabs(rs.q[k]) > self.bound[k]:
                ended = True
        return obs, ended
