"""From a WorldModel to the engine's Scene: collision bodies, shapes, meshes, systems.

Collision bodies, in order: every terrain (static), every rigid object (free), then each robot's
moving bodies (contiguous, body i of its Model first_body + i) and finally one static body per
fixed-base robot for the links welded to the world. Each collision body answers to the world ID
of its first link (terrain / object ID otherwise); `body_of_id` maps every world ID — including
links merged into another link's body across fixed joints — to its collision body.

Meshes: robot link and rigid-object meshes collide as their convex hulls (fast and robust for
moving bodies, as in PyBullet); terrain meshes as triangle meshes (concave, possibly open).
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np
from transforms3d.quaternions import mat2quat

from sim_node.engine.api import BodyKind, ConstraintKind, Scene
from sim_node.model import geometry as geo

# engine codes (geometry.pxd ShapeType, types.pxd BodyKind)
SHAPE_CODES = {geo.Sphere: 0, geo.Box: 1, geo.Capsule: 2, geo.Cylinder: 3, geo.Plane: 4}
SHAPE_CONVEX, SHAPE_MESH, SHAPE_HEIGHTFIELD = 5, 6, 7
BODY_STATIC, BODY_KINEMATIC, BODY_FREE, BODY_ROBOT = (int(k) for k in BodyKind)


@dataclass
class SceneLayout:
    """How world entities map onto the Scene."""
    scene: Scene
    body_of_id: dict = field(default_factory=dict)        # world ID -> collision body
    id_of_body: list = field(default_factory=list)        # collision body -> world ID
    free_of_object: dict = field(default_factory=dict)    # rigid object index -> free body
    robot_first_body: list = field(default_factory=list)  # robot index -> first collision body
    # shape -> (entity ID: the robot's for a link's shape, link index in its robot or -1)
    shape_owner: list = field(default_factory=list)


def _rotation_to_z(normal) -> np.ndarray:
    """A rotation whose z axis is `normal` (unit)."""
    n = np.asarray(normal, dtype=float)
    helper = np.eye(3)[np.argmin(np.abs(n))]
    x = np.cross(helper, n)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(n, x), n])


# engine arrays of each loaded mesh (hulls cost ~10 ms each: every Simulator of a world, and
# every run of a batch, shares them; the engine only reads them)
_ENGINE_MESHES = weakref.WeakKeyDictionary()


def _engine_mesh(mesh: geo.Mesh, convex: bool) -> dict:
    arrays = _ENGINE_MESHES.setdefault(mesh, {})
    if convex not in arrays:
        arrays[convex] = (convex_mesh_arrays(mesh.vertices) if convex
                          else triangle_mesh_arrays(mesh.vertices, mesh.faces))
    return arrays[convex]


class _MeshTable:
    """Engine meshes, each built once per (file, scale, kind)."""

    def __init__(self):
        self.specs = []
        self.index = {}

    def add(self, mesh: geo.Mesh, convex: bool) -> int:
        key = (mesh.path, mesh.scale, convex)
        if key not in self.index:
            self.index[key] = len(self.specs)
            self.specs.append(_engine_mesh(mesh, convex))
        return self.index[key]

    def add_heightfield(self, field: geo.Heightfield) -> int:
        from sim_node.engine.api import make_heightfield_arrays

        dx, dy = field.spacing
        arrays = make_heightfield_arrays(field.heights, dx, dy, -field.size[0] / 2,
                                         -field.size[1] / 2)
        bvh = arrays.pop("bvh")
        spec = {**arrays, **bvh}
        spec["verts"] = spec["verts"].reshape(-1)
        spec["tris"] = spec["tris"].reshape(-1)
        spec["tri_flags"], adjacent = geo.triangle_features(arrays["verts"], arrays["tris"])
        spec["tri_adjacent"] = adjacent.reshape(-1)
        self.specs.append(spec)
        return len(self.specs) - 1


def _bvh(tri_lo, tri_hi):
    from sim_node.engine.api import build_bvh
    return build_bvh(tri_lo, tri_hi)


def triangle_mesh_arrays(vertices, faces) -> dict:
    """A triangle mesh as a collision surface (geo.clean_triangles), with the neighbourhood of
    every triangle (geo.triangle_features) and its BVH."""
    verts, tris = geo.clean_triangles(vertices, faces)
    flags, adjacent = geo.triangle_features(verts, tris)
    corners = verts[tris]
    return {"verts": verts.reshape(-1), "tris": tris.reshape(-1), "tri_flags": flags,
            "tri_adjacent": adjacent.reshape(-1),
            **_bvh(corners.min(axis=1), corners.max(axis=1))}


def convex_mesh_arrays(vertices) -> dict:
    """The convex hull of the vertices with its faces as polygons (coplanar triangles merged)."""
    import trimesh

    hull = trimesh.Trimesh(vertices=vertices).convex_hull
    verts = np.ascontiguousarray(hull.vertices, dtype=np.float64)
    face_start, face_verts, normals = [0], [], []
    in_facet = np.zeros(len(hull.faces), bool)
    for facet, normal in zip(hull.facets, hull.facets_normal):
        in_facet[facet] = True
        loop = _facet_polygon(verts, hull.faces[facet], normal)
        face_verts += loop
        face_start.append(len(face_verts))
        normals.append(normal)
    for f in np.nonzero(~in_facet)[0]:
        face_verts += list(hull.faces[f])
        face_start.append(len(face_verts))
        normals.append(hull.face_normals[f])
    tris = np.ascontiguousarray(hull.faces, dtype=np.int32)
    corners = verts[tris]
    return {"verts": verts.reshape(-1), "tris": tris.reshape(-1),
            "face_start": np.array(face_start, np.int32), "face_verts": np.array(face_verts, np.int32),
            "face_normals": np.array(normals, np.float64).reshape(-1),
            **_bvh(corners.min(axis=1), corners.max(axis=1))}


def _facet_polygon(verts, triangles, normal) -> list:
    """The vertex loop of a convex facet (coplanar hull triangles), counter-clockwise about its
    outward normal: the 2-D convex hull of its vertices in the facet's plane (Andrew's monotone
    chain). Unlike walking the boundary edges, this cannot loop on a facet whose triangles
    touch at a single vertex (seen on the meshes of Unitree's G1, where the walk never ended)."""
    ids = np.unique(triangles)
    normal = np.asarray(normal, dtype=float)
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(normal, u)
    points = [(float(verts[i] @ u), float(verts[i] @ v), int(i)) for i in ids]
    points.sort()

    def half(sequence):
        chain = []
        for point in sequence:
            while len(chain) >= 2 and ((chain[-1][0] - chain[-2][0]) * (point[1] - chain[-2][1])
                                       - (chain[-1][1] - chain[-2][1]) * (point[0] - chain[-2][0])
                                       ) <= 0.0:
                chain.pop()
            chain.append(point)
        return chain[:-1]

    return [p[2] for p in half(points) + half(reversed(points))]


def _shape_spec(element_shape, R_BS, p_BS, body: int, meshes: _MeshTable, static: bool) -> dict:
    shape = element_shape
    if isinstance(shape, geo.Box):
        return dict(type=1, size=[s / 2 for s in shape.size], R_BS=R_BS, p_BS=p_BS, body=body)
    if isinstance(shape, geo.Sphere):
        return dict(type=0, size=[shape.radius], R_BS=R_BS, p_BS=p_BS, body=body)
    if isinstance(shape, (geo.Cylinder, geo.Capsule)):
        return dict(type=SHAPE_CODES[type(shape)], size=[shape.radius, shape.length / 2],
                    R_BS=R_BS, p_BS=p_BS, body=body)
    if isinstance(shape, geo.Plane):
        n = np.asarray(shape.normal, dtype=float)
        R_plane = _rotation_to_z(n)
        return dict(type=4, size=[0.0], R_BS=R_BS @ R_plane, p_BS=p_BS + R_BS @ (n * shape.offset),
                    body=body)
    if isinstance(shape, geo.Mesh):
        convex = not static and not shape.concave
        return dict(type=SHAPE_CONVEX if convex else SHAPE_MESH, size=[0.0], R_BS=R_BS,
                    p_BS=p_BS, body=body, mesh=meshes.add(shape, convex))
    if isinstance(shape, geo.Heightfield):
        if not static:
            raise ValueError("a heightfield can only be a terrain")
        return dict(type=SHAPE_HEIGHTFIELD, size=[0.0], R_BS=R_BS, p_BS=p_BS, body=body,
                    mesh=meshes.add_heightfield(shape))
    raise TypeError(f"unsupported collision shape {type(shape).__name__}")


def _extent(spec, meshes: _MeshTable) -> float:
    """Largest distance from the body origin of any point of the shape [m]."""
    p = np.linalg.norm(spec["p_BS"])
    t = spec["type"]
    size = spec["size"]
    if t == 0:
        return p + size[0]
    if t == 1:
        return p + float(np.linalg.norm(size))
    if t in (2, 3):
        return p + size[0] + size[1]
    if t in (4, SHAPE_HEIGHTFIELD):
        return 0.0
    verts = meshes.specs[spec["mesh"]]["verts"].reshape(-1, 3)
    return p + float(np.linalg.norm(verts, axis=1).max())


def _body_spec(kind, index, id_, settings, world, robot_body=-1, robot=-1, R=np.eye(3),
               p=np.zeros(3)):
    surface = settings.surface
    padding = settings.padding if settings.padding is not None else world.simulation.padding
    return dict(kind=kind, index=index, robot_body=robot_body, robot=robot, id=id_, padding=padding,
                restitution=surface.kRestitution, friction=surface.kFriction,
                stiffness=surface.kStiffness, damping=surface.kDamping, R=R, p=p)


def _representative(robot, links) -> int:
    """The link a collision body answers to: the first of its links with collision geometry."""
    for l in links:
        if robot.link(l).getCollisionGeometry():
            return l
    return links[0]


def build_scene(world, **scene_options) -> SceneLayout:
    """The engine Scene of `world` (a WorldModel, or anything with its terrain / rigid object /
    robot accessors and `simulation`) in its current state."""
    meshes = _MeshTable()
    bodies, shapes, robots, free_bodies = [], [], [], []
    body_of_id = {}
    shape_owner = []

    def add_shapes(body_index, elements, owner, R_B=np.eye(3), p_B=np.zeros(3), static=False):
        first = len(shapes)
        for element in elements:
            shape_owner.append((owner, -1))
            spec = _shape_spec(element.shape, R_B @ element.origin.R, p_B + R_B @ element.origin.p,
                               body_index, meshes, static)
            shapes.append(spec)
        bodies[body_index]["first_shape"] = first
        bodies[body_index]["nshape"] = len(shapes) - first
        bodies[body_index]["extent"] = max([_extent(s, meshes) for s in shapes[first:]], default=0.0)

    for i in range(world.numTerrains()):
        terrain = world.terrain(i)
        R, t = terrain.getTransform()
        bodies.append(_body_spec(BODY_STATIC, -1, terrain.getID(), terrain.settings, world, R=R, p=t))
        body_of_id[terrain.getID()] = len(bodies) - 1
        add_shapes(len(bodies) - 1, terrain.getCollisionGeometry(), terrain.getID(), static=True)

    free_of_object = {}
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        R, t = obj.getTransform()
        mass = obj.getMass()
        com_B = mass.getCom()
        w, v = obj.getVelocity()
        w_, x_, y_, z_ = mat2quat(R)
        x_com = t + R @ com_B
        v_com = v + np.cross(w, R @ com_B)
        free_of_object[i] = len(free_bodies)
        free_bodies.append(dict(mass=mass.getMass(), com_B=com_B, I_B=mass.inertiaMatrix(),
                                state=np.concatenate([x_com, [x_, y_, z_, w_], v_com, w]),
                                body=len(bodies)))
        bodies.append(_body_spec(BODY_FREE, len(free_bodies) - 1, obj.getID(), obj.settings, world))
        body_of_id[obj.getID()] = len(bodies) - 1
        add_shapes(len(bodies) - 1, obj.getCollisionGeometry(), obj.getID())

    robot_first_body = []
    welded = []
    for r in range(world.numRobots()):
        robot = world.robot(r)
        st = robot.structure
        settings = robot.settings.body
        first = len(bodies)
        robot_first_body.append(first)
        for b in range(robot.model.nbody):
            links = st.body_links[b]
            # (a planar joint's intermediate bodies have no links: they answer to its child)
            representative = _representative(robot, links) if links else st.body_link[b]
            bodies.append(_body_spec(BODY_ROBOT, r, robot.link(representative).getID(),
                                     settings, world, robot_body=b, robot=r))
            index = len(bodies) - 1
            elements = []
            for l in links:
                body_of_id[robot.link(l).getID()] = index
                frame = st.link_frames[l]
                for e in robot.link(l).getCollisionGeometry():
                    elements.append((l, frame, e))
            first_shape = len(shapes)
            for l, frame, e in elements:
                shape_owner.append((robot.getID(), l))
                shapes.append(_shape_spec(e.shape, frame.R @ e.origin.R, frame.p + frame.R @ e.origin.p,
                                          index, meshes, static=False))
            bodies[index]["first_shape"] = first_shape
            bodies[index]["nshape"] = len(shapes) - first_shape
            bodies[index]["extent"] = max([_extent(s, meshes) for s in shapes[first_shape:]], default=0.0)
        world_links = [l for l, f in enumerate(st.link_frames) if f.body < 0]
        welded.append((r, robot, world_links, settings))
        lower, upper = robot.getJointLimits()
        robots.append(dict(model=robot.model, q=robot.getConfig(), v=robot.getVelocity(),
                           q_lower=lower, q_upper=upper, effort=robot.getTorqueLimits(),
                           dry_friction=st.friction, damping=st.damping, dof_q=st.dof_q,
                           floating_base=st.floating, body_adjacent=st.body_adjacent,
                           first_body=first, self_collision=robot.settings.self_collision))
    for r, robot, world_links, settings in welded:
        if not world_links:
            continue
        bodies.append(_body_spec(BODY_STATIC, -1, robot.link(_representative(robot, world_links)).getID(),
                                 settings, world, robot=r))
        index = len(bodies) - 1
        first_shape = len(shapes)
        for l in world_links:
            body_of_id[robot.link(l).getID()] = index
            frame = robot.structure.link_frames[l]
            for e in robot.link(l).getCollisionGeometry():
                shape_owner.append((robot.getID(), l))
                shapes.append(_shape_spec(e.shape, frame.R @ e.origin.R, frame.p + frame.R @ e.origin.p,
                                          index, meshes, static=False))
        bodies[index]["first_shape"] = first_shape
        bodies[index]["nshape"] = len(shapes) - first_shape
        bodies[index]["extent"] = max([_extent(s, meshes) for s in shapes[first_shape:]], default=0.0)

    options = dict(gravity=world.simulation.gravity, max_contacts=world.simulation.max_contacts)
    options.update(scene_options)
    scene = Scene(robots=robots, free_bodies=free_bodies, bodies=bodies, shapes=shapes,
                  meshes=meshes.specs, **options)
    constraints = world.constraints() if hasattr(world, "constraints") else []
    if constraints:
        scene.set_constraints(constraint_specs(constraints, body_of_id))
    return SceneLayout(scene=scene, body_of_id=body_of_id, id_of_body=[b["id"] for b in bodies],
                       free_of_object=free_of_object, robot_first_body=robot_first_body,
                       shape_owner=shape_owner)


# user constraints (sim_node.model.constraints) -> Scene.set_constraints specs
CONSTRAINT_KINDS = {"fixed": ConstraintKind.FIXED, "point2point": ConstraintKind.POINT2POINT,
                    "gear": ConstraintKind.GEAR, "prismatic": ConstraintKind.PRISMATIC}


def scalar_dof(link) -> int:
    """The velocity index (in its robot's v) of a robot link's joint DOF; -1 unless the joint
    is revolute, continuous or prismatic (and not a mimic)."""
    st = link.getRobot().structure
    joint = st.link_joint[link.getIndex()]
    if st.joint_type.get(joint) not in ("revolute", "continuous", "prismatic"):
        return -1
    return st.joint_v_index[joint]


def _constraint_frame(entity, R, p, body_of_id) -> tuple:
    """(collision body, R, p): a frame given in an entity's frame (a robot link's URDF frame, a
    rigid object's frame), in its collision body's frame (-1 and the world frame for None)."""
    R = np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)
    if entity is None:
        return -1, R, p
    body = body_of_id[entity.getID()]
    if hasattr(entity, "getRobot"):
        frame = entity.getRobot().structure.link_frames[entity.getIndex()]
        # the link frame in its body's frame (in the world's for links welded to it: their
        # static body is placed at the world origin)
        return body, frame.R @ R, frame.p + frame.R @ p
    return body, R, p


