"""Wrench LPs of point contacts (seed 004): polyhedral friction cones, force closure and COM
equilibrium, solved by scipy.optimize.linprog (HiGHS).

A contact set is an (N, 7) array of rows [x, y, z, nx, ny, nz, kFriction] (validated by
sim_node.model.contact). Each contact force lies in a polyhedral friction cone, as in Klamp't
0.10.1: a frictional contact's cone is spanned by ``num_edges`` (default 4) edge vectors

    e_i = n + kFriction (cos(2 pi i / k) u + sin(2 pi i / k) w),   i = 0 .. k-1,

where (n, u, w) is the minimal rotation taking the x axis onto n (Klamp't's canonical basis),
so the polyhedral cone is inscribed in the Coulomb cone and touches it along the edges — the
same cone, edge for edge, as Klamp't's. A frictionless contact's cone is the ray {a n, a >= 0}
(Klamp't 0.10.1 instead leaves such a force unconstrained; see the README).
Forces are f_k = E_k^T a_k with edge weights a_k >= 0, so every LP here has nonnegative
variables and equality rows only.
"""
from __future__ import annotations

import math

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

DEFAULT_NUM_EDGES = 4          # Klamp't's friction-cone approximation (robotsim default)
RANK_TOLERANCE = 1e-9          # relative singular value below which the wrench map loses rank
# the least edge weight of a normalised zero-wrench combination below which it counts as zero:
# HiGHS meets equality rows to ~1e-7 (its primal feasibility tolerance)
POSITIVITY_TOLERANCE = 1e-7


def canonical_basis(n) -> tuple:
    """(u, w): the images of the y and z axes under the minimal rotation taking the x axis
    onto the unit vector n (Rodrigues about x × n); for n = -x (no unique minimal rotation)
    the half turn about z, as Klamp't. (3,) arrays."""
    n = np.asarray(n, dtype=float)
    if n[0] <= -1.0 + 1e-8:
        # Klamp't's (0, -1, 0), (0, 0, 1), made exactly orthogonal to an n a hair off -x
        u = np.array([0.0, -1.0, 0.0]) + n[1] * n
        u /= np.linalg.norm(u)
        return u, np.cross(n, u)
    # R = I + [v]x + [v]x^2 / (1 + c) with v = x × n = (0, -nz, ny), c = nx; near -x, 1 + nx
    # is taken as (ny^2 + nz^2) / (1 - nx), which does not cancel
    one_plus_c = (n[1] ** 2 + n[2] ** 2) / (1.0 - n[0]) if n[0] < 0 else 1.0 + n[0]
    s = 1.0 / one_plus_c
    u = np.array([-n[1], n[0] + s * n[2] * n[2], -s * n[1] * n[2]])
    w = np.array([-n[2], -s * n[1] * n[2], n[0] + s * n[1] * n[1]])
    return u, w


def cone_edges(n, kFriction: float, num_edges: int = DEFAULT_NUM_EDGES) -> np.ndarray:
    """(k, 3) edge vectors of the polyhedral friction cone of a contact with unit normal n;
    (1, 3) = [n] when frictionless. Each edge has n . e = 1."""
    n = np.asarray(n, dtype=float)
    if kFriction == 0.0:
        return n[None, :].copy()
    u, w = canonical_basis(n)
    angles = 2.0 * math.pi * np.arange(num_edges) / num_edges
    return n + kFriction * (np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * w)


def generators(contacts: np.ndarray, num_edges: int = DEFAULT_NUM_EDGES) -> tuple:
    """(E, owner): E (M, 3) all cone edges stacked, owner (M,) the contact index of each."""
    blocks = [cone_edges(c[3:6], c[6], num_edges) for c in contacts]
    if not blocks:
        return np.zeros((0, 3)), np.zeros(0, dtype=int)
    owner = np.concatenate([np.full(len(b), i) for i, b in enumerate(blocks)])
    return np.vstack(blocks), owner


