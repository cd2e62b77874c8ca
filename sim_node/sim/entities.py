"""Entities of a simulation: finding them, their frame's motion, the bodies a request names,
and spawning and deleting them (atomic).

Entities are the world's terrains, rigid objects and robots, by their (unique) names, in world
ID order (terrains, rigid objects, robots).

Frame motion: an entity's frame is a robot's root link, a rigid object's object frame (the
frame of its URDF link or world-file entry, not its centre of mass) or a terrain's placement;
its twist is (w [rad/s], v [m/s]) in world axes, v the velocity of the frame's origin (not of
the centre of mass). Only floating-base robots and rigid objects can be moved; fixed-base
robots move by their joints, terrains are static.

Spawning (``spawn``): one URDF (a path or the XML text, or a parsed URDFRobot). A URDF of a
single link and no joints becomes a rigid object (it needs <collision> and a positive
<inertial> mass); any other URDF a robot, fixed-base when its root link is named ``world``.
Names are ROS name tokens ([A-Za-z_][A-Za-z0-9_]*: a robot's name is also its default
namespace and TF prefix). A robot's namespace is the requested one (relative; '/' for the root)
or, when that is empty, its name; two robots cannot share one, and no TF frame of a spawned
entity (a robot's link frames, a rigid object's name) may be a frame of the world already.
A spawn or delete that fails leaves the world and the Simulator exactly as they were.

Errors are EntityError (a ValueError) with a ``problem`` (Problem) saying what kind of
request it refuses, so that a front end (the ROS services) can give its own result codes.
"""
from __future__ import annotations

import enum
import re

import numpy as np
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.model.errors import ModelLoadError, URDFError
from sim_node.model.robot import Mass, RobotModel, RobotModelLink
from sim_node.model.settings import RobotSettings
from sim_node.model.urdf import URDFRobot, parse_urdf
from sim_node.model.world import RigidObjectModel, TerrainModel
from sim_node.sim.namespaces import (NAMESPACE_PATTERN, WORLD_FRAME, link_frame,
                                     namespace_owner)

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Problem(enum.Enum):
    """What makes an entity request fail."""
    NOT_FOUND = "not found"                     # no such entity, link, file or package
    INVALID = "invalid"                         # an argument that cannot be served
    STATIC = "static"                           # moving what cannot move
    NAME_INVALID = "name invalid"
    NAME_TAKEN = "name taken"
    NAMESPACE_INVALID = "namespace invalid"
    PARSE_ERROR = "parse error"                 # the model does not parse or is unusable
    MISSING_ASSETS = "missing assets"           # a mesh or package it names is not there
    UNSUPPORTED_ASSETS = "unsupported assets"   # its geometry cannot be simulated


class EntityError(ValueError):
    """A request on entities that cannot be served: `problem` (Problem) and a message saying
    what was wrong and what is valid."""

    def __init__(self, problem: Problem, message: str):
        super().__init__(message)
        self.problem = problem
        self.message = message


class Kind(enum.Enum):
    ROBOT = "robot"
    OBJECT = "rigid object"
    TERRAIN = "terrain"


# -- names and kinds -----------------------------------------------------------------------
def all_entities(world) -> list:
    """The world's terrains, rigid objects and robots, in world ID order."""
    return ([world.terrain(i) for i in range(world.numTerrains())]
            + [world.rigidObject(i) for i in range(world.numRigidObjects())]
            + [world.robot(i) for i in range(world.numRobots())])


def find_entity(world, name: str):
    for entity in all_entities(world):
        if entity.getName() == name:
            return entity
    raise EntityError(Problem.NOT_FOUND, f"no entity named '{name}'; entities: "
                      f"{', '.join(e.getName() for e in all_entities(world)) or 'none'}")


def kind_of(entity) -> Kind:
    if isinstance(entity, RobotModel):
        return Kind.ROBOT
    if isinstance(entity, TerrainModel):
        return Kind.TERRAIN
    return Kind.OBJECT


def root_link(robot) -> int:
    """The index of a robot's root link."""
    return int(np.flatnonzero(np.asarray(robot.structure.link_parent) < 0)[0])


