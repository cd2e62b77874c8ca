"""The simulation node (DESIGN.md §6): a SimpleSimulator stepped in sim time, published to ROS.

Threads. The simulation runs on its own thread (``SimNode.start``): it alone touches the
simulator. ROS callbacks run on the executor's threads; subscriptions hand their messages to
plugins, which validate and hold them until their ``process`` applies them on the simulation
thread, and services run their work on the simulation thread between two steps
(``SimNode.run_in_sim``), waiting for the result.

One loop iteration, while playing (or for each step a paused simulation is asked to take):
    lockstep       wait for the command topics to deliver the commands for the last step
    /clock, /tf    published with the stamp t of the state about to be stepped
    simulate(dt)   one physics step of the SimpleSimulator: sensor plugins publish the state at
                   t (joint_states, ...), actuator plugins apply the commands they hold, physics
    ~/contacts     the contacts of the step, stamped t + dt (at their own rate)
    pacing         sleep so that sim time runs at real_time_factor x wall time (0: no sleep)
So a command computed from the state stamped t is applied in the step after the one that
follows that state: in lockstep, the command for step k acts at step k + 1.

Safety (DESIGN.md §8, README "Safety and bounds"). Service work runs between two steps, never
during a wait: the pacing sleep and a paused simulation wait on the job queue, so services
answer within a step even at real_time_factor 1e-3. Steps asked for while paused
(step_simulation, simulate_steps) are one request at a time, taken one step per loop iteration
with the jobs in between: a request of 2^64 - 1 steps blocks neither other services nor a
shutdown, and a set_simulation_state interrupts it. Blow-ups: a good state is kept every
SNAPSHOT_PERIOD of sim time (the latest two); a step the engine reports STATUS_UNSTABLE is
followed by restoring the latest (the one before it when the latest blew up again before a new
one was kept: at most 2 SNAPSHOT_PERIOD of sim time back), reported in ~/status and the log;
when both blow up again the simulation pauses. The contacts of a failed step (which may hold
NaN) are not published.
"""
from __future__ import annotations

import logging
import math
import queue
import threading
import time
import traceback
import warnings
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import rclpy
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy._rclpy_pybind11 import RCLError
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from sim_node.model.errors import ModelLoadError, URDFWarning
from sim_node.model.world import WorldModel
from sim_node.ros.cdr import ClockCDR
from sim_node.ros.frames import WorldFrames
from sim_node.ros.lockstep import Lockstep
from sim_node.ros.namespaces import assign_namespaces, robot_prefix
from sim_node.sim.runstate import (PHYSICS_DT_BOUNDS, REAL_TIME_FACTOR_BOUNDS, RunState,
                                   StepRequestBusy, StepRequestInterrupted, physics_dt_problem,
                                   real_time_factor_problem)
from sim_node.sim.simulation import SimpleSimulator
from sim_node.sim.simulator import STATUS_UNSTABLE

__all__ = ["PHYSICS_DT_BOUNDS", "REAL_TIME_FACTOR_BOUNDS", "SimNode", "StepRequestBusy",
           "StepRequestInterrupted", "WorldLoadError", "load_or_explain", "physics_dt_problem",
           "real_time_factor_problem"]

# what every robot runs when its world-file entry names no plugins (entry points, plugins/)
DEFAULT_ROBOT_PLUGINS = ("joint_state_publisher", "joint_commands", "joint_trajectory")

# the node's viewer draws in the node's process (its GIL): 15 frames a second keep an open
# page's cost to the simulation under 10 % (README "Cost of the viewer"); `sim_node view`, a
# process of its own, draws at 30
DEFAULT_VIEWER_RATE = 15.0
DESCRIPTION_TIMEOUT = 60.0      # [s] of wall time for a robot_description_topic message
LOCKSTEP_TIMEOUT_MAX = 60.0             # [s] (the simulation thread waits that long at most)
SNAPSHOT_PERIOD = 1.0                   # [s] of sim time between two kept good states
JOB_POLL = 0.05                         # [s] wall time between checks while waiting for jobs
PUBLISH_WARNING_PERIOD = 5.0            # [s] wall time between two lost-message warnings
# the float parameters: integers accepted, finite and >= 0
_NUMBERS = ("physics_dt", "real_time_factor", "tf_rate", "contacts_rate", "status_rate",
            "lockstep_timeout")
