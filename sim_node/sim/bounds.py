"""The documented bounds of the numbers a user or client may hand the simulation (DESIGN.md §8).

Every boundary (the Python API's setters in Simulator / SimBody / SimRobotController, the node's
topics and services) refuses non-finite numbers and numbers beyond these bounds with a
ValueError naming the field, before anything is applied. The bounds are far beyond anything a
robot does, and tight enough that the engine's arithmetic stays far from overflow (a 1e308
pose or force is refused, not integrated):

    position      |x| <= 1e4 m            positions of bodies, bases, poses, points of forces
    joint         |q| <= 1e4 rad or m     every joint coordinate; within the URDF limits where
                                          it has them (JOINT_LIMIT_TOLERANCE beyond allowed)
    linear speed  |v| <= 1e3 m/s          bodies, floating bases (2,000 m/s is refused)
    angular speed |w| <= 1e4 rad/s        bodies, floating bases, every joint velocity
    force         |f| <= 1e9 N            forces and the force part of wrenches
    torque        |t| <= 1e9 N m          torques, joint torques and efforts (N for prismatic)
    gravity       |g| <= 1e3 m/s^2
    padding       [0, 0.1] m              boundary-layer thickness of a body
    time          |t| <= 1e9 s            simulation time (setTime, restored states)
    gains         [0, 1e12]               PID gains in a restored state
    surfaces      kFriction <= 1e3; kStiffness inf or [1, 1e12] N/m (0 would leave a
                  compliant layer with neither spring nor damper: NaN); kDamping inf or
                  [0, 1e12] N s/m (set_surface, SimBody.setSurface)

Bounds apply per component.
"""
from __future__ import annotations

import numpy as np

from sim_node.engine import api as _engine_api

MAX_POSITION = 1e4          # [m]
MAX_JOINT_POSITION = _engine_api.MAX_POSITION_TARGET     # [rad or m] (1e4; the engine checks
                                                    # commands against these three)
MAX_LINEAR_SPEED = 1e3      # [m/s]
MAX_ANGULAR_SPEED = _engine_api.MAX_VELOCITY_TARGET      # [rad/s] (1e4; joint velocities too)
MAX_FORCE = 1e9             # [N]
MAX_TORQUE = _engine_api.MAX_FEEDFORWARD                 # [N m] (1e9; joint efforts too)
MAX_GRAVITY = 1e3           # [m/s^2]
MAX_PADDING = 0.1           # [m] (1 m layers around a hanging pendulum blew up at once)
MAX_TIME = 1e9              # [s] simulation time (a step of 1e-5 s still advances it)
MAX_GAIN = 1e12             # PID gains held in a restored state [N m/rad, N m s/rad, ...]
MAX_FRICTION = 1e3          # Coulomb friction coefficient
SURFACE_STIFFNESS = (1.0, 1e12)     # [N/m] a finite kStiffness (inf: rigid)
MAX_SURFACE_DAMPING = 1e12          # [N s/m] a finite kDamping (inf: rigid)
JOINT_LIMIT_TOLERANCE = 1e-3    # [rad or m] a configuration may exceed a URDF limit by this


def bounded(x, bound: float, what: str, unit: str, shape=None) -> np.ndarray:
    """x as a float array, every component finite with |x_i| <= bound; ValueError naming
    `what` otherwise (and when shape is given and differs)."""
    a = np.asarray(x, dtype=float)
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{what}: expected shape {tuple(shape)}, got {np.shape(x)}")
    if a.ndim == 1 and a.dot(a) <= bound * bound:
        return a        # the fast accept (commands every step): |a| <= bound, no NaN or inf
    finite = np.isfinite(a)
    if not finite.all():
        raise ValueError(f"{what}: {_value(a, ~finite)} is NaN or infinity; values must be "
                         f"finite")
    outside = np.abs(a) > bound
    if outside.any():
        raise ValueError(f"{what}: {_value(a, outside)} is beyond the bound |value| <= "
                         f"{bound:g} {unit}")
    return a


def _value(a: np.ndarray, mask: np.ndarray) -> str:
    if a.ndim == 0:
        return f"{float(a)!r}"
    k = int(np.argmax(mask.reshape(-1)))
    return f"component {k} = {float(a.reshape(-1)[k])!r}"


def position(x, what: str) -> np.ndarray:
    """A 3-vector position [m]."""
    return bounded(x, MAX_POSITION, what, "m", (3,))


def linear_velocity(x, what: str) -> np.ndarray:
    """A 3-vector linear velocity [m/s]."""
    return bounded(x, MAX_LINEAR_SPEED, what, "m/s", (3,))


