"""PyBullet's collision queries on the sim_node engine: contact points, closest points, ray
tests, bounding boxes, overlap and collision filters.

Each function maps onto the Simulator's own query (sim_node/sim/queries.py, rays.py: built with
PyBullet's names and frames) and translates ids: a PyBullet (body unique id, link index) pair is
a world entity and a link of its RobotModel (client.body(uid).link(i), -1 = the base), and an
answer's world ID goes back through client.locate; getClosestPoints measures PyBullet's shapes
(its 1 mm collision margin) in a one-off engine scene of the elements involved, free collision
shapes included. Returns are PyBullet's tuples of Python floats and ints.

Differences from Bullet (README "The PyBullet API: queries, camera, dynamics, IK"):
- Links welded by fixed joints are one collision body in the engine: a contact of the last step
  on such a body names the link whose shapes come closest at the contact point.
- Contacts carry the engine's friction as one lateral force: lateralFriction1 along
  lateralFrictionDir1 (the friction force's direction), lateralFriction2 = 0.
- Collision filters are PyBullet's documented AND rule; PyBullet 3.2.7's default is OR.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from sim_node.model import geometry as geo
from sim_node.model.bodies import RigidObjectModel
from sim_node.model.collide import shape_owners
from sim_node.model.robot import Mass
from sim_node.model.scene import build_scene
from sim_node.model.urdf import GeometryElement, Origin
from sim_node.model.world import WorldModel
from sim_node.pybullet.client import get_client, rotation, unit_quaternion
from sim_node.pybullet.errors import error
from sim_node.sim.simulator import STATUS_UNSTABLE
from sim_node.pybullet.loading import collision_shape

__all__ = ["getContactPoints", "getClosestPoints", "rayTest", "rayTestBatch",
           "getOverlappingObjects", "getAABB", "setCollisionFilterGroupMask",
           "setCollisionFilterPair", "performCollisionDetection"]

MAX_RAYS = 2_000_000        # per rayTestBatch call (the engine's bound; PyBullet's is 16,384)
MAX_QUERY_DISTANCE = 1e4    # [m] |distance| and |collisionShapePosition| of getClosestPoints
BULLET_MARGIN = 1e-3        # [m] PyBullet's collision margin of created and URDF shapes
_SHAPE_LINK = -2            # PyBullet's link index in the rows of a free collision shape
_ALL_LINKS = -2             # PyBullet's "no link filter" default of the contact queries
_BODY_STATIC, _BODY_ROBOT = 0, 3    # engine body kinds (sim_node.engine.api.BodyKind)


# -- argument checks shared by the query, camera and kinematics modules ------------------------
def integer(value, fn: str, name: str) -> int:
    """value as an int (bools and non-integers refused)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise error(f"{fn}: {name} must be an int, got {value!r}")
    return int(value)


def body_of(client, uid, fn: str, name: str = "bodyUniqueId"):
    """The client's Body of a unique id, or an error naming the function and argument."""
    uid = integer(uid, fn, name)
    try:
        return client.body(uid)
    except error as e:
        raise error(f"{fn}: {name}: {e}") from None


def link_of(body, link, fn: str, name: str = "linkIndex") -> int:
    """A PyBullet link index of body checked: -1 (base) .. num_joints - 1."""
    return body.check_link(integer(link, fn, name), fn, name)


def vec(value, n: int, fn: str, name: str, bound: float = 1e9) -> np.ndarray:
    """n finite numbers within +-bound as a float64 array."""
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise error(f"{fn}: {name} must be {n} numbers, got {value!r}") from None
    if v.shape != (n,):
        raise error(f"{fn}: {name} must be {n} numbers, got {v.shape[0]}")
    if not np.all(np.abs(v) <= bound):
        raise error(f"{fn}: {name} {v.tolist()} must be finite and within +-{bound:g}")
    return v


def number(value, fn: str, name: str, bound: float = 1e9) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise error(f"{fn}: {name} must be a number, got {value!r}")
    value = float(value)
    if not abs(value) <= bound:
        raise error(f"{fn}: {name} {value} must be finite and within +-{bound:g}")
    return value


