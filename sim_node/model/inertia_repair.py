"""Repair of physically invalid inertias in robot files (issue 10 §1; README "Loading robot files").

A rigid body's rotational inertia about its centre of mass is valid when its principal moments
(the eigenvalues λ1, λ2, λ3 of the symmetric 3x3 tensor) satisfy the triangle inequality
λi <= λj + λk for every i (which implies λi >= 0, i.e. positive semi-definite). Files in the wild
break this (CAD exports, hand-typed values, products of inertia of the wrong sign). What others do:

* PyBullet (BulletURDFImporter::getMassAndInertia, used with URDF_USE_INERTIA_FROM_FILE): checks
  the same triangle inequality on the principal moments and, when it fails, prints "Bad inertia
  tensor properties, setting inertia to zero" and uses a zero inertia; a link without <inertial>
  gets mass 1 and inertia diag(1, 1, 1).
* Drake (multibody/parsing/detail_common.cc, ParseSpatialInertia): emits a warning and replaces
  an invalid inertia by a "plausible" one: a solid sphere of the density of water (1000 kg/m³)
  with the link's mass (1 kg when the mass is not positive), centred at the given centre of mass.

sim_node's rule keeps as much of the file as it can and warns (URDFWarning) naming the link:

1. Negative mass, or zero mass with a non-zero inertia tensor (a body without mass has no
   rotational inertia; PyBullet's static bases are written so): the link is read as massless
   (mass 0, no inertia); rule 3 then applies if it moves.
2. Invalid rotational inertia (a triangle inequality violated by more than 1e-6 of the largest
   moment, or a negative moment; moments below 1e-15 kg m² count as zero): the principal axes are kept and the moments are replaced by the
   nearest point (Euclidean distance) of the valid cone {λi <= λj + λk}. The valid set is
   unitarily invariant and convex, so this is also the valid tensor nearest to the written one in
   the Frobenius norm. When that nearest tensor is zero (every moment negative), Drake's plausible
   inertia is used: a water-density solid sphere of the link's mass.
3. A moving body without mass: links merged across fixed joints form one body; a body attached by
   a movable joint (or the floating base) whose whole subtree (the body and everything it carries)
   has zero mass would make the mass matrix singular, so its first link gets Drake's plausible
   inertia: a water-density solid sphere centred at the link origin, of 0.1 % of the robot's mass
   (1 kg when the whole robot is massless). A massless body that carries massive children is left
   alone: its joint's inertia comes from the children (the common "virtual link" between two
   joints), as in Pinocchio and PyBullet.

4. A moving body with mass whose rotational inertia about its centre of mass (its links
   combined) has a principal moment below 1e-4 of the largest: a point mass or a thin rod, which
   make the mass matrix singular or nearly so (a floating rod spins freely about its axis;
   PyBullet's random_urdfs write (1, 1, 0), iCub's links are point masses). The heaviest link of
   the body gets an isotropic inertia added so that the smallest moment is 1e-4 of the largest,
   or, for a point mass, the inertia of a water-density solid sphere of the body's mass.
   (Combinations of joints that move no mass, e.g. two coaxial joints around a massless link,
   are not detected.)

A link without <inertial> is massless (the ROS convention; Pinocchio does the same), and rule 3
covers it when it moves. ``robot.urdf.inertia_repairs`` lists every repaired link as
{link: (Inertial as written or None, Inertial used)}.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, replace

import numpy as np

from sim_node.model.errors import URDFWarning

WATER_DENSITY = 1000.0          # [kg/m³], Drake's plausible density
TRIANGLE_TOLERANCE = 1e-6       # relative to the largest principal moment: rounding in files
ZERO_MOMENT = 1e-15             # [kg m²] moments this small are zero (no real link is that light)
MASSLESS_BODY_FRACTION = 1e-3   # of the robot's mass, for a massless moving subtree (rule 3)
DEGENERATE_RATIO = 1e-4         # smallest / largest principal moment of a moving body (rule 4)

@dataclass(frozen=True)
class Inertial:
    """A link's <inertial> (sim_node.model.urdf re-exports it)."""
    mass: float            # [kg]
    com: np.ndarray        # centre of mass in the link frame [m]
    inertia: np.ndarray    # 3x3 about the com, link axes [kg m^2]


# rows a of the valid cone {λ : a · λ <= 0}: λi - λj - λk <= 0
_CONE = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])


def is_valid_moments(moments) -> bool:
    """Whether principal moments (3) are physically valid, up to rounding in the file."""
    lam = np.asarray(moments, dtype=float)
    scale = float(np.abs(lam).max(initial=0.0))
    if scale <= ZERO_MOMENT:
        return True
    return bool(lam.min() >= -max(1e-12 * scale, ZERO_MOMENT)
                and (_CONE @ lam).max() <= max(TRIANGLE_TOLERANCE * scale, ZERO_MOMENT))


