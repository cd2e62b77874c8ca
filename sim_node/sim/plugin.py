"""Plugin lifecycle of sensor and actuator emulators (DESIGN.md §5).

A plugin is a ``Plugin`` subclass with a frozen ``Config`` dataclass. The simulator drives it
through these phases (``SimpleSimulator`` in sim_node/sim/simulation.py runs them):

    configure(ctx, config)   once, when it is added: ctx a PluginContext, config its Config
    reset(scope)             required: internal state back to the start, re-synced to the
                             simulator; called once after configure and again on every
                             Simulator.reset() (scope "all")
    update(t) -> readings    sensors, when due at their own period in sim time [s]
    process(commands, dt)    actuators, once per control step of dt [s]
    substep(dt)              actuators, before every physics substep of dt [s]
    shutdown()               once, when the simulator closes (SimpleSimulator.close())
    get_state() / set_state  the plugin's state that changes during a run, as JSON-able data;
                             it is part of Simulator.getState() (default: stateless)

A plugin method that raises is not propagated: ``call_guarded`` disables the plugin
(``enabled`` False, ``error`` the exception text), logs it, and the simulation goes on. Every
guarded call counts into ``calls`` and ``total_time`` (wall time [s]) for the status report.

Plugins are found by entry-point name in the groups ``sim_node.sensors`` and
``sim_node.actuators`` (``load_plugin_class``); world files name them with a config mapping that
``parse_config`` turns into the plugin's Config, checking keys and types.
"""
from __future__ import annotations

import abc
import dataclasses
import hashlib
import importlib.metadata
import logging
import math
import time
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

SENSOR_GROUP = "sim_node.sensors"
ACTUATOR_GROUP = "sim_node.actuators"
PLUGIN_GROUPS = (SENSOR_GROUP, ACTUATOR_GROUP)

_log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class PluginConfig:
    """Settings every plugin has. seed: the seed of ctx.rng (None: derived from the plugin's
    name and robot, so that runs repeat)."""
    seed: int | None = None


@dataclass(frozen=True)
class PluginContext:
    """What a plugin gets at configure time.

    sim: the Simulator; robot: the robot index (None for a world plugin); controller: that
    robot's SimRobotController (None for a world plugin); name: the plugin's entry-point name;
    seed: the seed of rng; rng: the plugin's random generator (noise models draw from it; the
    simulator saves its state with the simulation state and re-seeds it on reset); logger: the
    plugin's logger; create_publisher / create_subscription: the ROS node's factories
    (``create_publisher(msg_type, topic, qos)``, ``create_subscription(msg_type, topic,
    callback, qos)``, stamped in sim time) when a node runs the simulator, None otherwise.
    """
    sim: Any
    robot: int | None
    controller: Any
    name: str
    seed: int
    rng: np.random.Generator
    logger: logging.Logger
    create_publisher: Callable | None = None
    create_subscription: Callable | None = None


def derive_seed(name: str, robot_name: str | None, ordinal: int = 0) -> int:
    """A seed (64 bits) fixed by the plugin name, its robot's name (None: world plugin) and
    its ordinal among the plugins of that name on that robot: the same on every run and
    platform (unlike hash())."""
    key = f"{robot_name or ''}/{name}/{ordinal}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little")


def make_context(sim, name: str, robot: int | None, seed: int | None = None, ordinal: int = 0,
                 *, create_publisher: Callable | None = None,
                 create_subscription: Callable | None = None) -> PluginContext:
    """The context of plugin `name` on robot index `robot` (None: a world plugin) of `sim`;
    seed None derives one (derive_seed)."""
    robot_name = None if robot is None else sim.getWorld().robot(robot).getName()
    if seed is None:
        seed = derive_seed(name, robot_name, ordinal)
    logger = logging.getLogger(f"sim_node.plugins.{robot_name or 'world'}.{name}")
    return PluginContext(sim=sim, robot=robot,
                         controller=None if robot is None else sim.controller(robot),
                         name=name, seed=seed, rng=np.random.default_rng(seed), logger=logger,
                         create_publisher=create_publisher,
                         create_subscription=create_subscription)


def reseed(ctx: PluginContext):
    """Put ctx.rng back to the start of its seed's stream."""
    ctx.rng.bit_generator.state = np.random.default_rng(ctx.seed).bit_generator.state


