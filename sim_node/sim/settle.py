"""settle: push one object along a direction until it comes to rest on the frozen world
(seed 000, Klamp't's ``klampt.sim.settle``). Useful to build stable piles and placements.

How the rest of the world is frozen: settling runs in a separate WorldModel built for it, so the
caller's world is never modified. In it, every other entity is a terrain (static: it cannot move
and frozen bodies never collide with each other): terrains as they are, every other rigid object
and every link with collision geometry of every other robot at its current world transform.
Their convex meshes are replaced by triangle meshes of their convex hulls, the surface they
collide with in a Simulator (moving bodies' meshes collide as convex hulls there).

The settling run is quasi-static. Gravity is off; the object is pushed by its weight, a force of
magnitude m · 9.81 N along the (possibly perturbed) force direction, applied at ``forcept``.
Every iteration starts from rest: the object is given the velocity that this force and the
torques (force lever, orientation spring) would build up from rest over one step of length h,
i.e. v = h F / m and w = h I⁻¹ τ, and is simulated for h with contact. In free space it thus
moves s = 9.81 h² per step, with s = 10 · settletol clipped to [1 mm, 10 cm]. Contacts stop it
the way the simulator's boundary layer does: rigid contacts rest at the engine's rest gap,
REST_GAP_FRACTION = 10 % of the summed paddings, so a settled object is at equilibrium when the
caller puts it into a Simulator of its world. Restitution is switched off for the run.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import replace
from functools import lru_cache

import numpy as np
from scipy.spatial.transform import Rotation

from sim_node.model import geometry as geo
from sim_node.model.contact import ContactPoint
from sim_node.model.robot import Mass, RobotModel, RobotModelLink
from sim_node.model.urdf import GeometryElement, Origin
from sim_node.model.world import (BodySettings, RigidObjectModel, SimulationParameters,
                                  TerrainModel, WorldModel)
from sim_node.sim.simulator import STATUS_UNSTABLE, Simulator

SETTLE_ACCELERATION = 9.81      # [m/s^2] the settling force is m times this
MIN_STEP_TRAVEL = 1e-3          # [m] free travel per iteration, at least ...
MAX_STEP_TRAVEL = 0.1           # [m] ... and at most
STEP_TRAVEL_PER_TOL = 10.0      # free travel per iteration in units of settletol
EXTRA_ITERATIONS = 1000         # iterations allowed beyond 4x the free travel to ||forcedir||
MOVING_NAME = "settling"        # the settling object in the settling world


def settle(world, obj, forcedir=(0.0, 0.0, -1.0), forcept=(0.0, 0.0, 0.0), settletol=1e-4,
           orientationDamping=0.0, perturb=0.0, margin=None, debug=False, rng=None):
    """Push `obj` along `forcedir` until it rests against the (frozen) rest of `world`.

    Args:
        world: the WorldModel holding obj; it is not modified.
        obj: a RigidObjectModel, a floating-base RobotModel, or a link of one (the robot moves
            as one rigid body, its joints held at their current configuration), or a link of a
            fixed-base robot (as in Klamp't: the link alone moves, a free body of its geometry
            and mass; its robot is left out of the settling world).
        forcedir: (3,) direction of the push; its length [m] is the farthest the force point
            may travel along it.
        forcept: (3,) the point the force acts at, in the object's (link's; for a RobotModel
            the root link's) local coordinates [m].
        settletol: [m] settled when, in contact, no point of the object moved further than
            this in one iteration (bound: com motion + rotation angle x the object's radius
            about its com).
        orientationDamping: [N m/rad] stiffness k of a torsional spring holding the initial
            orientation R0: torque -k · rotvec(R R0ᵀ), world axes.
        perturb: each iteration the force direction is u + w, w drawn uniformly from the disk
            of radius `perturb` perpendicular to u: a cone of half-angle atan(perturb) (1: 45°).
        margin: [m] boundary-layer padding of obj during settling (None: its current padding);
            at least settletol.
        debug: accepted for Klamp't compatibility and ignored (no visualisation here).
        rng: numpy Generator for `perturb` (None: np.random.default_rng(0), reproducible).

    Returns:
        (transform, touched): transform = (R (3, 3), t (3,)) of obj's frame at rest, or None
        when its force point travelled ||forcedir|| without touching anything; touched = dict
        world ID -> list of ContactPoint (normals pointing into obj) of the contacts with that
        entity at the end. If obj is still moving when it reaches the travel limit or the
        iteration limit, the transform where it stopped is returned with a RuntimeWarning.

    Raises:
        ValueError: bad arguments, obj not in world, a whole fixed-base robot, or obj starting in
            collision: its real geometry (inside the boundary layers) overlapping another
            entity's, named in the message. Touching within the layers is allowed, so an
            object resting on another can be settled again.
    """
    del debug   # no visualisation
    if not isinstance(world, WorldModel):
        raise TypeError(f"settle: world must be a WorldModel, got {type(world).__name__}")
    forcedir = _vector(forcedir, "forcedir")
    distance = float(np.linalg.norm(forcedir))
    if distance == 0.0:
        raise ValueError("settle: forcedir must be nonzero (its direction is the push, its "
                         "length the farthest travel [m])")
    forcept = _vector(forcept, "forcept")
    settletol = _nonnegative(settletol, "settletol")
    if settletol == 0.0:
        raise ValueError("settle: settletol must be a positive length [m], got 0")
    stiffness = _nonnegative(orientationDamping, "orientationDamping")
    perturb = _nonnegative(perturb, "perturb")
    if margin is not None:
        margin = _nonnegative(margin, "margin")
        if margin < settletol:
            raise ValueError(f"settle: margin ({margin}) must be at least settletol "
                             f"({settletol})")
    if rng is None:
        rng = np.random.default_rng(0)
    elif not isinstance(rng, np.random.Generator):
        raise TypeError(f"settle: rng must be a numpy Generator, got {type(rng).__name__}")

    moving = _moving_body(world, obj)
    run = _SettlingRun(world, moving, margin, stiffness, _step_length(settletol))
    run.check_start()
    return run.settle(forcedir / distance, distance, forcept, settletol, stiffness, perturb,
                      rng)


def _vector(x, what: str) -> np.ndarray:
    a = np.array(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"settle: {what} must be 3 finite numbers, got {x!r}")
    return a


def _nonnegative(x, what: str) -> float:
    x = float(x)
    if not (math.isfinite(x) and x >= 0.0):
        raise ValueError(f"settle: {what} must be a finite number >= 0, got {x}")
    return x


def _step_length(settletol: float) -> float:
    """h [s]: one iteration's free travel 9.81 h² is 10 settletol, clipped to [1 mm, 10 cm]."""
    travel = min(max(STEP_TRAVEL_PER_TOL * settletol, MIN_STEP_TRAVEL), MAX_STEP_TRAVEL)
    return math.sqrt(travel / SETTLE_ACCELERATION)


