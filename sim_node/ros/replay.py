"""`sim_node replay BAG`: run a recording again, or play its states back (issue 5 item 7).

Physics replay (default). A bag written by sim_node/ros/recorder.py holds what running it
again needs: in metadata.yaml's custom_data the recorded node's name, parameters (the world as
an absolute path, physics_dt as used, default_plugins ...) and command topics; on
``<node>/recording/initial_state`` the ``Simulator.getState()`` the recording started from;
and every command a plugin subscription received, stamped with the start time t [ns] of the
step it acted in. The replay rebuilds that simulation in this process, without ROS
communication: a SimpleSimulator of the same world, plugins, physics_dt and contact feedback,
whose plugins' publishers and subscriptions are captured here (topics resolved as the node
resolved them). It restores the initial state and steps; before the step starting at t it hands
every command stamped t, deserialized from the recorded bytes, to the same subscription
callback, in the recorded order. Each ``sensor_msgs/JointState`` the replay's plugins publish
is compared with the recorded message of the same topic and stamp (position, velocity, effort):
the deviation is the largest absolute difference, 0.0 exactly when the world and the build are
the same (the recorder's ordering makes the run repeat bit for bit). A recorded joint state the
replay does not reproduce (other joints, another stamp) counts as an infinite deviation.
What the recording did through services (reset, set_entity_state, spawn, wrenches) is not in
the bag: a run that used them deviates from where they acted.

States playback (``--states``). A ROS node (``sim_replay``) publishes the recorded /clock,
/tf, /tf_static, every joint_states topic and every robot_description topic, from the bag's
raw bytes in stamp order, with the QoS the bag records for each (transient local for /tf_static
and robot_description); no physics. Pacing: rate R x the recorded sim time (0: as fast as
possible). It exits after the last message with a summary, or starts over with ``--loop``.
``--wait-for TOPIC`` holds the first message back until TOPIC has a subscriber, so that a
listener started first (a test, a recorder) receives everything from the start.

Exit codes: 0 done (deviation within --tolerance when given), 1 deviation above --tolerance,
2 the bag cannot be replayed (missing, not recorded by sim_node, world not loadable).
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from sim_node.ros.recorder import (CUSTOM_COMMAND_TOPICS, CUSTOM_INITIAL_STATE, CUSTOM_NODE,
                                   CUSTOM_PARAMETERS, nanoseconds)

PLAYBACK_DEPTH = 1000  # history of the played volatile topics (_qos_profile)
ACK_TIMEOUT = 5.0      # [s] longest wait for the subscribers to acknowledge the last samples
MATCH_SETTLE = 0.5     # [s] of wall time after --wait-for subscribers appear
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
FIELDS = ("position", "velocity", "effort")
REQUIRED_CUSTOM_DATA = (CUSTOM_NODE, CUSTOM_PARAMETERS, CUSTOM_COMMAND_TOPICS,
                        CUSTOM_INITIAL_STATE)
STATE_TOPICS = ("/clock", "/tf", "/tf_static")      # --states: besides joint_states and
DESCRIPTION_SUFFIX = "robot_description"            # the robot_description topics


class ReplayError(Exception):
    """The bag cannot be replayed; the message says why."""


def message_class(type_name: str):
    """The rclpy message class of 'package/msg/Name'."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def resolve_topic(topic: str, node: str) -> str:
    """A topic name as the node `node` (fully qualified, e.g. '/sim') resolves it: absolute
    names stay, '~/x' is under the node, relative names are in the node's namespace."""
    if topic.startswith("/"):
        return topic
    if topic.startswith("~"):
        return node + "/" + topic[1:].lstrip("/")
    namespace = node.rsplit("/", 1)[0]
    return f"{namespace}/{topic}"


# -- the bag ---------------------------------------------------------------------------------
def open_bag(path: Path):
    """An open rosbags Reader of a rosbag2 directory (ReplayError if it is none)."""
    from rosbags.rosbag2 import Reader
    from rosbags.rosbag2.errors import ReaderError

    if not path.is_dir():
        raise ReplayError(f"{path}: no such bag directory")
    reader = Reader(path)
    try:
        reader.open()
    except ReaderError as error:
        raise ReplayError(f"{path}: not a readable rosbag2 directory: {error}") from None
    return reader


