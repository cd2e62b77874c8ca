"""Entities as the simulation_interfaces services see them: names, categories, filters, states,
spawning, and the bodies our own services act on.

Entities are the world's robots, rigid objects and terrains, by their (unique) names, in world
ID order (terrains, rigid objects, robots). Categories: robots CATEGORY_ROBOT, rigid objects
CATEGORY_OBJECT, terrains CATEGORY_STATIC_OBJECT.

EntityState (frame ``world``, stamped with the sim time):
    pose          the entity's frame: a robot's root link, a rigid object's object frame (the
                  frame of its URDF link or world-file entry, not its centre of mass), a
                  terrain's placement
    twist         of that frame, in world axes: angular velocity w [rad/s] and the velocity of
                  the frame's origin v [m/s] (not of the centre of mass)
    acceleration  not measured: zeros (the engine does not keep accelerations)
Only the base of a floating-base robot and rigid objects can be moved; fixed-base robots move
by their joints, terrains are static.

Spawning: one URDF (file path, file:// or package:// URI, or the XML text), spawned by
Simulator.spawn (sim_node/sim/entities.py: names, namespaces, frames, rigid object or robot;
atomic). A rigid object has no ROS interfaces, so entity_namespace is not used for it.

This module translates: messages to the arguments of the simulator's entity API
(sim_node/sim/entities.py) and back, and that API's EntityError to RequestError (a
simulation_interfaces result code and a message; ``request_error``). Functions that read the
simulation run on the simulation thread.
"""
from __future__ import annotations

import math
import urllib.parse
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
from simulation_interfaces.msg import Bounds, EntityCategory, EntityState, Result
from simulation_interfaces.srv import SpawnEntity

from sim_node.ros.client_files import ClientFileError, check_name, read_regular_file
from sim_node.ros.stamps import time_msg
from sim_node.sim import bounds
from sim_node.sim.entities import (EntityError, Kind, Problem, all_entities, frame_motion,
                                   kind_of, rotation, xyzw)
from sim_node.sim.namespaces import WORLD_FRAME

SPAWN_FORMATS = ("urdf",)
POSE_FRAMES = ("", WORLD_FRAME)         # frames poses may be given in
UNIT_TOLERANCE = 1e-3                   # accepted deviation of a quaternion's norm from 1
MAX_FILTER_LENGTH = 4096                # [characters] of a name filter
CATEGORY_NAMES = {EntityCategory.CATEGORY_OBJECT: "OBJECT",
                  EntityCategory.CATEGORY_ROBOT: "ROBOT",
                  EntityCategory.CATEGORY_HUMAN: "HUMAN",
                  EntityCategory.CATEGORY_DYNAMIC_OBJECT: "DYNAMIC_OBJECT",
                  EntityCategory.CATEGORY_STATIC_OBJECT: "STATIC_OBJECT"}


class RequestError(Exception):
    """A request that cannot be served: `code` (simulation_interfaces Result or a service's own
    code) and a message saying what was wrong and what is valid."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# the result code of each problem of the simulator's entity API (sim_node.sim.entities)
RESULT_CODES = {Problem.NOT_FOUND: Result.NOT_FOUND,
                Problem.INVALID: Result.OPERATION_FAILED,
                Problem.STATIC: Result.OPERATION_FAILED,
                Problem.NAME_INVALID: SpawnEntity.Response.NAME_INVALID,
                Problem.NAME_TAKEN: SpawnEntity.Response.NAME_NOT_UNIQUE,
                Problem.NAMESPACE_INVALID: SpawnEntity.Response.NAMESPACE_INVALID,
                Problem.PARSE_ERROR: SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                Problem.MISSING_ASSETS: SpawnEntity.Response.MISSING_ASSETS,
                Problem.UNSUPPORTED_ASSETS: SpawnEntity.Response.UNSUPPORTED_ASSETS}
CATEGORIES = {Kind.ROBOT: EntityCategory.CATEGORY_ROBOT,
              Kind.OBJECT: EntityCategory.CATEGORY_OBJECT,
              Kind.TERRAIN: EntityCategory.CATEGORY_STATIC_OBJECT}


def request_error(error: EntityError) -> RequestError:
    """The RequestError of an EntityError of the simulator's entity API."""
    return RequestError(RESULT_CODES[error.problem], error.message)


def category_of(entity) -> int:
    return CATEGORIES[kind_of(entity)]


def name_pattern(regex: str):
    """EntityFilters.filter compiled by RE2 (google-re2): matched in time linear in the name,
    whatever the pattern (no backtracking: `(a+)+$` costs what `a+$` costs). Its syntax covers
    POSIX extended expressions with their character classes ([[:alpha:]] ...) and Perl's
    classes (\\d, \\w); back-references and look-around are not supported. A pattern RE2
    rejects (or longer than MAX_FILTER_LENGTH) is an error naming it."""
    import re2

    if len(regex) > MAX_FILTER_LENGTH:
        raise RequestError(Result.OPERATION_FAILED, f"filters.filter: {len(regex)} characters, "
                           f"more than {MAX_FILTER_LENGTH}")
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(regex, options)
    except re2.error as error:
        reason = error.args[0] if error.args else ""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RequestError(Result.OPERATION_FAILED, f"filters.filter '{regex}' is not a valid "
                           f"regular expression for RE2: {reason or 'rejected'} (RE2 syntax: "
                           f"POSIX extended and Perl classes, no back-references or "
                           f"look-around)") from None


