"""Simulator: steps a WorldModel with the engine (seed 002's Simulator API).

The simulation state lives in the engine Scene (built from the world when the Simulator is
made); the WorldModel stays as it was until ``updateWorld()`` copies the simulated state back.

Time: ``simulate(dt)`` advances by dt in substeps of at most ``setSimStep`` (the world file's
``physics_dt`` by default), all inside the engine. Robot controllers command the engine's
actuators (PID, torque, velocity) and hold their commands between calls; a controller running
a motion queue (milestones, cubic or linear segments) re-evaluates it at its own rate
(``setRate``), which is independent of the physics step.

Status: a step that blows up (NaN, or a coordinate moving more than 0.5 m or rad in one step)
is undone and retried as two half steps, down to 1/32 of the step; ``getStatus()`` reports the
worst of the last ``simulate`` call (STATUS_ADAPTIVE_TIME_STEPPING when halving was needed,
STATUS_UNSTABLE when even the smallest step failed: the state then stays at the last good step
and time does not advance past it).
"""
from __future__ import annotations

import json
import math
import struct

import numpy as np

from sim_node.engine.api import Status
from sim_node.model.robot import RobotModel, RobotModelLink, normalized_config
from sim_node.model.scene import build_scene, constraint_specs
from sim_node.model.world import RigidObjectModel, TerrainModel, WorldModel
from sim_node.sim import bounds, entities
from sim_node.sim.entities import all_entities as _entities
from sim_node.sim.reset import ResetScope, WorldOrigin, reset_scope
from sim_node.sim.reset import model_state as _model_state
from sim_node.sim.reset import restore_model_state as _set_model_state

# the engine's status codes (defined once, engine/types.pxd), as module constants
STATUS_NORMAL = int(Status.NORMAL)
STATUS_ADAPTIVE_TIME_STEPPING = int(Status.ADAPTIVE_TIME_STEPPING)
STATUS_CONTACT_UNRELIABLE = int(Status.CONTACT_UNRELIABLE)
STATUS_UNSTABLE = int(Status.UNSTABLE)
STATUS_ERROR = int(Status.ERROR)
STATUS_STRINGS = {
    STATUS_NORMAL: "normal",
    STATUS_ADAPTIVE_TIME_STEPPING: "adaptive time stepping",
    STATUS_CONTACT_UNRELIABLE: "contact unreliable",
    STATUS_UNSTABLE: "unstable",
    STATUS_ERROR: "error",
}

_STATE_MAGIC = b"SIMNODE1"
UNIT_QUATERNION_TOLERANCE = 1e-6    # accepted |norm - 1| of a restored state's quaternions


def _command_arrays(scene) -> list:
    # (name, per-robot arrays) of everything the engine holds of a robot's actuators
    return [("mode", scene.robot_mode), ("tau_ff", scene.robot_tau_ff),
            ("kp", scene.robot_kp), ("ki", scene.robot_ki), ("kd", scene.robot_kd),
            ("q_des", scene.robot_q_des), ("v_des", scene.robot_v_des),
            ("iterm", scene.robot_iterm), ("advance", scene.robot_advance)]


