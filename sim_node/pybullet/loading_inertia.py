"""PyBullet 3.2.7's mass and inertia of a URDF link (loadURDF), reproduced.

Bullet's URDF importer (bullet3 examples/Importers/ImportURDFDemo: URDF2Bullet.cpp
ConvertURDF2BulletInternal, BulletUrdfImporter.cpp getMassAndInertia(2) and
convertLinkCollisionShapes) gives each link:

* mass: the file's <mass>; 1 kg (and a unit inertia tensor) for a link without <inertial>,
  except 0 for a link named "world"; 0 for the base with useFixedBase (and then no inertia).
* inertial frame: the <inertial><origin> (identity without <inertial>).
* inertia diagonal in that frame:
  - without URDF_USE_INERTIA_FROM_FILE (the default), the file's <inertia> is ignored: a link
    with mass gets ``calculateLocalInertia`` of its collision shape, a btCompoundShape (margin
    1 mm) holding each <collision> placed in the inertial frame. A compound's inertia is that of
    the solid box filling its bounding box (the children's boxes, grown by the margin); but when
    the link has exactly one collision placed exactly at the inertial frame, that shape's own
    rule applies (box, sphere: exact; capsule: its bounding box; cylinder and meshes: convex
    hulls, their bounding box grown by 3 margins; a concave mesh: zero).
  - with the flag, the file's tensor turned to its principal axes by Bullet's Jacobi
    iteration (btMatrix3x3::diagonalize, which fixes the axes' order and signs: the inertial
    frame turns with it), or zero when the principal moments break the triangle inequality.
  - then times <contact><inertia_scaling> when the link has mass.

Bounding boxes of the children, in the compound's (inertial) frame, as Bullet computes them
(c: the child's centre, R its rotation, |R| the element-wise absolute value):
box c ± |R| h; sphere c ± r; capsule c ± |R| (r, r, r + l/2); convex hull (cylinders: 32
vertices on each cap; STL / COLLADA meshes) c + R c_v ± |R| (h_v + 2 margins), c_v / h_v the
centre / half size of the vertices' box; an OBJ mesh is a compound of hulls itself: one more
margin; a concave mesh (<collision concave="yes">) c + R c_v ± |R| h_v. Vertices are read as
float32, as Bullet's mesh readers do.
"""
from __future__ import annotations

import math
import os

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat

from sim_node.model import geometry as geo

__all__: list = []      # (internal module: nothing for ``import sim_node.pybullet as p``)

MARGIN = 0.001                  # [m] gUrdfDefaultCollisionMargin: every importer shape's margin
DOUBLE_EPSILON = np.finfo(float).eps    # SIMD_EPSILON of Bullet's double-precision build
JACOBI_THRESHOLD, JACOBI_STEPS = 1.0e-6, 30     # getMassAndInertia's diagonalize arguments
CYLINDER_HULL_STEPS = 32        # vertices on each cap of the importer's cylinder hull
LARGE = 1e30                    # BT_LARGE_FLOAT: a plane's bounding box
HULL_GRID = 10216               # btConvexHullInternal::compute's integer grid across a box


class LinkInertia:
    """One link as Bullet's importer makes it: mass [kg], inertial frame (p_LC (3,) [m],
    R_LC (3, 3)) in the URDF link frame, and the inertia diagonal [kg m^2] in that frame."""

    __slots__ = ("mass", "p", "R", "diagonal")

    def __init__(self, mass, p, R, diagonal):
        self.mass, self.p, self.R, self.diagonal = float(mass), p, R, diagonal

    def tensor(self) -> np.ndarray:
        """The inertia about the COM in the link axes, (3, 3) [kg m^2]."""
        return self.R @ np.diag(self.diagonal) @ self.R.T