def inertial_frame(body, link: int) -> tuple:
    """(p (3,), R (3, 3)): a PyBullet link's centre-of-mass frame in its URDF link frame (the
    client's Body.inertial_frames; the <inertial> origin, unrotated, without them)."""
    model_link = body.link(link)
    frames = getattr(body, "inertial_frames", None)
    if frames is not None:
        p, R = frames[model_link.getIndex()]
        return np.asarray(p, dtype=float).reshape(3), np.asarray(R, dtype=float).reshape(3, 3)
    return np.asarray(model_link.getMass().getCom(), dtype=float).reshape(3), np.eye(3)


def _tuple3(v) -> tuple:
    return (float(v[0]), float(v[1]), float(v[2]))


def _link_arg(body, link, fn: str, name: str):
    """None (every link) for PyBullet's -2 default, else a checked link index."""
    if integer(link, fn, name) == _ALL_LINKS:
        return None
    return link_of(body, link, fn, name)


def _entity_link(body, link):
    """(entity ID, RobotModel link index or None) of a PyBullet (body, link)."""
    return body.entity.getID(), None if link is None else body.link(link).getIndex()


def _locate_link(client, entity_id: int, link: int) -> tuple:
    """(uid, PyBullet link) of an entity ID and its RobotModel link index (-1: not a robot)."""
    world = client.world
    entity = world.getEntity(int(entity_id))
    if link >= 0 and hasattr(entity, "link"):
        return client.locate(entity.link(int(link)).getID())
    return client.locate(int(entity_id))


# -- contact points ----------------------------------------------------------------------------
def _plane_space(n: np.ndarray) -> tuple:
    """Two unit vectors orthogonal to n and to each other (Bullet's btPlaneSpace1 rule)."""
    if abs(n[2]) > math.sqrt(0.5):
        a = n[1] * n[1] + n[2] * n[2]
        k = 1.0 / math.sqrt(a)
        p = np.array([0.0, -n[2] * k, n[1] * k])
    else:
        a = n[0] * n[0] + n[1] * n[1]
        k = 1.0 / math.sqrt(a)
        p = np.array([-n[1] * k, n[0] * k, 0.0])
    return p, np.cross(n, p)


def _contact_row(uid_a, link_a, uid_b, link_b, point_a, point_b, normal, distance, force):
    """PyBullet's 14-tuple; force (3,) the force on A [N] (zeros for closest points)."""
    fn = float(force @ normal)
    lateral = force - fn * normal
    size = float(np.linalg.norm(lateral))
    if size > 1e-12:
        dir1 = lateral / size
        dir2 = np.cross(normal, dir1)
    else:
        dir1, dir2 = _plane_space(normal)
        size = 0.0
    return (0, int(uid_a), int(uid_b), int(link_a), int(link_b), _tuple3(point_a),
            _tuple3(point_b), _tuple3(normal), float(distance), fn, size, _tuple3(dir1), 0.0,
            _tuple3(dir2))


def _step_contacts(client) -> list:
    """The last step's contacts as 14-tuples with A, B as the engine ordered them."""
    detected = getattr(client, "_pb_detected", None)
    if detected is not None and detected[0] is client.sim:
        return detected[1]
    sim = client.sim
    c = sim.engine.contact_arrays()
    dt = sim.engine.last_dt
    # a step the engine could not take (status unstable: the state stayed at the last good
    # step) leaves the contacts of its last attempt, whose impulses never acted (NaN when that
    # solve failed): their forces are reported as 0
    if sim.getStatus() == STATUS_UNSTABLE:
        dt = 0.0
    links = _ContactLinks(client)
    rows = []
    for k in range(len(c["distance"])):
        n = c["normal"][k]
        d = float(c["distance"][k])
        point_a = c["point"][k] + 0.5 * d * n          # engine point: the middle of a and b
        point_b = c["point"][k] - 0.5 * d * n
        (uid_a, link_a), (uid_b, link_b) = links.name(int(c["body_a"][k]),
                                                      int(c["body_b"][k]), point_a)
        force = c["impulse"][k] / dt if dt > 0 else np.zeros(3)
        rows.append(_contact_row(uid_a, link_a, uid_b, link_b, point_a, point_b, n, d, force))
    return rows


