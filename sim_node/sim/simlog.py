"""Logging a simulation to CSV and playing it back (seed 000, Klamp't's ``klampt.sim.simlog``).

State file: one row per ``SimLogger.saveStep()`` (call it after each ``sim.simulate``), columns
(header row when ``saveheader``)::

    time
    per robot <r>:   <r>_q[<c>] (q), <r>_dq[<c>] (v), then per joint coordinate <j>:
                     <r>_qcmd[<j>] (commanded position), and per joint DOF <d>:
                     <r>_dqcmd[<d>] (commanded velocity) and <r>_torque[<d>] (actuator
                     torque of the last substep [N m or N])
                     <c>: base_px base_py base_pz base_qx base_qy base_qz base_qw (q) or
                     base_vx base_vy base_vz base_wx base_wy base_wz (v) for a floating base
                     (velocities in the base frame, DESIGN.md §3), then the joints' <j> (q) or
                     <d> (v): RobotModel.getJointCoordinateNames() (a scalar joint's name;
                     '<joint>.qx' ... for the entries of spherical, planar, floating joints)
    per rigid object <o>: <o>_x <o>_y <o>_z (object frame origin [m]), <o>_qx <o>_qy <o>_qz
                     <o>_qw (orientation quaternion), <o>_wx <o>_wy <o>_wz (angular velocity
                     [rad/s]), <o>_vx <o>_vy <o>_vz (centre-of-mass velocity [m/s]), world axes
    extra[0] ...     the values passed to saveStep(extra)

Contact file: one row per pair of simulated bodies that touched during the last simulate() call::

    time, id1, id2, name1, name2, num_contacts, fx, fy, fz, tx, ty, tz, mean_fx, mean_fy,
    mean_fz, in_contact, had_penetration

with id1 < id2 (world IDs; links welded into one simulated body are reported by the body's
representative link), the contact force on id1 from id2 at the last substep [N], its torque
about id1's centre of mass [N m], the force averaged over the simulate() call [N] (world axes),
and flags 0/1 (touching at the end; real geometries overlapped at some substep).

Floats are written with Python's shortest round-trip repr, so reading them back is exact.
"""
from __future__ import annotations

import csv
from contextlib import ExitStack
from itertools import combinations, product
from typing import NamedTuple

import numpy as np
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.model.robot import RobotModel, RobotModelLink

FLOATING_Q = ("base_px", "base_py", "base_pz", "base_qx", "base_qy", "base_qz", "base_qw")
FLOATING_V = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
OBJECT_ITEMS = ("x", "y", "z", "qx", "qy", "qz", "qw", "wx", "wy", "wz", "vx", "vy", "vz")
CONTACT_HEADER = ("time", "id1", "id2", "name1", "name2", "num_contacts", "fx", "fy", "fz",
                  "tx", "ty", "tz", "mean_fx", "mean_fy", "mean_fz", "in_contact",
                  "had_penetration")


def state_columns(world) -> list:
    """The state file's column names for `world` (without the extra columns)."""
    columns = ["time"]
    for r in range(world.numRobots()):
        robot = world.robot(r)
        name, (joints_q, joints_v) = robot.getName(), robot.getJointCoordinateNames()
        floating = robot.isFloatingBase()
        q_names = [*(FLOATING_Q if floating else ()), *joints_q]
        v_names = [*(FLOATING_V if floating else ()), *joints_v]
        columns += [f"{name}_q[{c}]" for c in q_names]
        columns += [f"{name}_dq[{c}]" for c in v_names]
        columns += [f"{name}_qcmd[{j}]" for j in joints_q]
        for item in ("dqcmd", "torque"):
            columns += [f"{name}_{item}[{d}]" for d in joints_v]
    for i in range(world.numRigidObjects()):
        name = world.rigidObject(i).getName()
        columns += [f"{name}_{item}" for item in OBJECT_ITEMS]
    return columns


def _xyzw(R) -> np.ndarray:
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


def _body_ids(sim) -> dict:
    # world ID -> the simulated body it belongs to (links welded together share one)
    return sim.layout.body_of_id


def _representative(sim, id_: int) -> int:
    # the world ID a simulated body is reported by
    return sim.layout.id_of_body[_body_ids(sim)[id_]]


