"""Making bodies: loadURDF, removeBody (and the shape / multibody builders).

loadURDF reads the file with sim_node's URDF loader (sim_node.model.urdf: package:// and
relative meshes as everywhere in sim_node) and places the root link's URDF frame at
basePosition / baseOrientation, as PyBullet does. Masses and inertias are Bullet's importer's
(sim_node.pybullet.loading_inertia: by default from the collision shapes, not the file's
<inertia>). Bases whose root link (with the links welded to it) has no mass are static, as in
Bullet; useFixedBase fixes any base.

PyBullet's motors act on the body's scalar joints from the start (sim_node.pybullet.control);
the URDF effort and velocity limits are reported by getJointInfo but, as in PyBullet, only the
motor `force` limits the motors.
"""
from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
from transforms3d.quaternions import quat2mat

from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError
from sim_node.model.urdf import parse_urdf
from sim_node.pybullet.client import (finite_float, finite_vector, get_client, raw_joint_limits,
                                      unit_quaternion, vec, warn_once, xyzw)
from sim_node.pybullet.connection import resolve_file
from sim_node.pybullet.errors import error
from sim_node.pybullet.loading_inertia import link_inertias

__all__ = ["loadURDF", "removeBody", "createCollisionShape", "createCollisionShapeArray",
           "removeCollisionShape",
           "createVisualShape", "createVisualShapeArray", "createMultiBody", "getVisualShapeData",
           "getCollisionShapeData", "changeVisualShape"]

# loadURDF flags (pybullet's values)
URDF_USE_INERTIA_FROM_FILE = 2
URDF_USE_SELF_COLLISION = 8
URDF_USE_SELF_COLLISION_EXCLUDE_PARENT = 16
URDF_USE_SELF_COLLISION_EXCLUDE_ALL_PARENTS = 32
MAX_GLOBAL_SCALING = 1e3


def loadURDF(fileName, *args, **kwargs) -> int:
    """Load a URDF (or xacro) robot; its body unique id.

    Besides the keyword form below, PyBullet's legacy positional form loadURDF(fileName, x, y, z)
    or loadURDF(fileName, x, y, z, qx, qy, qz, qw) (numbers only, no keyword arguments; as
    pybullet 3.2.7 reads it) places the base at (x, y, z) with orientation (qx, qy, qz, qw).

    fileName: absolute, relative to the current directory, or to a setAdditionalSearchPath
    directory (pybullet_data.getDataPath()). basePosition [m] / baseOrientation (x, y, z, w):
    the root link's URDF frame in the world. useFixedBase: weld the base to the world.
    flags: URDF_USE_SELF_COLLISION (the links collide with each other, except each link with
    its parent: _EXCLUDE_PARENT is what sim_node always does; _EXCLUDE_ALL_PARENTS is treated
    the same), URDF_USE_INERTIA_FROM_FILE (the file's inertia tensors; by default, as in
    PyBullet, each link's inertia comes from its collision shapes: loading_inertia); other
    flags are accepted and ignored. globalScaling: scales lengths (geometry, joint and inertial
    origins); masses and the file's inertia tensors stay, as in Bullet's importer.
    useMaximalCoordinates is accepted and ignored (sim_node's bodies are reduced-coordinate
    trees either way)."""
    if not kwargs and len(args) in (3, 7) and all(_is_number(a) for a in args):
        args = (args[:3],) + ((args[3:],) if len(args) == 7 else ())
    return _load_urdf(fileName, *args, **kwargs)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating))


