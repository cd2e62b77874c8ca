"""Default PID gains derived from the robot: every robot holds its pose and tracks position
commands without tuning (DESIGN.md §3).

For joint j, with m_j the diagonal entry of the joint-space mass matrix B(q0) at the initial
configuration (the inertia the joint moves when the others are held) and tau_j its effort limit,
the PID  tau = kP e + kD de/dt + kI int(e)  is placed so that the single-joint closed loop
    m_j s^3 + kD s^2 + kP s + kI = m_j (s + w_j)^3
has a triple real pole at -w_j (critically damped: the fastest settling without oscillation for
this structure; a raw step of the setpoint still overshoots by up to 25 % through the integral's
zero, a time-optimal milestone or a trajectory does not):
    kP = 3 m_j w_j^2,   kD = 3 m_j w_j,   kI = m_j w_j^3,
    w_j = min(W, sqrt(tau_j / (3 m_j E)))  [rad/s],   W = 2 pi x 8 Hz,  E = 0.05 (rad or m).
W is the bandwidth; the effort term lowers it for weak joints so that kP E = tau_j: the joint
reaches its effort limit at an error of E (0.05 rad, or 0.05 m for a prismatic joint), beyond which
the torque saturates (the integral keeps within the limit). The integral removes the sag under
gravity; the effective inertia a joint sees in the coupled robot lies between its articulated
inertia and m_j, and the loop above stays stable for any effective inertia below 9 m_j
(kP kD > m kI), so coupling cannot destabilise it. kD acts implicitly in the engine, so the
gains are stable at any physics step the engine accepts (W dt = 0.05 at 1 ms).

Joints without an effort limit (inf) get the full bandwidth; joints with an effort limit of 0
cannot act and get zero gains.
"""
from __future__ import annotations

import math

import numpy as np

DEFAULT_BANDWIDTH = 2.0 * math.pi * 8.0     # W [rad/s]
SATURATION_ERROR = 0.05                     # E [rad or m]: full effort at this error


def default_pid_gains(mass_diagonal, effort_limit, bandwidth: float = DEFAULT_BANDWIDTH,
                      saturation_error: float = SATURATION_ERROR):
    """(kP, kI, kD) arrays for joints with mass-matrix diagonal entries `mass_diagonal`
    [kg m^2 or kg] and effort limits `effort_limit` [N m or N] (both shape (n,))."""
    m = np.asarray(mass_diagonal, dtype=float)
    tau = np.asarray(effort_limit, dtype=float)
    if m.shape != tau.shape:
        raise ValueError(f"mass_diagonal {m.shape} and effort_limit {tau.shape} differ")
    usable = (m > 0) & np.isfinite(m) & (tau > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        effort_bandwidth = np.sqrt(np.where(usable, tau / (3.0 * m * saturation_error), 0.0))
    w = np.where(usable, np.minimum(bandwidth, effort_bandwidth), 0.0)
    m = np.where(usable, m, 0.0)
    return 3.0 * m * w * w, m * w ** 3, 3.0 * m * w
