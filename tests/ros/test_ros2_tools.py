"""The node as the ROS 2 command-line tools see it: the parameter services `ros2 param`
list/get/describe/dump/set call, and the simulate_steps feedback `ros2 action send_goal
--feedback` receives. A node process on a pendulum world whose file sets physics_dt 2 ms (not
the parameter's default 0, not the usual 1 ms), paused, checked from a client in this process.

    effective values  physics_dt reads the step the node takes (its /clock advances by it), from
                      the world file when not given, the given one otherwise; string arrays with
                      nothing in them are empty STRING_ARRAYs (not [''] nor byte arrays); no
                      parameter is unset; the start-time ones are read-only, described so and
                      refused by SetParameters
    feedback          simulate_steps publishes one feedback per step with a QoS that keeps them
                      (reliable, deep history): a client whose feedback QoS keeps them too, and
                      which asks for the result after the last feedback, gets 50 of 50; a client
                      with rclpy's default (reliable, depth 10) gets at least the last 10, in
                      order, ending with the last step
"""
from __future__ import annotations

import time

import pytest
import yaml
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.action import ActionClient
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result
from simulation_interfaces.srv import StepSimulation

from node_harness import (DEEP, NO_PLUGINS, REPO, Client, NodeProcess, in_process_node,
                          next_domain, ns)

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
WORLD_DT = 0.002                    # [s] the test world's physics_dt
STEPS = 50                          # simulate_steps goal of the feedback tests
START_TIME_PARAMETERS = ("world", "physics_dt", "paused", "lockstep", "lockstep_topics",
                         "default_plugins", "record", "robot_namespaces")
EMPTY_LISTS = ("lockstep_topics", "default_plugins", "robot_namespaces")
WAIT = 60.0                         # [s] generous: a loaded machine


def world_with_step(directory, physics_dt: float):
    """pendulum.yaml with another physics_dt, its URDF path made absolute."""
    world = yaml.safe_load(PENDULUM_WORLD.read_text())
    world["simulation"]["physics_dt"] = physics_dt
    robot = world["robots"][0]
    robot["urdf"] = str((PENDULUM_WORLD.parent / robot["urdf"]).resolve())
    path = directory / "pendulum_2ms.yaml"
    path.write_text(yaml.safe_dump(world))
    return path


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ros2_tools")
    domain = next_domain()
    node = NodeProcess(domain, {"world": str(world_with_step(directory, WORLD_DT)),
                                "paused": True, "real_time_factor": 0.0, "status_rate": 0.0,
                                "default_plugins": NO_PLUGINS}, log_path=directory / "node.log")
    client = Client(domain)
    try:
        client.subscribe(Clock, "/clock", DEEP)
        yield client
    finally:
        client.close()
        node.stop()


def parameters(client, names) -> dict:
    """name -> ParameterValue, as `ros2 param get` asks for them."""
    values = client.call(GetParameters, "/sim/get_parameters",
                         GetParameters.Request(names=list(names)), timeout=WAIT).values
    return dict(zip(names, values))


def descriptors(client, names) -> dict:
    response = client.call(DescribeParameters, "/sim/describe_parameters",
                           DescribeParameters.Request(names=list(names)), timeout=WAIT)
    return {d.name: d for d in response.descriptors}


