"""Write S7's world: N mixed objects (boxes, spheres, capsules, convex meshes) dropped into a bin.

    python bench/make_bin.py                 # data/worlds/bin_500.yaml and data/meshes/bench/*.obj
    python bench/make_bin.py --count 100 --out /tmp/bin_100.yaml

Seeded: the same arguments write the same files. The bin is the ground plane z = 0 with four
static box walls around a square of side `spacing * k + 2 * MARGIN`, k = ceil(sqrt(N / 10)): the
objects start on a k x k grid (pitch SPACING) in ceil(N / k^2) layers, so the bin's area grows with
N while the pile keeps about ten layers (the scaling variants of bench/scaling.py use this too).
Every object fits in a sphere of radius < SPACING / 2 in any orientation: no overlap at the start.

The convex meshes are four random convex hulls (random points on an ellipsoid,
trimesh's qhull) with
their volume centroid at the origin and their principal axes along x, y, z, so that an object's
frame is its centre of mass and principal frame in every engine (PyBullet gets the diagonal
inertia, MuJoCo and sim_node compute the same from the hull).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MESH_DIR = REPO / "data" / "meshes" / "bench"
WORLD = REPO / "data" / "worlds" / "bin_500.yaml"

SEED = 7
SPACING = 0.1            # [m] grid pitch of the starting positions (and between layers)
MARGIN = 0.02            # [m] between the outer grid cells and the walls
WALL_HEIGHT = 0.3        # [m]
WALL_THICKNESS = 0.05    # [m]
FIRST_LAYER_Z = 0.06     # [m] centre height of the lowest layer
DENSITY = 600.0          # [kg/m^3] every object (wood-like)
FRICTION = 0.5           # every surface
MESH_COUNT = 4
KINDS = ("box", "sphere", "capsule", "mesh")


def convex_mesh(rng: np.random.Generator, radii) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3) [m], faces (F, 3)) of the hull of 14 random points in an ellipsoid,
    moved to its volume centroid and turned to its principal axes."""
    import trimesh

    direction = rng.normal(size=(14, 3))
    points = direction / np.linalg.norm(direction, axis=1, keepdims=True) * np.asarray(radii)
    mesh = trimesh.convex.convex_hull(points)      # qhull, faces wound outwards
    mesh.apply_transform(mesh.principal_inertia_transform)
    mesh.apply_translation(-mesh.center_mass)      # (the transform centres the surface's centroid)
    return np.asarray(mesh.vertices), np.asarray(mesh.faces)


def write_obj(path: Path, vertices: np.ndarray, faces: np.ndarray) -> None:
    lines = [f"# {path.name}: convex hull written by bench/make_bin.py (seed {SEED})"]
    lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def make_meshes(mesh_dir: Path = MESH_DIR) -> list:
    """Write the MESH_COUNT convex meshes (once; same seed, same files); their paths."""
    rng = np.random.default_rng(SEED)
    mesh_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(MESH_COUNT):
        radii = rng.uniform(0.02, 0.04, size=3)
        vertices, faces = convex_mesh(rng, radii)
        path = mesh_dir / f"hull{i}.obj"
        write_obj(path, vertices, faces)
        paths.append(path)
    return paths


def grid_side(count: int) -> int:
    return max(2, math.ceil(math.sqrt(count / 10)))


def bin_half_width(count: int) -> float:
    """[m] half the inner side of the bin."""
    return grid_side(count) * SPACING / 2 + MARGIN


def _random_quat_xyzw(rng) -> list:
    """A uniformly random unit quaternion, written in full (shortened digits would leave its
    norm 1e-7 off, which world-file checks reject)."""
    q = rng.normal(size=4)
    return [float(c) for c in q / np.linalg.norm(q)]


def _mesh_volume(path: Path) -> float:
    import trimesh
    return float(trimesh.load(str(path), force="mesh").volume)


