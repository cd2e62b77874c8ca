"""imu: specific force and angular velocity against closed forms (a turntable spun by a known
torque, a swinging pendulum read at its fixed pivot), seeded noise and bias statistics, the
sim-time rate, frame names, reset and config errors."""
from __future__ import annotations

import numpy as np
import pytest
from plugin_helpers import (DT, G, IMU_RADIUS, PENDULUM_WORLD, FakeRos, add_plugin, run,
                            simulator, spin_inertia, stamp, vector, write_turntable_world)
from sensor_msgs.msg import Imu
from transforms3d.quaternions import quat2mat

from sim_node.plugins.imu import ImuSensor

TOPIC = "turntable/imu"


def _turntable(tmp_path, **config):
    ros = FakeRos()
    sim = simulator(write_turntable_world(tmp_path), ros)
    imu = add_plugin(sim, ImuSensor, 0, {"link": "imu_link", "rate": 0.0, **config}, ros)
    return sim, ros, imu


def _orientation(message) -> np.ndarray:
    q = message.orientation
    return quat2mat([q.w, q.x, q.y, q.z])


def test_at_rest_it_reads_plus_g_along_the_links_up_axis_and_no_rotation(tmp_path):
    sim, ros, _ = _turntable(tmp_path)
    run(sim, 0.1)
    messages = ros.messages(TOPIC)
    assert len(messages) == 100 and ros.types[TOPIC] is Imu
    for message in messages:
        np.testing.assert_allclose(vector(message.linear_acceleration), [0.0, 0.0, G],
                                   atol=1e-9)
        np.testing.assert_allclose(vector(message.angular_velocity), 0.0, atol=1e-12)
        np.testing.assert_allclose(_orientation(message), np.eye(3), atol=1e-12)


def test_a_spinning_turntable_gives_centripetal_and_tangential_acceleration(tmp_path):
    # spin under a constant torque tau: omega = tau t / I; at radius r the link's origin has
    # (in the plate's axes) a = (-omega^2 r, alpha r, 0); the slide is held at 0 by its PID
    sim, ros, _ = _turntable(tmp_path)
    tau = 1.5
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[tau])
    truth = []
    for _ in range(500):
        sim.simulate(DT)
        truth.append((sim.getTime(), sim.getActualConfig(0)[0], sim.getActualVelocity(0)[0]))
    alpha = tau / spin_inertia()
    # sensors update at the start of a step: message k + 1 reads the state after step k
    messages = ros.messages(TOPIC)
    assert len(messages) == len(truth)
    messages = messages[1:]
    for message, (t, angle, omega) in zip(messages[100:], truth[100:]):
        assert stamp(message) == pytest.approx(t, abs=1e-9)
        assert omega == pytest.approx(alpha * t, rel=2e-2)      # the slide moves a little
        np.testing.assert_allclose(vector(message.angular_velocity), [0.0, 0.0, omega],
                                   atol=1e-9)
        expected = [-omega ** 2 * IMU_RADIUS, alpha * IMU_RADIUS, G]
        # the velocity change over the last step is the acceleration half a step back
        # (centripetal off by omega alpha dt r) with O(omega dt) relative error; alpha of the
        # closed form: the slide's small sag changes I by < 0.5 %
        tolerance = [(omega * alpha * DT + 4e-3 * omega ** 2) * IMU_RADIUS,
                     6e-3 * alpha * IMU_RADIUS, 1e-9]
        error = vector(message.linear_acceleration) - expected
        assert np.all(np.abs(error) <= tolerance), (t, error)
        c, s = np.cos(angle), np.sin(angle)
        np.testing.assert_allclose(_orientation(message), [[c, -s, 0], [s, c, 0], [0, 0, 1]],
                                   atol=1e-9)
    # the last reading against the closed form itself
    final = vector(messages[-1].linear_acceleration)
    assert final[0] == pytest.approx(-(alpha * 0.499) ** 2 * IMU_RADIUS, rel=3e-2)
    assert final[1] == pytest.approx(alpha * IMU_RADIUS, rel=3e-2)