def wait_future(future, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, "no answer"
        time.sleep(0.005)
    return future.result()


# -- parameters ----------------------------------------------------------------------------------
def test_physics_dt_reads_the_step_the_node_takes(client):
    [value] = parameters(client, ["physics_dt"]).values()
    assert value.type == ParameterType.PARAMETER_DOUBLE
    assert value.double_value == WORLD_DT
    # the node steps by it: /clock (published before every step) advances WORLD_DT per step
    seen = len(client.messages("/clock"))
    result = client.call(StepSimulation, "/sim/step_simulation",
                         StepSimulation.Request(steps=5), timeout=WAIT).result
    assert result.result == Result.OK, result.error_message
    clocks = [ns(m.clock) for m in client.wait_for("/clock", seen + 5, timeout=WAIT)]
    steps = [b - a for a, b in zip(clocks, clocks[1:])]
    assert steps and set(steps) == {round(WORLD_DT * 1e9)}


def test_empty_string_arrays_read_as_empty_string_arrays(client):
    for name, value in parameters(client, EMPTY_LISTS).items():
        assert value.type == ParameterType.PARAMETER_STRING_ARRAY, name
        assert list(value.string_array_value) == [], name


def test_every_parameter_has_a_value_as_ros2_param_dump_reads_them(client):
    names = client.call(ListParameters, "/sim/list_parameters", ListParameters.Request(),
                        timeout=WAIT).result.names
    assert set(START_TIME_PARAMETERS) <= set(names)
    for name, value in parameters(client, names).items():
        assert value.type != ParameterType.PARAMETER_NOT_SET, name
        assert parameter_value_to_python(value) != [""], name


def test_start_time_parameters_are_read_only_and_refused(client):
    described = descriptors(client, START_TIME_PARAMETERS)
    assert {name: d.read_only for name, d in described.items()} == \
        dict.fromkeys(START_TIME_PARAMETERS, True)
    assert described["physics_dt"].type == ParameterType.PARAMETER_DOUBLE
    assert described["lockstep_topics"].type == ParameterType.PARAMETER_STRING_ARRAY
    request = SetParameters.Request(parameters=[ParameterMsg(
        name="physics_dt", value=Parameter("physics_dt", value=0.01).get_parameter_value())])
    [result] = client.call(SetParameters, "/sim/set_parameters", request, timeout=WAIT).results
    assert not result.successful and "read-only" in result.reason
    assert parameters(client, ["physics_dt"])["physics_dt"].double_value == WORLD_DT


@pytest.mark.parametrize("given, reads", [
    (None, 0.002),              # not given: the world file's
    (0, 0.002),                 # 0 (an integer, as `-p physics_dt:=0` gives it): the same
    (0.0005, 0.0005),           # given: that one
])
def test_physics_dt_reads_the_world_files_or_the_given_step(tmp_path, given, reads):
    """In this process (the same node class), with the parameter given or not."""
    given = {} if given is None else {"physics_dt": given}
    with in_process_node(world_with_step(tmp_path, WORLD_DT), default_plugins=NO_PLUGINS,
                         **given) as node:
        assert node.get_parameter("physics_dt").value == reads
        assert node.physics_dt == reads
        assert node.get_parameter("default_plugins").type_ == Parameter.Type.STRING_ARRAY


# -- simulate_steps feedback ---------------------------------------------------------------------
def run_goal(action: ActionClient, steps: int) -> list:
    """(completed, remaining) of every feedback received for a goal of `steps` steps. The result
    is asked for after the last step's feedback: rclpy's ActionClient drops the feedback it
    handles after the goal's result (it forgets the feedback callback then), so a client that
    wants every feedback must not get the result first (README)."""
    feedback = []
    goal = wait_future(action.send_goal_async(
        SimulateSteps.Goal(steps=steps),
        feedback_callback=lambda message: feedback.append(
            (message.feedback.completed_steps, message.feedback.remaining_steps))))
    assert goal.accepted
    deadline = time.monotonic() + WAIT
    while (steps, 0) not in feedback:
        assert time.monotonic() < deadline, f"no feedback for step {steps}: {feedback[-3:]}"
        time.sleep(0.01)
    outcome = wait_future(goal.get_result_async())
    assert outcome.result.result.result == Result.OK, outcome.result.result.error_message
    return feedback


def action_client(client, **qos) -> ActionClient:
    """An action client whose feedback subscription the server's publisher has matched: a
    1-step goal's feedback arrived (a goal sent before that could lose its first feedback)."""
    action = ActionClient(client.node, SimulateSteps, "/sim/simulate_steps", **qos)
    assert action.wait_for_server(timeout_sec=WAIT)
    run_goal(action, 1)
    return action


def test_a_client_keeping_its_feedback_receives_every_step(client):
    action = action_client(client, feedback_sub_qos_profile=QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    try:
        assert run_goal(action, STEPS) == [(k, STEPS - k) for k in range(1, STEPS + 1)]
    finally:
        action.destroy()


def test_a_default_qos_client_receives_at_least_the_last_ten_in_order(client):
    """rclpy's default feedback QoS keeps 10 messages: of a burst of 50 feedbacks (one per
    step, as fast as the node steps) a client that does not take them as fast loses older
    ones; what it gets is in order and ends with the last step (README)."""
    action = action_client(client)
    try:
        feedback = run_goal(action, STEPS)
    finally:
        action.destroy()
    print(f"default-QoS client: {len(feedback)} of {STEPS} feedbacks")
    completed = [done for done, _ in feedback]
    assert completed == sorted(set(completed))
    assert all(done + remaining == STEPS for done, remaining in feedback)
    assert completed[-10:] == list(range(STEPS - 9, STEPS + 1))