def world_text(count: int, mesh_refs: list, mesh_paths: list) -> str:
    """The world file of `count` objects; mesh_refs: how the file names each mesh (relative to
    the world file or absolute), mesh_paths: the files (for their volumes)."""
    rng = np.random.default_rng(SEED + count)
    k = grid_side(count)
    half = bin_half_width(count)
    mesh_volumes = [_mesh_volume(p) for p in mesh_paths]
    out = [f"# S7 of bench/scenes.py: {count} mixed objects (boxes, spheres, capsules, convex",
           f"# meshes) dropped into a bin, written by bench/make_bin.py --count {count} (seed {SEED}):",
           f"# a {k} x {k} grid of pitch {SPACING} m in {math.ceil(count / k**2)} layers, random sizes",
           "# and orientations, density 600 kg/m^3, friction 0.5; the bin's floor is the ground plane,",
           f"# its walls four static boxes around the {2 * half:.2f} m square centred on the origin.",
           "simulation:",
           "  physics_dt: 0.001",
           "",
           "terrains:",
           "  - name: ground",
           "    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}",
           f"    surface: {{kFriction: {FRICTION}}}"]
    t, h = WALL_THICKNESS, WALL_HEIGHT
    length = 2 * half + 2 * t
    walls = {"wall_x_neg": ([-half - t / 2, 0, h / 2], [t, length, h]),
             "wall_x_pos": ([half + t / 2, 0, h / 2], [t, length, h]),
             "wall_y_neg": ([0, -half - t / 2, h / 2], [length, t, h]),
             "wall_y_pos": ([0, half + t / 2, h / 2], [length, t, h])}
    for name, (position, size) in walls.items():
        out += [f"  - name: {name}",
                f"    geometry: {{box: [{size[0]:.4f}, {size[1]:.4f}, {size[2]:.4f}]}}",
                f"    pose: {{position: [{position[0]:.4f}, {position[1]:.4f}, {position[2]:.4f}], "
                "orientation: [0, 0, 0, 1]}",
                f"    surface: {{kFriction: {FRICTION}}}"]
    out += ["", "rigid_objects:"]
    origin = -(k - 1) * SPACING / 2
    for i in range(count):
        layer, cell = divmod(i, k * k)
        row, col = divmod(cell, k)
        jitter = rng.uniform(-0.005, 0.005, size=2)
        position = [origin + col * SPACING + jitter[0], origin + row * SPACING + jitter[1],
                    FIRST_LAYER_Z + layer * SPACING]
        kind = KINDS[i % len(KINDS)]
        if kind == "box":
            size = rng.uniform(0.03, 0.05, size=3)
            geometry = f"{{box: [{size[0]:.4f}, {size[1]:.4f}, {size[2]:.4f}]}}"
            volume = float(np.prod(size))
        elif kind == "sphere":
            r = rng.uniform(0.015, 0.025)
            geometry = f"{{sphere: {r:.4f}}}"
            volume = 4 / 3 * math.pi * round(r, 4) ** 3
        elif kind == "capsule":
            r, length = rng.uniform(0.012, 0.018), rng.uniform(0.02, 0.04)
            geometry = f"{{capsule: [{r:.4f}, {length:.4f}]}}"
            volume = math.pi * round(r, 4) ** 2 * (round(length, 4) + 4 / 3 * round(r, 4))
        else:
            m = int(rng.integers(len(mesh_refs)))
            geometry = f"{{mesh: {mesh_refs[m]}}}"
            volume = mesh_volumes[m]
        out += [f"  - name: {kind}{i:04d}",
                f"    geometry: {geometry}",
                f"    mass: {DENSITY * volume:.6f}",
                f"    pose: {{position: [{position[0]:.4f}, {position[1]:.4f}, {position[2]:.4f}], "
                f"orientation: {_random_quat_xyzw(rng)}}}",
                f"    surface: {{kFriction: {FRICTION}}}"]
    return "\n".join(out) + "\n"


def write_world(count: int, path: Path, mesh_dir: Path = MESH_DIR) -> Path:
    """Write the world of `count` objects to `path` and its meshes to `mesh_dir` (named
    relative to the world file when that is data/worlds/ and the meshes data/meshes/bench/,
    else by absolute path)."""
    mesh_paths = make_meshes(mesh_dir)
    path = Path(path).resolve()
    committed = path.parent == WORLD.parent and Path(mesh_dir).resolve() == MESH_DIR
    refs = [str(Path("..", "meshes", "bench", p.name)) if committed else str(p)
            for p in mesh_paths]
    path.write_text(world_text(count, refs, mesh_paths))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--out", default=str(WORLD))
    args = parser.parse_args(argv)
    print(write_world(args.count, Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
