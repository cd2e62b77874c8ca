"""Recording the node into a rosbag2 directory (sim_node/ros/recorder.py), end to end.

Node processes on the pendulum world over real DDS; the bags are read back with the rosbags
library (AnyReader) and metadata.yaml itself, the independent references. Checked:
  the `record` parameter, SIGINT  MCAP storage (files with the MCAP magic), every topic the
      node publishes with its type, the offered QoS (transient local for /tf_static and
      robot_description, volatile otherwise), bag timestamps = the messages' sim-time stamps,
      one /clock and one joint_states per step with no step missing, the initial state at the
      first step, the commands a client sent with their values on the step grid
  the ~/record service  starts and stops a bag; refuses a second start, a stop when not
      recording and an existing directory, with a message
  SIGKILL mid-run  the bag opens, and is a prefix of the run: steps contiguous from its start,
      its joint states the ones a client received for the same stamps
"""
from __future__ import annotations

import time

import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from node_harness import DEEP, REPO, ns, start_node
from sim_node.srv import Record

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
DT_NS = 1_000_000                   # pendulum.yaml's physics_dt, 1 ms
MCAP_MAGIC = b"\x89MCAP0\r\n"
JOINT_STATES = "/pendulum/joint_states"
POSITIONS = "/pendulum/position_commands"
TRAJECTORY = "/pendulum/joint_trajectory"
INITIAL_STATE = "/sim/recording/initial_state"
PUBLISHED_TYPES = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    JOINT_STATES: "sensor_msgs/msg/JointState",
    "/pendulum/robot_description": "std_msgs/msg/String",
    "/sim/contacts": "sim_node/msg/Contacts",
    "/sim/status": "sim_node/msg/SimStatus",
    INITIAL_STATE: "std_msgs/msg/UInt8MultiArray",
}
COMMAND_TYPES = {POSITIONS: "std_msgs/msg/Float64MultiArray",
                 TRAJECTORY: "trajectory_msgs/msg/JointTrajectory"}
LATCHED_TOPICS = {"/tf_static", "/pendulum/robot_description", INITIAL_STATE}
SENT_POSITIONS = [[0.5], [-0.25]]


def _wait_clock(client, t_ns: int, timeout: float = 60.0):
    client.wait_for("/clock", timeout=timeout, predicate=lambda m: ns(m.clock) >= t_ns)


def _wait_matched(publisher, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, f"no subscriber on {publisher.topic_name}"
        time.sleep(0.01)


def _read(bag) -> dict:
    """topic -> [(bag stamp [ns], message)], read with rosbags."""
    out = {}
    with AnyReader([bag]) as reader:
        for connection, stamp, raw in reader.messages():
            out.setdefault(connection.topic, []).append(
                (stamp, reader.deserialize(raw, connection.msgtype)))
    return out


def _metadata(bag) -> dict:
    return yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]


def _assert_contiguous_steps(messages: dict, cut: bool = False):
    """One /clock and one joint_states per step from the initial state on, none missing.
    cut: the recording was stopped or killed mid-step, where the last step's /clock (published
    before the step) may be in the bag without its joint_states (published during it)."""
    [(t0, _)] = messages[INITIAL_STATE]
    clocks = [stamp for stamp, _ in messages["/clock"]]
    assert clocks == [t0 + k * DT_NS for k in range(len(clocks))]
    states = [stamp for stamp, _ in messages[JOINT_STATES]]
    assert states == clocks or (cut and states == clocks[:-1])


# -- a recording from the `record` parameter, stopped with SIGINT -----------------------------
@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """(bag, the trajectory sent) of a node recording from the start, commanded, SIGINT."""
    bag = tmp_path_factory.mktemp("recorder") / "bag"
    node, client = start_node(tmp_path_factory, "recorder_node",
                              {"world": str(PENDULUM_WORLD), "real_time_factor": 1.0,
                               "record": str(bag)})
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        _wait_clock(client, 20_000_000)
        positions = client.publisher(Float64MultiArray, POSITIONS)
        trajectories = client.publisher(JointTrajectory, TRAJECTORY)
        _wait_matched(positions)
        _wait_matched(trajectories)
        client.subscribe(JointState, JOINT_STATES, DEEP, keep=10)
        # each command acts before the next is sent (topics do not keep an order between
        # them): the pendulum (at rest at 0) swings past 0.05 rad toward the target of the
        # first one, back below 0 toward the second's, then above 0.1 with the trajectory
        positions.publish(Float64MultiArray(data=SENT_POSITIONS[0]))
        client.wait_for(JOINT_STATES, predicate=lambda m: m.position[0] > 0.05, timeout=60.0)
        positions.publish(Float64MultiArray(data=SENT_POSITIONS[1]))
        [state] = client.wait_for(JOINT_STATES, predicate=lambda m: m.position[0] < 0.0,
                                  timeout=60.0)[-1:]
        trajectory = JointTrajectory(joint_names=["joint1"], points=[
            JointTrajectoryPoint(positions=[0.3], velocities=[0.0])])
        trajectory.points[0].time_from_start.nanosec = 200_000_000
        trajectories.publish(trajectory)
        client.wait_for(JOINT_STATES, timeout=60.0, predicate=lambda m: m.position[0] > 0.1
                        and ns(m.header.stamp) > ns(state.header.stamp))
    finally:
        client.close()
        code = node.stop(timeout=30.0)
    assert code == 0, node.log()
    return bag, trajectory


