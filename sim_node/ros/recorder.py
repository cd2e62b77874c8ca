"""Recording the simulation node into a rosbag2 directory (MCAP storage, the rosbags library).

What is recorded. Every topic the node publishes (/clock, /tf, /tf_static, ``<ns>/joint_states``,
``<ns>/robot_description``, ~/contacts, ~/status and whatever else its plugins publish), every
message its plugins' subscriptions receive (the commands: ``<ns>/joint_commands``,
``position_commands``, ``joint_trajectory``, ``cmd_vel`` ...), and one bag-only message on
``~/recording/initial_state`` (std_msgs/UInt8MultiArray): ``Simulator.getState()`` at the start
of the recording. metadata.yaml's custom_data holds the node's name, its parameters (the world
as an absolute path, physics_dt as used) and the command topics: with the initial state, what
``sim_node replay`` needs to run the recording again (sim_node/ros/replay.py). Each topic is
recorded with the QoS its publisher offers (transient local for /tf_static and
robot_description); bag timestamps are sim time [ns] (the stamps of the node's own messages).

How: taps in the node process, not a subscriber per topic.
- Volatile topics the node publishes: its publishers' ``publish`` is wrapped; the message is
  recorded as it is published, stamped with the sim time of that moment: exactly the per-step
  streams, none lost (a recording subscriber would drop them from its queue at a high real-time
  factor) and no DDS round trip per message. Messages published as bytes (/clock, /tf,
  joint_states: CDR templates, sim_node/ros/cdr.py) are recorded as those bytes; message
  objects are serialized (``serialize_message``, whose buffer carries trailing and padding
  bytes rosbags rejects, is re-encoded canonically through the rosbags typestore).
- Transient-local topics (/tf_static, robot_description): a raw subscription of the node, whose
  durability hands over the latest message whenever the recording starts or the publisher
  appears; stamped with the sim time at arrival, and those that arrive before the recording's
  start with that start (the bag begins with the initial state: nothing precedes it).
- Commands: each plugin subscription (``Lockstep.subscription_factory``) is switched to raw
  delivery and its callback wrapped: the wrapper keeps the wire bytes and hands the deserialized
  message to the plugin as before.
Publishers and subscriptions that appear later (robots spawned at run time) are picked up by a
scan every wall second.

Leaving topics out. ``exclude`` (the node's ``record_exclude`` parameter): regular expressions
(RE2 syntax, matched in time linear in the name whatever the pattern; as rosbag2's
``--exclude-regex``); a topic the node publishes whose full name contains a match of one is not
recorded, e.g. ``/image_raw$`` for the camera images (~2 MB per frame). Command topics and the initial state are always recorded: replay
needs them.

Commands and steps. A command reaches its plugin between two steps, never during one: the
command wrapper and ``SimpleSimulator.simulate`` (wrapped while recording) take one lock. A
plugin applies what it received in the ``process`` of the next ``simulate``, so each command
acts from the step that follows its delivery; it is recorded with that step's start time t [ns]
(taken on the simulation thread as the step begins). Replaying the initial state and handing
each command to the same subscription callback before the step starting at its stamp repeats
the run bit for bit. The recording starts at the end of the first step after the recorder
attaches: commands that plugins held before then are applied in that step, so they are inside
the initial state rather than missing from the bag.

Crash safety. rosbags reads an MCAP file only when it ends in its footer, which is written when
the file is closed; a file still being written is unreadable. So the bag is written in segments
(``<bag>_<k>.mcap``, as rosbag2 splits bags): every ``flush_period`` wall seconds (if messages
arrived) the open segment is closed (chunks, summary, footer) and synced, renamed into the bag
directory, and metadata.yaml is rewritten (a temporary file renamed over it) to list it. At any
instant the bag is therefore a metadata.yaml and the closed segments it lists: a SIGKILL or a
crash loses at most the open segment (the last ``flush_period``); its partial file stays behind
in a hidden ``.<bag>_<k>`` directory that is not part of the bag. Writing (serialization checks,
MCAP, files) happens on a writer thread fed by a queue; the simulation thread only enqueues.
"""
from __future__ import annotations

