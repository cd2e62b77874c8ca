"""saveState / restoreState / removeState in memory, saveBullet to a file of our own.

A saved state is the simulator's complete state (Simulator.getState: time, joint positions and
velocities, actuators, contact warm starts) and the bodies' motor settings: restoring it makes
the simulation continue bit for bit as from the moment it was saved. It restores into the
same bodies only (PyBullet's rule too); a state of other bodies is refused with an error.

saveWorld writes a Python script that rebuilds the world as PyBullet's does (connect, one
loadURDF per body, joint states, gravity), with more of the state: fixed bases, scaling and
flags, joint and base velocities, the time step; exact floats (repr). The script imports
sim_node.pybullet (change one line to run it on PyBullet). Bodies not loaded from URDF files
(createMultiBody, loadSDF, loadMJCF) are listed in comments, not rebuilt.

saveBullet writes that state to a file in sim_node's own format (NOT Bullet's .bullet format:
PyBullet cannot read it, nor can we read PyBullet's); restoreState(fileName=...) reads it back
and refuses any file that is not one.
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np

from sim_node.pybullet.client import get_client, xyzw
from sim_node.pybullet.control import motors
from sim_node.pybullet.errors import error

__all__ = ["saveState", "restoreState", "removeState", "saveBullet", "saveWorld"]

FILE_MAGIC = b"SIM_NODE PYBULLET STATE\n"
FILE_VERSION = 1


class SavedState:
    """One saveState: which bodies, their motor tables, the simulator's state bytes."""

    def __init__(self, bodies: list, motor_states: dict, sim_state: bytes):
        self.bodies = bodies            # [(uid, name bytes, num_joints)] in uid order
        self.motor_states = motor_states  # uid -> Motors.copy_state()
        self.sim_state = sim_state


def _capture(client) -> SavedState:
    bodies = [(b.uid, b.name, b.num_joints) for b in client.bodies.values()]
    return SavedState(bodies, {b.uid: motors(b).copy_state() for b in client.bodies.values()},
                      client.sim.getState())


def _restore(client, state: SavedState, where: str):
    have = [(b.uid, b.name, b.num_joints) for b in client.bodies.values()]
    if have != state.bodies:
        raise error(f"restoreState: {where} was saved with bodies "
                    f"{[u for u, _, _ in state.bodies]}, the client has {[u for u, _, _ in have]}"
                    " (a state restores into the bodies it was saved with)")
    try:
        client.sim.setState(state.sim_state)
    except ValueError as e:
        raise error(f"restoreState: {where}: {e}") from None
    for uid, body in client.bodies.items():
        motors(body).set_state(state.motor_states[uid])


def saveState(physicsClientId=0) -> int:
    """Save the state in memory; its id (0, 1, ...)."""
    client = get_client(physicsClientId)
    sid = client.__dict__.get("_next_state_id", 0)
    client.states[sid] = _capture(client)
    client._next_state_id = sid + 1
    return sid


def restoreState(stateId=-1, fileName="", physicsClientId=0):
    """Restore a saveState id, or a file of saveBullet (fileName)."""
    client = get_client(physicsClientId)
    if fileName:
        _restore(client, _read_file(fileName), f"'{fileName}'")
        return
    try:
        sid = int(stateId)
    except (TypeError, ValueError, OverflowError):
        raise error(f"restoreState: stateId must be an integer, got {stateId!r}") from None
    if sid not in client.states:
        raise error(f"restoreState: no saved state {sid} (saved: {sorted(client.states)}); "
                    "give a stateId of saveState or a fileName of saveBullet")
    _restore(client, client.states[sid], f"state {sid}")


def removeState(stateUniqueId, physicsClientId=0):
    client = get_client(physicsClientId)
    try:
        sid = int(stateUniqueId)
    except (TypeError, ValueError, OverflowError):
        raise error(f"removeState: stateUniqueId must be an integer, got "
                    f"{stateUniqueId!r}") from None
    if sid not in client.states:
        raise error(f"removeState: no saved state {sid} (saved: {sorted(client.states)})")
    del client.states[sid]


def saveBullet(bulletFileName, physicsClientId=0):
    """Write the state to a file in sim_node's format (module docstring)."""
    client = get_client(physicsClientId)
    state = _capture(client)
    header = {"version": FILE_VERSION,
              "bodies": [[uid, name.decode("latin-1"), n] for uid, name, n in state.bodies],
              "motors": {str(uid): _jsonable(s) for uid, s in state.motor_states.items()}}
    text = json.dumps(header).encode()
    try:
        with open(os.fspath(bulletFileName), "wb") as f:
            f.write(FILE_MAGIC + struct.pack("<Q", len(text)) + text + state.sim_state)
    except (OSError, TypeError) as e:
        raise error(f"saveBullet: cannot write '{bulletFileName}': {e}") from None


