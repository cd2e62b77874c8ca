"""Triangle-mesh floors and bodies for the mesh-contact tests, and the closed-form geometry the
tests check the simulation against (none of it calls the engine).

Floors are (vertices (V, 3), faces (F, 3)) arrays in metres, written to files by `floor_yaml`;
flat ones lie in z = 0 and span [-HALF, HALF]^2.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

HALF = 1.0                  # flat floors span [-HALF, HALF]^2 [m]
PADDING = 0.0025            # every body's default boundary layer [m]
REST_GAP = 0.1 * 2 * PADDING    # rigid contacts rest this far apart (README: 10 % of the paddings)


# ---------------------------------------------------------------------------------------------
# Flat floors (z = 0)

def two_triangles(half=HALF):
    """The square as two triangles; the diagonal runs from (-half, -half) to (half, half)."""
    v = np.array([[-half, -half, 0], [half, -half, 0], [half, half, 0], [-half, half, 0]], float)
    return v, np.array([[0, 1, 2], [0, 2, 3]])


def grid(cells, half=HALF, alternate=False):
    """cells x cells squares, each cut along its (i, j)-(i+1, j+1) diagonal; alternate: the
    diagonals alternate like a checkerboard (vertices of valence 4 and 8)."""
    xs = np.linspace(-half, half, cells + 1)
    X, Y = np.meshgrid(xs, xs)
    v = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    faces = []
    n = cells + 1
    for j in range(cells):
        for i in range(cells):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i
            if alternate and (i + j) % 2:
                faces += [[a, b, d], [b, c, d]]
            else:
                faces += [[a, b, c], [a, c, d]]
    return v, np.array(faces)


def rect_grid(xs, ys):
    """The rectangles between the grid lines xs, ys (increasing), each cut along its
    (i, j)-(i+1, j+1) diagonal, at z = 0."""
    X, Y = np.meshgrid(xs, ys)
    v = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    n, faces = len(xs), []
    for j in range(len(ys) - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i
            faces += [[a, b, c], [a, c, d]]
    return v, np.array(faces)


def random_triangulation(rng, points=40, half=HALF):
    """Delaunay triangulation of the square's corners, points on its sides and random points
    inside (irregular valences, long thin triangles)."""
    from scipy.spatial import Delaunay

    corners = [[-half, -half], [half, -half], [half, half], [-half, half]]
    side = rng.uniform(-half, half, size=(8, 1))
    sides = np.vstack([np.hstack([side[:2], np.full((2, 1), -half)]),
                       np.hstack([side[2:4], np.full((2, 1), half)]),
                       np.hstack([np.full((2, 1), -half), side[4:6]]),
                       np.hstack([np.full((2, 1), half), side[6:]])])
    xy = np.vstack([corners, sides, rng.uniform(-0.95 * half, 0.95 * half, size=(points, 2))])
    tri = Delaunay(xy)
    return np.column_stack([xy, np.zeros(len(xy))]), tri.simplices


def with_slivers(width, half=HALF, segments=8):
    """The square split along y = 0 by a strip `width` [m] wide cut into near-zero-area
    triangles (slivers between coplanar neighbours), fanned to a vertex above and one below,
    with a T-junction (a vertex on the middle of a neighbour's edge) on the strip's upper side."""
    xs = np.linspace(-half, half, segments + 1)
    a = [[x, 0.0, 0.0] for x in xs]                     # 0 .. segments
    b = [[x, width, 0.0] for x in xs]                   # segments + 1 .. 2 segments + 1
    top, bottom = 2 * segments + 2, 2 * segments + 3
    v = a + b + [[0.0, half, 0.0], [0.0, -half, 0.0],
                 [half, half, 0.0], [-half, half, 0.0], [-half, -half, 0.0], [half, -half, 0.0]]
    A = list(range(segments + 1))
    B = [segments + 1 + k for k in range(segments + 1)]
    tr, tl, bl, br = top + 2, top + 3, top + 4, top + 5
    faces = []
    for k in range(segments):
        faces += [[A[k], A[k + 1], B[k + 1]], [A[k], B[k + 1], B[k]]]       # the slivers
        faces.append([A[k + 1], A[k], bottom])
        if k != segments // 2:
            faces.append([B[k], B[k + 1], top])
    mid = len(v)
    k = segments // 2
    v.append([0.5 * (xs[k] + xs[k + 1]), width, 0.0])                     # the T-junction
    faces += [[B[k], mid, top], [mid, B[k + 1], top]]
    faces += [[B[-1], tr, top], [tl, B[0], top], [A[0], bl, bottom], [br, A[-1], bottom]]
    return np.array(v), np.array(faces)


def with_fins(half=HALF, cells=4):
    """A grid floor with fins hanging below three of its interior edges (3 triangles on one
    edge: non-manifold)."""
    v, f = grid(cells, half)
    v = list(v)
    f = list(f)
    for (a, b) in ((6, 12), (12, 18), (7, 8)):            # a diagonal and a grid line edge
        mid = 0.5 * (np.asarray(v[a]) + np.asarray(v[b]))
        v.append(mid - [0, 0, 0.2])
        f.append([a, b, len(v) - 1])
    return np.array(v), np.array(f)


def unmerged(vertices, faces, rng, jitter=0.0):
    """Every triangle with its own copies of its vertices (as STL stores them), every fifth
    triangle listed a second time with the other winding (a double-sided export)."""
    soup = vertices[faces].reshape(-1, 3) + rng.normal(scale=jitter, size=(3 * len(faces), 3))
    tris = np.arange(3 * len(faces)).reshape(-1, 3)
    return soup, np.vstack([tris, tris[::5, ::-1]])


def flipped(faces, rng):
    """Half the triangles (random) with the opposite winding."""
    f = np.array(faces)
    flip = rng.random(len(f)) < 0.5
    f[flip] = f[flip, ::-1]
    return f


def square_hole(hole, half=HALF):
    """A floor with a square hole [-hole, hole]^2 in its middle (an open mesh with an inner
    boundary)."""
    outer = [[-half, -half], [half, -half], [half, half], [-half, half]]
    inner = [[-hole, -hole], [hole, -hole], [hole, hole], [-hole, hole]]
    v = np.array([p + [0.0] for p in outer + inner], float)
    faces = []
    for k in range(4):
        a, b = k, (k + 1) % 4
        faces += [[a, b, 4 + b], [a, 4 + b, 4 + a]]
    return v, np.array(faces)


# ---------------------------------------------------------------------------------------------
# Concave floors

def v_groove(slope, cells=6, half=HALF):
    """z = |x| tan(slope): two planes meeting in a crease along y at x = 0, triangulated on a
    grid with the crease on a grid line."""
    v, f = grid(cells, half)
    v[:, 2] = np.abs(v[:, 0]) * math.tan(slope)
    return v, f


def steps_valley(rise=0.05, tread=0.3, count=3):
    """A staircase valley along x, extruded along y over [-HALF, HALF]: the bottom tread
    |x| < tread / 2 at z = 0, then `count` steps up on either side, each `rise` high and
    `tread` deep (vertical risers: concave corners at their feet, convex edges on top).
    Returns (vertices, faces, profile): profile (P, 2) the (x, z) polyline of the cross-section."""
    xs = [tread / 2 + k * tread for k in range(count + 1)]
    profile = [(-xs[-1], count * rise)]
    for k in range(count, 0, -1):
        profile += [(-xs[k - 1], k * rise), (-xs[k - 1], (k - 1) * rise)]
    for k in range(1, count + 1):
        profile += [(xs[k - 1], (k - 1) * rise), (xs[k - 1], k * rise)]
    profile.append((xs[-1], count * rise))
    profile = np.array(profile)
    v, f = extrude(profile, HALF)
    return v, f, profile


def extrude(profile, half):
    """The (x, z) polyline swept along y over [-half, half], as two triangles per segment."""
    n = len(profile)
    v = np.array([[x, -half, z] for x, z in profile] + [[x, half, z] for x, z in profile], float)
    faces = []
    for k in range(n - 1):
        faces += [[k, k + 1, n + k + 1], [k, n + k + 1, n + k]]
    return v, np.array(faces)


def spherical_bowl(radius=0.6, depth=0.25, rings=12, segments=24):
    """The bottom cap of a sphere of `radius` centred at (0, 0, radius), `depth` deep, as a
    triangulated open surface (a pole fan and rings). Returns (vertices, faces)."""
    top = math.acos(1.0 - depth / radius)
    v = [[0.0, 0.0, 0.0]]
    for i in range(1, rings + 1):
        theta = top * i / rings
        for k in range(segments):
            phi = 2 * math.pi * (k + 0.5 * (i % 2)) / segments
            v.append([radius * math.sin(theta) * math.cos(phi),
                      radius * math.sin(theta) * math.sin(phi), radius * (1 - math.cos(theta))])
    faces = [[0, 1 + k, 1 + (k + 1) % segments] for k in range(segments)]
    for i in range(1, rings):
        a, b = 1 + (i - 1) * segments, 1 + i * segments
        for k in range(segments):
            k1 = (k + 1) % segments
            if i % 2:
                faces += [[a + k, b + k, b + k1], [a + k, b + k1, a + k1]]
            else:
                faces += [[a + k, b + k, a + k1], [a + k1, b + k, b + k1]]
    return np.array(v), np.array(faces)


# ---------------------------------------------------------------------------------------------
# Bodies: world-file geometry, support function, resting height on a horizontal plane. Poses
# come in batches: R (n, 3, 3), p (n, 3), one per simulation step.

class Body:
    """A convex body of the tests: its world-file geometry and closed-form support function;
    polytopes (and the prism circumscribing a cylinder) also give vertices, face normals and
    edge directions in the body frame for separating-axis tests; spheres and capsules their
    core segment (half length along z) and radius."""

    def __init__(self, kind, geometry, support, rest_height, polytope=None, radius=None,
                 segment=None):
        self.kind = kind
        self.geometry = geometry            # world-file `geometry:` mapping (flow YAML)
        self._support = support             # (d_local (n, 3)) -> max of d . x over the body
        self.rest_height = rest_height      # centre height resting upright on z = 0 (touching)
        self.polytope = polytope            # (vertices (N, 3), normals (F, 3), edges (E, 3))
        self.radius = radius
        self.segment = segment

    def lowest(self, R, p, normal=(0.0, 0.0, 1.0)):
        """min of normal . x over the body at each pose: (n,)."""
        n = np.asarray(normal, float)
        return p @ n - self._support(-np.einsum("nij,i->nj", R, n))


def sphere(r=0.05):
    return Body("sphere", f"{{sphere: {r}}}", lambda d: r * np.linalg.norm(d, axis=1), r,
                radius=r, segment=0.0)


def box(hx=0.05, hy=0.04, hz=0.03):
    h = np.array([hx, hy, hz])
    corners = np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1)
                        for sz in (-1, 1)])
    return Body("box", f"{{box: [{2 * hx}, {2 * hy}, {2 * hz}]}}", lambda d: np.abs(d) @ h, hz,
                polytope=(corners, np.eye(3), np.eye(3)))


def capsule(r=0.03, length=0.1):
    # axis z in the body frame; the world-file length is the cylindrical part
    return Body("capsule", f"{{capsule: [{r}, {length}]}}",
                lambda d: np.abs(d[:, 2]) * length / 2 + r * np.linalg.norm(d, axis=1),
                length / 2 + r, radius=r, segment=length / 2)


def cylinder(r=0.04, length=0.08, sides=12):
    # the prism circumscribing it contains it: its clearance is a lower bound (by at most
    # r (1 / cos(pi / sides) - 1) = 1.4 mm)
    phi = 2 * np.pi * (np.arange(sides) + 0.5) / sides
    rim = r / math.cos(math.pi / sides) * np.column_stack([np.cos(phi), np.sin(phi)])
    vertices = np.vstack([np.column_stack([rim, np.full(sides, z)]) for z in (-length / 2, length / 2)])
    mid = 2 * np.pi * np.arange(sides) / sides
    normals = np.vstack([np.column_stack([np.cos(mid), np.sin(mid), np.zeros(sides)]), [[0, 0, 1]]])
    edges = np.vstack([np.column_stack([-np.sin(mid), np.cos(mid), np.zeros(sides)]), [[0, 0, 1]]])
    return Body("cylinder", f"{{cylinder: [{r}, {length}]}}",
                lambda d: np.abs(d[:, 2]) * length / 2 + r * np.hypot(d[:, 0], d[:, 1]),
                length / 2, polytope=(vertices, normals, edges))


def convex_mesh(path: Path):
    """A convex polyhedron (an octahedron squashed along z, 6 vertices) written to `path`
    (OBJ); its support is the max over its vertices."""
    import trimesh

    v = np.array([[0.06, 0, 0], [-0.06, 0, 0], [0, 0.05, 0], [0, -0.05, 0], [0, 0, 0.04],
                  [0, 0, -0.04]], float)
    hull = trimesh.Trimesh(v).convex_hull
    hull.export(path)
    edges = np.array([v[b] - v[a] for a, b in hull.edges_unique])
    return Body("convex", f"{{mesh: {path}}}", lambda d: np.max(d @ v.T, axis=1), 0.04,
                polytope=(v, np.asarray(hull.face_normals), edges))


# ---------------------------------------------------------------------------------------------
# World files and state

def floor_yaml(vertices, faces, path: Path, surface=""):
    """A `terrains:` section with the mesh written to `path` (STL keeps unmerged vertices as
    given; OBJ keeps the vertex list)."""
    import trimesh

    trimesh.Trimesh(np.asarray(vertices, float), np.asarray(faces), process=False).export(path)
    return (f"terrains:\n  - name: floor\n    geometry: {{mesh: {path}}}\n"
            + (f"    surface: {surface}\n" if surface else ""))


def heightfield_yaml(heights, size, path: Path, surface=""):
    np.save(path, np.asarray(heights, float))
    return (f"terrains:\n  - name: floor\n    geometry: {{heightfield: {{file: {path}, "
            f"size: [{size[0]}, {size[1]}]}}}}\n" + (f"    surface: {surface}\n" if surface else ""))


def planes_yaml(normals, surface=""):
    """A `terrains:` section with one plane terrain through the origin per unit normal."""
    text = "terrains:\n"
    for k, n in enumerate(normals):
        text += (f"  - name: plane{k}\n    geometry: {{plane: {{normal: {_yaml_list(n)}, offset: 0.0}}}}\n"
                 + (f"    surface: {surface}\n" if surface else ""))
    return text


def _yaml_list(values):
    # '.17e' always has a decimal point: YAML 1.1 reads '1e-12' as a string
    return "[" + ", ".join(format(float(x), ".17e") for x in values) + "]"


def object_yaml(body: Body, position, orientation=(0.0, 0.0, 0.0, 1.0), surface=""):
    return (f"rigid_objects:\n  - name: body\n    geometry: {body.geometry}\n    mass: 1.0\n"
            f"    pose: {{position: {_yaml_list(position)}, "
            f"orientation: {_yaml_list(orientation)}}}\n"
            + (f"    surface: {surface}\n" if surface else ""))


def poses(states):
    """(R (n, 3, 3), p (n, 3)) of a free body from its state rows (n, 13)
    [p (3), q xyzw (4), v (3), w (3)]."""
    states = np.atleast_2d(states)
    x, y, z, w = (states[:, 3 + k] for k in range(4))
    R = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                  np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                  np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)],
                 axis=1)
    return R, states[:, :3].copy()


def mechanical_energy(states, mass, inertia_B, gravity=9.81):
    """Kinetic plus potential energy (n,) [J] of a free body from its state rows (n, 13)
    [com (3), q xyzw (4), v_com (3), w world (3)]: m v^2 / 2 + w^T R I_B R^T w / 2 + m g z_com,
    with I_B (3, 3) its inertia about the com in body axes [kg m^2]."""
    states = np.atleast_2d(states)
    R, com = poses(states)
    w_B = np.einsum("nji,nj->ni", R, states[:, 10:13])          # R^T w
    spin = np.einsum("ni,ij,nj->n", w_B, np.asarray(inertia_B, float), w_B)
    return (0.5 * mass * np.einsum("ni,ni->n", states[:, 7:10], states[:, 7:10]) + 0.5 * spin
            + mass * gravity * com[:, 2])


def _dot(u, v):
    return np.sum(u * v, axis=-1)


def point_triangle_distance(p, tri):
    """Distances from points p (..., 3) to triangles tri (..., 3, 3), broadcast against each
    other: the closest point by Voronoi regions (Ericson, Real-Time Collision Detection,
    5.1.5)."""
    a, b, c = tri[..., 0, :], tri[..., 1, :], tri[..., 2, :]
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    bp, cp = p - b, p - c
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = 1.0 / (va + vb + vc)
        closest = a + ab * (vb * denom)[..., None] + ac * (vc * denom)[..., None]        # face
        t_ab = d1 / (d1 - d3)
        t_ac = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    regions = [((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), b + (c - b) * t_bc[..., None]),
               ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * t_ac[..., None]),
               ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * t_ab[..., None]),
               ((d6 >= 0) & (d5 <= d6), c + 0 * p),
               ((d3 >= 0) & (d4 <= d3), b + 0 * p),
               ((d1 <= 0) & (d2 <= 0), a + 0 * p)]
    for where, point in regions:                   # later regions win, as in Ericson's order
        closest = np.where(where[..., None], point, closest)
    return np.linalg.norm(closest - p, axis=-1)


def segment_triangle_distance(a, b, tri):
    """Distances from segments [a, b] (..., 3) to triangles tri (..., 3, 3), broadcast: 0
    where a segment crosses a triangle, else the least of its end points' distances to the
    triangle and its distances to the triangle's edges."""
    d = np.minimum(point_triangle_distance(a, tri), point_triangle_distance(b, tri))
    for k in range(3):
        d = np.minimum(d, segment_segment_distance(a, b, tri[..., k, :], tri[..., (k + 1) % 3, :]))
    t0 = tri[..., 0, :]
    n = np.cross(tri[..., 1, :] - t0, tri[..., 2, :] - t0)
    sa, sb = _dot(n, a - t0), _dot(n, b - t0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = sa / (sa - sb)
    x = a + t[..., None] * (b - a)
    inside = (sa * sb <= 0) & (sa != sb)
    for k in range(3):
        edge = tri[..., (k + 1) % 3, :] - tri[..., k, :]
        inside &= _dot(np.cross(edge, x - tri[..., k, :]), n) >= 0
    return np.where(inside, 0.0, d)


def segment_segment_distance(p1, q1, p2, q2):
    """Distances between segments [p1, q1] and [p2, q2] (..., 3), broadcast (Ericson 5.1.9,
    clamped parameters)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(r, d1), _dot(d2, d1)
    denom = a * e - b * b
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(denom > 1e-18, np.clip((b * f - c * e) / denom, 0, 1), 0.0)
        t = (b * s + f) / e
        s = np.where(t < 0, np.clip(-c / a, 0, 1), np.where(t > 1, np.clip((b - c) / a, 0, 1), s))
        t = np.clip(t, 0, 1)
    return np.linalg.norm(p1 + s[..., None] * d1 - p2 - t[..., None] * d2, axis=-1)


def separation(vertices_a, axes_a, edges_a, vertices_b, axes_b, edges_b):
    """Signed distances (P,) between P pairs of convex polytopes given by their vertices
    (world), face normals and edge directions, (P, k, 3) each: the largest gap of their
    projections over the separating-axis candidates (face normals of both, cross products of
    their edges). Overlapping: exactly minus the penetration depth (the least overlap is along
    a candidate); separated: a positive lower bound of the distance."""
    P = len(vertices_a)
    crosses = np.cross(edges_a[:, :, None, :], edges_b[:, None, :, :]).reshape(P, -1, 3)
    axes = np.concatenate([axes_a, axes_b, crosses], axis=1)
    norm = np.linalg.norm(axes, axis=2, keepdims=True)
    axes = axes / np.where(norm > 1e-9, norm, np.inf)        # degenerate crosses project to 0
    axes_t = np.swapaxes(axes, 1, 2)
    pa = np.matmul(vertices_a, axes_t)                       # (P, vertices, axes)
    pb = np.matmul(vertices_b, axes_t)
    gap = np.maximum(pa.min(axis=1) - pb.max(axis=1), pb.min(axis=1) - pa.max(axis=1))
    return np.where(norm[..., 0] > 1e-9, gap, -np.inf).max(axis=1)


def body_polytope(body: Body, R, p):
    """The body's polytope at the poses: vertices (n, N, 3), normals (n, F, 3), edges (n, E, 3)."""
    v, normals, edges = body.polytope
    return (np.einsum("nij,kj->nki", R, v) + p[:, None, :], np.einsum("nij,kj->nki", R, normals),
            np.einsum("nij,kj->nki", R, edges))


def core(body: Body, R, p):
    """End points (n, 3), (n, 3) of the core segment of a sphere or capsule at the poses."""
    return p + R[:, :, 2] * body.segment, p - R[:, :, 2] * body.segment


def box_distance(points, lo, hi):
    """Signed distance of points (..., 3) from the box [lo, hi]."""
    outside = np.linalg.norm(np.maximum(lo - points, 0) + np.maximum(points - hi, 0), axis=-1)
    inside = np.min(np.minimum(points - lo, hi - points), axis=-1)
    return np.where(outside > 0, outside, -inside)


def column_clearance(body: Body, R, p, columns, half=HALF):
    """Signed distance (n,) of the body at each pose from the union of solid columns
    (x0, x1, top): x0 <= x <= x1, |y| <= half, top - 1 <= z <= top."""
    best = np.full(len(p), np.inf)
    for x0, x1, top in columns:
        lo, hi = np.array([x0, -half, top - 1.0]), np.array([x1, half, top])
        if body.radius is not None:
            # the distance from a box is convex along the core: golden-section search
            a, b = core(body, R, p)
            t0, t1 = np.zeros(len(p)), np.ones(len(p))
            g = (math.sqrt(5) - 1) / 2
            for _ in range(60):
                m0, m1 = t1 - g * (t1 - t0), t0 + g * (t1 - t0)
                f0 = box_distance(a + m0[:, None] * (b - a), lo, hi)
                f1 = box_distance(a + m1[:, None] * (b - a), lo, hi)
                t1 = np.where(f0 < f1, m1, t1)
                t0 = np.where(f0 < f1, t0, m0)
            d = box_distance(a + (0.5 * (t0 + t1))[:, None] * (b - a), lo, hi) - body.radius
        else:
            corners = np.array([[x, y, z] for x in (x0, x1) for y in (-half, half)
                                for z in (top - 1.0, top)])
            n = len(p)
            d = separation(*body_polytope(body, R, p), np.broadcast_to(corners, (n, 8, 3)),
                           np.broadcast_to(np.eye(3), (n, 3, 3)), np.broadcast_to(np.eye(3), (n, 3, 3)))
        best = np.minimum(best, d)
    return best


def mesh_height(vertices, faces, xy):
    """Height of the highest non-vertical triangle over (x, y); -inf where there is none."""
    tri = np.asarray(vertices, float)[np.asarray(faces)]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    ok = np.abs(det) > 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        u = ((xy[0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (xy[1] - a[:, 1])) / det
        v = ((b[:, 0] - a[:, 0]) * (xy[1] - a[:, 1]) - (xy[0] - a[:, 0]) * (b[:, 1] - a[:, 1])) / det
    w = 1 - u - v
    inside = ok & (u >= -1e-12) & (v >= -1e-12) & (w >= -1e-12)
    if not inside.any():
        return -np.inf
    z = w * a[:, 2] + u * b[:, 2] + v * c[:, 2]
    return float(z[inside].max())


def terrain_clearance(body: Body, R, p, triangles, chunk=100):
    """Signed distance (n,) of the body at each pose from the solid under a height-function
    surface given as triangles (T, 3, 3) (each with the prism below it, down to 1 m under its
    lowest vertex): +inf where no triangle comes within 5 mm of the body's bounding sphere.
    Sphere and capsule: the exact distance of their core from the surface less the radius (a
    core that crosses the surface has distance 0); polytopes: the separation from each prism
    (exact when overlapping)."""
    if body.radius is not None:
        body_radius = body.radius + body.segment
    else:
        body_radius = np.linalg.norm(body.polytope[0], axis=1).max()
    centres = triangles.mean(axis=1)
    tri_radius = np.linalg.norm(triangles - centres[:, None, :], axis=2).max(axis=1)
    tri_edges = np.roll(triangles, -1, axis=1) - triangles
    bottom = triangles.copy()
    bottom[:, :, 2] = triangles[:, :, 2].min(axis=1, keepdims=True) - 1.0
    z = np.broadcast_to([0.0, 0.0, 1.0], (len(triangles), 1, 3))
    prisms = (np.concatenate([triangles, bottom], axis=1),
              np.concatenate([np.cross(tri_edges[:, :1], tri_edges[:, 1:2]),
                              np.cross(tri_edges, z), z], axis=1),
              np.concatenate([tri_edges, z], axis=1))
    out = np.full(len(p), np.inf)
    for start in range(0, len(p), chunk):
        Rc, pc = R[start:start + chunk], p[start:start + chunk]
        # (pose, triangle) pairs whose bounding spheres come within 5 mm
        gap = np.linalg.norm(pc[:, None, :] - centres[None], axis=2) - body_radius - tri_radius
        k, t = np.nonzero(gap < 0.005)
        if not len(k):
            continue
        if body.radius is not None:
            a, b = (e[k] for e in core(body, Rc, pc))
            d = (point_triangle_distance(a, triangles[t]) if body.segment == 0.0
                 else segment_triangle_distance(a, b, triangles[t])) - body.radius
        else:
            d = separation(*(x[k] for x in body_polytope(body, Rc, pc)),
                           *(x[t] for x in prisms))
        np.minimum.at(out, start + k, d)
    return out