import collections
import json
import math
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import re2
import yaml
from rclpy.clock import Clock, ClockType
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

BAG_VERSION = 9
INITIAL_STATE_TOPIC = "~/recording/initial_state"
INITIAL_STATE_TYPE = "std_msgs/msg/UInt8MultiArray"
# custom_data keys of metadata.yaml
CUSTOM_NODE = "sim_node.node"                       # fully qualified name of the recorded node
CUSTOM_PARAMETERS = "sim_node.parameters"           # JSON {name: value}
CUSTOM_COMMAND_TOPICS = "sim_node.command_topics"   # JSON [topic]
CUSTOM_INITIAL_STATE = "sim_node.initial_state_topic"
# rclpy's own publishers, not the simulation's
UNRECORDED_TOPICS = frozenset({"/parameter_events", "/rosout"})
WRITE_PERIOD = 0.02         # [s] wall time the writer thread sleeps when it has caught up
SCAN_PERIOD = 1.0           # [s] wall time between scans for new publishers and subscriptions
LATCHED_DEPTH = 10


def exclusions(patterns) -> list:
    """The compiled regular expressions of record_exclude (module docstring); ValueError
    naming a pattern that is not one."""
    if isinstance(patterns, str):
        patterns = [patterns]
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"record_exclude: each entry must be a non-empty regular "
                             f"expression, got {pattern!r}")
        # RE2: matched in time linear in the topic name whatever the pattern (no backtracking)
        options = re2.Options()
        options.log_errors = False
        try:
            compiled.append(re2.compile(pattern, options))
        except re2.error as error:
            reason = error.args[0] if error.args else "rejected"
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise ValueError(f"record_exclude: {pattern!r} is not a regular expression for RE2: "
                             f"{reason} (POSIX extended and Perl classes, no back-references "
                             f"or look-around)") from None
    return compiled


def nanoseconds(t: float) -> int:
    """Sim time t [s] as integer nanoseconds, rounded as the messages' stamps are
    (sim_node.ros.stamps.time_msg: whole seconds, then the rounded fraction)."""
    sec = math.floor(t)
    return sec * 1_000_000_000 + int(round((t - sec) * 1e9))


def message_type_name(msg_type) -> str:
    """'package/msg/Name' of an rclpy message class."""
    package, kind = msg_type.__module__.split(".")[:2]
    return f"{package}/{kind}/{msg_type.__name__}"


def command_subscriptions(node) -> dict:
    """The plugin subscriptions of a SimNode by resolved topic: the commands it receives."""
    return dict(node.lockstep._subscriptions)


# -- types -------------------------------------------------------------------------------
_BASIC_MSG_TYPES = {"boolean": "bool", "octet": "byte", "float": "float32",
                    "double": "float64", "char": "char"}


def _msg_field_type(slot) -> tuple[str, list]:
    """(.msg type of an rosidl_parser slot type, the message classes it refers to)."""
    kind = type(slot).__name__
    if kind == "BasicType":
        return _BASIC_MSG_TYPES.get(slot.typename, slot.typename), []
    if kind == "NamespacedType":
        return "/".join([*slot.namespaces, slot.name]), [slot]
    if kind in ("UnboundedString", "UnboundedWString"):
        return "string" if kind == "UnboundedString" else "wstring", []
    if kind in ("BoundedString", "BoundedWString"):
        return f"{'string' if kind == 'BoundedString' else 'wstring'}<={slot.maximum_size}", []
    element, refers = _msg_field_type(slot.value_type)
    suffix = {"UnboundedSequence": "[]", "Array": f"[{getattr(slot, 'size', 0)}]",
              "BoundedSequence": f"[<={getattr(slot, 'maximum_size', 0)}]"}[kind]
    return element + suffix, refers