def link_inertias(urdf, *, from_file: bool, fixed_base: bool, scale: float = 1.0) -> dict:
    """{link name: LinkInertia} for every link of `urdf` (a URDFRobot whose geometry is already
    scaled by `scale`, PyBullet's globalScaling; its .xml the file as written). from_file:
    URDF_USE_INERTIA_FROM_FILE; fixed_base: useFixedBase."""
    written = _written_inertials(urdf.xml)
    concave = _concave_collisions(urdf.xml)
    out = {}
    for name, link in urdf.links.items():
        raw = written.get(name)
        if raw is None:
            # Bullet's parser: "No inertial data for link, using mass=1, localinertiadiagonal =
            # 1,1,1", except for a link named "world" (mass 0)
            unit = 0.0 if name == "world" else 1.0
            mass, p, R, tensor, scaling = unit, np.zeros(3), np.eye(3), np.eye(3) * unit, None
        else:
            mass, p, R, tensor, scaling = raw
            p = p * scale               # (the parser scales origins, not inertias)
        if name == urdf.root and fixed_base:
            out[name] = LinkInertia(0.0, p, R, np.zeros(3))
            continue
        if from_file:
            basis, diagonal = principal_axes(tensor)
            if not _triangle(diagonal):     # "Bad inertia tensor properties"
                basis, diagonal = np.eye(3), np.zeros(3)
            R = R @ basis
        elif mass != 0.0:
            flags = concave.get(name, ())
            collisions = [(e, len(flags) == len(link.collisions) and flags[i])
                          for i, e in enumerate(link.collisions)]
            diagonal = shape_inertia(collisions, p, R, mass)
        else:
            diagonal = np.zeros(3)
        if mass != 0.0 and scaling is not None:
            diagonal = diagonal * scaling
        out[name] = LinkInertia(mass, p, R, diagonal)
    return out


def _triangle(d) -> bool:
    x, y, z = d
    return not (x < 0 or x > y + z or y < 0 or y > x + z or z < 0 or z > x + y)


# -- the file's <inertial> as Bullet's parser reads it ----------------------------------------
def _written_inertials(xml: str) -> dict:
    """{link: (mass, p (3,), R (3, 3), tensor (3, 3), inertia_scaling or None)} of the links
    with an <inertial>."""
    try:
        root = etree.fromstring(xml.encode("utf-8")) if xml else None
    except etree.XMLSyntaxError:
        root = None
    out = {}
    if root is None:
        return out
    for link_el in root.iter("link"):
        inertial = link_el.find("inertial")
        if inertial is None or link_el.get("name") is None:
            continue
        origin = inertial.find("origin")
        p = _numbers(None if origin is None else origin.get("xyz"), 3)
        rpy = _numbers(None if origin is None else origin.get("rpy"), 3)
        mass_el = inertial.find("mass")
        mass = _number(None if mass_el is None else mass_el.get("value"))
        tensor_el = inertial.find("inertia")
        get = (lambda key: 0.0) if tensor_el is None else (
            lambda key: _number(tensor_el.get(key)))
        ixy, ixz, iyz = get("ixy"), get("ixz"), get("iyz")
        tensor = np.array([[get("ixx"), ixy, ixz], [ixy, get("iyy"), iyz],
                           [ixz, iyz, get("izz")]])
        scaling = None
        contact = link_el.find("contact")
        scaling_el = None if contact is None else contact.find("inertia_scaling")
        if scaling_el is not None and scaling_el.get("value") is not None:
            scaling = _number(scaling_el.get("value"))
        out[link_el.get("name")] = (mass, p, euler2mat(*rpy, axes="sxyz"), tensor, scaling)
    return out


def _concave_collisions(xml: str) -> dict:
    """{link: [whether each <collision> has a `concave` attribute (any value: Bullet's parser
    then makes a mesh a concave triangle mesh)]}."""
    try:
        root = etree.fromstring(xml.encode("utf-8")) if xml else None
    except etree.XMLSyntaxError:
        return {}
    if root is None:
        return {}
    return {link_el.get("name"): [c.get("concave") is not None
                                  for c in link_el.findall("collision")]
            for link_el in root.iter("link")}


def _number(text) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) else 0.0


def _numbers(text, n) -> np.ndarray:
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        values = []
    if len(values) < n or not all(math.isfinite(x) for x in values[:n]):
        return np.zeros(n)
    return np.array(values[:n])


