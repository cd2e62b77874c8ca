"""Issue 10 §4, end to end: the node as users start it (a separate process,
tests/ros/node_harness.py) under the abuses the issue measured, each refused or survived, the
node answering and stepping afterwards (DESIGN.md §8, README "Safety and bounds").

One node for most tests, started paused at real_time_factor 0 with its own data directory
and max_read_size 1 MB, on a world written here: the pendulum (continuous joint, PID-held at
0.5 rad, the default plugins), `faller` (a 0.5 kg box) 50 m up, the ground. Every test starts
from the initial state (reset_simulation, paused). Processes of their own for what ends a
node: start-up bounds, SIGINT during a huge step request, bad world files.

References: the request's own values (refusals change nothing: the same entity state as
before), closed-form free fall, the file system (nothing created outside the data directory,
victims unchanged), and sim time (never wall-clock speed, except the spec's answer-within
bounds: a call that hangs fails at its timeout).
"""
from __future__ import annotations

import math
import os
import struct
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import Pose, Twist, Vector3, Wrench
from rclpy.action import ActionClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import EntityFilters, Resource, Result, SimulationState
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntityState,
                                       GetSimulationState, ResetSimulation, SetEntityState,
                                       SetSimulationState, SpawnEntity, StepSimulation)
from std_msgs.msg import Float64MultiArray

from node_harness import (DEEP, PENDULUM, REPO, Client, NodeProcess, call, entity, next_domain,
                          set_parameter, sim_time, step)
from sim_node.msg import SimStatus
from sim_node.srv import (ApplyWrench, GetRealTimeFactor, Record, RestoreState, SaveState,
                          SetRealTimeFactor)

pytestmark = [pytest.mark.ros]

DT = 0.001                  # [s]
G = 9.81                    # [m/s^2]
FALLER_Z = 50.0             # [m]
MAX_READ = 1_000_000        # [bytes] the node's max_read_size
U64 = 2 ** 64 - 1
WORLD = f"""
simulation: {{physics_dt: {DT}, gravity: [0.0, 0.0, {-G}]}}
robots:
{PENDULUM}rigid_objects:
  - name: faller
    geometry: {{box: [0.1, 0.1, 0.1]}}
    mass: 0.5
    pose: {{position: [-2.0, 0.0, {FALLER_Z}], orientation: [0, 0, 0, 1]}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
"""
FLAT_STL = ("solid flat\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
            "vertex 0 1 0\nendloop\nendfacet\nendsolid flat\n")
INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" '
            'ixz="0" iyz="0"/></inertial>')
FLAT_ROBOT = f"""<robot name="flatbot">
  <link name="base">{INERTIAL}</link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="arm">{INERTIAL}<collision><geometry><mesh filename="flat.stl"/></geometry>
  </collision></link>
</robot>
"""
BOX_ROBOT = f"""<robot name="boxbot">
  <link name="base">{INERTIAL}</link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="arm">{INERTIAL}<collision><geometry><box size="0.1 0.1 0.1"/></geometry>
  </collision></link>
</robot>
"""


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """(the node's data directory, an outside directory with a victim file)."""
    base = tmp_path_factory.mktemp("safety")
    outside = base / "outside"
    outside.mkdir()
    (outside / "victim").write_bytes(b"precious")
    (base / "world.yaml").write_text(WORLD)
    (base / "data").mkdir()
    return base, base / "data", outside


@pytest.fixture(scope="module")
def client(place):
    base, data, _ = place
    domain = next_domain()
    node = NodeProcess(domain, {"world": str(base / "world.yaml"), "paused": True,
                                "real_time_factor": 0.0, "status_rate": 0.0,
                                "data_dir": str(data), "max_read_size": MAX_READ},
                       log_path=base / "node.log")
    client = Client(domain)
    # services are called from a second client with no subscriptions: its answers do not
    # queue behind the per-step messages this one receives (after a burst of thousands of
    # steps its executor may be busy for seconds; the answer-within bounds are the node's)
    client.caller = Client(domain, "caller")
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=1000)
        client.subscribe(JointState, "/pendulum/joint_states", DEEP, keep=5000)
        client.subscribe(SimStatus, "/sim/status", DEEP)
        yield client
    finally:
        client.caller.close()
        client.close()
        node.stop()


