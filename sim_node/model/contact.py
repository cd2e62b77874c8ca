"""Contact mechanics (seed 004, Klamp't's ``klampt.model.contact``): ContactPoint, Hold,
Stance, and the stability tests force_closure, com_equilibrium, support_polygon and
equilibrium_torques (also spelled forceClosure, comEquilibrium, supportPolygon,
equilibriumTorques).

A ``ContactPoint`` is a point contact: a world position, the unit normal and a friction
coefficient. The normal points into the body the contact belongs to — the direction of the
normal force that body receives — as in ``Simulator.getContacts(id1, id2)``, whose rows
[px, py, pz, nx, ny, nz, kFriction] are exactly ``ContactPoint.tolist()``.

The stability tests take contacts in any form Klamp't takes them: a ContactPoint, a Hold, a
Stance, a list (nested at will) of those, an (N, 7) array or list of 7-lists
[x, y, z, nx, ny, nz, kFriction], or a tuple (points (N, 3), normals (N, 3), kFriction scalar
or (N,)). Friction cones are polyhedral with 4 edges, as Klamp't's (sim_node.model.contact_lp).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from sim_node.math.rotation_input import as_klampt, as_matrix, as_rotation
from sim_node.model import contact_lp
from sim_node.model import equilibrium_torques as _torques
from sim_node.model import support_polygon as _polygon

UNIT_TOLERANCE = 1e-6   # |‖n‖ - 1| accepted for a unit normal


def _point(x, what: str) -> np.ndarray:
    a = np.array(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"ContactPoint: {what} must be 3 finite numbers, got {x!r}")
    return a


def _normal(n) -> np.ndarray:
    a = _point(n, "the normal n")
    if abs(float(np.linalg.norm(a)) - 1.0) > UNIT_TOLERANCE:
        raise ValueError(f"ContactPoint: the normal n must be a unit vector, got {n!r} "
                         f"(length {np.linalg.norm(a):.6g})")
    return a


def _friction(k) -> float:
    k = float(k)
    if not (math.isfinite(k) and k >= 0.0):
        raise ValueError(f"ContactPoint: kFriction must be a finite number >= 0, got {k}")
    return k


def _rigid_transform(args, what: str) -> tuple:
    """(R (3,3), t (3,)) from (xform,) with xform = (R, t) — Klamp't's se3 element — or (R, t);
    R a 3x3 matrix or Klamp't's column-major 9-list."""
    if len(args) == 1:
        try:
            R, t = args[0]
        except (TypeError, ValueError):
            raise ValueError(f"{what}: expected a rigid transform (R, t), got "
                             f"{args[0]!r}") from None
    elif len(args) == 2:
        R, t = args
    else:
        raise TypeError(f"{what}: takes (R, t) or one (R, t) pair, got {len(args)} arguments")
    return as_rotation(R, f"{what}: R"), _point(t, "the translation t")


class ContactPoint:
    """A point contact.

    Attributes:
        x: (3,) contact position in world coordinates [m].
        n: (3,) unit contact normal, pointing into the body the contact belongs to.
        kFriction: Coulomb friction coefficient (0: frictionless).
        object1, object2: the bodies in contact, if known (None otherwise).
    """

    def __init__(self, x=(0.0, 0.0, 0.0), n=(0.0, 0.0, 1.0), kFriction: float = 0.0):
        self.x = _point(x, "the position x")
        self.n = _normal(n)
        self.kFriction = _friction(kFriction)
        self.object1 = None
        self.object2 = None

    def tolist(self) -> list:
        """[x, y, z, nx, ny, nz, kFriction] as Python floats."""
        return [*map(float, self.x), *map(float, self.n), float(self.kFriction)]

    def fromlist(self, v):
        """Set from the 7 numbers [x, y, z, nx, ny, nz, kFriction] (a getContacts row).
        Invalid input raises ValueError and leaves the contact unchanged."""
        values = np.array(v, dtype=float).reshape(-1)
        if values.shape != (7,):
            raise ValueError(f"ContactPoint.fromlist: expected 7 numbers [x, y, z, nx, ny, nz, "
                             f"kFriction], got {np.shape(v)}")
        x, n, k = _point(values[0:3], "the position x"), _normal(values[3:6]), _friction(values[6])
        self.x, self.n, self.kFriction = x, n, k

    def reflect(self) -> "ContactPoint":
        """The same contact seen from the other body: normal negated, objects swapped."""
        p = ContactPoint(self.x, -self.n, self.kFriction)
        p.object1, p.object2 = self.object2, self.object1
        return p

    def transform(self, *args):
        """Move the contact by a rigid transform, in place: x <- R x + t, n <- R n. Takes
        Klamp't's ``transform(xform)`` with xform = (R, t), or ``transform(R, t)``; R a 3x3
        matrix or Klamp't's column-major 9-list, t [m]."""
        R, t = _rigid_transform(args, "ContactPoint.transform")
        self.x, self.n = R @ self.x + t, R @ self.n

    def __repr__(self):
        return (f"ContactPoint(x={self.x.tolist()!r}, n={self.n.tolist()!r}, "
                f"kFriction={self.kFriction!r})")


def _ik():
    # imported when a Hold needs an IK objective: the ik module (sim_node.model.ik) builds on
    # the robot model and has no use for contacts
    from sim_node.model import ik
    return ik


class Hold:
    """The contacts of one robot link against the environment, and the IK constraint that
    keeps the link on them (Klamp't's Hold).

    Attributes:
        link: the link index (int), or None while unset.
        ikConstraint: a sim_node.model.ik IKObjective, or None while unset.
        contacts: list of ContactPoint, in world coordinates.
    """

    def __init__(self):
        self.link = None
        self.ikConstraint = None
        self.contacts = []

    def setFixed(self, link, contacts):
        """Fix ``link`` (a RobotModelLink) at the world ``contacts`` (list of ContactPoint)
        from its current transform: ikConstraint = ik.objective(link, local=..., world=...)
        (1 contact: a point; 2: the points fix an axis; 3 or more: a fixed transform)."""
        from sim_node.model.robot import RobotModelLink
        if not isinstance(link, RobotModelLink):
            raise TypeError(f"Hold.setFixed: link must be a RobotModelLink, got "
                            f"{type(link).__name__}")
        contacts = list(contacts)
        if not contacts or not all(isinstance(c, ContactPoint) for c in contacts):
            raise ValueError("Hold.setFixed: contacts must be a non-empty list of ContactPoint")
        R, t = link.getTransform()
        local = [R.T @ (c.x - t) for c in contacts]
        world = [c.x.copy() for c in contacts]
        self.ikConstraint = _ik().objective(link, local=local, world=world)
        self.link = link.getIndex()
        self.contacts = contacts

    def setupFixedIKConstraint(self, localPos0, R):
        """ikConstraint: the link's point localPos0 [m, link frame] held at the first
        contact's position and the link's rotation fixed to R (3x3 or Klamp't's 9-list) —
        Klamp't's Hold::SetupFixedIKConstraint. Needs link and contacts set."""
        obj = self._new_objective("setupFixedIKConstraint", localPos0)
        obj.setFixedRotConstraint(as_klampt(as_matrix(R, "Hold.setupFixedIKConstraint: R")))
        self.ikConstraint = obj

    def setupPointIKConstraint(self, localPos0):
        """ikConstraint: the link's point localPos0 [m, link frame] held at the first
        contact's position, rotation free — Klamp't's Hold::SetupPointIKConstraint."""
        self.ikConstraint = self._new_objective("setupPointIKConstraint", localPos0)

    def _new_objective(self, what: str, localPos0):
        if self.link is None or not self.contacts:
            raise ValueError(f"Hold.{what}: set the hold's link (index) and contacts first")
        local = _point(localPos0, f"Hold.{what}: localPos0")
        obj = _ik().IKObjective()
        obj.setLinks(int(self.link), -1)
        obj.setFixedPosConstraint(local.tolist(), self.contacts[0].x.tolist())
        return obj

    def transform(self, *args):
        """Move the contacts and the IK constraint by a rigid transform, in place: Klamp't's
        ``transform(xform)`` with xform = (R, t), or ``transform(R, t)``."""
        R, t = _rigid_transform(args, "Hold.transform")
        for c in self.contacts:
            c.transform(R, t)
        if self.ikConstraint is not None:
            self.ikConstraint.transform(as_klampt(R), t.tolist())

    def save(self, path):
        """Write the hold in Klamp't's text format (begin hold ... end)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(write_hold(self))

    def load(self, path):
        """Read a hold in Klamp't's text format into this one."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        h = read_hold(text, where=str(path))
        self.link, self.ikConstraint, self.contacts = h.link, h.ikConstraint, h.contacts

    def __repr__(self):
        return f"Hold(link={self.link!r}, {len(self.contacts)} contacts)"


