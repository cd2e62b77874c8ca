"""Klamp't's simulation helpers (seed 000, klampt.sim.simulation) on the plugin lifecycle.

``SensorEmulator`` (simulation -> readings for a controller) and ``ActuatorEmulator``
(controller commands -> the simulation, at the control rate and at every physics substep) are
the two kinds of plugin (sim_node/sim/plugin.py); ``DefaultSensorEmulator`` and
``DefaultActuatorEmulator`` give Klamp't's default readings and commands.

``SimpleSimulator`` runs them with hooks and per-robot controllers. One ``simulate(dt)`` is one
control step; its fixed order is

1. sensors whose update is due at the current sim time t (each at its own period), robots in
   index order and then world sensors, each robot's in the order they were added;
2. controllers, robots in index order: a controller function gets the robot's
   SimRobotController; a controller block gets the robot's latest readings (its sensors'
   readings merged, a later sensor's key overriding an earlier one's) and returns a commands
   dict;
3. actuators ``process(commands, dt)``, same order (world actuators get an empty dict); keys
   that no actuator handled stay unapplied and are reported once;
4. physics in n = ceil(dt / getSimStep()) substeps of h = dt / n, each one: the hooks (in the
   order added), the actuators' ``substep(h)``, then the physics step. Without hooks and
   substepping actuators the engine takes all n substeps in one call.

The status, the contact-feedback flags and the forces applied with SimBody cover the whole
simulate(dt) as in Simulator, except that a force applied outside a hook or an emulator acts
on the first substep only when hooks or substepping actuators run (as in Klamp't).

State: plugin state (each plugin's get_state(), its random generator, when its next update is
due and, for sensors with a period, the readings they hold) and the state of controller objects
with get_state/set_state are part of getState(); setState continues bit for bit. A state
without it (the initial state, or one of a plain Simulator) resets every plugin: reset()
re-seeds the generators, calls reset("all") and puts stateful controller objects back to their
state of when they were set.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace

import numpy as np

from sim_node.model.robot import RobotModel, RobotModelLink
from sim_node.model.settings import RobotSettings
from sim_node.model.world import RigidObjectModel, TerrainModel
from sim_node.sim.controller import SimRobotController
from sim_node.sim.plugin import (ACTUATOR_GROUP, SENSOR_GROUP, Plugin, PluginConfig,
                                 PluginContext, available_plugins, call_guarded, config_keys,
                                 disable, load_plugin_class, make_context, parse_config,
                                 plugin_label, reseed)
from sim_node.sim.simulator import STATUS_UNSTABLE, Simulator

_log = logging.getLogger(__name__)
_TIME_TOLERANCE = 1e-9      # [s] a sensor update is due this close before its time


@dataclass(frozen=True, kw_only=True)
class SensorConfig(PluginConfig):
    """period [s]: time between two updates in sim time (0: at every control step). Updates
    happen at control steps, so periods shorter than the control step act as 0."""
    period: float = 0.0

    def __post_init__(self):
        if not (0.0 <= self.period < math.inf):
            raise ValueError(f"period must be a time >= 0 [s], got {self.period}")


class SensorEmulator(Plugin):
    """A sensor: reads the simulation, gives readings (``update(t)`` -> dict name -> value)
    to the robot's controller. Its Config derives from SensorEmulator.Config (the period)."""
    Config = SensorConfig


class ActuatorEmulator(Plugin):
    """An actuator: turns the controller's commands into the simulation, once per control
    step (``process(commands, dt)``, removing the keys it handled from the dict) and before
    every physics substep (``substep(dt)``)."""


def _klampt_configure(plugin: Plugin, sim, controller):
    # the Klamp't constructor (sim, controller): configure with the defaults right away
    if not isinstance(sim, Simulator) or not isinstance(controller, SimRobotController):
        raise TypeError(f"{type(plugin).__name__}(sim, controller) needs a Simulator and one of "
                        f"its SimRobotControllers, got {type(sim).__name__} and "
                        f"{type(controller).__name__}")
    robots = [r for r in range(sim.getWorld().numRobots()) if sim.controller(r) is controller]
    if not robots:
        raise ValueError(f"{type(plugin).__name__}: the controller is not one of this "
                         f"simulator's")
    plugin.configure(make_context(sim, "default", robots[0]), type(plugin).Config())


