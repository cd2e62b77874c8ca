"""The entity services of the node, end to end (the node as a separate process,
tests/ros/node_harness.py): get_entities, get_entity_state, get_entities_states,
set_entity_state, spawn_entity, delete_entity, and reset_simulation with spawned and deleted
entities and plugin state (run states, stepping, the time/state scopes of a fixed world and our
own services: test_services.py); and that bad requests get the standard's error results,
change nothing, and never stop the node.

One node for the module, started paused at real_time_factor 0 on a world written here: the
pendulum (fixed base, PID-held at 0.5 rad; the default plugins: joint_states every step,
joint_trajectory), `floater` (the differential-drive base as a floating-base robot, only a
joint_state_publisher at 100 Hz) and `faller` (a 0.5 kg box) high in the air, a 2 kg box
resting on the ground, the ground; /tf every step. Every test starts from the initial state
(reset_simulation ALL: spawned entities removed, deleted ones back, time 0). Spawned:
tests/ros/data/block.urdf (a single link: a rigid object), two_link_arm.urdf (fixed base, two
revolute and two fixed joints) and the differential-drive base (floating base, package://).

Independent references: the world file's and the request's poses; closed-form ballistics of
the semi-implicit integrator after k steps of dt from (z0, v0): v = v0 - g k dt,
z = z0 + v0 k dt - g dt^2 k (k + 1) / 2 (t = k dt; continuous z0 - g t^2 / 2 differs by
g dt t / 2), to 1e-9 for rigid bodies and 1e-6 for a floating base (its joints held by PIDs,
solved as an articulated body); the URDF text and its joints; and for plugin resets, the
simulation against itself (the same joint states as a run that never had the trajectory).
"""
from __future__ import annotations

import math
import os
import time

import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose, PoseStamped, Quaternion, Twist, Vector3
from sensor_msgs.msg import JointState
from simulation_interfaces.msg import (EntityCategory, EntityFilters, EntityState, Resource,
                                       Result)
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntitiesStates,
                                       GetEntityState, GetSimulationState, ResetSimulation,
                                       SetEntityState, SetSimulationState, SpawnEntity,
                                       StepSimulation)
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from node_harness import DEEP, LATCHED, PENDULUM, REPO, Client, NodeProcess, next_domain

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

DT = 0.001                  # [s] physics_dt of the world
G = 9.81                    # [m/s^2]
FALLER_Z, FLOATER_Z = 50.0, 30.0
FLOATER_POSE = ([3.0, 2.0, FLOATER_Z], [0.0, 0.0, math.sin(0.3), math.cos(0.3)])  # x y z w
FLOATER_RATE = 100.0        # [Hz] of sim time: the floater's joint_states
BOX_SIDE = 0.2
DATA = REPO / "tests" / "ros" / "data"
BLOCK, ARM = DATA / "block.urdf", DATA / "two_link_arm.urdf"
WORLD = f"""
simulation: {{physics_dt: {DT}, gravity: [0.0, 0.0, {-G}]}}
robots:
{PENDULUM}  - name: floater
    urdf: {REPO}/data/robots/diff_drive/diff_drive.urdf
    namespace: floater
    fixed_base: false
    pose: {{position: {FLOATER_POSE[0]}, orientation: {FLOATER_POSE[1]}}}
    controller: {{kp: 10.0, ki: 0.0, kd: 0.5}}
    plugins: [{{name: joint_state_publisher, config: {{rate: {FLOATER_RATE}}}}}]
rigid_objects:
  - name: box
    geometry: {{box: [{BOX_SIDE}, {BOX_SIDE}, {BOX_SIDE}]}}
    mass: 2.0
    pose: {{position: [1.0, 0.0, {BOX_SIDE / 2}], orientation: [0, 0, 0, 1]}}
  - name: faller
    geometry: {{box: [0.1, 0.1, 0.1]}}
    mass: 0.5
    pose: {{position: [-2.0, 0.0, {FALLER_Z}], orientation: [0, 0, 0, 1]}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
"""
WORLD_ENTITIES = ["box", "faller", "floater", "ground", "pendulum"]   # sorted
SIM = "/sim"
Spawn = SpawnEntity.Response
Scope = ResetSimulation.Request


@pytest.fixture(scope="module")
def node_and_client(tmp_path_factory):
    directory = tmp_path_factory.mktemp("entities")
    world = directory / "world.yaml"
    world.write_text(WORLD)
    domain = next_domain()
    node = NodeProcess(domain, {"world": str(world), "paused": True, "real_time_factor": 0.0,
                                "status_rate": 0.0}, log_path=directory / "node.log")
    client = Client(domain)
    try:
        client.subscribe(TFMessage, "/tf", DEEP)
        client.subscribe(TFMessage, "/tf_static", LATCHED)
        client.subscribe(JointState, "/pendulum/joint_states", DEEP)
        client.subscribe(JointState, "/floater/joint_states", DEEP)
        yield node, client
    finally:
        client.close()
        node.stop()


@pytest.fixture
def sim(node_and_client):
    """The node paused at the initial state (time 0, the world's own entities only)."""
    client = node_and_client[1]
    state = call(client, GetSimulationState, "get_simulation_state").state
    if state.state != state.STATE_PAUSED:
        call(client, SetSimulationState, "set_simulation_state",
             state=type(state)(state=state.STATE_PAUSED))
    assert call(client, ResetSimulation, "reset_simulation").result.result == Result.OK
    assert names(client) == WORLD_ENTITIES
    return client