class TypeRegistry:
    """Message definitions for the bag: the rosbags typestore of ROS 2 Kilted, extended with
    any other rclpy message type (the package's own, a plugin's) from the class's field list
    (its constants are left out: they are not part of the wire format or the type hash)."""

    def __init__(self):
        self.typestore = get_typestore(Stores.ROS2_KILTED)
        self._definitions: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def name_of(self, msg_type) -> str:
        """The type name of an rclpy message class, registered with its dependencies."""
        name = message_type_name(msg_type)
        with self._lock:
            if name not in self.typestore.fielddefs:
                self._register(msg_type)
        return name

    def _register(self, msg_type):
        pending, types = [msg_type], {}
        while pending:
            cls = pending.pop()
            name = message_type_name(cls)
            if name in self.typestore.fielddefs or name in types:
                continue
            lines = []
            for field_name, slot in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES):
                text, refers = _msg_field_type(slot)
                lines.append(f"{text} {field_name}")
                for ref in refers:
                    module = __import__(".".join(ref.namespaces), fromlist=[ref.name])
                    pending.append(getattr(module, ref.name))
            types.update(get_types_from_msg("\n".join(lines), name))
        self.typestore.register(types)

    def definition(self, name: str) -> tuple[str, str]:
        """(message definition text, RIHS01 type hash) of a registered type."""
        with self._lock:
            if name not in self._definitions:
                msgdef, _ = self.typestore.generate_msgdef(name, ros_version=2)
                self._definitions[name] = (msgdef, self.typestore.hash_rihs01(name))
            return self._definitions[name]

    def canonical(self, data: bytes, name: str) -> bytes:
        """CDR bytes of a serialized message re-encoded exactly (no trailing bytes, zero
        padding). Raises rosbags' SerdeError (a ValueError) for bytes that are no `name`."""
        msgdef = self.typestore.get_msgdef(name)
        if len(data) < 4 or data[:2] != b"\x00\x01":
            raise ValueError(f"not little-endian CDR for {name}")
        message, _ = msgdef.deserialize_cdr_le(memoryview(data)[4:], 0, msgdef.cls,
                                               self.typestore)
        return bytes(self.typestore.serialize_cdr(message, name))

    def encode_state(self, state: bytes) -> bytes:
        """std_msgs/UInt8MultiArray of a simulation state."""
        ts = self.typestore
        layout = ts.types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
        message = ts.types[INITIAL_STATE_TYPE](layout=layout,
                                               data=np.frombuffer(state, dtype=np.uint8))
        return bytes(ts.serialize_cdr(message, INITIAL_STATE_TYPE))


def _qos_time(duration) -> QosTime:
    ns = duration.nanoseconds
    if ns >= 2 ** 63 - 1:       # infinite, as rosbag2 writes it
        return QosTime(2 ** 31 - 1, 2 ** 32 - 1)
    return QosTime(ns // 1_000_000_000, ns % 1_000_000_000)


def qos_of(profile: QoSProfile) -> Qos:
    """The rosbags Qos of an rclpy QoSProfile."""
    return Qos(history=QosHistory[profile.history.name],
               depth=int(profile.depth),
               reliability=QosReliability[profile.reliability.name],
               durability=QosDurability[profile.durability.name],
               deadline=_qos_time(profile.deadline),
               lifespan=_qos_time(profile.lifespan),
               liveliness=QosLiveliness[profile.liveliness.name],
               liveliness_lease_duration=_qos_time(profile.liveliness_lease_duration),
               avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions))


@dataclass(eq=False)
class _Topic:
    """A recorded topic: name, type name, the offered QoS profiles (None: ask the ROS graph
    when its first message is written; fallback: the subscription's), and whether its
    messages are received commands."""
    name: str
    type_name: str
    qos: list | None
    fallback_qos: list = field(default_factory=list)
    command: bool = False


