"""Default PID gains derived from the robot: every robot holds its pose and tracks position
commands without tuning (DESIGN.md §3).

Per joint DOF j: m_j is the largest diagonal entry B_jj(q) of the joint-space mass matrix over
the initial configuration and 64 configurations drawn within the joint limits (the most inertia
the joint moves when the others are held, wherever the robot goes), b_j its viscous damping
(URDF `damping`) and tau_j its effort limit. The PID  tau = kP e + kD de/dt + kI int(e)  makes the
single-joint closed loop
    m s^3 + (kD + b) s^2 + kP s + kI = (m s + beta) (s + w)^2,   beta = max(m w, b - 2 m w),
    kD = 2 m w + beta - b,   kP = m w^2 + 2 beta w,   kI = beta w^2:
a triple real pole at -w when the joint's own damping is small (b <= 3 m w: kP = 3 m w^2,
kD = 3 m w - b, kI = m w^3), and for a damping-dominated joint (small inertia behind a geared,
damped joint) a critically damped pair at -w with the fast pole at -beta/m (kD = 0). Critically
damped: the fastest settling without oscillation for this structure (a raw step of the setpoint
still overshoots, by up to 25 %, through the integral's zero; a milestone or a trajectory does
not). The bandwidth is
    w_j = min(W, w_tau, 0.2 / physics_dt),   W = 2 pi x 8 Hz,
with w_tau the bandwidth at which kP E = tau_j, E = 0.05 (rad or m): the joint reaches its effort
limit at an error of 0.05 rad (0.05 m), beyond which the torque saturates and the integral is
held within the limit. The integral removes the sag under gravity and dry friction.

Stability: the effective inertia a joint sees lies between its articulated inertia and
B_jj(q) <= m_j, and the loop stays stable for any effective inertia below 9 m_j (Hurwitz:
(kD + b) kP > M kI), so neither the configuration nor the coupling can destabilise it; kD and b
act implicitly in the engine and w dt <= 0.2 keeps the explicit kP step far from its limit.
Joints without an effort limit (inf) get the full bandwidth; joints with an effort limit of 0
cannot act and get zero gains.
"""
from __future__ import annotations

import math

import numpy as np

DEFAULT_BANDWIDTH = 2.0 * math.pi * 8.0     # W [rad/s]
SATURATION_ERROR = 0.05                     # E [rad or m]: full effort at this error
MAX_BANDWIDTH_STEPS = 0.2                   # w physics_dt at most
CONFIG_SAMPLES = 64                         # configurations searched for the largest B_jj


def pid_gains_at(m, b, w):
    """(kP, kI, kD) placing (m s + beta)(s + w)^2 for inertia m, damping b, bandwidth w
    (arrays of one shape)."""
    beta = np.maximum(m * w, b - 2.0 * m * w)
    return m * w * w + 2.0 * beta * w, beta * w * w, 2.0 * m * w + beta - b


def default_pid_gains(mass_diagonal, effort_limit, damping=None,
                      bandwidth: float = DEFAULT_BANDWIDTH,
                      saturation_error: float = SATURATION_ERROR):
    """(kP, kI, kD) arrays for joint DOFs with inertia `mass_diagonal` [kg m^2 or kg], effort
    limits `effort_limit` [N m or N] and viscous damping `damping` [N m s/rad or N s/m]
    (default 0), all of shape (n,); `bandwidth` [rad/s] the highest w."""
    m = np.asarray(mass_diagonal, dtype=float)
    tau = np.asarray(effort_limit, dtype=float)
    b = np.zeros_like(m) if damping is None else np.asarray(damping, dtype=float)
    if not m.shape == tau.shape == b.shape:
        raise ValueError(f"mass_diagonal {m.shape}, effort_limit {tau.shape} and damping "
                         f"{b.shape} differ")
    usable = (m > 0) & np.isfinite(m) & (tau > 0) & np.isfinite(b) & (b >= 0)
    m, b = np.where(usable, m, 1.0), np.where(usable, b, 0.0)
    w = np.minimum(float(bandwidth), _bandwidth_at_gain(
        m, b, np.where(np.isfinite(tau), tau / saturation_error, np.inf)))
    kp, ki, kd = pid_gains_at(m, b, w)
    return tuple(np.where(usable, gain, 0.0) for gain in (kp, ki, kd))


def _bandwidth_at_gain(m, b, kp):
    """The w at which pid_gains_at(m, b, w) gives this kP (inf for kP = inf): kP grows with w,
    as 2 b w - 3 m w^2 while b > 3 m w (beta = b - 2 m w), as 3 m w^2 beyond (beta = m w);
    the two meet at w = b / (3 m), kP = b^2 / (3 m)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        damped = kp <= b * b / (3.0 * m)
        w = np.where(damped, (b - np.sqrt(np.maximum(b * b - 3.0 * m * kp, 0.0))) / (3.0 * m),
                     np.sqrt(kp / (3.0 * m)))
    return np.where(np.isinf(kp), np.inf, w)


def largest_mass_diagonal(mass_matrix, q0, lower, upper, scalar, quaternions,
                          samples: int = CONFIG_SAMPLES, seed: int = 0):
    """Per-DOF largest diagonal entry of mass_matrix(q) (a callable returning (nv, nv)) over q0
    and `samples` configurations: the coordinates listed in `scalar` drawn uniformly within
    their limits (and within pi of q0), the quaternions starting at the indices `quaternions`
    drawn uniformly on SO(3); every other coordinate (a floating base) stays at q0.
    Deterministic for a given seed."""
    q0 = np.asarray(q0, dtype=float)
    if samples == 0:
        return mass_matrix(q0).diagonal().copy()
    rng = np.random.default_rng(seed)
    scalar = np.asarray(scalar, dtype=np.intp)
    low = np.maximum(lower[scalar], q0[scalar] - math.pi)
    high = np.minimum(upper[scalar], q0[scalar] + math.pi)
    configs = np.repeat(q0[None, :], samples + 1, axis=0)      # q0, then the samples
    configs[1:, scalar] = rng.uniform(low, high, size=(samples, len(scalar)))
    for k in quaternions:
        quaternion = rng.normal(size=(samples, 4))
        configs[1:, k:k + 4] = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
    return np.max([mass_matrix(q).diagonal().copy() for q in configs], axis=0)  # (M may be
                                                                            # a reused buffer)