# -- helpers --------------------------------------------------------------------------------
def call(client, srv_type, service, /, **fields):
    return client.call(srv_type, f"{SIM}/{service}", srv_type.Request(**fields))


def ok(response):
    assert response.result.result == Result.OK, response.result.error_message
    return response


def step(client, steps: int):
    ok(call(client, StepSimulation, "step_simulation", steps=steps))


def entity(client, name: str) -> EntityState:
    return ok(call(client, GetEntityState, "get_entity_state", entity=name)).state


def names(client, filter: str = "", categories=()) -> list:
    """The names get_entities returns, sorted (the standard gives no order; ours is world ID
    order, in which a world entity deleted and put back by a reset comes after the others of
    its kind)."""
    filters = EntityFilters(filter=filter, categories=[EntityCategory(category=c)
                                                       for c in categories])
    return sorted(ok(call(client, GetEntities, "get_entities", filters=filters)).entities)


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def sim_time(client) -> float:
    return seconds(entity(client, "ground").header.stamp)


def position(state) -> list:
    p = state.pose.position
    return [p.x, p.y, p.z]


def orientation(state) -> list:
    o = state.pose.orientation
    return [o.x, o.y, o.z, o.w]


def linear(state) -> list:
    v = state.twist.linear
    return [v.x, v.y, v.z]


def angular(state) -> list:
    w = state.twist.angular
    return [w.x, w.y, w.z]


def pose(xyz, xyzw=(0.0, 0.0, 0.0, 1.0)) -> Pose:
    result = Pose()
    result.position.x, result.position.y, result.position.z = (float(v) for v in xyz)
    result.orientation = Quaternion(x=float(xyzw[0]), y=float(xyzw[1]), z=float(xyzw[2]),
                                    w=float(xyzw[3]))
    return result


def twist(v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0)) -> Twist:
    return Twist(linear=Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2])),
                 angular=Vector3(x=float(w[0]), y=float(w[1]), z=float(w[2])))


def yaw_quaternion(yaw: float) -> list:
    return [0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)]


def ballistic(z0: float, v0: float, k: int) -> tuple[float, float]:
    """(z, v) after k semi-implicit steps from (z0, v0) under gravity."""
    return z0 + v0 * k * DT - G * DT**2 * k * (k + 1) / 2, v0 - G * k * DT


def spawn(client, name="", uri="", text="", namespace="", at=((0.0, 0.0, 0.0),), frame="",
          allow_renaming=False):
    initial = PoseStamped(pose=pose(*at))
    initial.header.frame_id = frame
    return call(client, SpawnEntity, "spawn_entity", name=name, allow_renaming=allow_renaming,
                entity_resource=Resource(uri=uri, resource_string=text),
                entity_namespace=namespace, initial_pose=initial)


def set_state(client, name: str, pose_=None, twist_=None, frame="world"):
    state = EntityState()
    state.header.frame_id = frame
    if pose_ is not None:
        state.pose = pose_
    if twist_ is not None:
        state.twist = twist_
    return call(client, SetEntityState, "set_entity_state", entity=name, state=state,
                set_pose=pose_ is not None, set_twist=twist_ is not None).result