class _ContactLinks:
    """Names the two links of an engine contact. A collision body is one link, or several
    welded by fixed joints (PyBullet's separate links): then the shapes of the pair that come
    closest at the contact point tell which links touched."""

    def __init__(self, client):
        self.client = client
        self.sim = client.sim
        self.owner, self.owner_link = shape_owners(self.sim.layout)
        self.pairs = {}

    def _shapes(self, body: int) -> np.ndarray:
        first, count = self.sim.engine.body_shapes(body)
        return np.arange(first, first + count)

    def _single(self, body: int) -> bool:
        return len(set(self.owner_link[self._shapes(body)].tolist())) <= 1

    def name(self, body_a: int, body_b: int, point_a) -> tuple:
        ids = self.sim.layout.id_of_body
        if self._single(body_a) and self._single(body_b):
            return self.client.locate(int(ids[body_a])), self.client.locate(int(ids[body_b]))
        if (body_a, body_b) not in self.pairs:
            self.pairs[body_a, body_b] = self.sim.engine.closest_points(
                self._shapes(body_a), self._shapes(body_b), 0.05)
        found = self.pairs[body_a, body_b]
        if len(found["distance"]) == 0:
            return self.client.locate(int(ids[body_a])), self.client.locate(int(ids[body_b]))
        k = int(np.argmin(np.linalg.norm(found["point_a"] - point_a, axis=1)
                          + np.abs(found["distance"] - found["distance"].min())))
        sa, sb = int(found["shape_a"][k]), int(found["shape_b"][k])
        return (_locate_link(self.client, self.owner[sa], self.owner_link[sa]),
                _locate_link(self.client, self.owner[sb], self.owner_link[sb]))


def _swap(row) -> tuple:
    # the same contact seen from B: normal and forces turn round
    (flag, ua, ub, la, lb, pa, pb, n, d, fn, f1, d1, f2, d2) = row
    neg = lambda v: (-v[0], -v[1], -v[2])  # noqa: E731
    return (flag, ub, ua, lb, la, pb, pa, neg(n), d, fn, f1, neg(d1), f2, neg(d2))


def getContactPoints(bodyA=-1, bodyB=-1, linkIndexA=_ALL_LINKS, linkIndexB=_ALL_LINKS,
                     physicsClientId=0):
    """The contact points of the last stepSimulation (or performCollisionDetection): a tuple of
    PyBullet's 14-tuples (contactFlag, bodyUniqueIdA, bodyUniqueIdB, linkIndexA, linkIndexB,
    positionOnA, positionOnB, contactNormalOnB (from B to A), contactDistance [m] (< 0:
    penetration), normalForce [N], lateralFriction1 [N], lateralFrictionDir1,
    lateralFriction2 [N], lateralFrictionDir2). bodyA / bodyB (-1: any) and linkIndexA / B
    (-2: any) filter; a contact whose B is bodyA is reported turned round."""
    fn = "getContactPoints"
    client = get_client(physicsClientId)
    body_a = integer(bodyA, fn, "bodyA")
    body_b = integer(bodyB, fn, "bodyB")
    if body_a != -1:
        body = body_of(client, body_a, fn, "bodyA")
        la = _link_arg(body, linkIndexA, fn, "linkIndexA")
    else:
        la = None
    if body_b != -1:
        if body_a == -1:
            raise error(f"{fn}: bodyB {body_b} needs a bodyA (PyBullet's rule)")
        body = body_of(client, body_b, fn, "bodyB")
        lb = _link_arg(body, linkIndexB, fn, "linkIndexB")
    else:
        lb = None
    out = []
    for row in _step_contacts(client):
        for r in (row, _swap(row)):
            if body_a != -1 and r[1] != body_a or la is not None and r[3] != la:
                continue
            if body_b != -1 and r[2] != body_b or lb is not None and r[4] != lb:
                continue
            out.append(r)
            break           # a contact once (a body's self contact matches both ways)
    return tuple(out)


