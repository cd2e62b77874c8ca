"""The simulation node's core, end to end: the node as a separate process over DDS
(tests/ros/node_harness.py), checked from a client node in this process.

What is checked (services, plugins' own behaviour and bags are other modules' work):
  /clock          every physics step, consecutive stamps physics_dt apart; clock_decimation
  /tf             the moving frames (objects, floating bases, movable links) stamped with sim
                  time, their poses against the world file and the URDFs
  /tf_static      the fixed frames, once, transient local (a late subscriber gets them)
  robot_description per robot namespace, transient local, the URDF file's text
  ~/contacts      the resting objects' contacts with the table: names, normals, forces = weights
  ~/status        sim time, steps, measured and target real-time factor, engine status

Independent references: the world file (object sizes, masses, poses) and the URDFs (joint
origins, fixed and movable joints, masses), read here with yaml and ElementTree. One node
process on the default world at real time; pacing and start-up: tests/ros/test_node_rate.py.
"""
from __future__ import annotations

import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosgraph_msgs.msg import Clock
from scipy.spatial.transform import Rotation
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from node_harness import (DEEP, LATCHED, NO_PLUGINS, REPO, Client, ns, received, set_parameter,
                          start_node)
from sim_node.msg import Contacts, SimStatus

# Generated message code imports rosidl_parser, whose lark-parser imports sre_parse.
pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

DEFAULT_WORLD = REPO / "data" / "worlds" / "default.yaml"
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
PHYSICS_DT_NS = 1_000_000           # both worlds' physics_dt, 1 ms
GRAVITY = 9.81                      # [m/s^2] both worlds
TABLE_TOP = 0.75                    # [m] height of the table's top surface (default.yaml)
PADDING = 0.0025                    # [m] default.yaml: every body's boundary layer


# -- references: the world file and the URDFs ------------------------------------------------
def _world(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _urdf(world_path: Path, robot: dict) -> ElementTree.Element:
    return ElementTree.parse(world_path.parent / robot["urdf"]).getroot()


def _joints(urdf) -> list[dict]:
    joints = []
    for joint in urdf.iter("joint"):
        origin = joint.find("origin")
        joints.append({
            "type": joint.get("type"), "parent": joint.find("parent").get("link"),
            "child": joint.find("child").get("link"),
            "xyz": [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None
                                       else "0 0 0").split()],
            "rpy": [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None
                                       else "0 0 0").split()]})
    return joints


def _root_link(urdf) -> str:
    children = {j["child"] for j in _joints(urdf)}
    [root] = [link.get("name") for link in urdf.iter("link") if link.get("name") not in children]
    return root


def _mass(urdf) -> float:
    return sum(float(m.get("value")) for m in urdf.iter("mass"))


def expected_frames(world_path: Path) -> tuple[set, set]:
    """(static, moving) (parent, child) frame pairs of a world, from its file and URDFs."""
    world = _world(world_path)
    static = {("world", t["name"]) for t in world.get("terrains", [])}
    moving = {("world", o["name"]) for o in world.get("rigid_objects", [])}
    robots = world.get("robots", [])
    for robot in robots:
        urdf = _urdf(world_path, robot)
        # the namespace rule (README): the key, else the root for a single robot, else its name
        prefix = robot.get("namespace", robot["name"] if len(robots) > 1 else "").strip("/")
        prefix = f"{prefix}/" if prefix else ""
        root = ("world", prefix + _root_link(urdf))
        (static if robot.get("fixed_base") or _root_link(urdf) == "world" else moving).add(root)
        for joint in _joints(urdf):
            pair = (prefix + joint["parent"], prefix + joint["child"])
            (static if joint["type"] == "fixed" else moving).add(pair)
    return static, moving


def _pairs(message: TFMessage) -> set:
    return {(t.header.frame_id, t.child_frame_id) for t in message.transforms}