class _MovingBody:
    """The settling object as one rigid body, in a frame F (object frame; a robot's root link).

    elements: collision geometry in F; mass: Mass in F; R_WF, p_WF: F in the world;
    R_FL, p_FL: the frame reported to the caller (obj's own frame) in F; ids: the world IDs
    that move with it; settings: its BodySettings.
    """

    def __init__(self, name, elements, mass, R_WF, p_WF, R_FL, p_FL, ids, settings):
        self.name, self.elements, self.mass = name, tuple(elements), mass
        self.R_WF, self.p_WF, self.R_FL, self.p_FL = R_WF, p_WF, R_FL, p_FL
        self.ids, self.settings = frozenset(ids), settings


def _in_world(world: WorldModel, entity) -> bool:
    id_ = entity.getID()
    return 0 <= id_ < world.numIDs() and world.getEntity(id_) is entity


def _moving_body(world: WorldModel, obj) -> _MovingBody:
    if isinstance(obj, RigidObjectModel):
        if not _in_world(world, obj):
            raise ValueError(f"settle: {obj!r} is not in the given world")
        R, t = obj.getTransform()
        return _MovingBody(obj.getName(), obj.getCollisionGeometry(), obj.getMass(), R, t,
                           np.eye(3), np.zeros(3), [obj.getID()], obj.settings)
    if isinstance(obj, (RobotModel, RobotModelLink)):
        robot = obj if isinstance(obj, RobotModel) else obj.getRobot()
        if not _in_world(world, robot) or not _in_world(world, obj):
            raise ValueError(f"settle: {obj!r} is not in the given world")
        if not robot.isFloatingBase():
            if isinstance(obj, RobotModelLink):
                return _link_body(robot, obj)
            raise ValueError(f"settle: robot '{robot.getName()}' has a fixed base and cannot "
                             f"move; settle a floating-base robot, or one link of this robot "
                             f"(it settles alone, as Klamp't does)")
        return _robot_body(robot, obj if isinstance(obj, RobotModelLink) else None)
    raise TypeError(f"settle: obj must be a RigidObjectModel, a floating-base RobotModel or "
                    f"a robot link, got {type(obj).__name__}")


