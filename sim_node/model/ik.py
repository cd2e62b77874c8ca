"""Inverse kinematics with Klamp't's names (klampt.model.ik and robotsim's IKObjective/IKSolver).

An IKObjective constrains one link of a robot (``link()``) to the world or to another link of
the same robot (``destLink()``): a position part (fixed point, point on a plane, point on a
line, or free) and a rotation part (fixed, one axis, or free), as Klamp't defines them. The
residual and its Jacobian are computed in the engine (``sim_node.engine.ik``, whose docstring
gives every row) and agree with Klamp't's IKSolver entry for entry on fixed-base robots.

Differences from Klamp't a user should know:
  * Rotations are read by ``sim_node.math.rotation_input.as_matrix``: Klamp't's column-major
    9-list, or a 3x3 matrix. Rotations are returned as Klamp't's 9-lists.
  * Active DOFs are indices into the robot's velocity vector v (``getJointNames`` order, after
    the 6 base DOFs of a floating robot) or joint / link names (a link stands for the DOFs of
    its parent joint). For a fixed-base robot with 1-DOF joints v and q have the same indices,
    as Klamp't's links and DOFs do. Jacobian columns are derivatives along those DOFs; a floating
    base's are its body-frame twist (ours), not Klamp't's roll-pitch-yaw coordinates.
  * Joint limits and the bias configuration are over q (``robot.getJointLimits()`` order);
    quaternion entries are unbounded.
  * Random restarts (``solve_global``, ``sampleInitial``) draw from numpy's global generator
    (``np.random.seed`` makes them repeatable); Klamp't uses its own C++ generator.
  * Objectives between a robot link and a rigid object (Klamp't's GeneralizedIKObjective) and
    linear, planar or axis constraints relative to another link (Klamp't aborts on those in
    its Jacobian) are refused with a ValueError / TypeError.
"""
from __future__ import annotations

import copy as _copy
import math
import numbers

import numpy as np

from sim_node.engine.api import ik as _engine
from sim_node.math.rotation_input import as_klampt, as_matrix
from sim_node.model.robot import RobotModel, RobotModelLink, random_config

__all__ = ["IKObjective", "IKSolver", "objective", "fixed_objective", "fixed_rotation_objective",
           "solver", "solve", "solve_global", "solve_nearby", "residual", "jacobian"]

MAX_ITERS = 2 ** 31 - 1
_POS_DIMS = {"none": 0, "planar": 1, "linear": 2, "fixed": 3}
_ROT_DIMS = {"none": 0, "axis": 2, "fixed": 3}


def _vec3(x, what: str) -> np.ndarray:
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected 3 numbers, got {type(x).__name__}") from None
    if arr.shape != (3,):
        raise ValueError(f"{what}: expected 3 numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: contains NaN or infinity")
    return arr


def _unit3(x, what: str) -> np.ndarray:
    arr = _vec3(x, what)
    n = np.linalg.norm(arr)
    if n < 1e-12:
        raise ValueError(f"{what}: must be a nonzero direction")
    return arr / n


def _rotation(R, what: str) -> np.ndarray:
    M = as_matrix(R, what)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{what}: contains NaN or infinity")
    if not np.allclose(M @ M.T, np.eye(3), atol=1e-6) or np.linalg.det(M) < 0:
        raise ValueError(f"{what}: not a rotation matrix (orthonormal, determinant +1)")
    return M


def _points(ps, what: str) -> np.ndarray:
    try:
        arr = np.array(ps, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a list of 3-vectors") from None
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{what}: expected a list of 3-vectors, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: contains NaN or infinity")
    return arr


def _index(x, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, np.integer)):
        raise TypeError(f"{what}: expected an integer index, got {type(x).__name__}")
    return int(x)


