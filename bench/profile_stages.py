"""Where sim_node's step spends its time: microseconds per step of each pipeline stage.

Scenes of bench/scenes.py, built by its builders: S3 (data/worlds/box_pile.yaml, 20 boxes
dropped in a pile) over the whole run and over its first 0.5 s (settling), S4
(data/worlds/quadruped.yaml, the quadruped dropped onto its feet under PD), S7
(data/worlds/bin_500.yaml, 500 mixed objects into a bin; its first 0.5 s, --s7-seconds) and S8
(data/worlds/talos.yaml, TALOS standing under PD). Each is run
REPEATS times from a freshly built scene with the engine's stage profile on
(Scene.set_profile: CLOCK_MONOTONIC around each stage, engine/pipeline/step.pyx); the run
with the smallest profiled total is kept. Printed as markdown: stage, µs/step, % of the step
(the sum of the stages), then that sum, the profiled step's wall time (the timers' own cost is
the difference) and the wall time of the same run with the profile off.

    python bench/profile_stages.py [--seconds 3.0] [--repeats 3]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scenes import (PHYSICS_DT, ours_s3_scene, ours_s4_scene, ours_s7_scene,  # noqa: E402
                          ours_s8_scene)


def profile(make, steps: int, repeats: int) -> dict:
    """Best of `repeats` profiled runs: {stage: µs/step}, plus the profiled and unprofiled wall
    µs/step (the unprofiled one best of its own `repeats` runs)."""
    best, wall_on, wall_off = None, None, float("inf")
    for _ in range(repeats):
        scene = make()
        scene.set_profile(True)
        scene.reset_counters()
        start = time.perf_counter()
        scene.step(PHYSICS_DT, steps)
        wall = (time.perf_counter() - start) / steps * 1e6
        stages = {name: seconds / steps * 1e6 for name, seconds in scene.stage_profile().items()}
        if best is None or sum(stages.values()) < sum(best.values()):
            best, wall_on = stages, wall
        scene = make()
        start = time.perf_counter()
        scene.step(PHYSICS_DT, steps)
        wall_off = min(wall_off, (time.perf_counter() - start) / steps * 1e6)
    return {"stages": best, "wall_profiled": wall_on, "wall": wall_off}


def table(title: str, result: dict) -> str:
    stages = result["stages"]
    total = sum(stages.values())
    lines = [f"\n{title}\n", "| stage | µs/step | % of step |", "|---|---:|---:|"]
    lines += [f"| {name} | {us:.2f} | {100 * us / total:.1f} |" for name, us in stages.items()]
    lines += [f"| **sum of stages** | **{total:.2f}** | 100.0 |",
              f"| step, profiled (wall) | {result['wall_profiled']:.2f} | |",
              f"| step, profile off (wall) | {result['wall']:.2f} | |"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="simulated time of a whole run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--s7-seconds", type=float, default=0.5,
                        help="simulated time of S7 (5 ms a step: its whole 2 s takes a while)")
    parser.add_argument("--only", nargs="*", default=["S3", "S4", "S7", "S8"],
                        help="scenes to profile (S3 S4 S7 S8)")
    args = parser.parse_args(argv)
    whole, settling = round(args.seconds / PHYSICS_DT), round(0.5 / PHYSICS_DT)
    runs = [(f"S3 box pile, whole run ({args.seconds:g} s)", ours_s3_scene, whole),
            ("S3 box pile, settling (first 0.5 s)", ours_s3_scene, settling),
            (f"S4 quadruped ({args.seconds:g} s)", ours_s4_scene, whole),
            (f"S7 bin of 500 objects (first {args.s7_seconds:g} s)", ours_s7_scene,
             round(args.s7_seconds / PHYSICS_DT)),
            (f"S8 TALOS standing ({args.seconds:g} s)", ours_s8_scene, whole)]
    runs = [run for run in runs if run[0][:2] in args.only]
    for title, make, steps in runs:
        print(table(title, profile(make, steps, args.repeats)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