@pytest.fixture
def sim(client):
    set_run_state(client, SimulationState.STATE_PAUSED)     # (also ends a step request)
    assert call(client, ResetSimulation, "reset_simulation").result.result == Result.OK
    return client


def set_run_state(client, state: int):
    return call(client, SetSimulationState, "set_simulation_state",
                state=SimulationState(state=state)).result


def position(state) -> list:
    p = state.pose.position
    return [p.x, p.y, p.z]


def last_clock(client) -> float:
    messages = client.messages("/clock")
    if not messages:
        return -1.0
    c = messages[-1].clock
    return c.sec + c.nanosec * 1e-9


def wait_until(predicate, timeout: float = 20.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise TimeoutError(f"{what} not met within {timeout} s")


def tree(path) -> set:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def assert_no_nan_published(client):
    for message in client.messages("/pendulum/joint_states"):
        assert all(math.isfinite(x) for x in (*message.position, *message.velocity,
                                             *message.effort)), message


def call_async(client, srv_type, name, **fields):
    service = getattr(client, "caller", client).node.create_client(srv_type, f"/sim/{name}")
    assert service.wait_for_service(timeout_sec=20.0)
    return service.call_async(srv_type.Request(**fields))


# -- files written on a client's request ------------------------------------------------------
def test_save_state_writes_only_inside_the_data_directory(sim, place):
    # measured: save_state overwrote an arbitrary writable file
    _, data, outside = place
    (data / "out").symlink_to(outside)
    (data / "victim_link").symlink_to(outside / "victim")
    (data / "adir").mkdir()
    os.mkfifo(data / "fifo")
    before = tree(data)
    for path, message in ((str(outside / "victim"), "outside the data directory"),
                          ("../outside/victim", "contains '..'"),
                          ("out/victim", "leads outside the data directory"),
                          ("out/new.bin", "leads outside the data directory"),
                          ("victim_link", "is a symbolic link"),
                          ("adir", "is a directory"), ("fifo", "is a FIFO"),
                          ("bad\nname", "control character U+000A"),
                          ("\x1b[2Jstate", "control character U+001B")):
        response = call(sim, SaveState, "save_state", path=path)
        assert not response.success and message in response.message, (path, response.message)
    assert (outside / "victim").read_bytes() == b"precious" and tree(outside) == {"victim"}
    assert tree(data) == before
    saved = call(sim, SaveState, "save_state", path="runs/first.bin")
    assert saved.success, saved.message
    assert (data / "runs" / "first.bin").stat().st_size == saved.size > 0


def test_record_creates_bags_only_inside_the_data_directory(sim, place):
    # measured: record created directories anywhere, with control characters in names
    _, data, outside = place
    if not (data / "out").is_symlink():
        (data / "out").symlink_to(outside)
    before = tree(data)
    for directory, message in ((str(outside / "bag"), "outside the data directory"),
                               ("../outside/bag", "contains '..'"),
                               ("out/bag", "leads outside the data directory"),
                               ("bag\r\x07", "control character U+000D")):
        response = call(sim, Record, "record", start=True, directory=directory)
        assert not response.success and message in response.message, response.message
    assert tree(outside) == {"victim"} and tree(data) == before


# -- files read on a client's request ---------------------------------------------------------
def test_non_regular_and_oversized_files_are_refused_at_once(sim, place):
    # measured: restore_state from /dev/zero read 10.7 GB; from a FIFO it hung forever
    base, data, _ = place
    os.mkfifo(base / "pipe")
    os.mkfifo(base / "pipe.urdf")
    (base / "dir.urdf").mkdir()
    for name in ("huge.bin", "huge.urdf"):
        with open(base / name, "wb") as out:
            out.truncate(300 * 1024 * 1024)         # sparse: no disk blocks
    for path, message in (("/dev/zero", "is a character device"),
                          (str(base / "pipe"), "is a FIFO"), (str(base), "is a directory"),
                          (str(base / "huge.bin"), f"more than the limit of {MAX_READ}")):
        response = call(sim, RestoreState, "restore_state", timeout=5.0, path=path)
        assert not response.success and message in response.message, response.message
    for uri, message in ((str(base / "pipe.urdf"), "is a FIFO"),
                         (str(base / "dir.urdf"), "is a directory"),
                         (f"file://{base / 'huge.urdf'}", f"more than the limit of {MAX_READ}")):
        response = call(sim, SpawnEntity, "spawn_entity", timeout=5.0, name="x",
                        entity_resource=Resource(uri=uri))
        assert response.result.result == Result.NOT_FOUND, response.result.error_message
        assert message in response.result.error_message
    big = call(sim, SpawnEntity, "spawn_entity", name="x", entity_resource=Resource(
        resource_string="<robot name='x'>" + " " * MAX_READ + "</robot>"))
    assert big.result.result == SpawnEntity.Response.RESOURCE_PARSE_ERROR
    assert "more than the limit" in big.result.error_message
    step(sim, 3)
    assert sim_time(sim) == pytest.approx(3 * DT, abs=1e-12)


# -- numbers ------------------------------------------------------------------------------------
def test_absurd_poses_velocities_and_forces_are_refused_with_the_field_named(sim):
    # measured: 2,000 m/s or a 1e308 pose or force froze the simulation in UNSTABLE
    before = entity(sim, "faller")
    state = entity(sim, "faller")
    state.twist = Twist(linear=Vector3(x=2000.0))
    refused = call(sim, SetEntityState, "set_entity_state", entity="faller", state=state,
                   set_twist=True).result
    assert refused.result == Result.OPERATION_FAILED
    assert "state.twist.linear: [2000.0, 0.0, 0.0] is beyond the bound |v| <= 1000 m/s" \
        in refused.error_message
    state = entity(sim, "faller")
    state.pose.position.x = 1e308
    refused = call(sim, SetEntityState, "set_entity_state", entity="faller", state=state,
                   set_pose=True).result
    assert refused.result == SetEntityState.Response.INVALID_POSE
    assert "state.pose.position: [1e+308" in refused.error_message
    wrench = call(sim, ApplyWrench, "apply_wrench", entity="faller", duration=0.1,
                  wrench=Wrench(force=Vector3(z=1e308)))
    assert not wrench.success and "wrench.force: [0.0, 0.0, 1e+308] is beyond the bound " \
        "|value| <= 1e+09 N" in wrench.message
    pose = Pose()
    pose.position.z = -1e5
    pose.orientation.w = 1.0
    spawn = call(sim, SpawnEntity, "spawn_entity", name="far", initial_pose=_stamped(pose),
                 entity_resource=Resource(resource_string=BOX_ROBOT))
    assert spawn.result.result == SpawnEntity.Response.INVALID_POSE
    assert "initial_pose.position" in spawn.result.error_message
    after = entity(sim, "faller")
    assert position(after) == position(before) and after.twist == before.twist
    step(sim, 10)
    assert all(math.isfinite(x) for x in position(entity(sim, "faller")))


def _stamped(pose):
    from geometry_msgs.msg import PoseStamped

    stamped = PoseStamped(pose=pose)
    stamped.header.frame_id = "world"
    return stamped


def test_a_state_with_nan_or_absurd_values_is_refused_and_nothing_publishes_nan(sim, place):
    # measured: a state payload with NaN published NaN while status said NORMAL
    _, data, _ = place
    step(sim, 5)
    assert call(sim, SaveState, "save_state", path="good.bin").success
    good = (data / "good.bin").read_bytes()
    (size,) = struct.unpack_from("<Q", good, 8)
    values = np.frombuffer(good[16 + size:], dtype=np.float64).copy()
    for k, value, message in ((0, math.nan, "contains NaN"), (1, -1e308, "beyond the bound"),
                              (0, 1e300, "the time 1e+300")):
        corrupt = values.copy()
        corrupt[k] = value          # the time; the pendulum's joint angle
        (data / "bad.bin").write_bytes(good[:16 + size] + corrupt.tobytes())
        response = call(sim, RestoreState, "restore_state", path="bad.bin")
        assert not response.success and message in response.message, response.message
    assert sim_time(sim) == pytest.approx(5 * DT, abs=1e-12)
    step(sim, 20)
    assert sim_time(sim) == pytest.approx(25 * DT, abs=1e-12)
    assert_no_nan_published(sim)


def test_a_command_beyond_the_bounds_is_rejected_and_the_pid_holds(sim):
    # measured: a config of -1e308 published NaN. The pendulum's joint is continuous (no URDF
    # limits): the documented bound |q| <= 1e4 rad applies.
    publisher = sim.publisher(Float64MultiArray, "/pendulum/position_commands")
    wait_until(lambda: publisher.get_subscription_count() > 0, what="command subscriber")
    publisher.publish(Float64MultiArray(data=[-1e308]))
    time.sleep(0.5)                 # (delivery; a rejected command changes nothing anyway)
    step(sim, 200)
    latest = sim.messages("/pendulum/joint_states")[-1]
    assert abs(latest.position[0] - 0.5) < 0.1      # held at its initial 0.5 rad
    assert_no_nan_published(sim)


def test_a_blow_up_is_reported_recovered_from_within_2_s_and_the_node_goes_on(sim):
    # 1e9 N (the bound, accepted) on a 0.5 kg box: 2e6 m/s after one step, far beyond what
    # the step halving absorbs: the engine reports STATUS_UNSTABLE
    assert set_parameter(sim, "status_rate", 50.0).successful
    try:
        step(sim, 1500)                         # good states kept at 0 s (reset) and 1 s
        z_before = position(entity(sim, "faller"))[2]
        seen = len(sim.messages("/sim/status"))
        pushed = call(sim, ApplyWrench, "apply_wrench", entity="faller", duration=0.05,
                      wrench=Wrench(force=Vector3(z=1e9)))
        assert pushed.success, pushed.message
        step(sim, 3)
        t = sim_time(sim)
        assert 1.5 - 2.0 <= t < 1.5 and t == pytest.approx(1.0 + 2 * DT, abs=1e-9)
        wait_until(lambda: any(m.engine_status == SimStatus.STATUS_UNSTABLE
                               for m in sim.messages("/sim/status")[seen:]), what="the report")
        [report] = [m for m in sim.messages("/sim/status")[seen:]
                    if m.engine_status == SimStatus.STATUS_UNSTABLE]
        assert "unstable at t = 1.500000 s: restored the state of t = 1.000000 s" \
            in report.engine_status_string
        z = position(entity(sim, "faller"))[2]
        assert math.isfinite(z) and z > z_before      # back in time, higher up
        step(sim, 10)
        assert sim_time(sim) == pytest.approx(t + 10 * DT, abs=1e-9)
        assert position(entity(sim, "faller"))[2] < z      # falling on: the wrench ended
        assert_no_nan_published(sim)
    finally:
        set_parameter(sim, "status_rate", 0.0)


# -- bounds and long requests -----------------------------------------------------------------
def test_real_time_factor_bounds_on_the_service_and_the_parameter(sim):
    # measured: set_real_time_factor 1e-300 stopped the clock for good
    try:
        for bad in (1e-300, -1.0, 2000.0, math.nan, math.inf):
            response = call(sim, SetRealTimeFactor, "set_real_time_factor",
                            real_time_factor=bad)
            assert not response.success and "within [0.001, 1000]" in response.message
            result = set_parameter(sim, "real_time_factor", bad)
            assert not result.successful and "within [0.001, 1000]" in result.reason
        for good in (1e-3, 1e3, 0.0):
            assert call(sim, SetRealTimeFactor, "set_real_time_factor",
                        real_time_factor=good).success
            assert call(sim, GetRealTimeFactor,
                        "get_real_time_factor").target_real_time_factor == good
    finally:
        call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=0.0)