def recording_of(reader, path: Path) -> dict:
    """The custom_data sim_node's recorder wrote (ReplayError naming what is missing)."""
    # read from metadata.yaml itself: rosbags' Reader does not expose custom_data
    try:
        info = yaml.safe_load((path / "metadata.yaml").read_text())
        custom = info["rosbag2_bagfile_information"].get("custom_data") or {}
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as error:
        raise ReplayError(f"{path}: cannot read metadata.yaml: {error}") from None
    missing = [key for key in REQUIRED_CUSTOM_DATA if key not in custom]
    if missing:
        raise ReplayError(f"{path} was not recorded by sim_node: metadata.yaml custom_data "
                          f"lacks {', '.join(missing)}")
    try:
        parameters = json.loads(custom[CUSTOM_PARAMETERS])
        commands = json.loads(custom[CUSTOM_COMMAND_TOPICS])
    except ValueError as error:
        raise ReplayError(f"{path}: corrupt sim_node custom_data: {error}") from None
    if not isinstance(parameters, dict) or not isinstance(commands, list):
        raise ReplayError(f"{path}: corrupt sim_node custom_data (parameters must be a JSON "
                          f"object, command topics a JSON list)")
    return {"node": custom[CUSTOM_NODE], "parameters": parameters, "commands": commands,
            "initial_state_topic": custom[CUSTOM_INITIAL_STATE]}


def initial_state(reader, topic: str, path: Path) -> tuple[int, bytes]:
    """(stamp [ns], Simulator state) recorded on the initial-state topic."""
    from rclpy.serialization import deserialize_message
    from std_msgs.msg import UInt8MultiArray

    connections = [c for c in reader.connections if c.topic == topic]
    for _, stamp, data in reader.messages(connections):
        return stamp, bytes(deserialize_message(data, UInt8MultiArray).data)
    raise ReplayError(f"{path}: no initial state on {topic} (the recording ended before its "
                      f"first step, or the segment holding it was lost)")


# -- the replayed simulation -----------------------------------------------------------------
class _CapturedPublisher:
    """A plugin's publisher in the replay: keeps what it publishes (joint states only)."""

    def __init__(self, replay, msg_type, topic: str):
        self.replay = replay
        self.msg_type = msg_type
        self.topic = topic

    def publish(self, message):
        self.replay.published(self, message)


@dataclass
class _Subscription:
    msg_type: type
    callback: object


@dataclass
class Deviation:
    """Largest |replayed - recorded| per (robot topic, field)."""
    values: dict = field(default_factory=dict)

    def add(self, topic: str, name: str, value: float):
        key = (topic, name)
        self.values[key] = max(self.values.get(key, 0.0), value)

    @property
    def overall(self) -> float:
        return max(self.values.values(), default=0.0)