def nearest_valid_moments(moments) -> np.ndarray:
    """The point of the cone {λi <= λj + λk} nearest to `moments` (3,), Euclidean distance.

    The projection onto a polyhedral cone lies on the span of one of its faces: every subset of
    active constraints is tried and the nearest feasible projection kept (exact; 8 subsets).
    Each candidate c is the orthogonal projection of x onto a subspace, so |x - c|^2 =
    |x|^2 - |c|^2: the nearest is the longest, compared without the rounding of |x - c| (which
    cannot tell (e/2, e/2, 0) from 0 for x = (0, e, -3), e = 6e-8)."""
    x = np.asarray(moments, dtype=float)
    if (_CONE @ x).max() <= 0.0:
        return x.copy()
    best, best_length = np.zeros(3), 0.0
    scale = max(float(np.abs(x).max()), 1e-300)
    for k in (1, 2):
        for active in itertools.combinations(range(3), k):
            A = _CONE[list(active)]
            candidate = x - A.T @ np.linalg.solve(A @ A.T, A @ x)
            if (_CONE @ candidate).max() <= 1e-12 * scale:
                length = float(candidate @ candidate)
                if length > best_length:
                    best, best_length = candidate, length
    return best


def plausible_sphere_inertia(mass: float) -> np.ndarray:
    """Drake's plausible inertia: a solid sphere of water density with `mass` [kg], 3x3."""
    radius = (3.0 * mass / (4.0 * math.pi * WATER_DENSITY)) ** (1.0 / 3.0)
    return np.eye(3) * 0.4 * mass * radius * radius


def repair_link_inertial(inertial):
    """(Inertial used, '' or what was repaired) for one link's <inertial> (rules 1 and 2)."""
    if inertial.mass < 0:
        fixed = replace(inertial, mass=0.0, inertia=np.zeros((3, 3)))
        return fixed, f"negative mass {inertial.mass:g} kg: read as a massless link"
    if inertial.mass == 0:
        if np.any(inertial.inertia != 0):
            fixed = replace(inertial, inertia=np.zeros((3, 3)))
            return fixed, "zero mass with a non-zero inertia: read as a massless link"
        return inertial, ""
    tensor = 0.5 * (inertial.inertia + inertial.inertia.T)
    moments, axes = np.linalg.eigh(tensor)
    if is_valid_moments(moments):
        return inertial, ""
    repaired = nearest_valid_moments(moments)
    if np.abs(repaired).max() <= 1e-12 * np.abs(moments).max() and inertial.mass > 0:
        inertia = plausible_sphere_inertia(inertial.mass)
        how = ("no valid inertia is near it: replaced by a water-density solid sphere of "
               f"{inertial.mass:g} kg (moments {_fmt(np.diag(inertia))})")
    else:
        inertia = axes @ np.diag(repaired) @ axes.T
        how = f"principal moments set to the nearest valid ones {_fmt(repaired)}"
    problem = ("are not all non-negative" if moments.min() < 0
               else "violate the triangle inequality")
    note = f"principal moments of inertia {_fmt(moments)} kg m^2 {problem}: {how}"
    return replace(inertial, inertia=0.5 * (inertia + inertia.T)), note


def total_mass(urdf) -> float:
    return float(sum(link.inertial.mass for link in urdf.links.values()
                     if link.inertial is not None))


def _welded_to(urdf, link: str) -> list:
    """`link` and every link joined to it through fixed joints below it."""
    children = {}
    for joint in urdf.joints.values():
        children.setdefault(joint.parent, []).append(joint)
    found, stack = [], [link]
    while stack:
        name = stack.pop()
        found.append(name)
        stack += [j.child for j in children.get(name, []) if j.type == "fixed"]
    return found


def root_body_mass(urdf) -> float:
    """Mass of the root link and the links welded to it [kg]."""
    return float(sum(urdf.links[n].inertial.mass for n in _welded_to(urdf, urdf.root)
                     if urdf.links[n].inertial is not None))