def test_at_the_slowest_real_time_factor_services_answer_during_the_pacing_wait(sim):
    # a step every second of wall time: services run during the pacing wait, not after it.
    # Served only after each step, 6 calls would span at least 5 steps of sim time; served
    # during the wait they span what 6 calls take in seconds (a few at most, even loaded). How
    # fast they answer is a wall-clock matter, measured in README; the 20 s only bound a hang.
    assert call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=1e-3).success
    try:
        assert set_run_state(sim, SimulationState.STATE_PLAYING).result == Result.OK
        steps = []
        for _ in range(6):
            entity_state = call(sim, GetEntityState, "get_entity_state", timeout=20.0,
                                entity="faller")
            assert entity_state.result.result == Result.OK
            stamp = entity_state.state.header.stamp
            steps.append(round((stamp.sec + stamp.nanosec * 1e-9) / DT))
        assert max(steps) - min(steps) <= 3, steps
        assert set_run_state(sim, SimulationState.STATE_PAUSED).result == Result.OK
    finally:
        call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=0.0)


def test_a_step_request_of_2_64_steps_runs_in_chunks_and_is_interrupted(sim):
    # measured: step_simulation with 2^64 - 1 steps blocked every service and SIGINT
    future = call_async(sim, StepSimulation, "step_simulation", steps=U64)
    wait_until(lambda: last_clock(sim) > 0.2, what="steps")
    t0 = last_clock(sim)
    # other services answer while it runs: each answer is served between two of its steps (the
    # entity's stamps advance from one answer to the next, the request goes on). How fast they
    # answer is a wall-clock matter (README: 0.1 s median here); the 20 s only bound a hang.
    stamps = []
    for _ in range(3):
        assert call(sim, GetSimulationState, "get_simulation_state",
                    timeout=20.0).state.state == SimulationState.STATE_PAUSED
        answer = call(sim, GetEntityState, "get_entity_state", timeout=20.0, entity="faller")
        assert answer.result.result == Result.OK
        stamps.append(answer.state.header.stamp.sec * 10**9 + answer.state.header.stamp.nanosec)
    assert stamps[0] < stamps[1] < stamps[2] and not future.done()
    busy = call(sim, StepSimulation, "step_simulation", timeout=20.0, steps=1).result
    assert busy.result == Result.OPERATION_FAILED
    assert "another step request is running" in busy.error_message
    wait_until(lambda: last_clock(sim) > t0, what="the clock advancing")
    # PAUSED while a request steps the paused simulation: the request ends, the answer is OK
    assert set_run_state(sim, SimulationState.STATE_PAUSED).result == Result.OK
    wait_until(future.done, 5.0, "the interrupted request's answer")
    result = future.result().result
    assert result.result == Result.OPERATION_FAILED
    assert "interrupted by set_simulation_state after" in result.error_message
    done = int(result.error_message.split(" after ")[1].split()[0])
    assert f"of {U64} steps" in result.error_message
    assert sim_time(sim) == pytest.approx(done * DT, abs=1e-9) and done > 200
    step(sim, 2)                # stepping works again
    assert sim_time(sim) == pytest.approx((done + 2) * DT, abs=1e-9)