# string arrays: '' entries are ignored (`-p name:=['']` is how a launch file or YAML gives an
# empty list: rcl cannot parse `[]`)
_LISTS = ("lockstep_topics", "default_plugins", "robot_namespaces", "record_exclude")
# read-only parameters whose value in effect is known only once the world is loaded: declared
# writable, then set to that value and made read-only (_report_effective_values)
_EFFECTIVE = ("physics_dt", "lockstep_topics", "default_plugins", "robot_namespaces",
              "record_exclude")

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


class _GuardedPublish:
    """A publisher's publish that survives the middleware refusing a message (RCLError:
    a reliable reader far behind): node.publish_failed reports it. A slow subscriber must not
    stop the simulation or disable a plugin."""

    def __init__(self, publish, topic: str, node, msg_type=None):
        self.publish, self.topic, self.node, self.msg_type = publish, topic, node, msg_type

    def __call__(self, message):
        try:
            self.publish(message)
        except RCLError as error:
            self.node.publish_failed(self.topic, error)
        # the node's own viewer (viewer:=true) keeps a reference (sim_node/ros/view_node.py)
        tap = self.node.publish_tap
        if tap is not None:
            tap(self.topic, self.msg_type, message, self)


class WorldLoadError(ValueError):
    """The world cannot be loaded or simulated (one line: the source and the problem)."""


def one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def load_problem(error: BaseException) -> str:
    """What a failure while loading means, without Python's exception names."""
    if isinstance(error, RecursionError):
        return ("nested too deeply to load (a document or kinematic chain deeper than the "
                "loader handles)")
    if isinstance(error, MemoryError):
        return "loading it needs more memory than is available"
    if isinstance(error, UnicodeDecodeError):
        return (f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset "
                f"{error.start})")
    return str(error) or "it cannot be loaded"


def load_or_explain(load, source: str):
    """load(), its failures as WorldLoadError: one line naming `source` (a model error names
    its file and line itself) and the problem, without Python exception names."""
    try:
        return load()
    except ModelLoadError as error:
        raise WorldLoadError(one_line(str(error))) from None
    except LookupError as error:        # a plugin, a package, robot_description_topic
        raise WorldLoadError(one_line(
            f"{source}: {error.args[0] if error.args else error}")) from None
    except Exception as error:          # noqa: BLE001 (whatever a loader raises)
        raise WorldLoadError(one_line(f"{source}: {load_problem(error)}")) from None


class _UrdfWarningsToLog:
    """URDFWarnings (what the loaders repaired: file, line, what) as warnings of the node's ROS
    logger, from whichever thread loads (the world at start, spawn_entity later); every other
    warning goes where it went before. Installed for the node's lifetime."""

    def __init__(self, logger):
        self._logger = logger
        self._previous = warnings.showwarning
        warnings.showwarning = self._show
        warnings.simplefilter("always", URDFWarning)   # a spawned file again: logged again

    def _show(self, message, category, filename, lineno, file=None, line=None):
        if issubclass(category, URDFWarning):
            self._logger.warning(f"repaired while loading: {message}")
        else:
            self._previous(message, category, filename, lineno, file, line)

    def remove(self):
        if warnings.showwarning == self._show:
            warnings.showwarning = self._previous


class _RosLogHandler(logging.Handler):
    """Python logging of the sim_node package (plugins, simulator) into the node's ROS logger,
    so it reaches /rosout and the console as the node's own messages do, named by its logger."""

    def __init__(self, logger):
        super().__init__(logging.INFO)
        self._logger = logger

    def emit(self, record):
        try:
            text = f"[{record.name.removeprefix('sim_node.')}] {record.getMessage()}"
            if record.levelno >= logging.ERROR:
                self._logger.error(text)
            elif record.levelno >= logging.WARNING:
                self._logger.warning(text)
            else:
                self._logger.info(text)
        except Exception:       # noqa: BLE001 (logging must never raise into the caller)
            self.handleError(record)


@dataclass
class _Pacer:
    """Sim time at real_time_factor x wall time, from an anchor reset on every change."""
    factor: float
    wall: float = 0.0
    sim: float = 0.0
    anchored: bool = False

    def anchor(self, t: float):
        self.wall, self.sim, self.anchored = time.perf_counter(), t, True

    def delay(self, t: float) -> float:
        """[s] of wall time until sim time t is due (<= 0: now)."""
        if self.factor <= 0.0:
            return 0.0
        if not self.anchored:
            self.anchor(t)
            return 0.0
        return self.wall + (t - self.sim) / self.factor - time.perf_counter()