def check_filters(filters):
    """The compiled name pattern and the set of categories of simulation_interfaces/
    EntityFilters (tags and bounds are not supported); RequestError for a bad filter. Run
    off the simulation thread."""
    if filters.tags.tags:
        raise RequestError(Result.FEATURE_UNSUPPORTED,
                           "tag filters are not supported (entities have no tags); leave "
                           "filters.tags.tags empty")
    if filters.bounds.type != Bounds.TYPE_EMPTY:
        raise RequestError(Result.FEATURE_UNSUPPORTED,
                           f"bounds filters are not supported (got type {filters.bounds.type});"
                           f" leave filters.bounds.type TYPE_EMPTY ({Bounds.TYPE_EMPTY})")
    categories = {c.category for c in filters.categories}
    unknown = sorted(categories - set(CATEGORY_NAMES))
    if unknown:
        valid = ", ".join(f"{v} ({n})" for v, n in CATEGORY_NAMES.items())
        raise RequestError(Result.OPERATION_FAILED, f"filters.categories: unknown category "
                           f"{', '.join(map(str, unknown))}; valid: {valid}")
    return name_pattern(filters.filter), categories


def entity_index(world) -> list:
    """(entity, name, category) of every entity in world ID order: what a filter is matched
    against, taken on the simulation thread and matched off it (select)."""
    return [(e, e.getName(), category_of(e)) for e in all_entities(world)]


def select(index: list, filters) -> list:
    """The entities of an entity_index matching simulation_interfaces/EntityFilters: `filter`
    a regular expression (name_pattern) found anywhere in the name (anchor with ^...$),
    `categories` any of them. Tags and bounds are not supported."""
    pattern, categories = check_filters(filters)
    return [entity for entity, name, category in index
            if pattern.search(name) and (not categories or category in categories)]


def check_frame(frame_id: str, code: int, where: str):
    if frame_id not in POSE_FRAMES:
        raise RequestError(code, f"{where}: frame '{frame_id}' is not supported; poses and "
                           f"velocities are given in '{WORLD_FRAME}' (or '')")


def pose_from_msg(pose, frame_id: str, code: int, where: str):
    """(R (3, 3), t (3,) [m]) of a geometry_msgs/Pose in the world frame; `code` and `where`
    (the request field) for the error of an unusable pose."""
    check_frame(frame_id, code, where)
    p, o = pose.position, pose.orientation
    t = np.array([p.x, p.y, p.z])
    q = np.array([o.x, o.y, o.z, o.w])
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise RequestError(code, f"{where}: position {t.tolist()} / orientation (x, y, z, w) "
                           f"{q.tolist()} contains NaN or infinity")
    if np.any(np.abs(t) > bounds.MAX_POSITION):
        raise RequestError(code, f"{where}.position: {t.tolist()} is beyond the bound |x| <= "
                           f"{bounds.MAX_POSITION:g} m per component")
    with np.errstate(over="ignore"):       # (1e308 components: an infinite norm, refused)
        norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > UNIT_TOLERANCE:
        raise RequestError(code, f"{where}: orientation (x, y, z, w) {q.tolist()} is not a unit "
                           f"quaternion (norm {norm:.6g}; 1 +- {UNIT_TOLERANCE:g} accepted)")
    return rotation(q / norm), t


def twist_from_msg(twist, where: str):
    """(w, v): angular [rad/s] and linear [m/s] velocity of a geometry_msgs/Twist."""
    w = np.array([twist.angular.x, twist.angular.y, twist.angular.z])
    v = np.array([twist.linear.x, twist.linear.y, twist.linear.z])
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(v))):
        raise RequestError(Result.OPERATION_FAILED, f"{where}: linear {v.tolist()} / angular "
                           f"{w.tolist()} contains NaN or infinity")
    if np.any(np.abs(v) > bounds.MAX_LINEAR_SPEED):
        raise RequestError(Result.OPERATION_FAILED, f"{where}.linear: {v.tolist()} is beyond "
                           f"the bound |v| <= {bounds.MAX_LINEAR_SPEED:g} m/s per component")
    if np.any(np.abs(w) > bounds.MAX_ANGULAR_SPEED):
        raise RequestError(Result.OPERATION_FAILED, f"{where}.angular: {w.tolist()} is beyond "
                           f"the bound |w| <= {bounds.MAX_ANGULAR_SPEED:g} rad/s per component")
    return w, v


