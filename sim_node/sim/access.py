"""Named items of a WorldModel or a Simulator, addressed by path strings (Klamp't's access/map).

    get_item(world, "robots[0].config")           -> the robot's q (numpy array)
    set_item(world, "robots['arm'].config[4]", x)  # sets element 4 of q through setConfig(q)
    get_item(sim, "robots[0].commandedConfig")    -> the PID target of robot 0 in the simulation

Grammar (whitespace is not allowed)::

    path     := name selector*
    selector := "." name | "[" key "]"
    key      := integer >= 0 | 'text' | "text"

Items of a WorldModel (the model state that a Simulator starts from):

    robots[r] / robot[r]                  r: index or name
        .name                             str (read-only)
        .config                           q (nq) [m, rad; floating base: pos, quat xyzw, joints;
                                          quaternions (also of spherical and floating joints)
                                          are normalised on set, so setting one of their
                                          entries rescales the other three]
        .velocity                         v (nv) [m/s, rad/s]
    rigidObjects[i] / rigidObject[i]      i: index or name
        .name                             str (read-only)
        .transform                        (R 3x3, t 3) of the object frame in the world [m]
        .velocity                         (w 3 [rad/s], v 3 [m/s]): v of the object frame origin
    terrains[i] / terrain[i]
        .name, .transform                 read-only

Items of a Simulator (read-only: the simulated state; set initial conditions on the world):

    time                                  simulation time [s]
    robots[r].name, .config, .velocity    the simulated (actual) q and v
    robots[r].commandedConfig             q the PID aims at (SimRobotController)
    robots[r].commandedVelocity           v the PID aims at
    robots[r].sensedConfig                q as sensed by the controller
    robots[r].sensedVelocity              v as sensed
    robots[r].torque                      actuator torques of the last substep (nv) [N m, N]
    rigidObjects[i].name, .transform, .velocity   as on the world, of the simulated body
    terrains[i].name, .transform

Keys after an item select elements of its value: ``config[4]`` is a float, ``transform[1]`` is t,
``transform[0][2][1]`` is R[2, 1]. Setting an element reads the whole value, replaces the
element and sets the whole value through the model's setter, so the setter's validation
applies (and nothing changes when it fails). A name that does not exist raises
UnknownItemError (a KeyError) listing the valid names at that level; an index out of range,
IndexError; a malformed path, ValueError.

Flat representation (``flatten``, the CSV columns of ``sim_node.sim.batch``): numbers and
strings are one entry each, arrays are flattened row-major, pairs are concatenated: a transform
is 12 numbers [R row-major (9), t (3)], a rigid-object velocity 6 numbers [w (3), v (3)].
``set_item`` accepts that flat form for transforms and velocities too.
"""
from __future__ import annotations

import functools
import numbers
import re
from typing import Callable, NamedTuple

import numpy as np

from sim_node.model.world import WorldModel
from sim_node.sim.simulator import Simulator

_TOKEN = re.compile(r"""\.([A-Za-z_]\w*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]""")
_NAME = re.compile(r"[A-Za-z_]\w*")

_COLLECTIONS = {"robots": "robots", "robot": "robots", "rigidObjects": "rigidObjects",
                "rigidObject": "rigidObjects", "terrains": "terrains", "terrain": "terrains"}


class UnknownItemError(KeyError):
    """A path names an item, field or entity that does not exist; the message lists the valid
    names at that level."""

    def __str__(self):
        # KeyError shows its message as a repr; this one is a sentence
        return str(self.args[0])


class _Item(NamedTuple):
    get: Callable[[], object]
    set: Callable[[object], None] | None


@functools.lru_cache(maxsize=1024)
def _parse(path: str) -> tuple:
    """The path as a tuple of keys: names (str, from ``.name`` and the leading name), indices
    (int) and quoted names (``('name',)`` one-tuples, to tell them from field names)."""
    head = _NAME.match(path)
    if head is None:
        raise ValueError(f"bad access path {path!r}: it must start with a name such as "
                         f"'robots', 'rigidObjects', 'terrains' or 'time'")
    keys = [head.group()]
    at = head.end()
    while at < len(path):
        m = _TOKEN.match(path, at)
        if m is None:
            raise ValueError(f"bad access path {path!r} at character {at} ({path[at:]!r}): "
                             f"expected .name, [integer] or ['name']")
        field, index, quoted1, quoted2 = m.groups()
        if field is not None:
            keys.append(field)
        elif index is not None:
            keys.append(int(index))
        else:
            keys.append((quoted1 if quoted1 is not None else quoted2,))
        at = m.end()
    return tuple(keys)


