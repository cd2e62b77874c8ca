"""PyBullet's user constraints: createConstraint, changeConstraint, removeConstraint,
getConstraintInfo, getConstraintState, getNumConstraints, getConstraintUniqueId.

Each PyBullet constraint is a sim_node.model.constraints.Constraint on the client's world (it
survives every rebuild of the simulation; removing a body removes its constraints), solved by
the engine's user-constraint rows (engine/pipeline/user_constraints.pyx). Frames follow
PyBullet: parentFramePosition / Orientation on the parent link's centre-of-mass (inertial)
frame, childFramePosition / Orientation on the child's, or world coordinates when
childBodyUniqueId is -1; jointAxis (JOINT_PRISMATIC's slide axis) in the parent frame's axes
(bullet3's btMultiBodySliderConstraint). Unique ids start at 1 and are never reused within a connection. Joint types: JOINT_FIXED,
JOINT_POINT2POINT, JOINT_GEAR, JOINT_PRISMATIC (PyBullet fails on the others too).
Differences from PyBullet (README "Constraints (decisions)"): erp 0 (PyBullet's "not set")
means the default 0.2; bad input (NaN, unknown ids, a body constrained to itself, a gear on a
joint without one scalar DOF) raises `error` where PyBullet may accept it; removeConstraint of
an unknown id raises where PyBullet only prints.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from sim_node.model.constraints import Constraint
from sim_node.pybullet.client import get_client
from sim_node.pybullet.errors import error

__all__ = ["createConstraint", "changeConstraint", "removeConstraint", "getConstraintInfo",
           "getConstraintState", "getNumConstraints", "getConstraintUniqueId"]

# PyBullet's joint type codes (its constants; constants.py holds them all)
JOINT_PRISMATIC, JOINT_FIXED, JOINT_POINT2POINT, JOINT_GEAR = 1, 4, 5, 6
_KIND = {JOINT_FIXED: "fixed", JOINT_POINT2POINT: "point2point", JOINT_GEAR: "gear",
         JOINT_PRISMATIC: "prismatic"}
DEFAULT_MAX_FORCE = 500.0       # PyBullet's default maxAppliedForce [N or N m]
MAX_COORDINATE = 1e6            # |frame position| bound [m]


class _Table:
    """A client's constraints: PyBullet unique id -> [world uid, info list (getConstraintInfo's
    15 fields)], in creation order."""

    def __init__(self, world):
        self.world = world
        self.next_id = 1
        self.entries: dict = {}

    def live(self) -> dict:
        # constraints whose bodies were removed went with them (WorldModel.remove)
        alive = {c.uid for c in self.world.constraints()}
        self.entries = {k: v for k, v in self.entries.items() if v[0] in alive}
        return self.entries


_tables: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _table(client) -> _Table:
    table = _tables.get(client)
    if table is None or table.world is not client.world:     # new, or after resetSimulation
        table = _tables[client] = _Table(client.world)
    return table


def _entry(client, uid, fn):
    if isinstance(uid, bool) or not isinstance(uid, (int, np.integer)):
        raise error(f"{fn}: userConstraintUniqueId must be an int, got {type(uid).__name__}")
    entries = _table(client).live()
    if int(uid) not in entries:
        raise error(f"{fn}: no constraint with unique id {uid}; valid: "
                    f"{sorted(entries) if entries else 'none (createConstraint makes them)'}")
    return entries[int(uid)]


def _int(value, fn, name) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise error(f"{fn}: {name} must be an int, got {value!r}")
    return int(value)


def _vector(value, n, fn, name, bound=MAX_COORDINATE) -> tuple:
    try:
        v = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        raise error(f"{fn}: {name} must be a sequence of {n} numbers, got {value!r}") from None
    if len(v) != n or not all(math.isfinite(x) and abs(x) <= bound for x in v):
        raise error(f"{fn}: {name} must be {n} finite numbers (|x| <= {bound:g}), got {value!r}")
    return v


def _quaternion(value, fn, name) -> tuple:
    q = _vector(value, 4, fn, name)
    norm = math.sqrt(sum(x * x for x in q))
    if not norm > 1e-9:
        raise error(f"{fn}: {name} must be a nonzero quaternion (x, y, z, w), got {value!r}")
    return q


def _matrix(q) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _link(client, uid, link, fn, what) -> tuple:
    """(Body, PyBullet link index) of a body unique id and link index (-1: the base)."""
    uid = _int(uid, fn, f"{what}BodyUniqueId")
    try:
        body = client.body(uid)
    except error as e:
        raise error(f"{fn}: {what}BodyUniqueId: {e}") from None
    return body, body.check_link(link, fn, f"{what}LinkIndex")


def _in_link(body_link, position, orientation) -> tuple:
    """A frame given in a link's inertial frame (PyBullet's link frame), in its URDF link frame
    (R, p); in the world when body_link is None."""
    R = _matrix(orientation)
    p = np.asarray(position, dtype=float)
    if body_link is None:
        return R, p
    body, link = body_link
    p_LC, R_LC = body.inertial_frames[body.robot_link(link)]
    return R_LC @ R, p_LC + R_LC @ p


def createConstraint(parentBodyUniqueId, parentLinkIndex, childBodyUniqueId, childLinkIndex,
                     jointType, jointAxis, parentFramePosition, childFramePosition,
                     parentFrameOrientation=(0.0, 0.0, 0.0, 1.0),
                     childFrameOrientation=(0.0, 0.0, 0.0, 1.0), physicsClientId=0):
    """Join a frame on a parent body's link to a frame on a child body's link (or on the world:
    childBodyUniqueId -1, child frame in world coordinates). Returns its unique id (>= 1)."""
    fn = "createConstraint"
    client = get_client(physicsClientId)
    joint_type = _int(jointType, fn, "jointType")
    if joint_type not in _KIND:
        raise error(f"{fn}: jointType {joint_type} is not supported; valid: JOINT_FIXED (4), "
                    f"JOINT_POINT2POINT (5), JOINT_GEAR (6), JOINT_PRISMATIC (1)")
    axis = _vector(jointAxis, 3, fn, "jointAxis")
    parent_position = _vector(parentFramePosition, 3, fn, "parentFramePosition")
    child_position = _vector(childFramePosition, 3, fn, "childFramePosition")
    parent_orientation = _quaternion(parentFrameOrientation, fn, "parentFrameOrientation")
    child_orientation = _quaternion(childFrameOrientation, fn, "childFrameOrientation")
    parent = _link(client, parentBodyUniqueId, parentLinkIndex, fn, "parent")
    child_uid = _int(childBodyUniqueId, fn, "childBodyUniqueId")
    child_link = _int(childLinkIndex, fn, "childLinkIndex")
    child = None if child_uid == -1 else _link(client, child_uid, child_link, fn, "child")
    if child is not None and child[0] is parent[0] and child[1] == parent[1]:
        raise error(f"{fn}: the parent and the child are the same link (body {child_uid}, "
                    f"link {child_link})")
    kind = _KIND[joint_type]
    if kind == "prismatic" and not np.linalg.norm(axis) > 1e-9:
        raise error(f"{fn}: JOINT_PRISMATIC needs a nonzero jointAxis")
    if kind == "gear" and child is None:
        raise error(f"{fn}: JOINT_GEAR joins two links' joints; childBodyUniqueId is -1")
    constraint = Constraint(
        kind=kind, parent=parent[0].link(parent[1]),
        child=None if child is None else child[0].link(child[1]),
        parent_frame=_in_link(parent, parent_position, parent_orientation),
        child_frame=_in_link(child, child_position, child_orientation),
        axis=np.asarray(axis) if np.linalg.norm(axis) > 1e-9 else np.array([0.0, 0.0, 1.0]),
        max_force=DEFAULT_MAX_FORCE)
    try:
        uid = client.sim.addConstraint(constraint)
    except ValueError as e:
        raise error(f"{fn}: {e}") from None
    table = _table(client)
    pb_id = table.next_id
    table.next_id += 1
    table.entries[pb_id] = [uid, [int(parentBodyUniqueId), int(parentLinkIndex), child_uid,
                                  child_link, joint_type, axis, parent_position, child_position,
                                  parent_orientation, child_orientation, DEFAULT_MAX_FORCE,
                                  0.0, 0, 0.0, 0.0]]
    return pb_id


def changeConstraint(userConstraintUniqueId, jointChildPivot=None,
                     jointChildFrameOrientation=None, maxForce=None, gearRatio=None,
                     gearAuxLink=None, relativePositionTarget=None, erp=None,
                     physicsClientId=0):
    """Change a constraint's child frame (pivot, orientation), force bound, gear ratio and
    auxiliary link, relative position target or erp; the others keep their values."""
    fn = "changeConstraint"
    client = get_client(physicsClientId)
    uid, info = _entry(client, userConstraintUniqueId, fn)
    constraint = client.sim.getConstraint(uid)
    child = None if info[2] == -1 else _link(client, info[2], info[3], fn, "child")
    fields, updates = {}, {}
    pivot = info[7] if jointChildPivot is None else _vector(jointChildPivot, 3, fn,
                                                            "jointChildPivot")
    orientation = info[9] if jointChildFrameOrientation is None else _quaternion(
        jointChildFrameOrientation, fn, "jointChildFrameOrientation")
    if jointChildPivot is not None or jointChildFrameOrientation is not None:
        fields["child_frame"] = _in_link(child, pivot, orientation)
        updates[7], updates[9] = pivot, orientation
    if maxForce is not None:
        force = float(_vector([maxForce], 1, fn, "maxForce", bound=math.inf)[0])
        if force < 0:
            raise error(f"{fn}: maxForce must be >= 0, got {maxForce!r}")
        fields["max_force"], updates[10] = force, force
    if gearRatio is not None:
        ratio = _vector([gearRatio], 1, fn, "gearRatio")[0]
        fields["gear_ratio"], updates[11] = ratio, ratio
    if gearAuxLink is not None:
        aux = _int(gearAuxLink, fn, "gearAuxLink")
        if constraint.kind == "gear":
            if aux >= 0:
                body, link = _link(client, info[0], aux, fn, "gearAuxLink")
                fields["gear_aux"] = body.link(link)
            else:
                fields["gear_aux"] = None
        updates[12] = aux
    if relativePositionTarget is not None:
        target = _vector([relativePositionTarget], 1, fn, "relativePositionTarget")[0]
        fields["relative_position_target"], updates[13] = target, target
    if erp is not None:
        value = _vector([erp], 1, fn, "erp")[0]
        if not 0.0 <= value <= 1.0:
            raise error(f"{fn}: erp must be in [0, 1], got {erp!r}")
        # 0 is PyBullet's "not set": the default
        fields["erp"], updates[14] = (value if value > 0 else 0.2), value
    if fields:
        try:
            client.sim.changeConstraint(uid, **fields)
        except ValueError as e:
            raise error(f"{fn}: {e}") from None
    for k, v in updates.items():
        info[k] = v


def removeConstraint(userConstraintUniqueId, physicsClientId=0):
    """Remove a constraint (its unique id is not reused)."""
    client = get_client(physicsClientId)
    uid, _ = _entry(client, userConstraintUniqueId, "removeConstraint")
    client.sim.removeConstraint(uid)
    del _table(client).entries[int(userConstraintUniqueId)]


def getConstraintInfo(constraintUniqueId, physicsClientId=0) -> tuple:
    """(parentBodyUniqueId, parentJointIndex, childBodyUniqueId, childLinkIndex,
    constraintType, jointAxis, jointPivotInParent, jointPivotInChild,
    jointFrameOrientationParent, jointFrameOrientationChild, maxAppliedForce, gearRatio,
    gearAuxLink, relativePositionTarget, erp) as PyBullet."""
    _, info = _entry(get_client(physicsClientId), constraintUniqueId, "getConstraintInfo")
    return tuple(info)


def getConstraintState(constraintUniqueId, physicsClientId=0) -> tuple:
    """The force of each constraint row over the last step with PyBullet's signs: JOINT_FIXED
    6 (force x y z [N] in world axes, torque [N m] along the parent frame's axes, on the
    parent), JOINT_POINT2POINT 3 and JOINT_PRISMATIC 5 (force across the axis (2), torque
    (3)) on the child (bullet3's point-to-point and slider rows report the opposite sign of
    its fixed rows), JOINT_GEAR 1."""
    client = get_client(physicsClientId)
    uid, info = _entry(client, constraintUniqueId, "getConstraintState")
    sign = -1.0 if info[4] in (JOINT_POINT2POINT, JOINT_PRISMATIC) else 1.0
    return tuple(sign * float(f) for f in client.sim.getConstraintForces(uid))


def getNumConstraints(physicsClientId=0) -> int:
    """The number of user constraints."""
    return len(_table(get_client(physicsClientId)).live())


def getConstraintUniqueId(serialIndex, physicsClientId=0) -> int:
    """The unique id of the serialIndex-th constraint (creation order); -1 when out of range,
    as PyBullet."""
    entries = _table(get_client(physicsClientId)).live()
    index = _int(serialIndex, "getConstraintUniqueId", "serialIndex")
    ids = list(entries)
    return ids[index] if 0 <= index < len(ids) else -1

