"""Microseconds per convex_distance call (GJK, plus EPA when the cores overlap), in C.

Each pair is timed separated (gap 10 % of the size), in shallow contact (1 % penetration, the
usual contact-generation case) and deeply overlapping (30 %), at 20 random relative
orientations: the table gives the mean and the slowest of them, each the best of several
repeats of many calls of the kernel (CPU time, no Python in the loop).

    python bench/gjk.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sim_node.engine import gjk  # noqa: E402


def shapes(rng):
    R = lambda: Rotation.random(random_state=rng).as_matrix()  # noqa: E731
    pts = rng.normal(size=(200, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    convex30 = pts[ConvexHull(pts).vertices][:30] * [0.5, 0.4, 0.3]
    return {
        "box": dict(type="box", size=[0.5, 0.4, 0.3], R=R()),
        "capsule": dict(type="capsule", size=[0.2, 0.4], R=R()),
        "cylinder": dict(type="cylinder", size=[0.3, 0.4], R=R()),
        "convex30": dict(type="convex", vertices=convex30, R=R()),
        "sphere": dict(type="sphere", size=[0.4]),
    }


def at_distance(a, b, target):
    """a moved along a fixed direction until distance(a, b) = target (bisection)."""
    u = np.array([0.48, -0.6, 0.64])
    lo, hi = 0.0, 5.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if gjk.distance(dict(a, p=mid * u), b)[0] < target:
            lo = mid
        else:
            hi = mid
    return dict(a, p=hi * u)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    calls = 500 if args.quick else 5000
    repeat = 3 if args.quick else 5
    poses = 5 if args.quick else 20
    pairs = [("box", "box"), ("capsule", "box"), ("cylinder", "convex30"), ("sphere", "box"),
             ("cylinder", "box"), ("convex30", "convex30"), ("cylinder", "cylinder")]
    regimes = (("separated", 0.1), ("contact", -0.01), ("deep", -0.3))
    rows = {}
    print(f"{'us per call':22s}" + "".join(f"{k:>22s}" for k, _ in regimes))
    print(f"{'pair':22s}" + "    mean   max (iter)" * len(regimes))
    for na, nb in pairs:
        row = {}
        for label, fraction in regimes:
            us, its = [], []
            for pose in range(poses):
                # A and B from separate draws: different orientations even for equal types
                a = shapes(np.random.default_rng(pose))[na]
                b = dict(shapes(np.random.default_rng(1000 + pose))[nb], p=np.zeros(3))
                placed = at_distance(a, b, fraction * 0.8)
                gjk.time_distance(placed, b, 50)
                us.append(min(gjk.time_distance(placed, b, calls) for _ in range(repeat)) * 1e6)
                its.append(gjk.iterations(placed, b))
            row[label] = {"mean_us": float(np.mean(us)), "max_us": float(np.max(us)),
                          "mean_iterations": float(np.mean(its)), "max_iterations": int(max(its))}
        rows[f"{na}-{nb}"] = row
        print(f"{na + '-' + nb:22s}" + "".join(
            f"{r['mean_us']:8.3f}{r['max_us']:7.2f} ({r['mean_iterations']:4.1f})" for r in row.values()))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