def _load_urdf(fileName, basePosition=(0.0, 0.0, 0.0), baseOrientation=(0.0, 0.0, 0.0, 1.0),
               useMaximalCoordinates=0, useFixedBase=0, flags=0, globalScaling=1.0,
               physicsClientId=0) -> int:
    """loadURDF's keyword form (see loadURDF)."""
    client = get_client(physicsClientId)
    fn = "loadURDF"
    path = resolve_file(client, fileName, fn)
    position = finite_vector((0.0, 0.0, 0.0) if basePosition is None else basePosition, 3, fn,
                             "basePosition")
    orientation = unit_quaternion((0.0, 0.0, 0.0, 1.0) if baseOrientation is None
                                  else baseOrientation, fn, "baseOrientation")
    flags = _flag_int(flags, fn, "flags")
    fixed = bool(_flag_int(useFixedBase, fn, "useFixedBase"))
    _flag_int(useMaximalCoordinates, fn, "useMaximalCoordinates")
    scale = finite_float(globalScaling, fn, "globalScaling")
    if not 0.0 < scale <= MAX_GLOBAL_SCALING:
        raise error(f"{fn}: globalScaling must be in (0, {MAX_GLOBAL_SCALING:g}], got {scale}")
    try:
        urdf = parse_urdf(path)
    except ModelLoadError as e:
        raise error(f"{fn}: {e}") from None
    limits = raw_joint_limits(urdf.xml)
    urdf = pybullet_joints(urdf, limits)
    if scale != 1.0:
        urdf = scaled_urdf(urdf, scale)
    inertias = link_inertias(urdf, from_file=bool(flags & URDF_USE_INERTIA_FROM_FILE),
                             fixed_base=fixed, scale=scale)
    urdf = with_inertias(urdf, inertias)
    x, y, z, w = orientation
    R = quat2mat([w, x, y, z])
    try:
        robot = client.world.makeRobot(urdf, True if fixed else None, R=R, t=position)
    except (ModelLoadError, ValueError) as e:
        raise error(f"{fn}: '{path}': {e}") from None
    robot.settings = replace(robot.settings, self_collision=bool(flags & URDF_USE_SELF_COLLISION))
    names = robot.structure.link_names
    frames = [(inertias[n].p, inertias[n].R) for n in names]
    if useMaximalCoordinates:
        warn_once(client, "useMaximalCoordinates", "loadURDF: useMaximalCoordinates is "
                  "accepted and ignored (sim_node simulates reduced coordinates)")
    return client.add_body(robot, fileName=path, flags=flags, globalScaling=scale,
                           maximal_coordinates=bool(useMaximalCoordinates),
                           inertial_frames=frames,
                           bullet_inertias=[(inertias[n].mass, inertias[n].diagonal)
                                            for n in names],
                           joint_limits={k: v[:4] for k, v in limits.items()})


# the keyword form's parameters are loadURDF's (help(), inspect and the API coverage test)
loadURDF.__signature__ = inspect.signature(_load_urdf)


def removeBody(bodyUniqueId, physicsClientId=0):
    client = get_client(physicsClientId)
    client.remove_body(client.body(bodyUniqueId).uid)


def _sequence(value, function: str, what: str, n=None):
    """value as a list (a sequence, not a string), of n entries when n is given."""
    if value is None or isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise error(f"{function}: {what} must be a list, got {value!r}")
    if n is not None and len(value) != n:
        raise error(f"{function}: {what} has {len(value)} entries, expected {n}")
    return list(value)


def _flag_int(value, function: str, what: str) -> int:
    try:
        if isinstance(value, bool):
            return int(value)
        x = int(value)
        if x != value:
            raise ValueError
        return x
    except (TypeError, ValueError, OverflowError):
        raise error(f"{function}: {what} must be an integer, got {value!r}") from None


def pybullet_joints(urdf, limits: dict):
    """The URDF's joints as PyBullet uses them: <mimic> ignored (PyBullet's joints are all
    independent), and a revolute or prismatic joint whose <limit> gives neither lower nor
    upper without position limits (Bullet's parser reads 0 / -1: no limit; the URDF standard's
    0 / 0 would lock it), and no effort limit (PyBullet's motors are limited by their force
    only)."""
    import math
    from sim_node.model.urdf import Limit
    joints = {}
    for name, joint in urdf.joints.items():
        if joint.mimic is not None:
            joint = replace(joint, mimic=None)
        raw = limits.get(name)
        if raw is not None and raw[4] and joint.type in ("revolute", "prismatic") \
                and joint.limit is not None:
            joint = replace(joint, limit=Limit(-math.inf, math.inf, joint.limit.effort,
                                               joint.limit.velocity))
        if joint.limit is not None and joint.limit.effort != math.inf:
            # PyBullet's motors are limited by their `force` only, never by the URDF effort
            # (getJointInfo still reports it): the engine's actuator clips to the effort, so
            # it gets none (biped2d_pybullet.urdf's hip has effort 0 and moves in PyBullet)
            joint = replace(joint, limit=replace(joint.limit, effort=math.inf))
        joints[name] = joint
    return replace(urdf, joints=joints)


def with_inertias(urdf, inertias: dict):
    """The URDF with Bullet's masses and inertias (loading_inertia.link_inertias) in place of
    the file's; massless links get no <inertial>."""
    from sim_node.model.inertia_repair import Inertial
    links = {}
    for name, link in urdf.links.items():
        bullet = inertias[name]
        inertial = None
        if bullet.mass > 0:
            inertial = Inertial(bullet.mass, np.asarray(bullet.p, dtype=float), bullet.tensor())
        links[name] = replace(link, inertial=inertial)
    return replace(urdf, links=links)


# -- globalScaling ---------------------------------------------------------------------------
def scaled_urdf(urdf, s: float):
    """The URDF with every joint origin and geometry length times s (prismatic limits are not
    changed, as Bullet's importer; the inertials are with_inertias's)."""
    links = {}
    for name, link in urdf.links.items():
        links[name] = replace(link, visuals=tuple(_scaled_element(e, s) for e in link.visuals),
                              collisions=tuple(_scaled_element(e, s) for e in link.collisions))
    joints = {name: replace(j, origin=replace(j.origin, p=np.asarray(j.origin.p) * s))
              for name, j in urdf.joints.items()}
    return replace(urdf, links=links, joints=joints)


