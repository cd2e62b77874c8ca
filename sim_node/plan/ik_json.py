"""IKObjective <-> JSON in Klamp't's format (klampt.io.loader's IKObjective object).

    {"type": "IKObjective", "link": 7, "destLink": 2 (absent: the world),
     "posConstraint": "fixed" | "planar" | "linear" (absent: free),
     "localPosition": [3], "endPosition": [3], "direction": [3] (planar: the plane's normal,
     linear: the line's direction),
     "rotConstraint": "fixed" | "axis" (absent: free),
     "endRotation": [3] (fixed: the rotation vector of the target rotation; axis: the world
     axis), "localAxis": [3] (axis)}

Every field is checked (JSONError names the path of the bad field and what is valid).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from sim_node.math.rotation_input import as_matrix
from sim_node.model import ik

KEYS = {"type", "link", "destLink", "posConstraint", "localPosition", "endPosition",
        "direction", "rotConstraint", "endRotation", "localAxis"}


class JSONError(ValueError):
    """A JSON problem description that cannot be loaded (message names the field)."""


def to_json(obj) -> dict:
    """Klamp't's JSON object of an IKObjective."""
    res = {"type": "IKObjective", "link": int(obj.link())}
    if obj.destLink() >= 0:
        res["destLink"] = int(obj.destLink())
    pos_dims = obj.numPosDims()
    if pos_dims:
        res["posConstraint"] = {3: "fixed", 2: "linear", 1: "planar"}[pos_dims]
        local, world = obj.getPosition()
        res["localPosition"], res["endPosition"] = _list(local), _list(world)
        if pos_dims < 3:
            res["direction"] = _list(obj.getPositionDirection())
    rot_dims = obj.numRotDims()
    if rot_dims == 3:
        res["rotConstraint"] = "fixed"
        R = as_matrix(obj.getRotation(), "IKObjective rotation")
        res["endRotation"] = _list(Rotation.from_matrix(R).as_rotvec())
    elif rot_dims == 2:
        res["rotConstraint"] = "axis"
        local_axis, world_axis = obj.getRotationAxis()
        res["localAxis"], res["endRotation"] = _list(local_axis), _list(world_axis)
    elif rot_dims:
        raise JSONError(f"IKObjective with {rot_dims} rotational dimensions has no Klamp't "
                        "JSON form (0, 2 or 3 are valid)")
    return res


def from_json(data, num_links: int, where: str = "IKObjective"):
    """The IKObjective that ``data`` (Klamp't's JSON object) describes, for a robot with
    ``num_links`` links. JSONError naming ``where`` and the field on any invalid content."""
    if not isinstance(data, dict):
        raise JSONError(f"{where}: expected an object, got {type(data).__name__}")
    unknown = set(data) - KEYS
    if unknown:
        raise JSONError(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(KEYS)}")
    if data.get("type", "IKObjective") not in ("IKObjective", "IKGoal"):
        raise JSONError(f"{where}.type: {data['type']!r}, expected 'IKObjective'")
    link = _link(data.get("link"), num_links, f"{where}.link", allow_world=False)
    dest = _link(data.get("destLink", -1), num_links, f"{where}.destLink", allow_world=True)
    obj = ik.IKObjective()
    obj.setLinks(link, dest)
    pos = data.get("posConstraint", "free")
    if pos not in ("free", "fixed", "planar", "linear"):
        raise JSONError(f"{where}.posConstraint: {pos!r}; valid: 'free', 'fixed', 'planar', "
                        "'linear'")
    if pos != "free":
        local = _vec3(data, "localPosition", where)
        world = _vec3(data, "endPosition", where)
        if pos == "fixed":
            obj.setFixedPosConstraint(local, world)
        else:
            direction = _vec3(data, "direction", where, unit=True)
            if pos == "planar":
                obj.setPlanarPosConstraint(local, direction, float(direction @ world))
            else:
                obj.setLinearPosConstraint(local, world, direction)
    else:
        obj.setFreePosition()
    rot = data.get("rotConstraint", "free")
    if rot == "fixed":
        obj.setFixedRotConstraint(Rotation.from_rotvec(_vec3(data, "endRotation", where))
                                  .as_matrix())
    elif rot == "axis":
        obj.setAxialRotConstraint(_vec3(data, "localAxis", where, unit=True),
                                  _vec3(data, "endRotation", where, unit=True))
    elif rot != "free":
        raise JSONError(f"{where}.rotConstraint: {rot!r}; valid: 'free', 'fixed', 'axis'")
    if pos == "free" and rot == "free":
        raise JSONError(f"{where}: constrains nothing (posConstraint and rotConstraint free)")
    return obj


def _list(x) -> list:
    return [float(v) for v in np.asarray(x, dtype=float).reshape(-1)]


def _link(value, num_links, where, allow_world):
    if isinstance(value, bool) or not isinstance(value, int):
        raise JSONError(f"{where}: a link index (integer) is required, got {value!r}")
    low = -1 if allow_world else 0
    if not low <= value < num_links:
        raise JSONError(f"{where}: link {value} out of range [{low}, {num_links})")
    return value


def _vec3(data, key, where, unit=False) -> np.ndarray:
    value = data.get(key)
    if not isinstance(value, list) or len(value) != 3 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in value):
        raise JSONError(f"{where}.{key}: expected 3 finite numbers, got {value!r}")
    vec = np.array(value, dtype=float)
    if unit:
        norm = np.linalg.norm(vec)
        if norm < 1e-9:
            raise JSONError(f"{where}.{key}: a direction must be nonzero")
        vec = vec / norm
    return vec