def entity_state(sim, entity) -> EntityState:
    """The EntityState of an entity now (module docstring)."""
    R, t, w, v = frame_motion(sim, entity)
    state = EntityState()
    state.header.stamp = time_msg(sim.getTime())
    state.header.frame_id = WORLD_FRAME
    position, orientation = state.pose.position, state.pose.orientation
    position.x, position.y, position.z = (float(x) for x in t)
    orientation.x, orientation.y, orientation.z, orientation.w = (float(x) for x in xyzw(R))
    linear, angular = state.twist.linear, state.twist.angular
    linear.x, linear.y, linear.z = (float(x) for x in v)
    angular.x, angular.y, angular.z = (float(x) for x in w)
    return state


# -- spawning ------------------------------------------------------------------------------
def _package_share(package: str) -> Path:
    if package == "sim_node":
        from sim_node.resources import package_root

        return package_root()
    from ament_index_python.packages import get_package_share_directory

    try:
        return Path(get_package_share_directory(package))
    except (KeyError, LookupError, OSError, ValueError) as error:
        raise RequestError(Result.NOT_FOUND, f"entity_resource.uri: cannot locate package "
                           f"'{package}' ({error})") from None


def _uri_path(uri: str) -> Path:
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "":
        return Path(uri).expanduser()
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(urllib.parse.unquote(parsed.path))
    if parsed.scheme == "package" and parsed.netloc:
        return _package_share(parsed.netloc) / urllib.parse.unquote(parsed.path).lstrip("/")
    raise RequestError(SpawnEntity.Response.UNSUPPORTED_FORMAT, f"entity_resource.uri '{uri}': "
                       f"supported are file paths, file:///path and package://package/path")


def _check_urdf_text(text: str, where: str):
    if not text.lstrip().startswith("<"):
        raise RequestError(SpawnEntity.Response.UNSUPPORTED_FORMAT, f"{where} is not XML; "
                           f"supported formats: {', '.join(SPAWN_FORMATS)}")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise RequestError(SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                           f"{where}: malformed XML: {error}") from None
    if root.tag != "robot":
        raise RequestError(SpawnEntity.Response.UNSUPPORTED_FORMAT, f"{where}: a <{root.tag}> "
                           f"document is not a URDF (<robot>); supported formats: "
                           f"{', '.join(SPAWN_FORMATS)}")


def spawn_source(resource, max_size: int) -> str:
    """The URDF to spawn: a file path (entity_resource.uri: a regular file of at most max_size
    bytes) or the XML itself (entity_resource.resource_string, used when uri is empty, at most
    max_size bytes)."""
    uri = resource.uri.strip()
    if uri:
        try:
            check_name(uri, "entity_resource.uri")
        except ClientFileError as error:
            raise RequestError(Result.NOT_FOUND, str(error)) from None
        path = _uri_path(uri)
        if path.suffix.lower() != ".urdf":
            raise RequestError(SpawnEntity.Response.UNSUPPORTED_FORMAT,
                               f"entity_resource.uri '{uri}': '{path.suffix}' files are not "
                               f"supported; supported formats: {', '.join(SPAWN_FORMATS)} "
                               f"(.urdf)")
        try:
            data = read_regular_file(path, max_size, f"entity_resource.uri '{uri}'")
        except ClientFileError as error:
            raise RequestError(Result.NOT_FOUND, str(error)) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise RequestError(SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                               f"entity_resource.uri '{uri}': {path} is not UTF-8 text (byte "
                               f"0x{data[error.start]:02x} at offset {error.start})") from None
        _check_urdf_text(text, f"entity_resource.uri '{uri}'")
        return str(path)
    if len(resource.resource_string) > max_size:
        raise RequestError(SpawnEntity.Response.RESOURCE_PARSE_ERROR, f"entity_resource."
                           f"resource_string: {len(resource.resource_string)} characters, more "
                           f"than the limit of {max_size} (parameter max_read_size)")
    if not resource.resource_string.strip():
        raise RequestError(SpawnEntity.Response.NO_RESOURCE, "entity_resource: neither uri nor "
                           "resource_string is given")
    _check_urdf_text(resource.resource_string, "entity_resource.resource_string")
    return resource.resource_string


def finite(values, where: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(a)):
        raise RequestError(Result.OPERATION_FAILED, f"{where}: {a.tolist()} contains NaN or "
                           f"infinity")
    return a


def bounded(values, bound: float, unit: str, where: str) -> np.ndarray:
    """values finite and within +-bound (sim_node.sim.bounds) per component."""
    a = finite(values, where)
    if np.any(np.abs(a) > bound):
        raise RequestError(Result.OPERATION_FAILED, f"{where}: {a.tolist()} is beyond the bound "
                           f"|value| <= {bound:g} {unit} per component")
    return a


def positive_duration(value: float, where: str) -> float:
    if not (math.isfinite(value) and value > 0.0):
        raise RequestError(Result.OPERATION_FAILED, f"{where} must be a finite time > 0 [s], "
                           f"got {value}")
    return float(value)