def constraint_specs(constraints, body_of_id, impulses=None) -> list:
    """The Scene.set_constraints specs of `constraints` (Constraint objects, in order), their
    bodies looked up in body_of_id (world ID -> collision body). impulses: uid -> the row
    impulses of the last step (their warm start), or None."""
    specs = []
    for c in constraints:
        body_a, R_a, p_a = _constraint_frame(c.parent, *c.parent_frame, body_of_id)
        body_b, R_b, p_b = _constraint_frame(c.child, *c.child_frame, body_of_id)
        spec = dict(kind=CONSTRAINT_KINDS[c.kind], body_a=body_a, body_b=body_b, R_a=R_a,
                    p_a=p_a, R_b=R_b, p_b=p_b, axis=np.asarray(c.axis, dtype=float),
                    max_force=float(c.max_force), erp=float(c.erp),
                    ratio=float(c.gear_ratio), target=float(c.relative_position_target))
        if c.kind == "gear":
            spec.update(dof_a=scalar_dof(c.parent), dof_b=scalar_dof(c.child),
                        dof_aux=-1 if c.gear_aux is None else scalar_dof(c.gear_aux))
        if impulses is not None and c.uid in impulses:
            spec["lam"] = impulses[c.uid]
        specs.append(spec)
    return specs