def getClosestPoints(bodyA, bodyB, distance, linkIndexA=_ALL_LINKS, linkIndexB=_ALL_LINKS,
                     collisionShapeA=-1, collisionShapeB=-1, collisionShapePositionA=None,
                     collisionShapePositionB=None, collisionShapeOrientationA=None,
                     collisionShapeOrientationB=None, physicsClientId=0):
    """The closest points of side A and side B no more than `distance` [m] apart, at the
    current state: a tuple of the 14-tuples of getContactPoints (normal from B to A,
    contactDistance < 0 in penetration, forces 0).

    A side is a body (bodyA >= 0; linkIndexA >= -1 for one link, -2: all), a free collision
    shape of createCollisionShape(Array) (collisionShapeA >= 0) placed at
    collisionShapePositionA [m] with collisionShapeOrientationA (x, y, z, w), or both, as in
    PyBullet. One row per pair of collision elements (PyBullet's colliders and compound
    children), A's elements outer, B's inner, each side's free shape before its body's links
    (-1, 0, 1, ...): body rows carry the body's unique id and link index, free shape rows the
    side's bodyA / bodyB argument (-1 without a body) and link index -2, as PyBullet reports
    them. Two links of one body are measured only when linkIndexA and linkIndexB name two
    different links.

    The shapes are PyBullet's, with its 1 mm collision margin (README "Queries, camera,
    dynamics, IK (decisions)"): boxes and cylinders rounded by 1 mm inside their size, mesh
    hulls grown by 1 mm, spheres, capsules and planes exact; a box against a plane is the sharp
    box (Bullet's plane test takes the box's corner)."""
    fn = "getClosestPoints"
    client = get_client(physicsClientId)
    max_distance = number(distance, fn, "distance", MAX_QUERY_DISTANCE)
    parts_a = _side(client, fn, "A", bodyA, linkIndexA, collisionShapeA,
                    collisionShapePositionA, collisionShapeOrientationA)
    parts_b = _side(client, fn, "B", bodyB, linkIndexB, collisionShapeB,
                    collisionShapePositionB, collisionShapeOrientationB)
    two_links = (integer(linkIndexA, fn, "linkIndexA") != _ALL_LINKS
                 and integer(linkIndexB, fn, "linkIndexB") != _ALL_LINKS)

    def measured(a, b) -> bool:
        return not (a.body and b.body and a.uid == b.uid and (a.link == b.link or not two_links))
    return tuple(_closest_rows(parts_a, parts_b, measured, max_distance))


# -- getClosestPoints on PyBullet's shapes -----------------------------------------------------
class _Part:
    """One collision element of a getClosestPoints side: `uid`, `link` (the PyBullet ids its
    rows report), `body` (a body's element, not a free shape's) and `element`
    (GeometryElement whose origin is its placement in the world)."""

    def __init__(self, uid: int, link: int, body: bool, element: GeometryElement):
        self.uid, self.link, self.body, self.element = uid, link, body, element


def _side(client, fn: str, side: str, body_arg, link_arg, shape_arg, position,
          orientation) -> list:
    """The parts of side A or B: a free shape's elements, then a body's (link order)."""
    uid = integer(body_arg, fn, f"body{side}")
    shape = -1 if shape_arg is None else integer(shape_arg, fn, f"collisionShape{side}")
    for name, value in ((f"body{side}", uid), (f"collisionShape{side}", shape)):
        if value < -1:
            raise error(f"{fn}: {name} {value} is not an id (ids are >= 0; -1: none)")
    if uid == -1 and shape == -1:
        raise error(f"{fn}: side {side} is empty: give body{side} (a body unique id) or "
                    f"collisionShape{side} (a createCollisionShape id)")
    parts = []
    if shape >= 0:
        spec = collision_shape(client, shape, fn, f"collisionShape{side}")
        p_W = vec((0.0, 0.0, 0.0) if position is None else position, 3, fn,
                  f"collisionShapePosition{side}", MAX_QUERY_DISTANCE)
        R_W = rotation(unit_quaternion((0.0, 0.0, 0.0, 1.0) if orientation is None
                                       else orientation, fn,
                                       f"collisionShapeOrientation{side}"))
        parts += [_Part(uid, _SHAPE_LINK, False, _placed(e, R_W, p_W)) for e in spec.elements]
    if uid >= 0:
        body = body_of(client, uid, fn, f"body{side}")
        link = _link_arg(body, link_arg, fn, f"linkIndex{side}")
        R_links, p_links = body.link_frames()
        for pb_link in range(-1, body.num_joints) if link is None else (link,):
            r = body.robot_link(pb_link)
            parts += [_Part(uid, pb_link, True, _placed(e, R_links[r], p_links[r]))
                      for e in body.link(pb_link).getCollisionGeometry()]
    return parts