def _scaled_element(element, s: float):
    return replace(element, origin=replace(element.origin, p=np.asarray(element.origin.p) * s),
                   shape=scaled_shape(element.shape, s))


def scaled_shape(shape, s: float):
    if isinstance(shape, geo.Box):
        return geo.Box(tuple(x * s for x in shape.size))
    if isinstance(shape, geo.Sphere):
        return geo.Sphere(shape.radius * s)
    if isinstance(shape, geo.Cylinder):
        return geo.Cylinder(shape.radius * s, shape.length * s)
    if isinstance(shape, geo.Capsule):
        return geo.Capsule(shape.radius * s, shape.length * s)
    if isinstance(shape, geo.Plane):
        return geo.Plane(shape.normal, shape.offset * s)
    if isinstance(shape, geo.Mesh):
        vertices = None if shape.vertices is None else np.asarray(shape.vertices) * s
        return replace(shape, scale=tuple(x * s for x in shape.scale), vertices=vertices)
    return shape


# -- shapes and createMultiBody ------------------------------------------------------------------
# PyBullet's geometry types
GEOM_SPHERE, GEOM_BOX, GEOM_CYLINDER, GEOM_MESH, GEOM_PLANE, GEOM_CAPSULE = 2, 3, 4, 5, 6, 7
GEOM_HEIGHTFIELD = 9
GEOM_FORCE_CONCAVE_TRIMESH = 1      # createCollisionShape flag: a mesh collides as its triangles
_GEOM_NAMES = {GEOM_SPHERE: "GEOM_SPHERE", GEOM_BOX: "GEOM_BOX", GEOM_CYLINDER: "GEOM_CYLINDER",
               GEOM_MESH: "GEOM_MESH", GEOM_PLANE: "GEOM_PLANE", GEOM_CAPSULE: "GEOM_CAPSULE"}
JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_FIXED = 0, 1, 2, 4
_JOINT_URDF = {JOINT_REVOLUTE: "continuous", JOINT_PRISMATIC: "prismatic",
               JOINT_SPHERICAL: "spherical", JOINT_FIXED: "fixed"}
MAX_SHAPE_SIZE = 1e4        # [m]


class ShapeSpec:
    """A createCollisionShape / createVisualShape result: geometry elements (origin in the
    frame the shape is attached at) with their PyBullet descriptions for get*ShapeData."""

    def __init__(self, elements: list, described: list, colors=None):
        self.elements = elements        # [GeometryElement]
        self.described = described      # [(geometry type, dimensions, file name bytes)]
        self.colors = colors or [(1.0, 1.0, 1.0, 1.0)] * len(elements)


def _shapes(client, kind: str) -> dict:
    return client.__dict__.setdefault(f"_{kind}_shapes", {})


def _new_shape_id(shapes: dict) -> int:
    # the lowest free id: PyBullet hands a removed shape's id out again
    return next(k for k in range(len(shapes) + 1) if k not in shapes)


def collision_shape(client, shape_id, fn: str, what: str) -> ShapeSpec:
    """The ShapeSpec of a collision shape id of the client; error naming fn and what
    otherwise."""
    shapes = _shapes(client, "collision")
    k = _flag_int(shape_id, fn, what)
    if k not in shapes:
        raise error(f"{fn}: {what} {k} is not a collision shape of this client (its ids: "
                    f"{sorted(shapes) or 'none yet'}; createCollisionShape makes them)")
    return shapes[k]


def removeCollisionShape(collisionShapeId, physicsClientId=0):
    """Forget a collision shape id (bodies made from it keep their shapes; its id is reused
    by the next createCollisionShape, as in PyBullet). PyBullet refuses, with a warning, to
    remove a shape a body uses; sim_node's bodies hold copies, so it removes any."""
    client = get_client(physicsClientId)
    fn = "removeCollisionShape"
    collision_shape(client, collisionShapeId, fn, "collisionShapeId")
    del _shapes(client, "collision")[int(collisionShapeId)]


