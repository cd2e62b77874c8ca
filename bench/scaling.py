"""How the step cost grows: µs per 1 ms step vs number of bodies and vs DOF, sim_node, PyBullet
and MuJoCo in this one process, with the log-log slope per engine (linear = 1).

Bodies: S7's bin (bench/make_bin.py) with 10, 30, 100, 300 and 1,000 objects of the same mix, the
bin's area growing with the count (about ten layers each); 2 s simulated per run, timed over the
whole run and over its last 0.5 s (the pile at rest). MuJoCo runs its CG solver there (its default
Newton solver slows to ~100 ms a step on S7's 500 objects, bench/scenes.py).
DOF: a generated "snake" (a floating box link and n revolute joints about alternating z / y axes,
box links 0.09 x 0.04 x 0.04 m, 0.5 kg) held straight by a joint PD (kp 20 N m/rad, kd 0.2
N m s/rad, the PD inside each engine as in bench/scenes.py S4), n = 7, 15, 30, 60: in the air,
falling freely (no contact), and lying on the ground (4 box corners per link on the plane).
1 s simulated, best of 3 runs.

Every run is one freshly built scene with only the stepping timed; engines interleave per size.
A run is cut off after MAX_RUN_SECONDS of wall time (marked '>' in the table, its µs/step over
the steps done). The machine is shared: the numbers carry its load.

    python bench/scaling.py [--quick] [--json out.json]     (writes bench/scaling.png)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_bin  # noqa: E402
import scenes  # noqa: E402
from scenes import PHYSICS_DT, Quadruped, Sim  # noqa: E402

BODY_COUNTS = (10, 30, 100, 300, 1000)
DOFS = (7, 15, 30, 60)
BIN_SECONDS, SETTLED_SECONDS = 2.0, 0.5
SNAKE_SECONDS = 1.0
SNAKE_REPEATS = 3
MAX_RUN_SECONDS = 60.0          # wall time per run before it is cut off
CHUNK = 50                      # steps per timed call (the cut-off is checked between calls)
LINK = (0.09, 0.04, 0.04)       # [m] snake link box
LINK_MASS = 0.5                 # [kg]
KP, KD = 20.0, 0.2              # [N m/rad], [N m s/rad]
FRICTION = 0.5
PNG = Path(__file__).resolve().parent / "scaling.png"


# ---------------------------------------------------------------------------------------------
# The scenes


def snake_urdf(n: int) -> str:
    """A floating box link and n revolute joints about alternating z and y axes, links 0.1 m apart
    along x (boxes, not touching: 1 cm gaps), URDF damping 0."""
    lx, ly, lz = LINK
    inertia = [LINK_MASS / 12 * (b * b + c * c) for b, c in ((ly, lz), (lx, lz), (lx, ly))]

    def link(i):
        return (f'<link name="l{i}"><inertial><mass value="{LINK_MASS}"/>'
                f'<inertia ixx="{inertia[0]:.6g}" iyy="{inertia[1]:.6g}" izz="{inertia[2]:.6g}" '
                'ixy="0" ixz="0" iyz="0"/></inertial>'
                f'<collision><geometry><box size="{lx} {ly} {lz}"/></geometry></collision></link>')

    joints = [f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
              f'<origin xyz="0.1 0 0"/><axis xyz="{"0 0 1" if i % 2 else "0 1 0"}"/>'
              '<limit lower="-3" upper="3" effort="50" velocity="20"/></joint>'
              for i in range(1, n + 1)]
    return "\n".join([f'<robot name="snake{n}">', *(link(i) for i in range(n + 1)), *joints,
                      "</robot>"]) + "\n"


def snake_world(n: int, folder: Path, on_ground: bool) -> tuple[Path, Quadruped]:
    """(world file for sim_node, the same scene for the other engines)."""
    urdf = folder / f"snake{n}.urdf"
    urdf.write_text(snake_urdf(n))
    z = LINK[2] / 2 if on_ground else 10.0      # 1 s of free fall from 10 m stays in the air
    names = [f"j{i}" for i in range(1, n + 1)]
    world = folder / f"snake{n}_{'ground' if on_ground else 'air'}.yaml"
    world.write_text(
        "simulation: {physics_dt: 0.001}\n"
        f"robots:\n  - name: snake\n    urdf: {urdf}\n    fixed_base: false\n"
        f"    pose: {{position: [0.0, 0.0, {z}], orientation: [0, 0, 0, 1]}}\n"
        f"    controller: {{kp: {KP}, ki: 0.0, kd: {KD}}}\n"
        f"    surface: {{kFriction: {FRICTION}}}\n    self_collision: false\n"
        "terrains:\n  - name: ground\n    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}\n"
        f"    surface: {{kFriction: {FRICTION}}}\n")
    scene = Quadruped(urdf=urdf, base_position_W=np.array([0.0, 0.0, z]),
                      base_quat_xyzw_W=np.array([0.0, 0.0, 0.0, 1.0]),
                      q_des={name: 0.0 for name in names}, kp={name: KP for name in names},
                      kd={name: KD for name in names}, friction=FRICTION,
                      ground_friction=FRICTION)
    return world, scene


def ours_robot(world_path: Path) -> Sim:
    """S4's sim_node setup on any one-robot world file: the PD from its controller section."""
    return scenes.ours_pd_robot(world_path)


