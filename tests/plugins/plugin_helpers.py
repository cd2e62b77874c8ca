"""Helpers of the plugin tests: test robots and worlds (as files), a recording stand-in for the
node's publisher / subscription factories, and simulators with plugins.

The turntable (TURNTABLE_URDF) is a fixed-base robot whose joints carry no gravity load:
  spin       continuous, axis +z, 0.5 m above its base: a 2 kg plate 0.6 x 0.2 x 0.02 m centred
             0.2 m out along the plate's x axis;
  slide      prismatic along the plate's x, limits [-0.1, 0.25] m, a 0.5 kg carriage (point-like,
             inertia 1e-3 kg m^2 about each axis) 0.1 m out and 0.05 m above the axis at 0;
  imu_mount  fixed: frame imu_link on the plate's top, 0.3 m out from the axis.
No joint damping or friction. Closed forms used by the tests follow from these numbers.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rclpy.serialization import deserialize_message  # noqa: E402

from sim_node import WorldModel  # noqa: E402
from sim_node.sim.plugin import make_context, parse_config  # noqa: E402
from sim_node.sim.simulation import SimpleSimulator  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
DIFF_DRIVE_URDF = REPO / "data" / "robots" / "diff_drive" / "diff_drive.urdf"
DT = 0.001
G = 9.81

# the turntable's numbers (module docstring)
PLATE_MASS, PLATE_SIZE, PLATE_OFFSET = 2.0, (0.6, 0.2, 0.02), 0.2
CARRIAGE_MASS, CARRIAGE_INERTIA, CARRIAGE_ORIGIN = 0.5, 1e-3, (0.1, 0.0, 0.05)
SLIDE_LIMITS = (-0.1, 0.25)
SPIN_HEIGHT = 0.5
IMU_RADIUS = 0.3
TURNTABLE_JOINTS = ["spin", "slide"]


def _box_inertia(mass, size):
    a, b, c = size
    return mass / 12 * (b * b + c * c), mass / 12 * (a * a + c * c), mass / 12 * (a * a + b * b)


def spin_inertia(slide: float = 0.0) -> float:
    """Moment of inertia [kg m^2] of everything the spin joint turns, about its axis."""
    izz = _box_inertia(PLATE_MASS, PLATE_SIZE)[2] + PLATE_MASS * PLATE_OFFSET ** 2
    r = CARRIAGE_ORIGIN[0] + slide
    return izz + CARRIAGE_INERTIA + CARRIAGE_MASS * r * r


def _turntable_urdf() -> str:
    ixx, iyy, izz = _box_inertia(PLATE_MASS, PLATE_SIZE)
    sx, sy, sz = PLATE_SIZE
    cx, cy, cz = CARRIAGE_ORIGIN
    i = CARRIAGE_INERTIA
    return f"""<?xml version="1.0"?>
<robot name="turntable">
  <link name="world"/>
  <link name="plate">
    <inertial><origin xyz="{PLATE_OFFSET} 0 0"/><mass value="{PLATE_MASS}"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>
    <collision><origin xyz="{PLATE_OFFSET} 0 0"/><geometry><box size="{sx} {sy} {sz}"/></geometry>
    </collision>
  </link>
  <joint name="spin" type="continuous">
    <origin xyz="0 0 {SPIN_HEIGHT}"/><parent link="world"/><child link="plate"/>
    <axis xyz="0 0 1"/><limit effort="50" velocity="10"/>
  </joint>
  <link name="carriage">
    <inertial><origin xyz="0 0 0"/><mass value="{CARRIAGE_MASS}"/>
      <inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial>
  </link>
  <joint name="slide" type="prismatic">
    <origin xyz="{cx} {cy} {cz}"/><parent link="plate"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="{SLIDE_LIMITS[0]}" upper="{SLIDE_LIMITS[1]}" effort="100"
      velocity="1"/>
  </joint>
  <link name="imu_link"/>
  <joint name="imu_mount" type="fixed">
    <origin xyz="{IMU_RADIUS} 0 {sz / 2}"/><parent link="plate"/><child link="imu_link"/>
  </joint>
</robot>
"""


TURNTABLE_URDF = _turntable_urdf()

GROUND = """terrains:
  - name: ground
    geometry: {plane: {normal: [0.0, 0.0, 1.0], offset: 0.0}}
    surface: {kRestitution: 0.0, kFriction: 0.8}