class Stance(dict):
    """All the contact constraints of a robot: a dict from link index to that link's Hold
    (Klamp't's C++ Stance; a Python Stance in Klamp't is a plain list of Holds, which every
    function here takes too)."""

    def __init__(self, holds=()):
        super().__init__()
        for h in holds:
            self.insert(h)

    def insert(self, hold: Hold):
        if not isinstance(hold, Hold) or hold.link is None:
            raise ValueError(f"Stance.insert: expected a Hold with its link set, got {hold!r}")
        self[int(hold.link)] = hold

    def remove(self, link) -> bool:
        """Remove the hold of ``link``; False when there is none."""
        return self.pop(int(link), None) is not None

    def isValid(self) -> bool:
        """Every hold is filed under its own link."""
        return all(k == h.link for k, h in self.items())

    def holds(self) -> list:
        return [self[k] for k in sorted(self)]

    def contacts(self) -> list:
        """Every hold's contacts, by increasing link."""
        return [c for h in self.holds() for c in h.contacts]

    def transform(self, *args):
        for h in self.values():
            h.transform(*args)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(write_stance(self))

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.clear()
        self.update(read_stance(text, where=str(path)))


# -- contact lists -------------------------------------------------------------------------

def _rows_of(item, path: str) -> list:
    if isinstance(item, ContactPoint):
        return [(item.tolist(), path)]
    if isinstance(item, Hold):
        return [(c.tolist(), f"{path}.contacts[{i}]") for i, c in enumerate(item.contacts)]
    if isinstance(item, Stance):
        return [row for k in sorted(item) for row in _rows_of(item[k], f"{path}[link {k}]")]
    if isinstance(item, dict):
        raise TypeError(f"{path}: a dict of holds must be a Stance")
    if isinstance(item, (str, bytes)):
        raise TypeError(f"{path}: expected contacts, got a string")
    if isinstance(item, np.ndarray) and item.dtype != object:
        if item.ndim == 1:
            return [(item.tolist(), path)]
        if item.ndim == 2:
            return [(r.tolist(), f"{path}[{i}]") for i, r in enumerate(item)]
        raise ValueError(f"{path}: a contact array must be (N, 7), got shape {item.shape}")
    try:
        elements = list(item)
    except TypeError:
        raise TypeError(f"{path}: expected a ContactPoint, Hold, Stance, 7-list or a list of "
                        f"those, got {type(item).__name__}") from None
    if elements and all(isinstance(v, numbers.Real) for v in elements):
        return [(elements, path)]
    return [row for i, v in enumerate(elements) for row in _rows_of(v, f"{path}[{i}]")]