def _link_body(robot: RobotModel, link: RobotModelLink) -> _MovingBody:
    """Klamp't's settle of a link of a fixed-base robot: the link alone, a free rigid body of
    its collision geometry and mass at its current transform; its robot (every link) is left
    out of the settling world, so only other entities stop it."""
    elements = link.getCollisionGeometry()
    if link.getMass().getMass() <= 0.0 or not elements:
        raise ValueError(f"settle: link '{link.getName()}' of robot '{robot.getName()}' needs "
                         f"mass and collision geometry to be settled")
    R_WL, p_WL = link.getTransform()
    ids = [robot.getID()] + [robot.link(i).getID() for i in range(robot.numLinks())]
    return _MovingBody(f"{robot.getName()}/{link.getName()}", elements, link.getMass(), R_WL,
                       p_WL, np.eye(3), np.zeros(3), ids, robot.settings.body)


def _robot_body(robot: RobotModel, link: RobotModelLink | None) -> _MovingBody:
    """A floating-base robot frozen at its configuration as one rigid body in its root frame:
    link geometries re-expressed in the root frame, link masses combined (parallel axes)."""
    root = next(i for i in range(robot.numLinks()) if robot.link(i).getParent() < 0)
    R_WF, p_WF = robot.link(root).getTransform()
    elements, masses, coms, inertias = [], [], [], []
    for i in range(robot.numLinks()):
        R_WL, p_WL = robot.link(i).getTransform()
        R_FL, p_FL = R_WF.T @ R_WL, R_WF.T @ (p_WL - p_WF)
        for e in robot.link(i).getCollisionGeometry():
            elements.append(GeometryElement(Origin(R_FL @ e.origin.R, p_FL + R_FL @ e.origin.p),
                                            e.shape, e.name))
        m = robot.link(i).getMass()
        if m.getMass() > 0.0:
            masses.append(m.getMass())
            coms.append(p_FL + R_FL @ m.getCom())
            inertias.append(R_FL @ m.inertiaMatrix() @ R_FL.T)
    total = float(sum(masses))
    if total <= 0.0 or not elements:
        raise ValueError(f"settle: robot '{robot.getName()}' needs mass and collision geometry "
                         f"to be settled")
    com = sum(m * c for m, c in zip(masses, coms)) / total
    inertia = sum(I + m * (np.dot(c - com, c - com) * np.eye(3) - np.outer(c - com, c - com))
                  for m, c, I in zip(masses, coms, inertias))
    report = robot.link(root) if link is None else link
    R_WL, p_WL = report.getTransform()
    settings = robot.settings.body
    ids = [robot.getID()] + [robot.link(i).getID() for i in range(robot.numLinks())]
    return _MovingBody(robot.getName(), elements, Mass(total, com, inertia), R_WF, p_WF,
                       R_WF.T @ R_WL, R_WF.T @ (p_WL - p_WF), ids, settings)


def _frozen_settings(settings: BodySettings) -> BodySettings:
    return BodySettings(surface=replace(settings.surface, kRestitution=0.0),
                        padding=settings.padding)


def _frozen(world_id: int, elements, R, t, settings: BodySettings) -> TerrainModel:
    """A frozen entity: a terrain with its geometry at its current world transform."""
    terrain = TerrainModel(f"id{world_id}", elements, R, t)
    terrain.settings = _frozen_settings(settings)
    return terrain


def _hulls(elements) -> tuple:
    """Moving bodies' meshes collide as their convex hulls (model/scene.py), terrain meshes as
    triangle meshes: a frozen body's convex meshes become triangle meshes of their hulls."""
    return tuple(replace(e, shape=_hull(e.shape))
                 if isinstance(e.shape, geo.Mesh) and not e.shape.concave else e
                 for e in elements)


