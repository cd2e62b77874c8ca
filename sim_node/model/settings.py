"""Settings of a world's simulation, bodies and robots, parsed once from the world file (or
given by the caller) into typed values that every layer reads.

SimulationParameters  world-wide: physics step, gravity, default padding, contacts per pair
BodySettings          per body: surface coefficients and boundary-layer padding
RobotSettings         per robot: namespace, controller gains, plugins, body settings of its
                      links, self collision (frozen: a change is a new value, ``replace``)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from sim_node.model.surface import DEFAULT_PADDING, SurfaceParameters

GAIN_KEYS = ("kp", "ki", "kd")


@dataclass
class SimulationParameters:
    """World-wide simulation settings (world file `simulation:` section)."""
    physics_dt: float = 0.001                       # s
    gravity: tuple = (0.0, 0.0, -9.81)              # m/s^2
    padding: float = DEFAULT_PADDING                # default boundary layer [m]
    max_contacts: int = 20                          # per body pair after clustering


@dataclass
class BodySettings:
    """Per-body contact settings: surface coefficients and boundary-layer padding [m]."""
    surface: SurfaceParameters = field(default_factory=SurfaceParameters)
    padding: float | None = None                    # None: the world default


@dataclass(frozen=True)
class PluginEntry:
    """A plugin a robot runs: its entry-point name and its config mapping (None: defaults),
    parsed into the plugin's Config when the simulator loads it (sim_node/sim/plugin.py)."""
    name: str
    config: Mapping | None = None


@dataclass(frozen=True)
class SensorEntry:
    """A Klamp't sensor a robot carries (world file `sensors:`, URDF <klampt><sensors>): its
    name, Klamp't type and settings ((setting name, string value), ...), built by the
    simulator's controller (sim_node.sim.sensors)."""
    name: str
    type: str
    settings: tuple = ()


@dataclass(frozen=True)
class RobotSettings:
    """A robot's settings (world file `robots:` entry, or a spawn request).

    namespace       its ROS namespace, relative ('' the root); None: the namespace rule
                    decides (sim_node/sim/namespaces.py)
    controller      {"kp" | "ki" | "kd": {joint name: gain}}: explicit PID gains (the
                    defaults of sim_node/sim/gains.py for the joints not named)
    body            contact settings of its links
    self_collision  whether its links collide with each other
    plugins         the plugins it runs, in order (empty: the simulator's defaults)
    sensors         its Klamp't sensors (SensorEntry), in order

    Read them as attributes; ``settings["namespace"]`` reads work too (the mapping face of
    earlier versions). Mappings given where settings are expected are parsed by ``of``."""
    namespace: str | None = None
    controller: Mapping = field(default_factory=dict)
    body: BodySettings = field(default_factory=BodySettings)
    self_collision: bool = False
    plugins: tuple = ()
    sensors: tuple = ()

    def __post_init__(self):
        plugins = tuple(p if isinstance(p, PluginEntry) else PluginEntry(p["name"], p.get("config"))
                        for p in self.plugins)
        object.__setattr__(self, "plugins", plugins)

    @classmethod
    def of(cls, value) -> "RobotSettings":
        """RobotSettings from RobotSettings (itself) or a mapping of its field names; a
        TypeError / ValueError names an unknown key or a wrong type."""
        if isinstance(value, RobotSettings):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"robot settings must be RobotSettings or a mapping, got "
                            f"{type(value).__name__}")
        valid = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in value if k not in valid)
        if unknown:
            raise ValueError(f"robot settings: unknown key(s) {', '.join(unknown)}; valid: "
                             f"{', '.join(sorted(valid))}")
        return cls(**{k: v for k, v in value.items() if v is not None or k == "namespace"})

    def __getitem__(self, key: str):
        if key not in {f.name for f in fields(self)}:
            raise KeyError(key)
        value = getattr(self, key)
        if key == "plugins":
            return [{"name": p.name, "config": p.config} for p in value]
        return value