def repair_moving_bodies(urdf, floating: bool):
    """`urdf` with rules 3 and 4 applied (a new URDFRobot when something changed; URDFWarnings
    issued). `floating`: whether the root body moves (a free joint attaches it to the world)."""
    children, parent_joint = {}, {}
    for joint in urdf.joints.values():
        children.setdefault(joint.parent, []).append(joint)
        parent_joint[joint.child] = joint
    world_floats = floating and urdf.root == "world"

    def moves(joint) -> bool:
        return joint.type != "fixed" or (world_floats and joint.parent == "world")

    # link poses in the root frame at the zero configuration, and tree order (iterative)
    R_root, p_root = {urdf.root: np.eye(3)}, {urdf.root: np.zeros(3)}
    order, stack = [], [urdf.root]
    while stack:
        link = stack.pop()
        order.append(link)
        for joint in children.get(link, []):
            R_root[joint.child] = R_root[link] @ joint.origin.R
            p_root[joint.child] = p_root[link] + R_root[link] @ joint.origin.p
            stack.append(joint.child)
    # bodies: each moving body's first link and the links welded to it
    heads = [urdf.root] if floating and urdf.root != "world" else []
    heads += [link for link in order if link in parent_joint and moves(parent_joint[link])]
    body_of = {}
    for link in order:
        joint = parent_joint.get(link)
        body_of[link] = link if joint is None or moves(joint) else body_of[joint.parent]
    members = {head: [] for head in heads}
    for link in order:
        if body_of[link] in members:
            members[body_of[link]].append(link)
    subtree_mass = {link: _mass(urdf.links[link]) for link in order}
    for link in reversed(order):
        if link in parent_joint:
            subtree_mass[parent_joint[link].parent] += subtree_mass[link]

    robot_mass = total_mass(urdf)
    dummy_mass = MASSLESS_BODY_FRACTION * robot_mass if robot_mass > 0 else 1.0
    links = dict(urdf.links)
    repairs = dict(urdf.inertia_repairs)
    notes = []
    for head in heads:
        if subtree_mass[head] == 0.0:                                              # rule 3
            link = links[head]
            used = Inertial(mass=dummy_mass, com=np.zeros(3),
                            inertia=plausible_sphere_inertia(dummy_mass))
            what = "no <inertial>" if link.inertial is None else "zero mass"
            notes.append((link, f"{what} on a moving body that carries no mass (its joint would "
                          f"have no inertia): given a water-density solid sphere of "
                          f"{dummy_mass:g} kg at the link origin ("
                          + ("0.1 % of the robot's mass)" if robot_mass > 0
                             else "the robot is massless)")))
            changed = {head: used}
        else:
            changed, note = _degenerate_body(links, members[head], R_root)          # rule 4
            if not changed:
                continue
            notes.append((links[head], note))
        for name, used in changed.items():
            written = repairs.get(name, (links[name].inertial, None))[0]
            links[name] = replace(links[name], inertial=used)
            repairs[name] = (written, used)
    if not notes:
        return urdf
    for link, note in notes:
        warnings.warn(URDFWarning(urdf.source, f"link '{link.name}'", note, link.line),
                      stacklevel=3)
    return replace(urdf, links=links, inertia_repairs=repairs)


def _mass(link) -> float:
    return link.inertial.mass if link.inertial is not None else 0.0


def _degenerate_body(links, names, R_root):
    """Rule 4 for the body made of the links `names`: ({link: Inertial used} or {}, note)."""
    parts = [(name, links[name].inertial) for name in names
             if links[name].inertial is not None and links[name].inertial.mass > 0]
    if not parts:
        return {}, ""     # massless, carrying mass: its joint's inertia comes from below
    head = names[0]
    mass = sum(i.mass for _, i in parts)
    # the body's rotational inertia about its com, in the head link's axes (welded links keep
    # their relative poses, so any configuration serves)
    R_h = R_root[head]
    placed = []
    for name, inertial in parts:
        R = R_h.T @ R_root[name]
        placed.append((inertial.mass, R @ inertial.com, R @ inertial.inertia @ R.T, R))
    com = sum(m * c for m, c, _, _ in placed) / mass
    inertia = sum(I + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com))
                  for m, c, I, _ in placed)
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    largest = float(moments.max())
    heaviest, heavy_inertial = max(parts, key=lambda item: item[1].mass)
    R_heavy = dict((n, R) for (n, _), (_, _, _, R) in zip(parts, placed))[heaviest]
    if largest <= ZERO_MOMENT:
        added = plausible_sphere_inertia(mass)
        how = f"the inertia of a water-density solid sphere of {mass:g} kg added"
    elif moments.min() < DEGENERATE_RATIO * largest:
        added = np.eye(3) * (DEGENERATE_RATIO * largest - moments.min())
        how = f"{added[0, 0]:.3g} kg m^2 added about every axis"
    else:
        return {}, ""
    used = replace(heavy_inertial, inertia=heavy_inertial.inertia + R_heavy.T @ added @ R_heavy)
    note = (f"the body has mass but its principal moments of inertia {_fmt(moments)} kg m^2 "
            f"nearly vanish (a point mass or a thin rod: a singular mass matrix): {how} "
            f"(at link '{heaviest}')")
    return {heaviest: used}, note


def _fmt(values) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"