class Plugin(abc.ABC):
    """Base of sensor and actuator emulators; see the module docstring for the lifecycle.

    Subclasses implement ``reset`` and the phases they use, and declare their settings as
    ``Config``, a frozen dataclass deriving from their base's Config. Entry-point plugins are
    constructed without arguments, then configured.
    """
    Config = PluginConfig

    # class-level defaults, so that Klamp't-style subclasses that never call
    # Plugin.__init__ still work
    ctx: PluginContext | None = None
    config: PluginConfig | None = None
    enabled: bool = True
    error: str | None = None
    calls: int = 0
    total_time: float = 0.0     # [s] wall time over all guarded calls

    def configure(self, ctx: PluginContext, config):
        """Keep the context and config (subclasses extend this to set up)."""
        self.ctx = ctx
        self.config = config

    @abc.abstractmethod
    def reset(self, scope: str):
        """Put the internal state back to the start and re-sync it to the simulator state.
        scope: "all" (SimpleSimulator) or a narrower ROS ResetSimulation scope."""

    def process(self, commands: dict | None, dt: float):
        """Actuators, once per control step of dt [s]: apply the commands this plugin
        handles and remove their keys from the dict."""

    def substep(self, dt: float):
        """Actuators, before every physics substep of dt [s]."""

    def update(self, t: float | None = None) -> dict:
        """Sensors, when due: the readings at sim time t [s] (name -> value)."""
        return {}

    def shutdown(self):
        """Release resources (publishers, files)."""

    def get_state(self) -> dict:
        """The plugin's state that changes during a run, JSON-able (default: none). ctx.rng
        is saved by the simulator and need not be included."""
        return {}

    def set_state(self, state: dict):
        """Restore a get_state() result."""
        if state:
            raise ValueError(f"{type(self).__name__} is stateless, got state {state!r}")


def plugin_label(plugin: Plugin) -> str:
    ctx = plugin.ctx
    if ctx is None:
        return type(plugin).__name__
    where = "world" if ctx.robot is None else f"robot {ctx.robot}"
    return f"'{ctx.name}' ({type(plugin).__name__}, {where})"


def disable(plugin: Plugin, phase: str, error: BaseException):
    """Disable a plugin after an error in one of its phases, record and log it."""
    plugin.enabled = False
    plugin.error = f"{phase}: {type(error).__name__}: {error}"
    logger = plugin.ctx.logger if plugin.ctx is not None else _log
    logger.error("plugin %s disabled after an error in %s: %s", plugin_label(plugin), phase,
                 error, exc_info=error)


def call_guarded(plugin: Plugin, method: Callable, *args):
    """method(*args) of an enabled plugin, timed; an exception disables the plugin and gives
    None (as does calling a disabled plugin)."""
    if not plugin.enabled:
        return None
    start = time.perf_counter()
    try:
        return method(*args)
    except Exception as error:     # noqa: BLE001 -- a plugin's bug must not stop the simulation
        disable(plugin, method.__name__, error)
        return None
    finally:
        plugin.calls += 1
        plugin.total_time += time.perf_counter() - start


# -- config ------------------------------------------------------------------------------
_SCALARS = {bool: "bool", int: "int", float: "float", str: "str"}


def _describe(annotation) -> str:
    base, optional = _unwrap_optional(annotation)
    name = _SCALARS.get(base, "list of float")
    return f"{name} or null" if optional else name


def _unwrap_optional(annotation):
    # X | None or Optional[X] -> (X, True)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0], True
    return annotation, False


def _is_float_sequence(annotation) -> bool:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    return (origin is list and args == (float,)) or (origin is tuple and args == (float, ...))


def _is_finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _convert(value, annotation):
    # (fits, the value as the annotation's type)
    base, optional = _unwrap_optional(annotation)
    if value is None:
        return optional, None
    if base is bool:
        return isinstance(value, bool), value
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if base is float:
        fits = _is_finite_number(value)
        return fits, float(value) if fits else value
    if base is str:
        return isinstance(value, str), value
    fits = isinstance(value, (list, tuple)) and all(_is_finite_number(v) for v in value)
    return fits, tuple(float(v) for v in value) if fits else value