def angular_velocity(x, what: str) -> np.ndarray:
    """A 3-vector angular velocity [rad/s]."""
    return bounded(x, MAX_ANGULAR_SPEED, what, "rad/s", (3,))


def force(x, what: str) -> np.ndarray:
    """A 3-vector force [N]."""
    return bounded(x, MAX_FORCE, what, "N", (3,))


def torque(x, what: str) -> np.ndarray:
    """A 3-vector torque [N m]."""
    return bounded(x, MAX_TORQUE, what, "N m", (3,))


def robot_config(robot, q, what: str) -> np.ndarray:
    """A robot's whole configuration q (nq): finite; a floating base's position within
    MAX_POSITION; every joint coordinate within MAX_JOINT_POSITION and within its URDF limits
    (+- JOINT_LIMIT_TOLERANCE) where it has finite ones."""
    nq = robot.model.nq
    q = np.asarray(q, dtype=float)
    if q.shape != (nq,):
        raise ValueError(f"{what}: expected {nq} numbers, got shape {np.shape(q)}")
    names = _q_names(robot)
    bad = ~np.isfinite(q)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{what}: {names[k]} is {float(q[k])!r} (NaN or infinity); values "
                         f"must be finite")
    if robot.isFloatingBase():
        bounded(q[0:3], MAX_POSITION, f"{what}: the base position", "m")
    lower, upper = robot.getJointLimits()
    start = 7 if robot.isFloatingBase() else 0
    for k in range(start, nq):
        if abs(q[k]) > MAX_JOINT_POSITION:
            raise ValueError(f"{what}: {names[k]} = {float(q[k])!r} is beyond the bound |q| <= "
                             f"{MAX_JOINT_POSITION:g} rad or m")
        if not (lower[k] - JOINT_LIMIT_TOLERANCE <= q[k] <= upper[k] + JOINT_LIMIT_TOLERANCE):
            raise ValueError(f"{what}: {names[k]} = {float(q[k])!r} is outside its limits "
                             f"[{lower[k]:g}, {upper[k]:g}]")
    return q


def robot_velocity(robot, v, what: str) -> np.ndarray:
    """A robot's whole velocity v (nv): a floating base's linear part within MAX_LINEAR_SPEED,
    every other entry (angular, joints) within MAX_ANGULAR_SPEED."""
    nv = robot.model.nv
    v = np.asarray(v, dtype=float)
    if v.shape != (nv,):
        raise ValueError(f"{what}: expected {nv} numbers, got shape {np.shape(v)}")
    bound = np.full(nv, MAX_ANGULAR_SPEED)
    if robot.isFloatingBase():
        bound[0:3] = MAX_LINEAR_SPEED
    names = _v_names(robot)
    bad = ~np.isfinite(v)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{what}: {names[k]} is {float(v[k])!r} (NaN or infinity); values "
                         f"must be finite")
    outside = np.abs(v) > bound
    if outside.any():
        k = int(np.argmax(outside))
        unit = "m/s" if bound[k] == MAX_LINEAR_SPEED else "rad/s (m/s for prismatic joints)"
        raise ValueError(f"{what}: {names[k]} = {float(v[k])!r} is beyond the bound |v| <= "
                         f"{bound[k]:g} {unit}")
    return v


def _q_names(robot) -> list:
    # a label per entry of q
    names = [""] * robot.model.nq
    if robot.isFloatingBase():
        names[0:7] = [f"base {c}" for c in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    for joint, k in robot.structure.joint_q_index.items():
        names[k] = f"joint '{joint}'"
    return [n or f"q[{k}]" for k, n in enumerate(names)]


def _v_names(robot) -> list:
    names = [""] * robot.model.nv
    if robot.isFloatingBase():
        names[0:6] = [f"base {c}" for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
    for joint, k in robot.structure.joint_v_index.items():
        names[k] = f"joint '{joint}'"
    return [n or f"v[{k}]" for k, n in enumerate(names)]


def surface(params, what: str):
    """ValueError unless SurfaceParameters are within the surface bounds above."""
    low, high = SURFACE_STIFFNESS
    k, c = params.kStiffness, params.kDamping
    if not params.kFriction <= MAX_FRICTION:
        raise ValueError(f"{what}: kFriction {params.kFriction!r} is beyond the bound "
                         f"{MAX_FRICTION:g}")
    if not (k == float("inf") or low <= k <= high):
        raise ValueError(f"{what}: kStiffness {k!r} must be inf (rigid) or within "
                         f"[{low:g}, {high:g}] N/m")
    if not (c == float("inf") or 0.0 <= c <= MAX_SURFACE_DAMPING):
        raise ValueError(f"{what}: kDamping {c!r} must be inf (rigid) or within "
                         f"[0, {MAX_SURFACE_DAMPING:g}] N s/m")