class IKObjective:
    """One IK goal on a robot link (Klamp't's IKObjective). ``robot`` is set by ``objective``
    (or by hand, as in Klamp't) and tells IKSolver which robot the link indices refer to."""

    def __init__(self, other: "IKObjective | None" = None):
        if other is not None:
            if not isinstance(other, IKObjective):
                raise TypeError(f"IKObjective(other): expected an IKObjective, got {type(other).__name__}")
            self.__dict__.update(_copy.deepcopy(other.__dict__, {id(other.robot): other.robot}))
            return
        self.robot = None
        self._link = 0
        self._dest = -1
        self._pos = "none"
        self._rot = "none"
        self._p_local = np.zeros(3)
        self._p_world = np.zeros(3)      # destination point (world, or dest-link coordinates)
        self._direction = np.zeros(3)    # plane normal / line direction
        self._R = np.eye(3)              # fixed rotation (relative to the destination frame)
        self._a_local = np.array([0.0, 0.0, 1.0])
        self._a_world = np.array([0.0, 0.0, 1.0])

    # -- identity --------------------------------------------------------------------------
    def copy(self) -> "IKObjective":
        return IKObjective(self)

    def link(self) -> int:
        return self._link

    def destLink(self) -> int:
        return self._dest

    def numPosDims(self) -> int:
        return _POS_DIMS[self._pos]

    def numRotDims(self) -> int:
        return _ROT_DIMS[self._rot]

    # -- construction ----------------------------------------------------------------------
    def setLinks(self, link: int, link2: int = -1):
        link, link2 = _index(link, "link"), _index(link2, "link2")
        if link < 0 or link2 < -1:
            raise ValueError(f"setLinks: link must be >= 0 and link2 >= -1, got {link}, {link2}")
        self._link, self._dest = link, link2

    def setFixedPoint(self, link, plocal, pworld):
        self._set_points(link, -1, [plocal], [pworld])

    def setFixedPoints(self, link, plocals, pworlds):
        self._set_points(link, -1, plocals, pworlds)

    def setRelativePoint(self, link1, link2, p1, p2):
        self._set_points(link1, link2, [p1], [p2])

    def setRelativePoints(self, link1, link2, p1s, p2s):
        self._set_points(link1, link2, p1s, p2s)

    def setFixedTransform(self, link, R, t):
        self._set_transform(link, -1, R, t)

    def setRelativeTransform(self, link, linkTgt, R, t):
        self._set_transform(link, linkTgt, R, t)

    def setFreePosition(self):
        self._pos = "none"

    setFreePosConstraint = setFreePosition

    def setFixedPosConstraint(self, tlocal, tworld):
        self._p_local, self._p_world = _vec3(tlocal, "tlocal"), _vec3(tworld, "tworld")
        self._pos = "fixed"

    def setPlanarPosConstraint(self, tlocal, nworld, oworld):
        """The point T(link) tlocal on the plane through oworld * nworld with normal nworld:
        residual n . (p - oworld nworld), n = nworld / |nworld|. This is what klampt 0.10.1
        computes (n . p = oworld for a unit normal); its docstring's "n . p + oworld = 0" has
        the opposite sign."""
        tlocal, n = _vec3(tlocal, "tlocal"), _vec3(nworld, "nworld")
        o = float(oworld)
        norm = np.linalg.norm(n)
        if norm < 1e-12 or not math.isfinite(o):
            raise ValueError("setPlanarPosConstraint: nworld must be nonzero and oworld finite")
        self._p_local, self._direction = tlocal, n / norm
        self._p_world = o * n
        self._pos = "planar"

    def setLinearPosConstraint(self, tlocal, sworld, dworld):
        """T(link) tlocal = sworld + u dworld for some u."""
        self._p_local, self._p_world = _vec3(tlocal, "tlocal"), _vec3(sworld, "sworld")
        self._direction = _unit3(dworld, "dworld")
        self._pos = "linear"

    def setFreeRotConstraint(self):
        self._rot = "none"

    def setFixedRotConstraint(self, R):
        self._R = _rotation(R, "R")
        self._rot = "fixed"

    def setAxialRotConstraint(self, alocal, aworld):
        self._a_local, self._a_world = _unit3(alocal, "alocal"), _unit3(aworld, "aworld")
        self._rot = "axis"

    def _set_transform(self, link, dest, R, t):
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        self.setLinks(link, dest)
        self._p_local, self._p_world, self._R = np.zeros(3), tv, Rm
        self._pos, self._rot = "fixed", "fixed"

    def _set_points(self, link, dest, plocals, pworlds):
        # Klamp't's IKGoal::SetFromPoints: 1 point fixes it; 2 fix their midpoint and the axis
        # through them; 3 or more the best-fit transform (an axis when they are collinear).
        L, W = _points(plocals, "local points"), _points(pworlds, "world points")
        if len(L) != len(W) or len(L) == 0:
            raise ValueError(f"local and world points must be equally many (>= 1), got "
                             f"{len(L)} and {len(W)}")
        self.setLinks(link, dest)
        tol = 1e-8
        if len(L) == 1:
            self._p_local, self._p_world = L[0], W[0]
            self._pos, self._rot = "fixed", "none"
            return
        cl, cw = L.mean(axis=0), W.mean(axis=0)
        self._p_local, self._p_world, self._pos = cl, cw, "fixed"
        if len(L) == 2:
            dl, dw = L[1] - L[0], W[1] - W[0]
            if np.linalg.norm(dl) <= tol or np.linalg.norm(dw) <= tol:
                self._rot = "none"
            else:
                self._a_local, self._a_world = dl / np.linalg.norm(dl), dw / np.linalg.norm(dw)
                self._rot = "axis"
            return
        # Kabsch: R minimising sum |R (l - cl) - (w - cw)|^2
        Lc, Wc = L - cl, W - cw
        U, S, Vt = np.linalg.svd(Lc.T @ Wc)
        D = np.diag([1.0, 1.0, np.sign(np.linalg.det(Vt.T @ U.T)) or 1.0])
        spread = np.linalg.svd(Lc, compute_uv=False)
        if spread[0] <= tol:
            self._rot = "none"
        elif len(spread) < 2 or spread[1] <= tol:
            axis = Lc[np.argmax(np.linalg.norm(Lc, axis=1))]
            self._a_local = axis / np.linalg.norm(axis)
            R = Vt.T @ D @ U.T
            self._a_world = R @ self._a_local
            self._rot = "axis"
        else:
            self._R = Vt.T @ D @ U.T
            self._rot = "fixed"

    # -- queries ---------------------------------------------------------------------------
    def getPosition(self):
        """(local point, destination point) of the position constraint."""
        return self._p_local.tolist(), self._p_world.tolist()

    def getPositionDirection(self):
        """The plane normal (planar) or line direction (linear)."""
        return self._direction.tolist()

    def getRotation(self) -> list:
        """The fixed rotation as Klamp't's column-major 9-list."""
        return as_klampt(self._R)

    def getRotationAxis(self):
        """(local axis, world axis) of an axis rotation constraint."""
        return self._a_local.tolist(), self._a_world.tolist()

    def getTransform(self):
        """(R 9-list, t) of a fixed transform: the link frame that satisfies the objective."""
        return as_klampt(self._R), (self._p_world - self._R @ self._p_local).tolist()

    # -- edits -----------------------------------------------------------------------------
    def transform(self, R, t):
        """Moves the destination by (R, t): points p -> R p + t, directions and rotations R."""
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        self._p_world = Rm @ self._p_world + tv
        self._direction = Rm @ self._direction
        self._R = Rm @ self._R
        self._a_world = Rm @ self._a_world

    def transformLocal(self, R, t):
        """Moves the local frame by (R, t): local points p -> R p + t, local axes R a."""
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        self._p_local = Rm @ self._p_local + tv
        self._R = self._R @ Rm.T
        self._a_local = Rm @ self._a_local

    def matchDestination(self, R, t):
        """Sets the destination so that a link at (R, t) (relative to the destination frame)
        has zero error; the constraint kinds stay."""
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        self._p_world = Rm @ self._p_local + tv
        self._R = Rm
        self._a_world = Rm @ self._a_local

    def closestMatch(self, R, t):
        """(R 9-list, t): the transform nearest (R, t) that satisfies the objective."""
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        if self._rot == "fixed":
            Rn = self._R.copy()
        elif self._rot == "axis":
            Rn = _minimal_rotation(Rm @ self._a_local, self._a_world) @ Rm
        else:
            Rn = Rm
        x = Rn @ self._p_local + tv          # where the constrained point would be
        if self._pos == "fixed":
            x = self._p_world
        elif self._pos == "planar":
            x = x - np.dot(x - self._p_world, self._direction) * self._direction
        elif self._pos == "linear":
            x = self._p_world + np.dot(x - self._p_world, self._direction) * self._direction
        return as_klampt(Rn), (x - Rn @ self._p_local).tolist()

    # -- engine row -------------------------------------------------------------------------
    def _row(self) -> np.ndarray:
        row = np.zeros(_engine.GOAL_COLS)
        row[0], row[1] = self._link, self._dest
        row[2], row[3] = _POS_DIMS[self._pos], _ROT_DIMS[self._rot]
        row[4:7], row[7:10], row[10:13] = self._p_local, self._p_world, self._direction
        row[13:22] = self._R.reshape(9)
        row[22:25], row[25:28] = self._a_local, self._a_world
        return row

    def __repr__(self):
        return (f"IKObjective(link={self._link}, destLink={self._dest}, position={self._pos}, "
                f"rotation={self._rot})")