def wait_until(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise TimeoutError(f"{what} not met within {timeout} s")


def tf_at(client, t: float, seen: int) -> TFMessage:
    """The /tf message stamped with sim time t among those after the first `seen` (stamps
    repeat after a reset of the time), waiting for it."""
    def stamped():
        return [m for m in client.messages("/tf")[seen:]
                if m.transforms and abs(seconds(m.transforms[0].header.stamp) - t) < DT / 2]
    wait_until(lambda: stamped(), what=f"/tf stamped {t}")
    return stamped()[-1]


def pairs(message: TFMessage) -> set:
    return {(ts.header.frame_id, ts.child_frame_id) for ts in message.transforms}


def next_tf_static(client, seen: int) -> TFMessage:
    """The first /tf_static message after the first `seen`."""
    return client.wait_for("/tf_static", seen + 1)[seen]


def step_until_received(client, topic: str, steps: int = 10, limit: int = 200,
                        period: float = DT):
    """Step until messages of topic (stamped with the sim time of the steps on a grid of
    `period`) arrive, and all those of the last steps have: a new subscription matches after
    discovery (messages before are lost), then receives reliably."""
    seen = len(client.messages(topic))
    for _ in range(limit):
        step(client, steps)
        last = math.floor((sim_time(client) - DT) / period + 1e-6) * period
        try:
            client.wait_for(topic, seen + 1, timeout=0.5)
        except TimeoutError:
            continue
        wait_until(lambda: any(abs(seconds(m.header.stamp) - last) < DT / 2
                               for m in client.messages(topic)[seen:]),
                   what=f"{topic} of the last step")
        return
    raise TimeoutError(f"nothing received on {topic}")


# -- get_entities -----------------------------------------------------------------------------
def test_get_entities_lists_all_in_world_order_and_filters_by_name_regex(sim):
    assert names(sim) == WORLD_ENTITIES
    assert names(sim, "ll") == ["faller"]                   # found anywhere in the name
    assert names(sim, "^f") == ["faller", "floater"]
    assert names(sim, "er$") == ["faller", "floater"]
    assert names(sim, "^(box|ground)$") == ["box", "ground"]
    assert names(sim, "nothing") == []
    # POSIX ERE (the standard's syntax) character classes
    assert names(sim, "^[[:lower:]]+$") == WORLD_ENTITIES
    assert names(sim, "[[:digit:][:punct:]]") == []
    assert names(sim, "^[^[:alpha:]]") == []


def test_get_entities_filters_by_category_and_name_and_category_together(sim):
    C = EntityCategory
    assert names(sim, categories=[C.CATEGORY_ROBOT]) == ["floater", "pendulum"]
    assert names(sim, categories=[C.CATEGORY_OBJECT]) == ["box", "faller"]
    assert names(sim, categories=[C.CATEGORY_STATIC_OBJECT]) == ["ground"]
    assert names(sim, categories=[C.CATEGORY_STATIC_OBJECT, C.CATEGORY_ROBOT]) == \
        ["floater", "ground", "pendulum"]
    assert names(sim, categories=[C.CATEGORY_HUMAN]) == []
    assert names(sim, "^f", [C.CATEGORY_ROBOT]) == ["floater"]


def test_bad_filters_get_error_results(sim):
    bad_regex = call(sim, GetEntities, "get_entities", filters=EntityFilters(filter="(["))
    assert bad_regex.result.result == Result.OPERATION_FAILED
    assert "not a valid regular expression" in bad_regex.result.error_message
    assert list(bad_regex.entities) == []
    unknown = call(sim, GetEntities, "get_entities", filters=EntityFilters(
        categories=[EntityCategory(category=9)]))
    assert unknown.result.result == Result.OPERATION_FAILED
    assert "unknown category 9" in unknown.result.error_message
    tags = EntityFilters()
    tags.tags.tags = ["red"]
    assert call(sim, GetEntities, "get_entities",
                filters=tags).result.result == Result.FEATURE_UNSUPPORTED
    states = call(sim, GetEntitiesStates, "get_entities_states",
                  filters=EntityFilters(filter="*"))
    assert states.result.result == Result.OPERATION_FAILED


# -- get_entity_state / get_entities_states ---------------------------------------------------
def test_states_at_start_are_the_world_file_poses_at_rest(sim):
    faller, floater = entity(sim, "faller"), entity(sim, "floater")
    assert position(faller) == [-2.0, 0.0, FALLER_Z]
    assert orientation(faller) == [0.0, 0.0, 0.0, 1.0]
    assert position(floater) == pytest.approx(FLOATER_POSE[0], abs=1e-12)
    assert orientation(floater) == pytest.approx(FLOATER_POSE[1], abs=1e-12)
    for state in (faller, floater):
        assert linear(state) == [0.0, 0.0, 0.0] and angular(state) == [0.0, 0.0, 0.0]
        assert state.header.frame_id == "world" and seconds(state.header.stamp) == 0.0
    # a terrain's placement, a fixed-base robot's root link (the pendulum's 'world' link)
    assert position(entity(sim, "ground")) == [0.0, 0.0, 0.0]
    assert position(entity(sim, "pendulum")) == [0.0, 0.0, 0.0]


def test_free_fall_of_an_object_and_a_floating_base_follows_the_closed_form(sim):
    k = 250
    step(sim, k)
    z, v = ballistic(FALLER_Z, 0.0, k)
    faller = entity(sim, "faller")
    assert seconds(faller.header.stamp) == pytest.approx(k * DT, abs=1e-12)
    assert position(faller) == pytest.approx([-2.0, 0.0, z], abs=1e-9)
    assert linear(faller) == pytest.approx([0.0, 0.0, v], abs=1e-9)
    assert position(faller)[2] == pytest.approx(FALLER_Z - G * (k * DT)**2 / 2,
                                                abs=G * DT * k * DT / 2 + 1e-9)
    z, v = ballistic(FLOATER_Z, 0.0, k)
    floater = entity(sim, "floater")
    assert position(floater) == pytest.approx([*FLOATER_POSE[0][:2], z], abs=1e-6)
    assert orientation(floater) == pytest.approx(FLOATER_POSE[1], abs=1e-6)
    assert linear(floater) == pytest.approx([0.0, 0.0, v], abs=1e-6)
    assert angular(floater) == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)


def test_get_entities_states_gives_the_filtered_names_with_their_states(sim):
    step(sim, 40)
    response = ok(call(sim, GetEntitiesStates, "get_entities_states",
                       filters=EntityFilters(filter="^f")))
    assert list(response.entities) == ["faller", "floater"]
    for name, state in zip(response.entities, response.states):
        assert state == entity(sim, name)
        assert state.header.frame_id == "world"
        assert seconds(state.header.stamp) == pytest.approx(40 * DT, abs=1e-12)
    everything = ok(call(sim, GetEntitiesStates, "get_entities_states"))
    assert sorted(everything.entities) == WORLD_ENTITIES
    assert len(everything.states) == len(WORLD_ENTITIES)


def test_unknown_entity_state_is_not_found(sim):
    response = call(sim, GetEntityState, "get_entity_state", entity="ghost")
    assert response.result.result == Result.NOT_FOUND
    assert "no entity named 'ghost'" in response.result.error_message
    assert "faller" in response.result.error_message       # the valid names are listed


# -- set_entity_state -------------------------------------------------------------------------
def test_set_pose_and_twist_of_an_object_then_it_moves_ballistically(sim):
    step(sim, 10)
    xyz, q = [0.5, -3.0, 20.0], yaw_quaternion(0.7)
    v0, w0 = [1.0, -0.5, 2.0], [0.0, 0.0, 1.5]
    ok_ = set_state(sim, "faller", pose(xyz, q), twist(v0, w0))
    assert ok_.result == Result.OK, ok_.error_message
    state = entity(sim, "faller")
    assert position(state) == pytest.approx(xyz, abs=1e-12)
    assert orientation(state) == pytest.approx(q, abs=1e-12)
    assert linear(state) == pytest.approx(v0, abs=1e-12)
    assert angular(state) == pytest.approx(w0, abs=1e-12)
    k = 200
    step(sim, k)
    state = entity(sim, "faller")
    z, vz = ballistic(xyz[2], v0[2], k)
    assert position(state) == pytest.approx([xyz[0] + v0[0] * k * DT, xyz[1] + v0[1] * k * DT,
                                             z], abs=1e-9)
    assert linear(state) == pytest.approx([v0[0], v0[1], vz], abs=1e-9)
    assert angular(state) == pytest.approx(w0, abs=1e-9)       # spin about a principal axis
    assert orientation(state) == pytest.approx(yaw_quaternion(0.7 + w0[2] * k * DT), abs=1e-6)


