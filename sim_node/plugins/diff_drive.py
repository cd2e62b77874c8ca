"""diff_drive (actuator + sensor): a differential-drive base driven by geometry_msgs/Twist, with
wheel odometry. One world-file entry loads both halves (the name is in both entry-point
groups); each takes the config keys it declares:

    plugins:
      - name: diff_drive
        config: {left_joint: left_wheel_joint, right_joint: right_wheel_joint,
                 wheel_radius: 0.08, wheel_separation: 0.34}

wheel_radius and wheel_separation [m] left out (or 0) are read from the URDF: the radius of the
wheel links' collision cylinder or sphere (the same for both), the distance between the wheel
links' origins.

Actuator (DiffDriveController): subscribes ``<namespace>/cmd_vel`` (geometry_msgs/Twist in the
base frame: linear.x [m/s] forward, angular.z [rad/s] counter-clockwise; the other components
are ignored, as a differential drive cannot follow them). The wheels get velocity targets
    w_left = (v - w s / 2) / r,   w_right = (v + w s / 2) / r
(r wheel radius, s wheel separation), scaled down together (keeping the curvature) if one would
exceed its joint's URDF velocity limit; each wheel's PID target moves from its commanded
position at that speed. A command lasts cmd_timeout [s] of sim time (0: until the next
command); then the wheels stop and hold their positions. A message with a non-finite value is
rejected whole with a warning (at most one every few seconds); the last command goes on.
State: the sim time of the command in force.

Sensor (DiffDriveOdometry): at `rate` [Hz] of sim time, dead reckoning from the wheel angles
(encoders): over each update interval, the wheels turned by d_left, d_right [rad] give
    ds = r (d_left + d_right) / 2,   dtheta = r (d_right - d_left) / s,
integrated as an arc (midpoint heading). The pose starts at (0, 0, 0) in ``<namespace>/odom`` at
every reset. Publishes ``<namespace>/odom`` (nav_msgs/Odometry: header.frame_id
``<namespace>/odom``, child_frame_id ``<namespace>/base_link``, the pose with z = 0, the twist
ds/dt, dtheta/dt in the base frame; covariances zero) and, with publish_tf, the odom frame on
/tf. The node already publishes the simulated pose world -> base_link, and a TF frame has one
parent; so the odometry goes on /tf as the transform world -> odom = T_world_base T_odom_base^-1
(T_world_base: the simulated pose of the base_frame link at the same sim time), which makes
the odom -> base_link transform that tf2 looks up through the tree the odometry pose, as a
localisation node's map -> odom correction does. State: the pose and the wheel angles of the
last update.

Readings: odom_pose (x [m], y [m], theta [rad]), odom_twist (v [m/s], w [rad/s]).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from sim_node.plugins.common import (JointLayout, ThrottledWarnings, rate_to_period,
                                     require_robot, robot_of, topic_name, xyzw)
from sim_node.ros.namespaces import WORLD_FRAME, robot_prefix
from sim_node.ros.stamps import time_msg
from sim_node.sim.simulation import ActuatorEmulator, SensorEmulator

QUEUE_DEPTH = 10
TF_QUEUE_DEPTH = 100


def _check_geometry(config):
    if not (config.wheel_radius >= 0.0 and config.wheel_separation >= 0.0):
        raise ValueError(f"wheel_radius and wheel_separation must be lengths >= 0 [m] (0: from "
                         f"the URDF), got {config.wheel_radius} and {config.wheel_separation}")
    if config.left_joint == config.right_joint:
        raise ValueError(f"left_joint and right_joint must differ, both are "
                         f"'{config.left_joint}'")


def _wheels(ctx, config) -> np.ndarray:
    """Joint indices of (left, right); ValueError naming the robot's joints."""
    return JointLayout.of(robot_of(ctx)).index([config.left_joint, config.right_joint])


def wheel_geometry(ctx, config) -> tuple[float, float]:
    """(wheel radius, wheel separation) [m]: as configured, or (when 0) from the URDF: the
    radius of the wheel links' collision cylinder or sphere, the distance between their
    origins. ValueError when the URDF does not give them."""
    robot = robot_of(ctx)
    links = [robot.link(i) for i in range(robot.numLinks())]
    wheels = [next(link for link in links if link.getParentJoint() == joint)
              for joint in (config.left_joint, config.right_joint)]
    radius, separation = config.wheel_radius, config.wheel_separation
    if radius == 0.0:
        radii = {getattr(element.shape, "radius", None) for wheel in wheels
                 for element in wheel.getCollisionGeometry()}
        if len(radii) != 1 or None in radii:
            raise ValueError(f"cannot read wheel_radius from the URDF: the wheel links need one "
                             f"collision cylinder or sphere of the same radius (radii found: "
                             f"{sorted(map(str, radii))}); set wheel_radius")
        radius = float(radii.pop())
    if separation == 0.0:
        left, right = (wheel.getTransform()[1] for wheel in wheels)
        separation = float(np.linalg.norm(left - right))
        if separation == 0.0:
            raise ValueError("cannot read wheel_separation from the URDF: the wheel links' "
                             "origins coincide; set wheel_separation")
    return radius, separation