@pytest.fixture(scope="module")
def steps_action(client):
    # module-scoped: an action client destroyed while the client's executor spins ends it
    action = ActionClient(client.caller.node, SimulateSteps, "/sim/simulate_steps",
                          feedback_sub_qos_profile=DEEP)
    assert action.wait_for_server(timeout_sec=20.0)
    return action


def test_simulate_steps_of_2_64_steps_cancels_at_any_step(sim, steps_action):
    action = steps_action
    feedback = []
    handle = action.send_goal_async(SimulateSteps.Goal(steps=U64),
                                    feedback_callback=lambda m: feedback.append(m.feedback))
    wait_until(handle.done, what="goal accepted")
    goal = handle.result()
    assert goal.accepted
    wait_until(lambda: len(feedback) >= 3, what="feedback")
    assert call(sim, GetSimulationState, "get_simulation_state", timeout=20.0).result.result \
        == Result.OK
    cancel = goal.cancel_goal_async()
    wait_until(cancel.done, what="cancel answered")
    result = goal.get_result_async()
    wait_until(result.done, 5.0, "the cancelled goal's result")
    message = result.result().result.result.error_message
    done = int(message.split()[2])          # "canceled after k of n steps"
    assert message == f"canceled after {done} of {U64} steps"
    assert sim_time(sim) == pytest.approx(done * DT, abs=1e-9)