def test_bag_is_mcap_with_every_topic_and_its_type(recording):
    bag, _ = recording
    metadata = _metadata(bag)
    assert metadata["storage_identifier"] == "mcap"
    files = metadata["relative_file_paths"]
    assert files and all(name.endswith(".mcap") for name in files)
    for name in files:
        data = (bag / name).read_bytes()
        assert data[:8] == MCAP_MAGIC and data[-8:] == MCAP_MAGIC, name
    types = {t["topic_metadata"]["name"]: t["topic_metadata"]["type"]
             for t in metadata["topics_with_message_count"]}
    assert types == {**PUBLISHED_TYPES, **COMMAND_TYPES}
    with AnyReader([bag]) as reader:
        assert {c.topic: c.msgtype for c in reader.connections} == types
        counts = {t["topic_metadata"]["name"]: t["message_count"]
                  for t in metadata["topics_with_message_count"]}
        read = {}
        for connection, _, _ in reader.messages():
            read[connection.topic] = read.get(connection.topic, 0) + 1
    assert read == counts
    assert sum(counts.values()) == metadata["message_count"]


def test_offered_qos_is_transient_local_only_for_latched_topics(recording):
    bag, _ = recording
    for entry in _metadata(bag)["topics_with_message_count"]:
        topic = entry["topic_metadata"]["name"]
        [qos] = entry["topic_metadata"]["offered_qos_profiles"]
        expected = "transient_local" if topic in LATCHED_TOPICS else "volatile"
        assert qos["durability"] == expected, topic
        assert qos["reliability"] == "reliable", topic


def test_bag_stamps_are_the_messages_sim_time_stamps(recording):
    bag, _ = recording
    messages = _read(bag)
    for stamp, clock in messages["/clock"]:
        assert stamp == ns(clock.clock)
    for topic in (JOINT_STATES, "/sim/contacts", "/sim/status"):
        assert messages[topic]
        for stamp, message in messages[topic]:
            assert stamp == ns(message.header.stamp), topic
    for stamp, tf in messages["/tf"]:
        assert tf.transforms
        assert {ns(t.header.stamp) for t in tf.transforms} == {stamp}
    for stamp, status in messages["/sim/status"]:
        assert ns(status.sim_time) == stamp


def test_one_clock_and_joint_state_per_step_from_the_initial_state(recording):
    bag, _ = recording
    messages = _read(bag)
    _assert_contiguous_steps(messages)
    [(t0, state)] = messages[INITIAL_STATE]
    assert t0 == DT_NS          # recording from the start: after the node's first step
    assert len(state.data) > 0
    assert _metadata(bag)["starting_time"]["nanoseconds_since_epoch"] == t0
    # the latched topics, published at sim time 0 before the recording started, are stamped
    # with the sim time they reached the recorder's subscription: a step start from t0 on
    steps = {stamp for stamp, _ in messages["/clock"]}
    [(stamp, tf_static)] = messages["/tf_static"]
    assert stamp in steps and {ns(t.header.stamp) for t in tf_static.transforms} == {0}
    [(stamp, _)] = messages["/pendulum/robot_description"]
    assert stamp in steps
    assert len(messages["/clock"]) > 300     # the run lasted at least the 0.3 s waited for
    # robot_description is the URDF file the world names
    [(_, description)] = messages["/pendulum/robot_description"]
    urdf = yaml.safe_load(PENDULUM_WORLD.read_text())["robots"][0]["urdf"]
    assert description.data == (PENDULUM_WORLD.parent / urdf).read_text()


def test_commands_are_recorded_with_their_values_at_step_starts(recording):
    bag, trajectory = recording
    messages = _read(bag)
    steps = {stamp for stamp, _ in messages["/clock"]}
    positions = messages[POSITIONS]
    assert [list(m.data) for _, m in positions] == SENT_POSITIONS
    [(stamp, sent)] = messages[TRAJECTORY]
    assert list(sent.joint_names) == ["joint1"]
    assert [list(p.positions) for p in sent.points] == [[0.3]]
    assert sent.points[0].time_from_start.nanosec == 200_000_000
    stamps = [s for s, _ in positions] + [stamp]
    assert stamps == sorted(stamps) and all(s in steps for s in stamps)
    # the position command acted from its step on: the pendulum (hanging at 0) swung toward
    # +0.5 rad right after the first command
    first = positions[0][0]
    after = [m.position[0] for s, m in messages[JOINT_STATES] if first < s < positions[1][0]]
    assert after and max(after) > 0.05


# -- the ~/record service, and SIGKILL ----------------------------------------------------------
def _record(client, start: bool, directory: str = ""):
    return client.call(Record, "/sim/record", Record.Request(start=start, directory=directory))