# ---------------------------------------------------------------------------------------------
# Timing


def timed(make, phases: list) -> list:
    """µs/step of each phase (number of steps) of one run, and whether the run was cut off:
    [(µs, complete)] per phase; a run past MAX_RUN_SECONDS stops, its later phases None."""
    sim = make()
    try:
        out, spent = [], 0.0
        for steps in phases:
            done, elapsed = 0, 0.0
            while done < steps and spent + elapsed < MAX_RUN_SECONDS:
                n = min(CHUNK, steps - done)
                start = time.perf_counter()
                sim.step(n)
                elapsed += time.perf_counter() - start
                done += n
            spent += elapsed
            out.append((elapsed / done * 1e6, done == steps) if done else None)
        return out
    finally:
        sim.close()


def body_engines(world: Path):
    return {"sim_node": lambda: scenes.ours_s7(world),
            "PyBullet": lambda: scenes.pybullet_s7(scenes.read_bin(world)),
            "MuJoCo CG": lambda: scenes.mujoco_s7(scenes.read_bin(world), 'solver="CG"')}


def snake_engines(world: Path, scene: Quadruped):
    return {"sim_node": lambda: ours_robot(world),
            "PyBullet": lambda: scenes.pybullet_s4(scene),
            "MuJoCo": lambda: scenes.mujoco_s4(scene)}


def scale_bodies(counts, folder: Path, seconds: float) -> dict:
    """engine -> {count: {"whole": (µs, complete), "settled": (µs, complete) | None}}."""
    whole = round(seconds / PHYSICS_DT)
    settled = round(min(SETTLED_SECONDS, seconds / 4) / PHYSICS_DT)
    table = {}
    for count in counts:
        world = make_bin.write_world(count, folder / f"bin_{count}.yaml")
        for engine, make in body_engines(world).items():
            first, last = timed(make, [whole - settled, settled])
            if first is None:
                total = None
            elif first[1] and last is not None and last[1]:
                total = ((first[0] * (whole - settled) + last[0] * settled) / whole, True)
            else:
                total = (first[0], False)           # cut off: µs/step over the steps done
            table.setdefault(engine, {})[count] = {"whole": total, "settled": last}
            print(f"  bodies {count:5d} {engine:10s} " + _cell(total) + "  settled "
                  + _cell(last), flush=True)
    return table


def scale_dofs(dofs, folder: Path, seconds: float, repeats: int) -> dict:
    """variant ("air" | "ground") -> engine -> {dof: (µs, complete)}, best of `repeats`."""
    steps = round(seconds / PHYSICS_DT)
    table = {}
    for variant in ("air", "ground"):
        for n in dofs:
            world, scene = snake_world(n, folder, on_ground=variant == "ground")
            best = {}
            for _ in range(repeats):
                for engine, make in snake_engines(world, scene).items():
                    (result,) = timed(make, [steps])
                    if engine not in best or result[0] < best[engine][0]:
                        best[engine] = result
            for engine, result in best.items():
                table.setdefault(variant, {}).setdefault(engine, {})[n] = result
                print(f"  snake {variant:6s} {n:3d} DOF {engine:10s} {_cell(result)}", flush=True)
    return table


def _cell(result) -> str:
    if result is None:
        return "-"
    us, complete = result
    return ("" if complete else ">") + f"{us:,.1f}"