# -- name filters ---------------------------------------------------------------------------
def test_a_backtracking_name_filter_does_not_stall_the_clock(sim):
    # measured: get_entities with (a+)+$ stalled the clock 3 s. With a backtracking engine a
    # name of 40 a's followed by '_' costs 2^40 steps; RE2 is linear, and off the simulation
    # thread the clock would go on even if it were not.
    name = "a" * 40 + "_"
    spawned = call(sim, SpawnEntity, "spawn_entity", name=name,
                   entity_resource=Resource(uri=str(REPO / "tests/ros/data/block.urdf")))
    assert spawned.result.result == Result.OK, spawned.result.error_message
    assert set_run_state(sim, SimulationState.STATE_PLAYING).result == Result.OK
    try:
        wait_until(lambda: last_clock(sim) > 0.01, what="playing")
        t0 = last_clock(sim)
        for pattern in ("(a+)+$", "(a|aa)+$", "(a*)*b", "^(a+)+_$"):
            response = call(sim, GetEntities, "get_entities", timeout=5.0,
                            filters=EntityFilters(filter=pattern))
            assert response.result.result == Result.OK
            assert response.entities == ([name] if pattern == "^(a+)+_$" else [])
        wait_until(lambda: last_clock(sim) > t0 + 0.01, 5.0, "sim time advancing")
    finally:
        set_run_state(sim, SimulationState.STATE_PAUSED)


