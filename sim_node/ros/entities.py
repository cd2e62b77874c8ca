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

Spawning: one URDF (file path, file:// or package:// URI, or the XML text). A URDF of a single
link and no joints becomes a rigid object (it needs <collision> and a positive <inertial>
mass; it has no ROS interfaces, so entity_namespace is not used); any other URDF a robot,
fixed-base when its root link is named ``world``. Names are ROS name tokens
([A-Za-z_][A-Za-z0-9_]*: a robot's name is also its default namespace and TF prefix). A
robot's namespace is entity_namespace (a valid ROS namespace, stored relative to the node's;
'/' for none) or, when that is empty, its name, as in world files; two robots cannot share one,
and no TF frame of a spawned entity (a robot's link frames, a rigid object's name) may be a
frame of the world already (the world frame, another entity's).

Every function here reads or changes the simulation: call them on the simulation thread.
Invalid requests raise RequestError (a simulation_interfaces result code and a message).
"""
from __future__ import annotations

import math
import re
import urllib.parse
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
from simulation_interfaces.msg import Bounds, EntityCategory, EntityState, Result
from simulation_interfaces.srv import SpawnEntity
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.model.errors import ModelLoadError, URDFError
from sim_node.model.robot import Mass, RobotModel, RobotModelLink
from sim_node.model.urdf import parse_urdf
from sim_node.model.world import RigidObjectModel, TerrainModel
from sim_node.ros.client_files import ClientFileError, check_name, read_regular_file
from sim_node.ros.frames import WORLD_FRAME, link_frame
from sim_node.ros.namespaces import robot_namespace
from sim_node.ros.stamps import time_msg
from sim_node.sim import bounds

SPAWN_FORMATS = ("urdf",)
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
NAMESPACE_PATTERN = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*\Z")
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


# -- names and categories ------------------------------------------------------------------
def all_entities(world) -> list:
    """The world's terrains, rigid objects and robots, in world ID order."""
    return ([world.terrain(i) for i in range(world.numTerrains())]
            + [world.rigidObject(i) for i in range(world.numRigidObjects())]
            + [world.robot(i) for i in range(world.numRobots())])


def find_entity(world, name: str):
    for entity in all_entities(world):
        if entity.getName() == name:
            return entity
    raise RequestError(Result.NOT_FOUND, f"no entity named '{name}'; entities: "
                       f"{', '.join(e.getName() for e in all_entities(world)) or 'none'}")


def category_of(entity) -> int:
    if isinstance(entity, RobotModel):
        return EntityCategory.CATEGORY_ROBOT
    if isinstance(entity, TerrainModel):
        return EntityCategory.CATEGORY_STATIC_OBJECT
    return EntityCategory.CATEGORY_OBJECT


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


# -- poses and velocities ------------------------------------------------------------------
def _xyzw(R) -> np.ndarray:
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


def _rotation(q_xyzw) -> np.ndarray:
    x, y, z, w = q_xyzw
    return quat2mat([w, x, y, z])


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
    return _rotation(q / norm), t


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


def _frame_motion(sim, entity):
    # (R, t, w, v) of the entity's frame in the world: v the velocity of its origin
    zero = np.zeros(3)
    if isinstance(entity, RobotModel):
        if entity.isFloatingBase():
            q, qd = sim.getActualConfig(entity), sim.getActualVelocity(entity)
            R = _rotation(q[3:7])
            return R, q[0:3], R @ qd[3:6], R @ qd[0:3]   # base velocities: base frame -> world
        R, t = sim.getLinkTransforms(entity)
        root = _root_link(entity)
        return R[root], t[root], zero, zero
    if isinstance(entity, RigidObjectModel):
        body = sim.body(entity)
        R, t = body.getObjectTransform()
        w, v_com = body.getVelocity()
        com = body.getTransform()[1]
        return R, t, w, v_com - np.cross(w, com - t)
    R, t = entity.getTransform()
    return R, t, zero, zero


def _root_link(robot) -> int:
    return int(np.flatnonzero(np.asarray(robot.structure.link_parent) < 0)[0])


def entity_state(sim, entity) -> EntityState:
    """The EntityState of an entity now (module docstring)."""
    R, t, w, v = _frame_motion(sim, entity)
    state = EntityState()
    state.header.stamp = time_msg(sim.getTime())
    state.header.frame_id = WORLD_FRAME
    position, orientation = state.pose.position, state.pose.orientation
    position.x, position.y, position.z = (float(x) for x in t)
    orientation.x, orientation.y, orientation.z, orientation.w = (float(x) for x in _xyzw(R))
    linear, angular = state.twist.linear, state.twist.angular
    linear.x, linear.y, linear.z = (float(x) for x in v)
    angular.x, angular.y, angular.z = (float(x) for x in w)
    return state


def static_reason(entity) -> str | None:
    """Why an entity cannot be placed or given a velocity (None: it can)."""
    if isinstance(entity, TerrainModel):
        return f"'{entity.getName()}' is a terrain: it is static"
    if isinstance(entity, RobotModel) and not entity.isFloatingBase():
        return (f"robot '{entity.getName()}' has a fixed base: its joint commands move it, "
                f"not set_entity_state")
    return None


def set_entity_state(sim, entity, pose=None, twist=None):
    """Place a movable entity's frame at pose (R, t) and/or give it twist (w, v) (world axes, v
    of the frame's origin); None keeps that part. Arguments validated: nothing can fail half
    way; the entity is not static (static_reason)."""
    if isinstance(entity, RobotModel):
        q, qd = sim.getActualConfig(entity), sim.getActualVelocity(entity)
        if pose is not None:
            q[0:3], q[3:7] = pose[1], _xyzw(pose[0])
        if twist is not None:
            R = _rotation(q[3:7])
            qd[3:6], qd[0:3] = R.T @ twist[0], R.T @ twist[1]   # world -> base frame
        sim.setActualConfig(entity, q)
        sim.setActualVelocity(entity, qd)
        return
    body = sim.body(entity)
    if pose is not None:
        body.setObjectTransform(*pose)
    if twist is not None:
        w, v = twist
        t = body.getObjectTransform()[1]
        com = body.getTransform()[1]
        body.setVelocity(w, v + np.cross(w, com - t))


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


def _model_error(error: Exception) -> RequestError:
    problem = getattr(error, "problem", "")
    if problem.startswith(("mesh file not found", "cannot locate package")):
        code = SpawnEntity.Response.MISSING_ASSETS
    elif problem.startswith("mesh "):
        code = SpawnEntity.Response.UNSUPPORTED_ASSETS
    else:
        code = SpawnEntity.Response.RESOURCE_PARSE_ERROR
    return RequestError(code, f"entity_resource: {error}")


def parse_spawnable(source: str):
    """The parsed URDF of a spawn source (URDFRobot); RequestError for a bad model. Substitution
    args ($(env ...), $(find ...)) are refused: the source is a client's."""
    try:
        return parse_urdf(source, substitutions=False)
    except ModelLoadError as error:
        raise _model_error(error) from None


def is_rigid_object(urdf) -> bool:
    return len(urdf.links) == 1 and not urdf.joints


def spawn_name(taken: set, requested: str, model_name: str, allow_renaming: bool) -> str:
    """The name of a spawned entity (SpawnEntity.srv's rules): `requested`, else the model's;
    when that is empty, invalid or taken, a generated one if allow_renaming."""
    if requested:
        if not NAME_PATTERN.match(requested):
            raise RequestError(SpawnEntity.Response.NAME_INVALID, f"name '{requested}' is not "
                               f"valid: names are [A-Za-z_][A-Za-z0-9_]*")
        if requested not in taken:
            return requested
        if not allow_renaming:
            raise RequestError(SpawnEntity.Response.NAME_NOT_UNIQUE, f"name '{requested}' is "
                               f"taken (set allow_renaming to get a generated one)")
        base = requested
    else:
        if NAME_PATTERN.match(model_name) and model_name not in taken:
            return model_name
        if not allow_renaming:
            if model_name in taken:
                raise RequestError(SpawnEntity.Response.NAME_NOT_UNIQUE, f"name empty and the "
                                   f"model's name '{model_name}' is taken (give a name or set "
                                   f"allow_renaming)")
            raise RequestError(SpawnEntity.Response.NAME_INVALID, f"name empty and the model's "
                               f"name '{model_name}' is not valid ([A-Za-z_][A-Za-z0-9_]*); "
                               f"give a name or set allow_renaming")
        base = re.sub(r"[^A-Za-z0-9_]", "_", model_name)
        if not NAME_PATTERN.match(base):
            base = f"entity_{base}"
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def spawn_namespace(world, requested: str, name: str) -> str:
    """A spawned robot's namespace, relative ('' for none): see the module docstring."""
    if requested == "":
        namespace = name
    elif requested == "/":
        namespace = ""
    elif NAMESPACE_PATTERN.match(requested):
        namespace = requested.lstrip("/")
    else:
        raise RequestError(SpawnEntity.Response.NAMESPACE_INVALID, f"entity_namespace "
                           f"'{requested}' is not a valid ROS namespace (tokens "
                           f"[A-Za-z_][A-Za-z0-9_]* separated by '/'; '/' for none)")
    for r in range(world.numRobots()):
        if robot_namespace(world.robot(r)) == namespace:
            raise RequestError(SpawnEntity.Response.NAMESPACE_INVALID, f"namespace "
                               f"'/{namespace}' is used by robot '{world.robot(r).getName()}'")
    return namespace


def _tf_frames(world) -> set:
    # the TF frame names of the world's entities (sim_node/ros/frames.py)
    frames = {WORLD_FRAME} | {e.getName() for e in all_entities(world)
                              if not isinstance(e, RobotModel)}
    for r in range(world.numRobots()):
        robot = world.robot(r)
        frames |= {link_frame(robot, i) for i in range(len(robot.structure.link_names))}
    return frames


def check_frames(world, urdf, name: str, namespace: str):
    """The TF frames of a spawned entity must not be frames of the world already: a rigid
    object's frame is its name; a robot's link frames are ``<namespace>/<link>``, with
    namespace '/' the bare link names."""
    if is_rigid_object(urdf):
        if name in _tf_frames(world):
            raise RequestError(SpawnEntity.Response.NAME_INVALID, f"name '{name}' is a TF "
                               f"frame of the world already (a rigid object's frame is its "
                               f"name)")
        return
    prefix = f"{namespace}/" if namespace else ""
    clashes = sorted({prefix + link for link in urdf.links} & _tf_frames(world))
    if clashes:
        raise RequestError(SpawnEntity.Response.NAMESPACE_INVALID, f"entity_namespace: the "
                           f"link frames {', '.join(clashes)} would be TF frames of the world "
                           f"already; give the robot a namespace of its own")


def build_spawned(world, urdf, name: str, namespace: str, R, t):
    """The robot or rigid object of a parsed URDF, placed at (R, t), not yet in the world."""
    try:
        if not is_rigid_object(urdf):
            # through the world's loader: its inertia repairs and base rule apply as for a file
            robot = world.makeRobot(urdf, None, name=name, R=R, t=t)
            robot.settings = {"namespace": namespace}
            return robot
        link = next(iter(urdf.links.values()))
        if not link.collisions:
            raise URDFError(urdf.source, f"link '{link.name}'", "a single-link URDF is spawned "
                            "as a rigid object, which needs <collision>")
        if link.inertial is None or link.inertial.mass <= 0:
            raise URDFError(urdf.source, f"link '{link.name}'", "a single-link URDF is spawned "
                            "as a rigid object, which needs a positive <inertial> mass")
        mass = Mass(link.inertial.mass, link.inertial.com, link.inertial.inertia)
        return RigidObjectModel(name, link.collisions, mass, R, t)
    except (ModelLoadError, ValueError) as error:
        raise _model_error(error) from None


# -- bodies of our own services --------------------------------------------------------------
def target_links(world, entity_name: str, link_name: str, all_links: bool) -> list:
    """The body entities a request names: a rigid object or terrain, a robot's link, or (empty
    link) a robot's root link or, with all_links, all its links."""
    entity = find_entity(world, entity_name)
    if not isinstance(entity, RobotModel):
        if link_name:
            raise RequestError(Result.OPERATION_FAILED, f"'{entity_name}' is not a robot: it "
                               f"has no links (leave link empty)")
        return [entity]
    if link_name:
        names = [link.getName() for link in entity.links()]
        if link_name not in names:
            raise RequestError(Result.NOT_FOUND, f"robot '{entity_name}' has no link "
                               f"'{link_name}'; links: {', '.join(names)}")
        return [entity.link(link_name)]
    return entity.links() if all_links else [entity.link(_root_link(entity))]


def simulated_bodies(sim, targets: list) -> list:
    """The SimBodies of target entities; links without collision geometry have none (an error
    when a single link is named, skipped otherwise)."""
    bodies = []
    for target in targets:
        try:
            bodies.append(sim.body(target))
        except ValueError as error:
            if len(targets) == 1:
                raise RequestError(Result.OPERATION_FAILED, str(error)) from None
    if not bodies:
        robot = targets[0].getRobot().getName() if isinstance(targets[0], RobotModelLink) else ""
        raise RequestError(Result.OPERATION_FAILED, f"robot '{robot}' has no simulated bodies "
                           f"(no link has collision geometry)")
    return bodies


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
