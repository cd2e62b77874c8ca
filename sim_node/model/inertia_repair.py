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

1. Negative mass: the link is read as massless (mass 0, no inertia); rule 3 then applies.
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

A link without <inertial> is massless (the ROS convention; Pinocchio does the same), and rule 3
covers it when it moves. ``robot.urdf.inertia_repairs`` lists every repaired link as
{link: (Inertial as written or None, Inertial used)}.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import replace

import numpy as np

from sim_node.model.errors import URDFWarning

WATER_DENSITY = 1000.0          # [kg/m³], Drake's plausible density
TRIANGLE_TOLERANCE = 1e-6       # relative to the largest principal moment: rounding in files
ZERO_MOMENT = 1e-15             # [kg m²] moments this small are zero (no real link is that light)
MASSLESS_BODY_FRACTION = 1e-3   # of the robot's mass, for a massless moving subtree (rule 3)

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
    active constraints is tried and the nearest feasible projection kept (exact; 8 subsets)."""
    x = np.asarray(moments, dtype=float)
    if (_CONE @ x).max() <= 0.0:
        return x.copy()
    best, best_distance = np.zeros(3), float(np.linalg.norm(x))
    scale = max(float(np.abs(x).max()), 1e-300)
    for k in (1, 2):
        for active in itertools.combinations(range(3), k):
            A = _CONE[list(active)]
            candidate = x - A.T @ np.linalg.solve(A @ A.T, A @ x)
            if (_CONE @ candidate).max() <= 1e-12 * scale:
                distance = float(np.linalg.norm(candidate - x))
                if distance < best_distance:
                    best, best_distance = candidate, distance
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
    problem = ("not positive semi-definite" if moments.min() < 0
               else "violates the triangle inequality")
    note = (f"inertia with principal moments {_fmt(moments)} kg m^2 is {problem}: {how}")
    return replace(inertial, inertia=0.5 * (inertia + inertia.T)), note


def total_mass(urdf) -> float:
    return float(sum(link.inertial.mass for link in urdf.links.values()
                     if link.inertial is not None))


def repair_massless_moving_bodies(urdf, floating: bool):
    """`urdf` with rule 3 applied (a new URDFRobot when something changed; URDFWarnings issued).

    `floating`: whether the root body moves (a free joint attaches it to the world)."""
    from sim_node.model.urdf import Inertial

    # bodies: links merged across fixed joints (a union-find over the fixed joints). A floating
    # robot rooted at 'world' floats the world's child: that weld does not merge.
    group = {name: name for name in urdf.links}

    def find(name):
        while group[name] != name:
            group[name] = group[group[name]]
            name = group[name]
        return name

    children = {}
    for joint in urdf.joints.values():
        children.setdefault(joint.parent, []).append(joint)
        floats_here = floating and urdf.root == "world" and joint.parent == "world"
        if joint.type == "fixed" and not floats_here:
            group[find(joint.child)] = find(joint.parent)

    # the moving bodies' first links, and every link in tree order (iterative walk)
    heads = []
    if floating:
        heads.append(urdf.root if urdf.root != "world" else None)
    order, stack = [], [urdf.root]
    while stack:
        link = stack.pop()
        order.append(link)
        for joint in children.get(link, []):
            if joint.type != "fixed" or (floating and urdf.root == "world"
                                         and joint.parent == "world"):
                heads.append(joint.child)
            stack.append(joint.child)
    heads = [h for h in heads if h is not None]

    # mass of each link's subtree, accumulated leaves first
    subtree = {name: (link.inertial.mass if link.inertial is not None else 0.0)
               for name, link in urdf.links.items()}
    parent_of = {joint.child: joint.parent for joint in urdf.joints.values()}
    for link in reversed(order):
        if link in parent_of:
            subtree[parent_of[link]] += subtree[link]
    # a body's subtree: the subtrees of its head link plus those of links welded to it that hang
    # from other bodies' links are already inside, since welded links are descendants of the head
    massless = [h for h in heads if subtree[h] == 0.0]
    if not massless:
        return urdf

    robot_mass = total_mass(urdf)
    mass = MASSLESS_BODY_FRACTION * robot_mass if robot_mass > 0 else 1.0
    links = dict(urdf.links)
    repairs = dict(urdf.inertia_repairs)
    for head in massless:
        link = links[head]
        used = Inertial(mass=mass, com=np.zeros(3), inertia=plausible_sphere_inertia(mass))
        links[head] = replace(link, inertial=used)
        repairs[head] = (repairs.get(head, (link.inertial, None))[0], used)
        what = "no <inertial>" if link.inertial is None else "zero mass"
        warnings.warn(URDFWarning(
            urdf.source, f"link '{head}'",
            f"{what} on a moving body that carries no mass (its joint would have no inertia): "
            f"given a water-density solid sphere of {mass:g} kg at the link origin "
            f"({'0.1 % of the robot' if robot_mass > 0 else 'the robot is massless'})", link.line),
            stacklevel=3)
    return replace(urdf, links=links, inertia_repairs=repairs)


def _fmt(values) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"