def _config_fields(plugin_class) -> dict:
    config_class = plugin_class.Config
    if not (isinstance(config_class, type) and dataclasses.is_dataclass(config_class)):
        raise TypeError(f"{plugin_class.__qualname__}.Config must be a frozen dataclass")
    hints = typing.get_type_hints(config_class)
    fields = {}
    for field in dataclasses.fields(config_class):
        annotation = hints[field.name]
        base, _ = _unwrap_optional(annotation)
        if base not in _SCALARS and not _is_float_sequence(base):
            raise TypeError(f"{plugin_class.__qualname__}.Config.{field.name}: unsupported type "
                            f"{annotation}; use int, float, bool, str, list[float] or "
                            f"tuple[float, ...] (optionally | None)")
        required = (field.default is dataclasses.MISSING
                    and field.default_factory is dataclasses.MISSING)
        fields[field.name] = (annotation, required)
    return fields


def config_keys(plugin_class) -> set:
    """The keys a plugin's config mapping may have: the fields of its Config."""
    return set(_config_fields(plugin_class))


def parse_config(plugin_class, mapping, where: str):
    """plugin_class.Config built from a world-file mapping (None: all defaults). Keys must be
    fields of the Config, values of their types: int, float (finite; ints accepted), bool,
    str, list of float (stored as a tuple), each optionally null. Errors are ValueErrors that
    name `where`, the key and the valid keys or the expected type."""
    fields = _config_fields(plugin_class)
    plugin = plugin_class.__name__
    if mapping is None:
        mapping = {}
    if not isinstance(mapping, dict):
        raise ValueError(f"{where}: the config of plugin {plugin} must be a mapping, got "
                         f"{type(mapping).__name__}")
    unknown = sorted(str(k) for k in mapping if k not in fields)
    if unknown:
        raise ValueError(f"{where}: unknown config key(s) {', '.join(unknown)} for plugin "
                         f"{plugin}; valid keys: {', '.join(sorted(fields)) or '(none)'}")
    values = {}
    for key, (annotation, required) in fields.items():
        if key not in mapping:
            if required:
                raise ValueError(f"{where}: plugin {plugin} needs config key '{key}' "
                                 f"({_describe(annotation)})")
            continue
        ok, value = _convert(mapping[key], annotation)
        if not ok:
            raise ValueError(f"{where}: config key '{key}' of plugin {plugin} must be "
                             f"{_describe(annotation)}, got {mapping[key]!r}")
        values[key] = value
    seed = values.get("seed")
    if seed is not None and not 0 <= seed < 2 ** 64:
        raise ValueError(f"{where}: config key 'seed' of plugin {plugin} must be an integer in "
                         f"[0, 2^64), got {seed}")
    try:
        return plugin_class.Config(**values)
    except ValueError as e:            # a Config's own checks (__post_init__)
        raise ValueError(f"{where}: bad config for plugin {plugin}: {e}") from None


# -- discovery ---------------------------------------------------------------------------
def _entry_points(group: str) -> dict:
    if group not in PLUGIN_GROUPS:
        raise ValueError(f"unknown plugin group '{group}'; groups: {', '.join(PLUGIN_GROUPS)}")
    found = {}
    for ep in importlib.metadata.entry_points(group=group):
        # the same distribution can be seen twice (an editable install): same value, one entry
        if ep.name in found and found[ep.name].value != ep.value:
            raise LookupError(f"plugin '{ep.name}' of {group} is registered twice: "
                              f"{found[ep.name].value} and {ep.value}")
        found[ep.name] = ep
    return found


def available_plugins(group: str) -> list[str]:
    """The entry-point names registered in a plugin group, sorted."""
    return sorted(_entry_points(group))


def load_plugin_class(group: str, name: str) -> type:
    """The Plugin subclass registered as `name` in `group` (sim_node.sensors or
    sim_node.actuators). Unknown names raise LookupError listing the registered ones."""
    entry_points = _entry_points(group)
    if name not in entry_points:
        raise LookupError(f"no plugin named '{name}' in {group}; available: "
                          f"{', '.join(sorted(entry_points)) or '(none)'}")
    ep = entry_points[name]
    try:
        cls = ep.load()
    except Exception as e:
        raise ImportError(f"plugin '{name}' of {group} ({ep.value}) failed to load: "
                          f"{type(e).__name__}: {e}") from e
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise TypeError(f"plugin '{name}' of {group} ({ep.value}) is not a Plugin subclass")
    return cls
