"""The simulation node's core, end to end: the node as a separate process over DDS
(tests/ros/node_harness.py), checked from a client node in this process.

What is checked (services, plugins' own behaviour and bags are other modules' work):
  /clock          every physics step, consecutive stamps physics_dt apart; clock_decimation
  /tf             the moving frames (objects, floating bases, movable links) stamped with sim
                  time, their poses against the world file and the URDFs
  /tf_static      the fixed frames, once, transient local (a late subscriber gets them)
  robot_description per robot namespace, transient local, the URDF file's text
  ~/contacts      the resting objects' contacts with the table: names, normals, forces = weights
  ~/status        sim time, steps, target real-time factor, engine status, the plugins' robots

Independent references: the world file (object sizes, masses, poses) and the URDFs (joint
origins, fixed and movable joints, masses), read here with yaml and ElementTree. One node
process on the default world; pacing and start-up: tests/ros/test_node_rate.py.

The node runs paused and this module steps it (~/step_simulation) in bursts of BURST steps,
each taken only once the client has received the last one's /clock and /tf: the node's
per-step publishers keep 10 messages, so a client that falls further behind (a loaded
machine, a node running free at 1 kHz) could lose some; paced by the client, it loses none,
and "every step" is checked exactly. ~/status is checked while it plays.
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
from simulation_interfaces.msg import Result, SimulationState
from simulation_interfaces.srv import SetSimulationState, StepSimulation
from tf2_msgs.msg import TFMessage

from node_harness import (DEEP, LATCHED, NO_PLUGINS, REPO, Client, ns, set_parameter,
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


def _wait_until(condition, what: str, timeout: float = 60.0):
    """Until condition() holds (the timeout only bounds a hang: nothing here is timed)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} not within {timeout} s"
        time.sleep(0.01)


BURST = 5           # steps per ~/step_simulation call: fewer than the publishers keep (10)


class Stepper:
    """Steps the paused node, BURST steps at a time, each burst after the client received the
    last one's /clock (every `clock_every`-th step: clock_decimation) and /tf."""

    def __init__(self, client: Client):
        self.client = client
        self.steps = 0          # taken so far: the node's step count
        self.clock_every = 1
        self._service = client.node.create_client(StepSimulation, "/sim/step_simulation")
        assert self._service.wait_for_service(timeout_sec=60.0)

    def advance(self, steps: int):
        while steps > 0:
            burst = min(BURST, steps)
            future = self._service.call_async(StepSimulation.Request(steps=burst))
            _wait_until(future.done, "~/step_simulation")
            assert future.result().result.result == Result.OK, future.result().result
            first, self.steps, steps = self.steps, self.steps + burst, steps - burst
            last_tf = (self.steps - 1) * PHYSICS_DT_NS
            clocks = [k * PHYSICS_DT_NS for k in range(first, self.steps)
                      if k % self.clock_every == 0]
            self.client.wait_for("/tf", timeout=60, predicate=lambda m: ns(
                m.transforms[0].header.stamp) == last_tf)
            if clocks:
                self.client.wait_for("/clock", timeout=60,
                                     predicate=lambda m: ns(m.clock) == clocks[-1])

    def stamps(self, topic: str, since_step: int) -> np.ndarray:
        """Stamps [ns] of what arrived on /clock or /tf for the steps from since_step on."""
        if topic == "/clock":
            values = [ns(m.clock) for m in self.client.messages(topic)]
        else:
            values = [ns(m.transforms[0].header.stamp) for m in self.client.messages(topic)]
        return np.array([t for t in values if t >= since_step * PHYSICS_DT_NS])