# -- the bag directory -------------------------------------------------------------------
class _Bag:
    """A rosbag2 directory written as closed MCAP segments listed by metadata.yaml (module
    docstring). Used by the writer thread only."""

    def __init__(self, directory: Path, registry: TypeRegistry, custom_data, graph_qos,
                 created: bool = False):
        self.directory = directory
        self._registry = registry
        self._custom_data = custom_data         # () -> {str: str}, read at every metadata write
        self._graph_qos = graph_qos             # (_Topic) -> [Qos]
        self._files: list[dict] = []            # closed segments, as metadata lists them
        self._counts: dict[_Topic, int] = {}    # over closed segments, in order of appearance
        self._writer: Writer | None = None
        self._segment_dir: Path | None = None
        self._connections: dict[_Topic, object] = {}
        self._segment_counts: dict[_Topic, int] = {}
        self._segment_messages = 0
        self._start = self._end = 0
        if not created:
            directory.mkdir(parents=True)
        self._write_metadata()

    def write(self, topic: _Topic, stamp: int, data: bytes):
        if self._writer is None:
            self._open_segment()
        connection = self._connections.get(topic)
        if connection is None:
            if topic.qos is None:
                topic.qos = self._graph_qos(topic) or topic.fallback_qos
            msgdef, rihs01 = self._registry.definition(topic.type_name)
            connection = self._writer.add_connection(
                topic.name, topic.type_name, msgdef=msgdef, rihs01=rihs01,
                offered_qos_profiles=topic.qos)
            self._connections[topic] = connection
            self._segment_counts[topic] = 0
        self._writer.write(connection, stamp, data)
        self._segment_counts[topic] += 1
        self._segment_messages += 1
        if self._segment_messages == 1:
            self._start = self._end = stamp
        self._start, self._end = min(self._start, stamp), max(self._end, stamp)

    def _open_segment(self):
        k = len(self._files)
        self._segment_dir = self.directory / f".{self.directory.name}_{k}"
        self._writer = Writer(self._segment_dir, version=BAG_VERSION,
                              storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections, self._segment_counts, self._segment_messages = {}, {}, 0

    def flush(self):
        """Close the open segment (if any), move it into the bag, list it in metadata.yaml."""
        if self._writer is None:
            return
        self._writer.close()
        self._writer = None
        name = f"{self.directory.name}_{len(self._files)}.mcap"
        closed = self._segment_dir / f"{self._segment_dir.name}.mcap"
        _fsync(closed)
        os.replace(closed, self.directory / name)
        (self._segment_dir / "metadata.yaml").unlink()
        self._segment_dir.rmdir()
        self._files.append({"path": name,
                            "starting_time": {"nanoseconds_since_epoch": self._start},
                            "duration": {"nanoseconds": self._end - self._start},
                            "message_count": self._segment_messages})
        for topic, n in self._segment_counts.items():
            self._counts[topic] = self._counts.get(topic, 0) + n
        self._write_metadata()

    def _write_metadata(self):
        files = self._files
        start = min((f["starting_time"]["nanoseconds_since_epoch"] for f in files), default=0)
        end = max((f["starting_time"]["nanoseconds_since_epoch"] + f["duration"]["nanoseconds"]
                   for f in files), default=0)
        info = {
            "version": BAG_VERSION,
            "storage_identifier": "mcap",
            "relative_file_paths": [f["path"] for f in files],
            "duration": {"nanoseconds": end - start},
            "starting_time": {"nanoseconds_since_epoch": start},
            "message_count": sum(f["message_count"] for f in files),
            "topics_with_message_count": [
                {"topic_metadata": {"name": topic.name, "type": topic.type_name,
                                    "serialization_format": "cdr",
                                    "offered_qos_profiles": dump_qos_v9(topic.qos),
                                    "type_description_hash":
                                        self._registry.definition(topic.type_name)[1]},
                 "message_count": count}
                for topic, count in self._counts.items()],
            "compression_format": "",
            "compression_mode": "",
            "files": files,
            "custom_data": self._custom_data(),
            "ros_distro": "kilted",
        }
        text = yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False)
        path = self.directory / "metadata.yaml"
        temporary = path.with_suffix(".yaml.tmp")
        with open(temporary, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        _fsync(self.directory)

    def abandon(self):
        """Stop without closing the open segment (after an error)."""
        if self._writer is not None:
            self._writer.abort()
            self._writer = None


def _fsync(path: Path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- taps --------------------------------------------------------------------------------
class _PublishTap:
    """Stands in for a publisher's ``publish``: publishes, then hands the message to the
    recorder (while one is attached)."""

    def __init__(self, publish, topic: _Topic, recorder):
        self.publish = publish
        self.topic = topic
        self.recorder = recorder

    def __call__(self, message):
        self.publish(message)
        recorder = self.recorder
        if recorder is not None:
            recorder._on_published(self.topic, message)


class _CommandTap:
    """Stands in for a plugin subscription's callback once the subscription is raw: hands the
    deserialized message to the callback between two steps and keeps the wire bytes for the
    recorder (while one is attached). Stays installed after the recording, inert."""

    def __init__(self, callback, msg_type, logger):
        self.callback = callback
        self.msg_type = msg_type
        self.logger = logger
        self.topic: _Topic | None = None
        self.recorder = None

    def __call__(self, data):
        if isinstance(data, bytes):
            try:
                message = deserialize_message(data, self.msg_type)
            except Exception as error:      # a malformed sample must not reach the executor
                self.logger.error(f"{self.topic.name if self.topic else 'command'}: cannot "
                                  f"deserialize a {self.msg_type.__name__}: {error}")
                return
        else:       # taken just before the subscription turned raw
            message, data = data, None
        recorder = self.recorder
        if recorder is None:
            self.callback(message)
            return
        with recorder._step_lock:
            self.callback(message)
            recorder._pending.append((self.topic, data if data is not None
                                      else serialize_message(message), data is None))


# -- the recorder ------------------------------------------------------------------------
class Recorder:
    """Records a SimNode into the rosbag2 directory `directory` (created; it must not exist,
    unless `created`: the caller made it, empty) until close(); see the module docstring.
    flush_period [s] of wall time: how often the open MCAP segment is closed and listed, i.e.
    at most how much a crash loses."""

    def __init__(self, node, directory, flush_period: float = 1.0, *, created: bool = False,
                 exclude=()):
        if not (isinstance(flush_period, (int, float)) and 0.0 < flush_period < math.inf):
            raise ValueError(f"flush_period must be a positive time [s], got {flush_period!r}")
        self._exclude = exclusions(exclude)
        self.directory = Path(directory).expanduser().resolve()
        if not created and self.directory.exists():
            raise FileExistsError(f"cannot record into {self.directory}: it exists already "
                                  f"(a bag directory is created, never overwritten)")
        self.flush_period = float(flush_period)
        self._node = node
        self._logger = node.get_logger()
        self._registry = TypeRegistry()
        # to the writer thread; it polls (WRITE_PERIOD): a blocking queue would wake it for
        # every message and hand the GIL back and forth with the simulation thread each time
        self._queue: collections.deque = collections.deque()
        self._step_lock = threading.Lock()      # held while a step runs (module docstring)
        self._pending: list = []                # commands delivered since the last step
        self._t0: int | None = None             # [ns] start of the recording
        self._taps_lock = threading.Lock()
        self._publish_taps: dict[int, tuple] = {}       # id(publisher) -> (publisher, tap)
        self._command_taps: dict[int, tuple] = {}       # id(subscription) -> (it, tap)
        self._latched: dict[str, object] = {}           # topic -> raw subscription
        self._latched_early: list = []          # (topic, data) received before t0
        self._topics: dict[str, _Topic] = {}
        self._closed = False        # no more messages taken
        self._detached = False      # the node untapped
        self._parameters = self._parameter_snapshot()
        self._bag = _Bag(self.directory, self._registry, self._custom_data, self._graph_qos,
                         created)
        self._writer_thread = threading.Thread(target=self._write_loop, name="recorder",
                                               daemon=True)
        self._writer_thread.start()
        self._scan_timer = None
        try:
            node.run_in_sim(self._attach)
            self._scan_timer = node.create_timer(
                SCAN_PERIOD, self._scan, clock=Clock(clock_type=ClockType.STEADY_TIME))
        except BaseException:
            self.close()
            raise
        self._logger.info(f"recording into {self.directory}")

    # -- what the bag says about the node ------------------------------------------------
    def _parameter_snapshot(self) -> dict:
        node = self._node
        names = node.list_parameters([], 0).names
        values = {name: node.get_parameter(name).value for name in names}
        if values.get("world"):
            values["world"] = str(Path(values["world"]).expanduser().resolve())
        values["physics_dt"] = float(node.physics_dt)
        values["record"] = ""
        return {name: list(v) if isinstance(v, (list, tuple)) else v
                for name, v in values.items()}

    def _custom_data(self) -> dict:
        with self._taps_lock:
            commands = sorted(name for name, t in self._topics.items() if t.command)
        return {CUSTOM_NODE: self._node.get_fully_qualified_name(),
                CUSTOM_PARAMETERS: json.dumps(self._parameters),
                CUSTOM_COMMAND_TOPICS: json.dumps(commands),
                CUSTOM_INITIAL_STATE: self._node.resolve_topic_name(INITIAL_STATE_TOPIC)}

    def _graph_qos(self, topic: _Topic) -> list:
        """The QoS offered by the publishers of a command topic (the recorded node's own
        excluded), from the ROS graph."""
        me = (self._node.get_name(), self._node.get_namespace())
        return [qos_of(info.qos_profile)
                for info in self._node.get_publishers_info_by_topic(topic.name)
                if (info.node_name, info.node_namespace) != me]

    # -- attaching -------------------------------------------------------------------------
    def _attach(self):
        # on the simulation thread, between two steps
        sim = self._node.sim
        self._simulate_step = sim.simulate
        sim.simulate = self._simulate
        self._scan()

    def _scan(self):
        """Tap publishers and plugin subscriptions not tapped yet."""
        node = self._node
        with self._taps_lock:
            if self._detached:
                return
            for publisher in list(node.publishers):
                name = publisher.topic_name
                if id(publisher) in self._publish_taps or name in UNRECORDED_TOPICS:
                    continue
                if any(pattern.search(name) for pattern in self._exclude):
                    self._publish_taps[id(publisher)] = (publisher, None)
                    continue
                if publisher.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL:
                    self._subscribe_latched(publisher)
                    self._publish_taps[id(publisher)] = (publisher, None)
                    continue
                topic = self._topic(name, publisher.msg_type, [qos_of(publisher.qos_profile)])
                tap = _PublishTap(publisher.publish, topic, self)
                publisher.publish = tap
                self._publish_taps[id(publisher)] = (publisher, tap)
            for name, subscription in command_subscriptions(node).items():
                if id(subscription) in self._command_taps:
                    continue
                tap = subscription.callback
                if not isinstance(tap, _CommandTap):
                    tap = _CommandTap(tap, subscription.msg_type, self._logger)
                    subscription.callback = tap
                    subscription.raw = True
                tap.topic = self._topic(name, subscription.msg_type, None,
                                        [qos_of(subscription.qos_profile)], command=True)
                tap.recorder = self
                self._command_taps[id(subscription)] = (subscription, tap)

    def _topic(self, name, msg_type, qos, fallback=(), command=False) -> _Topic:
        if name not in self._topics:
            self._topics[name] = _Topic(name, self._registry.name_of(msg_type), qos,
                                        list(fallback), command)
        return self._topics[name]

    def _subscribe_latched(self, publisher):
        name = publisher.topic_name
        if name in self._latched:
            return
        topic = self._topic(name, publisher.msg_type, [qos_of(publisher.qos_profile)])
        sim = self._node.sim

        def received(data: bytes):
            with self._step_lock:       # not during a step, nor while _begin sets t0
                if self._closed:
                    return
                if self._t0 is None:    # published before the recording: kept for t0
                    self._latched_early.append((topic, data))
                    return
                self._queue.append((topic, max(self._t0, nanoseconds(sim.getTime())), data,
                                 False))

        qos = QoSProfile(depth=LATCHED_DEPTH, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
        self._latched[name] = self._node.create_subscription(publisher.msg_type, name,
                                                             received, qos, raw=True)

    # -- on the simulation thread ----------------------------------------------------------
    def _simulate(self, dt):
        sim = self._node.sim
        with self._step_lock:
            pending, self._pending = self._pending, []
            if self._t0 is not None and pending and not self._closed:
                t = nanoseconds(sim.getTime())
                for topic, data, canonical in pending:
                    self._queue.append((topic, t, data, canonical))
            self._simulate_step(dt)
            if self._t0 is None:
                self._begin(sim)

    def _begin(self, sim):
        t0 = nanoseconds(sim.getTime())
        node = self._node
        topic = _Topic(node.resolve_topic_name(INITIAL_STATE_TOPIC), INITIAL_STATE_TYPE,
                       [qos_of(QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                          reliability=ReliabilityPolicy.RELIABLE))])
        self._queue.append((topic, t0, self._registry.encode_state(sim.getState()), False))
        for latched, data in self._latched_early:
            self._queue.append((latched, t0, data, False))
        self._latched_early = []
        self._t0 = t0

    def _on_published(self, topic: _Topic, message):
        if self._t0 is None or self._closed:
            return
        t = nanoseconds(self._node.sim.getTime())
        if isinstance(message, bytes):
            self._queue.append((topic, t, message, False))
        else:
            self._queue.append((topic, t, serialize_message(message), True))

    # -- the writer thread -------------------------------------------------------------------
    def _write_loop(self):
        bag, registry = self._bag, self._registry
        next_flush = time.monotonic() + self.flush_period
        try:
            while True:
                try:
                    item = self._queue.popleft()
                except IndexError:
                    item = None
                    time.sleep(max(0.0, min(WRITE_PERIOD, next_flush - time.monotonic())))
                if item is _STOP:
                    break
                if item is not None:
                    topic, stamp, data, canonical = item
                    try:
                        if canonical:
                            data = registry.canonical(data, topic.type_name)
                    except ValueError as error:
                        self._logger.error(f"recorder: a message on {topic.name} is no "
                                           f"{topic.type_name}, not recorded: {error}")
                        continue
                    bag.write(topic, stamp, data)
                if time.monotonic() >= next_flush:
                    bag.flush()
                    next_flush = time.monotonic() + self.flush_period
            bag.flush()
        except Exception as error:          # disk full, ...: stop recording, keep the node
            self._closed = True
            bag.abandon()
            self._logger.error(f"recording into {self.directory} failed and stopped: "
                               f"{type(error).__name__}: {error}")

    # -- stopping ------------------------------------------------------------------------------
    def close(self):
        """Stop recording: untap the node, write what is queued, close the last segment."""
        with self._taps_lock:
            if self._detached:
                return
            self._closed = self._detached = True
            node = self._node
            for publisher, tap in self._publish_taps.values():
                if tap is not None and vars(publisher).get("publish") is tap:
                    tap.recorder = None
                    publisher.publish = tap.publish     # what it was before the tap
            for _, tap in self._command_taps.values():
                tap.recorder = None
            if vars(node.sim).get("simulate") == self._simulate:
                del node.sim.simulate
            for subscription in self._latched.values():
                node.destroy_subscription(subscription)
            if self._scan_timer is not None:
                node.destroy_timer(self._scan_timer)
        self._queue.append(_STOP)
        self._writer_thread.join()
        self._logger.info(f"recording closed: {self.directory}")


_STOP = object()


def register_recording_services(node):
    """``~/record`` (sim_node/srv/Record): start a recording into a new bag directory or stop
    the current one (``node.recorder``). The directory is a client's path: created inside the
    node's data directory (``node.data_dir``, sim_node/ros/client_files.py), relative to it."""
    from sim_node.srv import Record

    lock = threading.Lock()

    def record(request, response):
        with lock:
            recorder = node.recorder
            if request.start:
                if recorder is not None:
                    response.success = False
                    response.message = (f"already recording into {recorder.directory}; stop "
                                        f"that recording first")
                    response.directory = str(recorder.directory)
                    return response
                directory = request.directory or time.strftime("rosbag2_%Y_%m_%d-%H_%M_%S")
                created = None
                try:
                    created = node.data_dir.new_directory(directory, "directory")
                    node.recorder = Recorder(node, created, created=True,
                                             exclude=node.record_exclude)
                except (OSError, ValueError) as error:
                    if created is not None:     # nothing left behind
                        shutil.rmtree(created, ignore_errors=True)
                    response.success = False
                    response.message = f"cannot start recording: {error}"
                    response.directory = ""
                    return response
                response.success, response.message = True, ""
                response.directory = str(node.recorder.directory)
                return response
            if recorder is None:
                response.success = False
                response.message = "not recording (start a recording with start: true)"
                response.directory = ""
                return response
            node.recorder = None
            recorder.close()
            response.success, response.message = True, ""
            response.directory = str(recorder.directory)
            return response

    node.create_service(Record, "~/record", record, callback_group=node.services_group)