def test_set_only_the_pose_keeps_the_velocity_and_only_the_twist_keeps_the_pose(sim):
    step(sim, 100)
    before = entity(sim, "faller")
    assert set_state(sim, "faller", pose_=pose([0.0, 0.0, 10.0])).result == Result.OK
    moved = entity(sim, "faller")
    assert position(moved) == [0.0, 0.0, 10.0] and linear(moved) == linear(before)
    assert set_state(sim, "faller", twist_=twist((0.0, 3.0, 0.0))).result == Result.OK
    pushed = entity(sim, "faller")
    assert position(pushed) == [0.0, 0.0, 10.0] and linear(pushed) == [0.0, 3.0, 0.0]


def test_set_state_of_a_floating_base_robot(sim):
    xyz, q, v0 = [-4.0, 1.0, 25.0], yaw_quaternion(-1.0), [0.5, 0.0, 1.0]
    result = set_state(sim, "floater", pose(xyz, q), twist(v0))
    assert result.result == Result.OK, result.error_message
    state = entity(sim, "floater")
    assert position(state) == pytest.approx(xyz, abs=1e-12)
    assert orientation(state) == pytest.approx(q, abs=1e-12)
    assert linear(state) == pytest.approx(v0, abs=1e-12)
    k = 150
    step(sim, k)
    state = entity(sim, "floater")
    z, vz = ballistic(xyz[2], v0[2], k)
    assert position(state) == pytest.approx([xyz[0] + v0[0] * k * DT, xyz[1], z], abs=1e-6)
    assert linear(state) == pytest.approx([v0[0], 0.0, vz], abs=1e-6)
    assert orientation(state) == pytest.approx(q, abs=1e-6)


def test_static_entities_cannot_be_moved(sim):
    for name, expected in (("ground", "is a terrain"), ("pendulum", "has a fixed base")):
        result = set_state(sim, name, pose([0.0, 0.0, 1.0]))
        assert result.result == Result.OPERATION_FAILED and expected in result.error_message
        result = set_state(sim, name, twist_=twist((1.0, 0.0, 0.0)))
        assert result.result == Result.OPERATION_FAILED
    assert position(entity(sim, "ground")) == [0.0, 0.0, 0.0]
    # a zero twist asks nothing of it: accepted
    assert set_state(sim, "ground", twist_=twist()).result == Result.OK


def test_unusable_poses_and_frames_are_refused_and_change_nothing(sim):
    step(sim, 20)
    before = entity(sim, "faller")
    cases = {
        "NaN or infinity": (pose([math.nan, 0.0, 1.0]), None, "world"),
        "not a unit quaternion": (pose([0.0, 0.0, 1.0], (0.0, 0.0, 0.0, 2.0)), None, "world"),
        "frame 'map' is not supported": (pose([0.0, 0.0, 1.0]), None, "map"),
    }
    for expected, (pose_, twist_, frame) in cases.items():
        result = set_state(sim, "faller", pose_, twist_, frame)
        assert result.result == SetEntityState.Response.INVALID_POSE, (expected, result)
        assert expected in result.error_message
    # a pose and a bad twist together: neither applied
    result = set_state(sim, "faller", pose([0.0, 0.0, 1.0]), twist((math.inf, 0.0, 0.0)))
    assert result.result == Result.OPERATION_FAILED and "NaN or infinity" in result.error_message
    result = set_state(sim, "faller", twist_=twist((1.0, 0.0, 0.0)), frame="map")
    assert result.result == Result.OPERATION_FAILED and "'map'" in result.error_message
    unknown = set_state(sim, "ghost", pose([0.0, 0.0, 1.0]))
    assert unknown.result == Result.NOT_FOUND
    assert entity(sim, "faller") == before
    # '' is the world frame too
    assert set_state(sim, "faller", pose([0.0, 0.0, 7.0]), frame="").result == Result.OK
    assert position(entity(sim, "faller")) == [0.0, 0.0, 7.0]


# -- spawn_entity -----------------------------------------------------------------------------
def test_spawn_a_single_link_urdf_as_a_rigid_object_at_its_initial_pose(sim):
    xyz, q = [4.0, -4.0, 40.0], yaw_quaternion(0.4)
    response = ok(spawn(sim, "block_a", uri=str(BLOCK), at=(xyz, q), frame="world"))
    assert response.entity_name == "block_a"
    assert names(sim, categories=[EntityCategory.CATEGORY_OBJECT]) == \
        ["block_a", "box", "faller"]
    state = entity(sim, "block_a")
    assert position(state) == pytest.approx(xyz, abs=1e-12)
    assert orientation(state) == pytest.approx(q, abs=1e-12)
    assert linear(state) == [0.0, 0.0, 0.0]
    k = 100
    seen = len(sim.messages("/tf"))
    step(sim, k)
    z, v = ballistic(xyz[2], 0.0, k)
    state = entity(sim, "block_a")
    assert position(state) == pytest.approx([xyz[0], xyz[1], z], abs=1e-9)
    assert linear(state) == pytest.approx([0.0, 0.0, v], abs=1e-9)
    # a rigid object is a moving frame on /tf
    assert ("world", "block_a") in pairs(tf_at(sim, (k - 1) * DT, seen))