def _placed(element: GeometryElement, R_W, p_W) -> GeometryElement:
    """The element with its origin in the world, for its frame at (R_W, p_W)."""
    return GeometryElement(Origin(R=R_W @ element.origin.R, p=p_W + R_W @ element.origin.p),
                           element.shape)


def _bullet_shape(shape) -> tuple:
    """(inner shape, margin [m]): PyBullet's shape is the inner shape grown by the margin
    (Bullet's GJK measures the inner shapes, then takes the margins off). Boxes and cylinders
    keep their size (the margin comes off their dimensions: rounded edges; a box or cylinder
    thinner than 4 mm gets a quarter of its thinnest size as margin), mesh hulls grow by it,
    spheres and capsules are exact (Bullet's inner shape: a point or segment grown by the
    radius), planes and concave triangle meshes exact."""
    if isinstance(shape, geo.Box):
        m = min(BULLET_MARGIN, 0.25 * min(shape.size))
        return geo.Box(tuple(s - 2.0 * m for s in shape.size)), m
    if isinstance(shape, geo.Cylinder):
        m = min(BULLET_MARGIN, 0.25 * shape.radius, 0.25 * shape.length)
        return geo.Cylinder(shape.radius - m, shape.length - 2.0 * m), m
    if isinstance(shape, geo.Mesh):
        # a hull grows by the margin; a concave triangle mesh (GEOM_FORCE_CONCAVE_TRIMESH, URDF
        # concave="yes") is Bullet's btBvhTriangleMeshShape, margin 0 (measured on PyBullet 3.2.7)
        return shape, 0.0 if shape.concave else BULLET_MARGIN
    return shape, 0.0


def _closest_rows(parts_a: list, parts_b: list, measured, max_distance: float) -> list:
    """Rows of the pairs (a, b) of parts_a x parts_b with measured(a, b), within
    max_distance [m], in pair order: the engine's closest points of the inner shapes (one
    query scene) with the margins taken off."""
    if not parts_a or not parts_b:
        return []
    parts = parts_a + parts_b
    inner = [_bullet_shape(part.element.shape) for part in parts]
    elements = [GeometryElement(part.element.origin, shape)
                for part, (shape, _) in zip(parts, inner)]
    na = len(parts_a)
    scene = _query_scene([elements[:na], elements[na:]])
    # margins are at most BULLET_MARGIN each: the inner shapes are at most 2 of them further
    found = scene.closest_points(np.arange(na), np.arange(na, len(parts)),
                                 max_distance + 2.0 * BULLET_MARGIN)
    where = {(int(i), int(j) - na): k
             for k, (i, j) in enumerate(zip(found["shape_a"], found["shape_b"]))}
    zero = np.zeros(3)
    rows = []
    for i, a in enumerate(parts_a):
        for j, b in enumerate(parts_b):
            if not measured(a, b):
                continue
            box_plane = _box_plane(a.element, b.element)
            if box_plane is not None:
                d, point_a, point_b, normal = box_plane
            elif (i, j) in where:
                k = where[i, j]
                normal = found["normal"][k]
                m_a, m_b = inner[i][1], inner[na + j][1]
                # the margins grow A and B along the normal: A's point moves against it
                d = float(found["distance"][k]) - m_a - m_b
                point_a = found["point_a"][k] - m_a * normal
                point_b = found["point_b"][k] + m_b * normal
            else:
                continue
            if d <= max_distance:
                rows.append(_contact_row(a.uid, a.link, b.uid, b.link, point_a, point_b,
                                         normal, d, zero))
    return rows


def _box_plane(element_a: GeometryElement, element_b: GeometryElement):
    """(distance, point on A, point on B, normal from B to A) of a box and a plane (either
    order) as Bullet's plane test measures them: the box corner furthest down the plane
    normal, ties to the + side of each box axis; None for other pairs."""
    flip = isinstance(element_a.shape, geo.Plane) and isinstance(element_b.shape, geo.Box)
    box, plane = (element_b, element_a) if flip else (element_a, element_b)
    if not (isinstance(box.shape, geo.Box) and isinstance(plane.shape, geo.Plane)):
        return None
    n = plane.origin.R @ np.asarray(plane.shape.normal, dtype=float)
    on_plane = plane.origin.p + n * plane.shape.offset
    half = np.asarray(box.shape.size, dtype=float) / 2.0
    corner = box.origin.p + box.origin.R @ np.where(box.origin.R.T @ -n >= 0.0, half, -half)
    d = float(n @ (corner - on_plane))
    foot = corner - d * n
    return (d, foot, corner, -n) if flip else (d, corner, foot, n)