# -- URDF_USE_INERTIA_FROM_FILE: Bullet's Jacobi diagonalisation ------------------------------
def principal_axes(tensor) -> tuple:
    """(basis (3, 3), principal moments (3,)) of a symmetric tensor as
    btMatrix3x3::diagonalize(rot, 1e-6, 30) gives them: tensor = basis diag(moments) basis^T,
    the moments in the order the Jacobi rotations leave them. A diagonal tensor is kept as is
    (Bullet skips the iteration when the products of inertia are all zero)."""
    m = [[float(x) for x in row] for row in np.asarray(tensor)]
    rot = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    if m[0][1] == 0.0 and m[0][2] == 0.0 and m[1][2] == 0.0:
        return np.eye(3), np.array([m[0][0], m[1][1], m[2][2]])
    step = JACOBI_STEPS
    while step > 0:
        # the off-diagonal element of largest magnitude: [p][q], r the remaining index
        p, q, r = 0, 1, 2
        largest = abs(m[0][1])
        if abs(m[0][2]) > largest:
            q, r, largest = 2, 1, abs(m[0][2])
        if abs(m[1][2]) > largest:
            p, q, r, largest = 1, 2, 0, abs(m[1][2])
        t = JACOBI_THRESHOLD * (abs(m[0][0]) + abs(m[1][1]) + abs(m[2][2]))
        if largest <= t:
            if largest <= DOUBLE_EPSILON * t:
                break
            step = 1
        # the Jacobi rotation that zeroes [p][q]
        mpq = m[p][q]
        theta = (m[q][q] - m[p][p]) / (2 * mpq)
        theta2 = theta * theta
        if theta2 * theta2 < 10 / DOUBLE_EPSILON:
            t = 1 / (theta + math.sqrt(1 + theta2)) if theta >= 0 else \
                1 / (theta - math.sqrt(1 + theta2))
            cos = 1 / math.sqrt(1 + t * t)
        else:       # (nearly diagonal)
            t = 1 / (theta * (2 + 0.5 / theta2))
            cos = 1 - 0.5 * t * t
        sin = cos * t
        m[p][q] = m[q][p] = 0.0
        m[p][p] -= t * mpq
        m[q][q] += t * mpq
        mrp, mrq = m[r][p], m[r][q]
        m[r][p] = m[p][r] = cos * mrp - sin * mrq
        m[r][q] = m[q][r] = cos * mrq + sin * mrp
        for row in rot:
            mrp, mrq = row[p], row[q]
            row[p] = cos * mrp - sin * mrq
            row[q] = cos * mrq + sin * mrp
        step -= 1
    return np.array(rot), np.array([m[0][0], m[1][1], m[2][2]])


# -- the default: the collision compound's inertia ---------------------------------------------
def shape_inertia(collisions, p_LC, R_LC, mass: float) -> np.ndarray:
    """btCollisionShape::calculateLocalInertia of a link's collision shape in its inertial
    frame (p_LC, R_LC): (3,) [kg m^2]. collisions: [(GeometryElement (origin in the link frame),
    concave: a mesh to be read as a concave triangle mesh)]."""
    placed = []
    for element, concave in collisions:
        R = R_LC.T @ element.origin.R
        c = R_LC.T @ np.asarray(element.origin.p, dtype=float) - R_LC.T @ p_LC
        placed.append((element.shape, bool(concave), R, c))
    if len(placed) == 1:
        shape, concave, R, c = placed[0]
        if np.array_equal(R, np.eye(3)) and not np.any(c):
            return _lone_shape_inertia(shape, concave, mass)
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for shape, concave, R, c in placed:
        box = _child_box(shape, concave, R, c)
        if box is not None:
            lo, hi = np.minimum(lo, box[0]), np.maximum(hi, box[1])
    if not np.all(np.isfinite(lo)):
        lo, hi = np.zeros(3), np.zeros(3)       # an empty compound: its margin only
    return _box_inertia(mass, hi - lo + 2 * MARGIN)


def _box_inertia(mass, size) -> np.ndarray:
    x2, y2, z2 = np.asarray(size, dtype=float) ** 2
    return mass / 12.0 * np.array([y2 + z2, x2 + z2, x2 + y2])


def _lone_shape_inertia(shape, concave, mass) -> np.ndarray:
    """A link's only shape, at its inertial frame: the shape's own calculateLocalInertia."""
    if isinstance(shape, geo.Box):
        return _box_inertia(mass, shape.size)
    if isinstance(shape, geo.Sphere):
        return np.full(3, 0.4 * mass * shape.radius ** 2)
    if isinstance(shape, geo.Capsule):
        r = shape.radius
        return _box_inertia(mass, (2 * r, 2 * r, 2 * r + shape.length))
    if isinstance(shape, geo.Mesh) and concave:
        return np.zeros(3)              # btBvhTriangleMeshShape: no inertia
    if isinstance(shape, (geo.Plane, geo.Heightfield)):
        return np.zeros(3)              # btStaticPlaneShape: no inertia
    box = _child_box(shape, False, np.eye(3), np.zeros(3))
    if box is None:
        return _box_inertia(mass, np.full(3, 2 * MARGIN))
    # a convex hull: the box of its bounding box grown by one more margin
    # (btPolyhedralConvexShape); an OBJ's compound of hulls: its bounding box
    grow = 0.0 if isinstance(shape, geo.Mesh) and _is_obj(shape) else 2 * MARGIN
    return _box_inertia(mass, box[1] - box[0] + grow)


