"""PyBullet's dynamics and kinematics queries on the sim_node engine: inverse dynamics (RNEA),
Jacobians, the mass matrix (CRBA) and inverse kinematics (sim_node.model.ik's damped least
squares).

PyBullet's conventions, measured on 3.2.7 and reproduced here:
- Joint space = the movable joints in PyBullet's joint order, one entry each (the base and
  fixed joints are skipped); objPositions etc. have that length.
- Everything is computed with the base's inertial (centre-of-mass) frame at the world origin,
  unrotated, whatever the body's simulated pose: Jacobians are in base axes and the gravity of
  setGravity acts along base axes (a tilted fixed base keeps its "world" gravity).
- A floating base adds 6 leading columns / rows: the base's angular velocity, then its linear
  velocity at the base's centre of mass (base axes). calculateInverseDynamics refuses floating
  bases, as PyBullet does.
- calculateJacobian's localPosition is measured from the link's URDF frame origin (the joint
  pivot) along its inertial frame's axes (measured: PyBullet's documentation says "around its
  center of mass", but its inverse-dynamics tree, which the Jacobian comes from, puts body
  frames at the pivots with Bullet's link orientation); the answer is (linearJacobian,
  angularJacobian), each 3 tuples of dof floats.
- calculateInverseKinematics targets the end effector's URDF link frame, in the world (in the
  base's centre-of-mass frame when currentPositions is given) and returns every movable joint's
  position (a tuple), the base untouched.
A link's centre-of-mass frame is the client's Body.inertial_frames entry (the URDF
<inertial><origin> turned onto the principal axes, as Bullet's importer makes it).
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.engine.api import Data, crba, kinematics, rnea
from sim_node.model import ik as _ik
from sim_node.pybullet.client import get_client
from sim_node.pybullet.errors import error
from sim_node.pybullet.queries import body_of, inertial_frame, integer, link_of, number, vec

__all__ = ["calculateInverseDynamics", "calculateJacobian", "calculateMassMatrix",
           "calculateInverseKinematics", "calculateInverseKinematics2"]

MAX_IK_ITERATIONS = 100_000
_BOUND = 1e6                # |positions|, |velocities|, |accelerations| accepted


def _slice_indices(s, n: int) -> np.ndarray:
    if isinstance(s, slice):
        return np.arange(n)[s]
    return np.asarray(list(s), dtype=np.int64)


class _Joints:
    """A body's movable joints in PyBullet's order: their q and v indices in the RobotModel's
    vectors, and the frame conventions above."""

    def __init__(self, client, body, fn: str):
        robot = body.entity
        self.client, self.body, self.robot, self.fn = client, body, robot, fn
        self.model = robot.model
        nq, nv = self.model.nq, self.model.nv
        self.q_index, self.v_index, self.joints = [], [], []
        for j in range(body.num_joints):
            qs, vs = body.joint_coords(j)
            qi, vi = _slice_indices(qs, nq), _slice_indices(vs, nv)
            if len(qi) == 0:
                continue
            if len(qi) != 1 or len(vi) != 1:
                raise error(f"{fn}: joint {j} of body {body.uid} is a multi-DOF (spherical or "
                            "planar) joint: not supported by sim_node in PyBullet's joint "
                            "space (scalar joints only)")
            self.q_index.append(int(qi[0]))
            self.v_index.append(int(vi[0]))
            self.joints.append(j)
        self.n = len(self.joints)
        self.floating = bool(robot.isFloatingBase())
        self.root = body.link(-1).getIndex()
        self.base_p, self.base_R = inertial_frame(body, -1)

    def vector(self, values, name: str) -> np.ndarray:
        return vec(values, self.n, self.fn, name, _BOUND)

    def config(self, positions) -> np.ndarray:
        """The RobotModel q with the movable joints at `positions` and the base's centre of
        mass at the origin, unrotated (a floating base; a fixed one stays where it is)."""
        q = np.asarray(self.robot.getConfig(), dtype=float).copy()
        if self.floating:
            # the root link frame = the inverse of the base's inertial frame in it
            q[0:3] = -self.base_R.T @ self.base_p
            q[3:7] = _quaternion(self.base_R.T)
        q[self.q_index] = positions
        return q

    def base_rotation(self, data, q) -> np.ndarray:
        """World rotation of the base's inertial frame at q (identity for a floating base at
        config())."""
        R, _ = kinematics.frames(self.model, data, q)
        return R[self.root] @ self.base_R

    def velocity_map(self, data, q) -> np.ndarray:
        """S (nv x dofs): the RobotModel's v = S v_pybullet at q, v_pybullet = (base angular,
        base linear at its centre of mass (floating bases), joint velocities)."""
        nv = self.model.nv
        k = 6 if self.floating else 0
        S = np.zeros((nv, k + self.n))
        for c, vi in enumerate(self.v_index):
            S[vi, k + c] = 1.0
        if self.floating:
            # our base DOFs by the root link's Jacobian at its origin: J0 x = [w; v_origin],
            # v_origin = v_com + w x (origin - com)
            J0 = kinematics.jacobian(self.model, data, q, self.root, (0.0, 0.0, 0.0))[:, 0:6]
            R, p = kinematics.frames(self.model, data, q)
            r = p[self.root] - (R[self.root] @ self.base_p + p[self.root])
            A = np.eye(6)
            A[3:6, 0:3] = -_skew(r)
            S[0:6, 0:6] = np.linalg.solve(J0, A)
        return S


def _quaternion(R) -> np.ndarray:
    """(x, y, z, w) of a rotation matrix (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        return np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                         (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * math.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = np.zeros(4)
    q[i] = 0.25 * s
    q[j] = (R[j, i] + R[i, j]) / s
    q[k] = (R[k, i] + R[i, k]) / s
    q[3] = (R[k, j] - R[j, k]) / s
    return q


def _skew(r) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _rows(M: np.ndarray) -> tuple:
    return tuple(tuple(float(x) for x in row) for row in M)


def _gravity(client) -> np.ndarray:
    return np.asarray(client.gravity, dtype=float).reshape(3)


def _legacy_body(bodyUniqueId, bodyIndex, fn: str):
    """PyBullet takes the body as bodyUniqueId or (its legacy name) bodyIndex."""
    if bodyIndex is not None:
        if bodyUniqueId is not None:
            raise error(f"{fn}: give the body as bodyUniqueId or bodyIndex, not both")
        return bodyIndex
    if bodyUniqueId is None:
        raise error(f"{fn}: bodyUniqueId is required")
    return bodyUniqueId


def _required(fn: str, **values):
    missing = [k for k, v in values.items() if v is None]
    if missing:
        raise error(f"{fn}: {', '.join(missing)} required")


def calculateInverseDynamics(bodyUniqueId=None, objPositions=None, objVelocities=None,
                             objAccelerations=None, physicsClientId=0, flags=0,
                             bodyIndex=None):
    """The joint forces [N m or N] that give the movable joints the accelerations
    objAccelerations at objPositions / objVelocities under the client's gravity (along base
    axes, as PyBullet): tau = M qdd + C + G, a tuple of one float per movable joint. Fixed
    bases only (PyBullet refuses floating ones too); joint damping is not included. flags
    (PyBullet's choice of its inverse-dynamics library) is checked and not used."""
    fn = "calculateInverseDynamics"
    uid = _legacy_body(bodyUniqueId, bodyIndex, fn)
    _required(fn, objPositions=objPositions, objVelocities=objVelocities,
              objAccelerations=objAccelerations)
    integer(flags, fn, "flags")
    client = get_client(physicsClientId)
    joints = _Joints(client, body_of(client, uid, fn), fn)
    if joints.floating:
        raise error(f"{fn}: body {joints.body.uid} has a floating base; inverse dynamics takes "
                    "fixed-base bodies only (as PyBullet 3.2.7)")
    if joints.n == 0:
        raise error(f"{fn}: body {joints.body.uid} has no movable joints")
    q = joints.config(joints.vector(objPositions, "objPositions"))
    qd_pb = joints.vector(objVelocities, "objVelocities")
    qdd_pb = joints.vector(objAccelerations, "objAccelerations")
    data = Data(joints.model)
    S = joints.velocity_map(data, q)
    R = joints.base_rotation(data, q)
    tau = rnea.inverse_dynamics(joints.model, data, q, S @ qd_pb, S @ qdd_pb,
                                R @ _gravity(client))
    return tuple(float(x) for x in S.T @ tau)


def calculateJacobian(bodyUniqueId, linkIndex, localPosition, objPositions, objVelocities,
                      objAccelerations, physicsClientId=0):
    """(linearJacobian, angularJacobian) of the point localPosition [m] of a link (from its
    URDF frame origin along its inertial axes, as PyBullet computes it) at objPositions: each
    3 rows of dofs floats, base axes; dofs = the movable joints, after 6 base columns
    (angular, then linear) for a floating base. objVelocities and objAccelerations are
    checked and unused (PyBullet's signature)."""
    fn = "calculateJacobian"
    client = get_client(physicsClientId)
    body = body_of(client, bodyUniqueId, fn)
    joints = _Joints(client, body, fn)
    link = link_of(body, linkIndex, fn)
    point = vec(localPosition, 3, fn, "localPosition", _BOUND)
    q = joints.config(joints.vector(objPositions, "objPositions"))
    joints.vector(objVelocities, "objVelocities")
    joints.vector(objAccelerations, "objAccelerations")
    if joints.n + (6 if joints.floating else 0) == 0:
        raise error(f"{fn}: body {body.uid} has no degrees of freedom")
    data = Data(joints.model)
    S = joints.velocity_map(data, q)
    R = joints.base_rotation(data, q)
    _, R_com = inertial_frame(body, link)
    J = kinematics.jacobian(joints.model, data, q, body.link(link).getIndex(),
                            R_com @ point).copy()
    angular = R.T @ J[0:3] @ S
    linear = R.T @ J[3:6] @ S
    return _rows(linear), _rows(angular)


def calculateMassMatrix(bodyUniqueId, objPositions, physicsClientId=0, flags=0):
    """The joint-space mass matrix at objPositions: dofs tuples of dofs floats [kg, kg m,
    kg m^2]; dofs = the movable joints, after 6 base rows (angular, linear at the base's centre
    of mass) for a floating base. flags is checked and not used, as calculateInverseDynamics'."""
    fn = "calculateMassMatrix"
    integer(flags, fn, "flags")
    client = get_client(physicsClientId)
    joints = _Joints(client, body_of(client, bodyUniqueId, fn), fn)
    if joints.n + (6 if joints.floating else 0) == 0:
        raise error(f"{fn}: body {joints.body.uid} has no degrees of freedom")
    q = joints.config(joints.vector(objPositions, "objPositions"))
    data = Data(joints.model)
    S = joints.velocity_map(data, q)
    M = crba.mass_matrix(joints.model, data, q)
    return _rows(S.T @ M @ S)


# -- inverse kinematics ------------------------------------------------------------------------
def _optional(values, joints, name: str):
    if values is None:
        return None
    return joints.vector(values, name)


def _length(values, fn: str, name: str) -> int:
    try:
        return len(values)
    except TypeError:
        raise error(f"{fn}: {name} must be a list of numbers, got "
                    f"{type(values).__name__}") from None


def _null_space(joints, fn: str, lowerLimits, upperLimits, jointRanges, restPoses):
    """(lower, upper, rest), each a vector of the movable joints' values, or all None.
    PyBullet uses its null space only when all four lists are given, each with one value per
    movable joint, and otherwise ignores all four without a word (loadpanda.py passes 7 values
    for the panda's 9 joints): the same rule here, so a script solves the same problem."""
    given = {"lowerLimits": lowerLimits, "upperLimits": upperLimits,
             "jointRanges": jointRanges, "restPoses": restPoses}
    lengths = [None if v is None else _length(v, fn, k) for k, v in given.items()]
    if any(n != joints.n for n in lengths):
        return None, None, None
    lower, upper, _, rest = (joints.vector(v, k) for k, v in given.items())
    return lower, upper, rest


def _solve_ik(fn, client, body, links, positions, orientation, lowerLimits, upperLimits,
              jointRanges, restPoses, jointDamping, solver, currentPositions, maxNumIterations,
              residualThreshold) -> tuple:
    joints = _Joints(client, body, fn)
    if joints.n == 0:
        raise error(f"{fn}: body {body.uid} has no movable joints")
    iterations = integer(maxNumIterations, fn, "maxNumIterations")
    if not 0 <= iterations <= MAX_IK_ITERATIONS:
        raise error(f"{fn}: maxNumIterations {iterations} must be in [0, {MAX_IK_ITERATIONS}]")
    threshold = number(residualThreshold, fn, "residualThreshold")
    if threshold < 0:
        raise error(f"{fn}: residualThreshold {threshold} must be >= 0")
    if integer(solver, fn, "solver") not in (0, 1):
        raise error(f"{fn}: solver must be IK_DLS (0) or IK_SDLS (1), got {solver}")
    lower, upper, rest = _null_space(joints, fn, lowerLimits, upperLimits, jointRanges,
                                     restPoses)
    # our solver damps on its own; PyBullet ignores a list of the wrong length (with a warning)
    if jointDamping is not None and _length(jointDamping, fn, "jointDamping") == joints.n:
        joints.vector(jointDamping, "jointDamping")
    current = _optional(currentPositions, joints, "currentPositions")

    robot = joints.robot
    q_start = np.asarray(client.sim.getActualConfig(robot), dtype=float)
    if current is not None:
        q_start[joints.q_index] = current
        # PyBullet: with currentPositions the targets are in the base's centre-of-mass frame
        R_base, p_base = _base_com_frame(client, body)
        positions = [R_base @ p + p_base for p in positions]
        if orientation is not None:
            orientation = R_base @ orientation
    lo, hi = (np.asarray(x, dtype=float).copy() for x in robot.getJointLimits())
    if lower is not None:
        lo[joints.q_index] = lower
    if upper is not None:
        hi[joints.q_index] = upper
    if np.any(lo[joints.q_index] > hi[joints.q_index]):
        raise error(f"{fn}: lowerLimits must not exceed upperLimits")

    saved = robot.getConfig()
    try:
        robot.setConfig(q_start)
        s = _ik.IKSolver(robot)
        for link, target in zip(links, positions):
            ee = body.link(link)
            if orientation is not None:
                s.add(_ik.objective(ee, R=orientation, t=target))
            else:
                s.add(_ik.objective(ee, local=[0.0, 0.0, 0.0], world=target.tolist()))
        s.setActiveDofs(joints.v_index)
        s.setJointLimits(lo, hi)
        if rest is not None:
            bias = q_start.copy()
            bias[joints.q_index] = rest
            s.setBiasConfig(bias)
        s.setMaxIters(iterations)
        # our stopping test bounds each residual entry: 1/sqrt(3) keeps |position error|
        # within residualThreshold
        s.setTolerance(threshold / math.sqrt(3.0))
        s.solve()
        q = robot.getConfig()
    except (ValueError, TypeError, IndexError, KeyError) as e:
        raise error(f"{fn}: {e}") from None
    finally:
        robot.setConfig(saved)
    return tuple(float(q[i]) for i in joints.q_index)


def _base_com_frame(client, body):
    Rs, ts = client.sim.getLinkTransforms(body.entity)
    i = body.link(-1).getIndex()
    p, R = inertial_frame(body, -1)
    return Rs[i] @ R, ts[i] + Rs[i] @ p


def _rotation(orientation, fn: str) -> np.ndarray:
    x, y, z, w = vec(orientation, 4, fn, "targetOrientation", 1e6)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not norm > 1e-9:
        raise error(f"{fn}: targetOrientation must be a non-zero quaternion (x, y, z, w)")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _end_effector(body, link, fn: str, name: str) -> int:
    link = integer(link, fn, name)
    if not 0 <= link < body.num_joints:
        raise error(f"{fn}: {name} {link} of body {body.uid} is out of range: valid are 0 .. "
                    f"{body.num_joints - 1}")
    return link


def calculateInverseKinematics(bodyUniqueId=None, endEffectorLinkIndex=None,
                               targetPosition=None, targetOrientation=None, lowerLimits=None,
                               upperLimits=None, jointRanges=None, restPoses=None,
                               jointDamping=None, solver=0, currentPositions=None,
                               maxNumIterations=20, residualThreshold=1e-4, physicsClientId=0,
                               bodyIndex=None):
    """Joint positions (a tuple, one per movable joint, PyBullet's order) that bring the end
    effector's link frame to targetPosition [m] (and targetOrientation (x, y, z, w) when
    given), in the world (in the base's centre-of-mass frame when currentPositions is given),
    starting from the simulated joint positions (or currentPositions). sim_node's damped least
    squares within the URDF joint limits. As PyBullet's null space, lowerLimits, upperLimits,
    jointRanges and restPoses count only when all four are given with one value per movable
    joint (otherwise all four are ignored): then lowerLimits / upperLimits replace the joint
    limits and the solution is pulled towards restPoses; jointRanges, jointDamping and solver
    are checked and not used. Stops when |position error| <= residualThreshold or after maxNumIterations; on failure the best
    configuration found is returned, as PyBullet returns its last."""
    fn = "calculateInverseKinematics"
    uid = _legacy_body(bodyUniqueId, bodyIndex, fn)
    _required(fn, endEffectorLinkIndex=endEffectorLinkIndex, targetPosition=targetPosition)
    client = get_client(physicsClientId)
    body = body_of(client, uid, fn)
    link = _end_effector(body, endEffectorLinkIndex, fn, "endEffectorLinkIndex")
    target = vec(targetPosition, 3, fn, "targetPosition", 1e6)
    R = None if targetOrientation is None else _rotation(targetOrientation, fn)
    return _solve_ik(fn, client, body, [link], [target], R, lowerLimits, upperLimits,
                     jointRanges, restPoses, jointDamping, solver, currentPositions,
                     maxNumIterations, residualThreshold)


def calculateInverseKinematics2(bodyUniqueId, endEffectorLinkIndices, targetPositions,
                                lowerLimits=None, upperLimits=None, jointRanges=None,
                                restPoses=None, jointDamping=None, solver=0,
                                currentPositions=None, maxNumIterations=20,
                                residualThreshold=1e-4, physicsClientId=0):
    """calculateInverseKinematics for several end effectors at once (positions only, as
    PyBullet): endEffectorLinkIndices and targetPositions of the same length."""
    fn = "calculateInverseKinematics2"
    client = get_client(physicsClientId)
    body = body_of(client, bodyUniqueId, fn)
    try:
        links = list(endEffectorLinkIndices)
        targets = list(targetPositions)
    except TypeError:
        raise error(f"{fn}: endEffectorLinkIndices and targetPositions must be lists") from None
    if not links or len(links) != len(targets):
        raise error(f"{fn}: endEffectorLinkIndices ({len(links)}) and targetPositions "
                    f"({len(targets)}) must be non-empty and of the same length")
    links = [_end_effector(body, l, fn, "endEffectorLinkIndices") for l in links]
    if len(set(links)) != len(links):
        raise error(f"{fn}: endEffectorLinkIndices {links} repeat a link")
    targets = [vec(t, 3, fn, "targetPositions", 1e6) for t in targets]
    return _solve_ik(fn, client, body, links, targets, None, lowerLimits, upperLimits,
                     jointRanges, restPoses, jointDamping, solver, currentPositions,
                     maxNumIterations, residualThreshold)