class PhysicsReplay:
    """The recorded simulation rebuilt from a bag's custom data (module docstring)."""

    def __init__(self, recording: dict, state: bytes, path: Path):
        from sim_node.ros.namespaces import assign_namespaces
        from sim_node.sim.simulation import SimpleSimulator

        self.node = recording["node"]
        parameters = recording["parameters"]
        world = self._world(parameters, path)
        self.subscriptions: dict[str, _Subscription] = {}
        self.joint_state_topics: set[str] = set()
        self.produced: dict[tuple[str, int], object] = {}
        default_plugins = [{"name": n} for n in parameters.get("default_plugins") or [] if n]
        try:
            # the robots' namespaces as the node assigned them: its topics
            assign_namespaces(world, parameters.get("robot_namespaces") or [])
            self.sim = SimpleSimulator(world, default_plugins=default_plugins,
                                       create_publisher=self._create_publisher,
                                       create_subscription=self._create_subscription)
        except (LookupError, ValueError, TypeError) as error:
            raise ReplayError(f"cannot build the recorded simulation: {error}") from None
        self.physics_dt = float(parameters.get("physics_dt") or world.simulation.physics_dt)
        self.sim.setSimStep(self.physics_dt)
        self.sim.enableContactFeedbackAll()       # as the node does
        try:
            self.sim.setState(state)
        except ValueError as error:
            raise ReplayError(f"the recorded initial state does not fit the world "
                              f"{parameters.get('world') or '(default)'}: {error}") from None
        self.steps = 0

    @staticmethod
    def _world(parameters: dict, path: Path):
        from sim_node.model.errors import ModelLoadError
        from sim_node.model.world import WorldModel

        world = WorldModel()
        try:
            if parameters.get("world"):
                world.readFile(Path(parameters["world"]))
            elif parameters.get("robot_description"):
                world.loadRobot(parameters["robot_description"])
            elif parameters.get("robot_description_topic"):
                raise ReplayError(f"{path}: the recorded node took its robot from the topic "
                                  f"{parameters['robot_description_topic']}; replay needs a "
                                  f"world file or robot_description parameter")
            else:
                from sim_node.resources import default_world

                world.readFile(default_world())
        except (ModelLoadError, OSError) as error:
            raise ReplayError(f"cannot load the recorded world: {error}") from None
        return world

    def _create_publisher(self, msg_type, topic, qos=10, **kwargs):
        name = resolve_topic(topic, self.node)
        if msg_type.__name__ == "JointState" and msg_type.__module__.startswith("sensor_msgs"):
            self.joint_state_topics.add(name)
        return _CapturedPublisher(self, msg_type, name)

    def _create_subscription(self, msg_type, topic, callback, qos=10, **kwargs):
        name = resolve_topic(topic, self.node)
        self.subscriptions[name] = _Subscription(msg_type, callback)
        return self.subscriptions[name]

    def published(self, publisher: _CapturedPublisher, message):
        """Keep a joint state as CDR bytes (what the recorder wrote), by topic and stamp."""
        if publisher.topic not in self.joint_state_topics:
            return
        from rclpy.serialization import deserialize_message, serialize_message

        if isinstance(message, (bytes, bytearray)):
            data = bytes(message)
            stamp = deserialize_message(data, publisher.msg_type).header.stamp
        else:
            data, stamp = serialize_message(message), message.header.stamp
        self.produced[(publisher.topic, stamp.sec * 1_000_000_000 + stamp.nanosec)] = data

    @property
    def time_ns(self) -> int:
        return nanoseconds(self.sim.getTime())

    def step(self):
        self.sim.simulate(self.physics_dt)
        self.steps += 1

    def deliver(self, topic: str, data: bytes) -> str | None:
        """Hand a recorded command to its subscription callback; None, or why not."""
        from rclpy.serialization import deserialize_message

        subscription = self.subscriptions.get(topic)
        if subscription is None:
            return "no plugin of the replayed world subscribes to it"
        try:
            message = deserialize_message(data, subscription.msg_type)
        except Exception as error:      # noqa: BLE001 (rclpy raises plain exceptions)
            return f"cannot deserialize a {subscription.msg_type.__name__}: {error}"
        try:    # as the node's Lockstep.subscription_factory: a plugin error is contained
            subscription.callback(message)
        except Exception as error:      # noqa: BLE001
            return f"the plugin callback raised {type(error).__name__}: {error}"
        return None


def compare(recorded: bytes, replayed: bytes, topic: str, deviation: Deviation):
    """Add |replayed - recorded| of each field of two serialized JointStates to `deviation`
    (inf if the joints differ). Equal bytes are equal messages: no deserialization."""
    if recorded == replayed:
        for name in FIELDS:
            deviation.add(topic, name, 0.0)
        return
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    recorded = deserialize_message(recorded, JointState)
    replayed = deserialize_message(replayed, JointState)
    if list(recorded.name) != list(replayed.name):
        for name in FIELDS:
            deviation.add(topic, name, math.inf)
        return
    for name in FIELDS:
        a = np.asarray(getattr(recorded, name), dtype=float)
        b = np.asarray(getattr(replayed, name), dtype=float)
        if a.shape != b.shape:
            deviation.add(topic, name, math.inf)
        elif a.size:
            difference = np.abs(b - a)
            # NaN where both are NaN is no deviation; NaN on one side is
            difference[np.isnan(a) & np.isnan(b)] = 0.0
            deviation.add(topic, name, float(np.nan_to_num(difference, nan=math.inf).max()))
        else:
            deviation.add(topic, name, 0.0)


@dataclass
class PhysicsResult:
    """What a physics replay did and found."""
    steps: int = 0
    compared: int = 0
    missing: int = 0                    # recorded joint states the replay did not produce
    commands: dict = field(default_factory=dict)        # topic -> count replayed
    skipped: dict = field(default_factory=dict)         # topic -> (count, why)
    deviation: Deviation = field(default_factory=Deviation)