def slope(points: dict) -> float:
    """Least-squares slope of log(µs) against log(size) over the complete runs."""
    pairs = [(n, r[0]) for n, r in sorted(points.items()) if r is not None and r[1]]
    if len(pairs) < 2:
        return math.nan
    n, us = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(n, us, 1)[0])


# ---------------------------------------------------------------------------------------------
# Output


def markdown(bodies: dict, snakes: dict) -> str:
    lines = ["| bodies | " + " | ".join(f"{e} whole / settled" for e in bodies) + " |",
             "|---|" + "---|" * len(bodies)]
    counts = sorted({c for table in bodies.values() for c in table})
    for count in counts:
        cells = [f"{_cell(bodies[e][count]['whole'])} / {_cell(bodies[e][count]['settled'])}"
                 for e in bodies]
        lines.append(f"| {count} | " + " | ".join(cells) + " |")
    lines.append("| slope | " + " | ".join(
        f"{slope({c: v['whole'] for c, v in bodies[e].items()}):.2f} / "
        f"{slope({c: v['settled'] for c, v in bodies[e].items()}):.2f}" for e in bodies) + " |")
    lines.append("")
    engines = list(next(iter(snakes.values())))
    lines.append("| DOF | " + " | ".join(f"{e} air / ground" for e in engines) + " |")
    lines.append("|---|" + "---|" * len(engines))
    dofs = sorted({n for v in snakes.values() for t in v.values() for n in t})
    for n in dofs:
        lines.append(f"| {n} | " + " | ".join(
            f"{_cell(snakes['air'][e][n])} / {_cell(snakes['ground'][e][n])}"
            for e in engines) + " |")
    lines.append("| slope | " + " | ".join(
        f"{slope(snakes['air'][e]):.2f} / {slope(snakes['ground'][e]):.2f}"
        for e in engines) + " |")
    return "\n".join(lines)


def plot(bodies: dict, snakes: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    colors = {"sim_node": "C0", "PyBullet": "C1", "MuJoCo": "C2", "MuJoCo CG": "C2"}

    def series(ax, points, label, color, style):
        pairs = [(n, r[0]) for n, r in sorted(points.items()) if r is not None and r[1]]
        if pairs:
            ax.loglog(*zip(*pairs), style, color=color,
                      label=f"{label} (slope {slope(points):.2f})")

    for engine, table in bodies.items():
        series(left, {c: v["whole"] for c, v in table.items()}, f"{engine} whole run",
               colors[engine], "o-")
        series(left, {c: v["settled"] for c, v in table.items()}, f"{engine} at rest",
               colors[engine], "s--")
    for variant, style in (("air", "o-"), ("ground", "s--")):
        for engine, table in snakes[variant].items():
            series(right, table, f"{engine} {variant}", colors[engine], style)
    for ax, sizes, title, xlabel in (
            (left, BODY_COUNTS, "S7 bin: free objects", "objects"),
            (right, DOFS, "snake: floating base + n joints", "joint DOF")):
        lo, hi = ax.get_ylim()
        x = np.array([sizes[0], sizes[-1]], dtype=float)
        ax.loglog(x, lo * 2 * x / x[0], ":", color="grey", label="slope 1")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("µs per 1 ms step")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="0.5 s runs, up to 300 objects and 30 DOF, one repeat")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--png", default=str(PNG))
    args = parser.parse_args(argv)
    counts = BODY_COUNTS[:-1] if args.quick else BODY_COUNTS
    dofs = DOFS[:-1] if args.quick else DOFS
    print("engines: " + ", ".join(f"{e} {v}" for e, v in scenes.engine_versions().items()))
    with tempfile.TemporaryDirectory() as tmp:
        print(f"bodies: S7 mix, {0.5 if args.quick else BIN_SECONDS:g} s per run")
        bodies = scale_bodies(counts, Path(tmp), 0.5 if args.quick else BIN_SECONDS)
        print(f"DOF: snake, {0.5 if args.quick else SNAKE_SECONDS:g} s per run")
        snakes = scale_dofs(dofs, Path(tmp), 0.5 if args.quick else SNAKE_SECONDS,
                            1 if args.quick else SNAKE_REPEATS)
    print()
    print(markdown(bodies, snakes))
    plot(bodies, snakes, Path(args.png))
    print(f"\nplot: {args.png}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"bodies": {e: {str(c): v for c, v in t.items()} for e, t in bodies.items()},
             "snakes": {k: {e: {str(n): r for n, r in t.items()} for e, t in v.items()}
                        for k, v in snakes.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