@lru_cache(maxsize=256)
def _hull(mesh: geo.Mesh) -> geo.Mesh:
    import trimesh

    hull = trimesh.Trimesh(vertices=mesh.vertices, faces=mesh.faces, process=False).convex_hull
    # its own path: the engine shares meshes by (path, scale, kind)
    return geo.Mesh(path=f"{mesh.path}#convex-hull", scale=mesh.scale,
                    vertices=np.asarray(hull.vertices, dtype=float),
                    faces=np.asarray(hull.faces, dtype=np.int64))


class _SettlingRun:
    """The settling world, its Simulator, and the quasi-static iteration."""

    def __init__(self, world: WorldModel, moving: _MovingBody, margin, stiffness: float,
                 h: float):
        self.world, self.moving, self.h = world, moving, h
        settle_world = WorldModel()
        settle_world.simulation = SimulationParameters(
            physics_dt=h, gravity=(0.0, 0.0, 0.0), padding=world.simulation.padding,
            max_contacts=world.simulation.max_contacts)
        frozen = {}          # settling-world terrain -> original world ID
        for i in range(world.numTerrains()):
            terrain = world.terrain(i)
            frozen[_frozen(terrain.getID(), terrain.getCollisionGeometry(),
                           *terrain.getTransform(), terrain.settings)] = terrain.getID()
        for i in range(world.numRigidObjects()):
            other = world.rigidObject(i)
            if other.getID() not in moving.ids:
                frozen[_frozen(other.getID(), _hulls(other.getCollisionGeometry()),
                               *other.getTransform(), other.settings)] = other.getID()
        for r in range(world.numRobots()):
            robot = world.robot(r)
            if robot.getID() in moving.ids:
                continue
            settings = robot.settings.body
            for l in range(robot.numLinks()):
                link = robot.link(l)
                if link.getCollisionGeometry():
                    frozen[_frozen(link.getID(), _hulls(link.getCollisionGeometry()),
                                   *link.getTransform(), settings)] = link.getID()
        for entity in frozen:
            settle_world.add(entity)
        # the settling copy: mass m; rotational inertia stiffened by k h² so that the
        # orientation spring relaxes without overshoot (rotation per step h² k / I' < 1); the
        # quasi-static rest pose does not depend on the inertia
        inertia = moving.mass.inertiaMatrix() + stiffness * h * h * np.eye(3)
        body = RigidObjectModel(MOVING_NAME, moving.elements,
                                Mass(moving.mass.getMass(), moving.mass.getCom(), inertia),
                                moving.R_WF, moving.p_WF)
        settings = _frozen_settings(moving.settings)
        if margin is not None:
            settings.padding = margin
        body.settings = settings
        settle_world.add(body)
        self.body_model = body
        self.frozen_ids = {e.getID(): world_id for e, world_id in frozen.items()}
        sim = Simulator(settle_world)
        sim.enableContactFeedbackAll()
        self.sim = sim
        self.body = sim.body(body)
        self.mass = moving.mass.getMass()
        self.inertia_inv = np.linalg.inv(inertia)
        self.radius = _radius(moving.elements, moving.mass.getCom())

    def _names(self, settle_ids) -> str:
        return ", ".join(f"{self.world.getName(self.frozen_ids[i])} (ID {self.frozen_ids[i]})"
                         for i in settle_ids)

    def check_start(self):
        """ValueError if the object's real geometry overlaps a frozen entity's now."""
        self.body.setVelocity(np.zeros(3), np.zeros(3))
        self.sim.simulate(self.h)
        me = self.body_model.getID()
        hits = [i for i in self.frozen_ids if self.sim.hadPenetration(me, i)]
        if hits:
            raise ValueError(f"settle: '{self.moving.name}' starts in "
                             f"collision with {self._names(hits)}: its geometry overlaps theirs; "
                             f"move it clear (touching within the boundary layers is allowed)")
        self.sim.reset()

    def _touching(self) -> list:
        me = self.body_model.getID()
        return [i for i in self.frozen_ids if self.sim.inContact(me, i)]

    def settle(self, u, distance, forcept, settletol, stiffness, perturb, rng):
        sim, body, h, m = self.sim, self.body, self.h, self.mass
        moving = self.moving
        p_F = moving.R_FL @ forcept + moving.p_FL        # force point in frame F
        R0 = moving.R_WF
        start = R0 @ p_F + moving.p_WF
        free_travel = SETTLE_ACCELERATION * h * h
        max_iterations = 4 * math.ceil(distance / free_travel) + EXTRA_ITERATIONS
        R_com, p_com = body.getTransform()
        settled = False
        still = False       # the last iteration moved less than settletol, in contact
        for _ in range(max_iterations):
            # a rest seen under a perturbed push is confirmed by one unperturbed iteration
            direction = u if perturb == 0.0 or still else _perturbed(u, perturb, rng)
            force = m * SETTLE_ACCELERATION * direction
            R_WF, p_WF = body.getObjectTransform()
            torque = np.cross(R_WF @ p_F + p_WF - p_com, force)
            if stiffness > 0.0:
                torque -= stiffness * Rotation.from_matrix(R_WF @ R0.T).as_rotvec()
            I_inv = R_com @ self.inertia_inv @ R_com.T
            body.setVelocity(h * (I_inv @ torque), h * force / m)
            sim.simulate(h)
            if sim.getStatus() == STATUS_UNSTABLE:
                raise RuntimeError(f"settle: the settling simulation became unstable "
                                   f"({sim.getStatusString()})")
            R_next, p_next = body.getTransform()
            angle = Rotation.from_matrix(R_next @ R_com.T).magnitude()
            motion = float(np.linalg.norm(p_next - p_com)) + angle * self.radius
            R_com, p_com = R_next, p_next
            if motion < settletol and self._touching():
                if still or perturb == 0.0:
                    settled = True
                    break
                still = True
                continue
            still = False
            R_WF, p_WF = body.getObjectTransform()
            if np.dot(R_WF @ p_F + p_WF - start, u) >= distance:
                if not self._touching():
                    return None, {}
                break
        body.setVelocity(np.zeros(3), np.zeros(3))
        if not settled:
            warnings.warn(f"settle: '{moving.name}' was still moving when it stopped (travel "
                          f"limit {distance} m or {max_iterations} iterations); returning where "
                          f"it is", RuntimeWarning, stacklevel=3)
        R_WF, p_WF = body.getObjectTransform()
        transform = (R_WF @ moving.R_FL, R_WF @ moving.p_FL + p_WF)
        me = self.body_model.getID()
        touched = {self.frozen_ids[i]: [ContactPoint(row[0:3], row[3:6], row[6])
                                        for row in sim.getContacts(me, i)]
                   for i in self._touching()}
        return transform, touched