def test_spawn_from_a_file_uri_and_from_the_xml_text(sim):
    ok(spawn(sim, "by_uri", uri=BLOCK.as_uri(), at=([0.0, 5.0, 10.0],)))
    ok(spawn(sim, "by_text", text=BLOCK.read_text(), at=([0.0, 6.0, 10.0],)))
    assert names(sim, "^by_") == ["by_text", "by_uri"]
    assert position(entity(sim, "by_uri")) == [0.0, 5.0, 10.0]
    assert position(entity(sim, "by_text")) == [0.0, 6.0, 10.0]


def test_spawned_robot_gets_its_namespace_topics_and_frames(sim):
    sim.subscribe(JointState, "/arm2/joint_states", DEEP)
    sim.subscribe(String, "/arm2/robot_description", LATCHED)
    seen_static = len(sim.messages("/tf_static"))
    text = ARM.read_text()
    # lying on its side (turned 90 deg about y): gravity bends its joints
    on_side = [0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)]
    response = ok(spawn(sim, "spawned_arm", text=text, namespace="arm2",
                        at=([2.0, 2.0, 1.0], on_side)))
    assert response.entity_name == "spawned_arm"
    assert names(sim, categories=[EntityCategory.CATEGORY_ROBOT]) == \
        ["floater", "pendulum", "spawned_arm"]
    # /tf_static again, with the new robot's fixed frames
    static = pairs(next_tf_static(sim, seen_static))
    assert {("world", "arm2/world"), ("arm2/world", "arm2/base"),
            ("arm2/link2", "arm2/tool"), ("world", "ground")} <= static
    assert ("arm2/base", "arm2/link1") not in static
    assert sim.wait_for("/arm2/robot_description")[-1].data == text
    # joint states under its namespace, every step, stamped with the sim time
    step_until_received(sim, "/arm2/joint_states")
    seen = len(sim.messages("/arm2/joint_states"))
    t0, seen_tf = sim_time(sim), len(sim.messages("/tf"))
    step(sim, 10)
    states = sim.wait_for("/arm2/joint_states", seen + 10)[seen:seen + 10]
    assert [round((seconds(m.header.stamp) - t0) / DT) for m in states] == list(range(10))
    assert list(states[0].name) == ["shoulder", "elbow"]
    # its moving frames on /tf, at the joint angles of the joint states
    moving = tf_at(sim, t0 + 9 * DT, seen_tf)
    assert {("arm2/base", "arm2/link1"), ("arm2/link1", "arm2/link2")} <= pairs(moving)
    [shoulder] = [ts.transform for ts in moving.transforms if ts.child_frame_id == "arm2/link1"]
    assert shoulder.translation.z == pytest.approx(0.3, abs=1e-12)
    angle = 2 * math.atan2(shoulder.rotation.y, shoulder.rotation.w)
    assert abs(states[-1].position[0]) > 1e-6                 # it moves
    assert angle == pytest.approx(states[-1].position[0], abs=1e-9)
    # the root link (fixed) at the initial pose
    root = entity(sim, "spawned_arm")
    assert position(root) == pytest.approx([2.0, 2.0, 1.0], abs=1e-12)
    assert orientation(root) == pytest.approx(on_side, abs=1e-12)


def test_spawn_a_floating_base_robot_from_a_package_uri_at_its_initial_pose(sim):
    xyz, q = [-6.0, 4.0, 35.0], yaw_quaternion(2.0)
    response = ok(spawn(sim, "rover", uri="package://sim_node/data/robots/diff_drive/"
                        "diff_drive.urdf", at=(xyz, q)))
    assert response.entity_name == "rover"
    assert names(sim, categories=[EntityCategory.CATEGORY_ROBOT]) == \
        ["floater", "pendulum", "rover"]
    state = entity(sim, "rover")
    assert position(state) == pytest.approx(xyz, abs=1e-12)
    assert orientation(state) == pytest.approx(q, abs=1e-12)
    k = 120
    seen = len(sim.messages("/tf"))
    step(sim, k)
    z, v = ballistic(xyz[2], 0.0, k)
    state = entity(sim, "rover")
    assert position(state) == pytest.approx([xyz[0], xyz[1], z], abs=1e-6)
    assert linear(state) == pytest.approx([0.0, 0.0, v], abs=1e-6)
    # its base is a moving frame under its namespace (its name)
    [base] = [ts.transform for ts in tf_at(sim, (k - 1) * DT, seen).transforms
              if ts.child_frame_id == "rover/base_link"]
    assert base.translation.z == pytest.approx(ballistic(xyz[2], 0.0, k - 1)[0], abs=1e-6)


def test_taken_names_and_renaming(sim):
    taken = spawn(sim, "faller", uri=str(BLOCK), at=([0.0, 0.0, 5.0],)).result
    assert taken.result == Spawn.NAME_NOT_UNIQUE and "'faller' is taken" in taken.error_message
    renamed = ok(spawn(sim, "faller", uri=str(BLOCK), at=([0.0, 0.0, 5.0],),
                       allow_renaming=True))
    assert renamed.entity_name == "faller_1"
    again = ok(spawn(sim, "faller", uri=str(BLOCK), at=([0.0, 0.0, 6.0],), allow_renaming=True))
    assert again.entity_name == "faller_2"
    assert names(sim, "^faller") == ["faller", "faller_1", "faller_2"]
    assert position(entity(sim, "faller_2")) == [0.0, 0.0, 6.0]


