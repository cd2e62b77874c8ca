"""Collision queries and filters on the simulated state (PyBullet's names on the Simulator):
closest points, bounding boxes, overlap, collision filter groups / masks and pair overrides.

IDs (issue 12's contract): `id` is the entity ID, getID() of a robot, rigid object or terrain;
`link` the link's index in its robot (RobotModel.link(i)), -1 (or None) for rigid objects and
terrains. Shapes are the engine's (sim_node.model.scene): link and object meshes are their
convex hulls, terrain meshes triangle meshes, no boundary layer and no margin.

Filters belong to collision bodies: links welded by fixed joints form one body, so a filter set
on one of them applies to all of them (getCollisionFilterGroupMask of any says so). They are
settings, not state: getState / setState / reset keep them, as they keep surfaces and paddings
(PyBullet's saveState / restoreState do not touch filters either); spawn and delete carry them
over by entity.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim_node.model.collide import shape_owners
from sim_node.model.robot import RobotModel

MAX_QUERY_DISTANCE = 1e4    # [m] |max_distance| of getClosestPoints (bounds.MAX_POSITION)
MAX_QUERY_COORDINATE = 1e9  # [m] |lo|, |hi| of getOverlappingObjects
FILTER_BITS = 0xFFFFFFFF    # group and mask are 32-bit unsigned


@dataclass(frozen=True)
class ClosestPoint:
    """One pair of closest points (PyBullet's getClosestPoints row): body_a, link_a, body_b,
    link_b (entity IDs and link indices, -1 but for robot links), point_a, point_b (3,) world
    [m], normal (3,) unit, from B towards A (PyBullet's contactNormalOnB), distance [m] signed
    (< 0: penetration depth); point_a - point_b = distance * normal."""
    body_a: int
    link_a: int
    body_b: int
    link_b: int
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    distance: float


class Queries:
    """The queries of one Simulator's current scene (rebuilt with it)."""

    def __init__(self, sim):
        self._sim = sim
        self._layout = None

    def _owners(self):
        layout = self._sim.layout
        if layout is not self._layout:
            self._owner_entity, self._owner_link = shape_owners(layout)
            self._layout = layout
        return self._owner_entity, self._owner_link

    # -- IDs -----------------------------------------------------------------------------
    def _entity(self, id_, what: str):
        world = self._sim.getWorld()
        if isinstance(id_, bool) or not isinstance(id_, (int, np.integer)):
            raise TypeError(f"{what}: an entity ID must be an int, got {type(id_).__name__}")
        if not 0 <= int(id_) < world.numIDs():
            raise ValueError(f"{what}: unknown entity ID {id_} (IDs are 0..{world.numIDs() - 1})")
        entity = world.getEntity(int(id_))
        if not hasattr(entity, "getCollisionGeometry") or isinstance(entity, RobotModel):
            if isinstance(entity, RobotModel):
                return entity
            raise ValueError(f"{what}: ID {id_} is link '{world.getName(int(id_))}': pass its "
                             f"robot's ID {entity.getRobot().getID()} and link index "
                             f"{entity.getIndex()}")
        return entity

    def _link(self, entity, link, what: str, allow_all: bool = True):
        # None: every link (robots) / the entity; else a link index (robots) or -1
        if isinstance(entity, RobotModel):
            if link is None and allow_all:
                return None
            if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or \
                    not 0 <= int(link) < entity.numLinks():
                raise ValueError(f"{what}: link {link!r} of robot '{entity.getName()}': valid "
                                 f"links are 0..{entity.numLinks() - 1}"
                                 + (" or None (all)" if allow_all else ""))
            return int(link)
        if link is not None and link != -1:
            raise ValueError(f"{what}: '{entity.getName()}' is not a robot: its link is -1 "
                             f"(or None), got {link!r}")
        return None

    def _shapes(self, id_, link, what: str) -> np.ndarray:
        entity = self._entity(id_, what)
        link = self._link(entity, link, what)
        owner, owner_link = self._owners()
        keep = owner == entity.getID()
        if link is not None:
            keep &= owner_link == link
        return np.flatnonzero(keep)

    def _body(self, id_, link, what: str, allow_all: bool = False) -> list:
        # collision bodies of (entity, link); a robot with link None: all of its bodies
        entity = self._entity(id_, what)
        link = self._link(entity, link, what, allow_all)
        layout = self._sim.layout
        if isinstance(entity, RobotModel):
            links = entity.links() if link is None else [entity.link(link)]
            return sorted({layout.body_of_id[l.getID()] for l in links
                           if l.getID() in layout.body_of_id})
        if entity.getID() not in layout.body_of_id:
            raise ValueError(f"{what}: '{entity.getName()}' has no simulated body")
        return [layout.body_of_id[entity.getID()]]

    # -- closest points -------------------------------------------------------------------
    def closest_points(self, id_a, id_b, max_distance, link_a=None, link_b=None) -> list:
        what = "getClosestPoints"
        max_distance = _number(max_distance, f"{what}: max_distance")
        if not abs(max_distance) <= MAX_QUERY_DISTANCE:
            raise ValueError(f"{what}: max_distance {max_distance} [m] is beyond "
                             f"+-{MAX_QUERY_DISTANCE:g} m")
        shapes_a = self._shapes(id_a, link_a, what)
        shapes_b = self._shapes(id_b, link_b, what)
        found = self._sim.engine.closest_points(shapes_a, shapes_b, max_distance)
        owner, owner_link = self._owners()
        best = {}
        for k in range(len(found["distance"])):
            sa, sb = found["shape_a"][k], found["shape_b"][k]
            key = (int(owner_link[sa]), int(owner_link[sb]))
            if key[0] == key[1] and owner[sa] == owner[sb]:
                continue            # shapes of one link
            if key not in best or found["distance"][k] < found["distance"][best[key]]:
                best[key] = k
        points = []
        for (la, lb), k in sorted(best.items()):
            points.append(ClosestPoint(
                body_a=int(id_a), link_a=la, body_b=int(id_b), link_b=lb,
                point_a=found["point_a"][k].copy(), point_b=found["point_b"][k].copy(),
                normal=found["normal"][k].copy(), distance=float(found["distance"][k])))
        return points

    # -- boxes ---------------------------------------------------------------------------
    def aabb(self, id_, link=None):
        what = "getAABB"
        shapes = self._shapes(id_, link, what)
        if len(shapes) == 0:
            raise ValueError(f"{what}: {self._describe(id_, link)} has no collision geometry")
        boxes = self._sim.engine.shape_aabbs()[shapes]
        return boxes[:, 0].min(axis=0), boxes[:, 1].max(axis=0)

    def overlapping_objects(self, lo, hi) -> list:
        what = "getOverlappingObjects"
        lo = _vector(lo, f"{what}: lo")
        hi = _vector(hi, f"{what}: hi")
        if np.any(lo > hi):
            raise ValueError(f"{what}: lo {lo.tolist()} must not exceed hi {hi.tolist()} on "
                             f"any axis")
        owner, owner_link = self._owners()
        boxes = self._sim.engine.shape_aabbs()
        hit = np.all(boxes[:, 0] <= hi, axis=1) & np.all(lo <= boxes[:, 1], axis=1)
        return sorted({(int(owner[s]), int(owner_link[s])) for s in np.flatnonzero(hit)})

    def _describe(self, id_, link) -> str:
        name = self._sim.getWorld().getName(int(id_))
        return f"'{name}'" if link is None or link == -1 else f"link {link} of '{name}'"

    # -- filters -------------------------------------------------------------------------
    def set_group_mask(self, id_, link, group, mask):
        what = "setCollisionFilterGroupMask"
        group = _bits(group, f"{what}: group")
        mask = _bits(mask, f"{what}: mask")
        for b in self._body(id_, link, what, allow_all=True):
            self._sim.engine.set_collision_filter(b, group, mask)

    def get_group_mask(self, id_, link):
        what = "getCollisionFilterGroupMask"
        bodies = self._body(id_, link, what)
        if not bodies:
            raise ValueError(f"{what}: {self._describe(id_, link)} has no simulated body")
        return self._sim.engine.get_collision_filter(bodies[0])

    def set_pair(self, id_a, id_b, link_a, link_b, enable):
        what = "setCollisionFilterPair"
        if enable not in (True, False, 0, 1, None):
            raise ValueError(f"{what}: enable must be True / 1, False / 0 or None (clear), "
                             f"got {enable!r}")
        ids = self._sim.layout.id_of_body
        for a in self._body(id_a, link_a, what, allow_all=True):
            for b in self._body(id_b, link_b, what, allow_all=True):
                if a != b:
                    self._sim.engine.set_pair_enabled(ids[a], ids[b],
                                                      None if enable is None else bool(enable))


def _number(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {x!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite, got {value}")
    return value


def _vector(x, what: str) -> np.ndarray:
    try:
        v = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be 3 numbers, got {x!r}") from None
    if v.shape != (3,):
        raise ValueError(f"{what} must be 3 numbers, got shape {v.shape}")
    if not np.all(np.abs(v) <= MAX_QUERY_COORDINATE):
        raise ValueError(f"{what} {v.tolist()} must be finite and within "
                         f"+-{MAX_QUERY_COORDINATE:g} m")
    return v


def _bits(x, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(x).__name__}")
    if not -2**31 <= int(x) <= FILTER_BITS:
        raise ValueError(f"{what} {x} is not a 32-bit value")
    return int(x) & FILTER_BITS      # PyBullet's -1 is every bit