def test_patterns_re2_rejects_are_errors_naming_them(sim):
    for pattern in (r"(a)\1", "(?<=a)b", "a{1001}", "("):
        response = call(sim, GetEntities, "get_entities", filters=EntityFilters(filter=pattern))
        assert response.result.result == Result.OPERATION_FAILED
        assert f"filters.filter '{pattern}' is not a valid regular expression for RE2" \
            in response.result.error_message
    posix = call(sim, GetEntities, "get_entities", filters=EntityFilters(filter="^[[:alpha:]]+$"))
    assert posix.entities == ["ground", "faller", "pendulum"]


# -- atomic spawn and delete ---------------------------------------------------------------------
def test_a_spawn_whose_mesh_fails_leaves_nothing_behind(sim, place):
    # measured: spawn_entity whose mesh failed (QhullError) left the name taken
    base, _, _ = place
    (base / "flat.stl").write_text(FLAT_STL)
    (base / "flatbot.urdf").write_text(FLAT_ROBOT)
    topics_before = set(dict(sim.node.get_topic_names_and_types()))
    for _ in range(2):
        failed = call(sim, SpawnEntity, "spawn_entity", name="flatbot",
                      entity_resource=Resource(uri=str(base / "flatbot.urdf")))
        assert failed.result.result == SpawnEntity.Response.UNSUPPORTED_ASSETS
        message = failed.result.error_message
        assert "cannot be simulated: the convex hull of a collision mesh cannot be built" \
            in message
        assert "Error" not in message and "Qhull" not in message and "QH" not in message
    names = call(sim, GetEntities, "get_entities").entities
    assert "flatbot" not in names and names == ["ground", "faller", "pendulum"]
    time.sleep(1.0)                 # (graph updates travel by discovery)
    assert not [t for t in dict(sim.node.get_topic_names_and_types()) if "flatbot" in t]
    assert set(dict(sim.node.get_topic_names_and_types())) <= topics_before | {
        "/parameter_events", "/rosout"}
    malformed = call(sim, SpawnEntity, "spawn_entity", name="flatbot", entity_resource=Resource(
        resource_string="<robot name='x'><link name='a'></robot>"))
    assert malformed.result.result == SpawnEntity.Response.RESOURCE_PARSE_ERROR
    spawned = call(sim, SpawnEntity, "spawn_entity", name="flatbot",
                   entity_resource=Resource(resource_string=BOX_ROBOT))
    assert spawned.result.result == Result.OK and spawned.entity_name == "flatbot"
    step(sim, 5)
    deleted = call(sim, DeleteEntity, "delete_entity", entity="flatbot")
    assert deleted.result.result == Result.OK
    assert call(sim, GetEntities, "get_entities").entities == ["ground", "faller", "pendulum"]