def _geometry(fn, shape_type, radius, half_extents, height, file_name, mesh_scale,
              plane_normal, client, index="", concave=False):
    """(shape, PyBullet dimensions, file name bytes) of one createCollisionShape entry; a mesh
    collides as its triangles if `concave` (GEOM_FORCE_CONCAVE_TRIMESH), else as its convex hull
    (PyBullet's default for GEOM_MESH)."""
    from sim_node.pybullet.connection import resolve_file
    try:
        kind = int(shape_type)
    except (TypeError, ValueError, OverflowError):
        kind = None
    if kind not in _GEOM_NAMES:
        if kind == GEOM_HEIGHTFIELD:
            raise error(f"{fn}: GEOM_HEIGHTFIELD is not supported by sim_node's PyBullet API "
                        "yet (sim_node's terrains take heightfields: WorldModel.loadTerrain)")
        raise error(f"{fn}: shapeType{index} must be one of "
                    + ", ".join(f"{n} ({k})" for k, n in _GEOM_NAMES.items())
                    + f"; got {shape_type!r}")

    def size(value, what):
        x = finite_float(value, fn, what + index)
        if not 0.0 < x <= MAX_SHAPE_SIZE:
            raise error(f"{fn}: {what}{index} must be in (0, {MAX_SHAPE_SIZE:g}] m, got {x}")
        return x
    if kind == GEOM_SPHERE:
        r = size(radius, "radius")
        return geo.Sphere(r), (r, r, r), b""
    if kind == GEOM_BOX:
        h = finite_vector(half_extents, 3, fn, "halfExtents" + index)
        for x in h:
            size(x, "halfExtents")
        return geo.Box(tuple(2.0 * h)), tuple(float(x) for x in 2.0 * h), b""
    if kind in (GEOM_CYLINDER, GEOM_CAPSULE):
        r, length = size(radius, "radius"), size(height, "height")
        shape = geo.Cylinder(r, length) if kind == GEOM_CYLINDER else geo.Capsule(r, length)
        return shape, (length, r, 0.0), b""
    if kind == GEOM_PLANE:
        n = finite_vector(plane_normal, 3, fn, "planeNormal" + index)
        norm = np.linalg.norm(n)
        if norm < 1e-9:
            raise error(f"{fn}: planeNormal{index} must not be zero")
        return geo.Plane(tuple(n / norm), 0.0), (0.0, 0.0, 1.0), b""
    path = resolve_file(client, file_name, fn)
    scale = finite_vector(mesh_scale, 3, fn, "meshScale" + index)
    if np.any(scale == 0) or np.abs(scale).max() > MAX_SHAPE_SIZE:
        raise error(f"{fn}: meshScale{index} entries must be non-zero and within "
                    f"{MAX_SHAPE_SIZE:g}, got {scale.tolist()}")
    try:
        mesh = geo.load_mesh(path, tuple(float(x) for x in scale), concave)
    except (OSError, geo.MeshLoadError, ValueError) as e:
        raise error(f"{fn}: cannot load the mesh '{path}': {e}") from None
    return mesh, tuple(float(x) for x in scale), path.encode()


def _frame(position, orientation, fn, what):
    from sim_node.model.urdf import Origin
    p_ = finite_vector((0, 0, 0) if position is None else position, 3, fn, f"{what}Position")
    q = unit_quaternion((0, 0, 0, 1) if orientation is None else orientation, fn,
                        f"{what}Orientation")
    return Origin(R=quat2mat([q[3], q[0], q[1], q[2]]), p=p_)


def createCollisionShape(shapeType, radius=0.5, halfExtents=(1.0, 1.0, 1.0), height=1.0,
                         fileName="", meshScale=(1.0, 1.0, 1.0), planeNormal=(0.0, 0.0, 1.0),
                         flags=0, collisionFramePosition=None, collisionFrameOrientation=None,
                         vertices=None, indices=None, heightfieldTextureScaling=None,
                         numHeightfieldRows=None, numHeightfieldColumns=None,
                         replaceHeightfieldIndex=None, heightfieldData=None,
                         physicsClientId=0) -> int:
    """A collision shape for createMultiBody; its id (0, 1, ... per client). GEOM_SPHERE
    (radius), GEOM_BOX (halfExtents), GEOM_CYLINDER / GEOM_CAPSULE (radius, height along z),
    GEOM_PLANE (planeNormal), GEOM_MESH (fileName, meshScale: its convex hull, its triangles
    with flags GEOM_FORCE_CONCAVE_TRIMESH; other flags ignored); collisionFrame*: the shape's
    placement in the (URDF) link frame of the link it is attached to, as PyBullet.
    GEOM_HEIGHTFIELD (heightfieldData and the other heightfield arguments) is refused with
    p.error; the heightfield arguments are ignored with other shapes (as PyBullet)."""
    from sim_node.model.urdf import GeometryElement
    client = get_client(physicsClientId)
    fn = "createCollisionShape"
    if vertices is not None or indices is not None:
        raise error(f"{fn}: meshes from vertices / indices are not supported by sim_node yet; "
                    "give a fileName")
    concave = bool(_flag_int(flags, fn, "flags") & GEOM_FORCE_CONCAVE_TRIMESH)
    shape, dims, name = _geometry(fn, shapeType, radius, halfExtents, height, fileName,
                                  meshScale, planeNormal, client, concave=concave)
    origin = _frame(collisionFramePosition, collisionFrameOrientation, fn, "collisionFrame")
    spec = ShapeSpec([GeometryElement(origin, shape)], [(int(shapeType), dims, name)])
    shapes = _shapes(client, "collision")
    sid = _new_shape_id(shapes)
    shapes[sid] = spec
    return sid


