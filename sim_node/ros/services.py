"""Services and the action of the simulation node (DESIGN.md §6), all under the node (~/name).

simulation_interfaces 1.6.1 (entity conventions: sim_node/ros/entities.py):
    get_simulator_features   the features below, spawn_formats ["urdf"], custom_info
    get_entities             names matching EntityFilters (name regex, categories)
    get_entity_state         EntityState of one entity
    get_entities_states      names and states of the matching entities
    set_entity_state         pose and/or twist of a rigid object or a floating base
    spawn_entity             a URDF robot or single-link rigid object, named, namespaced, placed
    delete_entity            any entity (robot, rigid object, terrain)
    reset_simulation         scopes TIME, STATE, SPAWNED and their combinations, ALL (= DEFAULT)
    get_simulation_state     PLAYING, PAUSED or STOPPED
    set_simulation_state     to PLAYING, PAUSED or STOPPED
    step_simulation          n steps of a paused simulation
    simulate_steps (action)  n steps of a paused simulation, feedback after each, cancellable
Our own (sim_node/srv): set_real_time_factor, get_real_time_factor, save_state, restore_state,
apply_wrench, set_surface, set_padding (and record: sim_node/ros/recorder.py).

Every callback validates its request and answers a bad one with the standard's result code (our
services: success false) and a message; an unexpected exception is logged and answered with
OPERATION_FAILED. A request never stops the node and never half-applies. Work that reads or
changes the simulation runs on the simulation thread between two steps (node.run_in_sim);
requests that change the world's entities or jump in time (spawn, delete, reset, stop, restore)
run one at a time.

Run states: PLAYING (stepping), PAUSED, STOPPED (= paused after a reset of time and state by
set_simulation_state(STOPPED); spawned entities stay). The node's `paused` parameter starts it
PAUSED. step_simulation and simulate_steps need PAUSED or STOPPED (else OPERATION_FAILED, as
StepSimulation.srv says) and leave it PAUSED; each step publishes /clock, /tf and the sensors.

Reset scopes (bits, combinable): SPAWNED removes the entities spawned at run time and puts back
the world's own entities deleted at run time (in their initial state, with their plugins
restarted; in world ID order after the remaining entities of their kind); STATE puts every
entity back to its initial state (spawned ones: as spawned), restarts controllers and plugins,
keeps the time; TIME sets the time to 0 and restarts controllers and plugins (their schedules
are in sim time), keeping poses and velocities, robots holding their current configuration;
TIME | STATE is Simulator.reset(). Surface and padding settings are kept. A reset, stop or restore
cancels the wrenches of apply_wrench and republishes /tf_static and robot_description.

Safety (README "Safety and bounds"): numbers beyond the documented bounds of
sim_node.sim.bounds are refused with the field named; name filters are compiled and matched by
RE2 on the service's thread (only the entity names are taken on the simulation thread); files
go through sim_node/ros/client_files.py (written under the node's data_dir, read only when
regular and within max_read_size); step_simulation and simulate_steps are step requests of the
node (SimNode.request_steps: one at a time, a step per loop iteration with other services' work
in between, ended by set_simulation_state); responses never name Python exceptions.

apply_wrench: a simulator hook re-applies the wrench before every physics substep that starts
within [t0, t0 + duration), so a force F on a free body of mass m for duration T (a multiple of
the physics step) changes its velocity by exactly F T / m.
"""
from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass

import numpy as np
from rclpy.action import ActionServer, CancelResponse
from rclpy.qos import QoSProfile, ReliabilityPolicy
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntitiesStates,
                                       GetEntityState, GetSimulationState,
                                       GetSimulatorFeatures, ResetSimulation, SetEntityState,
                                       SetSimulationState, SpawnEntity, StepSimulation)

from sim_node.model.surface import SurfaceParameters
from sim_node.model.world import TerrainModel
from sim_node.ros.entities import (SPAWN_FORMATS, RequestError, bounded, check_filters,
                                   check_frame, entity_index, entity_state, finite,
                                   pose_from_msg, positive_duration, request_error, select,
                                   spawn_source, twist_from_msg)
from sim_node.ros.state_store import StateStore, StateStoreError
from sim_node.sim import bounds
from sim_node.sim.entities import (EntityError, all_entities, find_entity, parse_spawnable,
                                   set_frame_motion, simulated_bodies, static_reason,
                                   target_links)