def forces_from_weights(a: np.ndarray, E: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """(n, 3) contact forces f_k = sum of a_i E_i over contact k's edges."""
    f = np.zeros((n, 3))
    np.add.at(f, owner, a[:, None] * E)
    return f


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _solve(c, A_eq, b_eq, bounds=(0, None)):
    """linprog/HiGHS; returns the result (status 0 optimal, 2 infeasible, 3 unbounded)."""
    result = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if result.status not in (0, 2, 3):
        raise RuntimeError(f"contact LP: the solver failed ({result.message})")
    return result


class ObjectiveLP:
    """min c . a s.t. A_eq a = b_eq, a >= 0, for many objectives c over the same constraints:
    HiGHS (highspy) keeps the model and hot-starts each new objective from the last basis,
    ~10x faster than a fresh linprog per objective (support polygons need dozens)."""

    def __init__(self, A_eq: np.ndarray, b_eq: np.ndarray):
        self.A_eq, self.b_eq = A_eq, b_eq
        m, n = A_eq.shape
        self.n = n
        self.highs = highspy.Highs()
        self.highs.setOptionValue("output_flag", False)
        self.highs.setOptionValue("presolve", "off")   # tiny LPs; and never 'unbounded or
        lp = highspy.HighsLp()                         # infeasible' from presolve
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.full(n, highspy.kHighsInf)
        lp.row_lower_ = np.array(b_eq, dtype=float)
        lp.row_upper_ = np.array(b_eq, dtype=float)
        A = sp.csc_matrix(A_eq)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        self.highs.passModel(lp)
        self.columns = np.arange(n, dtype=np.int32)

    def solve(self, c) -> tuple:
        """(status, a): status 0 optimal (a the minimiser), 2 infeasible, 3 unbounded."""
        self.highs.changeColsCost(self.n, self.columns, np.asarray(c, dtype=float))
        self.highs.run()
        status = self.highs.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            return 0, np.array(self.highs.getSolution().col_value)
        if status == highspy.HighsModelStatus.kInfeasible:
            return 2, None
        if status == highspy.HighsModelStatus.kUnbounded:
            return 3, None
        result = _solve(c, self.A_eq, self.b_eq)      # anything else: a fresh solve decides
        return result.status, result.x


def wrench_matrix(contacts: np.ndarray, num_edges: int = DEFAULT_NUM_EDGES) -> np.ndarray:
    """(6, M) unit-free wrenches [e; (p - centroid) x e / L] of every cone edge, moments about
    the contacts' centroid divided by their spread L (1 when the contacts coincide), so force
    and moment rows have like magnitudes for the rank test."""
    E, owner = generators(contacts, num_edges)
    p = contacts[owner, 0:3]
    centroid = contacts[:, 0:3].mean(axis=0)
    spread = float(np.max(np.linalg.norm(contacts[:, 0:3] - centroid, axis=1)))
    arm = (p - centroid) / (spread if spread > 0.0 else 1.0)
    E_unit = E / np.linalg.norm(E, axis=1)[:, None]
    return np.vstack([E_unit.T, np.cross(arm, E_unit).T])


def force_closure_margin(contacts: np.ndarray, num_edges: int = DEFAULT_NUM_EDGES) -> tuple:
    """(rank ratio, positivity) of the contacts' wrench cone W = cone(G), G = wrench_matrix:
    W is all of R^6 (force closure) iff G has rank 6 and some combination with every weight
    > 0 sums to the zero wrench. rank ratio = s6 / s1 (singular values of G); positivity =
    max t s.t. G a = 0, a >= t, sum a = 1 (0 when none, -inf for an empty set)."""
    if len(contacts) == 0:
        return 0.0, -math.inf
    G = wrench_matrix(contacts, num_edges)
    s = np.linalg.svd(G, compute_uv=False)
    rank_ratio = float(s[5] / s[0]) if len(s) >= 6 and s[0] > 0 else 0.0
    M = G.shape[1]
    # variables [a (M), t]; maximise t: G a = 0, sum a = 1, a_i - t >= 0 via a = b + t, b >= 0
    #   G (b + t 1) = 0  ->  [G, G 1] [b; t] = 0;  sum(b) + M t = 1
    A_eq = np.vstack([np.hstack([G, G.sum(axis=1, keepdims=True)]),
                      np.hstack([np.ones((1, M)), [[float(M)]]])])
    b_eq = np.zeros(7)
    b_eq[6] = 1.0
    c = np.zeros(M + 1)
    c[-1] = -1.0
    result = _solve(c, A_eq, b_eq, bounds=[(0, None)] * M + [(None, None)])
    positivity = -math.inf if result.status == 2 else float(result.x[-1])
    return rank_ratio, positivity


def force_closure(contacts: np.ndarray, num_edges: int = DEFAULT_NUM_EDGES) -> bool:
    """True iff the contacts' friction cones can resist every wrench (the wrench cone is R^6).
    Independent of the frame the contacts are given in."""
    rank_ratio, positivity = force_closure_margin(contacts, num_edges)
    return rank_ratio > RANK_TOLERANCE and positivity > POSITIVITY_TOLERANCE


def com_equilibrium_forces(contacts: np.ndarray, fext: np.ndarray, com: np.ndarray,
                           num_edges: int = DEFAULT_NUM_EDGES):
    """(N, 3) contact forces in the friction cones with
        sum_k f_k + fext = 0,     sum_k (p_k - com) x f_k = 0
    (fext acting at com), minimising the total normal force sum_k n_k . f_k as Klamp't does;
    None when no such forces exist (always None for no contacts)."""
    n = len(contacts)
    if n == 0:
        return None
    fext, com = np.asarray(fext, dtype=float), np.asarray(com, dtype=float)
    E, owner = generators(contacts, num_edges)
    arm = contacts[owner, 0:3] - com
    A_eq = np.vstack([E.T, np.cross(arm, E).T])
    b_eq = np.concatenate([-fext, np.zeros(3)])
    # n . e = 1 on every edge, so sum(a) is the total normal force
    result = _solve(np.ones(len(E)), A_eq, b_eq)
    if result.status != 0:
        return None
    return forces_from_weights(result.x, E, owner, n)


def any_com_equilibrium(contacts: np.ndarray, fext: np.ndarray,
                        num_edges: int = DEFAULT_NUM_EDGES) -> bool:
    """True iff some COM c admits contact forces in the cones with sum f_k + fext = 0 and
    sum (p_k - c) x f_k = 0 (False for no contacts)."""
    n = len(contacts)
    if n == 0:
        return False
    fext = np.asarray(fext, dtype=float)
    E, owner = generators(contacts, num_edges)
    centroid = contacts[:, 0:3].mean(axis=0)
    arm = contacts[owner, 0:3] - centroid
    # unknown c' = c - centroid:  sum (p_k - centroid) x f_k + c' x fext = 0,
    # c' x fext = -[fext]x c'
    A_eq = np.vstack([np.hstack([E.T, np.zeros((3, 3))]),
                      np.hstack([np.cross(arm, E).T, -_skew(fext)])])
    b_eq = np.concatenate([-fext, np.zeros(3)])
    c = np.concatenate([np.ones(len(E)), np.zeros(3)])
    result = _solve(c, A_eq, b_eq, bounds=[(0, None)] * len(E) + [(None, None)] * 3)
    return result.status == 0