def _minimal_rotation(a, b) -> np.ndarray:
    """The smallest rotation taking unit a to unit b."""
    v, c = np.cross(a, b), float(np.dot(a, b))
    if c < -1.0 + 1e-12:         # opposite: half a turn about any axis orthogonal to a
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-6:
            axis = np.cross(a, [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return 2.0 * np.outer(axis, axis) - np.eye(3)
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1.0 + c)


class IKSolver:
    """Damped least-squares IK on one robot (Klamp't's IKSolver): ``solve()`` moves the robot
    to the result (the best configuration found when it fails, as Klamp't does)."""

    def __init__(self, robot_or_objective):
        self._objectives = []
        self._max_iters = 100
        self._tol = 1e-3
        self._active = None
        self._limits = None
        self._bias = None
        self._last_iters = 0
        if isinstance(robot_or_objective, IKSolver):
            other = robot_or_objective
            self.robot = other.robot
            self._objectives = [o.copy() for o in other._objectives]
            for o in self._objectives:
                o.robot = other.robot
            self._max_iters, self._tol = other._max_iters, other._tol
            self._active = None if other._active is None else other._active.copy()
            self._limits = None if other._limits is None else tuple(x.copy() for x in other._limits)
            self._bias = None if other._bias is None else other._bias.copy()
        elif isinstance(robot_or_objective, RobotModel):
            self.robot = robot_or_objective
        elif isinstance(robot_or_objective, IKObjective):
            if not isinstance(robot_or_objective.robot, RobotModel):
                raise ValueError("IKSolver(objective): the objective has no robot; make it with "
                                 "ik.objective or set its .robot")
            self.robot = robot_or_objective.robot
            self.add(robot_or_objective)
        else:
            raise TypeError("IKSolver expects a RobotModel, an IKObjective or an IKSolver, got "
                            f"{type(robot_or_objective).__name__}")

    def copy(self) -> "IKSolver":
        return IKSolver(self)

    # -- objectives ------------------------------------------------------------------------
    def _check(self, obj) -> IKObjective:
        if not isinstance(obj, IKObjective):
            raise TypeError(f"expected an IKObjective, got {type(obj).__name__}")
        if obj.robot is not None and obj.robot is not self.robot:
            raise ValueError(f"objective is on robot '{obj.robot.getName()}', the solver on "
                             f"'{self.robot.getName()}'")
        n = self.robot.numLinks()
        if not 0 <= obj.link() < n or not -1 <= obj.destLink() < n:
            raise IndexError(f"objective links ({obj.link()}, {obj.destLink()}) out of range: "
                             f"robot '{self.robot.getName()}' has {n} links (dest -1 = world)")
        if obj.link() == obj.destLink():
            raise ValueError("objective: link and destLink are the same link")
        if obj.numPosDims() + obj.numRotDims() == 0:
            raise ValueError("objective constrains nothing (free position and rotation)")
        if obj.destLink() >= 0 and (obj._pos in ("planar", "linear") or obj._rot == "axis"):
            raise ValueError("linear, planar and axis constraints relative to another link are "
                             "not supported (Klamp't has no Jacobian for them); use a fixed "
                             "point or transform, or a world-frame objective")
        return obj

    def add(self, obj):
        self._objectives.append(self._check(obj))

    def set(self, i: int, obj):
        i = _index(i, "index")
        if not 0 <= i < len(self._objectives):
            raise IndexError(f"objective index {i} out of range [0, {len(self._objectives)})")
        self._objectives[i] = self._check(obj)

    def clear(self):
        self._objectives = []

    def numObjectives(self) -> int:
        return len(self._objectives)

    # -- settings --------------------------------------------------------------------------
    def setMaxIters(self, iters: int):
        if isinstance(iters, bool) or not isinstance(iters, (numbers.Integral, np.integer)) \
                or not 0 <= iters <= MAX_ITERS:
            raise ValueError(f"setMaxIters: iterations must be an integer in [0, {MAX_ITERS}], "
                             f"got {iters!r}")
        self._max_iters = int(iters)

    def getMaxIters(self) -> int:
        return self._max_iters

    def setTolerance(self, tol: float):
        tol = float(tol)
        if not (math.isfinite(tol) and tol >= 0):
            raise ValueError(f"setTolerance: tolerance must be finite and >= 0, got {tol}")
        self._tol = tol

    def getTolerance(self) -> float:
        return self._tol

    def setActiveDofs(self, active):
        """DOF indices into v, or joint / link names (see the module docstring)."""
        self._active = self._dofs(active)

    def getActiveDofs(self) -> list:
        """The active DOFs (indices into v); by default those of every joint between the
        objectives' links (and destination links) and the root."""
        return (self._active if self._active is not None else self._default_dofs()).tolist()

    def setJointLimits(self, qmin, qmax):
        """Limits over q (nq each); empty lists turn the limits off (Klamp't)."""
        nq = self.robot.model.nq
        if len(qmin) == 0 and len(qmax) == 0:
            self._limits = (np.full(nq, -np.inf), np.full(nq, np.inf))
            return
        lo = _float_vector(qmin, nq, "qmin")
        hi = _float_vector(qmax, nq, "qmax")
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            raise ValueError("setJointLimits: limits must not be NaN and qmin <= qmax")
        self._limits = (lo, hi)

    def getJointLimits(self):
        lo, hi = self._joint_limits()
        return lo.copy(), hi.copy()

    def setBiasConfig(self, q):
        """A configuration (nq) the free DOFs are pulled toward; empty clears it."""
        if len(q) == 0:
            self._bias = None
            return
        bias = _float_vector(q, self.robot.model.nq, "bias config")
        if not np.all(np.isfinite(bias)):
            raise ValueError("bias config: contains NaN or infinity")
        self._bias = bias

    def getBiasConfig(self) -> list:
        return [] if self._bias is None else self._bias.tolist()

    # -- evaluation ------------------------------------------------------------------------
    def getResidual(self) -> np.ndarray:
        """(m,) the stacked errors of the objectives at the robot's configuration."""
        r = self.robot
        return _engine.residual(r.model, r.data, r._q, self._goals())

    def getJacobian(self) -> np.ndarray:
        """(m, len(activeDofs)) derivative of the residual along the active DOFs."""
        r = self.robot
        return _engine.jacobian(r.model, r.data, r._q, self._goals(), self._active_array())

    def isSolved(self) -> bool:
        return bool(np.max(np.abs(self.getResidual()), initial=0.0) <= self._tol)

    def lastSolveIters(self) -> int:
        return self._last_iters

    def solve(self) -> bool:
        """Solves from the robot's configuration; the robot is left at the result."""
        goals, active = self._goals(), self._active_array()
        lo, hi = self._joint_limits()
        r = self.robot
        q = r.getConfig()
        solved, iters, _ = _engine.solve(r.model, r.data, q, goals, active, lo, hi, self._bias,
                                         self._max_iters, self._tol)
        self._last_iters = iters
        r.setConfig(q)
        return solved

    def minimize(self, secondary_objective=None, secondary_objective_grad=None) -> bool:
        """Without arguments, minimizes the residual (the same damped least squares as
        solve). With f(q) -> float and grad(q) -> (nq,), minimizes f over the active DOFs
        subject to the objectives (residual = 0) and the joint limits, by SLSQP (scipy),
        starting from a solve. Returns whether the objectives are met; the robot is left at
        the result. Floating-base and quaternion coordinates are not supported here."""
        if secondary_objective is None and secondary_objective_grad is None:
            return self.solve()
        if not (callable(secondary_objective) and callable(secondary_objective_grad)):
            raise TypeError("minimize(f, grad): both must be callables")
        from scipy.optimize import minimize as scipy_minimize
        r = self.robot
        if r.structure.quaternions:
            raise ValueError("minimize(f, grad) works on robots without quaternion coordinates")
        goals, active = self._goals(), self._active_array()
        lo, hi = self._joint_limits()
        self.solve()
        q0 = r.getConfig()

        def full(x):
            q = q0.copy()
            q[active] = x
            return q

        def cons(x):
            return _engine.residual(r.model, r.data, full(x), goals)

        def cons_jac(x):
            return _engine.jacobian(r.model, r.data, full(x), goals, active)

        def f(x):
            return float(secondary_objective(full(x).tolist()))

        def grad(x):
            return np.asarray(secondary_objective_grad(full(x).tolist()), dtype=float)[active]

        bounds = [(None if not np.isfinite(lo[k]) else lo[k],
                   None if not np.isfinite(hi[k]) else hi[k]) for k in active]
        out = scipy_minimize(f, q0[active], jac=grad, method="SLSQP", bounds=bounds,
                             constraints=[{"type": "eq", "fun": cons, "jac": cons_jac}],
                             options={"maxiter": self._max_iters, "ftol": 1e-9})
        q = full(np.clip(out.x, lo[active], hi[active]))
        self._last_iters = int(out.nit)
        r.setConfig(q)
        return self.isSolved()

    def sampleInitial(self):
        """Moves the active DOFs to a random configuration within the solver's limits (numpy's
        global generator; unbounded coordinates as RobotModel.randomizeConfig)."""
        r = self.robot
        q = r.getConfig()
        sample = random_config(r.structure, *self._joint_limits())
        coords = _dof_coordinates(r, self._active_array())
        q[coords] = sample[coords]
        r.setConfig(q)

    # -- internals -------------------------------------------------------------------------
    def _goals(self) -> np.ndarray:
        if not self._objectives:
            raise ValueError("IKSolver has no objectives; add() one first")
        return np.array([o._row() for o in self._objectives])

    def _joint_limits(self):
        return self._limits if self._limits is not None else self.robot.getJointLimits()

    def _active_array(self) -> np.ndarray:
        active = self._active if self._active is not None else self._default_dofs()
        if len(active) == 0:
            raise ValueError("IKSolver: no active DOFs (the objectives' links do not move, or "
                             "setActiveDofs was given an empty list)")
        return active

    def _default_dofs(self) -> np.ndarray:
        m = self.robot.model.arrays
        dofs = set()
        for o in self._objectives:
            for link in (o.link(), o.destLink()):
                if link < 0:
                    continue
                b = int(m["link_body"][link])
                while b >= 0:
                    first = int(m["icol"][b])
                    dofs.update(int(d) for d in m["col_dof"][first:first + m["ncolb"][b]])
                    b = int(m["parent"][b])
        return np.array(sorted(dofs), dtype=np.int64)

    def _dofs(self, active) -> np.ndarray:
        r = self.robot
        nv = r.model.nv
        if isinstance(active, (str, bytes)) or not hasattr(active, "__iter__"):
            raise TypeError("setActiveDofs: expected a list of DOF indices or joint/link names")
        out = []
        for item in active:
            if isinstance(item, str):
                out.extend(_named_dofs(r, item))
            else:
                k = _index(item, "active DOF")
                if not 0 <= k < nv:
                    raise IndexError(f"active DOF {k} out of range [0, {nv}) (indices into v)")
                out.append(k)
        if len(out) == 0:
            raise ValueError("setActiveDofs: the list is empty; at least one DOF must move")
        if len(set(out)) != len(out):
            raise ValueError(f"setActiveDofs: repeated DOFs in {out}")
        return np.array(out, dtype=np.int64)


def _float_vector(x, n: int, what: str) -> np.ndarray:
    try:
        arr = np.array(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected {n} numbers") from None
    if arr.shape != (n,):
        raise ValueError(f"{what}: expected {n} numbers, got {arr.shape[0]}")
    return arr


def _named_dofs(robot: RobotModel, name: str) -> list:
    s = robot.structure
    if name not in s.joint_type:
        if name not in s.link_names:
            raise KeyError(f"robot '{robot.getName()}' has no joint or link '{name}'; joints: "
                           f"{s.joint_names}")
        joint = robot.link(name).getParentJoint()
        if joint not in s.joint_type:
            raise ValueError(f"link '{name}' is not moved by a joint of its own (fixed or root)")
        name = joint
    qi, vi = robot.jointIndices(name)
    return list(range(vi, vi + robot.jointSize(name)[1]))


def _dof_coordinates(robot: RobotModel, dofs) -> np.ndarray:
    """q indices of the given DOFs' joints (all of a joint's coordinates)."""
    m = robot.model.arrays
    coords = set()
    for d in dofs:
        b = int(m["dof_body"][d])
        first = int(m["iq"][b])
        jt = int(m["jtype"][b])
        size = {2: 7, 3: 4}.get(jt, 1)
        coords.update(range(first, first + size))
    return np.array(sorted(coords), dtype=np.int64)


# -- klampt.model.ik functions ---------------------------------------------------------------

def objective(body, ref=None, local=None, world=None, R=None, t=None) -> IKObjective:
    """An IKObjective on body (a RobotModelLink), Klamp't's rules: ``local`` and ``world``
    (a point or lists of points) match points (1: point, 2: point and axis, 3+: fixed frame);
    ``R`` and ``t`` fix the transform (``local`` then names the point that goes to ``t``);
    ``ref`` (a link of the same robot) makes the target relative to that link's frame."""
    if not isinstance(body, RobotModelLink):
        raise TypeError(f"ik.objective: body must be a RobotModelLink, got {type(body).__name__} "
                        "(objectives on rigid objects, Klamp't's GeneralizedIKObjective, are "
                        "not supported)")
    if ref is not None and (not isinstance(ref, RobotModelLink)
                            or ref.getRobot() is not body.getRobot()):
        raise TypeError("ik.objective: ref must be a link of the same robot as body (objectives "
                        "between robots or objects are not supported)")
    obj = IKObjective()
    obj.robot = body.getRobot()
    dest = -1 if ref is None else ref.getIndex()
    if local is not None and world is not None:
        if _is_point(local):
            if not _is_point(world):
                raise ValueError("ik.objective: local is one point, world must be one point too")
            obj._set_points(body.getIndex(), dest, [local], [world])
        else:
            obj._set_points(body.getIndex(), dest, local, world)
    elif R is not None and t is not None:
        Rm, tv = _rotation(R, "R"), _vec3(t, "t")
        if local is not None:
            tv = tv - Rm @ _vec3(local, "local (with R, t: one point)")
        obj._set_transform(body.getIndex(), dest, Rm, tv)
    else:
        raise ValueError("ik.objective: give either local and world, or R and t")
    return obj


def _is_point(x) -> bool:
    try:
        return np.ndim(np.array(x, dtype=float)) == 1
    except (TypeError, ValueError):
        return False


def fixed_objective(link, ref=None, local=None, world=None) -> IKObjective:
    """Keeps link where it is now (Klamp't): the whole frame, the given local points, or the
    link points now at the given world points; relative to ref when given."""
    Tw = _transform(link)
    Tr = _transform(ref) if ref is not None else (np.eye(3), np.zeros(3))
    Rrel = Tr[0].T @ Tw[0]
    trel = Tr[0].T @ (Tw[1] - Tr[1])
    if local is not None and world is not None:
        raise ValueError("ik.fixed_objective does not accept both local and world")
    if local is None and world is None:
        return objective(link, ref, R=Rrel, t=trel)
    if world is None:
        pts = _points([local] if _is_point(local) else local, "local")
        return objective(link, ref, local=pts.tolist(), world=(pts @ Rrel.T + trel).tolist())
    pts = _points([world] if _is_point(world) else world, "world")
    return objective(link, ref, local=((pts - trel) @ Rrel).tolist(), world=pts.tolist())


def fixed_rotation_objective(link, ref=None, local_axis=None, world_axis=None) -> IKObjective:
    """Keeps link's orientation (or one axis of it) as it is now (Klamp't)."""
    if not isinstance(link, RobotModelLink):
        raise TypeError(f"fixed_rotation_objective: link must be a RobotModelLink, got {type(link).__name__}")
    Rw = link.getTransform()[0]
    Rr = ref.getTransform()[0] if ref is not None else np.eye(3)
    Rrel = Rr.T @ Rw
    obj = IKObjective()
    obj.robot = link.getRobot()
    obj.setLinks(link.getIndex(), -1 if ref is None else ref.getIndex())
    if local_axis is not None and world_axis is not None:
        raise ValueError("fixed_rotation_objective does not accept both local_axis and world_axis")
    if local_axis is None and world_axis is None:
        obj.setFixedRotConstraint(Rrel)
    elif local_axis is None:
        obj.setAxialRotConstraint(Rrel.T @ _vec3(world_axis, "world_axis"), world_axis)
    else:
        obj.setAxialRotConstraint(local_axis, Rrel @ _vec3(local_axis, "local_axis"))
    return obj


def _transform(link):
    if not isinstance(link, RobotModelLink):
        raise TypeError(f"expected a RobotModelLink, got {type(link).__name__}")
    return link.getTransform()


def _as_list(objectives) -> list:
    objs = [objectives] if isinstance(objectives, IKObjective) else list(objectives)
    if not objs:
        raise ValueError("no objectives given")
    for o in objs:
        if not isinstance(o, IKObjective):
            raise TypeError(f"expected IKObjectives, got {type(o).__name__}")
        if not isinstance(o.robot, RobotModel):
            raise ValueError("an IKObjective has no robot: make it with ik.objective or set "
                             "its .robot")
    if any(o.robot is not objs[0].robot for o in objs):
        raise ValueError("objectives on several robots: solve each robot's separately")
    return objs


def solver(objectives, iters=None, tol=None) -> IKSolver:
    """An IKSolver for the objective(s) (one robot), with iters / tol when given."""
    objs = _as_list(objectives)
    s = IKSolver(objs[0].robot)
    for o in objs:
        s.add(o)
    if iters is not None:
        s.setMaxIters(iters)
    if tol is not None:
        s.setTolerance(tol)
    return s


def _prepared(objectives, iters, tol, activeDofs, numRestarts):
    s = solver(objectives, iters, tol)
    if activeDofs is not None:
        s.setActiveDofs(activeDofs)
    s._active_array()          # refuse an empty active set before anything moves
    s._goals()
    if isinstance(numRestarts, bool) or not isinstance(numRestarts, (numbers.Integral, np.integer)) \
            or not 0 <= numRestarts <= MAX_ITERS:
        raise ValueError(f"numRestarts must be an integer in [0, {MAX_ITERS}], got {numRestarts!r}")
    return s


def _restarts(s: IKSolver, numRestarts, feasibilityCheck, startRandom) -> bool:
    feasible = feasibilityCheck if feasibilityCheck is not None else (lambda: True)
    if startRandom:
        s.sampleInitial()
    if s.solve() and feasible():
        return True
    for _ in range(int(numRestarts)):
        s.sampleInitial()
        if s.solve() and feasible():
            return True
    return False


def solve(objectives, iters=1000, tol=1e-3, activeDofs=None, numRestarts=0,
          feasibilityCheck=None, startRandom=False) -> bool:
    """Solves the objective(s) from the robot's configuration (random restarts when
    numRestarts > 0); the robot is left at the solution, or at the last attempt's best."""
    s = _prepared(objectives, iters, tol, activeDofs, numRestarts)
    return _restarts(s, numRestarts, feasibilityCheck, startRandom)


def solve_global(objectives, iters=1000, tol=1e-3, activeDofs=None, numRestarts=100,
                 feasibilityCheck=None, startRandom=False) -> bool:
    """solve with random restarts (numRestarts, default 100): Klamp't's solve_global."""
    s = _prepared(objectives, iters, tol, activeDofs, numRestarts)
    return _restarts(s, numRestarts, feasibilityCheck, startRandom)


def solve_nearby(objectives, maxDeviation, iters=1000, tol=1e-3, activeDofs=None,
                 numRestarts=0, feasibilityCheck=None) -> bool:
    """Solves without moving any active coordinate more than maxDeviation from the current
    configuration (limits narrowed to q +- maxDeviation, bias = q), as Klamp't."""
    dev = float(maxDeviation)
    if not (math.isfinite(dev) and dev >= 0):
        raise ValueError(f"solve_nearby: maxDeviation must be finite and >= 0, got {maxDeviation!r}")
    s = _prepared(objectives, iters, tol, activeDofs, numRestarts)
    r = s.robot
    q = r.getConfig()
    lo, hi = s.getJointLimits()
    coords = _dof_coordinates(r, s._active_array())
    scalar = coords[~np.isin(coords, _quaternion_coords(r))]
    lo[scalar] = np.maximum(lo[scalar], q[scalar] - dev)
    hi[scalar] = np.minimum(hi[scalar], q[scalar] + dev)
    s.setJointLimits(lo, hi)
    s.setBiasConfig(q)
    return _restarts(s, numRestarts, feasibilityCheck, False)


def _quaternion_coords(robot: RobotModel) -> np.ndarray:
    return np.array([k + i for k in robot.structure.quaternions for i in range(4)], dtype=np.int64)


def residual(objectives) -> np.ndarray:
    """The residual of the objective(s) at the robot's current configuration."""
    return solver(objectives).getResidual()


def jacobian(objectives) -> np.ndarray:
    """The Jacobian of the objective(s) along their default active DOFs."""
    return solver(objectives).getJacobian()
