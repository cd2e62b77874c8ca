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


# the largest mesh file read: a robot file (or a client's spawn request) naming a huge file must
# not exhaust memory (the largest mesh of the URDF corpus is 29 MB)
MAX_MESH_FILE_SIZE = 1 << 30


def load_mesh(path: str, scale=(1.0, 1.0, 1.0), concave: bool = False) -> Mesh:
    """Load a triangle mesh file; raises FileNotFoundError or MeshLoadError."""
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    size = os.path.getsize(path)
    if size > MAX_MESH_FILE_SIZE:
        raise MeshLoadError(f"{size} bytes, more than the {MAX_MESH_FILE_SIZE >> 20} MB a mesh "
                            "file may have")
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


# --- triangle meshes as collision surfaces ---------------------------------------------------
#
# The narrow phase collides a body with a triangle mesh triangle by triangle. What it needs to
# know about each triangle's neighbourhood (engine/geometry.pxd, MeshC.tri_flags and
# MeshC.tri_adjacent) is computed here, once per mesh:
#   * which edges and vertices are flat (the surface continues in the triangle's plane across
#     them): contact points found there are interior to a contact patch, not its corners;
#   * for every edge, the vertex of the neighbouring triangle opposite it, from which the
#     narrow phase tells, from the side a body is on, whether the edge is convex (its own
#     normals count) or concave / flat (the faces around it carry the contact);
#   * which triangles are too thin to have a reliable normal.
# Only geometry is used, never the winding: a mesh with flipped or inconsistent winding has the
# same features.

FLAT_EDGE = 1          # bit k: edge (v_k, v_k+1) is flat
FLAT_VERTEX = 8        # bit 3 + k: every edge at vertex k is flat
DEGENERATE = 64        # the triangle has no reliable normal (near-zero area)
NO_NEIGHBOUR = -1      # tri_adjacent: a boundary edge (one triangle)
MANY_NEIGHBOURS = -2   # tri_adjacent: non-manifold (3+ triangles) or a degenerate neighbour

# |cross(e1, e2)| <= DEGENERATE_RATIO * (longest edge)^2: the triangle is thinner than this
# fraction of its length, and rounding alone turns its normal by ~1e-16 / ratio rad
DEGENERATE_RATIO = 1e-9