@dataclass(eq=False)
class _StepRequest:
    """Steps asked for while paused, taken one per loop iteration (module docstring)."""
    total: int
    on_step: object = None          # on_step(done) after each step; may raise to stop
    done: int = 0
    future: Future = field(default_factory=Future)


@dataclass
class _Rate:
    """Measured real-time factor over a window of wall time."""
    wall: float = field(default_factory=time.perf_counter)
    sim: float = 0.0
    value: float = 0.0

    def update(self, t: float) -> float:
        now = time.perf_counter()
        if now > self.wall:
            self.value = (t - self.sim) / (now - self.wall)
        self.wall, self.sim = now, t
        return self.value


class SimNode(Node):
    """The `sim` node: loads a world, simulates it and exposes it (see the module docstring)."""

    def __init__(self, node_name: str = "sim", *, world: WorldModel | None = None, **kwargs):
        self._publish_failures: dict[str, tuple[float, int]] = {}
        self.publish_tap = None         # f(topic, type, message, publisher) after each publish
        self.viewer = None
        super().__init__(node_name, **kwargs)
        self._declare_parameters()
        self._declare_safety_parameters()
        self._log_handler = _RosLogHandler(self.get_logger())
        package_logger = logging.getLogger("sim_node")
        package_logger.addHandler(self._log_handler)
        package_logger.setLevel(logging.INFO)
        package_logger.propagate = False
        self._urdf_warnings = _UrdfWarningsToLog(self.get_logger())
        # read every step: kept here, updated by _on_parameters (get_parameter costs µs)
        self._clock_decimation = self._param("clock_decimation")
        self._tf_rate = self._param("tf_rate")
        self.world = world if world is not None else self._loading(self._load_world)
        assign_namespaces(self.world, self._param("robot_namespaces"))
        self.services_group = ReentrantCallbackGroup()
        self.lockstep = Lockstep(self, self._param("lockstep"), self._param("lockstep_topics"),
                                 self._param("lockstep_timeout"))
        self.sim = self._loading(lambda: SimpleSimulator(
            self.world, default_plugins=[{"name": n} for n in self._param("default_plugins")],
            create_publisher=self.create_publisher,
            create_subscription=self.lockstep.subscription_factory,
            destroy_endpoint=self._destroy_endpoint))
        dt = self._param("physics_dt") or self.world.simulation.physics_dt
        problem = physics_dt_problem(dt)
        if problem:
            raise ValueError(f"{problem} (the parameter)" if self._param("physics_dt") else
                             f"{self._world_source()}: {problem} (its simulation.physics_dt)")
        self.sim.setSimStep(dt)
        self.sim.enableContactFeedbackAll()
        self.physics_dt = dt
        self._report_effective_values()
        self.step_count = 0
        self.run_state = RunState(self.sim, paused=self._param("paused"))
        self._steps_requested = 0
        self._jobs: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = None
        problem = real_time_factor_problem(self._param("real_time_factor"))
        if problem:
            raise ValueError(problem)
        self._pacer = _Pacer(self._param("real_time_factor"))
        self._stepping: _StepRequest | None = None
        # blow-up recovery: the last two good states (t, state), the next time to keep one,
        # the sim time of the last blow-up, how far back the next one goes (forget_good_states)
        self._snapshots: list[tuple[float, bytes]] = []
        self._snapshot_next = 0.0
        self._last_failure: float | None = None
        self._escalation = 0
        self.recoveries = 0
        self._engine_report: tuple[int, str] | None = None  # the worst since the last status
        self._rate = _Rate()
        self._clock_cdr = ClockCDR()
        self._clock_pub = self.create_publisher(Clock, "/clock", 10)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", 100)
        self._tf_static_pub = self.create_publisher(TFMessage, "/tf_static", LATCHED)
        self._descriptions = {}
        self.add_on_set_parameters_callback(self._on_parameters)
        self.world_changed()
        from sim_node.ros.contacts import ContactPublisher
        from sim_node.ros.status import StatusPublisher

        self.contacts = ContactPublisher(self, self._param("contacts_rate"),
                                         self._param("contact_markers"))
        self.status = StatusPublisher(self, self._param("status_rate"))
        from sim_node.ros.services import register_services

        self.simulation_services = register_services(self)
        self.recorder = None
        from sim_node.ros.recorder import Recorder, exclusions, register_recording_services

        self.record_exclude = list(self._param("record_exclude"))
        exclusions(self.record_exclude)         # a bad pattern fails the start, not a recording
        register_recording_services(self)
        if self._param("record"):
            self.recorder = Recorder(self, self._param("record"), exclude=self.record_exclude)
        if self._param("viewer"):
            from sim_node.ros.view_node import NodeViewer

            # a viewer that cannot be served is said once; the simulation runs without it
            try:
                self.viewer = NodeViewer(self, self._param("viewer_port"),
                                         self._param("viewer_host"),
                                         self._param("viewer_rate"))
            except (ValueError, OSError) as error:
                self.get_logger().error(f"{getattr(error, 'strerror', None) or error}; the "
                                        f"node runs without its viewer")
            else:
                self.publish_tap = self.viewer.tap

    # -- endpoints ---------------------------------------------------------------------------
    # Without QoS event handlers: rclpy's executors rebuild their wait set from every handler
    # at every wake-up (each arriving command), which cost more than the physics; the
    # incompatible-QoS warnings they would print are not worth it.
    def create_publisher(self, *args, **kwargs):
        kwargs.setdefault("event_callbacks", PublisherEventCallbacks(use_default_callbacks=False))
        publisher = super().create_publisher(*args, **kwargs)
        publisher.publish = _GuardedPublish(publisher.publish, publisher.topic_name, self,
                                            publisher.msg_type)
        return publisher

    def publish_failed(self, topic: str, error: Exception):
        """A publish the middleware refused (a reliable reader so far behind that the writer
        timed out): that message is lost, the simulation goes on; logged at most every
        PUBLISH_WARNING_PERIOD [s] per topic."""
        now = time.monotonic()
        last, lost = self._publish_failures.get(topic, (-math.inf, 0))
        if now - last < PUBLISH_WARNING_PERIOD:
            self._publish_failures[topic] = (last, lost + 1)
            return
        self._publish_failures[topic] = (now, 0)
        more = f" ({lost} more since the last warning)" if lost else ""
        self.get_logger().warning(f"{topic}: a message was not published ({error}); a "
                                  f"reliable subscriber is far behind{more}")

    def create_subscription(self, *args, **kwargs):
        kwargs.setdefault("event_callbacks",
                          SubscriptionEventCallbacks(use_default_callbacks=False))
        return super().create_subscription(*args, **kwargs)

    def _destroy_endpoint(self, endpoint):
        # a deleted robot's plugin publisher or subscription leaves the ROS graph
        if isinstance(endpoint, Publisher):
            self.destroy_publisher(endpoint)
        elif isinstance(endpoint, Subscription):
            self.lockstep.forget(endpoint)
            self.destroy_subscription(endpoint)

    # -- parameters ------------------------------------------------------------------------
    def _declare_parameters(self):
        def declare(name, default, description, read_only=False):
            # numbers may be given as integers too ('-p real_time_factor:=0'); an empty list is
            # declared by its type (rclpy would take [] for a byte array)
            read_only = read_only and name not in _EFFECTIVE
            self.declare_parameter(name, default if default != [] else
                                   Parameter.Type.STRING_ARRAY, ParameterDescriptor(
                                       description=description, read_only=read_only,
                                       dynamic_typing=isinstance(default, float)))

        declare("world", "", "world YAML or URDF path ('': the embedded default world, or "
                "robot_description if set)", True)
        declare("robot_description", "", "URDF of a single robot to simulate (instead of a "
                "world file)", True)
        declare("robot_description_topic", "", "topic to take the URDF of a single robot from "
                "(std_msgs/String, transient local; when world and robot_description are empty)",
                True)
        declare("physics_dt", 0.0, "physics step [s] (0 at start: the world file's; reads the "
                "step in use)", True)
        declare("real_time_factor", 1.0, "target sim time / wall time (0: as fast as possible)")
        declare("paused", False, "start paused (step_simulation / set_simulation_state)", True)
        declare("clock_decimation", 1, "publish /clock every this many steps")
        declare("tf_rate", 0.0, "rate of /tf in sim time [Hz] (0: every step)")
        declare("tf_links", True, "publish every robot link on /tf and /tf_static (false when "
                "robot_state_publisher runs)", True)
        declare("contacts_rate", 50.0, "rate of ~/contacts in sim time [Hz] (0: every step)")
        declare("contact_markers", False, "also publish ~/contact_markers (visualization_msgs)",
                True)
        declare("status_rate", 1.0, "rate of ~/status in wall time [Hz]")
        declare("lockstep", False, "step k+1 waits for the commands of step k", True)
        declare("lockstep_topics", [], "command topics lockstep waits for (empty: every "
                "command topic that has a publisher)", True)
        declare("lockstep_timeout", 1.0, "longest lockstep wait [s] before stepping on with a "
                "warning", True)
        declare("default_plugins", list(DEFAULT_ROBOT_PLUGINS), "plugins of robots whose "
                "world-file entry names none", True)
        declare("record", "", "rosbag2 directory to record into ('': no recording)", True)
        declare("record_exclude", [], "regular expressions: published topics whose name "
                "contains a match are not recorded (commands always are)", True)
        declare("viewer", False, "serve the live web viewer from this node (the URL is printed "
                "on one line; README 'Viewer on a node')", True)
        declare("viewer_port", 8080, "HTTP port of the viewer (0: any free port; a port in "
                "use: an error, the node runs without its viewer)", True)
        declare("viewer_host", "127.0.0.1", "address the viewer serves on (127.0.0.1: this "
                "machine only; 0.0.0.0: every interface)", True)
        declare("viewer_rate", DEFAULT_VIEWER_RATE, "frames a second [Hz of wall time] the "
                "viewer draws at most, in (0, 30] (README 'Cost of the viewer')", True)
        declare("robot_namespaces", [], "ROBOT=NAMESPACE entries overriding the namespace rule "
                "(default: the root for a world's only robot, else the robot's name; "
                "NAMESPACE '/' is the root)", True)

    def _report_effective_values(self):
        """The start-time parameters read what is in effect (`ros2 param get` shows the step
        the simulation takes, not 0) and become read-only, as their descriptors say."""
        values = {name: self._param(name) for name in _EFFECTIVE}
        values["physics_dt"] = self.physics_dt
        self.set_parameters([Parameter(name, Parameter.Type.DOUBLE if name == "physics_dt"
                                       else Parameter.Type.STRING_ARRAY, value)
                             for name, value in values.items()])
        for name in values:
            descriptor = self.describe_parameter(name)
            self.set_descriptor(name, ParameterDescriptor(
                description=descriptor.description, read_only=True,
                type=self.get_parameter(name).type_.value))

    def _declare_safety_parameters(self):
        from sim_node.ros.client_files import DEFAULT_MAX_READ_SIZE, DataDir, default_data_dir

        self.declare_parameter("data_dir", "", ParameterDescriptor(
            description="directory that files written on a client's request go under "
                        "(save_state, ~/record); '': $ROS_HOME/sim_node (~/.ros/sim_node)",
            read_only=True))
        self.declare_parameter("max_read_size", DEFAULT_MAX_READ_SIZE, ParameterDescriptor(
            description="largest file read on a client's request (restore_state, "
                        "spawn_entity) [bytes]", read_only=True))
        size = self.get_parameter("max_read_size").value
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"parameter max_read_size must be a size >= 1 [bytes], got "
                             f"{size!r}")
        self.max_read_size = size
        self.data_dir = DataDir(self.get_parameter("data_dir").value or default_data_dir())

    def _param(self, name):
        if name in _LISTS:      # declared by type: unset until given or reported
            return [v for v in self.get_parameter_or(name).value or () if v]
        value = self.get_parameter(name).value
        if name in _NUMBERS:
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"parameter {name} must be a finite number >= 0, got "
                                 f"{value!r}")
            if name == "lockstep_timeout" and value > LOCKSTEP_TIMEOUT_MAX:
                raise ValueError(f"parameter lockstep_timeout must be within [0, "
                                 f"{LOCKSTEP_TIMEOUT_MAX:g}] s, got {value!r}")
            return float(value)
        return value

    def _on_parameters(self, parameters) -> SetParametersResult:
        for p in parameters:
            if p.name == "real_time_factor":
                problem = real_time_factor_problem(p.value)
                if problem:
                    return SetParametersResult(successful=False, reason=problem)
                self.set_real_time_factor(float(p.value), from_parameter=True)
            elif p.name in ("clock_decimation",) and not (isinstance(p.value, int)
                                                         and p.value >= 1):
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} must be an integer >= 1")
            elif p.name in ("tf_rate", "contacts_rate", "status_rate") and (
                    isinstance(p.value, bool) or not isinstance(p.value, (int, float))
                    or not math.isfinite(p.value) or p.value < 0):
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} must be a rate >= 0 [Hz], got "
                                                  f"{p.value!r}")
        for p in parameters:        # all valid: the cached ones take effect from the next step
            if p.name == "clock_decimation":
                self._clock_decimation = p.value
            elif p.name == "tf_rate":
                self._tf_rate = float(p.value)
            elif p.name == "contacts_rate" and hasattr(self, "contacts"):
                self.contacts.rate = float(p.value)
            elif p.name == "status_rate" and hasattr(self, "status"):
                self.status.rate = float(p.value)
        return SetParametersResult(successful=True)

    def _loading(self, load):
        return load_or_explain(load, self._world_source())

    def _world_source(self) -> str:
        path = self._param("world")
        if path:
            return f"world {path}"
        if self._param("robot_description"):
            return "robot_description"
        if self._param("robot_description_topic"):
            return f"robot_description_topic {self._param('robot_description_topic')}"
        return "the default world"

    def _load_world(self) -> WorldModel:
        world = WorldModel()
        path, description = self._param("world"), self._param("robot_description")
        topic = self._param("robot_description_topic")
        if path:
            world.readFile(Path(path))
        elif description:
            world.loadRobot(description)
        elif topic:
            world.loadRobot(self._wait_for_description(topic))
        else:
            from sim_node.resources import default_world

            world.readFile(default_world())
        return world

    def _wait_for_description(self, topic: str) -> str:
        """The first std_msgs/String on `topic` (transient local, as robot_state_publisher
        offers it), within DESCRIPTION_TIMEOUT [s] of wall time."""
        received = []
        subscription = self.create_subscription(String, topic, received.append, LATCHED)
        deadline = time.monotonic() + DESCRIPTION_TIMEOUT
        try:
            while not received and time.monotonic() < deadline:
                rclpy.spin_once(self, timeout_sec=0.1)
        finally:
            self.destroy_subscription(subscription)
        if not received:
            raise LookupError(f"no robot description on {self.resolve_topic_name(topic)} within "
                              f"{DESCRIPTION_TIMEOUT:g} s (parameter robot_description_topic)")
        return received[0].data

    # -- run-time settings -----------------------------------------------------------------
    @property
    def paused(self) -> bool:
        """Whether the loop steps the simulation (RunState: PAUSED or STOPPED)."""
        return self.run_state.paused

    @paused.setter
    def paused(self, value: bool):
        if value:
            self.run_state.halt()
        else:
            self.run_state.paused = False

    @property
    def real_time_factor(self) -> float:
        return self._pacer.factor

    def set_real_time_factor(self, factor: float, from_parameter: bool = False):
        """Target real-time factor (0: as fast as possible), effective from the next step."""
        self._pacer = _Pacer(factor)
        if not from_parameter:
            self.set_parameters([Parameter("real_time_factor", value=factor)])

    def time_jumped(self):
        """Sim time was set (reset, stop, restore): the step count follows it, and pacing
        starts from a new anchor."""
        self.step_count = round(self.sim.getTime() / self.physics_dt)
        self._pacer = _Pacer(self._pacer.factor)
        self.forget_good_states()

    def measured_real_time_factor(self) -> float:
        return self._rate.value

    # -- the world as published --------------------------------------------------------------
    def world_changed(self):
        """Frames and robot descriptions after the world changed (start, spawn, delete, reset):
        /tf_static and robot_description published again."""
        self.forget_good_states()
        self.frames = WorldFrames(self.sim, self._param("tf_links"))
        if hasattr(self, "contacts"):
            self.contacts.world_changed()
        self._tf_next = 0.0
        self._tf_static_pub.publish(self.frames.static(self.sim.getTime()))
        topics = set()
        source = self._param("robot_description_topic")
        for r in range(self.world.numRobots()):
            robot = self.world.robot(r)
            topic = robot_prefix(robot) + "robot_description"
            if source and self.resolve_topic_name(topic) == self.resolve_topic_name(source):
                continue        # the robot came from there: its publisher offers it already
            topics.add(topic)
            if topic not in self._descriptions:
                self._descriptions[topic] = self.create_publisher(String, topic, LATCHED)
            self._descriptions[topic].publish(String(data=robot.urdf.xml))
        for topic in set(self._descriptions) - topics:      # deleted robots': none latched
            self.destroy_publisher(self._descriptions.pop(topic))

    # -- the simulation thread ---------------------------------------------------------------
    def start(self):
        """Start the simulation thread."""
        self._thread = threading.Thread(target=self._run, name="simulation", daemon=True)
        self._thread.start()

    def stop(self):
        """Stop the simulation thread (after its current step) and the recording."""
        self._stop.set()
        self.lockstep.close()
        if self._thread is not None:
            self._thread.join()
        self._fail_jobs()
        self._end_request(StepRequestInterrupted("the simulation node is shutting down"))
        if self.recorder is not None:
            self.recorder.close()
        if self.viewer is not None:
            self.publish_tap = None
            self.viewer.close()
        self.sim.close()
        package_logger = logging.getLogger("sim_node")
        package_logger.removeHandler(self._log_handler)
        package_logger.propagate = True
        self._urdf_warnings.remove()

    def run_in_sim(self, work, timeout: float | None = None):
        """Run work() on the simulation thread between two steps and return its result (or
        raise its exception). Called from the simulation thread itself, it runs at once."""
        if self._thread is None or threading.current_thread() is self._thread:
            return work()
        future = Future()
        self._jobs.put((work, future))
        if self._stop.is_set():         # the simulation thread may be gone: no one runs it
            self._fail_jobs()
        return future.result(timeout)

    def _fail_jobs(self):
        # after the simulation thread ended: every waiting caller gets an error, not a hang
        while True:
            try:
                _, future = self._jobs.get_nowait()
            except queue.Empty:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(RuntimeError("the simulation node is shutting down"))

    # -- steps asked for while paused ----------------------------------------------------------
    def request_steps(self, n: int, on_step=None, check=None) -> int:
        """Take n steps of the paused simulation (on the simulation thread, one per loop
        iteration, jobs in between); on_step(done) after each (it may raise to stop the
        request: that exception is raised here). check() runs first on the simulation thread
        (it raises to refuse). Returns n when done; raises StepRequestInterrupted when a
        set_simulation_state or the shutdown ended it. Not from the simulation thread."""
        request = _StepRequest(int(n), on_step)

        def begin():
            if check is not None:
                check()
            if self._stepping is not None:
                running = self._stepping
                raise StepRequestBusy(f"another step request is running ({running.done} "
                                      f"of {running.total} steps done); wait for it or "
                                      f"interrupt it with set_simulation_state")
            self._stepping = request
        if self._thread is None:        # not started (tests that drive the node directly)
            begin()
            while self._stepping is request:
                self._step_requested()
        else:
            self.run_in_sim(begin)
        if self._stop.is_set():
            self._end_request(StepRequestInterrupted("the simulation node is shutting "
                                                     "down"))
        return request.future.result()

    def interrupt_steps(self, by: str) -> bool:
        """End a running step request (simulation thread): its caller gets
        StepRequestInterrupted. Whether there was one."""
        request = self._stepping
        if request is not None:
            self._end_request(StepRequestInterrupted(
                f"interrupted by {by} after {request.done} of {request.total} steps"))
        return request is not None

    def _end_request(self, error: BaseException | None = None):
        request, self._stepping = self._stepping, None
        if request is None or request.future.done():
            return
        if error is None:
            request.future.set_result(request.done)
        else:
            request.future.set_exception(error)

    def _step_requested(self):
        # one step of the running request, then its on_step
        request = self._stepping
        self._guarded_step()
        request.done += 1
        try:
            if request.on_step is not None:
                request.on_step(request.done)
        except BaseException as error:      # handed to the waiting caller
            self._end_request(error)
            return
        if request.done >= request.total:
            self._end_request()

    # -- the loop ------------------------------------------------------------------------------
    def _run(self):
        while not self._stop.is_set():
            self._run_jobs()
            if self._stepping is not None:
                self._step_requested()
                continue
            if self.paused:
                self._wait_for_jobs(JOB_POLL)
                self._pacer = _Pacer(self._pacer.factor)
                self.status.after_step()        # ~/status goes on while paused
                continue
            self.lockstep.wait(self.step_count)
            self._guarded_step()
            pacer = self._pacer
            delay = pacer.delay(self.sim.getTime())
            if delay > 0.0:
                self._wait_for_jobs(delay, pacer)

    def _wait_for_jobs(self, duration: float, pacer=None):
        """Run the jobs that arrive within `duration` [s] of wall time; return early when the
        node stops, a step request arrives or (pacing) the real-time factor changes."""
        deadline = time.perf_counter() + duration
        while not self._stop.is_set():
            left = deadline - time.perf_counter()
            if left <= 0.0:
                return
            try:
                self._run_job(*self._jobs.get(timeout=min(left, JOB_POLL)))
            except queue.Empty:
                pass
            if self._stepping is not None or (pacer is not None and self._pacer is not pacer):
                return

    def _run_jobs(self):
        while True:
            try:
                work, future = self._jobs.get_nowait()
            except queue.Empty:
                return
            self._run_job(work, future)

    @staticmethod
    def _run_job(work, future):
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(work())
        except BaseException as error:      # handed to the waiting caller
            future.set_exception(error)

    def _guarded_step(self):
        try:
            self._step()
        except Exception:   # noqa: BLE001 (the node stays up: services, state, a reset)
            self.run_state.halt()
            self.get_logger().error(
                f"simulation paused at t = {self.sim.getTime():.6f} s after an error in "
                f"the step:\n{traceback.format_exc()}")

    def _step(self):
        """One physics step with everything published around it."""
        sim = self.sim
        t = sim.getTime()
        if self.step_count % self._clock_decimation == 0:
            self._clock_pub.publish(self._clock_cdr.encode(t))
        if t + 1e-12 >= self._tf_next:
            self._tf_pub.publish(self.frames.moving(t))
            rate = self._tf_rate
            self._tf_next = t + 1.0 / rate if rate > 0 else 0.0
        self.lockstep.mark(self.step_count)
        sim.simulate(self.physics_dt)
        if sim.getStatus() == STATUS_UNSTABLE:
            self._recover(t)        # (the failed step's contacts may hold NaN: not published)
        else:
            self.step_count += 1
            self.contacts.after_step(sim.getTime())
            self._keep_good_state()
        self.status.after_step()

    # -- blow-up recovery (module docstring) ---------------------------------------------------
    def _keep_good_state(self):
        t = self.sim.getTime()
        if t + 1e-12 < self._snapshot_next:
            return
        self._snapshots = [*self._snapshots[-1:], (t, self.sim.getState())]
        self._snapshot_next = t + SNAPSHOT_PERIOD

    def forget_good_states(self):
        """The world changed (spawn, delete) or time jumped (reset, restore): the states kept
        belong to another past; the state now (validated on its way in) is the first kept."""
        t = self.sim.getTime()
        self._snapshots = [(t, self.sim.getState())]
        self._snapshot_next = t + SNAPSHOT_PERIOD
        self._last_failure = None
        self._escalation = 0

    def _recover(self, t_failed: float):
        # the step from t_failed blew up (the engine kept the state before it). Failing again
        # no later than the last failure (a replay of the same blow-up) escalates: the latest
        # good state, then the one before it, then pause.
        if self._last_failure is not None and t_failed <= self._last_failure:
            self._escalation += 1
        else:
            self._escalation = 0
        self._last_failure = t_failed
        kept = [s for s in self._snapshots if s[0] <= t_failed + 1e-12]
        if self._escalation >= min(len(kept), 2):
            self.run_state.halt()
            self._report(STATUS_UNSTABLE, f"unstable at t = {t_failed:.6f} s, again from the "
                         f"recent good states: paused (reset or restore a state)")
            self.get_logger().error(self._engine_report[1])
            self._end_request(StepRequestInterrupted(self._engine_report[1]))
            return
        t_good, state = kept[-1 - self._escalation]
        self.sim.setState(state)
        self.simulation_services.recovered()    # wrenches in progress end (as on a restore)
        self.recoveries += 1
        self._snapshots = kept[:len(kept) - self._escalation]
        self._snapshot_next = t_good + SNAPSHOT_PERIOD
        self.step_count = round(t_good / self.physics_dt)
        self._pacer = _Pacer(self._pacer.factor)
        self._report(STATUS_UNSTABLE, f"unstable at t = {t_failed:.6f} s: restored the state "
                     f"of t = {t_good:.6f} s (recovery {self.recoveries})")
        self.get_logger().warning(f"the physics blew up at t = {t_failed:.6f} s; restored "
                                  f"the good state of t = {t_good:.6f} s and going on")

    def _report(self, status: int, text: str):
        if self._engine_report is None or status >= self._engine_report[0]:
            self._engine_report = (status, text)

    def engine_report(self) -> tuple[int, str]:
        """(status, text) for ~/status: the worst event since the last call (a recovery), else
        the engine's status of the last step."""
        report, self._engine_report = self._engine_report, None
        status = self.sim.getStatus()
        if report is not None and report[0] >= status:
            return report
        return status, self.sim.getStatusString()

