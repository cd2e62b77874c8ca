"""`sim_node replay` (sim_node/ros/replay.py) on a bag the node recorded over real DDS.

One node process on the pendulum world records a run in which a client commands the pendulum
(position_commands, then a joint_trajectory) while it swings; the bag is read back here with
rosbags (the reference for what was recorded). Checked:
  physics replay   the same world: every recorded joint state reproduced, max deviation exactly
                   0.0, every recorded command replayed; a world with another link mass: the
                   deviation is > 0 and --tolerance makes it exit 1
  --states         a client receives the recorded /clock and joint_states: the same stamps and
                   values, in order
  bad bags         a bag not recorded by sim_node, and no bag at all: exit 2 naming the problem
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import time

import pytest
import yaml
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from node_harness import DEEP, REPO, Client, next_domain, ns, ros_env, start_node
from sim_node.ros.replay import main as replay_main
from sim_node.ros.replay import replay_physics

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
POSITION_TARGETS = [0.4, -0.3]          # [rad] position_commands sent one after the other
TRAJECTORY = [(0.2, 0.5), (0.5, -0.2)]  # (time_from_start [s], joint1 [rad])
JOINT_STATES = "/pendulum/joint_states"
COMMAND_TOPICS = ("/pendulum/position_commands", "/pendulum/joint_trajectory")


def _wait_clock(client: Client, t_ns: int, timeout: float = 60.0):
    """Until the node's /clock passed t_ns."""
    client.wait_for("/clock", timeout=timeout, predicate=lambda m: ns(m.clock) >= t_ns)