def test_an_empty_name_takes_the_models_name_then_needs_renaming(sim):
    first = ok(spawn(sim, uri=str(ARM), at=([5.0, 0.0, 0.0],)))
    assert first.entity_name == "two_link_arm"
    sim.subscribe(String, "/two_link_arm/robot_description", LATCHED)
    assert sim.wait_for("/two_link_arm/robot_description")[-1].data == ARM.read_text()
    second = spawn(sim, uri=str(ARM), at=([6.0, 0.0, 0.0],)).result
    assert second.result == Spawn.NAME_NOT_UNIQUE and "two_link_arm" in second.error_message
    renamed = ok(spawn(sim, uri=str(ARM), at=([6.0, 0.0, 0.0],), allow_renaming=True))
    assert renamed.entity_name == "two_link_arm_1"
    # its namespace is its (new) name
    sim.subscribe(String, "/two_link_arm_1/robot_description", LATCHED)
    assert sim.wait_for("/two_link_arm_1/robot_description")[-1].data == ARM.read_text()
    # a model name that is no valid entity name: refused, or made valid when renaming
    dashed = BLOCK.read_text().replace('<robot name="block">', '<robot name="my-block">')
    invalid = spawn(sim, text=dashed).result
    assert invalid.result == Spawn.NAME_INVALID and "'my-block' is not valid" in \
        invalid.error_message
    assert ok(spawn(sim, text=dashed, allow_renaming=True)).entity_name == "my_block_1"


def test_bad_spawn_requests_get_the_standards_codes_and_add_nothing(sim, tmp_path):
    sdf = tmp_path / "model.sdf"
    sdf.write_text("<sdf version='1.9'><model name='m'/></sdf>")
    no_collision = BLOCK.read_text().replace("<collision>", "<!--").replace("</collision>",
                                                                             "-->")
    missing_link = ARM.read_text().replace('<child link="link2"/>', '<child link="link9"/>')
    block = str(BLOCK)
    cases = [
        (Spawn.NO_RESOURCE, "neither uri nor resource_string", dict(name="x")),
        (Result.NOT_FOUND, "no file", dict(name="x", uri=str(tmp_path / "none.urdf"))),
        (Spawn.UNSUPPORTED_FORMAT, "'.sdf' files are not supported", dict(name="x",
                                                                          uri=str(sdf))),
        (Result.NOT_FOUND, "cannot locate package 'no_such_package'", dict(
            name="x", uri="package://no_such_package/block.urdf")),
        (Spawn.UNSUPPORTED_FORMAT, "supported are file paths", dict(
            name="x", uri="http://example.com/block.urdf")),
        (Spawn.UNSUPPORTED_FORMAT, "not a URDF", dict(name="x", text=sdf.read_text())),
        (Spawn.UNSUPPORTED_FORMAT, "is not XML", dict(name="x", text="robot: {}")),
        (Spawn.RESOURCE_PARSE_ERROR, "malformed XML", dict(name="x", text="<robot name='a'>")),
        (Spawn.RESOURCE_PARSE_ERROR, "missing link 'link9'", dict(name="x", text=missing_link)),
        (Spawn.RESOURCE_PARSE_ERROR, "needs <collision>", dict(name="x", text=no_collision)),
        # a client's URDF gets none of the node's environment or files through $(env)/$(find)
        (Spawn.RESOURCE_PARSE_ERROR, "holds a substitution arg", dict(
            name="x", text=BLOCK.read_text().replace(
                '<robot name="block">', '<robot name="block"><link name="$(env HOME)"/>'))),
        (Spawn.RESOURCE_PARSE_ERROR, "holds a substitution arg", dict(
            name="x", text=BLOCK.read_text().replace(
                '<origin xyz="0 0 0" rpy="0 0 0"/>\n      <geometry>',
                '<origin xyz="$(optenv HOME 0 0 0)" rpy="0 0 0"/>\n      <geometry>'))),
        (Spawn.NAME_INVALID, "name '2fast' is not valid", dict(name="2fast", uri=block)),
        (Spawn.NAME_INVALID, "is not valid", dict(name="a/b", uri=block, allow_renaming=True)),
        (Spawn.NAMESPACE_INVALID, "not a valid ROS namespace", dict(
            name="x", uri=str(ARM), namespace="bad ns")),
        (Spawn.NAMESPACE_INVALID, "is used by robot 'pendulum'", dict(
            name="x", uri=str(ARM), namespace="/pendulum")),
        (Spawn.NAME_INVALID, "'world' is a TF frame of the world", dict(name="world",
                                                                         uri=block)),
        (Spawn.NAMESPACE_INVALID, "link frames world would be TF frames", dict(
            name="x", uri=str(ARM), namespace="/")),
        (Spawn.INVALID_POSE, "not a unit quaternion", dict(
            name="x", uri=block, at=([0.0, 0.0, 1.0], (0.0, 0.0, 0.5, 0.5)))),
        (Spawn.INVALID_POSE, "NaN or infinity", dict(name="x", uri=block,
                                                    at=([0.0, math.inf, 1.0],))),
        (Spawn.INVALID_POSE, "frame 'map'", dict(name="x", uri=block, frame="map")),
    ]
    seen_static = len(sim.messages("/tf_static"))
    for code, expected, fields in cases:
        response = spawn(sim, **fields)
        assert response.result.result == code, (fields, response.result)
        assert expected in response.result.error_message, (fields, response.result)
        assert os.environ["HOME"] not in response.result.error_message
        assert response.entity_name == ""
    assert names(sim) == WORLD_ENTITIES
    time.sleep(0.2)
    assert len(sim.messages("/tf_static")) == seen_static     # the world never changed


