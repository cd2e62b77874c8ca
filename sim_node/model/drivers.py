"""RobotModelDriver: Klamp't's drivers (actuators) of a RobotModel, and the conversions between
configurations and driver values.

Klamp't makes one driver per actuated URDF joint; we do the same for every scalar movable joint
(revolute, continuous, prismatic), in Klamp't's order: that of their child links in Klamp't's
link order (klampt_link_order; for a chain, q order). As in Klamp't 0.10.1:
  * a driver is named after its joint's child link (``panda_link1``, not ``panda_joint1``);
    ``RobotModel.driver(name)`` also accepts the joint's name;
  * a joint that others mimic (URDF <mimic>) gives an "affine" driver whose affected links are
    its own child link then the mimicking joints' child links, with
    ``getAffineCoeffs() = (scales, offsets)``: link k's joint value = scale_k * value + offset_k
    (1, 0 for the master); every other driver is "normal" with one affected link;
  * limits are (min, max) pairs: the joint's position limits, +-its velocity, acceleration and
    effort limits.
A floating base, and spherical, planar and floating joints, have no driver (Klamp't's floating
base has none either). Link indices are ours (URDF links depth first, RobotModel.link(i)); Klamp't
numbers a floating base's five virtual links first, so compare affected links by name.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim_node.model.builder import SCALAR_TYPES


@dataclass(frozen=True)
class DriverSpec:
    """One driver of a robot structure (built once per robot)."""
    name: str                # the child link's name (Klamp't's)
    joint: str               # the URDF joint it actuates
    type: str                # "normal" or "affine"
    links: tuple             # affected link indices: the joint's child link, then the mimics'
    scales: tuple            # per affected link: joint value = scale * driver value + offset
    offsets: tuple
    q_index: int             # the joint's entry in q
    v_index: int             # and in v


def klampt_link_order(structure) -> list:
    """Our link indices in the order Klamp't gives a URDF robot's links: depth first from the
    root, the children of a link ordered by their joints' names (urdfdom keeps joints in a
    std::map, and Klamp't's converter walks its tree)."""
    children = {}
    for i in range(1, len(structure.link_names)):
        children.setdefault(structure.link_parent[i], []).append(i)
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(sorted(children.get(i, []), key=lambda c: structure.link_joint[c],
                            reverse=True))
    return order


def driver_specs(structure) -> list:
    """The drivers of a RobotStructure, in Klamp't's order (module docstring)."""
    child_link = {joint: i for i, joint in enumerate(structure.link_joint) if joint}
    mimics = {}
    for joint, (master, multiplier, offset) in structure.mimic_joints.items():
        mimics.setdefault(master, []).append((joint, multiplier, offset))
    specs = []
    order = klampt_link_order(structure)
    joints = [structure.link_joint[i] for i in order]
    for joint in joints:
        if joint not in structure.joint_type or structure.joint_type[joint] not in SCALAR_TYPES:
            continue
        followers = mimics.get(joint, [])
        links = (child_link[joint],) + tuple(child_link[j] for j, _, _ in followers)
        specs.append(DriverSpec(
            name=structure.link_names[child_link[joint]], joint=joint,
            type="affine" if followers else "normal", links=links,
            scales=(1.0,) + tuple(float(m) for _, m, _ in followers),
            offsets=(0.0,) + tuple(float(o) for _, _, o in followers),
            q_index=structure.joint_q_index[joint], v_index=structure.joint_v_index[joint]))
    return specs


class RobotModelDriver:
    """A driver of a RobotModel (Klamp't's RobotModelDriver); get one from
    ``robot.driver(index_or_name)``. Values are in the joint's units [rad or m]."""

    def __init__(self, robot, index: int, spec: DriverSpec):
        self._robot = robot
        self._index = index
        self._spec = spec

    def getName(self) -> str:
        return self._spec.name

    def robot(self):
        return self._robot

    def getIndex(self) -> int:
        return self._index

    def getJointName(self) -> str:
        """The URDF joint it actuates (ours; Klamp't names drivers after links only)."""
        return self._spec.joint

    def getType(self) -> str:
        """"normal" or "affine" (a joint that others mimic)."""
        return self._spec.type

    def getAffectedLink(self) -> int:
        """The index of the joint's child link (Klamp't: the single affected link of a
        "normal" driver; for an "affine" one, its first)."""
        return self._spec.links[0]

    def getAffectedLinks(self) -> list:
        return list(self._spec.links)

    def getAffineCoeffs(self):
        """(scales, offsets), one per affected link, for "affine" drivers; ([], []) for
        "normal" ones, as Klamp't."""
        if self._spec.type != "affine":
            return [], []
        return list(self._spec.scales), list(self._spec.offsets)

    def getValue(self) -> float:
        return float(self._robot.getConfig()[self._spec.q_index])

    def setValue(self, value: float):
        """Set the robot's configuration entry of this driver (mimicking joints follow)."""
        q = self._robot.getConfig()
        q[self._spec.q_index] = _finite(value, f"driver '{self._spec.name}' value")
        self._robot.setConfig(q)

    def getVelocity(self) -> float:
        return float(self._robot.getVelocity()[self._spec.v_index])

    def setVelocity(self, value: float):
        v = self._robot.getVelocity()
        v[self._spec.v_index] = _finite(value, f"driver '{self._spec.name}' velocity")
        self._robot.setVelocity(v)

    def getLimits(self):
        """[qmin, qmax] of the joint (-inf, inf for a continuous joint)."""
        lower, upper = self._robot.getJointLimits()
        i = self._spec.q_index
        return [float(lower[i]), float(upper[i])]

    def getVelocityLimits(self):
        v = float(self._robot.getVelocityLimits()[self._spec.v_index])
        return [-v, v]

    def getAccelerationLimits(self):
        a = float(self._robot.getAccelerationLimits()[self._spec.v_index])
        return [-a, a]

    def getTorqueLimits(self):
        t = float(self._robot.getTorqueLimits()[self._spec.v_index])
        return [-t, t]

    name = property(getName)
    type = property(getType)
    affectedLink = property(getAffectedLink)
    affectedLinks = property(getAffectedLinks)
    value = property(getValue, setValue)
    velocity = property(getVelocity, setVelocity)

    def __repr__(self):
        return (f"RobotModelDriver('{self._robot.getName()}', '{self._spec.name}', "
                f"{self._spec.type})")


def _finite(value, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not np.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x}")
    return x


def _floats(x, what: str) -> np.ndarray:
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected a vector of numbers, got {str(x)[:80]}") from None


def driver_values(specs, x, n: int, what: str, velocity: bool) -> np.ndarray:
    """The driver entries (numDrivers,) of a configuration (velocity=False, x of length nq) or
    velocity (x of length nv)."""
    a = _floats(x, what)
    if a.shape != (n,):
        raise ValueError(f"{what}: expected {n} values, got shape {np.shape(x)}")
    return np.array([a[s.v_index if velocity else s.q_index] for s in specs], dtype=float)


def from_driver_values(specs, values, base, what: str, velocity: bool) -> np.ndarray:
    """`base` (a full q or v) with the drivers' entries replaced by `values` (numDrivers,)."""
    d = _floats(values, what)
    if d.shape != (len(specs),):
        raise ValueError(f"{what}: expected {len(specs)} driver values, got shape "
                         f"{np.shape(values)}")
    if not np.all(np.isfinite(d)):
        raise ValueError(f"{what}: driver values must be finite")
    out = np.array(base, dtype=float)
    for s, value in zip(specs, d):
        out[s.v_index if velocity else s.q_index] = value
    return out