def _child_box(shape, concave, R, c):
    """(lo, hi) of one child's bounding box in the compound frame, or None (no child: a mesh
    Bullet cannot read)."""
    absR = np.abs(R)
    if isinstance(shape, geo.Box):
        half = absR @ (np.asarray(shape.size, dtype=float) / 2)
        return c - half, c + half
    if isinstance(shape, geo.Sphere):
        return c - shape.radius, c + shape.radius
    if isinstance(shape, geo.Capsule):
        r = shape.radius
        half = absR @ np.array([r, r, r + shape.length / 2])
        return c - half, c + half
    if isinstance(shape, geo.Cylinder):
        centre, half = np.zeros(3), _cylinder_hull_half(shape)
        grow = 2 * MARGIN
    elif isinstance(shape, geo.Mesh):
        vertices = bullet_mesh_vertices(shape)
        if vertices is None:
            return None
        # a vertex with a NaN coordinate never wins Bullet's support search, which starts
        # from the origin (random_urdfs/168's vertices are all NaN)
        vertices = vertices[np.all(np.isfinite(vertices), axis=1)]
        if not len(vertices):
            vertices = np.zeros((1, 3))
        lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        if not concave and not _is_obj(shape):
            lo, hi = hull_box(lo, hi)
        centre, half = (lo + hi) / 2, (hi - lo) / 2
        grow = 0.0 if concave else 3 * MARGIN if _is_obj(shape) else 2 * MARGIN
    else:                               # a plane: Bullet's "infinite" box
        return np.full(3, -LARGE), np.full(3, LARGE)
    middle = c + R @ centre
    half = absR @ (half + grow)
    return middle - half, middle + half


def hull_box(lo, hi) -> tuple:
    """(lo, hi) of the vertices of btConvexHullShape::optimizeConvexHull's hull of points whose
    box is (lo, hi): btConvexHullComputer snaps every point to a grid of 10216 steps across the
    box along each axis (rounding toward the centre) and returns the snapped hull vertices, and
    the importer boxes those (STL and COLLADA meshes; an OBJ's hulls keep the box of the points
    as read)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    step = (hi - lo) / HULL_GRID
    centre = (lo + hi) * 0.5
    out = []
    for x in (lo, hi):
        snapped = np.zeros(3)
        for k in range(3):
            inverse = 1.0 / step[k] if step[k] != 0.0 else 0.0
            if math.isfinite(inverse) and inverse != 0.0:
                snapped[k] = math.trunc((x[k] - centre[k]) * inverse) * step[k]
            else:   # a box thinner than ~1e-300 m (1 / step overflows): nothing to snap
                snapped[k] = x[k] - centre[k]
        out.append(snapped + centre)
    return out[0], out[1]


def _cylinder_hull_half(shape) -> np.ndarray:
    """Half size of the box of the importer's cylinder hull (32 vertices on each cap, the
    first at +y): the radius along x and y, half the length along z."""
    angles = 2 * np.pi * (np.arange(CYLINDER_HULL_STEPS, dtype=np.float32)
                          / np.float32(CYLINDER_HULL_STEPS)).astype(float)
    x, y = shape.radius * np.sin(angles), shape.radius * np.cos(angles)
    return np.array([(x.max() - x.min()) / 2, (y.max() - y.min()) / 2, shape.length / 2])


def _is_obj(shape) -> bool:
    return os.path.splitext(shape.path)[1].lower() == ".obj"


def bullet_mesh_vertices(mesh):
    """The mesh's vertices as Bullet's importer holds them: those of its triangles, read as
    float32 and then scaled (in double); None for a file type Bullet does not read."""
    if os.path.splitext(mesh.path)[1].lower() not in (".obj", ".stl", ".dae"):
        return None
    try:
        raw = geo.load_mesh(mesh.path)
    except (OSError, geo.MeshLoadError, ValueError):
        return None
    used = raw.vertices[np.unique(raw.faces)] if raw.faces is not None else raw.vertices
    if not len(used):
        return None
    used = used.astype(np.float32).astype(float)
    if mesh.path.lower().endswith(".dae"):
        used = used * _collada_unit(mesh.path)
    return used * np.asarray(mesh.scale, dtype=float)


def _collada_unit(path: str) -> float:
    """A COLLADA file's <asset><unit meter>: Bullet's reader scales the vertices by it."""
    try:
        root = etree.parse(path).getroot()
    except (OSError, etree.XMLSyntaxError):
        return 1.0
    for unit in root.iter("{*}unit"):
        meter = _number(unit.get("meter"))
        return meter if meter > 0 else 1.0
    return 1.0
