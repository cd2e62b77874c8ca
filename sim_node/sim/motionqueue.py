"""Joint-space motion queue of the simulated robot controller (Klamp't SimRobotController).

The queue is a chronological list of trajectory segments in simulation time; `evaluate(t)` gives
the PID's desired joint position and velocity. Segment kinds:

- milestone: time-optimal interpolant between two (position, velocity) states under per-joint
  velocity and acceleration bounds, all joints finishing together (ruckig with infinite jerk,
  i.e. the second-order "parabolic ramps" of Klamp't, time synchronisation);
- stop: time-optimal deceleration to rest (ruckig velocity interface), all joints stopping
  together; with constant accelerations this keeps the velocity direction, so the motion is a
  straight line;
- line: straight joint-space line from rest to rest, time-optimal along the line (a 1-DOF ruckig
  problem on the path parameter s in [0, 1], with the joint bounds scaled by the joint
  displacements);
- ramp: constant velocity (linear interpolation, or a velocity command);
- cubic: cubic Hermite between two (position, velocity) states over a given duration.

Only milestone, stop and line segments respect the velocity and acceleration bounds; ramp and
cubic segments follow their command exactly. A milestone starting faster than the velocity
bound first brakes at the acceleration bound.

Rotations (spherical joints, the orientation of free joints)
------------------------------------------------------------
A queue may hold rotation blocks: a unit quaternion (x, y, z, w) in the positions, paired with
an angular velocity in child axes (3 entries) in the velocities; positions then have one entry
more per block than velocities. Each segment works in the tangent coordinates of its start: a
rotation Q is the rotation vector x = log(Q0^-1 Q) from the segment's start Q0 (Q = Q0 exp(x)),
every other entry is itself. Every segment kind above is computed on those coordinates, so a
line, a ramp or a velocity command turns along the geodesic from Q0 to the target (slerp: the
shorter way round, about a constant axis), in step with the scalar joints; a milestone or a
cubic interpolates each component of x and ends exactly at its target, leaving the geodesic in
between as a milestone of several scalar joints leaves the straight line. The angular velocity
is Jr(x) dx/dt (Jr the right Jacobian of SO(3)), which is dx/dt itself along a geodesic; the
bounds apply to the components of dx/dt. Without rotation blocks positions and velocities are
the same coordinates.

Time rules
----------
- Segment k covers (t0_k, t1_k]; at a junction both segments give the same state.
- Before the first segment the queue gives that segment's start state. After its end the queue
  holds the end position at rest (velocity 0), also when the last segment ends with a nonzero
  velocity (a cubic with v != 0, a milestone with dq != 0): the desired velocity then drops to
  0 at the end time, while the desired position stays continuous.
- `set_*` methods replace the queue by one segment starting at the given time t from
  `evaluate(t)`, the desired position and velocity there, so a new command issued mid-motion is
  smooth.
- `add_*` methods append at `end_time()` from `end_state()`, unless the queue has finished,
  i.e. the last time passed to `reset`, `set_*` or `evaluate` lies after `end_time()`: then the
  new segment starts at that last time from the held state (end position, velocity 0).
- Segments that ended before that last time are discarded when new segments are appended; the
  queue then holds the end state of the last discarded one if nothing else remains.
"""
from __future__ import annotations

import copy
import math
from bisect import bisect_left

import numpy as np
from ruckig import (ControlInterface, InputParameter, Result, Ruckig, RuckigError,
                    Synchronization, Trajectory)

_STATE_VERSION = 1


def _float(method: str, name: str, x) -> float:
    """x as a finite float, or ValueError naming `method` and `name`."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{method}: {name} must be a number, got {x!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{method}: {name} must be finite, got {value}")
    return value


def _duration(method: str, dt) -> float:
    """dt as a positive finite float, or ValueError."""
    value = _float(method, "dt", dt)
    if value <= 0.0:
        raise ValueError(f"{method}: dt must be positive, got {value}")
    return value


def _vector(method: str, name: str, x, n: int) -> np.ndarray:
    """x as a new float array of n finite entries, or ValueError."""
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{method}: {name} must be a sequence of {n} numbers") from None
    if a.shape != (n,):
        raise ValueError(f"{method}: {name} must have shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{method}: {name} must be finite, got {a.tolist()}")
    return a


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def _quat_exp(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of the rotation vector r."""
    theta = math.sqrt(r @ r)
    s = 0.5 - theta * theta / 48.0 if theta < 1e-6 else math.sin(0.5 * theta) / theta
    return np.array([r[0] * s, r[1] * s, r[2] * s, math.cos(0.5 * theta)])


