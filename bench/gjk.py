"""Microseconds per convex_distance call (GJK, plus EPA when the cores overlap), in C.

Each pair is timed separated (gap 10 % of the size), in shallow contact (1 % penetration, the
usual contact-generation case) and deeply overlapping (30 %), at a fixed random orientation;
the time is the best of several repeats of many calls of the kernel (no Python in the loop).

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
    calls = 2000 if args.quick else 20000
    repeat = 3 if args.quick else 7
    s = shapes(np.random.default_rng(0))
    pairs = [("box", "box"), ("capsule", "box"), ("cylinder", "convex30"), ("sphere", "box"),
             ("cylinder", "box"), ("convex30", "convex30"), ("cylinder", "cylinder")]
    rows = {}
    print(f"{'pair':22s} {'separated':>10s} {'contact':>10s} {'deep':>10s}   [us per call]")
    for na, nb in pairs:
        a, b = s[na], dict(s[nb], p=np.zeros(3))
        row = {}
        for label, fraction in (("separated", 0.1), ("contact", -0.01), ("deep", -0.3)):
            placed = at_distance(a, b, fraction * 0.8)
            gjk.time_distance(placed, b, 100)
            t = min(gjk.time_distance(placed, b, calls) for _ in range(repeat))
            row[label] = {"us": t * 1e6, "iterations": gjk.iterations(placed, b),
                          "status": gjk.distance(placed, b)[4]}
        rows[f"{na}-{nb}"] = row
        print(f"{na + '-' + nb:22s} " + " ".join(f"{row[k]['us']:10.3f}" for k in row)
              + "   iterations " + "/".join(str(row[k]["iterations"]) for k in row))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