# -- delete_entity ----------------------------------------------------------------------------
def test_delete_a_world_entity_removes_it_from_entities_and_tf(sim):
    step(sim, 5)
    ok(call(sim, DeleteEntity, "delete_entity", entity="faller"))
    assert names(sim) == ["box", "floater", "ground", "pendulum"]
    assert call(sim, GetEntityState, "get_entity_state",
                entity="faller").result.result == Result.NOT_FOUND
    t, seen = sim_time(sim), len(sim.messages("/tf"))
    step(sim, 3)
    after = tf_at(sim, t + 2 * DT, seen)
    assert ("world", "box") in pairs(after) and ("world", "faller") not in pairs(after)
    again = call(sim, DeleteEntity, "delete_entity", entity="faller").result
    assert again.result == Result.NOT_FOUND and "no entity named 'faller'" in again.error_message


def test_delete_a_spawned_robot_stops_its_topics_and_frames(sim):
    sim.subscribe(JointState, "/gone/joint_states", DEEP)
    ok(spawn(sim, "gone", uri=str(ARM), at=([0.0, 3.0, 0.0],)))
    step_until_received(sim, "/gone/joint_states")
    seen_static = len(sim.messages("/tf_static"))
    ok(call(sim, DeleteEntity, "delete_entity", entity="gone"))
    assert "gone" not in names(sim)
    static = pairs(next_tf_static(sim, seen_static))
    assert not any(child.startswith("gone/") for _, child in static)
    t, seen = sim_time(sim), len(sim.messages("/tf"))
    seen_pendulum = len(sim.messages("/pendulum/joint_states"))
    step(sim, 20)
    moving = tf_at(sim, t + 19 * DT, seen)
    assert not any(child.startswith("gone/") for _, child in pairs(moving))
    # the pendulum's joint states of those steps arrived: none of the deleted robot's did
    sim.wait_for("/pendulum/joint_states", seen_pendulum + 20)
    time.sleep(0.2)
    assert all(seconds(m.header.stamp) < t for m in sim.messages("/gone/joint_states"))
    # and its endpoints left the ROS graph: publishers, command subscriptions, description
    graph = sim.node
    deadline = time.monotonic() + 20.0
    while (graph.count_publishers("/gone/joint_states")
           + graph.count_subscribers("/gone/joint_commands")
           + graph.count_subscribers("/gone/position_commands")
           + graph.count_publishers("/gone/robot_description")) > 0:
        assert time.monotonic() < deadline, "the deleted robot's endpoints are still there"
        time.sleep(0.05)
    assert graph.count_publishers("/pendulum/joint_states") == 1


# -- reset_simulation: spawned entities, plugins ------------------------------------------------
def test_reset_spawned_removes_spawned_and_restores_deleted_at_initial_state(sim):
    step(sim, 30)
    ok(spawn(sim, "extra", uri=str(BLOCK), at=([0.0, -5.0, 10.0],)))
    ok(call(sim, DeleteEntity, "delete_entity", entity="faller"))
    ok(call(sim, DeleteEntity, "delete_entity", entity="ground"))
    step(sim, 20)
    floater_before = entity(sim, "floater")
    seen_static = len(sim.messages("/tf_static"))
    ok(call(sim, ResetSimulation, "reset_simulation", scope=Scope.SCOPE_SPAWNED))
    assert names(sim) == WORLD_ENTITIES
    faller = entity(sim, "faller")
    assert position(faller) == [-2.0, 0.0, FALLER_Z] and linear(faller) == [0.0, 0.0, 0.0]
    assert ("world", "ground") in pairs(next_tf_static(sim, seen_static))
    # time and the other entities' states kept
    assert sim_time(sim) == pytest.approx(50 * DT, abs=1e-12)
    assert entity(sim, "floater") == floater_before


def test_a_deleted_world_robot_comes_back_with_its_plugins_and_controller(sim):
    step_until_received(sim, "/pendulum/joint_states")
    ok(call(sim, ResetSimulation, "reset_simulation"))
    reference = [q[0] for _, q in _pendulum_states(sim, 200)]   # from the initial state
    ok(call(sim, DeleteEntity, "delete_entity", entity="pendulum"))
    seen = len(sim.messages("/pendulum/joint_states"))
    step(sim, 20)
    assert sim_time(sim) == pytest.approx(220 * DT, abs=1e-12)
    seen_static = len(sim.messages("/tf_static"))
    ok(call(sim, ResetSimulation, "reset_simulation", scope=Scope.SCOPE_SPAWNED))
    assert names(sim) == WORLD_ENTITIES
    assert ("world", "pendulum/world") in pairs(next_tf_static(sim, seen_static))
    assert len(sim.messages("/pendulum/joint_states")) == seen     # none while it was gone
    # it starts over from its initial state at the current time: the same motion. (Its
    # joint_states publisher is new: received once discovery has matched it.)
    step_until_received(sim, "/pendulum/joint_states")
    _pendulum_states(sim, 420 - round(sim_time(sim) / DT))
    states = sim.messages("/pendulum/joint_states")[seen:]
    k = [round(seconds(m.header.stamp) / DT) - 220 for m in states]
    assert k == list(range(k[0], 200)) and k[0] < 100
    assert [m.position[0] for m in states] == pytest.approx([reference[i] for i in k],
                                                            abs=1e-12)


