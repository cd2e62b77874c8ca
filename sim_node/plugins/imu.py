"""imu (sensor): an inertial measurement unit at a robot link's frame, sensor_msgs/Imu on
``<namespace>/<topic>`` (topic "imu" by default).

Measured at the origin of the link frame L, at sim time t:
    orientation          the rotation world -> L as a quaternion (x, y, z, w): R_WL, exact;
    angular_velocity     w_L = R_WL^T w_W [rad/s], plus gyro bias and noise;
    linear_acceleration  the specific force f_L = R_WL^T (a_W - g_W) [m/s^2] of the frame's
                         origin, plus accelerometer bias and noise: at rest in a level link it
                         reads (0, 0, +9.81), in free fall 0.
a_W is the change of the origin's world velocity over the last control step, divided by its
length (the velocity the engine's integrator produced: exact for its discrete motion). The
first publication after a reset has no step before it and takes a_W = 0.

Noise: zero-mean Gaussian, std accelerometer_noise [m/s^2] and gyro_noise [rad/s] per axis,
drawn from ctx.rng at every publication. Bias: constant over a run, accelerometer_bias /
gyro_bias (3 values, sensor axes) when given, else drawn at every reset from a zero-mean
Gaussian of std accelerometer_bias_std / gyro_bias_std (0: no bias). The covariances in the
message are the noise variances on the diagonal; orientation_covariance is zero.

Config: link (required), rate [Hz] of sim time (default 100; 0: every control step), the noise
and bias keys above, frame_id ('' = the link's TF frame ``<namespace>/<link>``), topic. The
sensor samples the state only at the step of each publication and the one before it.

Readings: imu_orientation (4, xyzw), imu_angular_velocity (3), imu_linear_acceleration (3) of
the last publication.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import Imu

from sim_node.plugins.common import (SampleSchedule, check_std, require_robot,
                                     require_sampling_every_step, robot_of, topic_name, xyzw)
from sim_node.ros.namespaces import link_frame
from sim_node.ros.stamps import time_msg
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 10


def _bias(given, std: float, what: str):
    if given is None:
        return
    if len(given) != 3:
        raise ValueError(f"{what} needs 3 values (x, y, z), got {len(given)}")
    if std > 0.0:
        raise ValueError(f"give {what} (a fixed bias) or {what}_std (a random one), not both")


class ImuSensor(SensorEmulator):
    """Orientation, angular velocity and specific force of a link (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """link: the robot link carrying the IMU at its frame origin; rate [Hz]; noise
        standard deviations [m/s^2, rad/s]; biases [m/s^2, rad/s] fixed (3 values) or drawn
        per run (std); frame_id ('' = the link frame); topic."""
        link: str
        rate: float = 100.0
        accelerometer_noise: float = 0.0
        gyro_noise: float = 0.0
        accelerometer_bias: tuple[float, ...] | None = None
        gyro_bias: tuple[float, ...] | None = None
        accelerometer_bias_std: float = 0.0
        gyro_bias_std: float = 0.0
        frame_id: str = ""
        topic: str = "imu"

        def __post_init__(self):
            super().__post_init__()
            require_sampling_every_step(self, "imu")
            for name in ("accelerometer_noise", "gyro_noise", "accelerometer_bias_std",
                         "gyro_bias_std"):
                check_std(getattr(self, name), name)
            _bias(self.accelerometer_bias, self.accelerometer_bias_std, "accelerometer_bias")
            _bias(self.gyro_bias, self.gyro_bias_std, "gyro_bias")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        robot = robot_of(ctx)
        link = robot.link(config.link)          # KeyError listing the links
        self._link = link.getIndex()
        self._com_L = link.getMass().getCom()
        self.frame_id = config.frame_id or link_frame(robot, self._link)
        self._schedule = SampleSchedule(config.rate)
        self._publisher = None
        if ctx.create_publisher is not None:
            self._publisher = ctx.create_publisher(Imu, topic_name(ctx, config.topic),
                                                   QUEUE_DEPTH)

    def reset(self, scope):
        """Forget the last sample, draw the run's biases, publish from the current time."""
        config, rng = self.config, self.ctx.rng
        self._schedule.reset(self.ctx.sim.getTime())
        self._previous = None           # (t [s], origin velocity (3) [m/s] world)
        self._readings = {}
        self._accelerometer_bias = (np.array(config.accelerometer_bias)
                                    if config.accelerometer_bias is not None
                                    else rng.normal(0.0, config.accelerometer_bias_std, 3)
                                    if config.accelerometer_bias_std > 0.0 else np.zeros(3))
        self._gyro_bias = (np.array(config.gyro_bias) if config.gyro_bias is not None
                           else rng.normal(0.0, config.gyro_bias_std, 3)
                           if config.gyro_bias_std > 0.0 else np.zeros(3))

    def _sample(self):
        # (R_WL, w_W, velocity of L's origin in world axes)
        sim = self.ctx.sim
        link = robot_of(self.ctx).link(self._link)
        R_WL, _ = sim.body(link).getObjectTransform()
        w_W, v_com_W = sim.body(link).getVelocity()
        return R_WL, w_W, v_com_W - np.cross(w_W, R_WL @ self._com_L)

    def update(self, t=None):
        sim = self.ctx.sim
        t = sim.getTime() if t is None else t
        publish, sample = self._schedule.step(t)
        if not sample:
            self._previous = None
            return self._readings
        R_WL, w_W, v_W = self._sample()
        previous, self._previous = self._previous, (t, v_W)
        if not publish:
            return self._readings
        a_W = np.zeros(3)
        if previous is not None and t > previous[0]:
            a_W = (v_W - previous[1]) / (t - previous[0])
        config, rng = self.config, self.ctx.rng
        orientation = xyzw(R_WL)
        angular_velocity = R_WL.T @ w_W + self._gyro_bias
        acceleration = R_WL.T @ (a_W - sim.getGravity()) + self._accelerometer_bias
        if config.gyro_noise > 0.0:
            angular_velocity += rng.normal(0.0, config.gyro_noise, 3)
        if config.accelerometer_noise > 0.0:
            acceleration += rng.normal(0.0, config.accelerometer_noise, 3)
        self._readings = {"imu_orientation": orientation,
                          "imu_angular_velocity": angular_velocity,
                          "imu_linear_acceleration": acceleration}
        if self._publisher is not None:
            self._publisher.publish(self._message(t, orientation, angular_velocity,
                                                  acceleration))
        return self._readings

    def _message(self, t, orientation, angular_velocity, acceleration) -> Imu:
        message = Imu()
        message.header.stamp = time_msg(t)
        message.header.frame_id = self.frame_id
        q, w, a = message.orientation, message.angular_velocity, message.linear_acceleration
        q.x, q.y, q.z, q.w = (float(v) for v in orientation)
        w.x, w.y, w.z = (float(v) for v in angular_velocity)
        a.x, a.y, a.z = (float(v) for v in acceleration)
        message.angular_velocity_covariance[0::4] = [self.config.gyro_noise ** 2] * 3
        message.linear_acceleration_covariance[0::4] = [self.config.accelerometer_noise ** 2] * 3
        return message

    def get_state(self) -> dict:
        previous = self._previous
        return {"schedule": self._schedule.get_state(),
                "previous": None if previous is None else [previous[0], previous[1].tolist()],
                "accelerometer_bias": self._accelerometer_bias.tolist(),
                "gyro_bias": self._gyro_bias.tolist(),
                "readings": {k: v.tolist() for k, v in self._readings.items()}}

    def set_state(self, state: dict):
        try:
            previous = state["previous"]
            previous = None if previous is None else (float(previous[0]),
                                                      np.array(previous[1], dtype=float))
            accelerometer_bias = np.array(state["accelerometer_bias"], dtype=float)
            gyro_bias = np.array(state["gyro_bias"], dtype=float)
            readings = {k: np.array(v, dtype=float) for k, v in state["readings"].items()}
            self._schedule.set_state(state["schedule"])       # last: nothing set on errors
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ValueError(f"imu: bad state ({error})") from None
        self._previous = previous
        self._accelerometer_bias, self._gyro_bias = accelerometer_bias, gyro_bias
        self._readings = readings

    def shutdown(self):
        self._publisher = None