def get_item(obj, path: str):
    """The value of the item at `path` of a WorldModel or Simulator (see the module docs)."""
    return resolver(obj, path)()


def set_item(obj, path: str, value):
    """Set the item at `path` of a WorldModel to `value` (an element path sets that element of
    the whole value through the model's setter)."""
    item, elements = _resolve(obj, path)
    if item.set is None:
        where = "a Simulator" if isinstance(obj, Simulator) else "the world"
        raise ValueError(f"{path!r} is read-only on {where}; settable items: robots[r].config, "
                         f"robots[r].velocity, rigidObjects[i].transform, "
                         f"rigidObjects[i].velocity of a WorldModel")
    if elements:
        value = _replaced(item.get(), elements, value, path)
    item.set(value)


def resolver(obj, path: str) -> Callable[[], object]:
    """A zero-argument function returning get_item(obj, path), with the path resolved once
    (for reading the same item many times)."""
    item, elements = _resolve(obj, path)
    if not elements:
        return item.get

    def read():
        value = item.get()
        for k in elements:
            value = _element(value, k, path)
        return float(value) if isinstance(value, np.floating) else value
    return read


def flatten(value) -> list:
    """The flat representation of a value: a list of floats, strings and integers (for integer
    scalars; see the module docs)."""
    if isinstance(value, (str, numbers.Integral)):
        return [value]
    if isinstance(value, (tuple, list)):
        return [x for part in value for x in flatten(part)]
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"cannot flatten a {type(value).__name__} ({value!r}): expected "
                        f"numbers, arrays, strings or tuples of them")
    return array.astype(float).ravel().tolist()


# -- resolution ------------------------------------------------------------------------------
def _resolve(obj, path: str):
    """(item, element keys) of `path` on a WorldModel or Simulator."""
    if not isinstance(path, str):
        raise TypeError(f"an access path is a string, got {type(path).__name__}")
    keys = _parse(path)
    if isinstance(obj, Simulator):
        sim, world = obj, obj.getWorld()
    elif isinstance(obj, WorldModel):
        sim, world = None, obj
    else:
        raise TypeError(f"access paths apply to a WorldModel or a Simulator, got "
                        f"{type(obj).__name__}")
    head = keys[0]
    if sim is not None and head == "time":
        return _Item(sim.getTime, None), _element_keys(keys[1:], path)
    if head not in _COLLECTIONS:
        valid = sorted(_COLLECTIONS) + (["time"] if sim is not None else [])
        raise UnknownItemError(f"{path!r}: unknown item {head!r}; valid names: {valid}")
    collection = _COLLECTIONS[head]
    if len(keys) < 3 or isinstance(keys[1], str):
        raise ValueError(f"{path!r}: {head} needs an index or a name and a field, e.g. "
                         f"{head}[0].name or {head}['name'].name")
    index = _entity_index(world, collection, keys[1], path)
    field = keys[2]
    fields = _FIELDS[collection](world, sim, index)
    if not isinstance(field, str) or field not in fields:
        raise UnknownItemError(f"{path!r}: unknown field {field!r} of {head}[{keys[1]!r}]; "
                               f"valid fields: {sorted(fields)}")
    return fields[field], _element_keys(keys[3:], path)


def _entity_index(world: WorldModel, collection: str, key, path: str) -> int:
    count, pick = {"robots": (world.numRobots, world.robot),
                   "rigidObjects": (world.numRigidObjects, world.rigidObject),
                   "terrains": (world.numTerrains, world.terrain)}[collection]
    n = count()
    if isinstance(key, tuple):
        names = [pick(i).getName() for i in range(n)]
        if key[0] not in names:
            raise UnknownItemError(f"{path!r}: no {collection} entry named {key[0]!r}; "
                                   f"names: {names}")
        return names.index(key[0])
    if not key < n:
        raise IndexError(f"{path!r}: {collection} index {key} out of range [0, {n})")
    return key