# -- processes of their own ---------------------------------------------------------------------
def _start(tmp_path, params, name="node"):
    domain = next_domain()
    node = NodeProcess(domain, params, log_path=tmp_path / f"{name}.log")
    return node, domain


@pytest.mark.parametrize("params, message", [
    ({"physics_dt": 1e-7}, "physics_dt must be within [1e-05, 0.1] s, got 1e-07"),
    ({"physics_dt": 0.5}, "physics_dt must be within [1e-05, 0.1] s, got 0.5"),
    ({"real_time_factor": 1e-300}, "real_time_factor must be a number >= 0: 0 (as fast as "
                                   "possible) or within [0.001, 1000], got 1e-300"),
    ({"lockstep_timeout": 1e9}, "lockstep_timeout must be within [0, 60] s"),
    ({"max_read_size": 0}, "max_read_size must be a size >= 1"),
])
def test_out_of_bound_parameters_at_start_exit_2_with_one_line(tmp_path, params, message):
    node, _ = _start(tmp_path, {"world": str(REPO / "data/worlds/pendulum.yaml"), **params})
    try:
        assert node.process.wait(30) == 2
    finally:
        node.stop()
    lines = node.log().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sim_node: cannot start: ")
    assert message in lines[0]


def test_sigint_stops_a_node_busy_with_a_huge_step_request_within_5_s(tmp_path):
    node, domain = _start(tmp_path, {"world": str(REPO / "data/worlds/pendulum.yaml"),
                                     "paused": True, "real_time_factor": 0.0})
    client = Client(domain)
    try:
        client.subscribe(Clock, "/clock", DEEP, keep=10)
        call_async(client, StepSimulation, "step_simulation", steps=U64)
        wait_until(lambda: last_clock(client) > 0.1, what="stepping")
        os.killpg(node.process.pid, 2)
        assert node.process.wait(5.0) == 0
    finally:
        client.close()
        node.stop()


def _world_file(tmp_path, kind: str):
    if kind == "non-UTF-8":
        path = tmp_path / "latin1.yaml"
        path.write_bytes(b"robots:\n  - name: caf\xe9\n    urdf: x.urdf\n")
        return path, "not UTF-8 text (byte 0xe9 at offset 21)"
    if kind == "chain":
        n = 1000
        links = [f'<link name="l{k}">{INERTIAL}</link>' for k in range(n)]
        joints = [f'<joint name="j{k}" type="revolute"><parent link="l{k - 1}"/><child '
                  f'link="l{k}"/><origin xyz="0 0 0.01"/><axis xyz="0 1 0"/><limit lower="-1" '
                  f'upper="1" effort="10" velocity="1"/></joint>' for k in range(1, n)]
        path = tmp_path / "chain.urdf"
        path.write_text('<robot name="chain">' + "".join(links + joints) + "</robot>")
        return path, None
    if kind == "flat mesh":
        (tmp_path / "flat.stl").write_text(FLAT_STL)
        (tmp_path / "flatbot.urdf").write_text(FLAT_ROBOT)
        path = tmp_path / "flat.yaml"
        path.write_text("robots:\n  - {name: flatbot, urdf: flatbot.urdf}\n")
        return path, "the convex hull of a collision mesh cannot be built"
    noise = {"NaN rate": "{name: joint_state_publisher, config: {rate: .nan}}",
             "negative noise": "{name: joint_state_publisher, config: {position_noise: -1.0}}",
             "negative timeout": "{name: diff_drive, config: {left_joint: a, right_joint: b, "
                                 "cmd_timeout: -2.0}}"}[kind]
    path = tmp_path / "plugins.yaml"
    path.write_text(f"robots:\n  - name: pendulum\n    urdf: "
                    f"{REPO}/data/robots/pendulum/pendulum.urdf\n    plugins:\n      - {noise}\n")
    key = {"NaN rate": "'rate'", "negative noise": "position_noise must be a standard "
           "deviation >= 0, got -1.0", "negative timeout": "cmd_timeout must be a time >= 0"}
    return path, key[kind]