def createCollisionShapeArray(shapeTypes, radii=None, halfExtents=None, lengths=None,
                              fileNames=None, meshScales=None, planeNormals=None, flags=None,
                              collisionFramePositions=None, collisionFrameOrientations=None,
                              physicsClientId=0) -> int:
    """One collision shape of several parts (lists of one entry per part)."""
    return _shape_array("createCollisionShapeArray", "collision", physicsClientId, shapeTypes,
                        radii, halfExtents, lengths, fileNames, meshScales, planeNormals, flags,
                        collisionFramePositions, collisionFrameOrientations)


def createVisualShape(shapeType, radius=0.5, halfExtents=(1.0, 1.0, 1.0), length=1.0,
                      fileName="", meshScale=(1.0, 1.0, 1.0), planeNormal=(0.0, 0.0, 1.0),
                      flags=0, rgbaColor=None, specularColor=None, visualFramePosition=None,
                      visualFrameOrientation=None, vertices=None, indices=None, normals=None,
                      uvs=None, physicsClientId=0) -> int:
    """A visual shape for createMultiBody (kept for getVisualShapeData and the renderer); its
    id (0, 1, ... per client, counted apart from collision shapes as in PyBullet)."""
    from sim_node.model.urdf import GeometryElement
    client = get_client(physicsClientId)
    fn = "createVisualShape"
    if vertices is not None or indices is not None:
        raise error(f"{fn}: meshes from vertices / indices are not supported by sim_node yet; "
                    "give a fileName")
    shape, dims, name = _geometry(fn, shapeType, radius, halfExtents, length, fileName,
                                  meshScale, planeNormal, client)
    color = (1.0, 1.0, 1.0, 1.0) if rgbaColor is None else tuple(
        float(x) for x in finite_vector(rgbaColor, 4, fn, "rgbaColor"))
    origin = _frame(visualFramePosition, visualFrameOrientation, fn, "visualFrame")
    element = GeometryElement(origin, shape, color=color)
    shapes = _shapes(client, "visual")
    sid = len(shapes)
    shapes[sid] = ShapeSpec([element], [(int(shapeType), dims, name)], [color])
    return sid


def createVisualShapeArray(shapeTypes, radii=None, halfExtents=None, lengths=None,
                           fileNames=None, meshScales=None, planeNormals=None, flags=None,
                           rgbaColors=None, visualFramePositions=None,
                           visualFrameOrientations=None, physicsClientId=0) -> int:
    """One visual shape of several parts (lists of one entry per part, as createVisualShape's
    arguments; planeNormals for GEOM_PLANE parts). flags: one VISUAL_SHAPE_* render option per
    part (a list, as PyBullet 3.2.7), checked and ignored, as createVisualShape's."""
    return _shape_array("createVisualShapeArray", "visual", physicsClientId, shapeTypes, radii,
                        halfExtents, lengths, fileNames, meshScales, planeNormals, flags,
                        visualFramePositions, visualFrameOrientations, rgbaColors)


def _shape_array(fn, kind, physicsClientId, shapeTypes, radii, halfExtents, lengths, fileNames,
                 meshScales, planeNormals, flags, framePositions, frameOrientations,
                 rgbaColors=None) -> int:
    """create{Collision,Visual}ShapeArray: the parts (one entry of each list per part; a list
    left None takes createCollisionShape's default), validated whole, as one new shape of the
    client's `kind` ("collision" or "visual": visual parts carry a colour); its id."""
    from sim_node.model.urdf import GeometryElement
    client = get_client(physicsClientId)
    shapeTypes = _sequence(shapeTypes, fn, "shapeTypes")
    if not shapeTypes:
        raise error(f"{fn}: shapeTypes must be a non-empty list")
    n = len(shapeTypes)
    frame = f"{kind}Frame"

    def entry(values, i, default, what):
        if values is None:
            return default
        return _sequence(values, fn, what, n)[i]
    concave = [bool(_flag_int(entry(flags, i, 0, "flags"), fn, f"flags[{i}]")
                    & GEOM_FORCE_CONCAVE_TRIMESH) for i in range(n)]
    elements, described, colors = [], [], []
    for i, shape_type in enumerate(shapeTypes):
        shape, dims, name = _geometry(
            fn, shape_type, entry(radii, i, 0.5, "radii"),
            entry(halfExtents, i, (1, 1, 1), "halfExtents"), entry(lengths, i, 1.0, "lengths"),
            entry(fileNames, i, "", "fileNames"), entry(meshScales, i, (1, 1, 1), "meshScales"),
            entry(planeNormals, i, (0, 0, 1), "planeNormals"), client, f"[{i}]",
            concave[i] and kind == "collision")
        color = None
        if kind == "visual":
            color = entry(rgbaColors, i, None, "rgbaColors")
            color = (1.0, 1.0, 1.0, 1.0) if color is None else tuple(
                float(x) for x in finite_vector(color, 4, fn, f"rgbaColors[{i}]"))
            colors.append(color)
        origin = _frame(entry(framePositions, i, None, f"{frame}Positions"),
                        entry(frameOrientations, i, None, f"{frame}Orientations"), fn, frame)
        elements.append(GeometryElement(origin, shape, color=color))
        described.append((int(shape_type), dims, name))
    shapes = _shapes(client, kind)
    sid = _new_shape_id(shapes)
    shapes[sid] = ShapeSpec(elements, described, colors or None)
    return sid