"""


def turntable_entry(urdf: Path, name="turntable", position=(0.0, 0.0, 0.0), plugins="",
                    kp="{spin: 50.0, slide: 400.0}", kd="{spin: 5.0, slide: 40.0}") -> str:
    """A robots: entry of the turntable (PID spin 50 / 0 / 5, slide 400 / 0 / 40)."""
    x, y, z = position
    return f"""  - name: {name}
    urdf: {urdf}
    namespace: {name}
    fixed_base: true
    pose: {{position: [{x}, {y}, {z}], orientation: [0.0, 0.0, 0.0, 1.0]}}
    controller: {{kp: {kp}, ki: {{spin: 0.0, slide: 0.0}}, kd: {kd}}}
""" + (f"    plugins:\n{plugins}" if plugins else "")


def write_turntable_world(tmp_path: Path, plugins: str = "", objects: str = "",
                          name="turntable_world.yaml") -> Path:
    """A world file of one turntable at the origin (its plugins: YAML list items, indented
    6 spaces), the given rigid_objects section, and the ground."""
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text(TURNTABLE_URDF)
    path = tmp_path / name
    path.write_text("simulation: {physics_dt: 0.001}\nrobots:\n"
                    + turntable_entry(urdf, plugins=plugins) + objects + GROUND)
    return path


def box_on_plate(mass=0.4, x=0.3, name="weight", size=0.05) -> str:
    """A rigid_objects section: a cube of `size` [m] resting (5 mm up) on the turntable's plate
    at x [m] from the spin axis."""
    z = SPIN_HEIGHT + PLATE_SIZE[2] / 2 + size / 2 + 0.005
    return f"""rigid_objects:
  - name: {name}
    geometry: {{box: [{size}, {size}, {size}]}}
    mass: {mass}
    pose: {{position: [{x}, 0.0, {z}], orientation: [0.0, 0.0, 0.0, 1.0]}}
    surface: {{kRestitution: 0.0, kFriction: 0.8}}
"""


class FakeRos:
    """Stand-in for the node's create_publisher / create_subscription: records what plugins
    publish (published[topic]: messages or serialized bytes, in order) and the callbacks they
    subscribe (deliver(topic, message) calls them)."""

    def __init__(self):
        self.published: dict[str, list] = {}
        self.types: dict[str, type] = {}
        self.callbacks: dict[str, list] = {}

    def create_publisher(self, msg_type, topic, qos):
        self.types[topic] = msg_type
        box = self.published.setdefault(topic, [])

        class Publisher:
            def publish(self, message):
                box.append(message)
        return Publisher()

    def create_subscription(self, msg_type, topic, callback, qos):
        self.types[topic] = msg_type
        self.callbacks.setdefault(topic, []).append(callback)
        return object()

    def deliver(self, topic: str, message):
        for callback in self.callbacks[topic]:
            callback(message)

    def messages(self, topic: str) -> list:
        """What was published on topic, serialized bytes decoded to messages."""
        msg_type = self.types[topic]
        return [deserialize_message(m, msg_type) if isinstance(m, bytes) else m
                for m in self.published.get(topic, [])]


def load_world(path) -> WorldModel:
    world = WorldModel()
    world.readFile(Path(path))
    return world


def simulator(path, ros: FakeRos | None = None, default_plugins=None) -> SimpleSimulator:
    """A SimpleSimulator of a world file, its plugins wired to `ros` (None: no ROS)."""
    factories = {} if ros is None else dict(create_publisher=ros.create_publisher,
                                            create_subscription=ros.create_subscription)
    sim = SimpleSimulator(load_world(path),
                          default_plugins=[] if default_plugins is None else default_plugins,
                          **factories)
    sim.enableContactFeedbackAll()
    return sim


def add_plugin(sim, cls, robot, config: dict, ros: FakeRos | None = None, name=None):
    """A plugin of class cls with this config mapping, added to robot (index; None: a world
    plugin) of sim."""
    factories = {} if ros is None else dict(create_publisher=ros.create_publisher,
                                            create_subscription=ros.create_subscription)
    plugin = cls()
    name = name or cls.__name__
    parsed = parse_config(cls, config, f"test {name}")
    plugin.configure(make_context(sim, name, robot, parsed.seed, **factories), parsed)
    sim.addEmulator(robot, plugin)
    assert plugin.enabled, plugin.error
    return plugin


def run(sim, seconds: float, dt: float = DT):
    for _ in range(int(round(seconds / dt))):
        sim.simulate(dt)


def plugin_named(sim, name: str, robot: int = 0, kind=None):
    found = [p for p in sim.getPlugins()
             if p.ctx.name == name and p.ctx.robot == robot and (kind is None
                                                               or isinstance(p, kind))]
    assert len(found) == 1, [(p.ctx.name, p.ctx.robot) for p in sim.getPlugins()]
    return found[0]


def stamp(message) -> float:
    return message.header.stamp.sec + message.header.stamp.nanosec * 1e-9


def vector(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z])
