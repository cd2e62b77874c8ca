"""Geometric shapes of links, rigid objects and terrains, and their mass properties.

Shapes are expressed in their own frame: boxes centred at the origin, cylinders and capsules
along z centred at the origin (the URDF convention), planes as n.x = offset. Meshes are loaded
with trimesh (STL, OBJ, DAE through pycollada) and cached per file.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Box:
    size: tuple  # full side lengths (x, y, z) [m]


@dataclass(frozen=True)
class Sphere:
    radius: float


@dataclass(frozen=True)
class Cylinder:
    radius: float
    length: float  # along z


@dataclass(frozen=True)
class Capsule:
    radius: float
    length: float  # of the cylindrical part, along z


@dataclass(frozen=True)
class Plane:
    normal: tuple  # unit normal
    offset: float  # plane: normal . x = offset


@dataclass(frozen=True, eq=False)
class Mesh:
    path: str                 # resolved absolute file path
    scale: tuple = (1.0, 1.0, 1.0)
    vertices: np.ndarray = field(repr=False, default=None)  # (V, 3) scaled [m]
    faces: np.ndarray = field(repr=False, default=None)     # (F, 3) int
    concave: bool = False     # collide as the triangle mesh itself, not its convex hull


@dataclass(frozen=True, eq=False)
class Heightfield:
    """z = heights[j, i] at x = -size_x/2 + i dx, y = -size_y/2 + j dy (centred grid), solid below."""
    heights: np.ndarray = field(repr=False)   # (ny, nx) [m]
    size: tuple = (1.0, 1.0)                  # extent along x and y [m]

    @property
    def spacing(self):
        ny, nx = self.heights.shape
        return self.size[0] / (nx - 1), self.size[1] / (ny - 1)


Shape = Box | Sphere | Cylinder | Capsule | Plane | Mesh | Heightfield


@dataclass(frozen=True)
class MassProperties:
    """Mass [kg], centre of mass [m] and inertia about the com [kg m^2], in the shape frame."""
    mass: float
    com: np.ndarray
    inertia: np.ndarray


class MeshLoadError(Exception):
    pass


@lru_cache(maxsize=256)
def _load_mesh_file(path: str, mtime: float):
    import trimesh  # imported lazily: loading it costs ~0.3 s

    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types for unreadable files
        raise MeshLoadError(f"cannot read mesh: {exc}") from exc
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise MeshLoadError("the file holds no triangles")
    vertices = np.ascontiguousarray(loaded.vertices, dtype=np.float64)
    faces = np.ascontiguousarray(loaded.faces, dtype=np.int64)
    vertices.setflags(write=False)
    faces.setflags(write=False)
    return vertices, faces


def load_mesh(path: str, scale=(1.0, 1.0, 1.0), concave: bool = False) -> Mesh:
    """Load a triangle mesh file; raises FileNotFoundError or MeshLoadError."""
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    vertices, faces = _load_mesh_file(path, os.path.getmtime(path))
    scale = tuple(float(s) for s in scale)
    if scale != (1.0, 1.0, 1.0):
        vertices = vertices * np.asarray(scale)
        vertices.setflags(write=False)
    return Mesh(path=path, scale=scale, vertices=vertices, faces=faces, concave=concave)


def mass_properties(shape: Shape, mass: float) -> MassProperties:
    """Mass properties of `shape` filled with `mass` [kg] at uniform density."""
    if isinstance(shape, Box):
        x, y, z = shape.size
        inertia = mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
        return MassProperties(mass, np.zeros(3), inertia)
    if isinstance(shape, Sphere):
        return MassProperties(mass, np.zeros(3), np.eye(3) * 0.4 * mass * shape.radius ** 2)
    if isinstance(shape, Cylinder):
        r, h = shape.radius, shape.length
        ixx = mass * (3 * r * r + h * h) / 12.0
        return MassProperties(mass, np.zeros(3), np.diag([ixx, ixx, 0.5 * mass * r * r]))
    if isinstance(shape, Capsule):
        return _capsule_mass_properties(shape.radius, shape.length, mass)
    if isinstance(shape, Mesh):
        return _mesh_mass_properties(shape, mass)
    raise ValueError(f"{type(shape).__name__} has no volume to distribute mass over")


def heightfield_from(heights, size) -> Heightfield:
    """A validated Heightfield: heights (ny, nx >= 2) finite, size two positive extents [m]."""
    h = np.array(heights, dtype=np.float64)
    if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2:
        raise ValueError(f"heights must be a grid of at least 2 x 2 values, got shape {h.shape}")
    if not np.all(np.isfinite(h)):
        raise ValueError("heights contain NaN or infinity")
    size = tuple(float(v) for v in size)
    if len(size) != 2 or min(size) <= 0 or not all(np.isfinite(size)):
        raise ValueError(f"size must be two positive extents [m], got {size}")
    h.setflags(write=False)
    return Heightfield(h, size)


def _capsule_mass_properties(r: float, h: float, mass: float) -> MassProperties:
    # cylinder of length h plus two hemispheres; density from the total volume
    v_cyl = math.pi * r * r * h
    v_hemi = 2.0 / 3.0 * math.pi * r ** 3
    rho = mass / (v_cyl + 2 * v_hemi)
    m_cyl, m_hemi = rho * v_cyl, rho * v_hemi
    izz = 0.5 * m_cyl * r * r + 2 * 0.4 * m_hemi * r * r
    # hemisphere about its own com: 83/320 m r^2 (transverse); com 3r/8 from the flat face
    d = h / 2 + 3 * r / 8
    i_hemi = 83.0 / 320.0 * m_hemi * r * r + m_hemi * d * d
    ixx = m_cyl * (3 * r * r + h * h) / 12.0 + 2 * i_hemi
    return MassProperties(mass, np.zeros(3), np.diag([ixx, ixx, izz]))


def _mesh_mass_properties(mesh: Mesh, mass: float) -> MassProperties:
    import trimesh

    try:
        tm = trimesh.Trimesh(vertices=mesh.vertices, faces=mesh.faces, process=False)
        if not tm.is_watertight or tm.volume <= 0:
            # an open or inverted surface has no defined volume: use its convex hull
            tm = tm.convex_hull
        props = tm.mass_properties
    except Exception as exc:  # scipy's QhullError for flat or degenerate point sets, ...
        raise MeshLoadError(f"{mesh.path}: the mesh encloses no volume to spread a mass over "
                            f"({type(exc).__name__})") from None
    volume = props["volume"]
    if not (np.isfinite(volume) and volume > 0):
        raise MeshLoadError(f"{mesh.path}: the mesh encloses no volume to spread a mass over")
    com = np.asarray(props["center_mass"], dtype=float)
    inertia = np.asarray(props["inertia"], dtype=float) * (mass / (props["density"] * volume))
    return MassProperties(mass, com, inertia)