def clean_triangles(vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """A triangle soup as a collision surface: coincident vertices merged (STL repeats them for
    every triangle, and only shared vertices reveal edges and neighbours), triangles that repeat
    a vertex dropped (no area), triangles listed twice (either winding: a double-sided export)
    kept once, and T-junctions split (a vertex lying on another triangle's boundary edge: that
    triangle is cut there, so the surface on both sides shares the edge). Returns verts (V, 3)
    float64 and tris (T, 3) int32."""
    import trimesh

    merged = trimesh.Trimesh(vertices=vertices, faces=faces, process=False)
    merged.merge_vertices()
    verts = np.ascontiguousarray(merged.vertices, dtype=np.float64)
    tris = np.asarray(merged.faces, dtype=np.int64).reshape(-1, 3)
    distinct = ((tris[:, 0] != tris[:, 1]) & (tris[:, 1] != tris[:, 2])
                & (tris[:, 2] != tris[:, 0]))
    tris = tris[distinct]
    _, first = np.unique(np.sort(tris, axis=1), axis=0, return_index=True)
    tris = _split_t_junctions(verts, tris[np.sort(first)])
    return verts, np.ascontiguousarray(tris, dtype=np.int32)


# a vertex this close [m] to a boundary edge lies on it (trimesh merges vertices closer than
# 1e-8 m, its default merge tolerance, alike)
T_JUNCTION_TOLERANCE = 1e-8


def _split_t_junctions(verts, tris):
    """tris with every triangle whose boundary edge (an edge of that triangle only) passes
    through vertices of other boundary edges cut at those vertices, fan-wise from its opposite
    vertex (winding kept)."""
    from scipy.spatial import cKDTree

    for _ in range(64):                       # each pass splits one edge of each triangle
        a, b = tris, np.roll(tris, -1, axis=1)
        key = np.sort(np.stack([a, b], axis=-1).reshape(-1, 2), axis=1)
        _, inverse, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        boundary = np.nonzero(count[inverse.reshape(-1)] == 1)[0]          # half-edges 3 t + k
        if not len(boundary):
            return tris
        ends = tris.reshape(-1)[np.stack([boundary, 3 * (boundary // 3) + (boundary + 1) % 3], 1)]
        candidates = np.unique(ends)
        tree = cKDTree(verts[candidates])
        p, q = verts[ends[:, 0]], verts[ends[:, 1]]
        length = np.linalg.norm(q - p, axis=1)
        near = tree.query_ball_point(0.5 * (p + q), 0.5 * length + T_JUNCTION_TOLERANCE)
        # every (boundary half-edge, candidate vertex near it) pair at once: the vertex lies on
        # the open edge (0 < s < 1 along it, within the tolerance of the line)
        found = np.fromiter(map(len, near), np.int64, len(near))
        half = np.repeat(np.arange(len(boundary)), found)
        vertex = candidates[np.concatenate(near).astype(np.int64)] if len(half) else half
        i, j = ends[half, 0], ends[half, 1]
        u, d = verts[i], verts[j] - verts[i]
        w = verts[vertex] - u
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.einsum("ni,ni->n", w, d) / np.einsum("ni,ni->n", d, d)
        off = np.linalg.norm(w - s[:, None] * d, axis=1)
        on = ((vertex != i) & (vertex != j) & (s > 0.0) & (s < 1.0)
              & (off <= T_JUNCTION_TOLERANCE))
        half, vertex, s = half[on], vertex[on], s[on]
        # one edge of each triangle per pass: its first boundary half-edge with vertices on it
        triangle = boundary[half] // 3
        first_half = {}
        for h, t in zip(half.tolist(), triangle.tolist()):
            first_half.setdefault(t, h)
        cuts = {}
        order = np.lexsort((vertex, s, half))            # by half-edge, then along the edge
        for h, v in zip(half[order].tolist(), vertex[order].tolist()):
            t = int(boundary[h] // 3)
            if first_half[t] == h:
                cuts.setdefault(t, (int(boundary[h]) - 3 * t, []))[1].append(v)
        if not cuts:
            return tris
        pieces = []
        for t, (e, inner) in cuts.items():
            i, j, c = tris[t, e], tris[t, (e + 1) % 3], tris[t, (e + 2) % 3]
            chain = [i] + inner + [j]
            pieces += [[chain[k], chain[k + 1], c] for k in range(len(chain) - 1)]
        keep = np.ones(len(tris), bool)
        keep[list(cuts)] = False
        tris = np.vstack([tris[keep], np.array(pieces, dtype=tris.dtype)])
    return tris


def triangle_features(verts, tris, flat_angle=1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Neighbourhood of every triangle of a mesh (see above): flags (T,) uint8 (FLAT_EDGE << k,
    FLAT_VERTEX << k, DEGENERATE) and adjacent (T, 3) int32, the vertex of the neighbour across
    edge k or NO_NEIGHBOUR / MANY_NEIGHBOURS. An edge is flat when its neighbour's plane is
    less than `flat_angle` [rad] out of the triangle's (either way, whatever the winding).
    verts (V, 3) [m], tris (T, 3) vertex indices."""
    verts = np.asarray(verts, dtype=np.float64).reshape(-1, 3)
    tris = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    ntri = len(tris)
    flags = np.zeros(ntri, np.uint8)
    adjacent = np.full((ntri, 3), NO_NEIGHBOUR, np.int32)
    if ntri == 0:
        return flags, adjacent
    corners = verts[tris]                                        # (T, 3, 3)
    edges = np.roll(corners, -1, axis=1) - corners               # edge k: v_k -> v_k+1
    cross = np.cross(edges[:, 0], -edges[:, 2])
    area2 = np.linalg.norm(cross, axis=1)
    longest2 = np.max(np.einsum("tki,tki->tk", edges, edges), axis=1)
    degenerate = area2 <= DEGENERATE_RATIO * longest2
    flags[degenerate] |= DEGENERATE
    normal = cross / np.where(degenerate, 1.0, area2)[:, None]

    # half-edges 3 t + k, grouped by their undirected edge
    a = tris
    b = np.roll(tris, -1, axis=1)
    key = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=-1).reshape(-1, 2)
    _, edge_id, count = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    edge_id = edge_id.reshape(-1)
    half_count = count[edge_id]
    # pair the two half-edges of every edge with exactly two triangles
    order = np.argsort(edge_id, kind="stable")
    paired = order[half_count[order] == 2].reshape(-1, 2)
    h = np.concatenate([paired[:, 0], paired[:, 1]])                 # each half-edge h
    g = np.concatenate([paired[:, 1], paired[:, 0]])                 # and its twin g
    t_h, k_h = np.divmod(h, 3)
    t_g, k_g = np.divmod(g, 3)
    opposite = tris[t_g, (k_g + 2) % 3]
    usable = ~degenerate[t_g]
    adjacent[t_h, k_h] = np.where(usable, opposite, MANY_NEIGHBOURS)
    adjacent.reshape(-1)[half_count >= 3] = MANY_NEIGHBOURS
    # flat: the neighbour's opposite vertex, seen from the edge, leaves the triangle's plane by
    # less than sin(flat_angle) of its distance from the edge line
    origin = corners[t_h, k_h]
    along = edges[t_h, k_h]
    rel = verts[opposite] - origin
    length2 = np.maximum(np.einsum("ij,ij->i", along, along), np.finfo(float).tiny)
    off_line = rel - (np.einsum("ij,ij->i", rel, along) / length2)[:, None] * along
    out_of_plane = np.abs(np.einsum("ij,ij->i", rel, normal[t_h]))
    flat = (usable & ~degenerate[t_h]
            & (out_of_plane <= math.sin(flat_angle) * np.linalg.norm(off_line, axis=1)))
    flat_half = np.zeros(3 * ntri, bool)
    flat_half[h] = flat
    # an edge is flat only when it is flat seen from both of its triangles
    flat_edge = np.zeros(len(count), bool)
    np.logical_or.at(flat_edge, edge_id[h], True)
    np.logical_and.at(flat_edge, edge_id, flat_half)
    flat_half = flat_edge[edge_id]
    flags |= (flat_half.reshape(-1, 3) * (FLAT_EDGE << np.arange(3))).sum(axis=1).astype(np.uint8)
    # a vertex is flat when every edge at it is
    rough = np.zeros(len(verts), bool)
    rough[key[~flat_half, 0]] = True
    rough[key[~flat_half, 1]] = True
    flat_vertex = ~rough[tris]                                   # (T, 3)
    flags |= (flat_vertex * (FLAT_VERTEX << np.arange(3))).sum(axis=1).astype(np.uint8)
    return flags, adjacent