def _quat_log(q: np.ndarray) -> np.ndarray:
    """Rotation vector (angle in [0, pi]) of the quaternion q (x, y, z, w); q and -q agree."""
    sign = -1.0 if q[3] < 0.0 else 1.0
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2])
    if n == 0.0:
        return np.zeros(3)
    return (sign * 2.0 * math.atan2(n, sign * q[3]) / n) * q[:3]


def _skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _right_jacobian(x: np.ndarray) -> np.ndarray:
    """Jr(x) = I - (1 - cos t)/t^2 [x] + (t - sin t)/t^3 [x]^2 (t = |x|): the angular velocity
    in child axes of exp(x(t)) is Jr(x) dx/dt."""
    t2 = x @ x
    if t2 < 1e-12:
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        t = math.sqrt(t2)
        a, b = (1.0 - math.cos(t)) / t2, (t - math.sin(t)) / (t2 * t)
    K = _skew(x)
    return np.eye(3) - a * K + b * (K @ K)


class _Layout:
    """Positions (nq) and velocities (n) of a queue: scalar entries, and rotation blocks
    (quaternion at positions[iq:iq+4], angular velocity at velocities[iv:iv+3])."""

    def __init__(self, n: int, rotations):
        self.n = n
        self.rotations = tuple((int(iq), int(iv)) for iq, iv in rotations)
        self.nq = n + len(self.rotations)
        in_rotation_q = {iq + k for iq, _ in self.rotations for k in range(4)}
        in_rotation_v = {iv + k for _, iv in self.rotations for k in range(3)}
        self.scalar_q = np.array([i for i in range(self.nq) if i not in in_rotation_q], dtype=np.intp)
        self.scalar_v = np.array([i for i in range(n) if i not in in_rotation_v], dtype=np.intp)
        if (len(in_rotation_q) != 4 * len(self.rotations) or len(in_rotation_v) != 3 * len(self.rotations)
                or max(in_rotation_q, default=-1) >= self.nq or max(in_rotation_v, default=-1) >= n
                or self.scalar_q.size != self.scalar_v.size):
            raise ValueError(f"MotionQueue: rotation blocks {list(self.rotations)} do not fit "
                             f"{n} velocities")

    def positions(self, method: str, name: str, x) -> np.ndarray:
        """x as nq finite positions, quaternions normalised (a zero one is refused)."""
        q = _vector(method, name, x, self.nq)
        for iq, _ in self.rotations:
            norm = np.linalg.norm(q[iq:iq + 4])
            if norm < 1e-9:
                raise ValueError(f"{method}: {name}[{iq}:{iq + 4}] is a zero quaternion")
            q[iq:iq + 4] /= norm
        return q

    def to_tangent(self, base: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Tangent coordinates (n) of positions q at the segment start `base`."""
        if not self.rotations:
            return q.copy()
        x = np.empty(self.n)
        x[self.scalar_v] = q[self.scalar_q]
        for iq, iv in self.rotations:
            b = base[iq:iq + 4]
            x[iv:iv + 3] = _quat_log(_quat_mul(np.array([-b[0], -b[1], -b[2], b[3]]), q[iq:iq + 4]))
        return x

    def from_tangent(self, base: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Positions (nq) of tangent coordinates x at `base` (a new array)."""
        if not self.rotations:
            return x
        q = np.empty(self.nq)
        q[self.scalar_q] = x[self.scalar_v]
        for iq, iv in self.rotations:
            q[iq:iq + 4] = _quat_mul(base[iq:iq + 4], _quat_exp(x[iv:iv + 3]))
        return q

    def velocity_from_tangent(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        """Velocities (angular velocity Jr(x) dx/dt in rotation blocks) of dx at x."""
        if not self.rotations:
            return dx
        dq = dx.copy()
        for _, iv in self.rotations:
            dq[iv:iv + 3] = _right_jacobian(x[iv:iv + 3]) @ dx[iv:iv + 3]
        return dq

    def velocity_to_tangent(self, x: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """dx/dt at x of velocities dq (the inverse of velocity_from_tangent)."""
        if not self.rotations:
            return dq
        dx = dq.copy()
        for _, iv in self.rotations:
            dx[iv:iv + 3] = np.linalg.solve(_right_jacobian(x[iv:iv + 3]), dq[iv:iv + 3])
        return dx

    def difference(self, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
        """qb minus qa (n): differences of scalars, rotation vectors log(Qa^-1 Qb) in child
        axes (the constant velocity that moves qa to qb in unit time)."""
        if not self.rotations:
            return qb - qa
        d = self.to_tangent(qa, qb)
        d[self.scalar_v] -= qa[self.scalar_q]
        return d

    def advance(self, q: np.ndarray, dq: np.ndarray, dt: float) -> np.ndarray:
        """Positions reached from q at constant velocity dq after dt (a new array)."""
        if not self.rotations:
            return q + dq * dt
        return self.from_tangent(q, self.to_tangent(q, q) + dq * dt)


def _bounds(method: str, vmax, amax, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Velocity and acceleration bounds as arrays of n positive finite floats, or ValueError."""
    vmax = _vector(method, "vmax", vmax, n)
    amax = _vector(method, "amax", amax, n)
    if np.any(vmax <= 0.0) or np.any(amax <= 0.0):
        raise ValueError(f"{method}: vmax and amax must be positive, got "
                         f"{vmax.tolist()} and {amax.tolist()}")
    return vmax, amax


def _solve(method: str, q0, v0, q1, v1, vmax, amax, interface) -> Trajectory:
    """Time-optimal, time-synchronised, acceleration-limited ruckig trajectory.

    Parameters
    ----------
    method : str
        Name of the public method, for error messages.
    q0, v0 : sequence of float
        Start position and velocity.
    q1 : sequence of float
        Target position (ignored by the velocity interface).
    v1 : sequence of float
        Target velocity.
    vmax, amax : sequence of float
        Per-DOF velocity and acceleration bounds.
    interface : ControlInterface
        Position (reach q1 and v1) or Velocity (reach v1 only).

    Returns
    -------
    Trajectory
        The solved trajectory; its `at_time(tau)` gives (position, velocity, acceleration).

    Raises
    ------
    ValueError
        If ruckig rejects the input or finds no trajectory.
    """
    n = len(q0)
    inp = InputParameter(n)
    inp.current_position = list(q0)
    inp.current_velocity = list(v0)
    inp.current_acceleration = [0.0] * n
    inp.target_position = list(q1)
    inp.target_velocity = list(v1)
    inp.target_acceleration = [0.0] * n
    inp.max_velocity = list(vmax)
    inp.max_acceleration = list(amax)
    inp.max_jerk = [math.inf] * n
    inp.synchronization = Synchronization.Time
    inp.control_interface = interface
    trajectory = Trajectory(n)
    try:
        result = Ruckig(n).calculate(inp, trajectory)
    except RuckigError as err:
        raise ValueError(f"{method}: ruckig rejected the input: {str(err).strip()}") from None
    if result != Result.Working:
        raise ValueError(f"{method}: ruckig found no trajectory ({result.name})")
    return trajectory


class _Segment:
    """One trajectory piece on [t0, t1], built from its plain-data definition `spec`.

    Attributes
    ----------
    spec : dict
        Plain data the segment is rebuilt from (see `_build`).
    t0, t1 : float
        Start and end time [s].
    q0, dq0, q1, dq1 : np.ndarray
        Exact start and end states (positions, velocities).
    layout : _Layout
        The queue's positions and velocities.
    base : np.ndarray
        Start positions: the origin of the tangent coordinates of rotation blocks.
    x0, dx0, x1, dx1 : np.ndarray
        Start and end states in tangent coordinates (the same arrays as q0, ... without
        rotation blocks), on which the subclasses interpolate.
    """

    __slots__ = ("spec", "t0", "t1", "q0", "dq0", "q1", "dq1", "layout", "base", "x0", "dx0",
                 "x1", "dx1")

    def state(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """New arrays (q, dq) at time t; the start state before t0, the end state from t1."""
        tau = t - self.t0
        if tau <= 0.0:
            return self.q0.copy(), self.dq0.copy()
        if t >= self.t1:
            return self.q1.copy(), self.dq1.copy()
        x, dx = self._inside(tau)
        return self.layout.from_tangent(self.base, x), self.layout.velocity_from_tangent(x, dx)

    def _inside(self, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """New arrays (x, dx) of tangent coordinates at local time tau, strictly inside."""
        raise NotImplementedError


class _Ramp(_Segment):
    """Constant velocity dx0 from x0 over [t0, t1]."""

    __slots__ = ()

    def _inside(self, tau):
        x = self.dx0 * tau
        x += self.x0
        return x, self.dx0.copy()


class _Cubic(_Segment):
    """Cubic Hermite x0 + dx0 tau + c2 tau^2 + c3 tau^3 (the derivative uses d2 = 2 c2,
    d3 = 3 c3)."""

    __slots__ = ("c2", "c3", "d2", "d3")

    def _inside(self, tau):
        x = self.c3 * tau
        x += self.c2
        x *= tau
        x += self.dx0
        x *= tau
        x += self.x0
        dx = self.d3 * tau
        dx += self.d2
        dx *= tau
        dx += self.dx0
        return x, dx


class _Profile(_Segment):
    """An n-DOF ruckig trajectory (milestone or stop)."""

    __slots__ = ("trajectory",)

    def _inside(self, tau):
        x, dx, _ = self.trajectory.at_time(tau)
        return np.array(x), np.array(dx)


class _Line(_Segment):
    """x0 + s(tau) (x1 - x0) with s a 1-DOF ruckig trajectory from 0 to 1 at rest."""

    __slots__ = ("trajectory", "delta")

    def _inside(self, tau):
        s, ds, _ = self.trajectory.at_time(tau)
        x = self.delta * s[0]
        x += self.x0
        return x, self.delta * ds[0]


def _build(method: str, spec: dict, layout: _Layout) -> _Segment:
    """The segment defined by `spec`, a dict with "kind", "t0" and per kind:

    - "ramp": q0, v, dt, q1 (q1 given, not recomputed, so set_linear ends exactly at its target);
    - "cubic": q0, v0, q1, v1, dt;
    - "milestone": q0, v0, q1, v1, vmax, amax;
    - "stop": q0, v0, vmax, amax;
    - "line": q0, q1 (different), vmax, amax.

    Positions are lists of layout.nq floats, velocities and bounds of layout.n. Raises
    ValueError (naming `method`) on bad data.
    """
    n = layout.n
    try:
        kind = spec["kind"]
        t0 = _float(method, "segment t0", spec["t0"])

        def position(key):
            return layout.positions(method, f"segment {key}", spec[key])

        def velocity(key):
            return _vector(method, f"segment {key}", spec[key], n)

        def tangent(q, dq):
            # (x, dx) of the state (q, dq) in the segment's tangent coordinates
            x = layout.to_tangent(seg.base, q)
            return x, layout.velocity_to_tangent(x, dq)

        if kind == "ramp":
            seg = _Ramp()
            seg.q0, seg.dq0, seg.q1 = position("q0"), velocity("v"), position("q1")
            seg.dq1 = seg.dq0.copy()
            seg.base = seg.q0
            seg.x0, seg.dx0 = tangent(seg.q0, seg.dq0)
            duration = _duration(method, spec["dt"])
        elif kind == "cubic":
            seg = _Cubic()
            seg.q0, seg.dq0 = position("q0"), velocity("v0")
            seg.q1, seg.dq1 = position("q1"), velocity("v1")
            seg.base = seg.q0
            seg.x0, seg.dx0 = tangent(seg.q0, seg.dq0)
            seg.x1, seg.dx1 = tangent(seg.q1, seg.dq1)
            h = duration = _duration(method, spec["dt"])
            slope = (seg.x1 - seg.x0) / h
            seg.c2 = (3.0 * slope - 2.0 * seg.dx0 - seg.dx1) / h
            seg.c3 = (seg.dx0 + seg.dx1 - 2.0 * slope) / (h * h)
            seg.d2, seg.d3 = 2.0 * seg.c2, 3.0 * seg.c3
        elif kind in ("milestone", "stop"):
            seg = _Profile()
            seg.q0, seg.dq0 = position("q0"), velocity("v0")
            seg.base = seg.q0
            seg.x0, seg.dx0 = tangent(seg.q0, seg.dq0)
            vmax, amax = _bounds(method, spec["vmax"], spec["amax"], n)
            if kind == "milestone":
                seg.q1, seg.dq1 = position("q1"), velocity("v1")
                seg.x1, seg.dx1 = tangent(seg.q1, seg.dq1)
                interface = ControlInterface.Position
            else:
                seg.x1, seg.dx1 = seg.x0, np.zeros(n)
                interface = ControlInterface.Velocity
            seg.trajectory = _solve(method, seg.x0, seg.dx0, seg.x1, seg.dx1, vmax, amax,
                                    interface)
            duration = seg.trajectory.duration
            if kind == "stop":
                seg.x1 = np.array(seg.trajectory.at_time(duration)[0])
                seg.q1, seg.dq1 = layout.from_tangent(seg.base, seg.x1), np.zeros(n)
        elif kind == "line":
            seg = _Line()
            seg.q0, seg.q1 = position("q0"), position("q1")
            seg.dq0, seg.dq1 = np.zeros(n), np.zeros(n)
            seg.base = seg.q0
            seg.x0, seg.dx0 = tangent(seg.q0, seg.dq0)
            seg.x1, seg.dx1 = tangent(seg.q1, seg.dq1)
            vmax, amax = _bounds(method, spec["vmax"], spec["amax"], n)
            seg.delta = seg.x1 - seg.x0
            moving = seg.delta != 0.0
            if not np.any(moving):
                raise ValueError(f"{method}: a line segment needs distinct end points")
            span = np.abs(seg.delta[moving])
            v_s, a_s = np.min(vmax[moving] / span), np.min(amax[moving] / span)
            seg.trajectory = _solve(method, [0.0], [0.0], [1.0], [0.0], [v_s], [a_s],
                                    ControlInterface.Position)
            duration = seg.trajectory.duration
        else:
            raise ValueError(f"{method}: unknown segment kind {kind!r}")
    except KeyError as err:
        raise ValueError(f"{method}: segment definition lacks {err}") from None
    seg.spec, seg.t0, seg.t1, seg.layout = spec, t0, t0 + duration, layout
    if not (math.isfinite(seg.t1) and np.all(np.isfinite(seg.q1))):
        raise ValueError(f"{method}: the segment ends at a non-finite time or position")
    return seg


class MotionQueue:
    """Joint-space motion queue over n joint DOFs, in simulation time [s].

    See the module docstring for the segment kinds, the time rules and rotations. A new queue
    holds the zero position (identity rotations) at rest from time 0.

    Parameters
    ----------
    n : int
        Number of joint DOFs: the size of velocities (positive).
    vmax, amax : array_like
        Per-DOF velocity [unit/s] and acceleration [unit/s^2] bounds of the milestone
        segments: n positive finite floats each.
    rotations : sequence of (int, int), optional
        Rotation blocks (iq, iv): positions[iq:iq+4] is a unit quaternion (x, y, z, w) whose
        angular velocity (child axes) is velocities[iv:iv+3]. Positions have n + len(rotations)
        entries ("nq" below; n without rotations).

    Raises
    ------
    ValueError
        On a non-positive n or bad bounds; every method raises ValueError, naming itself and
        the problem, on bad input and then leaves the queue unchanged.
    """

    def __init__(self, n: int, vmax, amax, rotations=()):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"MotionQueue: n must be a positive integer, got {n!r}")
        self._n = int(n)
        self._layout = _Layout(self._n, rotations)
        self._vmax, self._amax = _bounds("MotionQueue", vmax, amax, self._n)
        self._segments: list[_Segment] = []
        self._ends: list[float] = []          # segment end times, for bisection
        self._t_base = 0.0                    # the empty queue holds q_base from t_base
        self._q_base = np.zeros(self._layout.nq)
        for iq, _ in self._layout.rotations:
            self._q_base[iq + 3] = 1.0
        self._t_last = 0.0                    # last time passed to reset/set_*/evaluate
        self._update_end()

    # ---- state -----------------------------------------------------------------------------

    def set_limits(self, vmax, amax) -> None:
        """Set the velocity and acceleration bounds of the milestones added from now on.

        Parameters
        ----------
        vmax, amax : array_like
            n positive finite floats each. Segments already queued keep their bounds.
        """
        self._vmax, self._amax = _bounds("set_limits", vmax, amax, self._n)

    def reset(self, q, t: float) -> None:
        """Empty the queue: hold position q at rest from time t.

        Parameters
        ----------
        q : array_like
            nq joint positions.
        t : float
            Current simulation time [s].
        """
        q = self._layout.positions("reset", "q", q)
        t = _float("reset", "t", t)
        self._segments, self._ends = [], []
        self._t_base, self._q_base, self._t_last = t, q, t
        self._update_end()

    def active(self, t: float) -> bool:
        """True while t is before the end time of the queue."""
        return _float("active", "t", t) < self._t_end

    def evaluate(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Desired joint position and velocity at time t.

        Parameters
        ----------
        t : float
            Simulation time [s]; recorded as the last time seen (see `add_milestone`).

        Returns
        -------
        q, dq : np.ndarray
            New arrays of nq and n floats: the end position and zero velocity after the end of
            the queue, the first segment's start state before its start.
        """
        t = _float("evaluate", "t", t)
        self._t_last = t
        return self._state_at(t)

    def end_time(self) -> float:
        """End time of the queue [s] (the reset time of an empty queue)."""
        return self._t_end

    def end_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q, dq) at the end time: the last segment's end state, or the held position at rest
        for an empty queue. New arrays."""
        return self._q_end.copy(), self._dq_end.copy()

    def remaining_time(self, t: float) -> float:
        """Time from t to the end of the queue [s], 0 once it is reached."""
        return max(0.0, self._t_end - _float("remaining_time", "t", t))

    def difference(self, qa, qb) -> np.ndarray:
        """The constant velocity (n) that moves positions qa to qb in unit time: qb - qa, with
        log(Qa^-1 Qb) (child axes, the shorter way round) for rotation blocks."""
        return self._layout.difference(self._layout.positions("difference", "qa", qa),
                                       self._layout.positions("difference", "qb", qb))

    # ---- commands --------------------------------------------------------------------------

    def set_milestone(self, t: float, q, dq=None) -> None:
        """Replace the queue by a time-optimal motion from `evaluate(t)` to (q, dq).

        Parameters
        ----------
        t : float
            Current simulation time [s].
        q : array_like
            n target positions.
        dq : array_like, optional
            n target velocities within the velocity bounds; zero by default.
        """
        t = _float("set_milestone", "t", t)
        q, dq = self._milestone_target("set_milestone", q, dq)
        q0, dq0 = self._state_at(t)
        self._replace(t, [self._milestone(t, q0, dq0, q, dq, "set_milestone")], q0)

    def add_milestone(self, q, dq=None) -> None:
        """Append a time-optimal motion from the end state to (q, dq).

        The motion starts at `end_time()` from `end_state()`, or, if the queue has finished
        (the last time passed to reset/set_*/evaluate is after `end_time()`), at that time from
        the end position at rest. The same rule holds for every add_* method.

        Parameters
        ----------
        q : array_like
            n target positions.
        dq : array_like, optional
            n target velocities within the velocity bounds; zero by default.
        """
        q, dq = self._milestone_target("add_milestone", q, dq)
        t0, q0, dq0 = self._append_start()
        self._append([self._milestone(t0, q0, dq0, q, dq, "add_milestone")])

    def add_milestone_linear(self, q) -> None:
        """Append a straight joint-space line from the end position to q, rest to rest.

        If the end velocity is not zero, the queue first comes to rest time-optimally (all
        joints stopping together, along a straight line) and the line starts from there. The
        line is time-optimal under the joint bounds; nothing is appended for a line of zero
        length from rest.

        Parameters
        ----------
        q : array_like
            n target positions.
        """
        method = "add_milestone_linear"
        q = self._layout.positions(method, "q", q)
        t0, q0, dq0 = self._append_start()
        segments = []
        if np.any(dq0 != 0.0):
            stop = self._spec("stop", t0, q0=q0, v0=dq0, vmax=self._vmax, amax=self._amax)
            segments.append(_build(method, stop, self._layout))
            t0, q0 = segments[-1].t1, segments[-1].q1
        if np.any(q != q0):
            line = self._spec("line", t0, q0=q0, q1=q, vmax=self._vmax, amax=self._amax)
            segments.append(_build(method, line, self._layout))
        self._append(segments)

    def set_linear(self, t: float, q, dt: float) -> None:
        """Replace the queue by a constant-velocity motion from the position at t to q.

        Parameters
        ----------
        t : float
            Current simulation time [s].
        q : array_like
            n target positions, reached at t + dt and then held at rest.
        dt : float
            Duration [s], positive.
        """
        t, q, dt = (_float("set_linear", "t", t), self._layout.positions("set_linear", "q", q),
                    _duration("set_linear", dt))
        q0 = self._state_at(t)[0]
        self._replace(t, [self._linear(t, q0, q, dt, "set_linear")], q0)

    def add_linear(self, q, dt: float) -> None:
        """Append a constant-velocity motion from the end position to q over dt [s].

        The start follows the add_* rule of `add_milestone`; the end velocity of the queue
        is dropped (the motion starts at velocity (q - q_end) / dt).
        """
        q, dt = self._layout.positions("add_linear", "q", q), _duration("add_linear", dt)
        t0, q0, _ = self._append_start()
        self._append([self._linear(t0, q0, q, dt, "add_linear")])

    def set_cubic(self, t: float, q, v, dt: float) -> None:
        """Replace the queue by a cubic Hermite from `evaluate(t)` to (q, v) over dt.

        Parameters
        ----------
        t : float
            Current simulation time [s].
        q, v : array_like
            n target positions and velocities, reached at t + dt; then q is held at rest.
        dt : float
            Duration [s], positive.
        """
        method = "set_cubic"
        t, q, v, dt = (_float(method, "t", t), self._layout.positions(method, "q", q),
                       _vector(method, "v", v, self._n), _duration(method, dt))
        q0, dq0 = self._state_at(t)
        spec = self._spec("cubic", t, q0=q0, v0=dq0, q1=q, v1=v, dt=dt)
        self._replace(t, [_build(method, spec, self._layout)], q0)

    def add_cubic(self, q, v, dt: float) -> None:
        """Append a cubic Hermite from the end state to (q, v) over dt [s] (add_* start rule
        of `add_milestone`)."""
        method = "add_cubic"
        q, v, dt = (self._layout.positions(method, "q", q), _vector(method, "v", v, self._n),
                    _duration(method, dt))
        t0, q0, dq0 = self._append_start()
        spec = self._spec("cubic", t0, q0=q0, v0=dq0, q1=q, v1=v, dt=dt)
        self._append([_build(method, spec, self._layout)])

    def set_velocity(self, t: float, dq, dt: float) -> None:
        """Replace the queue by a motion at constant velocity dq for dt from the position at t,
        then holding the reached position at rest.

        Parameters
        ----------
        t : float
            Current simulation time [s].
        dq : array_like
            n joint velocities.
        dt : float
            Duration [s], positive.
        """
        method = "set_velocity"
        t, dq, dt = (_float(method, "t", t), _vector(method, "dq", dq, self._n),
                     _duration(method, dt))
        q0 = self._state_at(t)[0]
        spec = self._spec("ramp", t, q0=q0, v=dq, dt=dt, q1=self._layout.advance(q0, dq, dt))
        self._replace(t, [_build(method, spec, self._layout)], q0)

    # ---- persistence -----------------------------------------------------------------------

    def get_state(self) -> dict:
        """Plain picklable data (dicts, lists, floats, str) that fully rebuilds the queue with
        `set_state`."""
        return {
            "version": _STATE_VERSION,
            "n": self._n,
            "vmax": self._vmax.tolist(),
            "amax": self._amax.tolist(),
            "t_base": self._t_base,
            "q_base": self._q_base.tolist(),
            "t_last": self._t_last,
            "segments": [dict(copy.deepcopy(seg.spec), t1=seg.t1) for seg in self._segments],
        }

    def set_state(self, state: dict) -> None:
        """Rebuild the queue from `get_state()` data: ruckig trajectories are re-solved, which
        is deterministic, so `evaluate` then gives bit-identical results.

        Raises
        ------
        ValueError
            On malformed data, a different joint count, or a segment that re-solves to a
            different end time (e.g. data from another ruckig version).
        """
        method = "set_state"
        try:
            if state["version"] != _STATE_VERSION or state["n"] != self._n:
                raise ValueError(f"{method}: expected version {_STATE_VERSION} and n = {self._n}"
                                 f", got {state['version']!r} and {state['n']!r}")
            vmax, amax = _bounds(method, state["vmax"], state["amax"], self._n)
            t_base = _float(method, "t_base", state["t_base"])
            q_base = self._layout.positions(method, "q_base", state["q_base"])
            t_last = _float(method, "t_last", state["t_last"])
            segments = []
            for data in state["segments"]:
                spec = copy.deepcopy(data)
                t1 = spec.pop("t1")
                seg = _build(method, spec, self._layout)
                if seg.t1 != t1:
                    raise ValueError(f"{method}: a {spec['kind']} segment re-solves to end at "
                                     f"{seg.t1!r} instead of {t1!r}")
                if segments and seg.t0 < segments[-1].t1:
                    raise ValueError(f"{method}: segments overlap in time")
                segments.append(seg)
        except (AttributeError, KeyError, TypeError) as err:
            raise ValueError(f"{method}: malformed state ({err!r})") from None
        self._vmax, self._amax = vmax, amax
        self._segments, self._ends = segments, [seg.t1 for seg in segments]
        self._t_base, self._q_base, self._t_last = t_base, q_base, t_last
        self._update_end()

    # ---- internals -------------------------------------------------------------------------

    def _state_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """`evaluate(t)` without recording t."""
        i = bisect_left(self._ends, t)
        if i == len(self._segments):
            return self._q_end.copy(), np.zeros(self._n)
        return self._segments[i].state(t)

    def _update_end(self) -> None:
        """Cache the end time and state from the segments (or the base hold)."""
        if self._segments:
            last = self._segments[-1]
            self._t_end, self._q_end, self._dq_end = last.t1, last.q1, last.dq1
        else:
            self._t_end, self._q_end, self._dq_end = self._t_base, self._q_base, np.zeros(self._n)

    def _append_start(self) -> tuple[float, np.ndarray, np.ndarray]:
        """Start time and state of an appended segment (the add_* rule)."""
        if self._t_last > self._t_end:
            return self._t_last, self._q_end, np.zeros(self._n)
        return self._t_end, self._q_end, self._dq_end

    def _replace(self, t: float, segments: list, q0: np.ndarray) -> None:
        """Make `segments` the whole queue, issued at time t from position q0."""
        self._segments, self._ends = segments, [seg.t1 for seg in segments]
        self._t_base, self._q_base, self._t_last = t, q0, t
        self._update_end()

    def _append(self, new: list) -> None:
        """Discard the segments that ended before the last time seen and append `new`."""
        done = bisect_left(self._ends, self._t_last)
        if done:
            self._t_base, self._q_base = self._ends[done - 1], self._segments[done - 1].q1
            del self._segments[:done], self._ends[:done]
        self._segments += new
        self._ends += [seg.t1 for seg in new]
        self._update_end()

    def _milestone_target(self, method: str, q, dq) -> tuple[np.ndarray, np.ndarray]:
        """Validated milestone target: q, and dq (zero by default) within the bounds."""
        q = self._layout.positions(method, "q", q)
        dq = np.zeros(self._n) if dq is None else _vector(method, "dq", dq, self._n)
        if np.any(np.abs(dq) > self._vmax):
            raise ValueError(f"{method}: |dq| must not exceed vmax, got {dq.tolist()} for "
                             f"vmax {self._vmax.tolist()}")
        return q, dq

    def _milestone(self, t0, q0, dq0, q, dq, method) -> _Segment:
        """Milestone segment from (q0, dq0) at t0 to (q, dq) under the current bounds."""
        spec = self._spec("milestone", t0, q0=q0, v0=dq0, q1=q, v1=dq, vmax=self._vmax,
                          amax=self._amax)
        return _build(method, spec, self._layout)

    def _linear(self, t0, q0, q, dt, method) -> _Segment:
        """Constant-velocity segment from q0 at t0 to q at t0 + dt."""
        return _build(method, self._spec("ramp", t0, q0=q0, v=self._layout.difference(q0, q) / dt,
                                          dt=dt, q1=q), self._layout)

    @staticmethod
    def _spec(kind: str, t0: float, **fields) -> dict:
        """A segment definition of plain data: arrays become lists of floats."""
        spec = {"kind": kind, "t0": float(t0)}
        for key, value in fields.items():
            spec[key] = value.tolist() if isinstance(value, np.ndarray) else float(value)
        return spec
