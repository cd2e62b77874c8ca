"""joint_state_publisher: what it publishes (against the simulator's state at the stamp), when
(its rate in sim time), the floating-base layout, seeded noise, config errors."""
from __future__ import annotations

import numpy as np
import pytest
from plugin_helpers import (DIFF_DRIVE_URDF, DT, GROUND, PENDULUM_WORLD, TURNTABLE_JOINTS,
                            FakeRos, plugin_named, run, simulator, stamp,
                            write_turntable_world)
from sensor_msgs.msg import JointState

from sim_node.plugins.joint_state_publisher import JointStatePublisher
from sim_node.sim.plugin import parse_config


def _turntable(tmp_path, config="{}"):
    ros = FakeRos()
    path = write_turntable_world(tmp_path, f"      - {{name: joint_state_publisher, config: "
                                           f"{config}}}\n")
    return simulator(path, ros), ros


def test_joint_states_report_the_state_at_their_stamp_and_the_last_steps_torque(tmp_path):
    sim, ros = _turntable(tmp_path)
    controller = sim.controller(0)
    controller.setJointCommands(["spin"], "torque", tfeedforward=[1.5])
    controller.setJointCommands(["slide"], "pid", qdes=[0.1])
    expected = []
    for _ in range(50):
        expected.append((sim.getTime(), sim.getActualConfig(0), sim.getActualVelocity(0),
                         sim.getActualTorque(0)))
        sim.simulate(DT)
    messages = ros.messages("turntable/joint_states")
    assert len(messages) == 50
    assert ros.types["turntable/joint_states"] is JointState
    for message, (t, q, v, tau) in zip(messages, expected):
        assert list(message.name) == TURNTABLE_JOINTS
        assert stamp(message) == pytest.approx(t, abs=1e-9)
        assert message.header.frame_id == ""
        np.testing.assert_array_equal(message.position, q)
        np.testing.assert_array_equal(message.velocity, v)
        np.testing.assert_array_equal(message.effort, tau)
    # the spin joint is under a pure torque of 1.5 N m from the first step on
    assert all(m.effort[0] == 1.5 for m in messages[1:])
    assert messages[0].effort[0] == 0.0 and messages[-1].velocity[0] > 0.0


def test_a_rate_publishes_on_its_grid_of_sim_time(tmp_path):
    sim, ros = _turntable(tmp_path, "{rate: 100.0}")
    run(sim, 0.1)
    stamps = [stamp(m) for m in ros.messages("turntable/joint_states")]
    np.testing.assert_allclose(stamps, np.arange(10) * 0.01, atol=1e-9)


def test_a_pendulum_hanging_at_rest_reads_zero_position_velocity_and_effort():
    ros = FakeRos()
    sim = simulator(PENDULUM_WORLD, ros, default_plugins=[{"name": "joint_state_publisher"}])
    run(sim, 0.2)
    for message in ros.messages("pendulum/joint_states"):
        assert list(message.name) == ["joint1"]
        assert list(message.position) == [0.0]
        assert list(message.velocity) == [0.0]
        assert list(message.effort) == [0.0]


def test_a_floating_base_publishes_its_joints_only(tmp_path):
    path = tmp_path / "base.yaml"
    path.write_text(f"""simulation: {{physics_dt: 0.001}}
robots:
  - name: rover
    urdf: {DIFF_DRIVE_URDF}
    fixed_base: false
    pose: {{position: [0.0, 0.0, 0.085], orientation: [0.0, 0.0, 0.0, 1.0]}}
    initial_config: {{left_wheel_joint: 0.3, right_wheel_joint: -0.2}}
    plugins: [{{name: joint_state_publisher}}]
""" + GROUND)
    ros = FakeRos()
    sim = simulator(path, ros)
    q, v = sim.getActualConfig(0), sim.getActualVelocity(0)
    sim.simulate(DT)
    message = ros.messages("joint_states")[0]       # the world's only robot: at the root
    assert list(message.name) == ["left_wheel_joint", "right_wheel_joint"]
    np.testing.assert_array_equal(message.position, q[7:])
    np.testing.assert_array_equal(message.position, [0.3, -0.2])
    np.testing.assert_array_equal(message.velocity, v[6:])


def test_noise_is_gaussian_with_the_configured_std_and_repeats_with_the_seed(tmp_path):
    config = "{position_noise: 0.01, velocity_noise: 0.2, seed: 7}"
    runs = []
    for k in range(2):
        sim, ros = _turntable(tmp_path, config)
        run(sim, 2.0)
        runs.append(np.array([[*m.position, *m.velocity]
                              for m in ros.messages("turntable/joint_states")]))
    np.testing.assert_array_equal(runs[0], runs[1])
    noise = runs[0]                  # the turntable rests at q = 0, v = 0
    std = np.array([0.01, 0.01, 0.2, 0.2])
    np.testing.assert_allclose(noise.std(axis=0), std, rtol=0.05)
    assert np.all(np.abs(noise.mean(axis=0)) < 4 * std / np.sqrt(len(noise)))   # 4 sigma
    # a reset re-seeds the generator: the same noise again
    sim.reset()
    ros.published["turntable/joint_states"].clear()
    run(sim, 2.0)
    again = np.array([[*m.position, *m.velocity]
                      for m in ros.messages("turntable/joint_states")])
    np.testing.assert_array_equal(again, runs[0])


@pytest.mark.parametrize("config, message", [
    ({"position_noise": -1.0}, "position_noise must be a standard deviation >= 0"),
    ({"rate": -5.0}, "rate must be a frequency >= 0"),
    ({"rate": 100.0, "period": 0.5}, "give rate [Hz] or period [s], not both"),
    ({"rates": 100.0}, "unknown config key(s) rates"),
])
def test_config_errors_name_the_key(config, message):
    with pytest.raises(ValueError) as error:
        parse_config(JointStatePublisher, config, "robot 'arm' plugins[0]")
    assert message in str(error.value) and "robot 'arm' plugins[0]" in str(error.value)


def test_the_rate_is_the_sensor_period():
    config = parse_config(JointStatePublisher, {"rate": 250.0}, "here")
    assert config.period == pytest.approx(0.004)
    assert parse_config(JointStatePublisher, {}, "here").period == 0.0


def test_readings_without_ros_are_the_published_values():
    sim = simulator(PENDULUM_WORLD, default_plugins=[{"name": "joint_state_publisher"}])
    sim.controller(0).setTorqueCommand([2.0])
    run(sim, 0.05)
    readings = plugin_named(sim, "joint_state_publisher").update(sim.getTime())
    np.testing.assert_array_equal(readings["joint_position"], sim.getActualConfig(0))
    np.testing.assert_array_equal(readings["joint_velocity"], sim.getActualVelocity(0))
    np.testing.assert_array_equal(readings["joint_effort"], [2.0])