def _node_time(client) -> int:
    """The node's sim time [ns] now (a get_entity_state answer's stamp): unlike the last /clock
    received here, never behind what the node did before the call."""
    from simulation_interfaces.srv import GetEntityState

    response = client.call(GetEntityState, "/sim/get_entity_state",
                           GetEntityState.Request(entity="pendulum"))
    return ns(response.state.header.stamp)


@pytest.fixture(scope="module")
def service_node(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("record_data")
    node, client = start_node(tmp_path_factory, "record_service_node",
                              {"world": str(PENDULUM_WORLD), "real_time_factor": 1.0,
                               "data_dir": str(data_dir)})
    client.data_dir = data_dir      # ~/record creates bags in it (client_files.py)
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        client.subscribe(JointState, JOINT_STATES, DEEP)
        _wait_clock(client, 10_000_000)
        yield node, client
    finally:
        client.close()
        node.stop()


def test_record_exclude_leaves_published_topics_out_but_never_commands(tmp_path_factory):
    bag = tmp_path_factory.mktemp("exclude") / "bag"
    # a volatile topic, a latched one, and a pattern matching the command topic too
    exclude = ["^/tf$", "robot_description", "contacts", "position_commands"]
    node, client = start_node(tmp_path_factory, "exclude_node",
                              {"world": str(PENDULUM_WORLD), "real_time_factor": 1.0,
                               "record": str(bag), "record_exclude": exclude})
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        _wait_clock(client, 20_000_000)
        positions = client.publisher(Float64MultiArray, POSITIONS)
        _wait_matched(positions)
        client.subscribe(JointState, JOINT_STATES, DEEP, keep=10)
        positions.publish(Float64MultiArray(data=SENT_POSITIONS[0]))
        client.wait_for(JOINT_STATES, predicate=lambda m: m.position[0] > 0.05, timeout=60.0)
    finally:
        client.close()
        code = node.stop(timeout=30.0)
    assert code == 0, node.log()
    messages = _read(bag)
    assert not {"/tf", "/pendulum/robot_description", "/sim/contacts"} & set(messages)
    for topic in ("/clock", "/tf_static", JOINT_STATES, "/sim/status", INITIAL_STATE):
        assert topic in messages, topic
    assert [list(m.data) for _, m in messages[POSITIONS]] == SENT_POSITIONS[:1]
    _assert_contiguous_steps(messages, cut=True)


def test_a_record_exclude_that_is_no_regular_expression_stops_the_start(tmp_path_factory):
    node, client = start_node(tmp_path_factory, "bad_exclude_node",
                              {"world": str(PENDULUM_WORLD), "record_exclude": ["/camera/(["]})
    client.close()
    try:
        node.process.wait(60)
    finally:
        node.stop()
    assert node.process.returncode not in (0, None)
    assert "record_exclude: '/camera/([' is not a regular expression" in node.log()
    assert "Traceback" not in node.log()


def test_record_service_starts_and_stops_bags_and_refuses_bad_requests(service_node):
    _, client = service_node
    bag = client.data_dir / "service_bag"
    refused = _record(client, False)
    assert not refused.success and "not recording" in refused.message
    started = _record(client, True, "service_bag")
    assert started.success and started.directory == str(bag)
    again = _record(client, True, "second")
    assert not again.success and "already recording" in again.message
    assert not (client.data_dir / "second").exists()
    _wait_clock(client, _node_time(client) + 200_000_000)     # recording since before then
    stopped = _record(client, False)
    assert stopped.success and stopped.directory == str(bag)
    refused = _record(client, False)
    assert not refused.success and "not recording" in refused.message
    existing = _record(client, True, "service_bag")
    assert not existing.success and "exists" in existing.message
    messages = _read(bag)
    _assert_contiguous_steps(messages, cut=True)
    assert len(messages["/clock"]) >= 200
    [(t0, _)] = messages[INITIAL_STATE]
    assert t0 > DT_NS           # started mid-run


def test_sigkill_leaves_a_readable_prefix_of_the_run(service_node):
    node, client = service_node
    bag = client.data_dir / "killed_bag"
    assert _record(client, True, str(bag)).success       # absolute, inside the data dir
    start = _node_time(client)                  # recording since before then
    # flush_period 1 s of wall time; sim time runs no faster than wall time here (factor 1)
    _wait_clock(client, start + 2_500_000_000)
    node.kill()
    metadata = _metadata(bag)
    assert metadata["relative_file_paths"], "no segment closed before the kill"
    messages = _read(bag)
    _assert_contiguous_steps(messages, cut=True)
    received = {ns(m.header.stamp): m for m in client.messages(JOINT_STATES)}
    recorded = messages[JOINT_STATES]
    common = [(stamp, m) for stamp, m in recorded if stamp in received]
    assert len(common) >= len(recorded) // 2
    for stamp, m in common:
        assert np.array_equal(m.position, received[stamp].position), stamp
        assert np.array_equal(m.velocity, received[stamp].velocity), stamp
