"""joint_state_publisher (sensor): a robot's joints on ``<namespace>/joint_states``.

sensor_msgs/JointState, stamped with the sim time t of the state it reports (the state before
the control step that follows), frame_id empty: every scalar joint (revolute, continuous,
prismatic) of ``robot.getJointNames()`` in that order (a floating base's pose is not a joint, and
spherical, planar and floating joints have no scalar position: their child links are on /tf),
with
    position [rad or m]    the joint coordinate, plus Gaussian noise of std position_noise;
    velocity [rad/s, m/s]  the joint velocity, plus Gaussian noise of std velocity_noise;
    effort [N m or N]      the actuator torque (force) of the last physics step, after the
                           torque limits (0 before the first step).
Noise is drawn from the plugin's seeded generator (ctx.rng), so runs repeat.

Config: rate [Hz] of sim time (0: every control step, i.e. every physics step in the node),
position_noise, velocity_noise, topic (default "joint_states"). The message is serialized from
a template (sim_node.ros.cdr.JointStateCDR): a few microseconds per step.

Readings (for controller blocks of a SimpleSimulator): joint_position, joint_velocity,
joint_effort (n each).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import JointState

from sim_node.plugins.common import (JointLayout, check_std, rate_to_period, require_robot,
                                     robot_of, topic_name)
from sim_node.ros.cdr import JointStateCDR
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 10


class JointStatePublisher(SensorEmulator):
    """Publishes a robot's joint positions, velocities and efforts (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """rate [Hz] (0: every control step); position_noise [rad or m] and velocity_noise
        [rad/s or m/s]: standard deviations of Gaussian noise; topic: relative to the robot's
        namespace."""
        rate: float = 0.0
        position_noise: float = 0.0
        velocity_noise: float = 0.0
        topic: str = "joint_states"

        def __post_init__(self):
            super().__post_init__()
            rate_to_period(self)
            check_std(self.position_noise, "position_noise")
            check_std(self.velocity_noise, "velocity_noise")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        layout = JointLayout.of(robot_of(ctx))
        self._q_index = layout.q_index
        v = layout.v_index
        # (a slice when the joints' DOFs are contiguous, as without multi-DOF joints: cheaper)
        self._v_index = (slice(int(v[0]), int(v[-1]) + 1) if v.size and
                         np.array_equal(v, np.arange(v[0], v[-1] + 1)) else v)
        self._n = len(layout.names)
        self._encoder = JointStateCDR(layout.names)
        self._publisher = None
        if ctx.create_publisher is not None:
            self._publisher = ctx.create_publisher(JointState, topic_name(ctx, config.topic),
                                                   QUEUE_DEPTH)

    def reset(self, scope):
        """Nothing to reset: every value is read at the update (the noise generator is
        re-seeded by the simulator)."""

    def update(self, t=None):
        controller, config = self.ctx.controller, self.config
        t = self.ctx.sim.getTime() if t is None else t
        position = controller.getSensedConfig()[self._q_index]
        velocity = controller.getSensedVelocity()[self._v_index]
        effort = controller.getCommandedTorque()[self._v_index]
        if config.position_noise > 0.0:
            position += self.ctx.rng.normal(0.0, config.position_noise, self._n)
        if config.velocity_noise > 0.0:
            velocity += self.ctx.rng.normal(0.0, config.velocity_noise, self._n)
        if self._publisher is not None:
            self._publisher.publish(self._encoder.encode(t, position, velocity, effort))
        return {"joint_position": position, "joint_velocity": velocity, "joint_effort": effort}

    def shutdown(self):
        self._publisher = None
