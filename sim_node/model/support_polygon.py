"""Support polygon of point contacts under vertical gravity (seed 004), by exact projection.

The support polygon is the set of COM positions (x, y) for which forces in the contacts'
polyhedral friction cones (sim_node.model.contact_lp) balance gravity fext = (0, 0, -1):

    Q = { c_xy : sum_k f_k = (0, 0, 1),  sum_k (p_k - c) x f_k = 0,  f_k = E_k^T a_k, a >= 0 }.

With moments taken about the contacts' centroid p0 the z row reads sum_k ((p_k - p0) x f_k)_z
= 0 and the x, y rows give c_xy = p0_xy + (-M_y(a), M_x(a)): Q is the image of the polytope
{a >= 0 : 4 equality rows} under a linear map, computed as Bretl and Lall's recursive
projection (one LP per support direction, linprog/HiGHS): extreme points in a few directions,
then, between two neighbouring extreme points, the LP in the normal of the segment joining
them either finds a point beyond it (inserted, both halves refined) or proves it an edge.

Q is unbounded when the contacts can squeeze each other with a net moment (facing walls with
friction). Its recession cone K is the same map applied to {a >= 0 : zero force and z moment}
(found by projecting that cone's cross-section sum(a) = 1); Q's facets then have their normals
in the polar cone of K, and the expansion runs over that arc of directions only.

Result (Klamp't's form): a list of [nx, ny, offset], unit outward normals, such that
nx x + ny y <= offset for every point of Q, ordered counter-clockwise from the edge leaving
the lowest-x vertex; [[0, 0, -1]] when Q is empty; [] when Q is the whole plane. A point or a
segment is given as 4 half-planes (Klamp't likewise).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from sim_node.model.contact_lp import DEFAULT_NUM_EDGES, _solve, generators

EMPTY = [[0.0, 0.0, -1.0]]
MAX_DEPTH = 16                 # refinements of one edge (an exact projection needs far fewer)


class _Projection:
    """The map a -> c_xy over {a >= 0 : A a = b} (b = 0 and sum(a) = 1 for the cone)."""

    def __init__(self, A_eq, b_eq, B, offset):
        self.A_eq, self.b_eq, self.B, self.offset = A_eq, b_eq, B, offset
        self.scale = 1.0

    def extreme(self, d):
        """The point of the projection extreme in direction d; None if the set is empty;
        'unbounded' if d . c has no maximum."""
        result = _solve(-(d @ self.B), self.A_eq, self.b_eq)
        if result.status == 2:
            return None
        if result.status == 3:
            return "unbounded"
        return self.B @ result.x + self.offset


def _direction(angle: float) -> np.ndarray:
    return np.array([math.cos(angle), math.sin(angle)])


def _angle(v) -> float:
    return math.atan2(v[1], v[0]) % (2.0 * math.pi)


def _expand(proj: _Projection, angles: list, closed: bool, tol: float) -> list:
    """Extreme points, counter-clockwise, of the projection over the directions `angles`
    (increasing) and every direction between them that the refinement needs; `closed` when
    the angles go round the whole circle."""
    points = []
    for a in angles:
        x = proj.extreme(_direction(a))
        if x is None or isinstance(x, str):
            raise RuntimeError("support polygon: a bounded support LP became infeasible or "
                               "unbounded (numerical trouble near a degenerate contact set)")
        points.append((a, x))

    def refine(a0, x0, a1, x1, depth):
        gap = x1 - x0
        length = float(np.linalg.norm(gap))
        if length <= tol or depth > MAX_DEPTH:
            return []
        normal = np.array([gap[1], -gap[0]]) / length
        x = proj.extreme(normal)
        if x is None or isinstance(x, str) or normal @ x - normal @ x0 <= tol:
            return []              # the segment is an edge of the polygon
        a = _angle(normal)
        if a < a0:
            a += 2.0 * math.pi
        return refine(a0, x0, a, x, depth + 1) + [x] + refine(a, x, a1, x1, depth + 1)

    chain = []
    pairs = list(zip(points, points[1:] + (points[:1] if closed else [])))
    for (a0, x0), (a1, x1) in pairs:
        if a1 <= a0:
            a1 += 2.0 * math.pi
        chain.append(x0)
        chain += refine(a0, x0, a1, x1, 0)
    if not closed:
        chain.append(points[-1][1])
    return chain


def _distinct(chain: list, tol: float, closed: bool) -> list:
    """The chain without repeated points and without points inside a straight run."""
    out = []
    for x in chain:
        if not out or np.linalg.norm(x - out[-1]) > tol:
            out.append(x)
    if closed and len(out) > 1 and np.linalg.norm(out[0] - out[-1]) <= tol:
        out.pop()
    changed = True
    while changed and len(out) >= 3:
        changed = False
        n = len(out)
        for i in range(n if closed else n - 2):
            a, b, c = out[i], out[(i + 1) % n], out[(i + 2) % n]
            u, v = b - a, c - b
            if abs(u[0] * v[1] - u[1] * v[0]) <= tol * max(np.linalg.norm(u) + np.linalg.norm(v),
                                                          1.0) and u @ v > 0:
                del out[(i + 1) % n]
                changed = True
                break
    return out


def _plane(normal, point) -> list:
    normal = np.asarray(normal, dtype=float)
    normal = normal / np.linalg.norm(normal)
    return [float(normal[0]), float(normal[1]), float(normal @ point)]


def _edge_planes(chain: list, closed: bool) -> list:
    planes = []
    pairs = zip(chain, chain[1:] + (chain[:1] if closed else []))
    for a, b in pairs:
        gap = b - a
        planes.append(_plane([gap[1], -gap[0]], a))
    return planes


def _support_planes(chain: list, directions) -> list:
    """Half-planes d . x <= max over the chain, for a degenerate (point or segment) chain."""
    return [_plane(d, max(chain, key=lambda x: float(np.asarray(d) @ x))) for d in directions]


def _recession_cone(E, moments, tol):
    """Q's recession cone: None (Q bounded), 'plane', or ('arc', a0, a1) — the rays at angles
    a0 .. a1 counter-clockwise (a1 - a0 <= pi; a1 - a0 == pi with 'line' for a line)."""
    M = len(E)
    A_eq = np.vstack([E.T, moments[:, 2][None, :], np.ones((1, M))])
    b_eq = np.zeros(5)
    b_eq[4] = 1.0
    B = np.vstack([-moments[:, 1], moments[:, 0]])
    proj = _Projection(A_eq, b_eq, B, np.zeros(2))
    if proj.extreme(np.array([1.0, 0.0])) is None:
        return None
    cross_section = _distinct(_expand(proj, [0.0, 0.5 * math.pi, math.pi, 1.5 * math.pi],
                                      True, tol), tol, True)
    size = max(float(np.linalg.norm(x)) for x in cross_section)
    if size <= tol:
        return None                # only internal forces without moment: Q stays bounded
    if len(cross_section) >= 3 and all(p[2] > tol for p in _edge_planes(cross_section, True)):
        return "plane"             # the origin is inside the cross-section
    # vertices within rounding of the origin are the origin, not directions
    angles = []
    for a in sorted(_angle(x) for x in cross_section if np.linalg.norm(x) > 1e-7 * size):
        if not angles or a - angles[-1] > 1e-12:
            angles.append(a)
    if len(angles) > 1 and angles[0] + 2.0 * math.pi - angles[-1] <= 1e-12:
        angles.pop()
    gaps = [(angles[(i + 1) % len(angles)] - angles[i]) % (2.0 * math.pi)
            for i in range(len(angles))]
    if len(angles) == 1:
        return ("arc", angles[0], angles[0])
    i = int(np.argmax(gaps))
    a0 = angles[(i + 1) % len(angles)]
    a1 = a0 + (2.0 * math.pi - gaps[i])
    if a1 - a0 >= math.pi - 1e-9:
        on_line = all(abs(math.sin(a - a0)) <= 1e-9 for a in angles)
        return ("line" if on_line else "half", a0, a0 + math.pi)
    return ("arc", a0, a1)


def support_polygon(contacts: np.ndarray, num_edges: int = DEFAULT_NUM_EDGES) -> list:
    """Half-planes [nx, ny, offset] of the support polygon of the (N, 7) contacts under
    gravity (0, 0, -1) (see the module docstring for the form)."""
    if len(contacts) == 0:
        return [list(p) for p in EMPTY]
    E, owner = generators(contacts, num_edges)
    centroid = contacts[:, 0:3].mean(axis=0)
    moments = np.cross(contacts[owner, 0:3] - centroid, E)
    A_eq = np.vstack([E.T, moments[:, 2][None, :]])
    b_eq = np.array([0.0, 0.0, 1.0, 0.0])
    B = np.vstack([-moments[:, 1], moments[:, 0]])
    proj = _Projection(A_eq, b_eq, B, centroid[0:2])
    spread = float(np.max(np.linalg.norm(contacts[:, 0:3] - centroid, axis=1)))
    tol = 1e-9 * max(spread, 1.0)

    first = proj.extreme(np.array([1.0, 0.0]))
    if first is None:
        return [list(p) for p in EMPTY]
    recession = _recession_cone(E, moments, tol)
    if recession is None:
        chain = _distinct(_expand(proj, [0.0, 0.5 * math.pi, math.pi, 1.5 * math.pi], True,
                                  tol), tol, True)
        if len(chain) == 1:
            planes = _support_planes(chain, [(1, 0), (0, 1), (-1, 0), (0, -1)])
        elif len(chain) == 2:
            u = (chain[1] - chain[0]) / np.linalg.norm(chain[1] - chain[0])
            planes = _support_planes(chain, [u, (-u[1], u[0]), -u, (u[1], -u[0])])
        else:
            planes = _edge_planes(chain, True)
        return _from_lowest_x(planes, chain)
    if recession == "plane":
        return []
    kind, a0, a1 = recession
    if kind in ("half", "line"):
        # facet normals: the inward normal's opposite (half-plane), both normals (line)
        normals = [a0 - 0.5 * math.pi] + ([a0 + 0.5 * math.pi] if kind == "line" else [])
        planes = []
        for a in normals:
            x = proj.extreme(_direction(a))
            planes.append(_plane(_direction(a), x))
        return planes
    # facet normals d with d . r <= 0 for every recession ray r: angles a1 + pi/2 .. a0 + 3pi/2
    start, stop = a1 + 0.5 * math.pi, a0 + 1.5 * math.pi
    count = max(2, int(math.ceil((stop - start) / (0.5 * math.pi))) + 1)
    angles = list(np.linspace(start, stop, count))
    chain = _distinct(_expand(proj, angles, False, tol), tol, False)
    ends = [_plane(_direction(start), chain[0]), _plane(_direction(stop), chain[-1])]
    if len(chain) <= 2:
        candidates = [(1, 0), (0, 1), (-1, 0), (0, -1)]
        if len(chain) == 2:
            u = (chain[1] - chain[0]) / np.linalg.norm(chain[1] - chain[0])
            candidates = [u, (-u[1], u[0]), -u, (u[1], -u[0])]
        inside = [d for d in candidates
                  if all(np.asarray(d) @ _direction(a) <= 1e-12 for a in (a0, a1))]
        return _irredundant([ends[0]] + _support_planes(chain, inside) + [ends[1]], tol)
    return _irredundant([ends[0]] + _edge_planes(chain, False) + [ends[1]], tol)


def _irredundant(planes: list, tol: float) -> list:
    """The planes without those the others already imply (an end plane of an unbounded
    polygon through the same vertex as an edge): plane j goes when max n_j . x over the
    others is at most its offset."""
    out = list(planes)
    j = 0
    while j < len(out) and len(out) > 1:
        others = np.array(out[:j] + out[j + 1:])
        result = linprog(-np.array(out[j][0:2]), A_ub=others[:, 0:2], b_ub=others[:, 2],
                         bounds=[(None, None)] * 2, method="highs")
        if result.status == 0 and -result.fun <= out[j][2] + tol:
            del out[j]
        else:
            j += 1
    return out


def _from_lowest_x(planes: list, chain: list) -> list:
    """Rotate the counter-clockwise plane list to start at the edge leaving the vertex with the
    least (x, y), as Klamp't orders it."""
    if len(chain) < 3:
        return planes
    start = min(range(len(chain)), key=lambda i: (round(float(chain[i][0]), 12),
                                                  float(chain[i][1])))
    return planes[start:] + planes[:start]