class SimLogger:
    """A CSV logger of a Simulator: robot, object and (optionally) contact states per step.

    Args:
        sim: the Simulator.
        state_fn: path of the state CSV (None: no state file).
        contact_fn: path of the contact CSV (None: no contact file).
        colliding: 'all', or a list of entities (robots, links, rigid objects, terrains), world
            IDs or entity names whose pairs are logged. Enables the contact feedback it needs.
        saveheader: write a header row with the column names.
    """

    def __init__(self, sim, state_fn, contact_fn=None, colliding="all", saveheader=True):
        if state_fn is None and contact_fn is None:
            raise ValueError("SimLogger: give a state file, a contact file or both")
        self.sim = sim
        groups = self._groups(colliding) if contact_fn is not None else {}
        with ExitStack() as opened:         # both files open, or neither stays open
            self._state_file, self._contact_file = (
                None if fn is None else opened.enter_context(open(fn, "w", newline=""))
                for fn in (state_fn, contact_fn))
            opened.pop_all()
        self._state_writer = csv.writer(self._state_file) if self._state_file else None
        self._contact_writer = csv.writer(self._contact_file) if self._contact_file else None
        self._header_pending = bool(saveheader) and self._state_writer is not None
        self._nextra = None
        # contacts are looked up per pair of groups first (a robot's ID stands for all of its
        # links), then per pair of bodies only in the groups that touched
        keys = sorted(groups)
        self._members = groups
        self._group_pairs = [(g, h) for k, g in enumerate(keys) for h in keys[k:]
                             if g != h or len(groups[g]) > 1]
        if contact_fn is not None:
            if colliding == "all":
                sim.enableContactFeedbackAll()
            else:
                for g, h in self._group_pairs:
                    sim.enableContactFeedback(g, h)
            if saveheader:
                self._contact_writer.writerow(CONTACT_HEADER)

    def _groups(self, colliding) -> dict:
        """Group ID (a robot's for its links) -> sorted world IDs of the simulated bodies whose
        contacts are logged (each body by its representative ID)."""
        world = self.sim.getWorld()
        if isinstance(colliding, str):
            if colliding != "all":
                raise ValueError(f"SimLogger: colliding must be 'all' or a list of entities, "
                                 f"IDs or names, got {colliding!r}")
            ids = list(_body_ids(self.sim))
        else:
            names = {world.getName(i): i for i in range(world.numIDs())}
            ids = []
            for item in colliding:
                ids += self._ids_of(item, names, world)
        groups = {}
        for rep in sorted({_representative(self.sim, i) for i in ids}):
            entity = world.getEntity(rep)
            key = entity.getRobot().getID() if isinstance(entity, RobotModelLink) else rep
            groups.setdefault(key, []).append(rep)
        return groups

    @staticmethod
    def _ids_of(item, names: dict, world) -> list:
        if isinstance(item, str):
            if item not in names:
                raise ValueError(f"SimLogger: colliding names an unknown entity {item!r}; "
                                 f"entities: {sorted(names)}")
            item = names[item]
        if hasattr(item, "getID"):
            item = item.getID()
        if not isinstance(item, (int, np.integer)) or not 0 <= item < world.numIDs():
            raise ValueError(f"SimLogger: colliding entries must be entities, names or world IDs "
                             f"0..{world.numIDs() - 1}, got {item!r}")
        entity = world.getEntity(int(item))
        if isinstance(entity, RobotModel):
            return [link.getID() for link in entity.links()]
        return [int(item)]

    def saveStep(self, extra=()):
        """Append the current state (and the contacts of the last simulate() call) to the
        files. extra: values appended to the state row (the same number every step)."""
        extra = [float(x) for x in extra]
        if self._nextra is None:
            self._nextra = len(extra)
        elif len(extra) != self._nextra:
            raise ValueError(f"SimLogger.saveStep: {len(extra)} extra values, the log has "
                             f"{self._nextra} columns for them")
        if self._state_writer is not None:
            if self._header_pending:
                self._write_header()
            self._state_writer.writerow(self._state_row() + extra)
        if self._contact_writer is not None:
            for row in sorted(self._contact_rows(), key=lambda row: (row[1], row[2])):
                self._contact_writer.writerow(row)

    def _contact_rows(self):
        sim = self.sim
        world, t = sim.getWorld(), sim.getTime()
        for g, h in self._group_pairs:
            if not sim.hadContact(g, h):
                continue
            members = (combinations(self._members[g], 2) if g == h
                       else product(self._members[g], self._members[h]))
            for first, second in members:
                a, b = min(first, second), max(first, second)
                if not sim.hadContact(a, b):
                    continue
                row = [t, a, b, world.getName(a), world.getName(b), len(sim.getContacts(a, b))]
                row += sim.contactForce(a, b).tolist() + sim.contactTorque(a, b).tolist()
                row += sim.meanContactForce(a, b).tolist()
                row += [int(sim.inContact(a, b)), int(sim.hadPenetration(a, b))]
                yield row

    def _write_header(self):
        names = state_columns(self.sim.getWorld())
        names += [f"extra[{k}]" for k in range(self._nextra or 0)]
        self._state_writer.writerow(names)
        self._header_pending = False

    def _state_row(self) -> list:
        sim = self.sim
        world = sim.getWorld()
        row = [sim.getTime()]
        for r in range(world.numRobots()):
            q, v = sim.getActualConfig(r), sim.getActualVelocity(r)
            controller = sim.controller(r)
            # the joints are the last entries of q and v (after a floating base's)
            floating = world.robot(r).isFloatingBase()
            joints_q, joints_v = slice(7 if floating else 0, None), slice(6 if floating else 0, None)
            row += q.tolist() + v.tolist()
            row += controller.getCommandedConfig()[joints_q].tolist()
            row += controller.getCommandedVelocity()[joints_v].tolist()
            row += sim.getActualTorque(r)[joints_v].tolist()
        for i in range(world.numRigidObjects()):
            body = sim.body(world.rigidObject(i))
            R, t = body.getObjectTransform()
            w, v = body.getVelocity()
            row += t.tolist() + _xyzw(R).tolist() + w.tolist() + v.tolist()
        return row

    def close(self):
        """Write a pending header and close the files."""
        if self._header_pending:
            self._write_header()
        for f in (self._state_file, self._contact_file):
            if f is not None:
                f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ContactRecord(NamedTuple):
    """One row of a contact log (see the module docstring)."""
    time: float
    id1: int
    id2: int
    name1: str
    name2: str
    num_contacts: int
    force: np.ndarray           # (3,) on id1 from id2 at the last substep [N]
    torque: np.ndarray          # (3,) about id1's centre of mass [N m]
    mean_force: np.ndarray      # (3,) averaged over the simulate() call [N]
    in_contact: bool
    had_penetration: bool