def test_a_swinging_pendulum_read_at_its_pivot_sees_gravity_turn_with_it():
    # link1's frame origin is the pivot, fixed in the world: the specific force is -g in the
    # link's axes, R_y(q)^T (0, 0, g) = (-g sin q, 0, g cos q); the gyro reads (0, dq, 0)
    ros = FakeRos()
    sim = simulator(PENDULUM_WORLD, ros)
    add_plugin(sim, ImuSensor, 0, {"link": "link1", "rate": 0.0}, ros)
    sim.controller(0).setJointCommands(["joint1"], "torque", tfeedforward=[0.0])
    sim.setActualConfig(0, [1.2])
    truth = []
    for _ in range(600):
        sim.simulate(DT)
        truth.append((sim.getActualConfig(0)[0], sim.getActualVelocity(0)[0]))
    messages = ros.messages("pendulum/imu")[1:]     # message k + 1: the state after step k
    assert max(abs(q) for q, _ in truth) > 0.5          # it swings
    for message, (q, dq) in zip(messages, truth):
        np.testing.assert_allclose(vector(message.linear_acceleration),
                                   [-G * np.sin(q), 0.0, G * np.cos(q)], atol=1e-6)
        np.testing.assert_allclose(vector(message.angular_velocity), [0.0, dq, 0.0],
                                   atol=1e-9)
        assert message.header.frame_id == "pendulum/link1"


def _readings(ros):
    messages = ros.messages(TOPIC)
    return (np.array([vector(m.linear_acceleration) for m in messages]),
            np.array([vector(m.angular_velocity) for m in messages]))


NOISY = {"accelerometer_noise": 0.2, "gyro_noise": 0.05,
         "accelerometer_bias": [0.1, -0.2, 0.3], "gyro_bias": [0.01, 0.02, -0.03]}


def test_noise_and_bias_have_the_configured_statistics_and_repeat_with_the_seed(tmp_path):
    sim, ros, _ = _turntable(tmp_path, seed=7, **NOISY)
    n = 2000
    run(sim, n * DT)
    acceleration, angular_velocity = _readings(ros)
    assert len(acceleration) == n
    for samples, mean, std in ((acceleration, [0.1, -0.2, 0.3 + G], 0.2),
                               (angular_velocity, [0.01, 0.02, -0.03], 0.05)):
        # 5 sigma bounds of the sample mean and the sample standard deviation
        np.testing.assert_allclose(samples.mean(axis=0), mean, atol=5 * std / np.sqrt(n))
        np.testing.assert_allclose(samples.std(axis=0, ddof=1), std,
                                   atol=5 * std / np.sqrt(2 * (n - 1)))
    message = ros.messages(TOPIC)[0]
    np.testing.assert_allclose(message.linear_acceleration_covariance,
                               np.diag([0.04] * 3).ravel())
    np.testing.assert_allclose(message.angular_velocity_covariance,
                               np.diag([0.0025] * 3).ravel())
    # the same seed repeats the samples, another one does not
    again = _turntable(tmp_path, seed=7, **NOISY)      # the same world file, rewritten
    run(again[0], 0.05)
    np.testing.assert_array_equal(_readings(again[1])[0], acceleration[:50])
    other = _turntable(tmp_path, seed=8, **NOISY)
    run(other[0], 0.05)
    assert not np.allclose(_readings(other[1])[0], acceleration[:50])


def test_a_random_bias_is_drawn_per_run_from_its_std(tmp_path):
    # 1 sample per run is too few for statistics: many sensors, each its own seed
    sim, ros = simulator(write_turntable_world(tmp_path)), FakeRos()
    sensors = [add_plugin(sim, ImuSensor, 0, {"link": "imu_link", "rate": 0.0, "seed": s,
                                             "gyro_bias_std": 0.1, "topic": f"imu{s}"}, ros)
               for s in range(300)]
    run(sim, 0.002)
    biases = np.array([s.update()["imu_angular_velocity"] for s in sensors])
    np.testing.assert_allclose(biases.mean(axis=0), 0.0, atol=5 * 0.1 / np.sqrt(300))
    np.testing.assert_allclose(biases.std(axis=0, ddof=1), 0.1, atol=5 * 0.1 / np.sqrt(598))
    # constant over a run, redrawn (from the re-seeded generator: the same) at a reset
    first = sensors[0].update()["imu_angular_velocity"]
    run(sim, 0.01)
    np.testing.assert_array_equal(sensors[0].update()["imu_angular_velocity"], first)
    sim.reset()
    np.testing.assert_array_equal(sensors[0].update()["imu_angular_velocity"], first)