def _query_scene(sides: list):
    """A one-off engine Scene with a rigid object per side at the world origin, its shapes the
    side's elements (placed in the world) in order: shape indices run through the sides in
    turn. Meshes are their convex hulls, as a body's mesh in the simulation."""
    world = WorldModel()
    for k, elements in enumerate(sides):
        world.add(RigidObjectModel(f"side{k}", elements, Mass(1.0, (0.0, 0.0, 0.0), 1.0)))
    return build_scene(world).scene


def performCollisionDetection(physicsClientId=0):
    """Computes the contacts of the current state without stepping (PyBullet's collision
    stage): getContactPoints then reports them, with zero forces, until the next step. Pairs
    are those the step would test: different bodies whose filters let them collide."""
    client = get_client(physicsClientId)
    sim = client.sim
    uids = list(client.bodies)
    rows = []
    for i, ua in enumerate(uids):
        for ub in uids[i + 1:]:
            ea = client.bodies[ua].entity.getID()
            eb = client.bodies[ub].entity.getID()
            zero = np.zeros(3)
            for p in sim.getClosestPoints(ea, eb, 0.0):
                if not _may_collide(sim, p):
                    continue
                pa, la = _locate_link(client, p.body_a, p.link_a)
                pb, lb = _locate_link(client, p.body_b, p.link_b)
                rows.append(_contact_row(pa, la, pb, lb, p.point_a, p.point_b, p.normal,
                                         p.distance, zero))
    client._pb_detected = (sim, rows)
    if _clear_detected not in client.pre_step:
        client.pre_step.append(_clear_detected)


def _clear_detected(client):
    client._pb_detected = None


def _may_collide(sim, point) -> bool:
    """Whether the engine's filters let the bodies of a closest-point pair collide."""
    world = sim.getWorld()
    layout = sim.layout
    ids = []
    for entity_id, link in ((point.body_a, point.link_a), (point.body_b, point.link_b)):
        entity = world.getEntity(int(entity_id))
        wid = entity.link(int(link)).getID() if link >= 0 and hasattr(entity, "link") \
            else int(entity_id)
        ids.append(wid)
    a, b = (layout.body_of_id.get(i) for i in ids)
    if a is None or b is None or a == b:
        return False
    scene = sim.engine
    if _immovable(scene, a) and _immovable(scene, b):
        return False            # two static bodies never collide (a plane and a fixed base)
    # pair overrides are keyed by the world IDs that name the two collision bodies
    named = layout.id_of_body
    pair = (min(named[a], named[b]), max(named[a], named[b]))
    if pair in scene.enabled_pairs():
        return True
    if pair in scene.disabled_pairs():
        return False
    group_a, mask_a = scene.get_collision_filter(a)
    group_b, mask_b = scene.get_collision_filter(b)
    return bool(group_a & mask_b) and bool(group_b & mask_a)


def _immovable(scene, body: int) -> bool:
    info = scene.body_info(body)
    return info["kind"] == _BODY_STATIC or info["kind"] == _BODY_ROBOT and info["robot_body"] < 0


# -- rays --------------------------------------------------------------------------------------
def _rays(values, fn: str, name: str) -> np.ndarray:
    try:
        a = np.array(values, dtype=float)
    except (TypeError, ValueError):
        raise error(f"{fn}: {name} must be a list of [x, y, z] points") from None
    if a.size == 0:
        return np.zeros((0, 3))
    if a.ndim != 2 or a.shape[1] != 3:
        raise error(f"{fn}: {name} must be a list of [x, y, z] points, got shape {a.shape}")
    if not np.all(np.abs(a) <= 1e6):
        raise error(f"{fn}: {name} must be finite and within +-1e6 m")
    return a