def _perturbed(u, perturb, rng) -> np.ndarray:
    """u tilted by w, uniform on the disk of radius perturb perpendicular to u (unit result)."""
    helper = np.eye(3)[np.argmin(np.abs(u))]
    e1 = np.cross(u, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    radius = perturb * math.sqrt(rng.random())
    angle = 2.0 * math.pi * rng.random()
    d = u + radius * (math.cos(angle) * e1 + math.sin(angle) * e2)
    return d / np.linalg.norm(d)


def _radius(elements, com) -> float:
    """Radius of the geometry about the point com [m] (all in one frame)."""
    return max(_element_radius(e, com) for e in elements)


def _element_radius(element, com) -> float:
    shape = element.shape
    centre = float(np.linalg.norm(element.origin.p - com))
    if isinstance(shape, geo.Sphere):
        return centre + shape.radius
    if isinstance(shape, geo.Cylinder):
        return centre + math.hypot(shape.radius, shape.length / 2)
    if isinstance(shape, geo.Capsule):
        return centre + shape.length / 2 + shape.radius
    if isinstance(shape, geo.Box):
        half = np.array(shape.size) / 2
        points = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1)
                           for sz in (-1, 1)]) * half
    elif isinstance(shape, geo.Mesh):
        points = shape.vertices
    else:
        raise ValueError(f"settle: a {type(shape).__name__} cannot be part of a moving object")
    points = points @ element.origin.R.T + element.origin.p
    return float(np.linalg.norm(points - com, axis=1).max())
