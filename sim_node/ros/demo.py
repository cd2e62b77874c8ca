"""The main job (`sim_node demo`, `./dev run`): the simulation node on a world, commanded over
ROS topics by a demo controller, recorded to a bag, and summed up.

    sim_node demo [--world PATH] [--duration S] [--real-time-factor X] [--lockstep] [--bag DIR]
                  [--record-exclude REGEX ... | --record-all] [--view [--view-port PORT] [--view-host HOST]]

Starts the node as a separate process (`python -m sim_node`, discovery kept on this machine
unless ROS_AUTOMATIC_DISCOVERY_RANGE says otherwise, the ROS_DOMAIN_ID of the environment)
recording a rosbag2 directory, and runs a demo controller in this process, as a ROS user's
controller would run:
  - every fixed-base robot first gets a `<ns>/joint_trajectory` to a pose offset from its start
    (reached at TRAJECTORY_TIME of sim time), then follows slow sinusoids about that pose
    through `<ns>/position_commands` at COMMAND_RATE (every target inside the joint limits);
  - every robot with the diff_drive plugin drives a circle through `<ns>/cmd_vel`; other
    floating-base robots turn their joints through `<ns>/velocity_commands`.
The controller's clock is the stamps of the joint states it receives. Free running (default),
what it sends depends on how well it keeps up with the node. With --lockstep the node runs in
lockstep with it (parameters lockstep, lockstep_topics: the controller's command topics) and it
answers every joint state, so a run is the same on any machine: the command computed from the
state stamped t_k acts in step k + 1; position_commands every step (during the trajectory its
goal, which the running trajectory overrides), cmd_vel / velocity_commands every step; and it
runs on until a ~/status arrived (published at its rate in wall time), so the summary has one.
At the end it stops the node (SIGINT: the bag is closed) and prints the summary: the real-time
factor, how well the commands were followed, the contacts seen, and the bag: every topic with
its message count and rate in sim time (what the node published and received), next to the
rates at which the controller received the topics it subscribes to; then every sensor topic
(LaserScan, PointCloud2, Image, CameraInfo) in the bag with its publication rate from its header
stamps; and the last frame of each rgb8 image topic the demo received saved as PNG next to the
bag; and a picture of the final scene from the CPU renderer (sim_node.viewer.snapshot, the view
framing the world), ``<bag>_scene.png`` next to the bag: the node saves its state
(~/save_state, into the bag's directory as its data_dir) just before it is stopped, and the demo
renders that state. --view: the node serves the live viewer too (parameters viewer:=true,
viewer_port; the URL is printed on one line). Exit code 0 when the node ran and exited cleanly
and the bag reads back; 1 otherwise; 2 for a world file that does not load.

The bag leaves out the bulk (the node's record_exclude, RECORD_EXCLUDE by default): the raw
images, depth, segmentation and point clouds, ~2 MB per camera frame (an 8 s run of the default
world would write ~480 MB); camera_info (the frames' stamps) and the lidar's LaserScan stay.
--record-exclude replaces the patterns, --record-all records every topic. The demo subscribes
to every image topic itself (best effort, as a viewer would) for the PNGs.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

TRAJECTORY_TIME = 2.0   # [s] of sim time to the first pose
OFFSET = 0.3            # [rad or m] of that pose from the start, at most, per joint
AMPLITUDE = 0.2         # [rad or m] of the sinusoids, at most
PERIOD = 3.0            # [s] of sim time
COMMAND_RATE = 100.0    # [Hz] of sim time: position and velocity commands
DRIVE = (0.2, -0.4)     # cmd_vel: [m/s] forward, [rad/s] turning (a circle of 0.5 m radius, away
                        # from the table in the default world)
WHEEL_SPEED = 2.0       # [rad/s] velocity_commands of robots without diff_drive
MARGIN = 0.05           # keep targets this fraction of a joint's range inside its limits
STARTUP_TIMEOUT = 60.0  # [s] of wall time for the node's first /clock
LOCKSTEP_TIMEOUT = 30.0 # [s] the node waits for a command in --lockstep (a loaded machine)
# the node's record_exclude in the demo: images (image_raw, depth/image_raw,
# segmentation/image_raw) and point clouds
RECORD_EXCLUDE = ("/image_raw$", "/points$")
IMAGE_TYPE = "sensor_msgs/msg/Image"
DISCOVERY_PERIOD = 0.5  # [s] of wall time between looks for new image topics


def parse(argv):
    parser = argparse.ArgumentParser(prog="sim_node demo",
                                     description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--world", help="world YAML or URDF (default: the embedded default world)")
    parser.add_argument("--duration", type=float, default=8.0, help="simulated seconds (8)")
    parser.add_argument("--real-time-factor", type=float, default=1.0,
                        help="target sim time / wall time, 0: as fast as possible (1)")
    parser.add_argument("--lockstep", action="store_true",
                        help="run the node in lockstep with the controller, which then commands "
                             "every step (a run independent of the machine's speed)")
    parser.add_argument("--bag", help="bag directory to create (default: a new one under the "
                        "temporary directory)")
    record = parser.add_mutually_exclusive_group()
    record.add_argument("--record-exclude", action="append", metavar="REGEX",
                        help="leave published topics whose name contains a match of REGEX out "
                             "of the bag (repeatable; replaces the default: "
                             + " ".join(RECORD_EXCLUDE) + ")")
    record.add_argument("--record-all", action="store_true", help="record every topic")
    parser.add_argument("--view", action="store_true", help="the node serves the live web "
                        "viewer (viewer:=true); its URL is printed on one line")
    parser.add_argument("--view-port", type=int, default=8080, help="HTTP port of the viewer "
                        "(8080; 0: any free port; a port in use: the node runs without it)")
    parser.add_argument("--view-host", default="127.0.0.1", help="address the viewer serves "
                        "on (127.0.0.1: this machine only; 0.0.0.0: every interface)")
    args = parser.parse_args(argv)
    from sim_node.ros.view import check_address
    try:
        check_address(args.view_host, args.view_port, "--view-host / --view-port:")
    except ValueError as error:
        parser.error(str(error))
    args.record_exclude = ([] if args.record_all else list(args.record_exclude)
                           if args.record_exclude is not None else list(RECORD_EXCLUDE))
    from sim_node.ros.recorder import exclusions
    try:
        exclusions(args.record_exclude)
    except ValueError as error:
        parser.error(f"--record-exclude: {error}")
    if not (math.isfinite(args.duration) and args.duration > 0):
        parser.error(f"--duration must be a positive time, got {args.duration}")
    if not (math.isfinite(args.real_time_factor) and args.real_time_factor >= 0):
        parser.error(f"--real-time-factor must be >= 0, got {args.real_time_factor}")
    return args


@dataclass
class _Robot:
    """What the demo controller knows of one robot (from the world file and its URDF)."""
    namespace: str
    joints: tuple                   # joint names, in joint order (position_commands order)
    lower: list
    upper: list
    fixed_base: bool
    diff_drive: bool
    start: list | None = None       # first joint positions seen
    pose: list | None = None        # the trajectory's goal
    errors: list = field(default_factory=list)      # |q - target| after the trajectory
    last_command: float = -1.0      # [s] sim time of the last position/velocity command

    def topic(self, name: str) -> str:
        return f"/{self.namespace}/{name}" if self.namespace else f"/{name}"

    def inside(self, j: int, value: float) -> float:
        lo, hi = self.lower[j], self.upper[j]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return value
        margin = MARGIN * (hi - lo)
        return min(max(value, lo + margin), hi - margin)

    def offset(self, j: int, amount: float) -> float:
        # amount, limited to the room between the start and the joint's limits
        lo, hi = self.lower[j], self.upper[j]
        room = (hi - lo) / 4 if math.isfinite(lo) and math.isfinite(hi) else abs(amount)
        return math.copysign(min(abs(amount), room), amount)


def robots_of(world) -> list[_Robot]:
    """The robots of a world as the node started on it (without robot_namespaces) sees them."""
    from sim_node.ros.namespaces import assign_namespaces
    from sim_node.sim.joints import JointLayout

    namespaces = assign_namespaces(world)
    robots = []
    for r in range(world.numRobots()):
        robot = world.robot(r)
        layout = JointLayout.of(robot)
        plugins = {p.name for p in robot.settings.plugins}
        robots.append(_Robot(namespaces[robot.getName()],
                             layout.names, layout.lower.tolist(), layout.upper.tolist(),
                             not robot.isFloatingBase(), "diff_drive" in plugins))
    return robots


class DemoController:
    """Subscribes to the robots' joint states (their stamps are its clock), ~/contacts and
    ~/status; commands the
    robots as the module docstring says. Callbacks run on one executor thread."""

    def __init__(self, node, robots: list[_Robot], node_name: str = "/sim",
                 every_step: bool = False):
        from geometry_msgs.msg import Twist
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from sim_node.msg import Contacts, SimStatus

        self.node = node
        self.robots = robots
        self.every_step = every_step    # lockstep: a command for every joint state
        self.arrivals: dict[str, list] = {}         # topic -> [(wall, sim time)]
        self.contact_pairs: dict[tuple, int] = {}   # (entity, entity) -> messages with it
        self.status = None
        self.sim_time = 0.0
        self._lock = threading.Lock()
        self._types = (Float64MultiArray, JointTrajectory, Twist)
        self._pubs = {}
        self._joint_state_type = JointState
        from rclpy.serialization import deserialize_message
        self._deserialize = deserialize_message
        # the joint states the controller reads: of every fixed-base robot (or of the first
        # robot if none); raw, deserialized only when a command is due (every step's message
        # costs a busy machine's controller more than it needs)
        readers = [r for r in robots if r.fixed_base] or robots[:1]
        self._movers = [r for r in robots if r not in readers]      # commanded on their tick
        for robot in readers:
            node.create_subscription(JointState, robot.topic("joint_states"),
                                     lambda data, r=robot: self._joint_states(r, data), 50,
                                     raw=True)
        for robot in robots:
            if robot.fixed_base:
                self._pubs[robot.topic("joint_trajectory")] = node.create_publisher(
                    JointTrajectory, robot.topic("joint_trajectory"), 10)
                self._pubs[robot.topic("position_commands")] = node.create_publisher(
                    Float64MultiArray, robot.topic("position_commands"), 10)
            elif robot.diff_drive:
                self._pubs[robot.topic("cmd_vel")] = node.create_publisher(
                    Twist, robot.topic("cmd_vel"), 10)
            else:
                self._pubs[robot.topic("velocity_commands")] = node.create_publisher(
                    Float64MultiArray, robot.topic("velocity_commands"), 10)
        node.create_subscription(Contacts, f"{node_name}/contacts", self._contacts, 10)
        node.create_subscription(SimStatus, f"{node_name}/status", self._status, 10)

    # -- bookkeeping -----------------------------------------------------------------------
    def _arrived(self, topic: str, t: float):
        with self._lock:
            self.arrivals.setdefault(topic, []).append((time.monotonic(), t))

    def _contacts(self, message):
        self._arrived(self.node.resolve_topic_name("/sim/contacts"), _seconds(message.header))
        for c in message.contacts:
            pair = tuple(sorted((c.entity1, c.entity2)))
            self.contact_pairs[pair] = self.contact_pairs.get(pair, 0) + 1

    def _status(self, message):
        self._arrived("/sim/status", _seconds(message.header))
        self.status = message

    # -- the controller ----------------------------------------------------------------------
    def _joint_states(self, robot: _Robot, data: bytes):
        sec, nanosec = struct.unpack_from("<iI", data, 4)   # header.stamp, after the CDR header
        t = sec + nanosec * 1e-9
        self.sim_time = max(self.sim_time, t)
        self._arrived(robot.topic("joint_states"), t)
        if robot.start is not None and not self.every_step \
                and t - robot.last_command < 1.0 / COMMAND_RATE - 1e-9:
            return
        message = self._deserialize(data, self._joint_state_type)
        position = dict(zip(message.name, message.position))
        if robot.start is None:
            robot.start = [position[name] for name in robot.joints]
            if robot.fixed_base:
                self._send_trajectory(robot, t)
        robot.last_command = t
        if robot.fixed_base and t >= TRAJECTORY_TIME + 0.5:   # after the trajectory, settled
            target = self._sinusoid(robot, t)
            robot.errors.append(max(abs(position[name] - q)
                                    for name, q in zip(robot.joints, target)))
            self._pubs[robot.topic("position_commands")].publish(
                self._types[0](data=target))
        elif robot.fixed_base and self.every_step:     # the trajectory's goal: it overrides
            self._pubs[robot.topic("position_commands")].publish(
                self._types[0](data=robot.pose))
        elif not robot.fixed_base:
            self._command(robot)
        for mover in self._movers:
            self._command(mover)

    def _command(self, robot: _Robot):
        # a floating-base robot: drive
        if robot.diff_drive:
            twist = self._types[2]()
            twist.linear.x, twist.angular.z = DRIVE
            self._pubs[robot.topic("cmd_vel")].publish(twist)
        else:
            self._pubs[robot.topic("velocity_commands")].publish(
                self._types[0](data=[WHEEL_SPEED] * len(robot.joints)))

    def _send_trajectory(self, robot: _Robot, t: float):
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectoryPoint

        robot.pose = [robot.inside(j, q + robot.offset(j, OFFSET * (-1) ** j))
                      for j, q in enumerate(robot.start)]
        trajectory = self._types[1]()
        trajectory.joint_names = list(robot.joints)
        point = JointTrajectoryPoint(positions=robot.pose, velocities=[0.0] * len(robot.pose))
        point.time_from_start = Duration(sec=int(TRAJECTORY_TIME),
                                         nanosec=int(TRAJECTORY_TIME % 1 * 1e9))
        trajectory.points = [point]
        self._pubs[robot.topic("joint_trajectory")].publish(trajectory)

    @staticmethod
    def _sinusoid(robot: _Robot, t: float) -> list:
        phase = 2 * math.pi * (t - TRAJECTORY_TIME) / PERIOD
        return [robot.inside(j, q + robot.offset(j, AMPLITUDE) * math.sin(phase + 0.7 * j))
                for j, q in enumerate(robot.pose)]

    def command_topics(self) -> list[str]:
        """The topics the controller sends a command on for every joint state it answers."""
        return sorted(topic for topic in self._pubs if not topic.endswith("/joint_trajectory"))

    def rates(self, since_sim: float) -> dict:
        """topic -> (messages per second of sim time, per second of wall time), over the
        messages stamped at or after since_sim."""
        out = {}
        with self._lock:
            for topic, arrivals in self.arrivals.items():
                kept = [(w, s) for w, s in arrivals if s >= since_sim]
                if len(kept) < 2:
                    continue
                sim_span = kept[-1][1] - kept[0][1]
                wall_span = kept[-1][0] - kept[0][0]
                out[topic] = ((len(kept) - 1) / sim_span if sim_span > 0 else math.inf,
                              (len(kept) - 1) / wall_span if wall_span > 0 else math.inf)
        return out


class Frames:
    """The last message of every image topic, as serialized bytes (no deserialization per
    frame): subscribed best effort as topics appear (look() every DISCOVERY_PERIOD)."""

    def __init__(self, node):
        self._node = node
        self.last: dict[str, bytes] = {}
        self.count: dict[str, int] = {}
        self._next_look = 0.0

    def look(self):
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Image

        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + DISCOVERY_PERIOD
        for topic, types in self._node.get_topic_names_and_types():
            if IMAGE_TYPE in types and topic not in self.count:
                self.count[topic] = 0
                self._node.create_subscription(Image, topic, partial(self._received, topic),
                                               qos_profile_sensor_data, raw=True)

    def _received(self, topic: str, data: bytes):
        self.last[topic] = data
        self.count[topic] += 1


def _play(node, executor, process) -> str | None:
    """Start a paused node with ~/set_simulation_state(PLAYING); None, or why not. Its answer
    comes after the node has discovered the controller's endpoints (made before the call; DDS
    announces a participant's endpoints in creation order) and the controller the node's
    publishers (made before its services), so no state and no command of the run is lost."""
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import SetSimulationState

    client = node.create_client(SetSimulationState, "/sim/set_simulation_state")
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not client.service_is_ready():
        if process.poll() is not None or time.monotonic() > deadline:
            return f"the node's ~/set_simulation_state is not up within {STARTUP_TIMEOUT:g} s"
        executor.spin_once(timeout_sec=0.05)
    future = client.call_async(SetSimulationState.Request(
        state=SimulationState(state=SimulationState.STATE_PLAYING)))
    while not future.done():
        if process.poll() is not None or time.monotonic() > deadline:
            return f"~/set_simulation_state did not answer within {STARTUP_TIMEOUT:g} s"
        executor.spin_once(timeout_sec=0.05)
    result = future.result().result
    node.destroy_client(client)
    return None if result.result == result.OK else \
        f"~/set_simulation_state: {result.error_message}"


def _save_state(node, executor, process, bag: Path) -> Path | None:
    """The node's state now, written by its ~/save_state next to the bag (its data_dir); the
    file, or None (said why) when the node does not answer within STARTUP_TIMEOUT."""
    from sim_node.srv import SaveState

    client = node.create_client(SaveState, "/sim/save_state")
    name = f"{bag.name}_final.state"
    deadline = time.monotonic() + STARTUP_TIMEOUT
    try:
        while not client.service_is_ready():
            if process.poll() is not None or time.monotonic() > deadline:
                print("warning: the node's ~/save_state is not up: no picture of the final "
                      "scene", file=sys.stderr)
                return None
            executor.spin_once(timeout_sec=0.05)
        future = client.call_async(SaveState.Request(path=name))
        while not future.done():
            if process.poll() is not None or time.monotonic() > deadline:
                print("warning: ~/save_state did not answer: no picture of the final scene",
                      file=sys.stderr)
                return None
            executor.spin_once(timeout_sec=0.05)
    finally:
        node.destroy_client(client)
    response = future.result()
    if not response.success:
        print(f"warning: ~/save_state: {response.message}: no picture of the final scene",
              file=sys.stderr)
        return None
    return bag.parent / name


def scene_picture(world, state_file: Path | None, bag: Path) -> Path | None:
    """Render the saved final state of the run (the CPU renderer, the view framing the world)
    as ``<bag>_scene.png``; its path, or None (said why)."""
    if state_file is None:
        return None
    from sim_node.sim.simulator import Simulator
    from sim_node.viewer.snapshot import snapshot

    try:
        state = state_file.read_bytes()
        state_file.unlink()
        sim = Simulator(world)
        sim.setState(state)
        path = snapshot(sim, bag.parent / f"{bag.name}_scene.png")
    except (OSError, ValueError) as error:
        print(f"warning: no picture of the final scene: {error}", file=sys.stderr)
        return None
    print(f"final scene at t = {sim.getTime():.3f} s (CPU renderer): {path}")
    return path


def _seconds(header) -> float:
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def main(argv=None) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from sim_node.model.errors import ModelLoadError
    from sim_node.model.world import WorldModel
    from sim_node.resources import default_world

    args = parse(argv)
    world_path = Path(args.world).resolve() if args.world else default_world()
    world = WorldModel()
    try:
        world.readFile(world_path)
    except ModelLoadError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    robots = robots_of(world)
    bag = (Path(args.bag).resolve() if args.bag
           else Path(tempfile.mkdtemp(prefix="sim_node_demo_")) / "bag")
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env.get("ROS_DOMAIN_ID") or 0))
    node = rclpy.create_node("demo_controller", context=context)
    controller = DemoController(node, robots, every_step=args.lockstep)
    frames = Frames(node)
    command = [sys.executable, "-m", "sim_node", "--ros-args", "-p", f"world:={world_path}",
               "-p", f"real_time_factor:={float(args.real_time_factor)}", "-p", f"record:={bag}",
               "-p", f"data_dir:={bag.parent}"]
    if args.view:
        command += ["-p", "viewer:=true", "-p", f"viewer_port:={args.view_port}",
                    "-p", f"viewer_host:={args.view_host}"]
    if args.record_exclude:
        # a YAML list of single-quoted strings (a quote in one doubled, backslashes literal)
        patterns = ",".join("'" + p.replace("'", "''") + "'" for p in args.record_exclude)
        command += ["-p", f"record_exclude:=[{patterns}]"]
    if args.lockstep:
        topics = ",".join(f"'{topic}'" for topic in controller.command_topics())
        command += ["-p", "lockstep:=true", "-p", f"lockstep_topics:=[{topics}]",
                    "-p", f"lockstep_timeout:={LOCKSTEP_TIMEOUT}", "-p", "paused:=true"]
    print(f"sim_node demo: the node on {world_path} ({world}), {args.duration:g} s of sim time "
          f"at real-time factor {args.real_time_factor:g}"
          f"{' in lockstep with the controller' if args.lockstep else ''}, recording to {bag}",
          flush=True)
    process = subprocess.Popen(command, env=env, start_new_session=True)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    wall0 = time.monotonic()
    failed = None
    try:
        if args.lockstep:
            failed = _play(node, executor, process)
        while not failed and (controller.sim_time < args.duration
               or (args.lockstep and controller.status is None
                   and time.monotonic() - wall0 < STARTUP_TIMEOUT)) \
                and process.poll() is None:
            executor.spin_once(timeout_sec=0.05)
            frames.look()
            if controller.sim_time == 0 and time.monotonic() - wall0 > STARTUP_TIMEOUT:
                failed = f"no joint states from the node within {STARTUP_TIMEOUT:g} s"
                break
        if process.poll() is not None:
            failed = f"the node exited early with code {process.returncode}"
        wall = time.monotonic() - wall0
        final_state = None if failed else _save_state(node, executor, process, bag)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    if failed:
        print(f"error: {failed}", file=sys.stderr)
        return 1
    code = summary(controller, bag, process.returncode, wall, frames)
    scene_picture(world, final_state, bag)
    return code


def summary(controller: DemoController, bag: Path, returncode: int, wall: float,
            frames: Frames | None = None) -> int:
    """Print what happened; 0 if the node exited cleanly and the bag reads back, else 1."""
    from rosbags.highlevel import AnyReader

    status = controller.status
    print(f"\nnode exited with code {returncode}")
    if status is not None:
        print(f"sim time {controller.sim_time:.3f} s in {wall:.1f} s of wall time; steps "
              f"{status.step_count}; real-time factor {status.real_time_factor:.2f} (last "
              f"~/status; target {status.target_real_time_factor:g}); engine "
              f"{status.engine_status_string}")
        slow = sorted(((p.mean_time_us, p.name, p.robot) for p in status.plugins), reverse=True)
        if slow:
            print("plugins (mean time per call): " + ", ".join(
                f"{name}[{robot}] {us:.1f} us" for us, name, robot in slow))
    print("commands followed:")
    for robot in controller.robots:
        if robot.fixed_base and robot.errors:
            print(f"  {robot.namespace}: trajectory to its pose, then sinusoids on "
                  f"position_commands; max |q - target| {max(robot.errors[-50:]):.4f} "
                  f"over the last {min(len(robot.errors), 50)} commands")
        elif robot.diff_drive:
            print(f"  {robot.namespace}: cmd_vel {DRIVE[0]} m/s, {DRIVE[1]} rad/s")
        elif not robot.fixed_base:
            print(f"  {robot.namespace}: velocity_commands {WHEEL_SPEED} rad/s")
    print(f"contacts seen ({len(controller.contact_pairs)} pairs of entities, in ~/contacts "
          f"messages):")
    for (a, b), n in sorted(controller.contact_pairs.items()):
        print(f"  {a} - {b}: {n}")
    try:
        with AnyReader([bag]) as reader:
            print(f"bag {bag}: {reader.message_count} messages, "
                  f"{reader.duration * 1e-9:.3f} s of sim time")
            spans = {}
            for connection, t, _ in reader.messages():
                first, last, _ = spans.get(connection.topic, (t, t, 0))
                spans[connection.topic] = (min(first, t), max(last, t), 0)
            received = controller.rates(since_sim=0.5)
            print(f"  {'topic':36s} {'type':32s} {'messages':>8s} {'Hz (sim)':>9s}   "
                  f"received by the controller: Hz (sim), Hz (wall)")
            for connection in sorted(reader.connections, key=lambda c: c.topic):
                first, last, _ = spans.get(connection.topic, (0, 0, 0))
                n = connection.msgcount
                rate = f"{(n - 1) / ((last - first) * 1e-9):9.1f}" if n > 1 and last > first \
                    else f"{'-':>9s}"
                line = f"  {connection.topic:36s} {connection.msgtype:32s} {n:8d} {rate}"
                if connection.topic in received:
                    per_sim, per_wall = received[connection.topic]
                    line += f"   {per_sim:9.1f} {per_wall:9.1f}"
                print(line)
            sensors(reader, bag, frames)
    except Exception as error:      # noqa: BLE001 (reported: the demo failed)
        print(f"error: the bag {bag} does not read back: {error}", file=sys.stderr)
        return 1
    return 0 if returncode == 0 else 1


SENSOR_TYPES = ("sensor_msgs/msg/LaserScan", "sensor_msgs/msg/PointCloud2",
                "sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo")


def sensors(reader, bag: Path, frames: Frames | None = None) -> list[Path]:
    """Print each recorded sensor topic's publication rate in sim time (from its header stamps:
    the capture steps, whenever the frame was published) and the frames the demo received of
    each image topic, and save the last received frame of every rgb8 image topic as PNG next to
    the bag (``<bag>_<topic>.png``); the PNG paths."""
    import imageio.v3 as iio
    import numpy as np
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import Image

    connections = sorted((c for c in reader.connections if c.msgtype in SENSOR_TYPES),
                         key=lambda c: c.topic)
    received = {} if frames is None else frames.count
    if not connections and not received:
        return []
    stamps: dict[str, list] = {c.topic: [] for c in connections}
    for connection, _, raw in reader.messages(connections=connections):
        sec, nanosec = struct.unpack_from("<iI", raw, 4)   # header.stamp, after the CDR header
        stamps[connection.topic].append(sec + nanosec * 1e-9)
    print("sensors (publication rate in sim time, from the header stamps):")
    for connection in connections:
        t = sorted(stamps[connection.topic])
        rate = f"{(len(t) - 1) / (t[-1] - t[0]):9.1f} Hz" if len(t) > 1 and t[-1] > t[0] \
            else f"{'-':>9s}   "
        print(f"  {connection.topic:36s} {connection.msgtype:32s} {len(t):8d} {rate}")
    for topic in sorted(set(received) - set(stamps)):
        print(f"  {topic:36s} {IMAGE_TYPE:32s} not recorded; {received[topic]} frames received "
              f"by the demo")
    saved = []
    for topic, raw in sorted(({} if frames is None else frames.last).items()):
        message = deserialize_message(raw, Image)
        if message.encoding != "rgb8":
            continue
        pixels = np.asarray(message.data, dtype=np.uint8)[:message.height * message.step]
        pixels = pixels.reshape(message.height, message.step)[:, :message.width * 3]
        path = bag.parent / f"{bag.name}{topic.replace('/', '_')}.png"
        iio.imwrite(path, pixels.reshape(message.height, message.width, 3))
        saved.append(path)
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        print(f"  {topic}: the frame stamped {stamp:.3f} s saved as {path}")
    return saved
