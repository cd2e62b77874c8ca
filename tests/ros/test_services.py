"""Simulation control and our own services of the node, end to end (the node as a separate
process, tests/ros/node_harness.py): get_simulator_features, get/set_simulation_state,
step_simulation, the simulate_steps action, reset_simulation's time and state scopes (spawned
entities: test_entities.py), save_state / restore_state, apply_wrench, set_surface,
set_padding, set/get_real_time_factor; and that bad requests get error results.

One node for the module, started paused at real_time_factor 0 on a world written here: the
pendulum (PID-held at 0.5 rad, it swings under gravity), a 2 kg box (0.2 m) resting on the
ground, a 0.5 kg box (0.1 m) `faller` 50 m up (free fall for the whole module), the ground.
Every test starts from the initial state (reset_simulation, paused).

Independent references: closed-form mechanics (free fall z = z0 - g h^2 k (k + 1) / 2 for the
semi-implicit integrator, v = -g t; impulse: dv = F T / m, dw = tau T / I with I = m (a^2 +
b^2) / 12 of a box; Coulomb sliding: v = v0 - mu g t with mu the harmonic mean of the two
bodies' coefficients, seed 002) and the world file's poses; and the simulation against itself
for save/restore (the same joint states bit for bit).
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Point, Vector3, Wrench
from rclpy.action import ActionClient, get_action_names_and_types
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (GetSimulationState,
                                       GetSimulatorFeatures, ResetSimulation, SetEntityState,
                                       SetSimulationState, StepSimulation)

from node_harness import (PENDULUM, REPO, Client, NodeProcess, call, entity, next_domain,
                          set_parameter, sim_time, step)
from sim_node.msg import SimStatus
from sim_node.srv import (ApplyWrench, GetRealTimeFactor, RestoreState, SaveState,
                          SetPadding, SetRealTimeFactor, SetSurface)

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

DT = 0.001                  # [s] physics_dt of the world
G = 9.81                    # [m/s^2]
FALLER_MASS, FALLER_SIDE, FALLER_Z = 0.5, 0.1, 50.0
BOX_MASS, BOX_SIDE = 2.0, 0.2
WORLD = f"""
simulation: {{physics_dt: {DT}, gravity: [0.0, 0.0, {-G}]}}
robots:
{PENDULUM}rigid_objects:
  - name: box
    geometry: {{box: [{BOX_SIDE}, {BOX_SIDE}, {BOX_SIDE}]}}
    mass: {BOX_MASS}
    pose: {{position: [1.0, 0.0, {BOX_SIDE / 2}], orientation: [0, 0, 0, 1]}}
  - name: faller
    geometry: {{box: [{FALLER_SIDE}, {FALLER_SIDE}, {FALLER_SIDE}]}}
    mass: {FALLER_MASS}
    pose: {{position: [-2.0, 0.0, {FALLER_Z}], orientation: [0, 0, 0, 1]}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
"""
SIM = "/sim"
DEEP = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)    # bursts of steps


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    directory = tmp_path_factory.mktemp("services")
    world = directory / "world.yaml"
    world.write_text(WORLD)
    domain = next_domain()
    node = NodeProcess(domain, {"world": str(world), "paused": True, "real_time_factor": 0.0,
                                "status_rate": 0.0, "data_dir": str(directory / "data")},
                       log_path=directory / "node.log")
    client = Client(domain)
    client.data_dir = directory / "data"
    try:
        client.subscribe(Clock, "/clock", DEEP)
        client.subscribe(JointState, "/pendulum/joint_states", DEEP)
        yield client
    finally:
        client.close()
        node.stop()


@pytest.fixture
def sim(client):
    """The node paused at the initial state (time 0), before each test."""
    if state_of(client) != SimulationState.STATE_PAUSED:
        set_state(client, SimulationState.STATE_PAUSED)
    assert call(client, ResetSimulation, "reset_simulation").result.result == Result.OK
    return client


def state_of(client) -> int:
    return call(client, GetSimulationState, "get_simulation_state").state.state


def set_state(client, state: int):
    return call(client, SetSimulationState, "set_simulation_state",
                state=SimulationState(state=state)).result


def vector(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z])


def stamp_of(message) -> float:
    stamp = message.header.stamp if hasattr(message, "header") else message.clock
    return stamp.sec + stamp.nanosec * 1e-9


def wait_until(predicate, timeout: float = 20.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise TimeoutError(f"{what} not met within {timeout} s")


def wait_future(future, timeout: float = 20.0):
    wait_until(future.done, timeout, "future")
    return future.result()


def step_and_collect(client, topics, steps: int, chunk: int = 5) -> dict:
    """Step `steps` steps in requests of at most `chunk` steps and return {topic: the messages of
    those steps}, stamped t, t + dt, ... from the node's time t. The node's per-step publishers
    keep 10 messages, so a longer burst can outrun a reader on a loaded machine; and a message
    from before the last reset may still arrive with a stamp that time repeats. A writer delivers
    in order, so once a request has returned, the last `n` messages received are its steps."""
    first = round(sim_time(client) / DT)
    collected = {topic: [] for topic in topics}
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        step(client, n)
        expected = list(range(first + done, first + done + n))
        for topic in topics:
            deadline = time.monotonic() + 20.0
            while [round(stamp_of(m) / DT) for m in client.messages(topic)[-n:]] != expected:
                assert time.monotonic() < deadline, f"{topic}: steps {expected} not received"
                time.sleep(0.01)
            collected[topic] += client.messages(topic)[-n:]
        done += n
    return collected


# -- features and run state ----------------------------------------------------------------
def test_features_advertise_the_implemented_services_and_urdf_spawning(client):
    features = client.call(GetSimulatorFeatures, f"{SIM}/get_simulator_features",
                           GetSimulatorFeatures.Request()).features
    F = SimulatorFeatures
    assert sorted(features.features) == sorted([
        F.SPAWNING, F.DELETING, F.ENTITY_CATEGORIES, F.SPAWNING_RESOURCE_STRING,
        F.ENTITY_STATE_GETTING, F.ENTITY_STATE_SETTING, F.SIMULATION_RESET,
        F.SIMULATION_RESET_TIME, F.SIMULATION_RESET_STATE, F.SIMULATION_RESET_SPAWNED,
        F.SIMULATION_STATE_GETTING, F.SIMULATION_STATE_SETTING, F.SIMULATION_STATE_PAUSE,
        F.STEP_SIMULATION_SINGLE, F.STEP_SIMULATION_MULTIPLE, F.STEP_SIMULATION_ACTION])
    assert list(features.spawn_formats) == ["urdf"]
    for own in ("set_real_time_factor", "get_real_time_factor", "save_state", "restore_state",
                "apply_wrench", "set_surface", "set_padding", "record"):
        assert own in features.custom_info
    # each advertised feature's interface is there, and ours
    services = {f"{SIM}/{name}" for name in [
        "spawn_entity", "delete_entity", "get_entities", "get_entity_state",
        "get_entities_states", "set_entity_state", "reset_simulation", "get_simulation_state",
        "set_simulation_state", "step_simulation", "save_state", "restore_state",
        "apply_wrench", "set_surface", "set_padding", "set_real_time_factor",
        "get_real_time_factor", "record"]}
    wait_until(lambda: services <= {n for n, _ in client.node.get_service_names_and_types()},
               what="every service discovered")
    wait_until(lambda: f"{SIM}/simulate_steps" in {
        n for n, _ in get_action_names_and_types(client.node)}, what="the action discovered")


def test_a_paused_start_reports_paused_and_time_stands_still(sim):
    assert state_of(sim) == SimulationState.STATE_PAUSED
    time.sleep(0.2)
    assert sim_time(sim) == 0.0


def test_step_simulation_while_paused_advances_clock_by_n_steps(sim):
    step(sim, 10)
    t0 = sim_time(sim)
    # /clock and the joint states are published for every stepped step, stamps t0 + k dt
    messages = step_and_collect(sim, ("/clock", "/pendulum/joint_states"), 25)
    assert sim_time(sim) == pytest.approx(t0 + 25 * DT, abs=1e-9)
    for topic in ("/clock", "/pendulum/joint_states"):
        assert [round(stamp_of(m) / DT) for m in messages[topic]] == list(range(10, 35))
    seen = len(sim.messages("/clock"))
    time.sleep(0.1)
    assert len(sim.messages("/clock")) == seen         # paused: nothing more
    # the box falls freely: z = z0 - g dt^2 k (k + 1) / 2 after k semi-implicit steps
    faller = entity(sim, "faller")
    assert faller.pose.position.z == pytest.approx(FALLER_Z - G * DT**2 * 35 * 36 / 2, abs=1e-9)
    assert faller.twist.linear.z == pytest.approx(-G * 35 * DT, abs=1e-9)


def test_step_simulation_of_zero_steps_is_refused(sim):
    result = call(sim, StepSimulation, "step_simulation", steps=0).result
    assert result.result == Result.OPERATION_FAILED
    assert "steps must be >= 1" in result.error_message
    assert sim_time(sim) == 0.0


def test_playing_then_pausing_and_stepping_while_playing_is_refused(sim):
    assert set_state(sim, SimulationState.STATE_PLAYING).result == Result.OK
    assert state_of(sim) == SimulationState.STATE_PLAYING
    wait_until(lambda: sim_time(sim) > 0.05, what="sim time advancing while playing")
    again = set_state(sim, SimulationState.STATE_PLAYING)
    assert again.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    result = call(sim, StepSimulation, "step_simulation", steps=1).result
    assert result.result == Result.OPERATION_FAILED
    assert "paused" in result.error_message
    assert set_state(sim, SimulationState.STATE_PAUSED).result == Result.OK
    # paused between two steps: no step follows the answer
    t = sim_time(sim)
    time.sleep(0.2)
    assert sim_time(sim) == t


def test_stop_resets_time_and_state_and_pause_from_stopped_keeps_them(sim):
    step(sim, 100)
    assert set_state(sim, SimulationState.STATE_STOPPED).result == Result.OK
    assert state_of(sim) == SimulationState.STATE_STOPPED
    assert sim_time(sim) == 0.0
    assert entity(sim, "faller").pose.position.z == FALLER_Z
    again = set_state(sim, SimulationState.STATE_STOPPED)
    assert again.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    assert set_state(sim, SimulationState.STATE_PAUSED).result == Result.OK
    assert state_of(sim) == SimulationState.STATE_PAUSED
    assert sim_time(sim) == 0.0
    step(sim, 1)                            # stepping a stopped simulation leaves it paused
    assert set_state(sim, SimulationState.STATE_STOPPED).result == Result.OK
    step(sim, 1)
    assert state_of(sim) == SimulationState.STATE_PAUSED


def test_states_that_cannot_be_requested_get_error_results(sim):
    no_world = set_state(sim, SimulationState.STATE_NO_WORLD)
    assert no_world.result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert "valid: STOPPED (0), PLAYING (1), PAUSED (2)" in no_world.error_message
    assert set_state(sim, 77).result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert set_state(sim, SimulationState.STATE_QUITTING).result == Result.FEATURE_UNSUPPORTED
    assert state_of(sim) == SimulationState.STATE_PAUSED


# -- the simulate_steps action -------------------------------------------------------------
@pytest.fixture(scope="module")
def steps_action(client):
    action = ActionClient(client.node, SimulateSteps, f"{SIM}/simulate_steps",
                          feedback_sub_qos_profile=DEEP)
    assert action.wait_for_server(timeout_sec=20.0)
    # the server's feedback publisher has matched this client once a goal's feedback arrived
    # (a paused node's step, undone by the `sim` fixture's reset)
    if state_of(client) != SimulationState.STATE_PAUSED:
        set_state(client, SimulationState.STATE_PAUSED)
    goal, feedback = send_steps(action, 1)
    wait_until(lambda: len(feedback) == 1, 20.0, "the first feedback")
    wait_future(goal.get_result_async())
    return action


def send_steps(action, steps: int):
    feedback = []
    goal = wait_future(action.send_goal_async(
        SimulateSteps.Goal(steps=steps),
        feedback_callback=lambda message: feedback.append(message.feedback)))
    assert goal.accepted
    return goal, feedback


def test_simulate_steps_gives_feedback_after_every_step(sim, steps_action):
    goal, feedback = send_steps(steps_action, 20)
    # every feedback before the result: rclpy's ActionClient drops feedback it handles after it
    wait_until(lambda: len(feedback) == 20, 20.0, "20 feedback messages")
    outcome = wait_future(goal.get_result_async())
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED
    assert outcome.result.result.result == Result.OK
    assert [(f.completed_steps, f.remaining_steps) for f in feedback] == \
        [(k, 20 - k) for k in range(1, 21)]
    assert sim_time(sim) == pytest.approx(20 * DT, abs=1e-9)


def test_simulate_steps_cancelled_stops_between_steps(sim, steps_action):
    goal, feedback = send_steps(steps_action, 1_000_000)
    wait_until(lambda: len(feedback) >= 5, what="first feedback")
    wait_future(goal.cancel_goal_async())
    outcome = wait_future(goal.get_result_async())
    assert outcome.status == GoalStatus.STATUS_CANCELED
    done = int(outcome.result.result.error_message.split()[2])   # "canceled after k of n ..."
    assert 5 <= done < 1_000_000
    assert sim_time(sim) == pytest.approx(done * DT, abs=1e-9)
    assert state_of(sim) == SimulationState.STATE_PAUSED


def test_simulate_steps_while_playing_is_aborted(sim, steps_action):
    assert set_state(sim, SimulationState.STATE_PLAYING).result == Result.OK
    try:
        goal, feedback = send_steps(steps_action, 10)
        outcome = wait_future(goal.get_result_async())
        assert outcome.status == GoalStatus.STATUS_ABORTED
        assert outcome.result.result.result == Result.OPERATION_FAILED
        assert "paused" in outcome.result.result.error_message
        assert feedback == []
    finally:
        set_state(sim, SimulationState.STATE_PAUSED)


# -- reset scopes ---------------------------------------------------------------------------
def test_reset_time_keeps_poses_and_velocities(sim):
    step(sim, 100)
    before = entity(sim, "faller")
    result = call(sim, ResetSimulation, "reset_simulation",
                  scope=ResetSimulation.Request.SCOPE_TIME).result
    assert result.result == Result.OK
    after = entity(sim, "faller")
    assert sim_time(sim) == 0.0
    assert after.pose == before.pose and after.twist == before.twist


def test_reset_state_keeps_time_and_puts_entities_back(sim):
    step(sim, 50)
    result = call(sim, ResetSimulation, "reset_simulation",
                  scope=ResetSimulation.Request.SCOPE_STATE).result
    assert result.result == Result.OK
    assert sim_time(sim) == pytest.approx(50 * DT, abs=1e-12)
    faller = entity(sim, "faller")
    assert faller.pose.position.z == FALLER_Z and faller.twist.linear.z == 0.0


def test_reset_all_restores_time_zero_and_the_initial_poses(sim):
    step(sim, 50)
    assert call(sim, ResetSimulation, "reset_simulation",
                scope=ResetSimulation.Request.SCOPE_ALL).result.result == Result.OK
    assert sim_time(sim) == 0.0
    assert vector(entity(sim, "faller").pose.position).tolist() == [-2.0, 0.0, FALLER_Z]
    assert vector(entity(sim, "box").pose.position).tolist() == [1.0, 0.0, BOX_SIDE / 2]


def test_reset_with_unknown_scope_bits_is_refused(sim):
    step(sim, 5)
    result = call(sim, ResetSimulation, "reset_simulation", scope=8).result
    assert result.result == Result.FEATURE_UNSUPPORTED
    assert "unknown bits" in result.error_message
    assert sim_time(sim) == pytest.approx(5 * DT, abs=1e-12)


# -- save and restore -----------------------------------------------------------------------
def joint_states_of_steps(client, steps: int) -> list:
    """(stamp, position, velocity, effort) of the joint states of the next `steps` steps."""
    return [(stamp_of(m), tuple(m.position), tuple(m.velocity), tuple(m.effort))
            for m in step_and_collect(client, ("/pendulum/joint_states",),
                                      steps)["/pendulum/joint_states"]]


def test_restore_state_continues_with_identical_joint_states(sim):
    step(sim, 30)
    path = sim.data_dir / "states" / "state.bin"         # a relative path: in the data dir
    saved = call(sim, SaveState, "save_state", id="at30", path="states/state.bin")
    assert saved.success, saved.message
    assert saved.message == f"written to {path}"
    assert saved.sim_time == pytest.approx(30 * DT, abs=1e-12)
    assert saved.size == path.stat().st_size > 0
    first = joint_states_of_steps(sim, 50)
    faller_first = entity(sim, "faller")
    assert first[0][0] == pytest.approx(saved.sim_time, abs=1e-9)
    assert first[0][1] != first[-1][1]                  # it swings
    for source in ({"id": "at30"}, {"path": "states/state.bin"}, {"path": str(path)}):
        restored = call(sim, RestoreState, "restore_state", **source)
        assert restored.success, restored.message
        assert restored.sim_time == saved.sim_time
        assert joint_states_of_steps(sim, 50) == first
        assert entity(sim, "faller") == faller_first


def test_bad_save_and_restore_requests_change_nothing(sim, tmp_path):
    step(sim, 7)
    assert call(sim, SaveState, "save_state", id="seven").success
    neither = call(sim, SaveState, "save_state")
    assert not neither.success and "id" in neither.message and "path" in neither.message
    outside = call(sim, SaveState, "save_state", path=str(tmp_path / "s"))
    assert not outside.success and "outside the data directory" in outside.message
    assert not (tmp_path / "s").exists()
    unknown = call(sim, RestoreState, "restore_state", id="never")
    assert not unknown.success and "'seven'" in unknown.message
    both = call(sim, RestoreState, "restore_state", id="seven", path="x")
    assert not both.success and "not both" in both.message
    missing = call(sim, RestoreState, "restore_state", path=str(tmp_path / "missing.bin"))
    assert not missing.success and "no file" in missing.message
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not a state")
    corrupt = call(sim, RestoreState, "restore_state", path=str(garbage))
    assert not corrupt.success and "not a sim_node simulation state" in corrupt.message
    assert sim_time(sim) == pytest.approx(7 * DT, abs=1e-12)


# -- apply_wrench -----------------------------------------------------------------------------
def test_force_for_a_duration_changes_velocity_by_impulse_over_mass(sim):
    force, duration = 3.0, 0.1
    applied = call(sim, ApplyWrench, "apply_wrench", entity="faller",
                   duration=duration, wrench=_wrench(force=(force, 0.0, 0.0)))
    assert applied.success, applied.message
    assert applied.start_time == 0.0
    step(sim, 150)          # the force acts for the first 100 steps only
    faller = entity(sim, "faller")
    assert faller.twist.linear.x == pytest.approx(force * duration / FALLER_MASS, abs=1e-12)
    assert faller.twist.linear.z == pytest.approx(-G * 150 * DT, abs=1e-9)
    assert vector(faller.twist.angular).tolist() == [0.0, 0.0, 0.0]


def test_force_at_a_point_also_spins_the_body(sim):
    # short enough that the body-fixed point turns by < 1e-3 rad while the force acts
    force, arm, duration = 1.0, 0.05, 0.005
    inertia = FALLER_MASS * 2 * FALLER_SIDE**2 / 12        # about z, through the centre
    applied = call(sim, ApplyWrench, "apply_wrench", entity="faller", duration=duration,
                   wrench=_wrench(force=(0.0, force, 0.0), torque=(0.0, 0.0, 0.01)),
                   use_point=True, point=_point(arm, 0.0, 0.0))
    assert applied.success, applied.message
    step(sim, 20)
    faller = entity(sim, "faller")
    assert faller.twist.angular.z == pytest.approx((arm * force + 0.01) * duration / inertia,
                                                   rel=1e-5)
    # the velocity of the box's centre (its frame's origin) from the force alone
    assert faller.twist.linear.y == pytest.approx(force * duration / FALLER_MASS, rel=1e-6)


def test_bad_wrench_requests_are_refused(sim):
    cases = {
        "no entity named 'nothing'": dict(entity="nothing", duration=1.0),
        "duration must be a finite time > 0": dict(entity="faller", duration=0.0),
        "NaN": dict(entity="faller", duration=1.0, wrench=_wrench(force=(math.nan, 0, 0))),
        "terrain": dict(entity="ground", duration=1.0),
        "has no links": dict(entity="faller", link="base", duration=1.0),
        "has no link 'hand'": dict(entity="pendulum", link="hand", duration=1.0),
        "static (fixed to the world": dict(entity="pendulum", link="world", duration=1.0),
    }
    for expected, fields in cases.items():
        response = call(sim, ApplyWrench, "apply_wrench", **fields)
        assert not response.success and expected in response.message, (fields, response)
    step(sim, 10)
    assert entity(sim, "faller").twist.linear.x == 0.0


def _wrench(force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)):
    return Wrench(force=Vector3(x=float(force[0]), y=float(force[1]), z=float(force[2])),
                  torque=Vector3(x=float(torque[0]), y=float(torque[1]), z=float(torque[2])))


def _point(x, y, z):
    return Point(x=float(x), y=float(y), z=float(z))


# -- surfaces and padding ---------------------------------------------------------------------
def _slide_box(client, speed: float, steps: int) -> float:
    """Give the resting box a speed along x; its speed after `steps`."""
    step(client, 100)                       # settled in the ground's boundary layer
    state = entity(client, "box")
    state.twist.linear.x = speed
    result = call(client, SetEntityState, "set_entity_state", entity="box", state=state,
                  set_twist=True).result
    assert result.result == Result.OK, result.error_message
    step(client, steps)
    return entity(client, "box").twist.linear.x


def test_surface_friction_sets_the_coulomb_deceleration_of_a_sliding_box(sim):
    friction = {"box": 0.3, "ground": 0.6}      # pair: harmonic mean 0.4
    for name, mu in friction.items():
        response = call(sim, SetSurface, "set_surface", entity=name, k_restitution=0.0,
                        k_friction=mu, k_stiffness=math.inf, k_damping=math.inf)
        assert response.success, response.message
    try:
        mu_pair = 2.0 / (1.0 / friction["box"] + 1.0 / friction["ground"])
        assert _slide_box(sim, 1.0, 200) == pytest.approx(1.0 - mu_pair * G * 0.2, abs=1e-3)
    finally:
        for name in friction:
            call(sim, SetSurface, "set_surface", entity=name, k_restitution=0.0,
                 k_friction=0.5, k_stiffness=math.inf, k_damping=math.inf)


def test_bad_surface_requests_are_refused_whole(sim):
    cases = {
        "kRestitution must be in [0, 1]": dict(entity="box", k_restitution=2.0),
        "kFriction must be non-negative": dict(entity="box", k_friction=-1.0),
        "kFriction must be finite": dict(entity="box", k_friction=math.inf),
        "no entity named 'nothing'": dict(entity="nothing", k_stiffness=math.inf,
                                          k_damping=math.inf),
        "has no link 'hand'": dict(entity="pendulum", link="hand", k_stiffness=math.inf,
                                   k_damping=math.inf),
        # a compliant layer of neither spring nor damper gave NaN (found by the fuzz)
        "kStiffness 0.0 must be inf (rigid) or within [1, 1e+12] N/m": dict(entity="box"),
        "kFriction 1e+300 is beyond the bound 1000": dict(entity="box", k_friction=1e300),
    }
    for expected, fields in cases.items():
        response = call(sim, SetSurface, "set_surface", **fields)
        assert not response.success and expected in response.message, (fields, response)
    # every link of the robot (the links with collision geometry)
    assert call(sim, SetSurface, "set_surface", entity="pendulum", k_friction=0.5,
                k_stiffness=math.inf, k_damping=math.inf).success
    # the box still slides with the default pair friction 0.5
    assert _slide_box(sim, 1.0, 100) == pytest.approx(1.0 - 0.5 * G * 0.1, abs=1e-3)


def test_a_thicker_padding_holds_a_box_higher_within_the_summed_boundary_layers(sim):
    ground_padding, padding = 0.0025, 0.05
    step(sim, 500)
    gap_default = entity(sim, "box").pose.position.z - BOX_SIDE / 2
    response = call(sim, SetPadding, "set_padding", entity="box", padding=padding)
    assert response.success, response.message
    try:
        step(sim, 1000)
        gap = entity(sim, "box").pose.position.z - BOX_SIDE / 2
        # contacts act within the summed paddings (seed 002)
        assert 0.0 < gap_default < 2 * ground_padding
        assert 2 * gap_default < gap < padding + ground_padding
    finally:
        call(sim, SetPadding, "set_padding", entity="box", padding=ground_padding)
    for bad in (-0.001, math.nan, math.inf, 1.5):
        response = call(sim, SetPadding, "set_padding", entity="box", padding=bad)
        assert not response.success and "a length in [0, 0.1] m" in response.message


# -- real-time factor -------------------------------------------------------------------------
def test_real_time_factor_is_set_and_read_back_and_negative_is_refused(sim):
    assert call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=2.5).success
    try:
        read = call(sim, GetRealTimeFactor, "get_real_time_factor")
        assert read.target_real_time_factor == 2.5
        refused = call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=-1.0)
        assert not refused.success and "0 (as fast as possible) or within [0.001, 1000]" \
            in refused.message
        assert call(sim, GetRealTimeFactor,
                    "get_real_time_factor").target_real_time_factor == 2.5
    finally:
        call(sim, SetRealTimeFactor, "set_real_time_factor", real_time_factor=0.0)


def test_the_step_count_follows_the_time_after_a_reset_and_a_restore(sim):
    # ~/status: step_count x physics_dt = sim_time, also after time jumps back
    sim.subscribe(SimStatus, "/sim/status", DEEP)
    assert set_parameter(sim, "status_rate", 20.0).successful
    try:
        step(sim, 30)
        assert call(sim, SaveState, "save_state", id="thirty").success
        step(sim, 20)
        assert call(sim, ResetSimulation, "reset_simulation").result.result == Result.OK
        step(sim, 5)
        for steps in (5, 30):
            if steps == 30:
                assert call(sim, RestoreState, "restore_state", id="thirty").success
            [status] = sim.wait_for("/sim/status", 1, 20.0, lambda m: round(
                stamp_of(m) / DT) == steps)[-1:]
            assert status.step_count == steps and status.paused
    finally:
        set_parameter(sim, "status_rate", 0.0)