class DiffDriveController(ActuatorEmulator):
    """cmd_vel -> wheel velocity targets, with a command timeout (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(ActuatorEmulator.Config):
        """left_joint, right_joint: wheel joints (positive = forward); wheel_radius,
        wheel_separation [m] (0: from the URDF); cmd_timeout [s] sim time (0: none);
        cmd_vel_topic."""
        left_joint: str
        right_joint: str
        wheel_radius: float = 0.0
        wheel_separation: float = 0.0
        cmd_timeout: float = 0.5
        cmd_vel_topic: str = "cmd_vel"

        def __post_init__(self):
            _check_geometry(self)
            if not self.cmd_timeout >= 0.0:
                raise ValueError(f"cmd_timeout must be a time >= 0 [s], got {self.cmd_timeout}")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        layout = JointLayout.of(robot_of(ctx))
        self._wheels = _wheels(ctx, config)
        self.radius, self.separation = wheel_geometry(ctx, config)
        self._q_index = layout.q_index[self._wheels]
        self._wheel_joints = layout.joint_index[self._wheels]     # in getJointNames()
        self._wheel_limit = layout.velocity_limit[self._wheels]
        self.topic = topic_name(ctx, config.cmd_vel_topic)
        self._warnings = ThrottledWarnings(ctx.logger)
        self._lock = threading.Lock()
        self._received: tuple[float, float] | None = None
        if ctx.create_subscription is not None:
            ctx.create_subscription(Twist, self.topic, self.on_cmd_vel, QUEUE_DEPTH)

    def on_cmd_vel(self, message):
        """Subscription callback (executor thread): validate and keep (v, w)."""
        values = [message.linear.x, message.linear.y, message.linear.z,
                  message.angular.x, message.angular.y, message.angular.z]
        if not all(math.isfinite(v) for v in values):
            self._warnings.warn(self.topic, f"command rejected, nothing applied: values must "
                                            f"be finite, got {values}")
            return
        with self._lock:
            self._received = (float(message.linear.x), float(message.angular.z))

    def wheel_velocities(self, v: float, w: float) -> np.ndarray:
        """(left, right) wheel speeds [rad/s] for body speeds v [m/s], w [rad/s], scaled
        down together to the wheels' velocity limits."""
        half = 0.5 * w * self.separation
        wheels = np.array([v - half, v + half]) / self.radius
        excess = np.max(np.abs(wheels) / self._wheel_limit)
        return wheels / excess if excess > 1.0 else wheels

    def reset(self, scope):
        """No command (the wheels hold), none received."""
        with self._lock:
            self._received = None
        self._since = None          # sim time [s] of the command in force (None: stopped)

    def process(self, commands, dt):
        t = self.ctx.sim.getTime()
        controller = self.ctx.controller
        if self._received is not None:
            with self._lock:
                received, self._received = self._received, None
            self._since = t
            position = controller.getCommandedConfig()[self._q_index]
            controller.setJointCommands(self._wheel_joints, "pid", position,
                                        self.wheel_velocities(*received), None, math.inf)
        elif (self._since is not None and self.config.cmd_timeout > 0.0
              and t - self._since >= self.config.cmd_timeout - 1e-9):
            self._since = None
            controller.setJointCommands(self._wheel_joints, "pid",
                                        controller.getCommandedConfig()[self._q_index])

    def get_state(self) -> dict:
        return {"since": self._since}

    def set_state(self, state: dict):
        try:
            since = None if state["since"] is None else float(state["since"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"diff_drive: bad state ({error})") from None
        self._since = since

    def shutdown(self):
        with self._lock:
            self._received = None


class DiffDriveOdometry(SensorEmulator):
    """Wheel odometry: nav_msgs/Odometry and the odom -> base_link transform (module
    docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """left_joint, right_joint, wheel_radius, wheel_separation as for the controller;
        rate [Hz] (default 50; 0: every control step); odom_topic; odom_frame, base_frame
        (prefixed with the robot's namespace; base_frame must be a link of the robot);
        publish_tf (world -> odom, module docstring)."""
        left_joint: str
        right_joint: str
        wheel_radius: float = 0.0
        wheel_separation: float = 0.0
        rate: float = 50.0
        odom_topic: str = "odom"
        odom_frame: str = "odom"
        base_frame: str = "base_link"
        publish_tf: bool = True

        def __post_init__(self):
            super().__post_init__()
            rate_to_period(self)
            _check_geometry(self)

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        robot = robot_of(ctx)
        self._q_index = JointLayout.of(robot).q_index[_wheels(ctx, config)]
        self.radius, self.separation = wheel_geometry(ctx, config)
        self._base = robot.link(config.base_frame)          # KeyError listing the links
        prefix = robot_prefix(robot)
        self.odom_frame = prefix + config.odom_frame
        self.base_frame = prefix + config.base_frame
        self._odom_pub = self._tf_pub = None
        if ctx.create_publisher is not None:
            self._odom_pub = ctx.create_publisher(Odometry, topic_name(ctx, config.odom_topic),
                                                  QUEUE_DEPTH)
            if config.publish_tf:
                self._tf_pub = ctx.create_publisher(TFMessage, "/tf", TF_QUEUE_DEPTH)

    def reset(self, scope):
        """Pose (0, 0, 0), counting from the wheels' current angles."""
        self.pose = np.zeros(3)             # x [m], y [m], theta [rad] in the odom frame
        self._wheels = self._wheel_angles()
        self._time = self.ctx.sim.getTime()

    def _wheel_angles(self) -> np.ndarray:
        return self.ctx.controller.getSensedConfig()[self._q_index]

    def update(self, t=None):
        t = self.ctx.sim.getTime() if t is None else t
        wheels = self._wheel_angles()
        d_left, d_right = self.radius * (wheels - self._wheels)
        ds = 0.5 * (d_left + d_right)
        dtheta = (d_right - d_left) / self.separation
        x, y, theta = self.pose
        heading = theta + 0.5 * dtheta
        self.pose = np.array([x + ds * math.cos(heading), y + ds * math.sin(heading),
                              theta + dtheta])
        elapsed = t - self._time
        twist = (np.array([ds, dtheta]) / elapsed if elapsed > 0.0 else np.zeros(2))
        self._wheels, self._time = wheels, t
        if self._odom_pub is not None:
            self._publish(t, twist)
        return {"odom_pose": self.pose.copy(), "odom_twist": twist}

    def _publish(self, t: float, twist: np.ndarray):
        x, y, theta = (float(v) for v in self.pose)
        stamp = time_msg(t)
        message = Odometry()
        message.header.stamp = stamp
        message.header.frame_id = self.odom_frame
        message.child_frame_id = self.base_frame
        pose = message.pose.pose
        pose.position.x, pose.position.y = x, y
        pose.orientation.z, pose.orientation.w = math.sin(0.5 * theta), math.cos(0.5 * theta)
        message.twist.twist.linear.x, message.twist.twist.angular.z = (float(v) for v in twist)
        self._odom_pub.publish(message)
        if self._tf_pub is not None:
            self._tf_pub.publish(TFMessage(transforms=[self._world_to_odom(stamp)]))

    def _world_to_odom(self, stamp) -> TransformStamped:
        # T_world_odom = T_world_base T_odom_base^-1
        x, y, theta = self.pose
        c, s = math.cos(theta), math.sin(theta)
        R_ob = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        R_wb, p_wb = self.ctx.sim.body(self._base).getObjectTransform()
        R_wo = R_wb @ R_ob.T
        p_wo = p_wb - R_wo @ np.array([x, y, 0.0])
        transform = TransformStamped()
        transform.header.stamp = stamp
        transform.header.frame_id = WORLD_FRAME
        transform.child_frame_id = self.odom_frame
        t, r = transform.transform.translation, transform.transform.rotation
        t.x, t.y, t.z = (float(v) for v in p_wo)
        r.x, r.y, r.z, r.w = (float(v) for v in xyzw(R_wo))
        return transform

    def get_state(self) -> dict:
        return {"pose": self.pose.tolist(), "wheels": self._wheels.tolist(), "time": self._time}

    def set_state(self, state: dict):
        try:
            pose = np.array(state["pose"], dtype=float).reshape(3)
            wheels = np.array(state["wheels"], dtype=float).reshape(2)
            time_ = float(state["time"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"diff_drive odometry: bad state ({error})") from None
        self.pose, self._wheels, self._time = pose, wheels, time_

    def shutdown(self):
        self._odom_pub = self._tf_pub = None