def _bullet_inertia(spec, mass: float, base: bool) -> np.ndarray:
    """The local inertia diagonal PyBullet 3.2.7's createMultiBody gives a shape (measured): the
    box of the shape's bounding box, except a lone cylinder on the base (exact); no shape:
    (mass, mass, mass)."""
    if spec is None or not spec.elements:
        return np.full(3, mass)
    if base and len(spec.elements) == 1:
        shape = spec.elements[0].shape
        if isinstance(shape, geo.Cylinder):
            r, h = shape.radius, shape.length
            side = mass * (3 * r * r + h * h) / 12.0
            return np.array([side, side, mass * r * r / 2.0])
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for element in spec.elements:
        for corner in _corners(element):
            lo, hi = np.minimum(lo, corner), np.maximum(hi, corner)
    if not np.all(np.isfinite(lo)):
        return np.zeros(3)          # (a plane: static in practice)
    x, y, z = hi - lo
    return mass / 12.0 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])


def _corners(element):
    """Points whose box is the element's bounding box in its link frame, as Bullet bounds it (a
    sphere by its centre +- radius, whatever its orientation)."""
    shape, R, p_ = element.shape, element.origin.R, element.origin.p
    if isinstance(shape, geo.Sphere):
        return [np.asarray(p_, dtype=float) - shape.radius,
                np.asarray(p_, dtype=float) + shape.radius]
    if isinstance(shape, geo.Box):
        half = np.asarray(shape.size) / 2
    elif isinstance(shape, geo.Cylinder):
        half = np.array([shape.radius, shape.radius, shape.length / 2])
    elif isinstance(shape, geo.Capsule):
        half = np.array([shape.radius, shape.radius, shape.length / 2 + shape.radius])
    elif isinstance(shape, geo.Mesh) and shape.vertices is not None and len(shape.vertices):
        return [p_ + R @ v for v in np.asarray(shape.vertices)]
    else:
        return [np.full(3, np.inf)]
    return [p_ + R @ (half * np.array(s)) for s in np.ndindex(2, 2, 2)
            for s in [np.array(s) * 2 - 1]]