def _points_normals_k(value):
    """(points, normals, k) -> rows, or None when value is not of that form."""
    if not (isinstance(value, tuple) and len(value) == 3):
        return None
    try:
        points = np.array(value[0], dtype=float)
        normals = np.array(value[1], dtype=float)
        k = np.array(value[2], dtype=float)
    except (TypeError, ValueError):
        return None
    if points.shape == (3,) and normals.shape == (3,):
        points, normals = points[None], normals[None]
    if points.ndim != 2 or points.shape[1:] != (3,) or normals.shape != points.shape:
        return None
    if k.ndim == 0:
        k = np.full(len(points), float(k))
    if k.shape != (len(points),):
        raise ValueError(f"contacts (points, normals, kFriction): kFriction must be one number "
                         f"or {len(points)}, got shape {k.shape}")
    return np.hstack([points, normals, k[:, None]])


def contact_array(contacts, what: str = "contacts") -> np.ndarray:
    """The (N, 7) array [x, y, z, nx, ny, nz, kFriction] of contacts given in any accepted
    form (module docstring), validated: finite numbers, unit normals, kFriction >= 0."""
    special = _points_normals_k(contacts)
    rows = ([(r.tolist(), f"{what}[{i}]") for i, r in enumerate(special)] if special is not None
            else _rows_of(contacts, what))
    out = np.zeros((len(rows), 7))
    for i, (row, where) in enumerate(rows):
        try:
            values = np.array(row, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: a contact is 7 numbers [x, y, z, nx, ny, nz, "
                             f"kFriction], got {row!r}") from None
        if values.shape != (7,):
            raise ValueError(f"{where}: a contact is 7 numbers [x, y, z, nx, ny, nz, "
                             f"kFriction], got {len(values.reshape(-1))} numbers")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{where}: every number of a contact must be finite, got "
                             f"{values.tolist()}")
        length = float(np.linalg.norm(values[3:6]))
        if abs(length - 1.0) > UNIT_TOLERANCE:
            raise ValueError(f"{where}: the normal must be a unit vector, got "
                             f"{values[3:6].tolist()} (length {length:.6g})")
        if values[6] < 0:
            raise ValueError(f"{where}: kFriction must be >= 0, got {values[6]}")
        out[i] = values
    return out