def _rows(path) -> list:
    with open(path, newline="") as f:
        return [row for row in csv.reader(f) if row]


class SimLogPlayback:
    """Plays a SimLogger state log (and contact log) back through a Simulator.

    Args:
        sim: a Simulator of the world that was logged (same robots and rigid objects).
        state_fn: the state CSV.
        contact_fn: the contact CSV (optional; see ``contacts``).

    Attributes:
        times: (N,) logged times [s]; extra_names, extra (N, k): the extra columns.
    """

    def __init__(self, sim, state_fn, contact_fn=None):
        self.sim = sim
        world = sim.getWorld()
        columns = state_columns(world)
        rows = _rows(state_fn)
        header = rows[0] if rows and rows[0][:1] == ["time"] else None
        if header is not None:
            rows = rows[1:]
            if header[:len(columns)] != columns:
                diff = next((k for k, (a, b) in enumerate(zip(header, columns)) if a != b),
                            min(len(header), len(columns)))
                found = header[diff] if diff < len(header) else "(end of header)"
                raise ValueError(f"SimLogPlayback: {state_fn} does not log this world: column "
                                 f"{diff} is {found!r}, expected {columns[diff]!r}")
        if not rows:
            raise ValueError(f"SimLogPlayback: {state_fn} has no logged steps")
        try:
            data = np.array([[float(x) for x in row] for row in rows])
        except ValueError as e:
            raise ValueError(f"SimLogPlayback: {state_fn}: {e}") from None
        if data.ndim != 2 or data.shape[1] < len(columns):
            raise ValueError(f"SimLogPlayback: {state_fn}: every row needs at least "
                             f"{len(columns)} values (this world's state)")
        self._data = data
        self.times = data[:, 0].copy()
        self.extra_names = (header[len(columns):] if header is not None else
                            [f"extra[{k}]" for k in range(data.shape[1] - len(columns))])
        self.extra = data[:, len(columns):].copy()
        self._contacts = self._read_contacts(contact_fn) if contact_fn is not None else None
        self._index = -1

    def _read_contacts(self, path) -> dict:
        world = self.sim.getWorld()
        rows = _rows(path)
        if rows and tuple(rows[0]) == CONTACT_HEADER:
            rows = rows[1:]
        by_time = {}
        for k, row in enumerate(rows):
            try:
                t, id1, id2 = float(row[0]), int(row[1]), int(row[2])
                values = [float(x) for x in row[6:15]]
                record = ContactRecord(t, id1, id2, row[3], row[4], int(row[5]),
                                       np.array(values[0:3]), np.array(values[3:6]),
                                       np.array(values[6:9]), row[15] == "1", row[16] == "1")
            except (ValueError, IndexError):
                raise ValueError(f"SimLogPlayback: {path} row {k + 1} is not a contact record "
                                 f"({', '.join(CONTACT_HEADER)})") from None
            for id_, name in ((id1, record.name1), (id2, record.name2)):
                if not 0 <= id_ < world.numIDs() or world.getName(id_) != name:
                    raise ValueError(f"SimLogPlayback: {path} row {k + 1}: ID {id_} "
                                     f"'{name}' is not in this simulator's world")
            by_time.setdefault(t, []).append(record)
        return by_time

    def updateSim(self, time=-1, timestep=-1) -> int:
        """Put the simulator into a logged state: robot configurations and velocities, object
        transforms and velocities, and the simulation time; then ``sim.updateWorld()``.

        time >= 0: the last row logged at or before `time` [s] (the first row if none);
        else timestep >= 0: that row (the last one if beyond); else the row after the
        previous call's (the first row on the first call, the last one stays). Returns the
        row index. Actuator state (PID integrators, commands) is not restored: to continue a
        run exactly, use Simulator.getState / setState.
        """
        n = len(self.times)
        if time >= 0:
            index = max(int(np.searchsorted(self.times, time, side="right")) - 1, 0)
        elif timestep >= 0:
            index = min(int(timestep), n - 1)
        else:
            index = min(self._index + 1, n - 1)
        self._apply(self._data[index])
        self._index = index
        return index

    def _apply(self, row):
        sim = self.sim
        world = sim.getWorld()
        k = 1
        for r in range(world.numRobots()):
            robot = world.robot(r)
            nq, nv = len(robot.getConfig()), len(robot.getVelocity())
            joints_q, joints_v = robot.getJointCoordinateNames()
            sim.setActualConfig(r, row[k:k + nq])
            sim.setActualVelocity(r, row[k + nq:k + nq + nv])
            k += nq + nv + len(joints_q) + 2 * len(joints_v)
        for i in range(world.numRigidObjects()):
            body = sim.body(world.rigidObject(i))
            x, y, z, qx, qy, qz, qw, wx, wy, wz, vx, vy, vz = row[k:k + len(OBJECT_ITEMS)]
            body.setObjectTransform(quat2mat([qw, qx, qy, qz]), [x, y, z])
            body.setVelocity([wx, wy, wz], [vx, vy, vz])
            k += len(OBJECT_ITEMS)
        sim.setTime(float(row[0]))
        sim.updateWorld()

    def contacts(self, timestep=-1) -> list:
        """The ContactRecords logged with a row (-1: the row of the last updateSim)."""
        if self._contacts is None:
            raise ValueError("SimLogPlayback.contacts: no contact file was given")
        index = self._index if timestep < 0 else int(timestep)
        if not 0 <= index < len(self.times):
            raise IndexError(f"SimLogPlayback.contacts: no row {index} (rows 0.."
                             f"{len(self.times) - 1}; call updateSim first)")
        return list(self._contacts.get(float(self.times[index]), []))
