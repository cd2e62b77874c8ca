"""Geometry3D and GeometricPrimitive: Klamp't's geometry container on our shapes, with its
proximity queries answered by the engine (sim_node.engine.api: the Scene's closest points and
ray casts, the same code the simulator's queries run).

A Geometry3D holds shapes in its own frame (a primitive, a triangle mesh, a heightfield, or a
group of Geometry3D elements placed by their current transforms) and a *current transform*
(R, t) placing that frame in the world; queries act on the placed shapes, as in Klamp't.
``transform``/``translate``/``rotate``/``scale`` change the shapes themselves.

Query semantics (each a one-off engine Scene of the geometries involved):
  * distance(other) / distance_point(p): signed distance [m] (negative: penetration depth) for
    primitives (GJK/EPA), distance to the surface for triangle meshes (a mesh is a surface, as
    Klamp't's "surface only" meshes), minus both collision margins; cp1 on this geometry, cp2
    on the other (or the point), world coordinates.
  * collides(other): distance <= 0; withinDistance(other, tol): distance <= tol.
  * rayCast(s, d): the first surface entered along the ray from s in direction d (engine rules,
    sim_node.engine.queries.raycast: a ray starting inside a solid does not hit it);
    rayCast_ext returns the element hit: the triangle of a mesh, the element of a group, 0 for
    a primitive.
Types: "" (empty), "Primitive", "TriangleMesh", "Heightmap", "Group". Klamp't's point clouds,
implicit surfaces, occupancy grids and convex hulls are not provided.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from sim_node.math.rotation_input import as_matrix
from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError
from sim_node.model.settings import BodySettings, SimulationParameters
from sim_node.model.urdf import GeometryElement, Origin

RAY_LENGTH = 1e5        # [m] how far rayCast looks (and |s| at most), as WorldCollider


class DistanceQueryResult:
    """Klamp't's DistanceQueryResult: d [m], hasClosestPoints, cp1, cp2 (world points),
    hasGradients, grad1, grad2 (unit direction increasing the distance, at cp1 / cp2),
    elem1, elem2 (element indices)."""

    def __init__(self, d, cp1=None, cp2=None, grad1=None, grad2=None, elem1=0, elem2=0):
        self.d = float(d)
        self.hasClosestPoints = cp1 is not None
        self.cp1 = [] if cp1 is None else [float(x) for x in cp1]
        self.cp2 = [] if cp2 is None else [float(x) for x in cp2]
        self.hasGradients = grad1 is not None
        self.grad1 = [] if grad1 is None else [float(x) for x in grad1]
        self.grad2 = [] if grad2 is None else [float(x) for x in grad2]
        self.elem1, self.elem2 = int(elem1), int(elem2)

    def __repr__(self):
        return f"DistanceQueryResult(d={self.d:g}, cp1={self.cp1}, cp2={self.cp2})"


class GeometricPrimitive:
    """Klamp't's GeometricPrimitive for the solids we collide: sphere, AABB, box."""

    def __init__(self, other: "GeometricPrimitive | None" = None):
        self._type, self._element, self._properties = "", None, []
        if other is not None:
            self.set(other)

    def copy(self) -> "GeometricPrimitive":
        return GeometricPrimitive(self)

    def set(self, other: "GeometricPrimitive"):
        self._type, self._element, self._properties = (other._type, other._element,
                                                        list(other._properties))

    def setSphere(self, c, r: float):
        c = _vec3(c, "setSphere: c")
        r = _number(r, "setSphere: r")
        if r <= 0:
            raise ValueError(f"setSphere: the radius must be positive, got {r}")
        self._set("Sphere", GeometryElement(Origin(p=c), geo.Sphere(r)), [*c, r])

    def setAABB(self, bmin, bmax):
        lo, hi = _vec3(bmin, "setAABB: bmin"), _vec3(bmax, "setAABB: bmax")
        if np.any(hi <= lo):
            raise ValueError(f"setAABB: bmax {hi.tolist()} must exceed bmin {lo.tolist()} on "
                             "every axis")
        self._set("AABB", GeometryElement(Origin(p=(lo + hi) / 2), geo.Box(tuple(hi - lo))),
                  [*lo, *hi])

    def setBox(self, ori, R, dims):
        """The box {ori + R u : 0 <= u <= dims} (Klamp't's: ori a corner, R its axes)."""
        ori = _vec3(ori, "setBox: ori")
        R = as_matrix(R, "setBox: R")
        dims = _vec3(dims, "setBox: dims")
        if np.any(dims <= 0):
            raise ValueError(f"setBox: dims must be positive, got {dims.tolist()}")
        self._set("Box", GeometryElement(Origin(R=R, p=ori + R @ (dims / 2)), geo.Box(tuple(dims))),
                  [*ori, *R.T.reshape(9), *dims])

    def getType(self) -> str:
        return self._type

    def getProperties(self) -> list:
        """Sphere: c, r; AABB: bmin, bmax; Box: ori, R (column-major 9), dims."""
        return list(self._properties)

    def _set(self, kind, element, properties):
        self._type, self._element, self._properties = kind, element, properties

    def __repr__(self):
        return f"GeometricPrimitive({self._type or 'empty'})"


class Geometry3D:
    """Klamp't's Geometry3D on our shapes (module docstring)."""

    def __init__(self, arg=None):
        self._kind = ""             # "", "Primitive", "TriangleMesh", "Heightmap", "Group"
        self._elements = ()         # GeometryElement per leaf (non-group kinds: one)
        self._children = []         # Group: the element Geometry3Ds
        self._primitive = None
        self._R, self._t = np.eye(3), np.zeros(3)
        self._margin = 0.0
        self._owner = None          # called with the leaf elements after every content change
        if arg is None:
            return
        if isinstance(arg, Geometry3D):
            self.set(arg)
        elif isinstance(arg, GeometricPrimitive):
            self.setGeometricPrimitive(arg)
        elif isinstance(arg, (str, Path)):
            self.loadFile(arg)
        elif isinstance(arg, GeometryElement):
            self._set_elements((arg,))
        elif isinstance(arg, (geo.Box, geo.Sphere, geo.Cylinder, geo.Capsule, geo.Mesh,
                              geo.Heightfield, geo.Plane)):
            self._set_elements((GeometryElement(Origin(), arg),))
        else:
            raise TypeError(f"Geometry3D: cannot make a geometry of {type(arg).__name__}")

    @classmethod
    def of_elements(cls, elements, R=np.eye(3), t=np.zeros(3)) -> "Geometry3D":
        """The geometry of a link's / body's collision elements (a group when several) placed
        at (R, t)."""
        g = cls()
        elements = tuple(elements)
        if len(elements) == 1:
            g._set_elements(elements)
        elif elements:
            g.setGroup()
            for k, e in enumerate(elements):
                g.setElement(k, cls(e))
        g.setCurrentTransform(R, t)
        return g

    def bind(self, owner):
        """Call owner(elements) with the shapes (GeometryElements in this geometry's frame)
        after every change of the contents (how a body's geometry() writes back)."""
        self._owner = owner

    def _changed(self):
        leaves = self.leaf_elements()
        if self._owner is not None and leaves:     # (an emptied group waits for its elements)
            self._owner(tuple(e for _, e in leaves))

    # -- contents ----------------------------------------------------------------------------
    def type(self) -> str:
        return self._kind

    def empty(self) -> bool:
        return self._kind == ""

    def copy(self) -> "Geometry3D":
        return Geometry3D(self)

    def set(self, other: "Geometry3D"):
        if not isinstance(other, Geometry3D):
            raise TypeError(f"Geometry3D.set expects a Geometry3D, got {type(other).__name__}")
        self._kind, self._elements = other._kind, other._elements
        self._children = [c.copy() for c in other._children]
        self._primitive = other._primitive.copy() if other._primitive else None
        self._R, self._t = other._R.copy(), other._t.copy()
        self._margin = other._margin
        self._changed()

    def setGeometricPrimitive(self, primitive: GeometricPrimitive):
        if not isinstance(primitive, GeometricPrimitive) or primitive._element is None:
            raise ValueError("setGeometricPrimitive expects a GeometricPrimitive that was set "
                             "(setSphere, setAABB or setBox)")
        self._set_elements((primitive._element,))
        self._primitive = primitive.copy()
        self._changed()

    def getGeometricPrimitive(self) -> GeometricPrimitive:
        if self._primitive is None:
            raise ValueError(f"this geometry is not a GeometricPrimitive (type "
                             f"'{self._kind}')")
        return self._primitive.copy()

    def setGroup(self):
        """Make this an empty group (elements added with setElement)."""
        self._kind, self._elements, self._children, self._primitive = "Group", (), [], None

    def numElements(self) -> int:
        """Group: its elements; a mesh: its triangles; otherwise 1 (0 if empty)."""
        if self._kind == "Group":
            return len(self._children)
        if self._kind == "TriangleMesh":
            return len(self._elements[0].shape.faces)
        return 0 if self._kind == "" else 1

    def getElement(self, index: int) -> "Geometry3D":
        """A copy of element `index` of a group; its current transform is its placement in the
        group's frame."""
        if self._kind != "Group":
            raise ValueError(f"getElement needs a Group geometry, this is '{self._kind}'")
        if not 0 <= index < len(self._children):
            raise IndexError(f"element {index} out of range [0, {len(self._children)})")
        return self._children[index].copy()

    def setElement(self, index: int, element: "Geometry3D"):
        """Set (index < numElements) or append (index == numElements) a group element, placed
        in the group's frame by its current transform."""
        if self._kind != "Group":
            raise ValueError(f"setElement needs a Group geometry (setGroup()), this is "
                             f"'{self._kind}'")
        if not isinstance(element, Geometry3D) or element.empty():
            raise ValueError("setElement expects a non-empty Geometry3D")
        if not 0 <= index <= len(self._children):
            raise IndexError(f"element {index} out of range [0, {len(self._children)}]")
        if index == len(self._children):
            self._children.append(element.copy())
        else:
            self._children[index] = element.copy()
        self._changed()

    def loadFile(self, path) -> bool:
        """Load a triangle mesh file (STL, OBJ, DAE, PLY, OFF). Raises ModelLoadError naming
        the file when it is missing or unreadable (nothing changes then)."""
        path = str(path)
        try:
            mesh = geo.load_mesh(path, concave=True)
        except FileNotFoundError:
            raise ModelLoadError(path, "Geometry3D.loadFile", "no such file") from None
        except geo.MeshLoadError as exc:
            raise ModelLoadError(path, "Geometry3D.loadFile", str(exc)) from None
        self._set_elements((GeometryElement(Origin(), mesh),))
        self._changed()
        return True

    def _set_elements(self, elements):
        shape = elements[0].shape
        if isinstance(shape, geo.Mesh):
            kind = "TriangleMesh"
        elif isinstance(shape, geo.Heightfield):
            kind = "Heightmap"
        else:
            kind = "Primitive"
        self._kind, self._elements = kind, tuple(elements)
        self._children, self._primitive = [], None

    def leaf_elements(self) -> list:
        """[(element index, GeometryElement in this geometry's frame)]: the shapes, a group's
        nested elements placed by their transforms (index: the top-level element)."""
        if self._kind != "Group":
            return [(0, e) for e in self._elements]
        leaves = []
        for k, child in enumerate(self._children):
            for _, e in child.leaf_elements():
                R, p = child._R @ e.origin.R, child._R @ e.origin.p + child._t
                leaves.append((k, GeometryElement(Origin(R=R, p=p), e.shape, e.name)))
        return leaves

    # -- placement -------------------------------------------------------------------------
    def setCurrentTransform(self, R, t):
        """Place the geometry's frame in the world: R a rotation (3x3, or Klamp't's column-major
        9-list), t [m]."""
        R = as_matrix(R, "setCurrentTransform: R")
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise ValueError("setCurrentTransform: R is not a rotation matrix")
        self._R, self._t = R, _vec3(t, "setCurrentTransform: t")

    def getCurrentTransform(self):
        """(R (3, 3), t (3,))."""
        return self._R.copy(), self._t.copy()

    def transform(self, R, t):
        """Move the shapes themselves by (R, t) in the geometry's frame."""
        R = as_matrix(R, "transform: R")
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise ValueError("transform: R is not a rotation matrix (use scale() to scale)")
        t = _vec3(t, "transform: t")
        if self._kind == "Group":
            for child in self._children:
                child._R, child._t = R @ child._R, R @ child._t + t
        else:
            self._elements = tuple(GeometryElement(Origin(R=R @ e.origin.R,
                                                          p=R @ e.origin.p + t), e.shape, e.name)
                                   for e in self._elements)
            self._keep_primitive_type()
        self._changed()

    def translate(self, t):
        self.transform(np.eye(3), t)

    def rotate(self, R):
        self.transform(R, np.zeros(3))

    def scale(self, s, sy=None, sz=None):
        """Scale the shapes about the geometry's origin by a factor s > 0 (uniform only)."""
        if sy is not None or sz is not None:
            if not (s == sy == sz):
                raise ValueError("scale: only a uniform scale is supported")
        s = _number(s, "scale")
        if s <= 0:
            raise ValueError(f"scale: the factor must be positive, got {s}")
        if self._kind == "Group":
            for child in self._children:
                child.scale(s)
                child._t = child._t * s
        else:
            self._elements = tuple(GeometryElement(Origin(R=e.origin.R, p=e.origin.p * s),
                                                   _scaled_shape(e.shape, s), e.name)
                                   for e in self._elements)
            self._keep_primitive_type()
        self._changed()

    def _keep_primitive_type(self):
        # a moved or scaled primitive is Klamp't's oriented "Box" or a "Sphere"
        if self._kind != "Primitive":
            return
        e = self._elements[0]
        p = GeometricPrimitive()
        if isinstance(e.shape, geo.Sphere):
            p.setSphere(e.origin.p, e.shape.radius)
        elif isinstance(e.shape, geo.Box):
            dims = np.asarray(e.shape.size, dtype=float)
            p.setBox(e.origin.p - e.origin.R @ (dims / 2), e.origin.R, dims)
        else:
            p = None
        self._primitive = p

    def setCollisionMargin(self, margin: float):
        """A margin [m] that fattens the geometry in distance, collides and withinDistance
        (not in ray casts)."""
        margin = _number(margin, "setCollisionMargin")
        if margin < 0:
            raise ValueError(f"setCollisionMargin: the margin must be >= 0, got {margin}")
        self._margin = margin

    def getCollisionMargin(self) -> float:
        return self._margin

    # -- bounding boxes ----------------------------------------------------------------------
    def getBB(self):
        """(bmin, bmax) (3,) arrays: the world axis-aligned bounding box (tight, as
        getBBTight). An empty geometry has bmin = inf, bmax = -inf."""
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for _, e in self.leaf_elements():
            R, p = self._R @ e.origin.R, self._R @ e.origin.p + self._t
            a, b = _shape_box(e.shape, R, p)
            lo, hi = np.minimum(lo, a), np.maximum(hi, b)
        return lo, hi

    getBBTight = getBB

    # -- proximity (engine queries) ----------------------------------------------------------
    def distance_point(self, pt) -> DistanceQueryResult:
        """Signed distance [m] from the geometry to the world point `pt` (module docstring);
        cp1 on the geometry, cp2 = pt."""
        pt = _vec3(pt, "distance_point: pt")
        point = Geometry3D(geo.Sphere(0.0))
        point.setCurrentTransform(np.eye(3), pt)
        result = self.distance(point)
        result.cp2 = [float(x) for x in pt]
        return result

    def distance(self, other: "Geometry3D") -> DistanceQueryResult:
        """The distance [m] between this geometry and `other`, and their closest points (module
        docstring)."""
        found = self._closest(other)
        if found is None:
            return DistanceQueryResult(math.inf)
        d, pa, pb, normal, ea, eb = found
        return DistanceQueryResult(d - self._margin - other._margin, pa, pb, normal, -normal,
                                   ea, eb)

    def distance_simple(self, other: "Geometry3D", relErr: float = 0.0,
                        absErr: float = 0.0) -> float:
        return self.distance(other).d

    def collides(self, other: "Geometry3D") -> bool:
        return self.distance(other).d <= 0.0

    def withinDistance(self, other: "Geometry3D", tol: float) -> bool:
        tol = _number(tol, "withinDistance: tol")
        return self.distance(other).d <= tol

    def rayCast(self, s, d):
        """(hit, point): whether the ray from s [m] along d hits the geometry, and the world
        hit point (s when there is none)."""
        element, point = self.rayCast_ext(s, d)
        return element >= 0, point

    def rayCast_ext(self, s, d):
        """(element, point): the element hit (a mesh's triangle, a group's element, 0 for a
        primitive; -1 for none) and the world hit point."""
        s, end, _ = ray_segment(s, d)
        if self.empty():
            return -1, s.tolist()
        scene, shapes = _scene(self)
        fraction, shape, point, _ = scene.ray_cast(s[None], end[None], threads=1)
        if shape[0] < 0:
            return -1, s.tolist()
        element, leaf = shapes[0][int(shape[0])]
        hit = point[0]
        if self._kind == "TriangleMesh":
            element = _nearest_triangle(leaf, self._R, self._t, hit)
        return element, hit.tolist()

    def _closest(self, other):
        if not isinstance(other, Geometry3D):
            raise TypeError(f"expected a Geometry3D, got {type(other).__name__}")
        if self.empty() or other.empty():
            raise ValueError("a proximity query needs two non-empty geometries")
        scene, shapes = _scene(self, other)
        lo_a, hi_a = self.getBB()
        lo_b, hi_b = other.getBB()
        span = np.maximum(hi_a, hi_b) - np.minimum(lo_a, lo_b)
        finite = np.all(np.isfinite(span))
        reach = float(np.linalg.norm(span)) + 1.0 if finite else RAY_LENGTH
        na = len(shapes[0])
        found = scene.closest_points(np.arange(na), np.arange(na, na + len(shapes[1])),
                                     min(reach, RAY_LENGTH))
        if not len(found["distance"]):
            return None
        k = int(np.argmin(found["distance"]))
        ea = shapes[0][int(found["shape_a"][k])][0]
        eb = shapes[1][int(found["shape_b"][k]) - na][0]
        return (float(found["distance"][k]), found["point_a"][k], found["point_b"][k],
                found["normal"][k], ea, eb)

    def __repr__(self):
        return f"Geometry3D({self._kind or 'empty'})"


def _scene(*geometries):
    """An engine Scene holding each geometry as a static body at its current transform, and
    per geometry the [(element index, leaf element)] of its shapes in Scene shape order."""
    from sim_node.model.scene import build_scene

    world = _QueryWorld()
    shapes = []
    for k, g in enumerate(geometries):
        leaves = g.leaf_elements()
        world.terrains.append(_QueryBody(k, tuple(e for _, e in leaves), g._R, g._t))
        shapes.append(leaves)
    return build_scene(world).scene, shapes


class _QueryBody:
    """A static body of a query scene (what build_scene reads of a terrain)."""

    def __init__(self, id_, elements, R, t):
        self._id, self._elements, self._R, self._t = id_, elements, R, t
        self.settings = BodySettings()

    def getID(self):
        return self._id

    def getTransform(self):
        return self._R, self._t

    def getCollisionGeometry(self):
        return self._elements


class _QueryWorld:
    """The geometries of a query as a world of terrains (what build_scene reads of a
    WorldModel)."""

    def __init__(self):
        self.terrains = []
        self.simulation = SimulationParameters()

    def numTerrains(self):
        return len(self.terrains)

    def terrain(self, i):
        return self.terrains[i]

    def numRigidObjects(self):
        return 0

    def numRobots(self):
        return 0


def _shape_box(shape, R, p):
    """World AABB (lo, hi) of a shape placed at (R, p)."""
    if isinstance(shape, geo.Sphere):
        return p - shape.radius, p + shape.radius
    if isinstance(shape, geo.Box):
        half = np.abs(R) @ (np.asarray(shape.size, dtype=float) / 2)
        return p - half, p + half
    if isinstance(shape, (geo.Cylinder, geo.Capsule)):
        axis = R[:, 2] * shape.length / 2
        if isinstance(shape, geo.Capsule):
            extent = np.abs(axis) + shape.radius
        else:   # a disc of radius r about the axis: r sqrt(1 - a_k^2) along world axis k
            extent = np.abs(axis) + shape.radius * np.sqrt(np.clip(1 - R[:, 2] ** 2, 0, 1))
        return p - extent, p + extent
    if isinstance(shape, geo.Mesh):
        v = shape.vertices @ R.T + p
        return v.min(axis=0), v.max(axis=0)
    if isinstance(shape, geo.Heightfield):
        ny, nx = shape.heights.shape
        x = np.linspace(-shape.size[0] / 2, shape.size[0] / 2, nx)
        y = np.linspace(-shape.size[1] / 2, shape.size[1] / 2, ny)
        X, Y = np.meshgrid(x, y)
        v = np.stack([X.ravel(), Y.ravel(), shape.heights.ravel()], axis=1) @ R.T + p
        return v.min(axis=0), v.max(axis=0)
    return np.full(3, -np.inf), np.full(3, np.inf)      # a plane is unbounded


def _scaled_shape(shape, s: float):
    if isinstance(shape, geo.Sphere):
        return geo.Sphere(shape.radius * s)
    if isinstance(shape, geo.Box):
        return geo.Box(tuple(x * s for x in shape.size))
    if isinstance(shape, geo.Cylinder):
        return geo.Cylinder(shape.radius * s, shape.length * s)
    if isinstance(shape, geo.Capsule):
        return geo.Capsule(shape.radius * s, shape.length * s)
    if isinstance(shape, geo.Mesh):
        return geo.load_mesh(shape.path, tuple(x * s for x in shape.scale), shape.concave)
    if isinstance(shape, geo.Heightfield):
        return geo.heightfield_from(shape.heights * s, tuple(x * s for x in shape.size))
    raise ValueError(f"scale: cannot scale a {type(shape).__name__}")


def _nearest_triangle(element, R, t, point_W) -> int:
    """The index of the mesh triangle nearest to a world point (the one a ray hit)."""
    mesh = element.shape
    R_W = R @ element.origin.R
    p_W = R @ element.origin.p + t
    x = R_W.T @ (np.asarray(point_W) - p_W)
    a, b, c = (mesh.vertices[mesh.faces[:, k]] for k in range(3))
    return int(np.argmin(_point_triangle_distance(x, a, b, c)))


def _point_triangle_distance(x, a, b, c) -> np.ndarray:
    """Distances (T,) from a point to triangles (a, b, c) (T, 3): to the plane where the
    point projects inside, else to the nearest edge."""
    def segment(p, q):
        d = q - p
        u = np.clip(np.einsum("ij,ij->i", x - p, d) / np.maximum(np.einsum("ij,ij->i", d, d),
                                                                  1e-300), 0, 1)
        return np.linalg.norm(x - (p + u[:, None] * d), axis=1)

    n = np.cross(b - a, c - a)
    area2 = np.linalg.norm(n, axis=1)
    unit = n / np.maximum(area2, 1e-300)[:, None]
    plane = np.einsum("ij,ij->i", x - a, unit)
    proj = x - plane[:, None] * unit
    inside = np.ones(len(a), bool)
    for p, q in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(q - p, proj - p), n) >= 0
    edges = np.minimum(np.minimum(segment(a, b), segment(b, c)), segment(c, a))
    return np.where(inside & (area2 > 0), np.abs(plane), edges)


def ray_segment(s, d) -> tuple:
    """(s, end, unit direction) of Klamp't's ray from s along d, cast RAY_LENGTH far; s and d
    3 finite numbers, d not zero, |s| within RAY_LENGTH per axis, else a ValueError."""
    s = _vec3(s, "rayCast: s")
    d = _vec3(d, "rayCast: d")
    norm = float(np.linalg.norm(d))
    if norm == 0.0:
        raise ValueError("rayCast: the direction d is zero")
    if not np.all(np.abs(s) <= RAY_LENGTH):
        raise ValueError(f"rayCast: s {s.tolist()} must lie within +-{RAY_LENGTH:g} m")
    unit = d / norm
    return s, s + unit * RAY_LENGTH, unit


def _vec3(x, what: str) -> np.ndarray:
    try:
        v = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be 3 numbers, got {x!r}") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{what} must be 3 finite numbers, got {x!r}")
    return v.copy()


def _number(x, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {x!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v}")
    return v