class Simulator:
    """Simulates a WorldModel: robots with actuators, rigid objects, terrains, contact."""

    def __init__(self, world: WorldModel):
        from sim_node.sim.controller import SimRobotController

        if not isinstance(world, WorldModel):
            raise TypeError(f"Simulator needs a WorldModel, got {type(world).__name__}")
        self._world = world
        try:
            self._layout = build_scene(world)
        except Exception as error:      # noqa: BLE001 (geometry libraries raise their own)
            raise ValueError(f"the world cannot be simulated: {geometry_problem(error)}") \
                from None
        self._scene = self._layout.scene
        self._constraint_uids = [c.uid for c in world.constraints()]
        self._check_surfaces()
        self._sim_dt = float(world.simulation.physics_dt)
        self._status = STATUS_NORMAL
        self._bodies = {}
        self._object_rows = None    # (scene, free_state rows, COMs) of the rigid objects
        self._pending = {}          # world ID -> wrench [fx fy fz tx ty tz] at its com (world)
        self._held_tau = {}         # robot -> (nv) generalized forces under the wrenches
        self._wrench_version = 0    # counts add_wrench calls
        self._feedback_all = False
        self._feedback_pairs = set()
        self._query_face = None
        # the controllers whose motion queue needs evaluation, in robot order (written by
        # SimRobotController when a queue starts or ends; public: the controllers go through it)
        self.ticking = []
        self._qdata = {}
        self._controllers = [SimRobotController(self, r) for r in range(world.numRobots())]
        self.count_sensors()
        self._initial_state = self.getState()
        # the model state each entity started from (spawned ones: their state at spawning),
        # for reset() once entities have been added or removed
        self._initial_entities = {id(e): (e, _model_state(e)) for e in _entities(world)}
        self._origin = WorldOrigin(_entities(world))     # what reset(SPAWNED) puts back

    def _check_surfaces(self):
        # the world's surface parameters within the bounds (sim_node.sim.bounds.surface): a
        # compliant layer with neither spring nor damper would give NaN at the first contact
        from sim_node.model.surface import SurfaceParameters

        for b, id_ in enumerate(self._layout.id_of_body):
            r, f, k, c = self._scene.get_body_surface(b)
            try:
                bounds.surface(SurfaceParameters(r, f, k, c),
                               f"the surface of {self._world.getName(id_)}")
            except ValueError as error:
                raise ValueError(f"the world cannot be simulated: {error}") from None

    # -- world and settings ----------------------------------------------------------------
    def getWorld(self) -> WorldModel:
        return self._world

    def updateWorld(self):
        """Copy the simulated state (robot configurations and velocities, object transforms and
        velocities) into the WorldModel."""
        scene = self._scene
        for r in range(self._world.numRobots()):
            robot = self._world.robot(r)
            robot.setConfig(scene.robot_q[r])
            robot.setVelocity(scene.robot_v[r])
        for i, f in self._layout.free_of_object.items():
            obj = self._world.rigidObject(i)
            R, t, w, v = self.body(obj)._object_state()
            obj.setTransform(R, t)
            obj.setVelocity(w, v)

    def setSimStep(self, dt: float):
        """Longest physics substep [s]; simulate(dt) takes ceil(dt / this) equal substeps."""
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"setSimStep: the step must be a positive time, got {dt}")
        self._sim_dt = dt

    def getSimStep(self) -> float:
        return self._sim_dt

    def setGravity(self, g):
        """Gravity g [m/s^2] (3), each component within +-MAX_GRAVITY (sim_node.sim.bounds)."""
        self._scene.set_gravity(bounds.bounded(g, bounds.MAX_GRAVITY, "setGravity", "m/s^2",
                                               (3,)))

    def getGravity(self) -> np.ndarray:
        return self._scene.get_gravity()

    # -- stepping --------------------------------------------------------------------------
    def simulate(self, dt: float):
        """Advance the simulation by dt [s]."""
        h, n = self._begin_simulate(dt)
        self._advance(h, n)
        self._end_simulate()

    # simulate() in three parts, for subclasses that run code between the substeps
    def _begin_simulate(self, dt: float):
        """Validate dt, open the status and contact-feedback window, apply the held forces;
        returns the substep length h and count n."""
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"simulate: dt must be a positive time, got {dt}")
        scene = self._scene
        scene.clear_status()
        if self._feedback_all or self._feedback_pairs:
            scene.begin_feedback_window()
        n = max(1, math.ceil(dt / self._sim_dt - 1e-9))
        if self._pending:
            self._apply_pending()
        return dt / n, n

    def count_sensors(self):
        """Recount the robots' sensors (sim_node.sim.sensors; the controllers call it when
        they add one): a world without sensors steps without looking for them."""
        self._has_sensors = any(c._sensors for c in self._controllers)

    def _advance(self, h: float, n: int):
        """n physics substeps of h [s] (stops early if the simulation became unstable)."""
        sensors = self._has_sensors and [s for c in self._controllers for s in c._sensors
                                         if s.getEnabled()]
        if sensors:
            self._step_sensing(h, n, sensors)
        elif not self.ticking:
            self._scene.step(h, n)
        else:
            self._step_ticking(h, n)

    def _step_sensing(self, h: float, n: int, sensors: list):
        # substeps split at the control ticks and at the update times of the sensors with a
        # rate (sim_node.sim.sensors); sensors of rate 0 update at the end
        scene = self._scene
        done = 0
        while True:
            t = scene.time
            for s in sensors:
                if s._due(t):
                    s._update(t)
            if done >= n or scene.status == STATUS_UNSTABLE:
                break
            for c in list(self.ticking):
                c._tick(t)
            events = [c._next_tick for c in self.ticking]
            events += [s._next for s in sensors if s._values["rate"] > 0.0]
            m = n - done
            if events:
                m = min(m, max(1, math.ceil((min(events) - t) / h - 1e-9)))
            scene.step(h, m)
            done += m
        for s in sensors:
            if s._values["rate"] == 0.0:
                s._update(scene.time)

    def _end_simulate(self):
        if self._pending:
            self._clear_pending()
        self._status = self._scene.status

    def _step_ticking(self, h: float, n: int):
        # substeps split at the control ticks of the controllers running motion queues
        scene = self._scene
        done = 0
        while done < n and scene.status != STATUS_UNSTABLE:
            t = scene.time
            for c in list(self.ticking):
                c._tick(t)
            if not self.ticking:
                scene.step(h, n - done)
                return
            next_tick = min(c._next_tick for c in self.ticking)
            m = min(n - done, max(1, math.ceil((next_tick - t) / h - 1e-9)))
            scene.step(h, m)
            done += m

    def fakeSimulate(self, dt: float):
        """Advance time by dt [s] without physics: every PID-controlled joint jumps to its
        commanded position and velocity (motion queues evaluated at the new time); torque
        commanded joints, free objects and contacts stay as they are. For prototyping
        controllers."""
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"fakeSimulate: dt must be a positive time, got {dt}")
        scene = self._scene
        t = scene.time + dt
        for c in self._controllers:
            c._fake_advance(t, dt)
        scene.set_time(t)
        scene.refresh()

    @property
    def engine(self):
        """The engine Scene (sim_node.engine.api.Scene) this simulator steps, for the sim
        layer's own parts (SimBody, SimRobotController, loggers). A world change rebuilds it:
        read it anew rather than keeping it."""
        return self._scene

    @property
    def layout(self):
        """How the world's entities map onto the engine's collision bodies and free bodies
        (sim_node.model.scene.SceneLayout; rebuilt with the engine)."""
        return self._layout

    def getTime(self) -> float:
        return self._scene.time

    def setTime(self, t: float):
        """Set the simulation time [s] (log playback; the state is not changed), within
        +-MAX_TIME (sim_node.sim.bounds)."""
        t = float(t)
        if not abs(t) <= bounds.MAX_TIME:
            raise ValueError(f"setTime: the time must be finite and within +-"
                             f"{bounds.MAX_TIME:g} s, got {t}")
        self._scene.set_time(t)

    # -- status ----------------------------------------------------------------------------
    def getStatus(self) -> int:
        """The worst status of the last simulate() call (STATUS_* constants)."""
        return self._status

    def getStatusString(self, status: int = -1) -> str:
        s = self._status if status < 0 else int(status)
        if s not in STATUS_STRINGS:
            raise ValueError(f"getStatusString: unknown status code {status}")
        return STATUS_STRINGS[s]

    # -- state -----------------------------------------------------------------------------
    def getState(self) -> bytes:
        """The complete simulation state as bytes: time, robot states and actuator commands,
        controller motion queues, object states, contact warm starts. ``setState`` of it makes
        the simulation continue bit for bit as from here."""
        header = json.dumps({"controllers": [c._get_state() for c in self._controllers],
                             "extra": self._extra_state()}).encode()
        return _STATE_MAGIC + struct.pack("<Q", len(header)) + header + self._scene.get_state()

    def setState(self, state: bytes):
        """Restore a state from getState() of a Simulator of the same world. A state of another
        world, a corrupt one, or one holding NaN or values beyond the bounds of
        sim_node.sim.bounds (time within +-MAX_TIME) raises ValueError and changes nothing."""
        if not isinstance(state, (bytes, bytearray)) or not bytes(state[:8]) == _STATE_MAGIC:
            raise ValueError("setState: not a sim_node simulation state")
        state = bytes(state)
        try:
            (size,) = struct.unpack_from("<Q", state, 8)
            header = json.loads(state[16:16 + size].decode(), parse_constant=_no_nan)
            controllers = header["controllers"]
            extra = header["extra"]
        except (struct.error, UnicodeDecodeError, ValueError, KeyError, TypeError,
                RecursionError) as e:
            raise ValueError(f"setState: corrupt state header ({e})") from None
        if not isinstance(controllers, list) or len(controllers) != len(self._controllers):
            raise ValueError(f"setState: the state has "
                             f"{len(controllers) if isinstance(controllers, list) else 'no'} "
                             f"robots, this world {len(self._controllers)}")
        parsed = [c._parse_state(s) for c, s in zip(self._controllers, controllers)]
        self._check_extra_state(extra)
        previous = self.getState()
        try:
            self._scene.set_state(state[16 + size:])
            self._check_scene_state()
        except Exception as e:      # noqa: BLE001 (whatever the engine met: nothing changes)
            self._scene.set_state(previous[16 + struct.unpack_from("<Q", previous, 8)[0]:])
            raise ValueError(f"setState: {e}") from None
        for c, s in zip(self._controllers, parsed):
            c._set_state(s)
        self._set_extra_state(extra)
        self._status = STATUS_NORMAL

    def _check_scene_state(self):
        # the engine state just set: time, positions and velocities within the bounds, unit
        # quaternions (ValueError naming the entity otherwise)
        scene, world = self._scene, self._world
        if not abs(scene.time) <= bounds.MAX_TIME:
            raise ValueError(f"the time {scene.time!r} is beyond the bound |t| <= "
                             f"{bounds.MAX_TIME:g} s")
        for r in range(world.numRobots()):
            robot = world.robot(r)
            q, v = scene.robot_q[r], scene.robot_v[r]
            what = f"robot '{robot.getName()}'"
            bounded = bounds.bounded
            if robot.isFloatingBase():
                bounded(q[0:3], bounds.MAX_POSITION, f"{what} base position", "m")
                _unit_quaternion(q[3:7], f"{what} base orientation")
                bounded(v[0:3], bounds.MAX_LINEAR_SPEED, f"{what} base velocity", "m/s")
                bounded(v[3:6], bounds.MAX_ANGULAR_SPEED, f"{what} base angular velocity",
                        "rad/s")
            start = 7 if robot.isFloatingBase() else 0
            bounded(q[start:], bounds.MAX_JOINT_POSITION, f"{what} configuration", "rad or m")
            bounded(v[6 if robot.isFloatingBase() else 0:], bounds.MAX_ANGULAR_SPEED,
                    f"{what} velocity", "rad/s or m/s")
            # what the actuators hold: gains, targets, feed-forward and integral terms
            for name, gains in (("kP", scene.robot_kp[r]), ("kI", scene.robot_ki[r]),
                                ("kD", scene.robot_kd[r])):
                if not np.all((gains >= 0.0) & (gains <= bounds.MAX_GAIN)):
                    raise ValueError(f"{what} {name} gains {gains.tolist()} are outside [0, "
                                     f"{bounds.MAX_GAIN:g}]")
            bounded(scene.robot_q_des[r], bounds.MAX_JOINT_POSITION, f"{what} position targets",
                    "rad or m")
            bounded(scene.robot_v_des[r], bounds.MAX_ANGULAR_SPEED, f"{what} velocity targets",
                    "rad/s or m/s")
            for name, array in (("feed-forward torques", scene.robot_tau_ff[r]),
                                ("integral terms", scene.robot_iterm[r]),
                                ("torques", scene.robot_tau[r])):
                bounded(array, bounds.MAX_TORQUE, f"{what} {name}", "N m or N")
            if not np.all(scene.robot_advance[r] >= 0.0):
                raise ValueError(f"{what}: negative target advance times")
        if len(scene.free_state):
            free = scene.free_state
            bounds.bounded(free[:, 0:3], bounds.MAX_POSITION, "rigid object positions", "m")
            bounds.bounded(free[:, 7:10], bounds.MAX_LINEAR_SPEED, "rigid object velocities",
                           "m/s")
            bounds.bounded(free[:, 10:13], bounds.MAX_ANGULAR_SPEED,
                           "rigid object angular velocities", "rad/s")
            for row in free:
                _unit_quaternion(row[3:7], "a rigid object's orientation")

    def reset(self, scope=None):
        """Back to the state the Simulator started in (settings such as surfaces, paddings,
        gains or gravity changed since are kept). After addEntity / removeEntity: every entity
        back to the state it started from (spawned ones: their state when added), time 0,
        robots holding their initial configuration. scope (sim_node.sim.reset.ResetScope):
        only part of it (TIME, STATE, SPAWNED, their sums); None is TIME | STATE."""
        if scope is not None and scope != ResetScope.TIME | ResetScope.STATE:
            reset_scope(self, scope, self._origin, _entities(self._world))
            return
        if self._initial_state is not None:
            self.setState(self._initial_state)
            return
        for entity in _entities(self._world):
            _set_model_state(entity, self._initial_entities[id(entity)][1])
        self._rebuild(lambda world: None, from_world=True)
        self._scene.set_time(0.0)
        for c in self._controllers:
            c._restart()
        self._set_extra_state(None)
        self._status = STATUS_NORMAL

    # -- adding and removing entities ------------------------------------------------------
    def spawn(self, source, **options):
        """Add the robot or rigid object of a URDF (path, XML text or parsed) and return it:
        named, namespaced, placed and checked as sim_node.sim.entities.spawn says (options:
        name, namespace, R, t, allow_renaming, substitutions). Atomic: an EntityError leaves
        the world and the simulation as they were."""
        return entities.spawn(self, source, **options)

    def delete(self, name: str):
        """Remove the entity named `name` (robot, rigid object or terrain); it is returned."""
        return entities.delete(self, name)

    def addEntity(self, entity):
        """Add a robot, rigid object or terrain (built, in no world) to the world and the
        simulation, in the state its model holds. Everything simulated keeps its state,
        commands and settings; controllers stay valid; SimBody objects must be fetched again
        (IDs are reassigned)."""
        if not isinstance(entity, (RobotModel, RigidObjectModel, TerrainModel)):
            raise TypeError(f"addEntity: expected a robot, rigid object or terrain, got "
                            f"{type(entity).__name__}")
        if entity.getName() in {e.getName() for e in _entities(self._world)}:
            raise ValueError(f"addEntity: the world already has an entity named "
                             f"'{entity.getName()}'")
        self._rebuild(lambda world: world.add(entity), undo=lambda world: world.remove(entity),
                      what=f"addEntity: '{entity.getName()}'")
        self._initial_entities[id(entity)] = (entity, _model_state(entity))

    def removeEntity(self, entity):
        """Remove a robot, rigid object or terrain from the world and the simulation (as
        addEntity for the others)."""
        if not any(e is entity for e in _entities(self._world)):
            raise ValueError(f"removeEntity: {entity!r} is not in this simulator's world")
        self._rebuild(lambda world: world.remove(entity), undo=lambda world: world.add(entity),
                      what=f"removeEntity: '{entity.getName()}'")
        self._initial_entities.pop(id(entity), None)

    def _rebuild(self, change, from_world: bool = False, undo=None, what: str = "rebuild"):
        """Apply `change` to the world and rebuild the engine scene, carrying over time,
        gravity, solver options, robot commands and controllers, body settings and contact
        feedback by entity (from_world: the robots' and objects' states come from their
        models instead of the simulation). When the new scene cannot be built (geometry that
        cannot be simulated), `undo` puts the world back, the simulation is untouched and a
        ValueError (starting with `what`) says why."""
        from sim_node.sim.controller import SimRobotController

        scene, layout, world = self._scene, self._layout, self._world
        if not from_world:
            self.updateWorld()
        robots = {id(world.robot(r)): r for r in range(world.numRobots())}
        commands = {key: {name: arrays[r].copy() for name, arrays in _command_arrays(scene)}
                    for key, r in robots.items()}
        controllers = {id(c._robot): c for c in self._controllers}
        body_entity = [world.getEntity(i) for i in layout.id_of_body]
        settings = {id(e): (scene.get_body_surface(b), scene.get_body_padding(b),
                            scene.body_enabled(b), scene.get_collision_filter(b))
                    for b, e in enumerate(body_entity)}
        pair_filters = [(world.getEntity(a), world.getEntity(b), enabled)
                        for enabled, pairs in ((True, scene.enabled_pairs()),
                                               (False, scene.disabled_pairs()))
                        for a, b in pairs]
        dynamics = {id(body._entity): body._dynamics for body in self._bodies.values()}
        pairs = [(body_entity[a], body_entity[b]) for a, b in self._feedback_pairs]
        options = dict(gravity=scene.get_gravity(), max_iterations=scene.max_iterations,
                       tolerance=scene.tolerance, regularization=scene.regularization)
        time = scene.time
        impulses = self._constraint_impulses()
        change(world)
        try:
            layout = build_scene(world, **options)
        except Exception as error:      # noqa: BLE001 (geometry libraries raise their own)
            if undo is not None:
                undo(world)
            raise ValueError(f"{what} cannot be simulated: {geometry_problem(error)}") \
                from None
        self._layout = layout
        self._scene = scene = self._layout.scene
        scene.set_time(time)
        self._install_constraints(impulses)
        self._bodies, self._qdata, self._pending, self._held_tau = {}, {}, {}, {}
        previous = list(self._controllers)
        self._controllers = []
        for r in range(world.numRobots()):
            key = id(world.robot(r))
            if key in controllers:
                c = controllers[key]
                c._bind(r)
                for name, arrays in _command_arrays(scene):
                    arrays[r][:] = commands[key][name]
            else:
                c = SimRobotController(self, r)
            self._controllers.append(c)
        self.ticking = [c for c in self._controllers if c in self.ticking]
        for b, i in enumerate(self._layout.id_of_body):
            entity = world.getEntity(i)
            if id(entity) in settings:
                surface, padding, enabled, group_mask = settings[id(entity)]
                scene.set_body_surface(b, *surface)
                scene.set_body_padding(b, padding)
                scene.set_body_enabled(b, enabled)
                scene.set_collision_filter(b, *group_mask)
            if dynamics.get(id(entity)) is False:
                self.body(i).enableDynamics(False)
        for a, b, enabled in pair_filters:
            if a.getID() >= 0 and b.getID() >= 0:
                scene.set_pair_enabled(a.getID(), b.getID(), enabled)
        self._feedback_pairs = set()
        scene.enable_feedback_all(self._feedback_all)
        for a, b in pairs:
            if a.getID() >= 0 and b.getID() >= 0:
                self.enableContactFeedback(a.getID(), b.getID())
        self._initial_state = None
        self.count_sensors()
        self._entities_changed(previous)

    def _entities_changed(self, previous_controllers: list):
        """After a rebuild (subclasses re-attach what belongs to robots): the controllers
        before it, in their old robot order."""

    # state of subclasses (SimpleSimulator's emulators): JSON-able data
    def _extra_state(self):
        return None

    def _check_extra_state(self, extra):
        pass

    def _set_extra_state(self, extra):
        pass

    # -- robots ----------------------------------------------------------------------------
    def controller(self, robot):
        """The SimRobotController of a robot: its index, name or RobotModel."""
        return self._controllers[self._robot_index(robot)]

    def _robot_index(self, robot) -> int:
        if isinstance(robot, RobotModel):
            for r in range(self._world.numRobots()):
                if self._world.robot(r) is robot:
                    return r
            raise ValueError(f"robot '{robot.getName()}' is not in this simulator's world")
        if isinstance(robot, str):
            names = [self._world.robot(r).getName() for r in range(self._world.numRobots())]
            if robot not in names:
                raise KeyError(f"no robot named '{robot}'; robots: {names}")
            return names.index(robot)
        index = int(robot)
        if not 0 <= index < len(self._controllers):
            raise IndexError(f"robot index {index} out of range [0, {len(self._controllers)})")
        return index

    def getActualConfig(self, robot) -> np.ndarray:
        return self._scene.robot_q[self._robot_index(robot)].copy()

    def getActualVelocity(self, robot) -> np.ndarray:
        return self._scene.robot_v[self._robot_index(robot)].copy()

    def setActualConfig(self, robot, q):
        """Place a robot: its whole configuration q (nq; quaternions are normalised unless
        they are unit ones already, a zero one is refused), within the bounds and joint limits
        of sim_node.sim.bounds.robot_config. For playing back logs and resetting scenes; the
        PID targets stay."""
        r = self._robot_index(robot)
        model = self._world.robot(r)
        bounds.robot_config(model, q, f"setActualConfig of robot '{model.getName()}'")
        q = normalized_config(model.structure, q,
                              f"setActualConfig of robot '{model.getName()}'")
        self._scene.robot_q[r][:] = q
        self._scene.refresh()

    def setActualVelocity(self, robot, v):
        """Set a robot's whole velocity v (nv, the layout of DESIGN.md §3)."""
        r = self._robot_index(robot)
        model = self._world.robot(r)
        self._scene.robot_v[r][:] = bounds.robot_velocity(
            model, v, f"setActualVelocity of robot '{model.getName()}'")

    def getLinkTransforms(self, robot):
        """World placements of every link of a robot in the simulated state: (R (nlinks, 3, 3),
        t (nlinks, 3)), links in RobotModel order (copies)."""
        from sim_node.engine.api import kinematics

        R, p = kinematics.frames(*self.robot_query(self._robot_index(robot)))
        return R.copy(), p.copy()

    def getLinkPoses(self, robot, links, parents, out=None) -> np.ndarray:
        """Poses of a robot's links in their parents' frames in the simulated state, as rows
        (x, y, z, qx, qy, qz, qw) (n, 7): link links[i] in link parents[i] (the world when
        parents[i] < 0); links, parents: intp arrays (n,); out: an (n, 7) buffer to fill."""
        from sim_node.engine.api import kinematics

        links = np.ascontiguousarray(links, dtype=np.intp)
        parents = np.ascontiguousarray(parents, dtype=np.intp)
        out = np.empty((len(links), 7)) if out is None else out
        R, p = kinematics.frames(*self.robot_query(self._robot_index(robot)))
        kinematics.relative_poses(R, p, links, parents, out)
        return out

    def getTerrainPoses(self) -> np.ndarray:
        """Placements of every terrain as rows (x, y, z, qx, qy, qz, qw) (n, 7), terrains in
        WorldModel order."""
        from sim_node.engine.api import kinematics

        n = self._world.numTerrains()
        R, t = np.empty((n, 3, 3)), np.empty((n, 3))
        for i in range(n):
            R[i], t[i] = self._world.terrain(i).getTransform()
        out = np.empty((n, 7))
        kinematics.relative_poses(R, t, np.arange(n, dtype=np.intp), np.full(n, -1, np.intp),
                                  out)
        return out

    def getRigidObjectTransforms(self):
        """Object frames of every rigid object in the simulated state: (R (n, 3, 3), t (n, 3)),
        objects in WorldModel order."""
        n = self._world.numRigidObjects()
        R, t = np.empty((n, 3, 3)), np.empty((n, 3))
        for i in range(n):
            R[i], t[i] = self.body(self._world.rigidObject(i)).getObjectTransform()
        return R, t

    def getRigidObjectPoses(self) -> np.ndarray:
        """Object frames of every rigid object in the simulated state as rows (x, y, z, qx, qy,
        qz, qw) (n, 7), objects in WorldModel order: getRigidObjectTransforms without rotation
        matrices, cheap enough for every step (the node's /tf)."""
        scene = self._scene
        if self._object_rows is None or self._object_rows[0] is not scene:
            bodies = [self.body(self._world.rigidObject(i))
                      for i in range(self._world.numRigidObjects())]
            com = np.array([b._com_local for b in bodies]).reshape(-1, 3)
            self._object_rows = (scene, np.array([b._index for b in bodies], dtype=np.intp),
                                 com if np.any(com) else None)
        _, rows, com = self._object_rows
        state = scene.free_state[rows]      # COM position, orientation (x, y, z, w), ...
        poses = state[:, 0:7].copy()
        if com is not None:                 # object frame = COM - R com
            u, w = state[:, 3:6], state[:, 6:7]
            uc = _cross(u, com)
            poses[:, 0:3] -= com + 2.0 * (w * uc + _cross(u, uc))
        return poses

    def getActualTorque(self, robot) -> np.ndarray:
        """Actuator torques of the last step (nv; zero on floating-base DOFs)."""
        return self._scene.robot_tau[self._robot_index(robot)].copy()

    # -- user constraints (sim_node.model.constraints; engine: pipeline/user_constraints) --
    def addConstraint(self, constraint) -> int:
        """Add a Constraint (sim_node.model.constraints) between entities of this world to
        the world and the simulation; returns its unique id. It acts from the next step and
        stays through addEntity / removeEntity (removing one of its entities removes it).
        ValueError when it cannot be simulated (nothing is added)."""
        uid = self._world.addConstraint(constraint)
        try:
            self._install_constraints()
        except ValueError:
            self._world.removeConstraint(uid)
            self._install_constraints()
            raise
        return uid

    def removeConstraint(self, uid: int):
        """Remove the constraint with this unique id (ValueError when there is none)."""
        try:
            self._world.removeConstraint(uid)
        except KeyError:
            raise ValueError(f"removeConstraint: no constraint with unique id {uid!r}") from None
        self._install_constraints()

    def getConstraint(self, uid: int):
        """The Constraint with this unique id (ValueError when there is none)."""
        try:
            return self._world.constraint(uid)
        except (KeyError, TypeError):
            raise ValueError(f"no constraint with unique id {uid!r}") from None

    def changeConstraint(self, uid: int, **fields):
        """Change fields of a constraint (child_frame, max_force, erp, gear_ratio, gear_aux,
        relative_position_target, axis ...: the Constraint's fields); checked whole before
        anything changes (ValueError)."""
        import dataclasses
        constraint = self.getConstraint(uid)
        fixed = {"uid", "kind", "parent"}
        wrong = (set(fields) - {f.name for f in dataclasses.fields(constraint)}) | (set(fields) & fixed)
        if wrong:
            raise ValueError(f"changeConstraint: cannot change {', '.join(sorted(wrong))}; "
                             f"valid: child, child_frame, parent_frame, axis, max_force, erp, "
                             f"gear_ratio, gear_aux, relative_position_target")
        trial = dataclasses.replace(constraint, **fields)
        trial.check()
        for name, value in fields.items():
            setattr(constraint, name, value)
        self._install_constraints()

    def getConstraintForces(self, uid: int) -> np.ndarray:
        """The force of each row of a constraint over the last step [N or N m] (FIXED 6:
        force x y z in world axes, torque along the parent frame's axes; POINT2POINT 3;
        PRISMATIC 5: force along the two directions across the axis, torque as FIXED; GEAR 1),
        from the parent's side."""
        from sim_node.model.constraints import ROWS
        constraint = self.getConstraint(uid)
        index = [c.uid for c in self._world.constraints()].index(uid)
        dt = self._scene.last_dt
        impulses = self._scene.constraint_impulses()[index, :ROWS[constraint.kind]]
        return impulses / dt if dt > 0.0 else np.zeros_like(impulses)

    def _install_constraints(self, impulses=None):
        # the world's constraints into the engine, each warm started from its impulses of the
        # last step (by unique id)
        if impulses is None:
            impulses = self._constraint_impulses()
        constraints = self._world.constraints()
        self._scene.set_constraints(constraint_specs(constraints, self._layout.body_of_id,
                                                     impulses))
        if [c.uid for c in constraints] != getattr(self, "_constraint_uids", None):
            # the engine state's layout changed: reset() goes back through the models
            self._initial_state = None
        self._constraint_uids = [c.uid for c in constraints]

    def _constraint_impulses(self) -> dict:
        # unique id -> the row impulses the engine holds
        uids = getattr(self, "_constraint_uids", None)
        if uids is None or len(uids) != self._scene.nconstraint:
            return {}
        return dict(zip(uids, self._scene.constraint_impulses()))

    # -- bodies ----------------------------------------------------------------------------
    def body(self, entity):
        """The SimBody of a robot link, rigid object or terrain (or its world ID)."""
        from sim_node.sim.body import SimBody

        id_ = self._entity_id(entity)
        if id_ not in self._bodies:
            self._bodies[id_] = SimBody(self, id_)
        return self._bodies[id_]

    def _entity_id(self, entity) -> int:
        if isinstance(entity, (RobotModelLink, RigidObjectModel, TerrainModel)):
            id_ = entity.getID()
            if not 0 <= id_ < self._world.numIDs() or self._world.getEntity(id_) is not entity:
                raise ValueError(f"{entity!r} is not in this simulator's world")
            return self._body_id(id_)
        if isinstance(entity, RobotModel):
            raise ValueError(f"robot '{entity.getName()}' is not a body: use one of its links "
                             f"(robot.link(i)) or sim.controller(robot)")
        if isinstance(entity, (int, np.integer)):
            return self._body_id(int(entity))
        raise TypeError(f"expected a robot link, rigid object, terrain or world ID, got "
                        f"{type(entity).__name__}")

    def _body_id(self, id_: int) -> int:
        n = self._world.numIDs()
        if not 0 <= id_ < n:
            raise ValueError(f"unknown world ID {id_} (IDs are 0..{n - 1})")
        if id_ not in self._layout.body_of_id:
            entity = self._world.getEntity(id_)
            if isinstance(entity, RobotModel):
                raise ValueError(f"world ID {id_} is robot '{entity.getName()}', not a body: "
                                 f"use the IDs of its links")
            raise ValueError(f"world ID {id_} ({self._world.getName(id_)}) has no simulated body")
        return id_

    def _collision_body(self, id_: int) -> int:
        return self._layout.body_of_id[self._body_id(id_)]

    # forces held over the next simulate() call (SimBody.applyForce...)
    def add_wrench(self, id_: int, wrench: np.ndarray):
        """Hold `wrench` [fx fy fz tx ty tz] (N, N m; world axes, at the com) on the body
        with world ID `id_` over the next simulate() call, added to what is already held (the
        state owner's side of SimBody.applyWrench / applyForceAtPoint)."""
        total = self._pending.get(id_)
        self._pending[id_] = wrench if total is None else total + wrench
        self._wrench_version += 1

    def _apply_pending(self):
        # the engine's external forces := the pending ones (robot links through J^T at the
        # current configuration)
        self._zero_wrenches()
        for id_, wrench in self._pending.items():
            self._bodies[id_]._apply_wrench(wrench)

    def _clear_pending(self):
        self._zero_wrenches()
        self._pending.clear()

    def hold_robot_forces(self, r: int, tau: np.ndarray):
        """Robot r's external generalized forces (nv) [N m or N] start from `tau` (an array the
        caller updates in place, e.g. sim_node.pybullet's link damping) when the held wrenches
        are applied or cleared, instead of from 0; None: from 0 again."""
        if tau is None:
            self._held_tau.pop(r, None)
        else:
            self._held_tau[r] = tau

    def _zero_wrenches(self):
        self._scene.free_wrench[:] = 0.0
        for r, tau_ext in enumerate(self._scene.robot_tau_ext):
            held = self._held_tau.get(r)
            tau_ext[:] = 0.0 if held is None else held

    def robot_query(self, r: int):
        """(model, Data for queries, q) of robot r: kinematics of the simulated state in a
        Data of its own (the Scene's Data is the step's scratch)."""
        from sim_node.engine.api import Data

        if r not in self._qdata:
            self._qdata[r] = Data(self._world.robot(r).model)
        return self._world.robot(r).model, self._qdata[r], self._scene.robot_q[r]

    def link_transform(self, r: int, link: int):
        """(R (3, 3), t (3,)) of link `link` of robot `r` in the world, simulated state."""
        from sim_node.engine.api import kinematics

        R, p = kinematics.frames(*self.robot_query(r))
        return R[link].copy(), p[link].copy()

    # -- collision queries and filters (PyBullet's names; sim_node.sim.queries) -------------
    # IDs: the entity (robot, rigid object, terrain) and a link index in a robot (-1 or None
    # otherwise); the queries see the current state (after setActualConfig, setTransform ...).
    def _queries(self):
        from sim_node.sim.queries import Queries

        if self._query_face is None:
            self._query_face = Queries(self)
        return self._query_face

    def getClosestPoints(self, id_a, id_b, max_distance, link_a=None, link_b=None) -> list:
        """The closest points of entities id_a and id_b (of links link_a / link_b; None: every
        link) no further apart than max_distance [m]: a list of sim_node.sim.queries.
        ClosestPoint, one per pair of links (the closest of their shapes), ordered by
        (link_a, link_b); distance < 0 is penetration."""
        return self._queries().closest_points(id_a, id_b, max_distance, link_a, link_b)

    def getAABB(self, id_, link=None):
        """(lo (3,), hi (3,)) world bounding box [m] of an entity's collision shapes (of one
        link; None: all), at the current state, without margin."""
        return self._queries().aabb(id_, link)

    def getOverlappingObjects(self, lo, hi) -> list:
        """Sorted (entity ID, link) pairs whose collision shapes' bounding boxes overlap the
        box [lo, hi] [m]."""
        return self._queries().overlapping_objects(lo, hi)

    def setCollisionFilterGroupMask(self, id_, link, group, mask):
        """PyBullet's filter: bodies a, b may collide when (group_a & mask_b) and
        (group_b & mask_a) are non-zero. link None on a robot: all its links. A link welded by
        fixed joints shares its body's filter."""
        self._queries().set_group_mask(id_, link, group, mask)

    def getCollisionFilterGroupMask(self, id_, link=None):
        """(group, mask) of an entity's (link's) collision body."""
        return self._queries().get_group_mask(id_, link)

    def setCollisionFilterPair(self, id_a, id_b, link_a, link_b, enable):
        """Pair override, both ways: enable True: the two collide whatever their group / mask,
        False: never; None: back to group / mask. A robot's own rules (self-collision off,
        adjacent links) still hold, as in PyBullet."""
        self._queries().set_pair(id_a, id_b, link_a, link_b, enable)

    # -- contact feedback (seed 002) -------------------------------------------------------
    # IDs are those of terrains, rigid objects and robot links; a robot's own ID stands for all
    # of its links (forces summed, flags combined), so loops over every pair of IDs work.
    def enableContactFeedbackAll(self):
        """Record contact feedback for every pair of bodies."""
        self._feedback_all = True
        self._scene.enable_feedback_all(True)

    def enableContactFeedback(self, id1: int, id2: int):
        """Record contact feedback between the entities with world IDs id1 and id2."""
        for a, b in self._body_pairs(id1, id2):
            self._scene.enable_feedback(a, b)
            self._feedback_pairs.add((min(a, b), max(a, b)))

    def getBodyID(self, id_: int) -> int:
        """The world ID that reports the simulated body world ID id_ belongs to (as
        getBodyIDs and getAllContacts name it: links welded by fixed joints share one body)."""
        return self._layout.id_of_body[self._collision_body(int(id_))]

    def getBodyIDs(self) -> list:
        """The world ID of every simulated body, one per body: links welded together by fixed
        joints form one body, reported by its first link with collision geometry."""
        return list(self._layout.id_of_body)

    def getContactPairs(self) -> list:
        """(id1, id2) of every pair of bodies (getBodyIDs) with recorded feedback that touched
        during the last simulate() call, id1 < id2."""
        table = self._scene.feedback_table()
        ids = self._layout.id_of_body
        return sorted(tuple(sorted((ids[a], ids[b])))
                      for a, b in zip(table["body_a"][table["had_contact"]],
                                      table["body_b"][table["had_contact"]]))

    def getAllContacts(self) -> dict:
        """Every contact of the last substep, as arrays: id1, id2 (world IDs, getBodyIDs), point
        (n, 3) [m], normal (n, 3) from id2 into id1, depth (n,) into the summed boundary layers
        [m] (> 0: inside them), force (n, 3) on id1 [N]."""
        c = self._scene.contact_arrays()
        ids = np.asarray(self._layout.id_of_body, dtype=np.int64)
        dt = self._scene.last_dt
        return {"id1": ids[c["body_a"]], "id2": ids[c["body_b"]], "point": c["point"],
                "normal": c["normal"], "depth": c["depth"],
                "force": c["impulse"] / dt if dt > 0 else np.zeros_like(c["impulse"])}

    def _collision_bodies(self, id_: int) -> list:
        # collision bodies of a world ID: one, or every body of a robot
        n = self._world.numIDs()
        if not 0 <= id_ < n:
            raise ValueError(f"unknown world ID {id_} (IDs are 0..{n - 1})")
        entity = self._world.getEntity(id_)
        if isinstance(entity, RobotModel):
            return sorted({self._layout.body_of_id[link.getID()] for link in entity.links()
                           if link.getID() in self._layout.body_of_id})
        return [self._collision_body(id_)]

    def _body_pairs(self, id1: int, id2: int) -> list:
        side2 = self._collision_bodies(int(id2))
        return [(a, b) for a in self._collision_bodies(int(id1)) for b in side2 if a != b]

    def _feedback(self, id1: int, id2: int) -> list:
        # feedback dicts of every body pair of (id1, id2), seen from id1; [] if none can touch
        pairs = self._body_pairs(id1, id2)
        if not self._feedback_all:
            for a, b in pairs:
                if (min(a, b), max(a, b)) not in self._feedback_pairs:
                    raise RuntimeError(
                        f"contact feedback between {self._world.getName(id1)} (ID {id1}) and "
                        f"{self._world.getName(id2)} (ID {id2}) is not enabled: call "
                        f"enableContactFeedback({id1}, {id2}) or enableContactFeedbackAll() "
                        f"first")
        found = (self._scene.feedback(a, b) for a, b in pairs)
        return [f for f in found if f is not None]

    def inContact(self, id1: int, id2: int) -> bool:
        """True if they touch (a contact inside their boundary layers) at the end of the last
        simulate() call."""
        return any(f["touching"] for f in self._feedback(id1, id2))

    def hadContact(self, id1: int, id2: int) -> bool:
        """True if they touched at some substep of the last simulate() call."""
        return any(f["had_contact"] for f in self._feedback(id1, id2))

    def hadSeparation(self, id1: int, id2: int) -> bool:
        """True if they were apart at some substep of the last simulate() call. (For a robot's
        ID: if no single pair of bodies touched at every substep.)"""
        return all(f["had_separation"] for f in self._feedback(id1, id2))

    def hadPenetration(self, id1: int, id2: int) -> bool:
        """True if their real geometries (inside the boundary layers) overlapped at some
        substep of the last simulate() call."""
        return any(f["had_penetration"] for f in self._feedback(id1, id2))

    def contactForce(self, id1: int, id2: int) -> np.ndarray:
        """Total contact force on id1 from id2 at the last substep [N], world axes."""
        return sum((f["force"] for f in self._feedback(id1, id2)), np.zeros(3))

    def contactTorque(self, id1: int, id2: int) -> np.ndarray:
        """Total contact torque on id1 from id2 at the last substep [N m], world axes, about
        id1's centre of mass (a robot's: the centre of mass of the whole robot)."""
        found = self._feedback(id1, id2)
        force = sum((f["force"] for f in found), np.zeros(3))
        torque = sum((f["torque"] for f in found), np.zeros(3))      # about the world origin
        return torque - np.cross(self._centre_of_mass(int(id1)), force)

    def meanContactForce(self, id1: int, id2: int) -> np.ndarray:
        """Contact force on id1 from id2 averaged over the last simulate() call [N]."""
        found = self._feedback(id1, id2)
        window = self._scene.window_time
        if not found or window <= 0.0:
            return np.zeros(3)
        return sum(f["impulse"] for f in found) / window

    def _centre_of_mass(self, id_: int) -> np.ndarray:
        entity = self._world.getEntity(id_)
        if isinstance(entity, RobotModel):
            from sim_node.engine.api import kinematics

            return kinematics.com(*self.robot_query(self._robot_index(entity))).copy()
        return self.body(id_).getTransform()[1]

    def _pair_contacts(self, id1: int, id2: int):
        # the last substep's contacts of (id1, id2): arrays, rows kept, sign towards id1
        self._feedback(id1, id2)            # the feedback check
        side1 = self._collision_bodies(int(id1))
        side2 = self._collision_bodies(int(id2))
        c = self._scene.contact_arrays()
        forward = np.isin(c["body_a"], side1) & np.isin(c["body_b"], side2)
        backward = np.isin(c["body_a"], side2) & np.isin(c["body_b"], side1)
        keep = (forward | backward) & (c["body_a"] != c["body_b"])
        sign = np.where(forward, 1.0, -1.0)[keep]
        return c, keep, sign

    def getContacts(self, id1: int, id2: int) -> np.ndarray:
        """The contacts between id1 and id2 at the last substep, one row each:
        [px, py, pz, nx, ny, nz, kFriction] with the normal pointing from id2 into id1."""
        c, keep, sign = self._pair_contacts(id1, id2)
        out = np.empty((int(keep.sum()), 7))
        out[:, 0:3] = c["point"][keep]
        out[:, 3:6] = c["normal"][keep] * sign[:, None]
        out[:, 6] = [self._pair_friction(a, b)
                     for a, b in zip(c["body_a"][keep], c["body_b"][keep])]
        return out

    def getContactForces(self, id1: int, id2: int) -> np.ndarray:
        """The force on id1 at each contact of getContacts(id1, id2) [N], one row each."""
        c, keep, sign = self._pair_contacts(id1, id2)
        dt = self._scene.last_dt
        if dt <= 0.0:
            return np.zeros((int(keep.sum()), 3))
        return c["impulse"][keep] * sign[:, None] / dt

    def rayCast(self, origins, ends, threads=None, mask=None):
        """The nearest hit along each segment origins -> ends ((N, 3) each, or (3,) for one
        ray; world [m]) at the current state, as a RayHits (fraction, body = entity ID, link,
        point, normal; sim_node/sim/rays.py). mask: PyBullet's collisionFilterMask, a body is
        hit only if mask & its group != 0 (None: all); disabled bodies never are. threads:
        None = every core, 1 = serial. Releases the GIL while casting."""
        from sim_node.sim import rays

        # the shapes' owners, made again when spawn/delete rebuilt the layout
        cached = getattr(self, "_ray_owners", None)
        if cached is None or cached[0] is not self._layout:
            cached = self._ray_owners = (self._layout, rays.ShapeOwners(self._layout.shape_owner))
        return rays.ray_cast(self._scene, cached[1], origins, ends, threads, mask)

    def _pair_friction(self, a: int, b: int) -> float:
        from sim_node.model.surface import harmonic_mean

        return harmonic_mean(self._scene.get_body_surface(a)[1],
                             self._scene.get_body_surface(b)[1])


def geometry_problem(error: Exception) -> str:
    """What a failed scene build means for a user, without the library's exception names."""
    if type(error).__name__ == "QhullError":        # scipy.spatial (Qhull), via trimesh
        return ("the convex hull of a collision mesh cannot be built (its points are fewer "
                "than 4 or all in one plane)")
    if isinstance(error, MemoryError):
        return "it needs more memory than is available"
    return str(error) or "its collision geometry is not usable"


def _no_nan(constant: str) -> float:
    # json's non-standard constants: Infinity is part of some states, NaN never
    if constant == "NaN":
        raise ValueError("the state holds NaN")
    return float(constant)


def _unit_quaternion(q, what: str):
    with np.errstate(over="ignore"):       # (huge components: an infinite norm, refused)
        norm = math.sqrt(float(np.dot(q, q)))
    if not abs(norm - 1.0) <= UNIT_QUATERNION_TOLERANCE:
        raise ValueError(f"{what}: the quaternion {np.asarray(q).tolist()} is not a unit one")


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) arrays (np.cross costs tens of µs on small arrays)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=1)