@pytest.mark.parametrize("kind", ["non-UTF-8", "chain", "flat mesh", "NaN rate",
                                  "negative noise", "negative timeout"])
def test_bad_world_files_exit_2_with_one_line_in_bounded_time_and_memory(tmp_path, kind):
    # measured: a 1,000-link chain raised RecursionError and exited 1; non-UTF-8 input raised
    # UnicodeDecodeError. The chain may also load (once the model builds trees iteratively).
    path, problem = _world_file(tmp_path, kind)
    running, status, peak_memory, log = _run_to_exit(tmp_path, path)
    assert peak_memory < 1024 * 1024                # [KiB] peak RSS under 1 GB
    if kind == "chain" and running:                 # it loaded and ran: fine
        assert os.waitstatus_to_exitcode(status) == 0, log
        return
    assert not running, "the node neither exited nor loaded within 10 s"
    assert os.waitstatus_to_exitcode(status) == 2, log
    lines = log.strip().splitlines()
    assert len(lines) == 1, log
    assert lines[0].startswith("sim_node: cannot start: ") and str(path.name) in lines[0]
    assert problem is None or problem in lines[0], lines[0]
    for name in ("RecursionError", "UnicodeDecodeError", "QhullError", "Traceback"):
        assert name not in lines[0]


def _start_measured(tmp_path, params, name):
    """A node whose peak memory [KiB] `_peak_memory` reads once it has exited."""
    report = tmp_path / f"{name}.maxrss"
    node = NodeProcess(next_domain(), params, log_path=tmp_path / f"{name}.log",
                       executable=[sys.executable, str(Path(__file__).with_name("peak_memory.py")),
                                   str(report), sys.executable, "-m", "sim_node"])
    node.peak_memory_report = report
    return node


def _run_to_exit(tmp_path, path):
    """(still running after 10 s, wait status, peak resident memory [KiB], log) of a node
    started on `path`; one still running is stopped with SIGINT (its status and peak memory
    are then those of that exit)."""
    node = _start_measured(tmp_path, {"world": str(path)}, "world")
    status = None
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        pid, status, _ = os.wait4(node.process.pid, os.WNOHANG)
        if pid:
            break
        status = None
        time.sleep(0.05)
    running = status is None
    if running:
        os.killpg(node.process.pid, 2)
        _, status, _ = os.wait4(node.process.pid, 0)
    node.process.returncode = os.waitstatus_to_exitcode(status)
    node.stop()
    return running, status, int(node.peak_memory_report.read_text()), node.log()


def test_a_yaml_alias_bomb_exits_2_within_10_s_and_1_gb(tmp_path):
    # measured: a 180 KB YAML alias bomb took 40 s and 3.5 GB
    parts = ['&x0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    parts += [f"&x{k} [" + ", ".join([f"*x{k - 1}"] * 9) + "]" for k in range(1, 10)]
    path = tmp_path / "bomb.yaml"
    path.write_text("simulation:\n  gravity: [" + ", ".join(parts) + "]\n"
                    + "# padding\n" * 18000)            # ~180 KB like the measured one
    node = _start_measured(tmp_path, {"world": str(path)}, "bomb")
    try:
        deadline = time.monotonic() + 10.0
        pid = 0
        while time.monotonic() < deadline and not pid:
            pid, status, _ = os.wait4(node.process.pid, os.WNOHANG)
            time.sleep(0.05)
        assert pid, "still loading after 10 s"
        node.process.returncode = os.waitstatus_to_exitcode(status)
        assert node.process.returncode == 2
        assert int(node.peak_memory_report.read_text()) < 1024 * 1024     # [KiB]
    finally:
        node.stop()