def test_reset_all_after_spawning_and_deleting_is_the_initial_world(sim):
    ok(spawn(sim, "extra", uri=str(ARM), at=([0.0, -5.0, 0.0],)))
    ok(call(sim, DeleteEntity, "delete_entity", entity="box"))
    step(sim, 30)
    seen_static = len(sim.messages("/tf_static"))
    ok(call(sim, ResetSimulation, "reset_simulation", scope=Scope.SCOPE_ALL))
    assert names(sim) == WORLD_ENTITIES
    assert sim_time(sim) == 0.0
    assert position(entity(sim, "box")) == [1.0, 0.0, BOX_SIDE / 2]
    assert position(entity(sim, "faller")) == [-2.0, 0.0, FALLER_Z]
    static = pairs(next_tf_static(sim, seen_static))     # a new message, the world's frames
    assert ("world", "ground") in static and not any(c.startswith("extra/") for _, c in static)


def test_reset_state_puts_a_spawned_entity_back_where_it_was_spawned(sim):
    step(sim, 20)
    ok(spawn(sim, "dropped", uri=str(BLOCK), at=([7.0, 0.0, 12.0],)))
    step(sim, 100)
    assert position(entity(sim, "dropped"))[2] == pytest.approx(ballistic(12.0, 0.0, 100)[0],
                                                                abs=1e-9)
    ok(call(sim, ResetSimulation, "reset_simulation", scope=Scope.SCOPE_STATE))
    dropped = entity(sim, "dropped")
    assert position(dropped) == [7.0, 0.0, 12.0] and linear(dropped) == [0.0, 0.0, 0.0]
    assert position(entity(sim, "faller")) == [-2.0, 0.0, FALLER_Z]
    assert sim_time(sim) == pytest.approx(120 * DT, abs=1e-12)


def _pendulum_states(client, steps: int, chunk: int = 20) -> list:
    """(stamp, position) of the pendulum's joint states of the next `steps` steps, stepped in
    chunks that a loaded reader keeps up with (the publisher keeps the last 10 messages)."""
    seen = len(client.messages("/pendulum/joint_states"))
    for done in range(0, steps, chunk):
        n = min(chunk, steps - done)
        step(client, n)
        client.wait_for("/pendulum/joint_states", seen + done + n)
    return [(seconds(m.header.stamp), tuple(m.position))
            for m in client.messages("/pendulum/joint_states")[seen:seen + steps]]


def test_reset_drops_a_running_trajectory_and_restarts_joint_states_at_zero(sim):
    step_until_received(sim, "/pendulum/joint_states")
    ok(call(sim, ResetSimulation, "reset_simulation"))
    reference = _pendulum_states(sim, 600)                  # never had a trajectory
    assert reference[0] == (0.0, (0.5,))                    # stamp 0, the initial config
    assert [round(t / DT) for t, _ in reference] == list(range(600))
    ok(call(sim, ResetSimulation, "reset_simulation"))
    publisher = sim.publisher(JointTrajectory, "/pendulum/joint_trajectory")
    wait_until(lambda: publisher.get_subscription_count() > 0, what="trajectory subscriber")
    publisher.publish(JointTrajectory(joint_names=["joint1"], points=[JointTrajectoryPoint(
        positions=[2.0], time_from_start=Duration(sec=1))]))

    def off_reference() -> bool:
        # the trajectory runs once the node has it: the pendulum leaves the reference path
        t, q = _pendulum_states(sim, 25)[-1]
        return q[0] > reference[round(t / DT)][1][0] + 0.01
    assert any(off_reference() for _ in range(23)), "the trajectory never ran"
    ok(call(sim, ResetSimulation, "reset_simulation"))
    assert _pendulum_states(sim, 600) == reference           # the trajectory is gone


def test_reset_time_restarts_a_rate_limited_schedule_at_zero(sim):
    topic = "/floater/joint_states"
    step_until_received(sim, topic, period=1 / FLOATER_RATE)
    ok(call(sim, ResetSimulation, "reset_simulation"))
    seen = len(sim.messages(topic))
    step(sim, 237)                          # stamps 0, 0.01, ... 0.23; the next due at 0.24
    stamps = [seconds(m.header.stamp) for m in sim.wait_for(topic, seen + 24)[seen:]]
    assert stamps == pytest.approx([k / FLOATER_RATE for k in range(24)], abs=1e-12)
    seen += 24
    ok(call(sim, ResetSimulation, "reset_simulation", scope=Scope.SCOPE_TIME))
    step(sim, 35)
    stamps = [seconds(m.header.stamp) for m in sim.wait_for(topic, seen + 4)[seen:]]
    assert stamps == pytest.approx([0.0, 0.01, 0.02, 0.03], abs=1e-12)
    time.sleep(0.2)
    assert len(sim.messages(topic)) == seen + 4


# -- the node goes on ---------------------------------------------------------------------------
def test_after_all_bad_requests_the_node_still_answers_and_steps(node_and_client, sim):
    node, _ = node_and_client
    for _ in range(3):
        spawn(sim, "x", text="<robot")
        call(sim, GetEntities, "get_entities", filters=EntityFilters(filter="(["))
        set_state(sim, "faller", pose([math.nan, 0.0, 0.0]))
        call(sim, DeleteEntity, "delete_entity", entity="ghost")
    step(sim, 10)
    assert sim_time(sim) == pytest.approx(10 * DT, abs=1e-12)
    assert names(sim) == WORLD_ENTITIES
    assert node.process.poll() is None