def createMultiBody(baseMass=0.0, baseCollisionShapeIndex=-1, baseVisualShapeIndex=-1,
                    basePosition=(0.0, 0.0, 0.0), baseOrientation=(0.0, 0.0, 0.0, 1.0),
                    baseInertialFramePosition=None, baseInertialFrameOrientation=None,
                    linkMasses=None, linkCollisionShapeIndices=None,
                    linkVisualShapeIndices=None, linkPositions=None, linkOrientations=None,
                    linkInertialFramePositions=None, linkInertialFrameOrientations=None,
                    linkParentIndices=None, linkJointTypes=None, linkJointAxis=None,
                    useMaximalCoordinates=0, flags=0, batchPositions=None,
                    physicsClientId=0):
    """A body from shapes: a base and links (PyBullet's conventions: basePosition places the
    base's link frame, the inertial frames sit at *InertialFrame* in their link frames,
    linkPositions / linkOrientations place each joint frame in its parent's link frame,
    linkParentIndices count links from 1 with 0 the base, joint axes in the link frame).
    Masses 0 with a static base make a static body. Inertias are Bullet's for the shapes
    (_bullet_inertia). batchPositions: one body per base position; their ids as a tuple."""
    from sim_node.model.inertia_repair import Inertial
    from sim_node.model.urdf import Joint, Link, URDFRobot
    client = get_client(physicsClientId)
    fn = "createMultiBody"
    collision, visual = _shapes(client, "collision"), _shapes(client, "visual")

    def shape(index, table, what):
        k = _flag_int(index, fn, what)
        if k == -1:
            return None
        if k not in table:
            raise error(f"{fn}: {what} {k} is not a shape of this client (have "
                        f"{sorted(table) or 'none'}; -1 for none)")
        return table[k]
    n = 0 if linkMasses is None else len(_sequence(linkMasses, fn, "linkMasses"))
    lists = dict(linkCollisionShapeIndices=linkCollisionShapeIndices,
                 linkVisualShapeIndices=linkVisualShapeIndices, linkPositions=linkPositions,
                 linkOrientations=linkOrientations,
                 linkInertialFramePositions=linkInertialFramePositions,
                 linkInertialFrameOrientations=linkInertialFrameOrientations,
                 linkParentIndices=linkParentIndices, linkJointTypes=linkJointTypes,
                 linkJointAxis=linkJointAxis)
    for name, values in lists.items():
        if n and values is None and name not in ("linkInertialFramePositions",
                                                 "linkInertialFrameOrientations"):
            raise error(f"{fn}: {name} is needed with linkMasses")
        if values is not None:
            _sequence(values, fn, name, n)
    masses = [finite_float(baseMass, fn, "baseMass")]
    masses += [finite_float(m, fn, f"linkMasses[{i}]") for i, m in enumerate(linkMasses or [])]
    if any(m < 0 for m in masses):
        raise error(f"{fn}: masses must be >= 0, got {masses}")
    col = [shape(baseCollisionShapeIndex, collision, "baseCollisionShapeIndex")]
    vis = [shape(baseVisualShapeIndex, visual, "baseVisualShapeIndex")]
    inertial = [_frame(baseInertialFramePosition, baseInertialFrameOrientation, fn,
                       "baseInertialFrame")]
    joints = []
    for i in range(n):
        col.append(shape(linkCollisionShapeIndices[i], collision,
                         f"linkCollisionShapeIndices[{i}]"))
        vis.append(shape(linkVisualShapeIndices[i], visual, f"linkVisualShapeIndices[{i}]"))
        inertial.append(_frame(None if linkInertialFramePositions is None
                               else linkInertialFramePositions[i],
                               None if linkInertialFrameOrientations is None
                               else linkInertialFrameOrientations[i], fn,
                               f"linkInertialFrame[{i}]"))
        parent = _flag_int(linkParentIndices[i], fn, f"linkParentIndices[{i}]")
        if not 0 <= parent <= i:
            raise error(f"{fn}: linkParentIndices[{i}] must be in [0, {i}] (0: the base, k: "
                        f"link k - 1, an earlier link), got {parent}")
        kind = _flag_int(linkJointTypes[i], fn, f"linkJointTypes[{i}]")
        if kind not in _JOINT_URDF:
            raise error(f"{fn}: linkJointTypes[{i}] must be JOINT_REVOLUTE, JOINT_PRISMATIC, "
                        f"JOINT_SPHERICAL or JOINT_FIXED, got {kind}")
        axis = finite_vector(linkJointAxis[i], 3, fn, f"linkJointAxis[{i}]")
        if kind in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            norm = np.linalg.norm(axis)
            if norm < 1e-9:
                raise error(f"{fn}: linkJointAxis[{i}] must not be zero")
            axis = axis / norm
        origin = _frame(linkPositions[i], linkOrientations[i], fn, f"link[{i}]")
        joints.append((parent, kind, axis, origin))
    positions = [basePosition] if batchPositions is None else _sequence(batchPositions, fn,
                                                                       "batchPositions")
    if not positions:
        raise error(f"{fn}: batchPositions must not be empty")
    positions = [finite_vector(x, 3, fn, "basePosition") for x in positions]
    orientation = unit_quaternion(baseOrientation, fn, "baseOrientation")
    maximal = _flag_int(useMaximalCoordinates, fn, "useMaximalCoordinates")
    _flag_int(flags, fn, "flags")
    # -- the robot's description
    names = [f"link{i}" for i in range(n + 1)]
    links = {}
    for i in range(n + 1):
        mass = masses[i]
        frame = inertial[i]
        diagonal = _bullet_inertia(col[i], mass, base=i == 0)
        link_inertial = None
        if mass > 0:
            link_inertial = Inertial(mass, np.asarray(frame.p, dtype=float),
                                     frame.R @ np.diag(diagonal) @ frame.R.T)
        # a link without a visual shape shows its collision shape, in white, as PyBullet
        visuals = vis[i].elements if vis[i] else [replace(e, color=(1.0, 1.0, 1.0, 1.0))
                                                  for e in (col[i].elements if col[i] else [])]
        links[names[i]] = Link(names[i], link_inertial, tuple(visuals),
                               tuple(col[i].elements) if col[i] else ())
    urdf_joints = {}
    for i, (parent, kind, axis, origin) in enumerate(joints):
        name = f"joint{i + 1}"
        urdf_joints[name] = Joint(name, _JOINT_URDF[kind], names[parent], names[i + 1],
                                  origin, axis, None, 0.0, 0.0, None)
    urdf = URDFRobot(name="", links=links, joints=urdf_joints, root=names[0],
                     source="<createMultiBody>")
    frames = [(np.asarray(f.p, dtype=float), np.asarray(f.R)) for f in inertial]
    x, y, z, w = orientation
    R = quat2mat([w, x, y, z])
    uids = []
    for position in positions:
        try:
            robot = client.world.makeRobot(urdf, None, R=R, t=position)
        except (ModelLoadError, ValueError) as e:
            raise error(f"{fn}: {e}") from None
        uids.append(client.add_body(robot, name=b"", inertial_frames=frames, created=True,
                                    shapes=(col, vis), maximal_coordinates=bool(maximal)))
    return uids[0] if batchPositions is None else tuple(uids)