def replay_physics(path: Path) -> PhysicsResult:
    """Replay a sim_node bag's commands into a fresh simulation (module docstring)."""
    reader = open_bag(path)
    try:
        recording = recording_of(reader, path)
        t0, state = initial_state(reader, recording["initial_state_topic"], path)
        replay = PhysicsReplay(recording, state, path)
        if replay.time_ns != t0:
            raise ReplayError(f"{path}: the initial state is at {replay.time_ns} ns, its stamp "
                              f"says {t0} ns")
        commands = set(recording["commands"])
        wanted = [c for c in reader.connections
                  if c.topic in commands
                  or (c.msgtype == JOINT_STATE_TYPE and c.topic in replay.joint_state_topics)]
        # kept for comparison: the joint states the bag has a counterpart of
        replay.joint_state_topics &= {c.topic for c in wanted if c.topic not in commands}
        result = PhysicsResult()
        recorded: dict[tuple[str, int], object] = {}

        def settle():
            for key in [k for k in recorded if k in replay.produced]:
                compare(recorded.pop(key), replay.produced.pop(key), key[0], result.deviation)
                result.compared += 1

        last = t0
        for connection, stamp, data in reader.messages(wanted):
            if connection.topic in commands:
                while replay.time_ns < stamp:
                    replay.step()
                    settle()
                why = replay.deliver(connection.topic, data)
                if why is None:
                    result.commands[connection.topic] = result.commands.get(
                        connection.topic, 0) + 1
                else:
                    count, _ = result.skipped.get(connection.topic, (0, why))
                    result.skipped[connection.topic] = (count + 1, why)
            else:
                if stamp < t0:
                    continue
                recorded[(connection.topic, stamp)] = bytes(data)
                last = max(last, stamp)
                settle()
        while replay.time_ns <= last:       # the step starting at `last` publishes its state
            replay.step()
            settle()
        result.steps = replay.steps
        result.missing = len(recorded)
        for topic, _ in recorded:
            for name in FIELDS:
                result.deviation.add(topic, name, math.inf)
        replay.sim.close()
        return result
    finally:
        reader.close()


def print_physics(path: Path, result: PhysicsResult, out=None):
    out = out or sys.stdout
    print(f"replayed {path}: {result.steps} steps, {result.compared} joint states compared",
          file=out)
    if result.commands:
        print("commands replayed:", file=out)
        for topic, count in sorted(result.commands.items()):
            print(f"  {topic}: {count}", file=out)
    else:
        print("commands replayed: none", file=out)
    for topic, (count, why) in sorted(result.skipped.items()):
        print(f"  {topic}: {count} not replayed ({why})", file=out)
    if result.missing:
        print(f"{result.missing} recorded joint states were not reproduced by the replay "
              f"(other joints or stamps)", file=out)
    print("max |deviation| from the recorded joint states:", file=out)
    for (topic, name), value in sorted(result.deviation.values.items()):
        print(f"  {topic} {name}: {value!r}", file=out)
    print(f"max deviation: {result.deviation.overall!r}", file=out)


# -- states playback -------------------------------------------------------------------------
def _is_state_topic(connection, commands: set) -> bool:
    topic = connection.topic
    if topic in commands:
        return False
    return (topic in STATE_TOPICS or connection.msgtype == JOINT_STATE_TYPE
            or topic.rsplit("/", 1)[-1] == DESCRIPTION_SUFFIX)