# -- the default world: topics -----------------------------------------------------------------
@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A paused node on the default world (arm on the table, objects on it, mobile base on the
    ground), ~/status at 4 Hz; the client listens to its topics from the start; stepped 1 s
    (the objects settle on the table)."""
    node, client = start_node(tmp_path_factory, "table", {
        "world": str(DEFAULT_WORLD), "real_time_factor": 1.0, "status_rate": 4.0,
        "paused": True, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(TFMessage, "/tf", DEEP)
        client.subscribe(Contacts, "/sim/contacts", DEEP)
        client.subscribe(SimStatus, "/sim/status", DEEP)
        stepper = Stepper(client)
        stepper.advance(1000)
        yield stepper, client
    finally:
        client.close()
        node.stop()


def test_clock_is_published_every_physics_step(table):
    stepper, client = table
    first = stepper.steps
    stepper.advance(500)
    stamps = stepper.stamps("/clock", first)
    assert stamps.tolist() == [k * PHYSICS_DT_NS for k in range(first, first + 500)]


def test_clock_decimation_set_at_run_time_thins_clock(table):
    stepper, client = table
    assert set_parameter(client, "clock_decimation", 10).successful
    first = stepper.steps
    try:
        stepper.clock_every = 10
        stepper.advance(600)
        # every 10th step: those whose step count is a multiple of 10
        assert stepper.stamps("/clock", first).tolist() == \
            [k * PHYSICS_DT_NS for k in range(first, first + 600) if k % 10 == 0]
        refused = set_parameter(client, "clock_decimation", 0)
        assert not refused.successful and "clock_decimation" in refused.reason
    finally:
        assert set_parameter(client, "clock_decimation", 1).successful
        stepper.clock_every = 1


def test_tf_carries_the_moving_frames_stamped_with_sim_time(table):
    stepper, client = table
    _, moving = expected_frames(DEFAULT_WORLD)
    first = stepper.steps
    stepper.advance(200)
    messages = [m for m in client.messages("/tf")
                if ns(m.transforms[0].header.stamp) >= first * PHYSICS_DT_NS]
    # one per step, stamped with that step's /clock
    assert [ns(m.transforms[0].header.stamp) for m in messages] == \
        stepper.stamps("/clock", first).tolist() == \
        [k * PHYSICS_DT_NS for k in range(first, first + 200)]
    for message in messages:
        assert _pairs(message) == moving
        assert len({ns(t.header.stamp) for t in message.transforms}) == 1


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
    client.wait_for("/tf_static", 1, timeout=60)
    time.sleep(0.5)             # a second one from the node would arrive right after the first
    # the node's one message, plus, from its own latched publisher, the arm camera plugin's
    # optical frame (a second /tf_static publisher, as static_transform_publisher would be)
    messages = client.messages("/tf_static")
    ours = [m for m in messages if not all(t.child_frame_id.endswith("_optical")
                                           for t in m.transforms)]
    assert len(ours) == 1, [[t.child_frame_id for t in m.transforms] for m in messages]
    assert len(messages) - len(ours) <= 1
    [message] = ours
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
    table[0].advance(1)
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
    stamps = np.array([ns(m.header.stamp) for m in client.messages("/sim/contacts")])
    assert len(stamps) > 50                                 # over > 1 s of steps
    assert np.all(np.diff(stamps) == 20 * PHYSICS_DT_NS)    # contacts_rate 50 Hz of sim time


def test_status_reports_sim_time_steps_rate_and_engine_state(table):
    """While it plays (last in this module: the node runs free from here). How close the
    measured real-time factor is to the target depends on the machine: bench/node.py N3."""
    _, client = table
    response = client.call(SetSimulationState, "/sim/set_simulation_state",
                           SetSimulationState.Request(state=SimulationState(
                               state=SimulationState.STATE_PLAYING)), timeout=60)
    assert response.result.result == Result.OK, response.result.error_message
    statuses = client.wait_for("/sim/status", 4, timeout=60,
                               predicate=lambda m: not m.paused)
    for status in statuses:
        assert status.header.stamp == status.sim_time
        assert status.step_count * PHYSICS_DT_NS == ns(status.sim_time)
        assert status.target_real_time_factor == 1.0
        assert np.isfinite(status.real_time_factor) and status.real_time_factor >= 0.0
        assert (status.engine_status, status.engine_status_string) == (SimStatus.STATUS_NORMAL,
                                                                       "normal")
        # plugins name their robot (both robots list theirs in the world file, so the empty
        # default_plugins does not apply; the arm's include its camera)
        assert {p.robot for p in status.plugins} == {"arm", "mobile_base"}
        assert ("camera", "arm") in {(p.name, p.robot) for p in status.plugins}
    assert np.all(np.diff([status.step_count for status in statuses]) > 0)
    # while paused it said so, at the steps taken
    paused = [m for m in client.messages("/sim/status") if m.paused]
    assert paused and all(m.step_count * PHYSICS_DT_NS == ns(m.sim_time) for m in paused)
