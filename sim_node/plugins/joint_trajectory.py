"""joint_trajectory (actuator): trajectory_msgs/JointTrajectory on ``<namespace>/joint_trajectory``,
executed in sim time.

Start time: header.stamp in sim time (a zero stamp: the sim time of the first control step after
it arrives). From then on, every control step at sim time t sets the PID targets of the
trajectory's joints to the trajectory at t - start: positions, and its time derivative as the
velocity targets (the targets move on with that velocity through the physics substeps of the
step). Between two points the trajectory is a cubic Hermite curve when both points give
velocities, and a straight line otherwise. A first point with time_from_start > 0 is reached
from the commanded state at the start time (the PID targets, and their velocities). After the
last point the joints hold its positions (velocity 0) and the trajectory is done.

Replacement (standard ROS semantics): a new trajectory replaces the one running from the new
one's start time on; until then the old one goes on. A trajectory waiting for its start is
replaced by a newer one. Joints of the old trajectory that the new one does not name hold their
commanded positions from the switch on. A trajectory with no points cancels: at its start time
the running one stops and its joints hold where they are.

A message is checked whole in the callback: joint names known, scalar (spherical, planar and
floating joints are refused by name) and not repeated, every point
with one position per joint and velocities / accelerations / effort empty or one per joint,
all finite, positions within the joint limits, |velocities| within the velocity limits,
time_from_start >= 0 and strictly increasing. A bad message is rejected entirely with a
warning naming the problem (at most one per topic every few seconds); whatever ran goes on.
Accelerations and efforts are checked but not used.

While a trajectory runs it commands its joints every control step: commands from other
plugins (joint_commands) to those joints are overridden until it ends. The running and the
waiting trajectory are part of the saved simulation state; ``reset`` drops both.

Without a ROS node, ``on_trajectory(message)`` takes messages directly.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from sim_node.plugins.common import (TIME_TOLERANCE, JointLayout, ThrottledWarnings,
                                     require_robot, robot_of, topic_name)
from sim_node.sim.simulation import ActuatorEmulator

QUEUE_DEPTH = 10


@dataclass
class Trajectory:
    """joints (k) joint indices; times (m,) time_from_start [s], increasing; positions (m, k)
    [rad or m]; velocities (m, k) [rad/s or m/s] (0 where not given); has_velocity (m,) which
    points gave velocities; start [s] sim time, or None: at the next control step."""
    joints: np.ndarray
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    has_velocity: np.ndarray
    start: float | None

    @property
    def end(self) -> float:
        return self.start + (self.times[-1] if self.times.size else 0.0)

    def from_state(self, position: np.ndarray, velocity: np.ndarray) -> "Trajectory":
        """This trajectory starting from a first point (position, velocity) at time 0, unless
        its own first point is at time 0."""
        if self.times.size == 0 or self.times[0] <= 0.0:
            return self
        return Trajectory(self.joints, np.concatenate([[0.0], self.times]),
                          np.vstack([position, self.positions]),
                          np.vstack([velocity, self.velocities]),
                          np.concatenate([[True], self.has_velocity]), self.start)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(position, velocity) (k each) at sim time t (held after the last point)."""
        times = self.times
        tau = t - self.start
        if tau >= times[-1]:
            return self.positions[-1], np.zeros(len(self.joints))
        if tau <= times[0]:
            return self.positions[0], self.velocities[0]
        i = int(np.searchsorted(times, tau, side="right")) - 1
        h = times[i + 1] - times[i]
        s = (tau - times[i]) / h
        p0, p1 = self.positions[i], self.positions[i + 1]
        if not (self.has_velocity[i] and self.has_velocity[i + 1]):
            return p0 + s * (p1 - p0), (p1 - p0) / h
        # cubic Hermite: p(s) = h00 p0 + h10 h v0 + h01 p1 + h11 h v1, s in [0, 1]
        v0, v1 = self.velocities[i], self.velocities[i + 1]
        s2, s3 = s * s, s * s * s
        position = ((2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * h * v0
                    + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * h * v1)
        velocity = ((6 * s2 - 6 * s) * p0 / h + (3 * s2 - 4 * s + 1) * v0
                    + (-6 * s2 + 6 * s) * p1 / h + (3 * s2 - 2 * s) * v1)
        return position, velocity

    def to_state(self) -> dict:
        return {"joints": self.joints.tolist(), "times": self.times.tolist(),
                "positions": self.positions.tolist(), "velocities": self.velocities.tolist(),
                "has_velocity": self.has_velocity.tolist(), "start": self.start}

    @classmethod
    def of_state(cls, state: dict) -> "Trajectory":
        k = len(state["joints"])
        return cls(np.array(state["joints"], dtype=np.intp),
                   np.array(state["times"], dtype=float),
                   np.array(state["positions"], dtype=float).reshape(-1, k),
                   np.array(state["velocities"], dtype=float).reshape(-1, k),
                   np.array(state["has_velocity"], dtype=bool),
                   None if state["start"] is None else float(state["start"]))


def _seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def parse_trajectory(layout: JointLayout, message) -> Trajectory:
    """The Trajectory of a trajectory_msgs/JointTrajectory; ValueError saying what is wrong."""
    names = list(message.joint_names)
    points = list(message.points)
    stamp = _seconds(message.header.stamp)
    start = stamp if stamp > 0.0 else None
    if not points:
        return Trajectory(layout.index(names), np.zeros(0), np.zeros((0, len(names))),
                          np.zeros((0, len(names))), np.zeros(0, dtype=bool), start)
    if not names:
        raise ValueError("no joint names")
    joints = layout.index(names)
    k, m = len(names), len(points)
    times = np.empty(m)
    positions, velocities = np.empty((m, k)), np.zeros((m, k))
    has_velocity = np.zeros(m, dtype=bool)
    for i, point in enumerate(points):
        where = f"point {i}"
        times[i] = _seconds(point.time_from_start)
        if times[i] < 0.0:
            raise ValueError(f"{where}: time_from_start {times[i]:g} s is negative")
        if i and times[i] <= times[i - 1]:
            raise ValueError(f"{where}: time_from_start {times[i]:g} s is not after the "
                             f"previous point's {times[i - 1]:g} s")
        for field in ("positions", "velocities", "accelerations", "effort"):
            size = len(getattr(point, field))
            allowed = (k,) if field == "positions" else (0, k)
            if size not in allowed:
                raise ValueError(f"{where}: {field} has {size} values for {k} joints"
                                 + ("" if field == "positions" else " (give one per joint, "
                                    "or none)"))
        try:
            positions[i] = layout.check_positions(joints, point.positions)
            if len(point.velocities):
                velocities[i] = layout.check_velocities(joints, point.velocities)
                has_velocity[i] = True
            for field in ("accelerations", "effort"):
                values = np.asarray(getattr(point, field), dtype=float)
                if not np.all(np.isfinite(values)):
                    raise ValueError(f"{field} must be finite")
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    return Trajectory(joints, times, positions, velocities, has_velocity, start)


class JointTrajectoryActuator(ActuatorEmulator):
    """Executes joint trajectories in sim time (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(ActuatorEmulator.Config):
        """topic: relative to the robot's namespace."""
        topic: str = "joint_trajectory"

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        self.layout = JointLayout.of(robot_of(ctx))
        self.topic = topic_name(ctx, config.topic)
        self._warnings = ThrottledWarnings(ctx.logger)
        self._lock = threading.Lock()
        self._running: Trajectory | None = None
        self._waiting: Trajectory | None = None
        self._active = True
        if ctx.create_subscription is not None:
            ctx.create_subscription(JointTrajectory, self.topic, self.on_trajectory,
                                    QUEUE_DEPTH)

    def on_trajectory(self, message):
        """Subscription callback (executor thread): validate, then keep as the waiting one."""
        try:
            trajectory = parse_trajectory(self.layout, message)
        except ValueError as error:
            self._warnings.warn(self.topic, f"trajectory rejected, nothing changed: {error}")
            return
        with self._lock:
            if self._active:
                self._waiting = trajectory

    @property
    def running(self) -> Trajectory | None:
        """The trajectory being executed (None: none)."""
        return self._running

    def process(self, commands, dt):
        t = self.ctx.sim.getTime()
        if self._waiting is not None:
            with self._lock:
                waiting = self._waiting
                if waiting is not None and waiting.start is None:
                    waiting.start = t
                if waiting is not None and t + TIME_TOLERANCE >= waiting.start:
                    self._waiting = None
                    self._switch(waiting)
        if self._running is not None:
            self._command(t, dt)

    def _switch(self, new: Trajectory):
        controller = self.ctx.controller
        q_index = self.layout.q_index
        joints = new.joints
        old = self._running
        if old is not None:
            left = np.setdiff1d(old.joints, joints)
            if left.size:           # the old trajectory's other joints hold
                controller.setJointCommands(self.layout.joint_index[left], "pid",
                                            controller.getCommandedConfig()[q_index[left]])
        if new.times.size == 0:
            if old is not None:
                controller.setJointCommands(self.layout.joint_index[old.joints], "pid",
                                            controller.getCommandedConfig()[q_index[old.joints]])
            self._running = None
            return
        position = controller.getCommandedConfig()[q_index[joints]]
        velocity = controller.getCommandedVelocity()[self.layout.v_index[joints]]
        self._running = new.from_state(position, velocity)

    def _command(self, t: float, dt: float):
        trajectory = self._running
        position, velocity = trajectory.sample(t)
        done = t + TIME_TOLERANCE >= trajectory.end
        self.ctx.controller.setJointCommands(self.layout.joint_index[trajectory.joints], "pid", position,
                                             None if done else velocity, None,
                                             0.0 if done else dt)
        if done:
            self._running = None

    def reset(self, scope):
        """Drop the running and the waiting trajectory."""
        with self._lock:
            self._running = self._waiting = None

    def get_state(self) -> dict:
        with self._lock:
            return {"running": None if self._running is None else self._running.to_state(),
                    "waiting": None if self._waiting is None else self._waiting.to_state()}

    def set_state(self, state: dict):
        try:
            running = None if state["running"] is None else Trajectory.of_state(state["running"])
            waiting = None if state["waiting"] is None else Trajectory.of_state(state["waiting"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"joint_trajectory: bad state ({error})") from None
        with self._lock:
            self._running, self._waiting = running, waiting

    def shutdown(self):
        with self._lock:
            self._active = False
            self._running = self._waiting = None
