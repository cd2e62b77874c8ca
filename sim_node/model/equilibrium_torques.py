"""Joint torques and contact forces that hold an articulated robot in equilibrium (seed 004,
Klamp't's equilibrium_torques / KrisLibrary's TorqueSolver).

At the robot's current configuration, find joint torques t (nv) and contact forces f_k in the
polyhedral friction cones (sim_node.model.contact_lp) with

    G(q; fext) + t_int = t + sum_k J_k(q)^T f_k

where G(q; fext) = RobotModel.getGravityForces(fext) is the generalised gravity, t_int optional
internal torques (e.g. torquesFromAccel(ddq) for a moving robot) and J_k the 3 x nv position
Jacobian of contact k's world point on its link. As Klamp't: DOFs whose torque limit is 0
(a floating base, floating joints) are passive, t = 0 there, so those rows are equalities;
the active torques minimise || t_i / w_i || with w_i = min(1000, torque limit_i), in the
l-infinity norm (norm 0, the default), l1 (norm 1) — both LPs (linprog/HiGHS) — or l2
(norm 2, a QP: qpsolvers with the Clarabel interior-point backend). Torque limits are weights
only, not bounds (Klamp't does not bound them either).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sim_node.model.contact_lp import DEFAULT_NUM_EDGES, _solve, forces_from_weights, generators

WEIGHT_CAP = 1000.0           # Klamp't's gTorqueMaxScaleMax


def contact_jacobian_transpose_map(robot, contacts: np.ndarray, links) -> np.ndarray:
    """(nv, 3N): column block k is J_k^T, the position Jacobian transpose of contact k's
    world point x_k on link links[k]."""
    nv = robot.model.nv
    JT = np.zeros((nv, 3 * len(contacts)))
    for k, (row, link_index) in enumerate(zip(contacts, links)):
        link = robot.link(int(link_index))
        R, t = link.getTransform()
        p_local = R.T @ (row[0:3] - t)
        JT[:, 3 * k:3 * k + 3] = link.getPositionJacobian(p_local).T
    return JT


def equilibrium_torques(robot, contacts: np.ndarray, links, fext, internal_torques=None,
                        norm: float = 0, num_edges: int = DEFAULT_NUM_EDGES):
    """(t (nv,), f (N, 3)) or None when no forces in the cones balance the passive DOFs.

    contacts: (N, 7) rows; links: N link indices; fext: (3,) gravity-like acceleration [m/s^2]
    passed to getGravityForces; internal_torques: (nv,) or None; norm: 0 (l-inf), 1 or 2."""
    nv = robot.model.nv
    lhs = robot.getGravityForces(fext)
    if internal_torques is not None:
        lhs = lhs + internal_torques
    limits = robot.getTorqueLimits()
    active = np.flatnonzero(limits > 0.0)
    passive = np.flatnonzero(~(limits > 0.0))
    n = len(contacts)
    E, owner = generators(contacts, num_edges)
    M = len(E)
    # contact torques J^T f = JT_E a, with f_k = sum of a_i E_i over k's edges
    JT = contact_jacobian_transpose_map(robot, contacts, links)
    JT_E = np.zeros((nv, M))
    for i, (k, e) in enumerate(zip(owner, E)):
        JT_E[:, i] = JT[:, 3 * k:3 * k + 3] @ e
    w = np.minimum(WEIGHT_CAP, limits[active])
    # scaled active torques s = (lhs - JT_E a)[active] / w = d - C a
    C = JT_E[active] / w[:, None]
    d = lhs[active] / w
    A_passive, b_passive = JT_E[passive], lhs[passive]
    na = len(active)

    if M == 0:
        # no contact forces: the passive DOFs must need no torque already
        scale = max(1.0, float(np.max(np.abs(lhs), initial=0.0)))
        a = None if np.any(np.abs(b_passive) > 1e-9 * scale) else np.zeros(0)
    elif norm == 2:
        a = _least_squares(C, d, A_passive, b_passive, M)
    elif norm in (0, 1):
        a = _lp_norm(C, d, A_passive, b_passive, M, na, norm)
    else:
        raise ValueError(f"equilibrium_torques: norm must be 0 (l-infinity), 1 or 2, got {norm!r}")
    if a is None:
        return None
    t = np.zeros(nv)
    t[active] = lhs[active] - JT_E[active] @ a
    return t, forces_from_weights(a, E, owner, n)


def _lp_norm(C, d, A_passive, b_passive, M, na, norm):
    """Edge weights a minimising ||d - C a||_inf (norm 0) or _1 (norm 1), passive rows exact."""
    npass = len(b_passive)
    if norm == 0:
        # variables [a (M), z]: -z <= d - C a <= z
        nz = 1 if na else 0
        c = np.concatenate([np.zeros(M), np.ones(nz)])
        slack = np.ones((na, nz))
    else:
        # variables [a (M), u (na)]: -u <= d - C a <= u
        nz = na
        c = np.concatenate([np.zeros(M), np.ones(nz)])
        slack = np.eye(na)
    # d - C a <= z  ->  -C a - z <= -d ;  -(d - C a) <= z  ->  C a - z <= d
    A_ub = np.vstack([np.hstack([-C, -slack]), np.hstack([C, -slack])])
    b_ub = np.concatenate([-d, d])
    A_eq = np.hstack([A_passive, np.zeros((npass, nz))]) if npass else None
    b_eq = b_passive if npass else None
    from scipy.optimize import linprog
    result = linprog(c, A_ub=A_ub if na else None, b_ub=b_ub if na else None, A_eq=A_eq,
                     b_eq=b_eq, bounds=[(0, None)] * (M + nz), method="highs")
    if result.status == 2:
        return None
    if result.status != 0:
        raise RuntimeError(f"equilibrium_torques: the LP solver failed ({result.message})")
    return result.x[:M]


def _least_squares(C, d, A_passive, b_passive, M):
    """Edge weights a minimising ||d - C a||_2^2, passive rows exact, a >= 0 (a QP)."""
    from qpsolvers import Problem, solve_problem
    # ||C a - d||^2 = a^T C^T C a - 2 d^T C a + const
    P = sp.csc_matrix(C.T @ C)
    q = -(C.T @ d)
    npass = len(b_passive)
    problem = Problem(P, q, A=sp.csc_matrix(A_passive) if npass else None,
                      b=b_passive if npass else None, lb=np.zeros(M))
    solution = solve_problem(problem, solver="clarabel", tol_feas=1e-10, tol_gap_abs=1e-10,
                             tol_gap_rel=1e-10)
    if not solution.found:
        return None
    return np.maximum(solution.x, 0.0)