def _vector3(v, what: str) -> np.ndarray:
    try:
        a = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be 3 finite numbers, got {v!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be 3 finite numbers, got {v!r}")
    return a


# -- stability tests -----------------------------------------------------------------------

def set_friction_cone_approximation_edges(numEdges) -> None:
    """Klamp't's global number of edges of the polyhedral friction cones (klampt's robotsim;
    exported as sim_node.set_friction_cone_approximation_edges). Ours are fixed at Klamp't's
    default, contact_lp.DEFAULT_NUM_EDGES = 4: setting 4 is accepted, any other count is a
    ValueError rather than silently ignored."""
    if isinstance(numEdges, bool) or not isinstance(numEdges, numbers.Integral):
        raise TypeError(f"set_friction_cone_approximation_edges: numEdges must be an integer, "
                        f"got {type(numEdges).__name__}")
    if numEdges != contact_lp.DEFAULT_NUM_EDGES:
        raise ValueError(f"set_friction_cone_approximation_edges({numEdges}): sim_node's "
                         f"friction cones have {contact_lp.DEFAULT_NUM_EDGES} edges (Klamp't's "
                         f"default); other counts are not supported")


def force_closure(contactOrHoldList) -> bool:
    """True iff the contacts' friction cones can resist any wrench on the body (force
    closure). Exact for the polyhedral cones, whatever the frame (see the README for where
    Klamp't 0.10.1's test differs)."""
    return contact_lp.force_closure(contact_array(contactOrHoldList))


def com_equilibrium(contactOrHoldList, fext=(0.0, 0.0, -1.0), com=None):
    """Can forces in the contacts' friction cones balance the external force fext acting at
    the centre of mass com?

        fext + sum_i f_i = 0,   sum_i (p_i - com) x f_i = 0,   f_i in FC_i

    com None: True / False — whether any COM admits such forces. com given: the list of
    contact forces [[fx, fy, fz], ...] (those with the least total normal force), or None
    when there are none. No contacts: False / None."""
    rows = contact_array(contactOrHoldList)
    fext = _vector3(fext, "com_equilibrium: fext")
    if com is None:
        return contact_lp.any_com_equilibrium(rows, fext)
    forces = contact_lp.com_equilibrium_forces(rows, fext, _vector3(com, "com_equilibrium: com"))
    return None if forces is None else forces.tolist()


def support_polygon(contactOrHoldList) -> list:
    """The support polygon under gravity (0, 0, -1): half-planes [nx, ny, offset] with unit
    outward normals, a COM (x, y) being supported iff nx x + ny y <= offset for all of them.
    [[0, 0, -1]] when no COM is supported, [] when every COM is."""
    return _polygon.support_polygon(contact_array(contactOrHoldList))


def equilibrium_torques(robot, holdList, fext=(0.0, 0.0, -9.8), internalTorques=None,
                        norm=0):
    """Joint torques and contact forces holding ``robot`` (at its current configuration) in
    equilibrium: G(q; fext) + internalTorques = t + sum_i J_i^T f_i, f_i in FC_i, t = 0 on
    passive DOFs (torque limit 0), minimising the active torques scaled by min(1000, torque
    limit) in the l-inf (norm 0), l1 (norm 1) or l2 (norm 2) norm.

    holdList: Holds (or a Stance) whose contacts lie on their links; fext: gravity [m/s^2];
    internalTorques: nv numbers or None. Returns (t, f): t the nv joint torques (list), f one
    [fx, fy, fz] per contact in hold order; or None when no forces balance the robot."""
    from sim_node.model.robot import RobotModel
    if not isinstance(robot, RobotModel):
        raise TypeError(f"equilibrium_torques: robot must be a RobotModel, got "
                        f"{type(robot).__name__}")
    holds = holdList.holds() if isinstance(holdList, Stance) else list(holdList)
    links = []
    for i, h in enumerate(holds):
        if not isinstance(h, Hold):
            raise TypeError(f"equilibrium_torques: holdList[{i}] must be a Hold, got "
                            f"{type(h).__name__}")
        if h.link is None or not 0 <= int(h.link) < robot.numLinks():
            raise ValueError(f"equilibrium_torques: holdList[{i}].link must be a link index "
                             f"in [0, {robot.numLinks()}), got {h.link!r}")
        links += [int(h.link)] * len(h.contacts)
    rows = contact_array(holds, "holdList")
    fext = _vector3(fext, "equilibrium_torques: fext")
    nv = robot.model.nv
    if internalTorques is not None:
        tint = np.array(internalTorques, dtype=float).reshape(-1)
        if tint.shape != (nv,) or not np.all(np.isfinite(tint)):
            raise ValueError(f"equilibrium_torques: internalTorques must be {nv} finite "
                             f"numbers (one per DOF), got {np.shape(internalTorques)}")
    else:
        tint = None
    if norm not in (0, 1, 2):
        raise ValueError(f"equilibrium_torques: norm must be 0 (l-infinity), 1 or 2, got "
                         f"{norm!r}")
    result = _torques.equilibrium_torques(robot, rows, links, fext, tint, norm)
    if result is None:
        return None
    t, f = result
    return t.tolist(), f.tolist()


forceClosure = force_closure
comEquilibrium = com_equilibrium
supportPolygon = support_polygon
equilibriumTorques = equilibrium_torques


# -- Klamp't's text format for holds and stances ---------------------------------------------

def _vec(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def write_hold(h: Hold) -> str:
    """The hold in Klamp't's text format (C++ Hold operator<<):

        begin hold
        link = 3
        contacts = x y z  nx ny nz  k  \\
                   ...
        position = lx ly lz  \\
                   wx wy wz
        rotation = mx my mz          (fixed rotation, moment / rotation-vector form)
        axis = lx ly lz  \\            (or an axis constraint)
               wx wy wz
        end
    """
    if h.link is None or h.ikConstraint is None:
        raise ValueError("write_hold: the hold needs its link and ikConstraint set")
    obj = h.ikConstraint
    lines = ["begin hold", f"link = {int(h.link)}"]
    dest = obj.destLink()
    if dest is not None and dest >= 0:
        lines.append(f"destLink = {int(dest)}")
    rows = [f"{_vec(c.x)}\t\t{_vec(c.n)}\t\t{float(c.kFriction)!r}" for c in h.contacts]
    lines.append("contacts = " + "  \\\n           ".join(rows))
    local, world = obj.getPosition()
    lines.append(f"position = {_vec(local)}  \\\n           {_vec(world)}")
    if obj.numRotDims() == 3:
        from scipy.spatial.transform import Rotation
        moment = Rotation.from_matrix(as_matrix(obj.getRotation(), "ikConstraint")).as_rotvec()
        lines.append(f"rotation = {_vec(moment)}")
    elif obj.numRotDims() in (1, 2):     # an axis constraint
        axis_local, axis_world = obj.getRotationAxis()
        lines.append(f"axis = {_vec(axis_local)}  \\\n       {_vec(axis_world)}")
    lines.append("end")
    return "\n".join(lines) + "\n"


def _logical_lines(text: str) -> list:
    """(line number, text) of each line, a trailing backslash joining the next one."""
    out, pending, start = [], None, 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        joined = line[:-1] if line.endswith("\\") else line
        if pending is None:
            pending, start = joined, number
        else:
            pending += " " + joined
        if not line.endswith("\\"):
            if pending.strip():
                out.append((start, pending.strip()))
            pending = None
    if pending is not None and pending.strip():
        out.append((start, pending.strip()))
    return out


def _numbers(values, count, where) -> list:
    try:
        v = [float(x) for x in values]
    except ValueError:
        raise ValueError(f"{where}: expected numbers, got {' '.join(values)!r}") from None
    if (count is not None and len(v) != count) or not all(map(math.isfinite, v)):
        raise ValueError(f"{where}: expected {count} finite numbers, got {' '.join(values)!r}")
    return v


def _read_hold_lines(lines, where) -> Hold:
    """A hold from its logical lines, from 'begin hold' to 'end' inclusive."""
    from scipy.spatial.transform import Rotation
    h = Hold()
    position = rotation = axis = None
    dest = -1
    for number, line in lines[1:-1]:
        at = f"{where}:{number}"
        key, eq, rest = line.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"{at}: expected 'item = values', got {line!r}")
        items = rest.split()
        if key == "link":
            h.link = int(_numbers(items, 1, at)[0])
        elif key == "destLink":
            dest = int(_numbers(items, 1, at)[0])
        elif key == "contacts":
            values = _numbers(items, None, at)
            if len(values) % 7:
                raise ValueError(f"{at}: contacts are 7 numbers each, got {len(values)}")
            h.contacts = [ContactPoint(values[i:i + 3], values[i + 3:i + 6], values[i + 6])
                          for i in range(0, len(values), 7)]
        elif key == "position":
            position = _numbers(items, 6, at)
        elif key == "rotation":
            rotation = _numbers(items, 3, at)
        elif key == "axis":
            axis = _numbers(items, 6, at)
        else:
            raise ValueError(f"{at}: unknown hold item {key!r} (link, destLink, contacts, "
                             "position, rotation, axis)")
    if h.link is None or h.link < 0:
        raise ValueError(f"{where}: the hold has no valid 'link = index' line")
    if position is None:
        raise ValueError(f"{where}: the hold has no 'position = local world' line")
    obj = _ik().IKObjective()
    obj.setLinks(h.link, dest)
    obj.setFixedPosConstraint(position[0:3], position[3:6])
    if rotation is not None:
        obj.setFixedRotConstraint(as_klampt(Rotation.from_rotvec(rotation).as_matrix()))
    elif axis is not None:
        obj.setAxialRotConstraint(axis[0:3], axis[3:6])
    h.ikConstraint = obj
    return h


def read_hold(text: str, where: str = "<hold>") -> Hold:
    """A Hold from Klamp't's text format (write_hold); errors name where:line."""
    lines = _logical_lines(text)
    if not lines or lines[0][1] != "begin hold":
        raise ValueError(f"{where}: a hold starts with 'begin hold'")
    if lines[-1][1] != "end":
        raise ValueError(f"{where}:{lines[-1][0]}: a hold ends with 'end'")
    return _read_hold_lines(lines, where)


def write_stance(stance: Stance) -> str:
    """begin stance, each hold (by increasing link), end — Klamp't's Stance operator<<."""
    return "begin stance\n" + "".join(write_hold(h) for h in stance.holds()) + "end\n"


def read_stance(text: str, where: str = "<stance>") -> Stance:
    lines = _logical_lines(text)
    if not lines or lines[0][1] != "begin stance":
        raise ValueError(f"{where}: a stance starts with 'begin stance'")
    stance, i = Stance(), 1
    while i < len(lines) and lines[i][1] != "end":
        if lines[i][1] != "begin hold":
            raise ValueError(f"{where}:{lines[i][0]}: expected 'begin hold' or 'end', got "
                             f"{lines[i][1]!r}")
        j = i + 1
        while j < len(lines) and lines[j][1] != "end":
            j += 1
        if j == len(lines):
            raise ValueError(f"{where}:{lines[i][0]}: the hold has no 'end'")
        stance.insert(_read_hold_lines(lines[i:j + 1], where))
        i = j + 1
    if i >= len(lines):
        raise ValueError(f"{where}: the stance has no closing 'end'")
    return stance