def _describe(shape) -> tuple:
    """(PyBullet geometry type, dimensions, file name bytes) of one of our shapes."""
    if isinstance(shape, geo.Sphere):
        return GEOM_SPHERE, (shape.radius,) * 3, b""
    if isinstance(shape, geo.Box):
        return GEOM_BOX, tuple(float(x) for x in shape.size), b""
    if isinstance(shape, geo.Cylinder):
        return GEOM_CYLINDER, (shape.length, shape.radius, 0.0), b""
    if isinstance(shape, geo.Capsule):
        return GEOM_CAPSULE, (shape.length, shape.radius, 0.0), b""
    if isinstance(shape, geo.Plane):
        return GEOM_PLANE, (0.0, 0.0, 1.0), b""
    if isinstance(shape, geo.Mesh):
        return GEOM_MESH, tuple(float(x) for x in shape.scale), shape.path.encode()
    return GEOM_HEIGHTFIELD, (0.0, 0.0, 0.0), b""


def getVisualShapeData(objectUniqueId, flags=0, physicsClientId=0) -> tuple:
    """One tuple per visual element of every link (base first): (objectUniqueId, linkIndex,
    visualGeometryType, dimensions, meshAssetFileName, localVisualFramePosition,
    localVisualFrameOrientation, rgbaColor), the frame in the link's (URDF) frame. Elements
    without a colour read (1, 1, 1, 1); changeVisualShape's colours win."""
    body = get_client(physicsClientId).body(objectUniqueId)
    colors = body.info.get("visual_colors", {})
    out = []
    for link in range(-1, body.num_joints):
        for k, element in enumerate(body.link(link).getVisualGeometry()):
            kind, dims, name = _describe(element.shape)
            color = colors.get((link, k), colors.get((link, -1), element.color))
            out.append((body.uid, link, kind, dims, name, vec(element.origin.p),
                        xyzw(element.origin.R),
                        tuple(float(c) for c in (color or (1.0, 1.0, 1.0, 1.0)))))
    return tuple(out)


def getCollisionShapeData(objectUniqueId, linkIndex, physicsClientId=0) -> tuple:
    """One tuple per collision element of the link: (objectUniqueId, linkIndex, geometryType,
    dimensions, fileName, localCollisionFramePosition, localCollisionFrameOrientation), the
    frame in the link's inertial (COM) frame as PyBullet."""
    body = get_client(physicsClientId).body(objectUniqueId)
    link = body.check_link(linkIndex, "getCollisionShapeData")
    p_lc, R_lc = body.inertial_frames[body.robot_link(link)]
    out = []
    for element in body.link(link).getCollisionGeometry():
        kind, dims, name = _describe(element.shape)
        R = R_lc.T @ element.origin.R
        p_ = R_lc.T @ (np.asarray(element.origin.p) - p_lc)
        out.append((body.uid, link, kind, dims, name, vec(p_), xyzw(R)))
    return tuple(out)


def changeVisualShape(objectUniqueId, linkIndex, shapeIndex=-1, textureUniqueId=None,
                      rgbaColor=None, specularColor=None, flags=0, physicsClientId=0):
    """The colour of a link's visual elements (shapeIndex -1: all of them), as
    getVisualShapeData and the renderer read it (Body.info['visual_colors'][(link, k)]).
    Textures and specular colours are accepted and ignored with a one-time warning."""
    client = get_client(physicsClientId)
    body = client.body(objectUniqueId)
    fn = "changeVisualShape"
    link = body.check_link(linkIndex, fn)
    k = _flag_int(shapeIndex, fn, "shapeIndex")
    count = len(body.link(link).getVisualGeometry())
    if not -1 <= k < count:
        raise error(f"{fn}: shapeIndex {k} out of range (link {link} has {count} visual "
                    "shapes; -1: all)")
    color = None if rgbaColor is None else tuple(
        float(x) for x in finite_vector(rgbaColor, 4, fn, "rgbaColor"))
    if color is not None and not all(0.0 <= c <= 1.0 for c in color):
        raise error(f"{fn}: rgbaColor entries must be in [0, 1], got {color}")
    if specularColor is not None:
        finite_vector(specularColor, 3, fn, "specularColor")
    if textureUniqueId is not None or specularColor is not None:
        warn_once(client, "changeVisualShape:texture", f"{fn}: textures and specular colours "
                  "are accepted and ignored by sim_node")
    if color is not None:
        colors = body.info.setdefault("visual_colors", {})
        if k == -1:
            for i in range(count):
                colors[(link, i)] = color
        else:
            colors[(link, k)] = color
