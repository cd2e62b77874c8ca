"""Simulation time as ROS time (builtin_interfaces/Time)."""
from __future__ import annotations

import math

from builtin_interfaces.msg import Time


def time_msg(t: float) -> Time:
    """builtin_interfaces/Time of t seconds (nanoseconds rounded)."""
    sec = math.floor(t)
    nanosec = int(round((t - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return Time(sec=int(sec), nanosec=nanosec)


def seconds(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9