from sim_node.sim.reset import ResetScope
from sim_node.sim.runstate import (AlreadyInState, Run, StepRequestBusy,
                                   StepRequestInterrupted, StepsRefused,
                                   real_time_factor_problem)
from sim_node.srv import (ApplyWrench, GetRealTimeFactor, RestoreState, SaveState,
                          SetPadding, SetRealTimeFactor, SetSurface)

F = SimulatorFeatures
FEATURES = (F.SPAWNING, F.DELETING, F.ENTITY_CATEGORIES, F.SPAWNING_RESOURCE_STRING,
            F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING, F.SIMULATION_RESET,
            F.SIMULATION_RESET_TIME, F.SIMULATION_RESET_STATE, F.SIMULATION_RESET_SPAWNED,
            F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING, F.SIMULATION_STATE_PAUSE,
            F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE, F.STEP_SIMULATION_ACTION)
CUSTOM_INFO = (
    "sim_node. Own services under the node (sim_node/srv): set_real_time_factor, "
    "get_real_time_factor, save_state, restore_state, apply_wrench, set_surface, set_padding, "
    "record (sim_node/ros/recorder.py). "
    "Entity states: frame 'world'; pose and twist of the entity's frame (robot root link, "
    "object frame), twist in world axes with the velocity of the frame's origin; acceleration "
    "is not measured (zeros). Categories: robots ROBOT, rigid objects OBJECT, terrains "
    "STATIC_OBJECT. Name filters: regular expressions matched by RE2 in linear time (POSIX "
    "extended syntax with character classes, Perl classes; no back-references), searched "
    "anywhere in the name. "
    "Spawning: URDF from a path, file://, package:// or the XML text; a single-link URDF "
    "without joints becomes a rigid object; entity_namespace '' = the name, '/' = none.")
STATE_NAMES = {SimulationState.STATE_STOPPED: "STOPPED", SimulationState.STATE_PLAYING:
               "PLAYING", SimulationState.STATE_PAUSED: "PAUSED"}
# simulation_interfaces/SimulationState <-> the run states of sim_node.sim.runstate
RUN_STATES = {SimulationState.STATE_STOPPED: Run.STOPPED,
              SimulationState.STATE_PLAYING: Run.PLAYING,
              SimulationState.STATE_PAUSED: Run.PAUSED}
SIMULATION_STATES = {run: state for state, run in RUN_STATES.items()}
Scope = ResetSimulation.Request
# simulation_interfaces/ResetSimulation scopes -> sim_node.sim.reset.ResetScope
RESET_SCOPES = {Scope.SCOPE_TIME: ResetScope.TIME, Scope.SCOPE_STATE: ResetScope.STATE,
                Scope.SCOPE_SPAWNED: ResetScope.SPAWNED}
# feedback comes once per step, in bursts: a deep history keeps each for a reader that keeps up
FEEDBACK_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
TIME_TOLERANCE = 1e-9       # [s] a wrench ends this close before its end time


def register_services(node):
    """Create every service and the action on the node (see the module docstring)."""
    return SimulationServices(node)


class _Cancelled(Exception):
    def __init__(self, done: int):
        super().__init__(f"canceled after {done} steps")
        self.done = done


@dataclass(eq=False)
class _Wrench:
    target: object              # RobotModelLink or RigidObjectModel
    force: np.ndarray           # [N] world axes
    torque: np.ndarray          # [N m] world axes
    point: np.ndarray | None    # [m] in the link / object frame (None: the centre of mass)
    end: float                  # [s] sim time


class WrenchSchedule:
    """The wrenches of apply_wrench, applied by a simulator hook before every physics substep
    while their time lasts (simulation thread only)."""

    def __init__(self, sim, logger):
        self._sim, self._logger = sim, logger
        self._active: list[_Wrench] = []
        self._hooked = False
        self._forced = None     # the target pushed in the last substep

    def add(self, wrench: _Wrench):
        if not self._hooked:
            self._sim.addHook("time", self._apply)
            self._hooked = True
        self._active.append(wrench)

    def clear(self):
        self._active = []

    def _apply(self, t: float):
        # a hook: it must never raise (that would end the simulation thread)
        pushed = None
        for wrench in list(self._active):
            if t >= wrench.end - TIME_TOLERANCE or wrench.target.getID() < 0:   # done, deleted
                self._active.remove(wrench)
                continue
            try:
                body = self._sim.body(wrench.target)
                torque = wrench.torque
                if wrench.point is not None:
                    R, p = body.getObjectTransform()
                    torque = torque + np.cross(p + R @ wrench.point - body.getTransform()[1],
                                               wrench.force)
                body.applyWrench(wrench.force, torque)
                pushed = wrench.target
            except Exception as error:          # noqa: BLE001 (never out of a hook)
                self._logger.error(f"apply_wrench on {wrench.target!r} stopped: {error}")
                self._active.remove(wrench)
        # SimpleSimulator leaves the engine's external forces of the last hook push in place
        # through later simulate() calls in which no hook pushes: a zero wrench clears them
        if pushed is None and self._forced is not None and self._forced.getID() >= 0:
            try:
                self._sim.body(self._forced).applyWrench(np.zeros(3), np.zeros(3))
            except Exception as error:          # noqa: BLE001 (never out of a hook)
                self._logger.error(f"apply_wrench: clearing the last wrench failed: {error}")
        self._forced = pushed