def _element_keys(keys: tuple, path: str) -> tuple:
    for k in keys:
        if not isinstance(k, int):
            raise UnknownItemError(f"{path!r}: {k!r} after the field: the elements of a value "
                                   f"are selected by integer indices [i]")
    return keys


def _element(value, k: int, path: str):
    if isinstance(value, tuple):
        n = len(value)
    elif isinstance(value, np.ndarray) and value.ndim > 0:
        n = len(value)
    else:
        raise IndexError(f"{path!r}: index [{k}] into a {type(value).__name__}, which has no "
                         f"elements")
    if not k < n:
        raise IndexError(f"{path!r}: index [{k}] out of range [0, {n})")
    return value[k]


def _replaced(whole, keys: tuple, x, path: str):
    """A copy of `whole` with the element at `keys` replaced by x (same shape)."""
    part = _element(whole, keys[0], path)
    new = _replaced(part, keys[1:], x, path) if len(keys) > 1 else x
    if isinstance(whole, tuple):
        return whole[:keys[0]] + (new,) + whole[keys[0] + 1:]
    try:
        new = np.asarray(new, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{path!r}: expected numbers for the element, got {new!r}") from None
    if new.shape != np.shape(part):
        raise ValueError(f"{path!r}: the element has shape {np.shape(part)}, got a value of "
                         f"shape {new.shape}")
    out = whole.copy()
    out[keys[0]] = new
    return out


# -- the fields of each kind of entity ------------------------------------------------------
def _pair(value, sizes: tuple, what: str):
    """(a, b) from a pair or from its flat form of sum(sizes) numbers."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return value
    flat = np.asarray(value, dtype=float)
    total = int(np.prod(sizes[0])) + int(np.prod(sizes[1]))
    if flat.shape != (total,):
        raise ValueError(f"{what}: expected a pair {sizes} or {total} numbers, got shape "
                         f"{np.shape(value)}")
    first = int(np.prod(sizes[0]))
    return flat[:first].reshape(sizes[0]), flat[first:]


def _robot_fields(world: WorldModel, sim, r: int) -> dict:
    robot = world.robot(r)
    name = _Item(robot.getName, None)
    if sim is None:
        return {"name": name,
                "config": _Item(robot.getConfig, robot.setConfig),
                "velocity": _Item(robot.getVelocity, robot.setVelocity)}
    controller = sim.controller(r)
    return {"name": name,
            "config": _Item(functools.partial(sim.getActualConfig, r), None),
            "velocity": _Item(functools.partial(sim.getActualVelocity, r), None),
            "commandedConfig": _Item(controller.getCommandedConfig, None),
            "commandedVelocity": _Item(controller.getCommandedVelocity, None),
            "sensedConfig": _Item(controller.getSensedConfig, None),
            "sensedVelocity": _Item(controller.getSensedVelocity, None),
            "torque": _Item(functools.partial(sim.getActualTorque, r), None)}


def _object_fields(world: WorldModel, sim, i: int) -> dict:
    obj = world.rigidObject(i)
    name = _Item(obj.getName, None)
    if sim is None:
        what = f"rigid object '{obj.getName()}'"
        return {"name": name,
                "transform": _Item(obj.getTransform, lambda value: obj.setTransform(
                    *_pair(value, ((3, 3), (3,)), f"{what} transform"))),
                "velocity": _Item(obj.getVelocity, lambda value: obj.setVelocity(
                    *_pair(value, ((3,), (3,)), f"{what} velocity")))}
    body = sim.body(obj)
    com_local = obj.getMass().getCom()

    def velocity():
        # the body reports its centre-of-mass velocity; the item is the object origin's
        R, _ = body.getObjectTransform()
        w, v_com = body.getVelocity()
        return w, v_com - np.cross(w, R @ com_local)
    return {"name": name, "transform": _Item(body.getObjectTransform, None),
            "velocity": _Item(velocity, None)}


def _terrain_fields(world: WorldModel, sim, i: int) -> dict:
    terrain = world.terrain(i)
    return {"name": _Item(terrain.getName, None), "transform": _Item(terrain.getTransform, None)}


_FIELDS = {"robots": _robot_fields, "rigidObjects": _object_fields, "terrains": _terrain_fields}