# -- frame motion --------------------------------------------------------------------------
def xyzw(R) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix."""
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


def rotation(q_xyzw) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q_xyzw
    return quat2mat([w, x, y, z])


def frame_motion(sim, entity):
    """(R (3, 3), t (3,) [m], w (3,) [rad/s], v (3,) [m/s]) of the entity's frame now, in the
    world (v of the frame's origin)."""
    zero = np.zeros(3)
    if isinstance(entity, RobotModel):
        if entity.isFloatingBase():
            q, qd = sim.getActualConfig(entity), sim.getActualVelocity(entity)
            R = rotation(q[3:7])
            return R, q[0:3], R @ qd[3:6], R @ qd[0:3]   # base velocities: base frame -> world
        R, t = sim.getLinkTransforms(entity)
        root = root_link(entity)
        return R[root], t[root], zero, zero
    if isinstance(entity, RigidObjectModel):
        body = sim.body(entity)
        R, t = body.getObjectTransform()
        w, v_com = body.getVelocity()
        com = body.getTransform()[1]
        return R, t, w, v_com - np.cross(w, com - t)
    R, t = entity.getTransform()
    return R, t, zero, zero


def static_reason(entity) -> str | None:
    """Why an entity cannot be placed or given a velocity (None: it can)."""
    if isinstance(entity, TerrainModel):
        return f"'{entity.getName()}' is a terrain: it is static"
    if isinstance(entity, RobotModel) and not entity.isFloatingBase():
        return (f"robot '{entity.getName()}' has a fixed base: its joint commands move it, "
                f"not set_entity_state")
    return None


def set_frame_motion(sim, entity, pose=None, twist=None):
    """Place a movable entity's frame at pose (R, t) and/or give it twist (w, v) (world axes, v
    of the frame's origin); None keeps that part. EntityError (STATIC) for a static entity;
    values are the caller's to validate (sim_node.sim.bounds)."""
    reason = static_reason(entity)
    if reason is not None:
        raise EntityError(Problem.STATIC, f"{reason}: it cannot be moved or given a velocity")
    if isinstance(entity, RobotModel):
        q, qd = sim.getActualConfig(entity), sim.getActualVelocity(entity)
        if pose is not None:
            q[0:3], q[3:7] = pose[1], xyzw(pose[0])
        if twist is not None:
            R = rotation(q[3:7])
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


# -- the bodies a request names --------------------------------------------------------------
def target_links(world, entity_name: str, link_name: str = "", all_links: bool = False) -> list:
    """The body entities a request names: a rigid object or terrain, a robot's link, or (empty
    link) a robot's root link or, with all_links, all its links."""
    entity = find_entity(world, entity_name)
    if not isinstance(entity, RobotModel):
        if link_name:
            raise EntityError(Problem.INVALID, f"'{entity_name}' is not a robot: it has no "
                              f"links (leave link empty)")
        return [entity]
    if link_name:
        names = [link.getName() for link in entity.links()]
        if link_name not in names:
            raise EntityError(Problem.NOT_FOUND, f"robot '{entity_name}' has no link "
                              f"'{link_name}'; links: {', '.join(names)}")
        return [entity.link(link_name)]
    return entity.links() if all_links else [entity.link(root_link(entity))]


def simulated_bodies(sim, targets: list) -> list:
    """The SimBodies of target entities; links without collision geometry have none (an error
    when a single link is named, skipped otherwise)."""
    bodies = []
    for target in targets:
        try:
            bodies.append(sim.body(target))
        except ValueError as error:
            if len(targets) == 1:
                raise EntityError(Problem.INVALID, str(error)) from None
    if not bodies:
        robot = targets[0].getRobot().getName() if isinstance(targets[0], RobotModelLink) else ""
        raise EntityError(Problem.INVALID, f"robot '{robot}' has no simulated bodies (no link "
                          f"has collision geometry)")
    return bodies


# -- spawning and deleting ---------------------------------------------------------------------
def model_error(error: Exception, where: str = "") -> EntityError:
    """The EntityError of a model that cannot be loaded (missing or unusable assets, or a
    model that does not parse)."""
    problem = getattr(error, "problem", "")
    if problem.startswith(("mesh file not found", "cannot locate package")):
        kind = Problem.MISSING_ASSETS
    elif problem.startswith("mesh "):
        kind = Problem.UNSUPPORTED_ASSETS
    else:
        kind = Problem.PARSE_ERROR
    return EntityError(kind, f"{where}{error}")


def parse_spawnable(source: str, substitutions: bool = True, where: str = "") -> URDFRobot:
    """The parsed URDF of a spawn source (a path or the XML text); EntityError for a bad model.
    substitutions False refuses substitution args ($(env ...), $(find ...)): for a client's
    source. where: prefixes error messages (the request field)."""
    try:
        return parse_urdf(source, substitutions=substitutions)
    except ModelLoadError as error:
        raise model_error(error, where) from None


def is_rigid_object(urdf) -> bool:
    return len(urdf.links) == 1 and not urdf.joints


def spawn_name(taken: set, requested: str, model_name: str, allow_renaming: bool) -> str:
    """The name of a spawned entity: `requested`, else the model's; when that is empty, invalid
    or taken, a generated one if allow_renaming."""
    if requested:
        if not NAME_PATTERN.match(requested):
            raise EntityError(Problem.NAME_INVALID, f"name '{requested}' is not valid: names "
                              f"are [A-Za-z_][A-Za-z0-9_]*")
        if requested not in taken:
            return requested
        if not allow_renaming:
            raise EntityError(Problem.NAME_TAKEN, f"name '{requested}' is taken (set "
                              f"allow_renaming to get a generated one)")
        base = requested
    else:
        if NAME_PATTERN.match(model_name) and model_name not in taken:
            return model_name
        if not allow_renaming:
            if model_name in taken:
                raise EntityError(Problem.NAME_TAKEN, f"name empty and the model's name "
                                  f"'{model_name}' is taken (give a name or set "
                                  f"allow_renaming)")
            raise EntityError(Problem.NAME_INVALID, f"name empty and the model's name "
                              f"'{model_name}' is not valid ([A-Za-z_][A-Za-z0-9_]*); give a "
                              f"name or set allow_renaming")
        base = re.sub(r"[^A-Za-z0-9_]", "_", model_name)
        if not NAME_PATTERN.match(base):
            base = f"entity_{base}"
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def spawn_namespace(world, requested: str, name: str) -> str:
    """A spawned robot's namespace, relative ('' for the root): `requested` ('/' the root), or
    its name when `requested` is empty; not one of another robot."""
    if requested == "":
        namespace = name
    elif requested == "/":
        namespace = ""
    elif requested.removeprefix("/") and NAMESPACE_PATTERN.match(requested.removeprefix("/")):
        namespace = requested.removeprefix("/")
    else:
        raise EntityError(Problem.NAMESPACE_INVALID, f"entity_namespace '{requested}' is not a "
                          f"valid ROS namespace (tokens [A-Za-z_][A-Za-z0-9_]* separated by "
                          f"'/'; '/' for none)")
    owner = namespace_owner(world, namespace)
    if owner is not None:
        raise EntityError(Problem.NAMESPACE_INVALID, f"namespace '/{namespace}' is used by "
                          f"robot '{owner.getName()}'")
    return namespace


def tf_frames(world) -> set:
    """The TF frame names of the world and its entities (sim_node/sim/namespaces.py)."""
    frames = {WORLD_FRAME} | {e.getName() for e in all_entities(world)
                              if not isinstance(e, RobotModel)}
    for r in range(world.numRobots()):
        robot = world.robot(r)
        frames |= {link_frame(robot, i) for i in range(len(robot.structure.link_names))}
    return frames


def check_frames(world, urdf, name: str, namespace: str):
    """The TF frames of a spawned entity must not be frames of the world already: a rigid
    object's frame is its name; a robot's link frames are ``<namespace>/<link>``, with
    namespace '' the bare link names."""
    if is_rigid_object(urdf):
        if name in tf_frames(world):
            raise EntityError(Problem.NAME_INVALID, f"name '{name}' is a TF frame of the world "
                              f"already (a rigid object's frame is its name)")
        return
    prefix = f"{namespace}/" if namespace else ""
    clashes = sorted({prefix + link for link in urdf.links} & tf_frames(world))
    if clashes:
        raise EntityError(Problem.NAMESPACE_INVALID, f"entity_namespace: the link frames "
                          f"{', '.join(clashes)} would be TF frames of the world already; give "
                          f"the robot a namespace of its own")


def build_spawned(world, urdf, name: str, namespace: str, R, t, where: str = ""):
    """The robot or rigid object of a parsed URDF, placed at (R, t), not yet in the world."""
    try:
        if not is_rigid_object(urdf):
            # through the world's loader: its inertia repairs and base rule apply as for a file
            robot = world.makeRobot(urdf, None, name=name, R=R, t=t)
            robot.settings = RobotSettings(namespace=namespace)
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
        raise model_error(error, where) from None


def spawn(sim, source, *, name: str = "", namespace: str = "", R=None, t=None,
          allow_renaming: bool = False, substitutions: bool = True, where: str = ""):
    """Add the robot or rigid object of a URDF (a path, the XML text, or a parsed URDFRobot) to
    the simulation at (R (3, 3), t (3,) [m]) (default: the origin) and return it. Its name and
    namespace follow the module docstring. Atomic: on EntityError nothing has changed.
    where: prefixes model errors (the request field)."""
    urdf = source if isinstance(source, URDFRobot) else parse_spawnable(source, substitutions,
                                                                        where)
    R = np.eye(3) if R is None else R
    t = np.zeros(3) if t is None else t
    world = sim.getWorld()
    name = spawn_name({e.getName() for e in all_entities(world)}, name, urdf.name,
                      allow_renaming)
    namespace = "" if is_rigid_object(urdf) else spawn_namespace(world, namespace, name)
    check_frames(world, urdf, name, namespace)
    entity = build_spawned(world, urdf, name, namespace, R, t, where)
    try:
        sim.addEntity(entity)
    except ValueError as error:     # its geometry: nothing was added
        raise EntityError(Problem.UNSUPPORTED_ASSETS, f"{where}{error}") from None
    return entity


def delete(sim, name: str):
    """Remove the entity named `name` (any kind) from the simulation; it is returned."""
    entity = find_entity(sim.getWorld(), name)
    sim.removeEntity(entity)
    return entity