class SimulationServices:
    """The services and the action of one SimNode (module docstring)."""

    def __init__(self, node):
        self.node = node
        self.sim = node.sim
        self.logger = node.get_logger()
        self.states = StateStore(node.data_dir, node.max_read_size)
        self.wrenches = WrenchSchedule(node.sim, self.logger)
        self._changing = threading.Lock()   # spawn, delete, reset, stop, restore: one at a time
        self.run_state = node.run_state
        standard = [
            (GetEntities, "get_entities", self._get_entities),
            (GetEntityState, "get_entity_state", self._get_entity_state),
            (GetEntitiesStates, "get_entities_states", self._get_entities_states),
            (SetEntityState, "set_entity_state", self._set_entity_state),
            (SpawnEntity, "spawn_entity", self._spawn_entity),
            (DeleteEntity, "delete_entity", self._delete_entity),
            (ResetSimulation, "reset_simulation", self._reset_simulation),
            (GetSimulationState, "get_simulation_state", self._get_simulation_state),
            (SetSimulationState, "set_simulation_state", self._set_simulation_state),
            (StepSimulation, "step_simulation", self._step_simulation)]
        own = [
            (SetRealTimeFactor, "set_real_time_factor", self._set_real_time_factor),
            (SaveState, "save_state", self._save_state),
            (RestoreState, "restore_state", self._restore_state),
            (ApplyWrench, "apply_wrench", self._apply_wrench),
            (SetSurface, "set_surface", self._set_surface),
            (SetPadding, "set_padding", self._set_padding)]
        group = node.services_group
        for srv_type, name, work in standard:
            node.create_service(srv_type, f"~/{name}", self._standard(name, work),
                                callback_group=group)
        for srv_type, name, work in own:
            node.create_service(srv_type, f"~/{name}", self._own(name, work),
                                callback_group=group)
        for srv_type, name, answer in (   # (these cannot fail)
                (GetSimulatorFeatures, "get_simulator_features", self._get_simulator_features),
                (GetRealTimeFactor, "get_real_time_factor", self._get_real_time_factor)):
            node.create_service(srv_type, f"~/{name}", answer, callback_group=group)
        self.simulate_steps = ActionServer(
            node, SimulateSteps, "~/simulate_steps", self._simulate_steps,
            callback_group=group, cancel_callback=lambda request: CancelResponse.ACCEPT,
            feedback_pub_qos_profile=FEEDBACK_QOS)

    def recovered(self):
        """The node restored a good state after a blow-up (simulation thread): the wrenches
        of apply_wrench end, as after restore_state."""
        self.wrenches.clear()

    # -- callback wrappers -------------------------------------------------------------------
    def _unexpected(self, name: str, error: Exception) -> str:
        # the traceback goes to the log; the client gets what happened, not library names
        self.logger.error(f"~/{name}: unexpected error:\n{traceback.format_exc()}")
        if isinstance(error, MemoryError):
            return "the request needs more memory than is available"
        return f"the request failed unexpectedly (see the node's log): {error}"

    def _standard(self, name: str, work):
        """A simulation_interfaces callback: work(request, response) fills the response (its
        result OK); a RequestError becomes its result, anything else OPERATION_FAILED."""
        def callback(request, response):
            try:
                work(request, response)
                response.result.result = Result.OK
            except (RequestError, EntityError) as error:
                if isinstance(error, EntityError):
                    error = request_error(error)
                response = type(response)()
                response.result = Result(result=error.code, error_message=error.message)
            except Exception as error:          # noqa: BLE001 (the node must go on)
                response = type(response)()
                response.result = Result(result=Result.OPERATION_FAILED,
                                         error_message=self._unexpected(name, error))
            return response
        return callback

    def _own(self, name: str, work):
        """One of our services: work(request, response) fills the response (success true);
        an error makes success false with its message."""
        def callback(request, response):
            try:
                work(request, response)
                response.success = True
            except (RequestError, StateStoreError, EntityError) as error:
                response = type(response)(success=False, message=str(error))
            except Exception as error:          # noqa: BLE001 (the node must go on)
                response = type(response)(success=False,
                                          message=self._unexpected(name, error))
            return response
        return callback

    def _in_sim(self, work):
        return self.node.run_in_sim(work)

    # -- features and entities ---------------------------------------------------------------
    def _get_simulator_features(self, request, response):
        response.features.features = list(FEATURES)
        response.features.spawn_formats = list(SPAWN_FORMATS)
        response.features.custom_info = CUSTOM_INFO
        return response

    def _get_entities(self, request, response):
        # the names are taken on the simulation thread, the pattern matched here (RE2)
        check_filters(request.filters)
        index = self._in_sim(lambda: entity_index(self.sim.getWorld()))
        response.entities = [e.getName() for e in select(index, request.filters)]

    def _get_entity_state(self, request, response):
        response.state = self._in_sim(
            lambda: entity_state(self.sim, find_entity(self.sim.getWorld(), request.entity)))

    def _get_entities_states(self, request, response):
        check_filters(request.filters)
        found = select(self._in_sim(lambda: entity_index(self.sim.getWorld())),
                       request.filters)

        def work():     # (entities deleted in between are left out)
            present = [e for e in found if any(e is x for x in all_entities(self.sim.getWorld()))]
            return [e.getName() for e in present], [entity_state(self.sim, e) for e in present]
        response.entities, response.states = self._in_sim(work)

    def _set_entity_state(self, request, response):
        state = request.state
        pose = twist = None
        if request.set_pose:
            pose = pose_from_msg(state.pose, state.header.frame_id,
                                 SetEntityState.Response.INVALID_POSE, "state.pose")
        if request.set_twist:
            check_frame(state.header.frame_id, Result.OPERATION_FAILED, "state.twist")
            twist = twist_from_msg(state.twist, "state.twist")
        acceleration = finite([state.acceleration.linear.x, state.acceleration.linear.y,
                               state.acceleration.linear.z, state.acceleration.angular.x,
                               state.acceleration.angular.y, state.acceleration.angular.z],
                              "state.acceleration") if request.set_acceleration else None
        moving = ((twist is not None and (np.any(twist[0]) or np.any(twist[1])))
                  or (acceleration is not None and np.any(acceleration)))

        def work():
            entity = find_entity(self.sim.getWorld(), request.entity)
            reason = static_reason(entity)
            if reason is not None:
                if pose is not None or moving:
                    raise RequestError(Result.OPERATION_FAILED, f"{reason}: it cannot be "
                                       f"moved or given a velocity or acceleration")
                return
            if pose is not None or twist is not None:
                set_frame_motion(self.sim, entity, pose, twist)
        self._in_sim(work)
        if acceleration is not None:
            response.result.error_message = "acceleration ignored: it cannot be set"

    def _spawn_entity(self, request, response):
        pose = pose_from_msg(request.initial_pose.pose, request.initial_pose.header.frame_id,
                             SpawnEntity.Response.INVALID_POSE, "initial_pose")
        # parsed here, off the simulation thread; substitution args refused (a client's file)
        urdf = parse_spawnable(spawn_source(request.entity_resource, self.node.max_read_size),
                               substitutions=False, where="entity_resource: ")
        with self._changing:        # the world's entities change only under this lock
            def work():
                entity = self.sim.spawn(urdf, name=request.name,
                                        namespace=request.entity_namespace, R=pose[0],
                                        t=pose[1], allow_renaming=request.allow_renaming,
                                        where="entity_resource: ")
                self.node.world_changed()
                return entity
            entity = self._in_sim(work)
        response.entity_name = entity.getName()

    def _delete_entity(self, request, response):
        with self._changing:
            def work():
                self.sim.delete(request.entity)
                self.node.world_changed()
            self._in_sim(work)

    # -- reset and run state -----------------------------------------------------------------
    def _reset_simulation(self, request, response):
        scope = request.scope or Scope.SCOPE_ALL
        known = sum(RESET_SCOPES)
        if scope != Scope.SCOPE_ALL and scope & ~known:
            raise RequestError(Result.FEATURE_UNSUPPORTED, f"scope {scope} has unknown bits; "
                               f"valid: SCOPE_TIME ({Scope.SCOPE_TIME}), SCOPE_STATE "
                               f"({Scope.SCOPE_STATE}), SCOPE_SPAWNED ({Scope.SCOPE_SPAWNED}) "
                               f"and their sums, SCOPE_ALL ({Scope.SCOPE_ALL}), SCOPE_DEFAULT "
                               f"(0)")
        reset = ResetScope(0)
        for bit, sim_scope in RESET_SCOPES.items():
            if scope & bit:
                reset |= sim_scope
        with self._changing:
            def work():
                self.sim.reset(reset)
                self._after_reset(reset)
            self._in_sim(work)

    def _after_reset(self, scope: ResetScope):
        # on the simulation thread, after sim.reset(scope): what ROS publishes of it
        if scope & (ResetScope.TIME | ResetScope.STATE):
            self.wrenches.clear()
        self.node.world_changed()
        self.node.time_jumped()

    def _run_state(self) -> int:
        return SIMULATION_STATES[self.run_state.state]

    def _get_simulation_state(self, request, response):
        response.state.state = self._run_state()

    def _set_simulation_state(self, request, response):
        # any valid request ends a running step request (a way out of a huge one); PAUSED
        # then succeeds: stepping was the run state it left
        interrupted = request.state.state in STATE_NAMES and self._in_sim(
            lambda: self.node.interrupt_steps("set_simulation_state"))
        target, current = request.state.state, self._run_state()
        if interrupted and target == current == SimulationState.STATE_PAUSED:
            return
        if target not in STATE_NAMES:
            if target == SimulationState.STATE_QUITTING:
                raise RequestError(Result.FEATURE_UNSUPPORTED, "quitting is not supported "
                                   "through set_simulation_state: stop the node (SIGINT)")
            raise RequestError(SetSimulationState.Response.INCORRECT_TRANSITION, f"state "
                               f"{target} cannot be requested; valid: " + ", ".join(
                                   f"{n} ({v})" for v, n in STATE_NAMES.items()))
        run = RUN_STATES[target]
        try:
            if run == Run.PLAYING:
                self.run_state.set(run)
            elif run == Run.PAUSED:
                if current == SimulationState.STATE_STOPPED:
                    self.run_state.set(run)
                else:       # paused between two steps: no step follows the answer
                    self._in_sim(lambda: self.run_state.set(run))
            else:
                with self._changing:
                    def stop():
                        self.run_state.set(run)
                        self._after_reset(ResetScope.TIME | ResetScope.STATE)
                    self._in_sim(stop)
        except AlreadyInState as error:
            raise RequestError(SetSimulationState.Response.ALREADY_IN_TARGET_STATE,
                               str(error)) from None

    # -- stepping ----------------------------------------------------------------------------
    def _check_steps(self, steps: int, what: str):
        # on the simulation thread
        try:
            self.run_state.check_steps(steps, what)
        except StepsRefused as error:
            raise RequestError(Result.OPERATION_FAILED, str(error)) from None

    def _step_simulation(self, request, response):
        # taken in chunks between other services' work (SimNode.request_steps)
        try:
            self.node.request_steps(request.steps, check=lambda: self._check_steps(
                request.steps, "step_simulation"))
        except (StepRequestBusy, StepRequestInterrupted) as error:
            raise RequestError(Result.OPERATION_FAILED, f"step_simulation: {error}") from None

    def _simulate_steps(self, goal_handle):
        steps = goal_handle.request.steps
        result, feedback = SimulateSteps.Result(), SimulateSteps.Feedback()
        lost = []       # steps whose feedback could not be published

        def on_step(done: int):
            feedback.completed_steps, feedback.remaining_steps = done, steps - done
            try:
                goal_handle.publish_feedback(feedback)
            except Exception as error:      # noqa: BLE001 (a reader far behind: skipped)
                if not lost:
                    self.logger.warning(f"~/simulate_steps: feedback of step {done} not "
                                        f"published ({error}); the steps go on")
                lost.append(done)
            if done < steps and goal_handle.is_cancel_requested:
                raise _Cancelled(done)

        def check():
            self._check_steps(steps, "simulate_steps")
            if goal_handle.is_cancel_requested:
                raise _Cancelled(0)
        try:
            self.node.request_steps(steps, on_step, check)
        except (StepRequestBusy, StepRequestInterrupted) as error:
            goal_handle.abort()
            result.result = Result(result=Result.OPERATION_FAILED,
                                   error_message=f"simulate_steps: {error}")
            return result
        except _Cancelled as cancelled:
            goal_handle.canceled()
            result.result = Result(result=Result.OK, error_message=(
                f"canceled after {cancelled.done} of {steps} steps"))
            return result
        except RequestError as error:
            goal_handle.abort()
            result.result = Result(result=error.code, error_message=error.message)
            return result
        except Exception as error:              # noqa: BLE001 (the node must go on)
            goal_handle.abort()
            result.result = Result(result=Result.OPERATION_FAILED,
                                   error_message=self._unexpected("simulate_steps", error))
            return result
        goal_handle.succeed()
        result.result = Result(result=Result.OK)
        return result

    # -- our own services --------------------------------------------------------------------
    def _set_real_time_factor(self, request, response):
        factor = request.real_time_factor
        problem = real_time_factor_problem(factor)
        if problem:
            raise RequestError(Result.OPERATION_FAILED, problem)
        self.node.set_real_time_factor(factor)

    def _get_real_time_factor(self, request, response):
        response.target_real_time_factor = float(self.node.real_time_factor)
        response.measured_real_time_factor = float(self.node.measured_real_time_factor())
        return response

    def _save_state(self, request, response):
        state, t = self._in_sim(lambda: (self.sim.getState(), self.sim.getTime()))
        written = self.states.save(state, request.id, request.path)
        response.sim_time, response.size = t, len(state)
        if written:
            response.message = f"written to {written}"

    def _restore_state(self, request, response):
        state = self.states.load(request.id, request.path)
        with self._changing:
            def work():
                try:
                    self.sim.setState(state)
                except ValueError as error:     # another world's state: nothing changed
                    raise RequestError(Result.OPERATION_FAILED, str(error)) from None
                self.wrenches.clear()
                self.node.world_changed()
                self.node.time_jumped()
                return self.sim.getTime()
            response.sim_time = self._in_sim(work)
            self.run_state.restored()

    def _apply_wrench(self, request, response):
        w = request.wrench
        force = bounded([w.force.x, w.force.y, w.force.z], bounds.MAX_FORCE, "N",
                        "wrench.force")
        torque = bounded([w.torque.x, w.torque.y, w.torque.z], bounds.MAX_TORQUE, "N m",
                         "wrench.torque")
        point = (bounded([request.point.x, request.point.y, request.point.z],
                         bounds.MAX_POSITION, "m", "point") if request.use_point else None)
        duration = positive_duration(request.duration, "duration")

        def work():
            [target] = target_links(self.sim.getWorld(), request.entity, request.link,
                                    all_links=False)
            if isinstance(target, TerrainModel):
                raise RequestError(Result.OPERATION_FAILED, f"'{request.entity}' is a terrain: "
                                   f"it is static, forces have no effect on it")
            [body] = simulated_bodies(self.sim, [target])
            if not body.isDynamicsEnabled():
                raise RequestError(Result.OPERATION_FAILED, f"{body!r} is static (fixed to the "
                                   f"world or kinematic): forces have no effect on it")
            t = self.sim.getTime()
            self.wrenches.add(_Wrench(target, force, torque, point, t + duration))
            return t
        response.start_time = self._in_sim(work)

    def _set_surface(self, request, response):
        try:
            surface = SurfaceParameters(kRestitution=request.k_restitution,
                                        kFriction=request.k_friction,
                                        kStiffness=request.k_stiffness,
                                        kDamping=request.k_damping)
            bounds.surface(surface, "bounds")
        except ValueError as error:
            raise RequestError(Result.OPERATION_FAILED, f"surface: {error}") from None

        def work():
            targets = target_links(self.sim.getWorld(), request.entity, request.link,
                                   all_links=True)
            for body in simulated_bodies(self.sim, targets):
                body.setSurface(surface)
        self._in_sim(work)

    def _set_padding(self, request, response):
        padding = request.padding
        if not 0.0 <= padding <= bounds.MAX_PADDING:
            raise RequestError(Result.OPERATION_FAILED, f"padding must be a length in [0, "
                               f"{bounds.MAX_PADDING:g}] m, got {padding}")

        def work():
            targets = target_links(self.sim.getWorld(), request.entity, request.link,
                                   all_links=True)
            for body in simulated_bodies(self.sim, targets):
                body.setCollisionPadding(padding)
        self._in_sim(work)