def _jsonable(value):
    """A motor table (numbers, arrays, tuples, dicts with int keys, None) as JSON data that
    _from_json turns back into equal values (floats exactly: JSON keeps Python's repr)."""
    if isinstance(value, np.ndarray):
        return {"nd": str(value.dtype), "v": value.tolist()}
    if isinstance(value, tuple):
        return {"t": [_jsonable(x) for x in value]}
    if isinstance(value, list):
        return {"l": [_jsonable(x) for x in value]}
    if isinstance(value, dict):
        return {"d": [[_jsonable(k), _jsonable(v)] for k, v in value.items()]}
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value


def _from_json(data):
    if isinstance(data, dict):
        if "nd" in data:
            return np.array(data["v"], dtype=data["nd"])
        if "t" in data:
            return tuple(_from_json(x) for x in data["t"])
        if "l" in data:
            return [_from_json(x) for x in data["l"]]
        return {_from_json(k): _from_json(v) for k, v in data["d"]}
    return data


def _read_file(file_name) -> SavedState:
    try:
        with open(os.fspath(file_name), "rb") as f:
            data = f.read()
    except (OSError, TypeError) as e:
        raise error(f"restoreState: cannot read '{file_name}': {e}") from None
    if not data.startswith(FILE_MAGIC):
        raise error(f"restoreState: '{file_name}' is not a state file of sim_node's saveBullet "
                    "(Bullet's own .bullet files cannot be read by sim_node)")
    try:
        start = len(FILE_MAGIC)
        (size,) = struct.unpack_from("<Q", data, start)
        header = json.loads(data[start + 8:start + 8 + size].decode())
        if header.get("version") != FILE_VERSION:
            raise ValueError(f"version {header.get('version')!r}, expected {FILE_VERSION}")
        bodies = [(int(uid), name.encode("latin-1"), int(n)) for uid, name, n in header["bodies"]]
        motor_states = {int(uid): _from_json(s) for uid, s in header["motors"].items()}
        sim_state = data[start + 8 + size:]
    except (struct.error, UnicodeError, ValueError, KeyError, TypeError, AttributeError,
            RecursionError) as e:
        raise error(f"restoreState: '{file_name}' is a damaged sim_node state file ({e})") \
            from None
    return SavedState(bodies, motor_states, sim_state)


def saveWorld(worldFileName, physicsClientId=0):
    """Write a Python script that rebuilds this client's world (module docstring)."""
    from sim_node.pybullet.bodies import (getBaseVelocity, getJointInfo, getJointStateMultiDof)

    client = get_client(physicsClientId)
    cid = client.id
    lines = ["import sim_node.pybullet as p   # or: import pybullet as p",
             "cin = p.connect(p.SHARED_MEMORY)",
             "if cin < 0:",
             "    cin = p.connect(p.GUI)",
             f"p.setTimeStep({client.time_step!r})"]
    for body in client.bodies.values():
        path = body.info.get("fileName")
        if not (isinstance(path, str) and path.lower().endswith(".urdf")):
            lines.append(f"# body {body.uid} ({body.name.decode('utf-8', 'replace')!r}) was not "
                         "loaded from a URDF file: not rebuilt")
            continue
        R, t = client.sim.link_transform(body.robot_index(), 0)
        fixed = not body.entity.isFloatingBase()
        lines.append(f"ob = p.loadURDF({path!r}, {list(map(float, t))!r}, "
                     f"{list(xyzw(R))!r}, useFixedBase={fixed}, "
                     f"flags={int(body.info.get('flags', 0))}, "
                     f"globalScaling={float(body.info.get('globalScaling', 1.0))!r})")
        for j in range(body.num_joints):
            kind = getJointInfo(body.uid, j, physicsClientId=cid)[2]
            if kind == 4:                                   # JOINT_FIXED
                continue
            q, v = getJointStateMultiDof(body.uid, j, physicsClientId=cid)[:2]
            if kind in (0, 1):                              # revolute, prismatic
                lines.append(f"p.resetJointState(ob, {j}, {float(q[0])!r}, {float(v[0])!r})")
            else:
                lines.append(f"p.resetJointStateMultiDof(ob, {j}, {list(map(float, q))!r}, "
                             f"{list(map(float, v))!r})")
        if not fixed:
            linear, angular = getBaseVelocity(body.uid, physicsClientId=cid)
            lines.append(f"p.resetBaseVelocity(ob, {list(linear)!r}, {list(angular)!r})")
    lines.append(f"p.setGravity({', '.join(repr(float(g)) for g in client.gravity)})")
    try:
        with open(os.fspath(worldFileName), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    except (OSError, TypeError) as e:
        raise error(f"saveWorld: cannot write '{worldFileName}': {e}") from None