def _wait_matched(publisher, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, f"no subscriber on {publisher.topic_name}"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A bag of the pendulum commanded by position and by a trajectory: its path."""
    bag = tmp_path_factory.mktemp("replay") / "bag"
    node, client = start_node(tmp_path_factory, "replay_node",
                              {"world": str(PENDULUM_WORLD), "real_time_factor": 1.0,
                               "record": str(bag)})
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        _wait_clock(client, 50_000_000)
        positions = client.publisher(Float64MultiArray, COMMAND_TOPICS[0])
        trajectories = client.publisher(JointTrajectory, COMMAND_TOPICS[1])
        _wait_matched(positions)
        _wait_matched(trajectories)
        client.subscribe(JointState, JOINT_STATES, DEEP, keep=10)
        # each command acts until the pendulum swung past 0.2 rad toward it (0.4, then -0.3
        # rad): a sim-time condition, however fast this machine runs the node
        for target in POSITION_TARGETS:
            positions.publish(Float64MultiArray(data=[target]))
            client.wait_for(JOINT_STATES, timeout=60.0, predicate=lambda m, target=target:
                            math.copysign(m.position[0], target) == m.position[0]
                            and abs(m.position[0]) > 0.2)
        points = [JointTrajectoryPoint(positions=[q], time_from_start=_duration(t))
                  for t, q in TRAJECTORY]
        trajectories.publish(JointTrajectory(joint_names=["joint1"], points=points))
        now = ns(client.messages("/clock")[-1].clock)
        _wait_clock(client, now + 700_000_000)      # the trajectory runs to its end
    finally:
        client.close()
        code = node.stop(timeout=30.0)
    assert code == 0, node.log()
    return bag


def _duration(seconds: float):
    from builtin_interfaces.msg import Duration

    return Duration(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))


def _bag_messages(bag, topic: str) -> list:
    """(bag stamp [ns], message) of `topic`, read with rosbags."""
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        return [(stamp, reader.deserialize(raw, c.msgtype))
                for c, stamp, raw in reader.messages(connections)]


# -- physics replay ------------------------------------------------------------------------------
def test_replay_of_the_same_world_is_exact(recorded, capsys):
    joint_states = _bag_messages(recorded, JOINT_STATES)
    commands = {topic: _bag_messages(recorded, topic) for topic in COMMAND_TOPICS}
    # the run did what was sent: both commands are in the bag, and they moved the pendulum
    assert [list(m.data) for _, m in commands[COMMAND_TOPICS[0]]] == [[q] for q in
                                                                     POSITION_TARGETS]
    assert len(commands[COMMAND_TOPICS[1]]) == 1
    positions = [m.position[0] for _, m in joint_states]
    assert max(positions) > 0.2 and min(positions) < -0.1

    result = replay_physics(recorded)
    assert result.compared == len(joint_states)
    assert result.missing == 0
    assert result.steps == len(joint_states)
    assert result.commands == {t: len(m) for t, m in commands.items()}
    assert result.skipped == {}
    assert result.deviation.overall == 0.0
    assert set(result.deviation.values) == {(JOINT_STATES, f) for f in
                                            ("position", "velocity", "effort")}

    assert replay_main([str(recorded), "--tolerance", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^max deviation: 0\.0$", out, re.M), out
    assert f"{len(joint_states)} steps" in out


def _changed_world(tmp_path, mass: str):
    """pendulum.yaml with its URDF's link mass replaced by `mass` (text, kg), both files in
    tmp_path. Masses are part of the world, not of the simulation state the bag restores."""
    world = yaml.safe_load(PENDULUM_WORLD.read_text())
    robot = world["robots"][0]
    urdf = (PENDULUM_WORLD.parent / robot["urdf"]).read_text()
    assert urdf.count('<mass value="1"/>') == 1
    (tmp_path / "pendulum.urdf").write_text(urdf.replace('<mass value="1"/>',
                                                         f'<mass value="{mass}"/>'))
    robot["urdf"] = "pendulum.urdf"
    path = tmp_path / "pendulum_changed.yaml"
    path.write_text(yaml.safe_dump(world))
    return path


def _copy_with_world(recorded, tmp_path, world):
    """The bag copied, its metadata's recorded world parameter set to `world`."""
    copy = tmp_path / "changed_bag"
    shutil.copytree(recorded, copy)
    metadata_path = copy / "metadata.yaml"
    metadata = yaml.safe_load(metadata_path.read_text())
    custom = metadata["rosbag2_bagfile_information"]["custom_data"]
    parameters = json.loads(custom["sim_node.parameters"])
    parameters["world"] = str(world)
    custom["sim_node.parameters"] = json.dumps(parameters)
    metadata_path.write_text(yaml.safe_dump(metadata, sort_keys=False))
    return copy


def test_replay_into_a_changed_world_deviates(recorded, tmp_path, capsys):
    # the same mass through the copied world and URDF files and bag: still exact (the copies
    # are faithful), so the deviation below is the mass's doing
    (tmp_path / "same").mkdir()
    (tmp_path / "other").mkdir()
    same = _copy_with_world(recorded, tmp_path / "same", _changed_world(tmp_path / "same", "1"))
    assert replay_physics(same).deviation.overall == 0.0
    changed = _copy_with_world(recorded, tmp_path / "other",
                               _changed_world(tmp_path / "other", "1.2"))
    result = replay_physics(changed)
    assert result.missing == 0
    assert result.deviation.overall > 1e-6
    assert math.isfinite(result.deviation.overall)
    capsys.readouterr()
    assert replay_main([str(changed), "--tolerance", "1e-9"]) == 1
    captured = capsys.readouterr()
    assert "exceeds the tolerance" in captured.err
    value = float(re.search(r"^max deviation: (\S+)$", captured.out, re.M).group(1))
    assert value == result.deviation.overall


# -- states playback -----------------------------------------------------------------------------
def test_states_playback_publishes_the_recorded_states(recorded, tmp_path):
    domain = next_domain()
    client = Client(domain)
    process = None
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(JointState, JOINT_STATES, DEEP)
        log = tmp_path / "replay.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "sim_node", "replay", str(recorded), "--states",
                 "--rate", "0.25", "--wait-for", "/clock", "--wait-for", JOINT_STATES],
                env=ros_env(domain), stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
            code = process.wait(timeout=120)
        assert code == 0, log.read_text()
        clocks = [ns(m.clock) for _, m in _bag_messages(recorded, "/clock")]
        states = _bag_messages(recorded, JOINT_STATES)
        client.wait_for("/clock", len(clocks))
        client.wait_for(JOINT_STATES, len(states))
        assert [ns(m.clock) for m in client.messages("/clock")] == clocks
        received = client.messages(JOINT_STATES)
        assert [ns(m.header.stamp) for m in received] == [stamp for stamp, _ in states]
        assert [list(m.position) for m in received] == [list(m.position) for _, m in states]
        assert [list(m.velocity) for m in received] == [list(m.velocity) for _, m in states]
        assert "played" in log.read_text()
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        client.close()


# -- bad bags ------------------------------------------------------------------------------------
def test_a_bag_not_recorded_by_sim_node_is_refused(tmp_path, capsys):
    bag = tmp_path / "other"
    store = get_typestore(Stores.ROS2_KILTED)
    String = store.types["std_msgs/msg/String"]
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        writer.write(connection, 1, store.serialize_cdr(String(data="hi"), "std_msgs/msg/String"))
    assert replay_main([str(bag)]) == 2
    err = capsys.readouterr().err
    assert "was not recorded by sim_node" in err and "sim_node.parameters" in err, err
    assert replay_main([str(tmp_path / "nothing")]) == 2
    assert "no such bag directory" in capsys.readouterr().err