def _require_robot(plugin: Plugin, ctx: PluginContext):
    if ctx.controller is None:
        raise ValueError(f"{type(plugin).__name__} emulates a robot's sensors or actuators; "
                         f"it cannot be a world plugin (ctx.robot is None)")


class DefaultSensorEmulator(SensorEmulator):
    """Klamp't's default readings of one robot, all read at the update:

    t [s] sim time; dt [s] the controller's period (its getRate()); q (nq) sensed
    configuration; dq (nv) sensed velocity; qcmd (nq) commanded configuration; dqcmd (nv)
    commanded velocity (numpy arrays; see SimRobotController for the layouts).

    ``DefaultSensorEmulator(sim, controller)`` (Klamp't) makes a configured one.
    """

    def __init__(self, sim=None, controller=None):
        if sim is not None or controller is not None:
            _klampt_configure(self, sim, controller)

    def configure(self, ctx, config):
        _require_robot(self, ctx)
        super().configure(ctx, config)

    def reset(self, scope):
        """Nothing to reset: every reading is read from the simulator at the update."""

    def update(self, t=None):
        controller = self.ctx.controller
        return {"t": self.ctx.sim.getTime() if t is None else t, "dt": controller.getRate(),
                "q": controller.getSensedConfig(), "dq": controller.getSensedVelocity(),
                "qcmd": controller.getCommandedConfig(),
                "dqcmd": controller.getCommandedVelocity()}


# -- the default actuator's commands: parsed from the Klamp't dict, then applied ---------
@dataclass(frozen=True)
class _PIDCommand:
    q: object
    dq: object
    torque_feedforward: object

    def apply(self, controller):
        controller.setPIDCommand(self.q, self.dq, self.torque_feedforward)


@dataclass(frozen=True)
class _VelocityCommand:
    dq: object
    duration: object

    def apply(self, controller):
        controller.setVelocity(self.dq, self.duration)


@dataclass(frozen=True)
class _TorqueCommand:
    torque: object

    def apply(self, controller):
        controller.setTorqueCommand(self.torque)


DEFAULT_COMMAND_KEYS = ("qcmd", "dqcmd", "tcmd", "torquecmd")


def _parse_command(values: dict):
    # values: the DEFAULT_COMMAND_KEYS present in a commands dict
    if "qcmd" in values:
        if "tcmd" in values:
            raise ValueError("tcmd (a duration) goes with dqcmd alone, not with qcmd")
        return _PIDCommand(values["qcmd"], values.get("dqcmd"), values.get("torquecmd"))
    if "dqcmd" in values:
        if "tcmd" not in values or "torquecmd" in values:
            raise ValueError("dqcmd without qcmd is a velocity command: it needs tcmd (its "
                             "duration [s]) and no torquecmd")
        return _VelocityCommand(values["dqcmd"], values["tcmd"])
    if "tcmd" in values:
        raise ValueError("tcmd (a duration) needs dqcmd")
    return _TorqueCommand(values["torquecmd"])


class DefaultActuatorEmulator(ActuatorEmulator):
    """Klamp't's default commands of one robot, applied through its SimRobotController:

    qcmd (+ dqcmd, + torquecmd as feed-forward) -> setPIDCommand(qcmd, dqcmd, torquecmd);
    dqcmd with tcmd [s]                         -> setVelocity(dqcmd, tcmd);
    torquecmd alone                             -> setTorqueCommand(torquecmd).

    Vectors as SimRobotController takes them (joint-sized, or q/v-sized). These keys are
    removed from the dict; other keys stay for other actuators. A bad command (an inconsistent
    set of keys, wrong sizes, NaN) is rejected whole with a warning: the robot keeps its
    previous command. ``DefaultActuatorEmulator(sim, controller)`` (Klamp't) makes a configured
    one.
    """

    def __init__(self, sim=None, controller=None):
        if sim is not None or controller is not None:
            _klampt_configure(self, sim, controller)

    def configure(self, ctx, config):
        _require_robot(self, ctx)
        super().configure(ctx, config)

    def reset(self, scope):
        """Nothing to reset: commands are held by the controller (part of its state)."""

    def process(self, commands, dt):
        if not commands:
            return
        values = {key: commands.pop(key) for key in DEFAULT_COMMAND_KEYS if key in commands}
        if not values:
            return
        try:
            _parse_command(values).apply(self.ctx.controller)
        except (ValueError, TypeError) as e:      # the controller checks before it applies
            self.ctx.logger.warning("robot %d: command %s rejected: %s", self.ctx.robot,
                                    sorted(values), e)