def _qos_profile(connection):
    """The rclpy QoSProfile of a bag connection's first offered QoS (depth 10, reliable,
    volatile when the bag records none), its history at least PLAYBACK_DEPTH deep: a volatile
    topic is played in bursts, and a reliable writer drops samples a slow reader has not
    acknowledged once they fall out of its history."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    offered = getattr(connection.ext, "offered_qos_profiles", None) or []
    if not offered:
        return QoSProfile(depth=PLAYBACK_DEPTH)
    qos = offered[0]
    latched = qos.durability.name == "TRANSIENT_LOCAL"
    return QoSProfile(history=HistoryPolicy[qos.history.name],
                      depth=max(1, int(qos.depth)) if latched
                      else max(PLAYBACK_DEPTH, int(qos.depth)),
                      reliability=ReliabilityPolicy[qos.reliability.name],
                      durability=DurabilityPolicy[qos.durability.name])


def play_states(path: Path, rate: float, loop: bool, wait_for: list, wait_timeout: float,
                out=None) -> int:
    """Publish the recorded states (module docstring); returns the number of messages
    published."""
    out = out or sys.stdout
    import rclpy
    from rclpy.duration import Duration
    from rclpy.signals import SignalHandlerOptions

    reader = open_bag(path)
    try:
        recording = recording_of(reader, path)
        commands = set(recording["commands"])
        connections = [c for c in reader.connections if _is_state_topic(c, commands)]
        if not connections:
            raise ReplayError(f"{path}: no recorded states (/clock, /tf, /tf_static, "
                              f"joint_states, robot_description) to play")
        rclpy.init(args=["--ros-args"], signal_handler_options=SignalHandlerOptions.NO)
        try:
            node = rclpy.create_node("sim_replay")
            publishers = {}
            for c in connections:
                if c.topic not in publishers:
                    publishers[c.topic] = node.create_publisher(message_class(c.msgtype),
                                                                c.topic, _qos_profile(c))
            _wait_for_subscribers(node, publishers, wait_for, wait_timeout)
            published, passes = 0, 0
            try:
                while True:
                    published += _play_once(reader, connections, publishers, rate)
                    passes += 1
                    if not loop:
                        break
            except KeyboardInterrupt:
                pass
            # the last samples reach the subscribers before the node goes
            for publisher in publishers.values():
                publisher.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT))
            counts = {}
            for c in connections:
                counts[c.topic] = counts.get(c.topic, 0) + c.msgcount
            print(f"played {path}: {published} messages in {passes} pass(es) at rate "
                  f"{rate:g}", file=out)
            for topic, count in sorted(counts.items()):
                print(f"  {topic}: {count} per pass", file=out)
            node.destroy_node()
        finally:
            rclpy.try_shutdown()
        return published
    finally:
        reader.close()


def _wait_for_subscribers(node, publishers: dict, topics: list, timeout: float):
    """Until each topic of `topics` has a subscriber (so that nothing is published before a
    listener has matched), at most `timeout` [s] of wall time."""
    unknown = [t for t in topics if t not in publishers]
    if unknown:
        raise ReplayError(f"--wait-for {', '.join(unknown)}: not a played topic; played: "
                          f"{', '.join(sorted(publishers))}")
    deadline = time.monotonic() + timeout
    while any(publishers[t].get_subscription_count() == 0 for t in topics):
        if time.monotonic() > deadline:
            missing = [t for t in topics if publishers[t].get_subscription_count() == 0]
            raise ReplayError(f"no subscriber on {', '.join(missing)} within {timeout:g} s")
        time.sleep(0.01)
    # the publisher has matched the subscriber; the subscriber's side of the match (its
    # reliable reader accepting this writer) may complete a moment later, and a sample sent
    # before it is lost to a volatile reader
    time.sleep(MATCH_SETTLE)


def _play_once(reader, connections, publishers: dict, rate: float) -> int:
    published, first, wall0 = 0, None, time.monotonic()
    for connection, stamp, data in reader.messages(connections):
        if first is None:
            first = stamp
        if rate > 0.0:
            ahead = wall0 + (stamp - first) * 1e-9 / rate - time.monotonic()
            if ahead > 0.0:
                time.sleep(ahead)
        publishers[connection.topic].publish(bytes(data))
        published += 1
    return published


# -- command line ----------------------------------------------------------------------------
def _non_negative(text: str) -> float:
    """An argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0.0 <= value < math.inf):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sim_node replay",
        description="Replay a bag recorded by sim_node: its commands into a fresh simulation, "
                    "reporting the deviation from the recorded joint states (default), or its "
                    "states on ROS topics for visualisation (--states).")
    p.add_argument("bag", type=Path, help="the rosbag2 directory")
    p.add_argument("--tolerance", type=_non_negative, default=None,
                   help="exit 1 when the max deviation exceeds this (default: report only)")
    p.add_argument("--states", action="store_true",
                   help="publish the recorded /clock, /tf, /tf_static, joint_states and "
                        "robot_description instead (no physics)")
    p.add_argument("--rate", type=_non_negative, default=1.0,
                   help="--states: playback speed x recorded sim time (0: as fast as "
                        "possible; default 1)")
    p.add_argument("--loop", action="store_true", help="--states: start over at the end")
    p.add_argument("--wait-for", action="append", default=[], metavar="TOPIC",
                   help="--states: before playing, wait for a subscriber on TOPIC "
                        "(repeatable)")
    p.add_argument("--wait-timeout", type=_non_negative, default=30.0,
                   help="--states: longest wait for --wait-for subscribers [s] (default 30)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    path = args.bag.expanduser().resolve()
    try:
        if args.states:
            play_states(path, args.rate, args.loop, args.wait_for, args.wait_timeout)
            return 0
        result = replay_physics(path)
    except ReplayError as error:
        print(f"sim_node replay: {error}", file=sys.stderr)
        return 2
    print_physics(path, result)
    if args.tolerance is not None and result.deviation.overall > args.tolerance:
        print(f"max deviation {result.deviation.overall!r} exceeds the tolerance "
              f"{args.tolerance!r}", file=sys.stderr)
        return 1
    return 0
