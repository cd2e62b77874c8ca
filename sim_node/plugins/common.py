"""What the built-in plugins share: topic and frame names, rates, throttled warnings, robot
joint layout (sim_node/sim/joints.py).

Topics of a robot's plugin are ``<namespace>/<topic>``, relative to the node's namespace, with
the robot's namespace from sim_node/sim/namespaces.py (the root for the robot of a one-robot
world: ``<topic>``; its name among several; a world-file ``namespace`` key or the node parameter
``robot_namespaces`` overrides). World plugins (no robot) use ``<topic>``.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np
from transforms3d.quaternions import mat2quat

from sim_node.ros.namespaces import robot_prefix
from sim_node.sim.joints import JointLayout

__all__ = ["JointLayout", "SampleSchedule", "ThrottledWarnings", "body_world_id", "check_rate",
           "check_std", "rate_to_period", "require_robot", "require_sampling_every_step",
           "robot_of", "topic_name", "xyzw"]

WARNING_PERIOD = 5.0        # [s] wall time: at most one warning per topic this often
TIME_TOLERANCE = 1e-9       # [s] an event is due this close before its time


def require_robot(plugin, ctx):
    """Raise unless ctx belongs to a robot (robot plugins cannot be world plugins)."""
    if ctx.controller is None:
        raise ValueError(f"{type(plugin).__name__} works on a robot; it cannot be a world "
                         f"plugin (ctx.robot is None)")


def robot_of(ctx):
    """The RobotModel of a robot plugin's context (None for a world plugin)."""
    return None if ctx.robot is None else ctx.sim.getWorld().robot(ctx.robot)


def topic_name(ctx, topic: str) -> str:
    """``<robot namespace>/<topic>`` for a robot plugin, ``<topic>`` for a world plugin."""
    robot = robot_of(ctx)
    return (robot_prefix(robot) if robot is not None else "") + topic.strip("/")


MIN_RATE = 1e-6    # [Hz] (a period of 11.6 days); slower rates overflow the messages' float32
                   # periods (LaserScan.scan_time) and are typos, not sensors


def check_rate(rate: float, what: str = "rate"):
    if not (0.0 <= rate < math.inf) or 0.0 < rate < MIN_RATE:
        raise ValueError(f"{what} must be a frequency >= 0 [Hz] (0: every control step; else "
                         f"at least {MIN_RATE:g}), got {rate}")


def check_std(value: float, what: str):
    if not value >= 0.0:
        raise ValueError(f"{what} must be a standard deviation >= 0, got {value}")


def rate_to_period(config):
    """For a sensor Config with ``rate`` [Hz]: set the update ``period`` [s] = 1 / rate (rate
    0: keep period, 0 by default = every control step). Giving both, inconsistent, is an
    error."""
    check_rate(config.rate)
    if config.rate == 0.0:
        return
    period = 1.0 / config.rate
    if config.period not in (0.0, period) and not math.isclose(config.period, period):
        raise ValueError(f"give rate [Hz] or period [s], not both (rate {config.rate}, "
                         f"period {config.period})")
    object.__setattr__(config, "period", period)


def require_sampling_every_step(config, plugin: str):
    """For sensors that sample every control step and publish at ``rate``: period stays 0."""
    check_rate(config.rate)
    if config.period != 0.0:
        raise ValueError(f"{plugin} samples every control step; set how often it publishes "
                         f"with rate [Hz], not period (got period {config.period})")


class ThrottledWarnings:
    """Warnings through a logger, at most one per key (a topic) per WARNING_PERIOD seconds of
    wall time; the ones held back are counted into the next. Thread-safe."""

    def __init__(self, logger, period: float = WARNING_PERIOD):
        self._logger = logger
        self._period = period
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def warn(self, key: str, text: str):
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self._period:
                self._held[key] = self._held.get(key, 0) + 1
                return
            self._last[key] = now
            held = self._held.pop(key, 0)
        suffix = f" ({held} more since the last warning)" if held else ""
        self._logger.warning("%s: %s%s", key, text, suffix)


class SampleSchedule:
    """When a sensor that differentiates the state over one control step publishes, and when
    it must sample the state.

    It is updated at every control step (its SensorEmulator period is 0) and publishes at
    `rate` [Hz] of sim time (0: every step), on the grid t0 + k / rate from its reset at t0.
    A publication at t uses the state at t and at the step before, so the sensor samples the
    state at the step of each publication and at the step before it (predicted from the last
    step's length): two samples per publication, not one per step.

    State: next [s] the time of the next publication; last [s] the time of the last update
    (None: none since the reset)."""

    def __init__(self, rate: float):
        self.period = 1.0 / rate if rate > 0.0 else 0.0
        self.next = 0.0
        self.last: float | None = None

    def reset(self, t: float):
        self.next, self.last = t, None

    def step(self, t: float) -> tuple[bool, bool]:
        """At the update of sim time t: (publish now, sample now)."""
        publish = t + TIME_TOLERANCE >= self.next
        if publish:
            if self.period > 0.0:       # the first time of the grid after t
                missed = math.floor((t + TIME_TOLERANCE - self.next) / self.period)
                self.next += (missed + 1) * self.period
            else:
                self.next = t
        last, self.last = self.last, t
        step = t - last if last is not None else 0.0
        publish_next = step <= 0.0 or t + step + TIME_TOLERANCE >= self.next
        return publish, publish or publish_next

    def get_state(self) -> dict:
        return {"next": self.next, "last": self.last}

    def set_state(self, state: dict):
        next_, last = float(state["next"]), state["last"]
        self.next, self.last = next_, None if last is None else float(last)


def xyzw(R) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix."""
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


def body_world_id(sim, world_id: int) -> int:
    """The world ID that reports the simulated body of `world_id` in Simulator.getAllContacts
    (links welded by fixed joints share one body, reported by one of them)."""
    return sim.getBodyID(world_id)
