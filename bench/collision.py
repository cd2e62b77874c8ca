"""Microseconds per call of the collision queries: BVH box and pair queries on a 10k-triangle
mesh, heightfield cells, and sweep and prune on 10 / 100 / 1000 boxes, from scratch and
near-sorted (the order kept while the boxes move 1 mm per step).

Two columns: "kernel" times the noexcept nogil kernels back to back (bench/collision_kernels.pyx,
compiled on the fly with pyximport), as the simulation step calls them, averaged over many
different queries / frames; "python" repeats one call of the validated Python wrapper (argument
checks included, warm cache). Best of several rounds. "x-tests" counts the pairs the sweep tests
in y and z (the pairs overlapping in x), the term that grows faster than n.

    python bench/collision.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sim_node.engine import broadphase, bvh, heightfield  # noqa: E402


def kernels():
    """The timing loops, or None when they cannot be compiled here."""
    try:
        import pyximport
        pyximport.install(setup_args={"include_dirs": [np.get_include(), str(REPO)]},
                          build_dir=str(REPO / "build" / "pyxbld"), language_level=3,
                          inplace=False)
        sys.path.insert(0, str(Path(__file__).parent))
        import collision_kernels
        return collision_kernels
    except Exception as exc:   # no compiler: report the Python-call timings only
        print(f"(kernel timings unavailable: {exc})")
        return None


def best_us(fn, number: int, repeat: int = 7) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def uv_sphere(n_lat: int = 51, n_lon: int = 100, radius: float = 1.0):
    """Closed UV sphere: 2 n_lon (n_lat - 1) triangles (10 000 for the defaults)."""
    theta = np.linspace(0.0, np.pi, n_lat + 1)[1:-1]
    phi = np.linspace(0.0, 2 * np.pi, n_lon, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.column_stack([np.sin(t).ravel() * np.cos(p).ravel(),
                            np.sin(t).ravel() * np.sin(p).ravel(), np.cos(t).ravel()])
    verts = radius * np.vstack([[0, 0, 1], ring, [0, 0, -1]])
    south = len(verts) - 1
    tris = []
    for k in range(n_lon):
        k1 = (k + 1) % n_lon
        tris.append((0, 1 + k, 1 + k1))
        for r in range(n_lat - 2):
            a, b = 1 + r * n_lon + k, 1 + r * n_lon + k1
            tris += [(a, a + n_lon, b + n_lon), (a, b + n_lon, b)]
        base = 1 + (n_lat - 2) * n_lon
        tris.append((base + k, south, base + k1))
    return verts, np.array(tris, dtype=np.int32)


def random_rotation(rng):
    q = rng.normal(size=4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def bvh_rows(k, quick: bool, rng):
    verts, tris = uv_sphere()
    t0 = timeit.default_timer()
    arrays = bvh.mesh_bvh(verts, tris)
    build_ms = (timeit.default_timer() - t0) * 1e3
    tree = bvh.BVHTree(arrays)
    print(f"\nBVH over a UV sphere, {len(tris)} triangles, leaf_size 4: {tree.nnode} nodes, "
          f"build {build_ms:.1f} ms")
    rows = {"build_ms": build_ms}
    m = 200 if quick else 2000
    out = np.empty(len(tris), dtype=np.int32)
    print(f"  {'query':44s} {'kernel':>8s} {'python':>8s} {'found':>7s}")
    for label, half in (("box query, half size 2 cm, on the surface", 0.02),
                        ("box query, half size 20 cm, on the surface", 0.2),
                        ("box query, half size 20 cm, inside (empty)", -1.0)):
        centre = rng.normal(size=(m, 3))
        centre /= np.linalg.norm(centre, axis=1, keepdims=True)
        if half < 0:
            half, centre = 0.2, centre * 0.3
        boxes = np.ascontiguousarray(np.hstack([centre - half, centre + half]))
        ns, hits = k.query_aabb_ns(tree, boxes, out) if k else (np.nan, 0)
        lo, hi = boxes[0, :3], boxes[0, 3:]
        py = best_us(lambda: bvh.query_aabb_into(tree, lo, hi, out), 20000 // (10 if quick else 1))
        rows[label] = {"kernel_us": ns / 1e3, "python_us": py, "mean_found": hits / m}
        print(f"  {label:44s} {ns / 1e3:8.3f} {py:8.3f} {hits / m:7.1f}")
    # two spheres in contact: b touches a at a random point, randomly rotated about its centre
    poses = 20 if quick else 200
    R = np.empty((poses, 3, 3))
    p = np.empty((poses, 3))
    for j in range(poses):
        d = rng.normal(size=3)
        R[j], p[j] = random_rotation(rng), 1.999 * d / np.linalg.norm(d)   # 1 mm overlap
    pairs_out = np.empty((1 << 16, 2), dtype=np.int32)
    for label, margin in (("pair query, touching spheres, margin 2.5 mm", 0.0025),
                          ("pair query, touching spheres, margin 5 cm", 0.05)):
        ns, pairs = k.query_pair_ns(tree, tree, R, p, margin, pairs_out) if k else (np.nan, 0)
        py = best_us(lambda: bvh.query_pair_into(tree, tree, R[0], p[0], margin, pairs_out),
                     200 if quick else 2000)
        rows[label] = {"kernel_us": ns / 1e3, "python_us": py, "mean_pairs": pairs / poses}
        print(f"  {label:44s} {ns / 1e3:8.3f} {py:8.3f} {pairs / poses:7.1f}")
    # a heightfield of 9940 triangles: cells by grid indexing vs the BVH of its mesh view
    h = rng.normal(size=(71, 72)) * 0.05
    hf_arrays = heightfield.make_heightfield_arrays(h, 0.1, 0.1)
    hf = heightfield.Heightfield(hf_arrays)
    hf_tree = bvh.BVHTree(hf_arrays["bvh"])
    lo, hi = np.array([3.0, 3.0, -0.1]), np.array([3.2, 3.2, 0.1])
    py_cells = best_us(lambda: heightfield.cells_into(hf, lo, hi, out), 20000)
    py_bvh = best_us(lambda: bvh.query_aabb_into(hf_tree, lo, hi, out), 20000)
    label = f"heightfield {hf.ntri} tris, 20 cm box: cells / BVH"
    rows[label] = {"python_us_cells": py_cells, "python_us_bvh": py_bvh}
    print(f"  {label:44s} {'':8s} {py_cells:8.3f} / {py_bvh:.3f} (python)")
    return rows


def scattered(rng, n):
    """n boxes (10-40 cm) at constant density in a cube: a pile of objects."""
    side = 1.2 * n ** (1 / 3)
    c = rng.uniform(0, side, (n, 3))
    h = rng.uniform(0.05, 0.2, (n, 3))
    return np.hstack([c - h, c + h])


def plane_grid(rng, n):
    """n 20 cm boxes on a floor in a square grid, 30 cm apart, plus the floor slab."""
    k = int(np.ceil(np.sqrt(n)))
    i, j = np.divmod(np.arange(n - 1), k)
    c = np.column_stack([i, j]) * 0.3
    boxes = np.column_stack([c - 0.1, np.zeros(n - 1), c + 0.1, np.full(n - 1, 0.2)])
    return np.vstack([[-100, -100, -1, 100, 100, 0], boxes])


def sap_rows(k, quick: bool, rng):
    print(f"\nsweep and prune, per call (frames: boxes move ~1 mm per step)")
    print(f"  {'layout':30s} {'n':>5s} {'pairs':>6s} {'scratch':>9s} {'coherent':>9s} "
          f"{'python':>8s} {'x-tests':>9s}")
    rows = {}
    for layout, make in (("scattered pile", scattered), ("boxes on a floor grid", plane_grid)):
        for n in (10, 100, 1000):
            boxes = make(rng, n)
            # few enough frames to stay in cache, as one step's boxes would
            frames_count = max(4, (2000 if quick else 20000) // n)
            steps = rng.normal(0, 1e-3, (frames_count, n, 3)).cumsum(axis=0)
            frames = np.ascontiguousarray(boxes[None] + np.concatenate([steps, steps], axis=2))
            if make is plane_grid:
                frames[:, 0] = boxes[0]            # the floor does not move
            order = np.arange(n, dtype=np.int32)
            start = np.arange(n, dtype=np.int32)
            out = np.empty((8 * n, 2), dtype=np.int32)
            if k:
                scratch, pairs = k.sap_ns(frames, order, start, out, True)
                coherent, _ = k.sap_ns(frames, order, start, out, False)
            else:
                scratch = coherent = pairs = np.nan
            kept = np.arange(n, dtype=np.int32)
            broadphase.overlapping_pairs_into(frames[0], kept, out)
            py = best_us(lambda: broadphase.overlapping_pairs_into(frames[0], kept, out),
                         2000 if quick else 20000)
            counts = broadphase.operation_counts(frames[0], kept)
            rows[f"{layout}, n={n}"] = {"pairs": pairs, "kernel_us_from_scratch": scratch / 1e3,
                                        "kernel_us_near_sorted": coherent / 1e3, "python_us": py,
                                        "x_overlap_tests": counts["overlap_tests"]}
            print(f"  {layout:30s} {n:5d} {pairs:6.0f} {scratch / 1e3:9.3f} {coherent / 1e3:9.3f} "
                  f"{py:8.3f} {counts['overlap_tests']:9d}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    k = kernels()
    rng = np.random.default_rng(0)
    results = {"bvh": bvh_rows(k, args.quick, rng), "sap": sap_rows(k, args.quick, rng)}
    print("\n(us per call; kernel = noexcept nogil kernel, python = validated wrapper)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
