"""joint_commands (actuator): joint commands from ROS topics, per joint, at the control rate.

Subscribed, relative to the robot's namespace:
    joint_commands      sensor_msgs/JointState by joint name, for the listed joints only (the
                        others keep their commands), so one robot can mix modes across joints:
                          position (+ velocity) (+ effort)  PID to the positions, the velocities
                                                            as velocity targets (0 if none), the
                                                            efforts as feed-forward torques;
                          velocity (+ effort), no position  velocity mode: the PID target moves
                                                            on from the commanded position at
                                                            that velocity until the next command
                                                            for the joint (there is no timeout);
                          effort alone                      torque control with these torques.
    position_commands   std_msgs/Float64MultiArray, one value per joint in joint order (as
    velocity_commands   ros2_control's forward command controllers): PID to the positions /
    effort_commands     velocity mode / torque control of every joint.
Joints are the scalar joints (revolute, continuous, prismatic) of the robot's joint order:
spherical, planar and floating joints are left out of the arrays and refused by name.

A message is checked whole in the subscription callback: joint names known and not repeated,
each of position/velocity/effort empty or one value per name, arrays one value per joint,
every value finite and within the URDF limits of its joint (position within [lower, upper],
|velocity| <= the velocity limit, |effort| <= the effort limit; no limit where the URDF has none
or 0). A bad message is rejected entirely with a warning naming the problem (at most one per
topic every few seconds); the last good command stays in force.

Good messages are queued and applied, in arrival order, by ``process`` on the simulation
thread before the next physics step (SimRobotController.setJointCommands), so a command that
arrives while the state stamped t is being stepped acts from the next step on. The queue holds
commands, not state: ``reset`` empties it, and it is not part of the saved simulation state
(the commands in force are, in the controller).

Without a ROS node (ctx.create_subscription None) the callbacks ``on_joint_command``,
``on_position_command``, ``on_velocity_command``, ``on_effort_command`` take messages directly.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from sim_node.plugins.common import (JointLayout, ThrottledWarnings, require_robot, robot_of,
                                     topic_name)
from sim_node.sim.simulation import ActuatorEmulator

QUEUE_DEPTH = 10


@dataclass(frozen=True)
class JointCommand:
    """A validated command for some joints: joints (k) joint indices; mode 'pid' or 'torque';
    position (k) PID targets [rad or m] (None with velocity: velocity mode from the commanded
    position); velocity (k) velocity targets [rad/s or m/s] or None (0); effort (k) torques
    [N m or N] (feed-forward, or the torque in torque mode) or None (0)."""
    joints: np.ndarray
    mode: str
    position: np.ndarray | None = None
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None

    @property
    def moving(self) -> bool:
        """Velocity mode: no position, a velocity target that moves the PID target."""
        return self.mode == "pid" and self.position is None

    def apply(self, controller, layout: JointLayout):
        position = self.position
        if self.moving:
            position = controller.getCommandedConfig()[layout.q_index[self.joints]]
        controller.setJointCommands(layout.joint_index[self.joints], self.mode, position,
                                    self.velocity, self.effort,
                                    math.inf if self.moving else 0.0)


def parse_joint_state(layout: JointLayout, message) -> JointCommand:
    """The JointCommand of a sensor_msgs/JointState; ValueError saying what is wrong."""
    names = list(message.name)
    if not names:
        raise ValueError("no joint names")
    joints = layout.index(names)
    fields = {}
    for field in ("position", "velocity", "effort"):
        values = np.asarray(getattr(message, field), dtype=float)
        if values.size not in (0, len(names)):
            raise ValueError(f"{field} has {values.size} values for {len(names)} joint names "
                             f"(give one per name, or none)")
        fields[field] = values if values.size else None
    position, velocity, effort = fields["position"], fields["velocity"], fields["effort"]
    if position is None and velocity is None and effort is None:
        raise ValueError("no position, velocity or effort values")
    if position is not None:
        layout.check_positions(joints, position)
    if velocity is not None:
        layout.check_velocities(joints, velocity)
    if effort is not None:
        layout.check_efforts(joints, effort)
    if position is None and velocity is None:
        return JointCommand(joints, "torque", effort=effort)
    return JointCommand(joints, "pid", position, velocity, effort)


def parse_array(layout: JointLayout, message, kind: str) -> JointCommand:
    """The JointCommand of a Float64MultiArray of kind 'position', 'velocity' or 'effort'."""
    values = np.asarray(message.data, dtype=float)
    n = len(layout.names)
    if values.size != n:
        raise ValueError(f"{values.size} values for {n} joints ({', '.join(layout.names)})")
    joints = np.arange(n, dtype=np.intp)
    if kind == "position":
        return JointCommand(joints, "pid", position=layout.check_positions(joints, values))
    if kind == "velocity":
        return JointCommand(joints, "pid", velocity=layout.check_velocities(joints, values))
    return JointCommand(joints, "torque", effort=layout.check_efforts(joints, values))


class JointCommands(ActuatorEmulator):
    """Per-joint position / velocity / effort commands from ROS topics (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(ActuatorEmulator.Config):
        """Topic names, relative to the robot's namespace."""
        joint_commands_topic: str = "joint_commands"
        position_commands_topic: str = "position_commands"
        velocity_commands_topic: str = "velocity_commands"
        effort_commands_topic: str = "effort_commands"

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        self.layout = JointLayout.of(robot_of(ctx))
        self._pending: list[JointCommand] = []
        self._lock = threading.Lock()
        self._warnings = ThrottledWarnings(ctx.logger)
        self._active = True
        self.topics = {
            "joint_commands": topic_name(ctx, config.joint_commands_topic),
            "position": topic_name(ctx, config.position_commands_topic),
            "velocity": topic_name(ctx, config.velocity_commands_topic),
            "effort": topic_name(ctx, config.effort_commands_topic),
        }
        if ctx.create_subscription is None:
            return
        ctx.create_subscription(JointState, self.topics["joint_commands"],
                                self.on_joint_command, QUEUE_DEPTH)
        for kind, callback in (("position", self.on_position_command),
                               ("velocity", self.on_velocity_command),
                               ("effort", self.on_effort_command)):
            ctx.create_subscription(Float64MultiArray, self.topics[kind], callback, QUEUE_DEPTH)

    # -- subscription callbacks (executor threads): validate and queue ------------------------
    def on_joint_command(self, message):
        self._receive(self.topics["joint_commands"], parse_joint_state, message)

    def on_position_command(self, message):
        self._receive(self.topics["position"], parse_array, message, "position")

    def on_velocity_command(self, message):
        self._receive(self.topics["velocity"], parse_array, message, "velocity")

    def on_effort_command(self, message):
        self._receive(self.topics["effort"], parse_array, message, "effort")

    def _receive(self, topic: str, parse, message, *args):
        try:
            command = parse(self.layout, message, *args)
        except ValueError as error:
            self._warnings.warn(topic, f"command rejected, nothing applied: {error}")
            return
        with self._lock:
            if not self._active:
                return
            # a queued command whose joints the new one all commands again is superseded
            joints = set(command.joints.tolist())
            self._pending = [c for c in self._pending if not set(c.joints.tolist()) <= joints]
            self._pending.append(command)

    # -- simulation thread -----------------------------------------------------------------
    def process(self, commands, dt):
        if not self._pending:
            return
        with self._lock:
            pending, self._pending = self._pending, []
        controller = self.ctx.controller
        for command in pending:
            command.apply(controller, self.layout)

    def reset(self, scope):
        """Drop the commands received and not applied yet."""
        with self._lock:
            self._pending = []

    def shutdown(self):
        with self._lock:
            self._active = False
            self._pending = []