# -- SimpleSimulator ---------------------------------------------------------------------
@dataclass(eq=False)
class _Slot:
    """A plugin added to a SimpleSimulator, with the simulator's bookkeeping of it."""
    plugin: Plugin
    ctx: PluginContext
    robot: int | None
    period: float = 0.0              # [s] sensors: update period (0: every control step)
    next_update: float = 0.0         # [s] sensors: sim time of the next update
    readings: dict | None = None     # sensors: the latest readings
    substeps: bool = False           # actuators: the class has a substep phase
    endpoints: list = field(default_factory=list)   # what its context's factories created

    def order(self, num_robots: int) -> int:
        return num_robots if self.robot is None else self.robot


@dataclass(eq=False)
class _Control:
    """A robot's controller: a function f(SimRobotController) or a controller block with
    output_and_advance(**readings) -> commands."""
    target: object
    is_block: bool
    stateful: bool          # the target has get_state / set_state
    initial_state: object = None    # its get_state() when set: what reset() restores


_TIME = object()            # addHook: the sim time in place of an object


def _encode_readings(readings: dict) -> dict:
    # JSON-able: arrays tagged with their dtype, numpy scalars as Python numbers
    out = {}
    for key, value in readings.items():
        if isinstance(value, np.ndarray):
            out[key] = ["ndarray", value.dtype.str, value.tolist()]
        else:
            out[key] = ["value", value.item() if isinstance(value, np.generic) else value]
    return out


def _decode_readings(encoded: dict) -> dict:
    return {key: np.array(value[2], dtype=value[1]) if value[0] == "ndarray" else value[1]
            for key, value in encoded.items()}


