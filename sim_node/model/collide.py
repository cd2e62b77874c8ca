"""Collision tests between the objects of a WorldModel, with Klamp't's names
(klampt.model.collide.WorldCollider), at the world's current configuration, without a Simulator.

The geometry is the engine's: a WorldCollider builds an engine Scene of the world
(sim_node.model.scene) and tests pairs with its closest-point query (engine/queries/distance):
two objects collide when their collision geometries touch or overlap (signed distance <= 0;
no boundary layer, no margin). Meshes of robot links and rigid objects are their convex hulls,
as in the simulation; terrain meshes are triangle meshes.

Also here: `shape_owners`, the (entity ID, link) each engine shape belongs to, which the
simulator's queries (sim_node.sim.queries) read too.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
from transforms3d.quaternions import mat2quat

from sim_node.model.bodies import RigidObjectModel, TerrainModel
from sim_node.model.geometry3d import ray_segment
from sim_node.model.robot import RobotModel, RobotModelLink
from sim_node.model.scene import SceneLayout, build_scene
from sim_node.model.world import WorldModel


def shape_owners(layout: SceneLayout):
    """(entity (nshape,), link (nshape,)) int64 arrays: the entity ID (robot, rigid object or
    terrain: WorldModel.getID numbering) and link index (-1 but for robots) of each shape of
    layout.scene (the layout's shape_owner record)."""
    owners = np.array(layout.shape_owner, dtype=np.int64).reshape(-1, 2)
    return np.ascontiguousarray(owners[:, 0]), np.ascontiguousarray(owners[:, 1])


class WorldCollider:
    """Collision tests between the terrains, rigid objects and robot links of a world (Klamp't's
    WorldCollider). Like Klamp't's it reads the world's current state at every query: robot
    configurations (RobotModel.setConfig) and object transforms; after entities are added or
    removed, make a new collider (as in Klamp't, whose geomList is made once).

    Pairs tested by default (Klamp't's rules): every pair of objects with collision geometry
    except terrain-terrain and a robot's root link against terrains; within a robot, links in different collision bodies that are not
    adjacent (the simulator's rule: links welded by fixed joints form one body and never
    collide; a body never collides with its parent's), whatever the robot's simulated
    self_collision setting. ignoreCollision removes objects or pairs."""

    def __init__(self, world: WorldModel, ignore=()):
        if not isinstance(world, WorldModel):
            raise TypeError(f"WorldCollider needs a WorldModel, got {type(world).__name__}")
        self.world = world
        self._signature = None
        self._layout = None
        self._update()
        # geomList (Klamp't): the objects with collision geometry, in world ID order
        self.geomList = [world.getEntity(i) for i in range(world.numIDs())
                         if i in self._shapes_of]
        self._index = {id(o): k for k, o in enumerate(self.geomList)}
        self.mask = [set() for _ in self.geomList]
        self._init_mask()
        for item in ignore:
            self.ignoreCollision(item)

    # -- the scene of the world as it is now ---------------------------------------------
    def _entities_signature(self):
        w = self.world
        return tuple(id(e) for e in (*(w.robot(i) for i in range(w.numRobots())),
                                     *(w.rigidObject(i) for i in range(w.numRigidObjects())),
                                     *(w.terrain(i) for i in range(w.numTerrains()))))

    def _update(self):
        """The scene at the world's current state: robot configurations and object transforms
        copied in (the engine's kinematics place every shape at each query). Terrains do not
        move (TerrainModel has no setter)."""
        w = self.world
        signature = self._entities_signature()
        if self._signature is None:
            self._layout = build_scene(w)
            self._signature = signature
            entity, link = shape_owners(self._layout)
            self._shapes_of = {}
            for s, (e, l) in enumerate(zip(entity, link)):
                owner = w.getEntity(int(e)) if l < 0 else w.getEntity(int(e)).link(int(l))
                self._shapes_of.setdefault(owner.getID(), []).append(s)
            self._shapes_of = {k: np.array(v, np.int64) for k, v in self._shapes_of.items()}
            return
        if signature != self._signature:
            raise ValueError("WorldCollider: the world's robots, objects or terrains changed "
                             "since the collider was made (its geomList and mask are of the "
                             "old world): make a new WorldCollider")
        scene = self._layout.scene
        for r in range(w.numRobots()):
            scene.robot_q[r][:] = w.robot(r).getConfig()
        for i, f in self._layout.free_of_object.items():
            obj = w.rigidObject(i)
            R, t = obj.getTransform()
            qw, qx, qy, qz = mat2quat(R)
            scene.free_state[f, 0:3] = t + R @ obj.getMass().getCom()
            scene.free_state[f, 3:7] = (qx, qy, qz, qw)

    # -- the collision mask (Klamp't's) --------------------------------------------------
    def _init_mask(self):
        # Klamp't's pairs: terrain-object, terrain-link (not a robot's root link), object-object,
        # object-link, links of different robots, and a robot's own non-adjacent links
        kinds = [self._kind(o) for o in self.geomList]
        for i, a in enumerate(self.geomList):
            for j in range(i):
                b = self.geomList[j]
                pair = {kinds[i], kinds[j]}
                if pair == {"terrain"}:
                    continue
                if pair == {"terrain", "link"}:
                    link = a if kinds[i] == "link" else b
                    if link.getParent() < 0:
                        continue
                if pair == {"link"} and a.getRobot() is b.getRobot() and not self._self_pair(a, b):
                    continue
                self.mask[i].add(j)
                self.mask[j].add(i)

    @staticmethod
    def _kind(o) -> str:
        if isinstance(o, TerrainModel):
            return "terrain"
        if isinstance(o, RigidObjectModel):
            return "object"
        return "link"

    @staticmethod
    def _self_pair(a: RobotModelLink, b: RobotModelLink) -> bool:
        # links in different collision bodies, neither body the other's adjacent one
        st = a.getRobot().structure
        ba, bb = st.link_frames[a.getIndex()].body, st.link_frames[b.getIndex()].body
        if ba == bb:
            return False
        if ba >= 0 and st.body_adjacent[ba] == bb:
            return False
        if bb >= 0 and st.body_adjacent[bb] == ba:
            return False
        return True

    def _geom_index(self, obj) -> int:
        """The geomList index of a terrain, rigid object or robot link (or its world ID)."""
        if isinstance(obj, (int, np.integer)):
            if not 0 <= int(obj) < self.world.numIDs():
                raise ValueError(f"unknown world ID {obj} (IDs are 0..{self.world.numIDs() - 1})")
            obj = self.world.getEntity(int(obj))
        if isinstance(obj, RobotModel):
            raise ValueError(f"robot '{obj.getName()}' is not one object: use its links "
                             f"(robot.link(i))")
        k = self._index.get(id(obj))
        if k is None:
            raise ValueError(f"{obj!r} is not an object with collision geometry in this "
                             f"collider's world")
        return k

    def _objects(self, item) -> list:
        # geomList indices of an object, or of every link of a robot
        if isinstance(item, RobotModel):
            return [self._index[id(l)] for l in item.links() if id(l) in self._index]
        return [self._geom_index(item)]

    def ignoreCollision(self, ign):
        """Stop testing an object (terrain, rigid object, robot link, or a robot: all its
        links) against everything, or a pair (a, b) of them against each other."""
        if isinstance(ign, tuple):
            if len(ign) != 2:
                raise ValueError(f"ignoreCollision: a pair has 2 objects, got {len(ign)}")
            for i in self._objects(ign[0]):
                for j in self._objects(ign[1]):
                    self.mask[i].discard(j)
                    self.mask[j].discard(i)
            return
        for i in self._objects(ign):
            for j in self.mask[i]:
                self.mask[j].discard(i)
            self.mask[i] = set()

    def isCollisionEnabled(self, obj_or_pair) -> bool:
        """An object: whether it is tested against anything; a pair: against each other."""
        if isinstance(obj_or_pair, tuple):
            a, b = obj_or_pair
            return self._geom_index(b) in self.mask[self._geom_index(a)]
        return len(self.mask[self._geom_index(obj_or_pair)]) > 0

    # -- tests ---------------------------------------------------------------------------
    def collisionTests(self, filter1: Callable | None = None, filter2: Callable | None = None,
                       bb_reject: bool = True) -> Iterator:
        """The pairs to test, as ((object, shapes), (object, shapes)) (Klamp't gives (object,
        Geometry3D); shapes: the engine Scene's shape indices): filter1 None: every enabled
        pair once; filter1 alone: pairs of objects that both pass it; both: pairs (a, b) with
        filter1(a) and filter2(b), each once (Klamp't may yield a pair twice here).
        bb_reject: only pairs whose bounding boxes overlap."""
        self._update()
        boxes = self._layout.scene.shape_aabbs() if bb_reject else None
        geoms = self.geomList
        pass1 = [filter1 is None or bool(filter1(o)) for o in geoms]
        pass2 = [filter2 is not None and bool(filter2(o)) for o in geoms]
        for i, g in enumerate(geoms):
            for j in sorted(self.mask[i]):
                if filter2 is None:
                    if j < i or not (pass1[i] and pass1[j]):
                        continue
                    pair = (i, j)
                elif pass1[i] and pass2[j]:
                    if pass1[j] and pass2[i] and j < i:
                        continue        # yielded from j's side already
                    pair = (i, j)
                else:
                    continue
                if bb_reject and not self._boxes_overlap(boxes, *pair):
                    continue
                yield tuple((geoms[k], self._shapes_of[geoms[k].getID()]) for k in pair)

    def _boxes_overlap(self, boxes, i, j) -> bool:
        a = boxes[self._shapes_of[self.geomList[i].getID()]]
        b = boxes[self._shapes_of[self.geomList[j].getID()]]
        lo_a, hi_a = a[:, 0].min(axis=0), a[:, 1].max(axis=0)
        lo_b, hi_b = b[:, 0].min(axis=0), b[:, 1].max(axis=0)
        return bool(np.all(lo_a <= hi_b) and np.all(lo_b <= hi_a))

    def _collides(self, i: int, j: int) -> bool:
        # geomList items i and j touch or overlap (their closest points within 0)
        found = self._layout.scene.closest_points(self._shapes_of[self.geomList[i].getID()],
                                                  self._shapes_of[self.geomList[j].getID()],
                                                  0.0)
        return bool(len(found["distance"]) and found["distance"].min() <= 0.0)

    def collisions(self, filter1: Callable | None = None,
                   filter2: Callable | None = None) -> Iterator:
        """The colliding pairs (object, object) among collisionTests(filter1, filter2)."""
        for (a, _), (b, _) in self.collisionTests(filter1, filter2):
            if self._collides(self._index[id(a)], self._index[id(b)]):
                yield a, b

    def _robot(self, robot) -> RobotModel:
        if isinstance(robot, RobotModel):
            return robot
        if isinstance(robot, (int, np.integer)) and 0 <= robot < self.world.numRobots():
            return self.world.robot(int(robot))
        if isinstance(robot, str):
            return self.world.robot(robot)
        raise ValueError(f"not a robot of this world (a RobotModel, index or name): {robot!r}")

    def _entities(self, item, kind, count, get) -> list:
        # geomList indices of `item` (an entity of `kind`, its index, or None: all of them)
        if item is None:
            items = [get(i) for i in range(count)]
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < count:
                raise ValueError(f"{kind.__name__} index {item} out of range [0, {count})")
            items = [get(int(item))]
        elif isinstance(item, kind):
            items = [item]
        else:
            raise ValueError(f"expected a {kind.__name__}, its index or None, got {item!r}")
        return [self._index[id(o)] for o in items if id(o) in self._index]

    def _links(self, robot) -> list:
        robot = self._robot(robot)
        return [self._index[id(l)] for l in robot.links() if id(l) in self._index]

    def _pairs(self, firsts, seconds) -> Iterator:
        # (first, second) items of the mask that collide, Klamp't's order: seconds outer
        self._update()
        for j in seconds:
            for i in firsts:
                if j in self.mask[i] and self._collides(i, j):
                    yield self.geomList[i], self.geomList[j]

    def robotSelfCollisions(self, robot=None) -> Iterator:
        """(link, link) pairs of a robot (None: every robot) that collide; in each pair the
        first link has the higher index (as Klamp't)."""
        robots = (range(self.world.numRobots()) if robot is None else [self._robot(robot)])
        self._update()
        for r in robots:
            links = self._links(r)
            for i in links:
                for j in links:
                    if j >= i:
                        break
                    if j in self.mask[i] and self._collides(i, j):
                        yield self.geomList[i], self.geomList[j]

    def robotObjectCollisions(self, robot, object=None) -> Iterator:
        """(link, object) pairs of a robot colliding with a rigid object (None: any)."""
        w = self.world
        objects = self._entities(object, RigidObjectModel, w.numRigidObjects(), w.rigidObject)
        yield from self._pairs(self._links(robot), objects)

    def robotTerrainCollisions(self, robot, terrain=None) -> Iterator:
        """(link, terrain) pairs of a robot colliding with a terrain (None: any)."""
        w = self.world
        terrains = self._entities(terrain, TerrainModel, w.numTerrains(), w.terrain)
        yield from self._pairs(self._links(robot), terrains)

    def objectTerrainCollisions(self, object, terrain=None) -> Iterator:
        """(object, terrain) pairs colliding (terrain None: any)."""
        w = self.world
        objects = self._entities(object, RigidObjectModel, w.numRigidObjects(), w.rigidObject)
        terrains = self._entities(terrain, TerrainModel, w.numTerrains(), w.terrain)
        yield from self._pairs(objects, terrains)

    def objectObjectCollisions(self, object, object2=None) -> Iterator:
        """(object, object2) pairs of rigid objects colliding (object2 None: any other)."""
        w = self.world
        objects = self._entities(object, RigidObjectModel, w.numRigidObjects(), w.rigidObject)
        others = self._entities(object2, RigidObjectModel, w.numRigidObjects(), w.rigidObject)
        yield from self._pairs(objects, [o for o in others if o not in objects])

    # -- rays (the engine's ray casts, engine/queries/raycast.pyx, on this collider's scene) --
    def rayCast(self, s, d, indices=None):
        """The first object hit by the ray from s along the direction d (world [m]; the ray
        reaches geometry3d.RAY_LENGTH), as (object, point (3,) world [m]), or None. indices:
        the geomList indices to consider (None: all). What counts as a hit is the engine's (PyBullet's):
        a solid is hit where the ray enters it, so a ray starting inside one does not hit it."""
        allowed = None if indices is None else {id(self.geomList[k]) for k in indices}
        return self._ray(s, d, allowed)

    def rayCastRobot(self, robot, s, d):
        """The first link of `robot` hit by the ray, as (link, point), or None."""
        robot = self._robot(robot)
        return self._ray(s, d, {id(l) for l in robot.links()})

    def _ray(self, s, d, allowed):
        s, end, unit = ray_segment(s, d)
        self._update()
        entity, link = shape_owners(self._layout)
        origin = s
        # objects left out are passed through: cast again from just beyond each such hit
        for _ in range(len(self.geomList) + 1):
            fraction, shape, point, _ = self._layout.scene.ray_cast(origin[None], end[None],
                                                                    threads=1)
            if shape[0] < 0:
                return None
            owner = self.world.getEntity(int(entity[shape[0]]))
            if link[shape[0]] >= 0:
                owner = owner.link(int(link[shape[0]]))
            if allowed is None or id(owner) in allowed:
                return owner, point[0].copy()
            origin = point[0] + unit * RAY_STEP
        return None


RAY_STEP = 1e-9     # [m] a ray passing an object left out goes on from this beyond its hit