def test_it_publishes_on_its_sim_time_grid_the_readings_of_an_every_step_sensor(tmp_path):
    # rate 100 Hz at 1 ms steps: stamps 0, 0.01, ...; each equals the every-step sensor's
    # reading at that time (acceleration from the step before, sampled only when needed)
    sim, ros, _ = _turntable(tmp_path)
    add_plugin(sim, ImuSensor, 0, {"link": "imu_link", "rate": 100.0, "topic": "slow"}, ros)
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.5])
    run(sim, 0.2)
    every = {round(stamp(m), 6): m for m in ros.messages(TOPIC)}
    slow = ros.messages("turntable/slow")
    np.testing.assert_allclose([stamp(m) for m in slow], np.arange(20) * 0.01, atol=1e-9)
    for message in slow[1:]:
        reference = every[round(stamp(message), 6)]
        np.testing.assert_array_equal(vector(message.linear_acceleration),
                                      vector(reference.linear_acceleration))
        np.testing.assert_array_equal(vector(message.angular_velocity),
                                      vector(reference.angular_velocity))
    assert abs(vector(slow[-1].linear_acceleration)[1]) > 2.0       # it does accelerate


def test_frame_id_defaults_to_the_links_tf_frame_and_can_be_set(tmp_path):
    sim, ros, imu = _turntable(tmp_path, frame_id="my_imu", topic="sensors/imu")
    sim.simulate(DT)
    assert imu.frame_id == "my_imu"
    assert ros.messages("turntable/sensors/imu")[0].header.frame_id == "my_imu"
    assert _turntable(tmp_path)[2].frame_id == "turntable/imu_link"


def test_reset_forgets_the_last_sample_and_restarts_the_grid(tmp_path):
    sim, ros, imu = _turntable(tmp_path, rate=100.0)
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.5])
    run(sim, 0.05)
    first_run = ros.messages(TOPIC)
    sim.reset()
    assert imu.get_state()["previous"] is None and imu.get_state()["readings"] == {}
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.5])
    run(sim, 0.05)
    second_run = ros.messages(TOPIC)[len(first_run):]
    assert [stamp(m) for m in second_run] == [stamp(m) for m in first_run]
    for a, b in zip(first_run, second_run):
        np.testing.assert_array_equal(vector(a.linear_acceleration),
                                      vector(b.linear_acceleration))


@pytest.mark.parametrize("config, problem", [
    ("{link: imu_link, colour: red}", "unknown config key(s) colour for plugin ImuSensor; "
     "valid keys: accelerometer_bias, accelerometer_bias_std, accelerometer_noise, frame_id, "
     "gyro_bias, gyro_bias_std, gyro_noise, link, period, rate, seed, topic"),
    ("{}", "needs config key 'link'"),
    ("{link: imu_link, gyro_noise: -1.0}", "gyro_noise must be a standard deviation >= 0"),
    ("{link: imu_link, gyro_bias: [1.0, 2.0]}", "gyro_bias needs 3 values"),
    ("{link: imu_link, gyro_bias: [0.0, 0.0, 0.0], gyro_bias_std: 0.1}",
     "give gyro_bias (a fixed bias) or gyro_bias_std (a random one), not both"),
    ("{link: imu_link, period: 0.1}", "set how often it publishes with rate [Hz]"),
])
def test_bad_config_is_rejected_naming_the_problem(tmp_path, config, problem):
    path = write_turntable_world(tmp_path, f"      - {{name: imu, config: {config}}}\n")
    with pytest.raises(ValueError) as error:
        simulator(path)
    assert problem in str(error.value)


def test_an_unknown_link_disables_the_sensor_naming_the_links(tmp_path):
    path = write_turntable_world(tmp_path, "      - {name: imu, config: {link: nope}}\n")
    sim = simulator(path)
    [imu] = sim.getPlugins()
    assert not imu.enabled and "nope" in imu.error and "imu_link" in imu.error
    run(sim, 0.01)                                  # the simulation goes on
    assert sim.getTime() == pytest.approx(0.01)