class SimpleSimulator(Simulator):
    """A Simulator with sensor and actuator emulators, hooks and robot controllers (Klamp't's
    SimpleSimulator); see the module docstring for the order of a control step.

    Each robot gets the plugins its world-file entry lists (``plugins: [{name, config}]``,
    entry-point names looked up in sim_node.sensors and sim_node.actuators; a name in both
    groups loads both, each taking the config keys its Config declares), or, when it lists
    none, ``default_plugins`` (the same form; None: a DefaultSensorEmulator and a
    DefaultActuatorEmulator, as Klamp't does). ``create_publisher`` / ``create_subscription``
    are handed to the plugins in their context (a ROS node's factories). Robots added or
    removed later (addEntity, removeEntity) gain or lose their plugins the same way; what a
    removed robot's plugins created through the factories goes to ``destroy_endpoint``.
    """

    def __init__(self, world, *, default_plugins=None, create_publisher=None,
                 create_subscription=None, destroy_endpoint=None):
        # None while the base class takes the initial state: that state holds no plugin state,
        # so reset() resets every plugin
        self._sensors = None
        self._default_plugins = (None if default_plugins is None else
                                 RobotSettings(plugins=tuple(default_plugins)).plugins)
        self._factories = dict(create_publisher=create_publisher,
                               create_subscription=create_subscription)
        self._destroy_endpoint = destroy_endpoint
        super().__init__(world)
        # every world-file plugin found, parsed and made before any is configured
        plugins = [(cls(), r, name, config) for r in range(world.numRobots())
                   for name, cls, config in self._robot_plugins(r)]
        self._sensors: list[_Slot] = []
        self._actuators: list[_Slot] = []
        self._hooks: list[tuple] = []
        self._control: dict[int, _Control] = {}
        self._reported: set = set()     # (robot, command key) reported as not handled
        for plugin, r, name, config in plugins:
            self._attach(plugin, r, name, config)

    # -- plugins ---------------------------------------------------------------------------
    def _robot_plugins(self, r: int) -> list:
        # (entry-point name, class, config) of every plugin robot r gets
        groups = {SENSOR_GROUP: SensorEmulator, ACTUATOR_GROUP: ActuatorEmulator}
        specs = []
        robot = self._world.robot(r)
        listed = robot.settings.plugins or self._default_plugins
        if listed is None:
            specs += [("default", DefaultSensorEmulator, DefaultSensorEmulator.Config()),
                      ("default", DefaultActuatorEmulator, DefaultActuatorEmulator.Config())]
        for i, entry in enumerate(listed or []):
            name = entry.name
            where = f"robot '{robot.getName()}' plugins[{i}] ('{name}')"
            found = [(group, base) for group, base in groups.items()
                     if name in available_plugins(group)]
            if not found:
                raise LookupError(
                    f"{where}: no sensor or actuator plugin named '{name}'; sensors "
                    f"({SENSOR_GROUP}): {', '.join(available_plugins(SENSOR_GROUP))}; "
                    f"actuators ({ACTUATOR_GROUP}): "
                    f"{', '.join(available_plugins(ACTUATOR_GROUP))}")
            classes = []
            for group, base in found:
                cls = load_plugin_class(group, name)
                if not issubclass(cls, base):
                    raise TypeError(f"{where}: plugin '{name}' of {group} is "
                                    f"{cls.__qualname__}, not a {base.__name__}")
                classes.append(cls)
            specs += [(name, cls, config)
                      for cls, config in _parse_configs(classes, entry.config, where)]
        return specs

    def addEmulator(self, robot, e):
        """Add a SensorEmulator or ActuatorEmulator to a robot (index, name or RobotModel;
        None: a world plugin); it runs after those added before (module docstring) and is
        reset("all") now. An emulator not configured yet is configured with its name the
        class name and its Config's defaults; one made with the Klamp't constructor
        (sim, controller) must belong to this simulator and robot."""
        if not isinstance(e, (SensorEmulator, ActuatorEmulator)):
            raise TypeError(f"addEmulator: expected a SensorEmulator or ActuatorEmulator, got "
                            f"{type(e).__name__}")
        r = None if robot is None else self._robot_index(robot)
        if any(slot.plugin is e for slot in self._sensors + self._actuators):
            raise ValueError(f"addEmulator: {plugin_label(e)} was already added")
        if e.ctx is None:
            name = type(e).__name__
            self._attach(e, r, name, parse_config(type(e), {}, f"addEmulator({name})"))
        elif e.ctx.sim is not self or e.ctx.robot != r:
            raise ValueError(f"addEmulator: {plugin_label(e)} was configured for another "
                             f"simulator or robot")
        else:
            self._attach_configured(e, r)

    def _attach(self, plugin: Plugin, r: int | None, name: str, config):
        ordinal = sum(slot.ctx.name == name and slot.robot == r
                      for slot in self._sensors + self._actuators)
        endpoints = []

        def recorded(factory):
            # the factory, keeping what it makes: destroyed when the plugin's robot goes
            def create(*args, **kwargs):
                endpoint = factory(*args, **kwargs)
                endpoints.append(endpoint)
                return endpoint
            return None if factory is None else create

        ctx = make_context(self, name, r, config.seed if isinstance(config, PluginConfig)
                           else None, ordinal,
                           **{key: recorded(f) for key, f in self._factories.items()})
        call_guarded(plugin, plugin.configure, ctx, config)
        self._attach_configured(plugin, r, ctx, endpoints)

    def _attach_configured(self, plugin: Plugin, r: int | None, ctx=None, endpoints=()):
        slot = _Slot(plugin, ctx or plugin.ctx, r, next_update=self.getTime(),
                     endpoints=list(endpoints))
        if isinstance(plugin, SensorEmulator):
            if plugin.enabled and not isinstance(plugin.config, SensorConfig):
                raise TypeError(f"{plugin_label(plugin)}: the Config of a sensor must derive "
                                f"from SensorEmulator.Config (it holds the update period)")
            slot.period = plugin.config.period if plugin.enabled else 0.0
            slots = self._sensors
        else:
            slot.substeps = type(plugin).substep is not Plugin.substep
            slots = self._actuators
        call_guarded(plugin, plugin.reset, "all")
        slots.append(slot)
        n = self._world.numRobots()
        slots.sort(key=lambda s: s.order(n))        # stable: the order added within a robot

    def _entities_changed(self, previous_controllers: list):
        # robots kept: their plugins follow them to their new index; removed: their plugins
        # shut down; added: their plugins attached
        now = {id(c): r for r, c in enumerate(self._controllers)}
        moved = {r: now.get(id(c)) for r, c in enumerate(previous_controllers)}
        for slots in (self._sensors, self._actuators):
            for slot in list(slots):
                if slot.robot is None:
                    continue
                r = moved[slot.robot]
                if r is None:
                    call_guarded(slot.plugin, slot.plugin.shutdown)
                    slots.remove(slot)
                    if self._destroy_endpoint is not None:
                        for endpoint in slot.endpoints:
                            self._destroy_endpoint(endpoint)
                    continue
                slot.robot = r
                slot.ctx = replace(slot.ctx, robot=r)
                slot.plugin.ctx = slot.ctx
        self._control = {moved[r]: c for r, c in self._control.items() if moved[r] is not None}
        kept = set(moved.values())
        for r in range(self._world.numRobots()):
            if r not in kept:
                for plugin, name, config in [(cls(), name, config)
                                             for name, cls, config in self._robot_plugins(r)]:
                    self._attach(plugin, r, name, config)
        n = self._world.numRobots()
        for slots in (self._sensors, self._actuators):
            slots.sort(key=lambda slot: slot.order(n))

    def getPlugins(self) -> list:
        """The plugins in the order they run: sensors, then actuators (each by robot, world
        plugins last, then in the order added)."""
        return [slot.plugin for slot in self._sensors + self._actuators]

    def close(self):
        """Shut every plugin down (in reverse order) and remove them."""
        for slot in reversed(self._sensors + self._actuators):
            call_guarded(slot.plugin, slot.plugin.shutdown)
        self._sensors, self._actuators = [], []

    # -- hooks and controllers -------------------------------------------------------------
    def addHook(self, objects, function):
        """Call function(*objects) before every physics substep. objects (one, or a list):
        'time' (the sim time [s]); the name of a world item (its SimBody, or for a robot its
        SimRobotController); a RobotModelLink, RigidObjectModel or TerrainModel (its SimBody);
        a RobotModel (its SimRobotController); anything else is passed as it is."""
        if not callable(function):
            raise TypeError(f"addHook: function must be callable, got {type(function).__name__}")
        items = objects if isinstance(objects, (list, tuple)) else [objects]
        self._hooks.append((function, tuple(self._hook_argument(o) for o in items)))

    def _hook_argument(self, item):
        world = self._world
        if isinstance(item, str):
            if item == "time":
                return _TIME
            names = {world.getName(i): i for i in range(world.numIDs())}
            if item not in names:
                raise KeyError(f"addHook: no world item named '{item}'; names: 'time', "
                               f"{', '.join(repr(n) for n in names)}")
            item = world.getEntity(names[item])
        if isinstance(item, RobotModel):
            return self.controller(item)
        if isinstance(item, (RobotModelLink, RigidObjectModel, TerrainModel)):
            return self.body(item)
        return item

    def setController(self, robot, function):
        """Set a robot's controller (index, name or RobotModel), run once per simulate(dt)
        call, which is then the control step: a function f(SimRobotController), or a
        controller block with output_and_advance(**readings) -> commands dict for the
        actuator emulators (Klamp't's ControllerBlock). None removes it. A controller with
        get_state() / set_state(state) (JSON-able) has its state saved with getState(), and
        reset() gives it back its state of when it was set."""
        r = self._robot_index(robot)
        if function is None:
            self._control.pop(r, None)
            return
        is_block = callable(getattr(function, "output_and_advance", None))
        if not (is_block or callable(function)):
            raise TypeError(f"setController: expected a function of the SimRobotController or "
                            f"an object with output_and_advance(**readings), got "
                            f"{type(function).__name__}")
        stateful = all(callable(getattr(function, m, None)) for m in ("get_state", "set_state"))
        self._control[r] = _Control(function, is_block, stateful,
                                    function.get_state() if stateful else None)

    # -- stepping --------------------------------------------------------------------------
    def simulate(self, dt: float):
        """One control step of dt [s]: sensors, controllers, actuators, then the physics in
        substeps of at most getSimStep() with the hooks and actuator substeps before each."""
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"simulate: dt must be a positive time, got {dt}")
        self._update_sensors(self.getTime())
        commands = self._run_controllers()
        for slot in self._actuators:
            call_guarded(slot.plugin, slot.plugin.process,
                         {} if slot.robot is None else commands[slot.robot], dt)
        self._report_unhandled(commands)
        if self._hooks or any(s.substeps and s.plugin.enabled for s in self._actuators):
            self._simulate_substeps(dt)
        else:
            super().simulate(dt)

    def _update_sensors(self, t: float):
        for slot in self._sensors:
            plugin = slot.plugin
            if not plugin.enabled or t < slot.next_update - _TIME_TOLERANCE:
                continue
            readings = call_guarded(plugin, plugin.update, t)
            if not plugin.enabled:
                continue
            if not isinstance(readings, dict):
                disable(plugin, "update", TypeError(
                    f"update() must return a dict of readings, got {type(readings).__name__}"))
                continue
            slot.readings = readings
            if slot.period > 0.0:       # the first time of its grid after t
                missed = math.floor((t + _TIME_TOLERANCE - slot.next_update) / slot.period)
                slot.next_update += (missed + 1) * slot.period

    def _readings(self, r: int) -> dict:
        merged = {}
        for slot in self._sensors:
            if slot.robot == r and slot.plugin.enabled and slot.readings is not None:
                merged.update(slot.readings)
        return merged

    def _run_controllers(self) -> list:
        commands = [{} for _ in range(self._world.numRobots())]
        for r, control in sorted(self._control.items()):
            if not control.is_block:
                control.target(self.controller(r))
                continue
            out = control.target.output_and_advance(**self._readings(r))
            if out is not None and not isinstance(out, dict):
                raise TypeError(f"the controller of robot {r}: output_and_advance returned "
                                f"{type(out).__name__}, expected a dict of commands or None")
            commands[r] = dict(out or {})
        return commands

    def _report_unhandled(self, commands: list):
        for r, left in enumerate(commands):
            for key in left:
                if (r, key) not in self._reported:
                    self._reported.add((r, key))
                    _log.warning("robot %d: no actuator emulator handles the command '%s'; it "
                                 "is not applied (reported once). DefaultActuatorEmulator "
                                 "handles %s", r, key, ", ".join(DEFAULT_COMMAND_KEYS))

    def _simulate_substeps(self, dt: float):
        # Simulator.simulate with the hooks and actuator substeps before each physics substep:
        # one status and one contact-feedback window for the whole dt; forces applied before
        # simulate() act over all its substeps, forces applied by hooks over their substep
        h, n = self._begin_simulate(dt)
        held = dict(self._pending)
        version, hook_forces = self._wrench_version, False
        substepping = [slot for slot in self._actuators if slot.substeps]
        for _ in range(n):
            for function, args in self._hooks:
                function(*(self.getTime() if a is _TIME else a for a in args))
            for slot in substepping:
                call_guarded(slot.plugin, slot.plugin.substep, h)
            if self._wrench_version != version or hook_forces:
                self._apply_pending()               # held + this substep's hook forces
                hook_forces = self._wrench_version != version
                self._pending, version = dict(held), self._wrench_version
            self._advance(h, 1)
            if self.engine.status == STATUS_UNSTABLE:
                break
        self._end_simulate()

    # -- state -----------------------------------------------------------------------------
    def _slot_state(self, slot: _Slot) -> dict:
        plugin = slot.plugin
        state = call_guarded(plugin, plugin.get_state)
        return {"plugin": slot.ctx.name, "class": _class_name(plugin), "robot": slot.robot,
                "rng": slot.ctx.rng.bit_generator.state, "next_update": slot.next_update,
                "readings": (None if slot.period == 0.0 or slot.readings is None
                             else _encode_readings(slot.readings)),
                "state": state if plugin.enabled else None}

    def _extra_state(self):
        if self._sensors is None:
            return None
        controllers = []
        for r in range(self._world.numRobots()):
            control = self._control.get(r)
            controllers.append(control.target.get_state() if control and control.stateful
                               else None)
        return {"plugins": [self._slot_state(s) for s in self._sensors + self._actuators],
                "controllers": controllers}

    def _check_extra_state(self, extra):
        if extra is None:
            return
        slots = self._sensors + self._actuators
        try:
            entries, controllers = extra["plugins"], extra["controllers"]
            saved = [(e["plugin"], e["class"], e["robot"]) for e in entries]
        except (KeyError, TypeError) as e:
            raise ValueError(f"setState: corrupt plugin state ({e})") from None
        ours = [(s.ctx.name, _class_name(s.plugin), s.robot) for s in slots]
        if saved != ours:
            raise ValueError(f"setState: the state is of plugins {saved}, this simulator has "
                             f"{ours}")
        if not isinstance(controllers, list) or len(controllers) != self._world.numRobots():
            raise ValueError("setState: corrupt controller state")
        check = np.random.default_rng(0).bit_generator
        for slot, entry in zip(slots, entries):
            try:
                check.state = entry["rng"]
                float(entry["next_update"])
                if entry["readings"] is not None:
                    _decode_readings(entry["readings"])
            except (KeyError, TypeError, ValueError, IndexError) as e:
                raise ValueError(f"setState: corrupt state of plugin {plugin_label(slot.plugin)}"
                                 f" ({e})") from None
        for r, state in enumerate(controllers):
            control = self._control.get(r)
            if state is not None and not (control and control.stateful):
                raise ValueError(f"setState: the state holds a controller state for robot {r}, "
                                 f"which has no controller with set_state")

    def _set_extra_state(self, extra):
        slots = self._sensors + self._actuators
        if extra is None:
            for slot in slots:
                reseed(slot.ctx)
                slot.next_update = self.getTime()
                slot.readings = None
                call_guarded(slot.plugin, slot.plugin.reset, "all")
            for control in self._control.values():
                if control.stateful:
                    control.target.set_state(control.initial_state)
            return
        for slot, entry in zip(slots, extra["plugins"]):
            slot.ctx.rng.bit_generator.state = entry["rng"]
            slot.next_update = float(entry["next_update"])
            slot.readings = (None if entry["readings"] is None
                             else _decode_readings(entry["readings"]))
            if entry["state"] is None:        # disabled when saved: back to its start
                call_guarded(slot.plugin, slot.plugin.reset, "all")
            else:
                call_guarded(slot.plugin, slot.plugin.set_state, entry["state"])
        for r, state in enumerate(extra["controllers"]):
            if state is not None:
                self._control[r].target.set_state(state)


def _parse_configs(classes: list, mapping, where: str) -> list:
    # [(class, config)] of the plugins of one world-file entry: a name in both groups gives a
    # sensor and an actuator, each taking the keys its Config declares
    if len(classes) == 1 or not isinstance(mapping, dict):
        return [(cls, parse_config(cls, mapping, where)) for cls in classes]
    valid = set().union(*(config_keys(cls) for cls in classes))
    unknown = sorted(str(k) for k in mapping if k not in valid)
    if unknown:
        raise ValueError(f"{where}: unknown config key(s) {', '.join(unknown)} for plugins "
                         f"{', '.join(cls.__name__ for cls in classes)}; valid keys: "
                         f"{', '.join(sorted(valid))}")
    return [(cls, parse_config(cls, {k: v for k, v in mapping.items() if k in config_keys(cls)},
                               where)) for cls in classes]


def _class_name(plugin: Plugin) -> str:
    return f"{type(plugin).__module__}.{type(plugin).__qualname__}"