def _ray_results(client, hits) -> tuple:
    miss = (-1, -1, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    named = {}                  # (entity, link) -> (uid, PyBullet link), once per call
    fraction = hits.fraction.tolist()
    points, normals = hits.point.tolist(), hits.normal.tolist()
    out = []
    for k, (entity, link) in enumerate(zip(hits.body.tolist(), hits.link.tolist())):
        if entity < 0:
            out.append(miss)
            continue
        if (entity, link) not in named:
            named[entity, link] = _locate_link(client, entity, link)
        uid, plink = named[entity, link]
        out.append((uid, plink, fraction[k], tuple(points[k]), tuple(normals[k])))
    return tuple(out)


def _ray_options(reportHitNumber, collisionFilterMask, fn: str):
    """The engine's mask (None: every body) after checking rayTest(Batch)'s reportHitNumber
    and collisionFilterMask."""
    if integer(reportHitNumber, fn, "reportHitNumber") not in (-1, 0):
        raise error(f"{fn}: reportHitNumber {reportHitNumber} is not supported by sim_node "
                    "(the engine reports the first hit only; use -1)")
    mask = integer(collisionFilterMask, fn, "collisionFilterMask")
    if not -2**31 <= mask <= 0xFFFFFFFF:
        raise error(f"{fn}: collisionFilterMask {mask} is not a 32-bit value")
    mask &= 0xFFFFFFFF
    return None if mask == 0xFFFFFFFF else mask


def rayTest(rayFromPosition, rayToPosition, physicsClientId=0, collisionFilterMask=-1,
            reportHitNumber=-1):
    """The first hit of one ray: ((objectUniqueId, linkIndex, hitFraction, hitPosition,
    hitNormal),), (-1, -1, 1.0, (0, 0, 0), (0, 0, 0)) when nothing is hit.
    collisionFilterMask and reportHitNumber as rayTestBatch's."""
    fn = "rayTest"
    client = get_client(physicsClientId)
    origin = vec(rayFromPosition, 3, fn, "rayFromPosition", 1e6)
    end = vec(rayToPosition, 3, fn, "rayToPosition", 1e6)
    mask = _ray_options(reportHitNumber, collisionFilterMask, fn)
    hits = client.sim.rayCast(origin.reshape(1, 3), end.reshape(1, 3), threads=1, mask=mask)
    return _ray_results(client, hits)


def rayTestBatch(rayFromPositions, rayToPositions, numThreads=-1, parentObjectUniqueId=-1,
                 parentLinkIndex=-1, reportHitNumber=-1, collisionFilterMask=-1,
                 fractionEpsilon=-1.0, physicsClientId=0):
    """The first hit of each ray, rayTest's tuples in order. Rays are in the world, or in the
    frame of parentObjectUniqueId's link parentLinkIndex (-1: base; PyBullet's link frame =
    its centre-of-mass frame). numThreads: -1 one thread, 0 every core, n > 0 n threads.
    collisionFilterMask: a body is hit only if mask & its group != 0. reportHitNumber (the
    n-th hit) is not supported: only -1 / 0, the first hit. At most 2,000,000 rays a call."""
    fn = "rayTestBatch"
    client = get_client(physicsClientId)
    origins = _rays(rayFromPositions, fn, "rayFromPositions")
    ends = _rays(rayToPositions, fn, "rayToPositions")
    if origins.shape != ends.shape:
        raise error(f"{fn}: rayFromPositions ({len(origins)}) and rayToPositions "
                    f"({len(ends)}) must have as many rays")
    if len(origins) > MAX_RAYS:
        raise error(f"{fn}: {len(origins)} rays; at most {MAX_RAYS} a call")
    threads = integer(numThreads, fn, "numThreads")
    if threads < -1:
        raise error(f"{fn}: numThreads must be -1 (one), 0 (all) or a positive count")
    threads = 1 if threads == -1 else None if threads == 0 else threads
    mask = _ray_options(reportHitNumber, collisionFilterMask, fn)
    number(fractionEpsilon, fn, "fractionEpsilon")
    parent = integer(parentObjectUniqueId, fn, "parentObjectUniqueId")
    if parent != -1:
        body = body_of(client, parent, fn, "parentObjectUniqueId")
        link = link_of(body, parentLinkIndex, fn, "parentLinkIndex")
        R, t = _com_frame(client, body, link)
        origins = origins @ R.T + t
        ends = ends @ R.T + t
    if len(origins) == 0:
        return ()
    hits = client.sim.rayCast(origins, ends, threads=threads, mask=mask)
    return _ray_results(client, hits)


def _com_frame(client, body, link: int):
    """World (R, t) of a PyBullet link's frame: its centre-of-mass (inertial) frame."""
    Rs, ts = client.sim.getLinkTransforms(body.entity)
    i = body.link(link).getIndex()
    p, R = inertial_frame(body, link)
    return Rs[i] @ R, ts[i] + Rs[i] @ p


# -- boxes -------------------------------------------------------------------------------------
def getAABB(bodyUniqueId, linkIndex=-1, physicsClientId=0):
    """((min x, y, z), (max x, y, z)) world box [m] of a link's collision shapes (-1: the
    base), at the current state, without Bullet's margins."""
    fn = "getAABB"
    client = get_client(physicsClientId)
    body = body_of(client, bodyUniqueId, fn)
    link = link_of(body, linkIndex, fn)
    entity, index = _entity_link(body, link)
    try:
        lo, hi = client.sim.getAABB(entity, index)
    except ValueError:
        raise error(f"{fn}: link {link} of body {body.uid} has no collision shape") from None
    return _tuple3(lo), _tuple3(hi)


def getOverlappingObjects(aabbMin, aabbMax, physicsClientId=0):
    """((bodyUniqueId, linkIndex), ...) of the links whose collision boxes overlap the box
    [aabbMin, aabbMax] [m], or None when there are none (as PyBullet)."""
    fn = "getOverlappingObjects"
    client = get_client(physicsClientId)
    lo = vec(aabbMin, 3, fn, "aabbMin")
    hi = vec(aabbMax, 3, fn, "aabbMax")
    if np.any(lo > hi):
        return None        # an empty box overlaps nothing (PyBullet: None)
    found = []
    for entity, link in client.sim.getOverlappingObjects(lo, hi):
        found.append(_locate_link(client, entity, link))
    found = sorted(set(found))
    return tuple(found) if found else None


# -- filters -----------------------------------------------------------------------------------
def setCollisionFilterGroupMask(bodyUniqueId, linkIndexA, collisionFilterGroup,
                                collisionFilterMask, physicsClientId=0):
    """A link's collision group and mask (32 bits each; -1 = every bit): links a, b collide
    when (group_a & mask_b) and (group_b & mask_a) are non-zero (PyBullet's documented rule;
    links welded by fixed joints share one filter)."""
    fn = "setCollisionFilterGroupMask"
    client = get_client(physicsClientId)
    body = body_of(client, bodyUniqueId, fn)
    link = link_of(body, linkIndexA, fn, "linkIndexA")
    group = _bits(collisionFilterGroup, fn, "collisionFilterGroup")
    mask = _bits(collisionFilterMask, fn, "collisionFilterMask")
    entity, index = _entity_link(body, link)
    client.sim.setCollisionFilterGroupMask(entity, index, group, mask)


def setCollisionFilterPair(bodyUniqueIdA, bodyUniqueIdB, linkIndexA, linkIndexB,
                           enableCollision, physicsClientId=0):
    """Enable (1) or disable (0) collisions between two links whatever their groups and
    masks; a robot's own rules (self-collision off, adjacent links) still hold."""
    fn = "setCollisionFilterPair"
    client = get_client(physicsClientId)
    a = body_of(client, bodyUniqueIdA, fn, "bodyUniqueIdA")
    b = body_of(client, bodyUniqueIdB, fn, "bodyUniqueIdB")
    ea, la = _entity_link(a, link_of(a, linkIndexA, fn, "linkIndexA"))
    eb, lb = _entity_link(b, link_of(b, linkIndexB, fn, "linkIndexB"))
    enable = integer(enableCollision, fn, "enableCollision")
    if enable not in (0, 1):
        raise error(f"{fn}: enableCollision must be 0 or 1, got {enable}")
    client.sim.setCollisionFilterPair(ea, eb, la, lb, bool(enable))


def _bits(value, fn: str, name: str) -> int:
    value = integer(value, fn, name)
    if not -2**31 <= value <= 0xFFFFFFFF:
        raise error(f"{fn}: {name} {value} is not a 32-bit value")
    return value & 0xFFFFFFFF
