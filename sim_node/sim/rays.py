"""Ray casts on a Simulator's current state (Simulator.rayCast; PyBullet's rayTestBatch).

The engine (engine/queries/raycast.pyx) answers with the shape hit; this module names it as
the world does: the entity ID (`getID()` of the terrain, rigid object or robot — a robot's ID
for any of its links) and the link index in its robot (-1 for terrains and rigid objects).

What counts as a hit is PyBullet's (measured on Bullet 3.2.7): solids are hit only where a ray
enters them from outside — a ray starting inside a sphere, box, capsule, cylinder or convex
hull does not hit it; planes, triangle meshes and heightfields are two-sided surfaces whose
normal turns towards the ray's origin; grazing rays and rays of zero length hit nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RayHits:
    """The nearest hit of each ray (N rays; one ray: every field drops its leading axis).

    fraction: (N,) float64 in [0, 1] along origin -> end, 1.0 = no hit
    body:     (N,) int64 entity ID hit, -1 = no hit
    link:     (N,) int64 link index in its robot, -1 = not a robot link / no hit
    point:    (N, 3) world hit point origin + fraction (end - origin) [m] (= end when no hit)
    normal:   (N, 3) unit outward surface normal at the hit, world; zeros when no hit
    """
    fraction: np.ndarray
    body: np.ndarray
    link: np.ndarray
    point: np.ndarray
    normal: np.ndarray

    def __iter__(self):
        # unpacks like PyBullet's tuples: fraction, body, link, point, normal = hits
        return iter((self.fraction, self.body, self.link, self.point, self.normal))


class ShapeOwners:
    """Entity ID and link index of every engine shape, -1 appended for "no shape" (index -1)."""

    def __init__(self, shape_owner: list):
        owners = np.array(list(shape_owner) + [(-1, -1)], dtype=np.int64).reshape(-1, 2)
        self.entity = np.ascontiguousarray(owners[:, 0])
        self.link = np.ascontiguousarray(owners[:, 1])


def ray_cast(scene, owners: ShapeOwners, origins, ends, threads=None, mask=None) -> RayHits:
    """Cast rays origins -> ends ((N, 3) or (3,) each, world [m]) in `scene` (an engine Scene)
    and name what they hit with `owners` (see Simulator.rayCast)."""
    o = np.asarray(origins, dtype=np.float64) if _numeric(origins) else None
    e = np.asarray(ends, dtype=np.float64) if _numeric(ends) else None
    if o is None or e is None:
        raise ValueError("rayCast: origins and ends must be arrays of numbers, (N, 3) or (3,)")
    single = o.shape == (3,) and e.shape == (3,)
    if single:
        o, e = o.reshape(1, 3), e.reshape(1, 3)
    elif o.ndim != 2 or e.ndim != 2 or o.shape != e.shape:
        raise ValueError(f"rayCast: origins and ends must both have shape (N, 3) or (3,), got "
                         f"{o.shape} and {e.shape}")
    fraction, shape, point, normal = scene.ray_cast(o, e, mask=mask, threads=threads)
    # shape -1 (no hit) picks the appended (-1, -1) row
    body = owners.entity[shape]
    link = owners.link[shape]
    if single:
        return RayHits(fraction[0].copy(), body[0].copy(), link[0].copy(), point[0], normal[0])
    return RayHits(fraction, body, link, point, normal)


def _numeric(x) -> bool:
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        return False
    return a.dtype.kind in "iuf"