def _transform(message: TFMessage, child: str):
    [t] = [t for t in message.transforms if t.child_frame_id == child]
    p, q = t.transform.translation, t.transform.rotation
    return np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w])


def _same_rotation(q1, q2, tol=1e-9) -> bool:
    return abs(abs(float(np.dot(q1, q2))) - 1.0) < tol


def _wait_received(client: Client, topic: str, since: float, count: int, timeout=60.0):
    """Until `count` messages on `topic` have arrived since `since` (a slow machine steps the
    node slower than real time)."""
    deadline = time.monotonic() + timeout
    while len(received(client, topic, since)) < count:
        assert time.monotonic() < deadline, f"fewer than {count} messages on {topic}"
        time.sleep(0.05)


def _wait_until(condition, what: str, timeout: float = 60.0):
    """Until condition() holds (the timeout only bounds a hang: nothing here is timed)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} not within {timeout} s"
        time.sleep(0.05)


def _wait_sim_time(client: Client, seconds: float, timeout: float = 60.0):
    """Until a /clock of at least `seconds` of sim time has arrived."""
    client.wait_for("/clock", 1, timeout, lambda m: ns(m.clock) >= seconds * 1e9)


# -- the default world: topics -----------------------------------------------------------------
@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A node on the default world (arm on the table, objects on it, mobile base on the ground)
    at real time, ~/status at 4 Hz; the client listens to its topics from the start."""
    node, client = start_node(tmp_path_factory, "table", {
        "world": str(DEFAULT_WORLD), "real_time_factor": 1.0, "status_rate": 4.0,
        "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(TFMessage, "/tf", DEEP)
        client.subscribe(Contacts, "/sim/contacts", DEEP)
        client.subscribe(SimStatus, "/sim/status", DEEP)
        _wait_sim_time(client, 1.0)        # objects settled on the table
        yield node, client
    finally:
        client.close()
        node.stop()


def test_clock_is_published_every_physics_step(table):
    _, client = table
    since = time.monotonic()
    _wait_received(client, "/clock", since, 500)
    stamps = np.array([ns(m.clock) for _, m in received(client, "/clock", since)])
    assert np.all(np.diff(stamps) == PHYSICS_DT_NS)
    assert np.all(stamps % PHYSICS_DT_NS == 0)


def test_clock_decimation_set_at_run_time_thins_clock(table):
    _, client = table
    since = time.monotonic()
    assert set_parameter(client, "clock_decimation", 10).successful
    try:
        def stamps():
            return np.array([ns(m.clock) for _, m in received(client, "/clock", since)])

        # until 60 decimated /clock messages arrived after the change reached the node
        _wait_until(lambda: len(stamps()) > 60 and np.all(
            np.diff(stamps()[-61:]) == 10 * PHYSICS_DT_NS), "60 decimated /clock messages")
        stamps = stamps()
        # every step until the change reached the node, then every 10th step
        # (the first one of those at a step count that is a multiple of 10)
        every_step = np.flatnonzero(np.diff(stamps) == PHYSICS_DT_NS)
        last_every_step = every_step[-1] + 1 if len(every_step) else 0
        first = last_every_step + np.flatnonzero(
            stamps[last_every_step:] % (10 * PHYSICS_DT_NS) == 0)[0]
        assert np.all(np.diff(stamps[:first + 1]) <= 10 * PHYSICS_DT_NS)
        assert len(stamps[first:]) > 50
        assert np.all(np.diff(stamps[first:]) == 10 * PHYSICS_DT_NS)
        refused = set_parameter(client, "clock_decimation", 0)
        assert not refused.successful and "clock_decimation" in refused.reason
    finally:
        assert set_parameter(client, "clock_decimation", 1).successful


def test_tf_carries_the_moving_frames_stamped_with_sim_time(table):
    _, client = table
    _, moving = expected_frames(DEFAULT_WORLD)

    def clock():
        return np.array([ns(m.clock) for _, m in received(client, "/clock")])

    # /clock every step again after test_clock_decimation_set_at_run_time_thins_clock: from
    # the last thinned gap on, every /tf stamp is a /clock's
    _wait_until(lambda: len(clock()) > 2 and np.all(np.diff(clock()[-3:]) == PHYSICS_DT_NS),
                "/clock every step")
    thinned = np.flatnonzero(np.diff(clock()) != PHYSICS_DT_NS)
    start = clock()[thinned[-1] + 1] if len(thinned) else clock()[0]

    def tf_since_start():
        return [m for _, m in received(client, "/tf")
                if ns(m.transforms[0].header.stamp) >= start]

    _wait_until(lambda: len(tf_since_start()) >= 150, "150 /tf messages")
    messages = tf_since_start()
    # their /clock messages have arrived too (/clock goes out before /tf in a step)
    last = max(ns(m.transforms[0].header.stamp) for m in messages)
    client.wait_for("/clock", timeout=60, predicate=lambda m: ns(m.clock) >= last)
    clock = set(clock().tolist())
    messages = [m for m in messages if ns(m.transforms[0].header.stamp) <= max(clock)]
    assert len(messages) >= 150
    for message in messages:
        assert _pairs(message) == moving
        stamps = {ns(t.header.stamp) for t in message.transforms}
        assert len(stamps) == 1 and stamps <= clock      # one sim-time stamp: a /clock's
    assert len({ns(m.transforms[0].header.stamp) for m in messages}) == len(messages)


def test_tf_poses_match_the_world_file_and_the_urdfs(table):
    _, client = table
    message = client.messages("/tf")[-1]
    world = _world(DEFAULT_WORLD)
    # every object rests on the table top: its centre half its height above it, within the
    # boundary layers (2 x padding), where it was placed in x, y and upright
    half_heights = {"red_box": 0.025, "green_cylinder": 0.05, "blue_ball": 0.03,
                    "yellow_capsule": 0.02}
    for entry in world["rigid_objects"]:
        position, rotation = _transform(message, entry["name"])
        placed = np.array(entry["pose"]["position"])
        assert abs(position[2] - (TABLE_TOP + half_heights[entry["name"]])) < 2 * PADDING
        assert np.allclose(position[:2], placed[:2], atol=1e-3)
        assert _same_rotation(rotation, entry["pose"]["orientation"], tol=1e-4)
    # a movable joint's child frame sits at the joint origin in its parent (the joint turns it
    # about its axis there)
    [arm] = [r for r in world["robots"] if r["name"] == "arm"]
    for joint in _joints(_urdf(DEFAULT_WORLD, arm)):
        if joint["type"] in ("revolute", "continuous"):
            position, _ = _transform(message, f"arm/{joint['child']}")
            assert np.allclose(position, joint["xyz"], atol=1e-9), joint


def test_tf_static_reaches_a_late_subscriber_once(table):
    _, client = table
    static, _ = expected_frames(DEFAULT_WORLD)
    client.subscribe(TFMessage, "/tf_static", LATCHED)     # the node has run for > 1 s
    [message] = client.wait_for("/tf_static", 1, timeout=60)
    time.sleep(0.5)             # a second one would arrive right after the first: none does
    assert len(client.messages("/tf_static")) == 1
    assert _pairs(message) == static
    assert {ns(t.header.stamp) for t in message.transforms} == {0}
    # the fixed-base arm's root where the world file puts it; fixed joints at their origins
    world = _world(DEFAULT_WORLD)
    [arm] = [r for r in world["robots"] if r["name"] == "arm"]
    position, rotation = _transform(message, "arm/world")
    assert np.allclose(position, arm["pose"]["position"], atol=1e-12)
    assert _same_rotation(rotation, arm["pose"]["orientation"])
    for joint in _joints(_urdf(DEFAULT_WORLD, arm)):
        if joint["type"] == "fixed":
            position, rotation = _transform(message, f"arm/{joint['child']}")
            assert np.allclose(position, joint["xyz"], atol=1e-12), joint
            assert _same_rotation(rotation, Rotation.from_euler("xyz", joint["rpy"]).as_quat())


def test_robot_description_of_each_namespace_is_its_urdf_and_latched(table):
    _, client = table
    for robot in _world(DEFAULT_WORLD)["robots"]:
        topic = f"/{robot['namespace']}/robot_description"
        client.subscribe(String, topic, LATCHED)
        [message] = client.wait_for(topic, 1, timeout=60)
        assert message.data == (DEFAULT_WORLD.parent / robot["urdf"]).read_text()


def test_contacts_hold_the_resting_bodies_weights(table):
    _, client = table
    message = client.messages("/sim/contacts")[-1]
    assert message.header.frame_id == "world"
    # stamped with the sim time after the step: the next step's /clock
    client.wait_for("/clock", 1, timeout=60,
                    predicate=lambda m: ns(m.clock) == ns(message.header.stamp))
    world = _world(DEFAULT_WORLD)
    for entry in world["rigid_objects"]:
        on_table = [c for c in message.contacts if c.entity1 == entry["name"]]
        assert on_table, f"no contact of {entry['name']}"
        assert {(c.link1, c.entity2, c.link2) for c in on_table} == {("", "table", "")}
        force = np.sum([[c.force.x, c.force.y, c.force.z] for c in on_table], axis=0)
        # at rest the table carries the object's weight (force on body 1, the object)
        assert np.allclose(force, [0, 0, entry["mass"] * GRAVITY], rtol=0, atol=0.01 * GRAVITY
                           * entry["mass"])
        for c in on_table:
            assert c.normal.z > 0.999                       # from the table up to the object
            assert abs(c.position.z - TABLE_TOP) < 2 * PADDING
            assert 0 < c.depth <= 2 * PADDING
    [base] = [r for r in world["robots"] if r["name"] == "mobile_base"]
    on_ground = [c for c in message.contacts if c.entity1 == "mobile_base"]
    assert {c.entity2 for c in on_ground} == {"ground"}
    links = {link.get("name") for link in _urdf(DEFAULT_WORLD, base).iter("link")}
    assert {c.link1 for c in on_ground} <= links
    weight = _mass(_urdf(DEFAULT_WORLD, base)) * GRAVITY
    assert abs(sum(c.force.z for c in on_ground) - weight) < 0.01 * weight


def test_contacts_are_published_at_their_rate_in_sim_time(table):
    _, client = table
    client.wait_for("/sim/contacts", 11, timeout=60)
    stamps = np.array([ns(m.header.stamp) for _, m in received(client, "/sim/contacts")])
    assert np.all(np.diff(stamps) == 20 * PHYSICS_DT_NS)    # contacts_rate 50 Hz of sim time


def test_status_reports_sim_time_steps_rate_and_engine_state(table):
    """(How close the measured real-time factor is to the target depends on the machine:
    bench/node.py N3 measures it.)"""
    _, client = table
    since = time.monotonic()
    _wait_until(lambda: len(received(client, "/sim/status", since)) >= 4, "4 ~/status")
    statuses = [m for _, m in received(client, "/sim/status", since)]
    for status in statuses:
        assert status.header.stamp == status.sim_time
        assert status.step_count * PHYSICS_DT_NS == ns(status.sim_time)
        assert not status.paused
        assert status.target_real_time_factor == 1.0
        assert np.isfinite(status.real_time_factor) and status.real_time_factor >= 0.0
        assert (status.engine_status, status.engine_status_string) == (SimStatus.STATUS_NORMAL,
                                                                       "normal")
        # plugins name their robot (the arm runs none: default_plugins is empty)
        assert {p.robot for p in status.plugins} == {"mobile_base"}
    assert np.all(np.diff([status.step_count for status in statuses]) > 0)


