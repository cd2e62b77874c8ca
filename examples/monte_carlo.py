"""The seed's Monte Carlo example: does a PID controller (kP 20, kI 8, kD 5) bring the one-link
pendulum to the target angle within 5 s from any start angle in [-pi, pi]?

    python examples/monte_carlo.py [--runs 100] [--seed 0] [--png monte_carlo.png]
                                   [--result result.txt] [--random-target] [--processes N]

Prints "start -> end" per run (with --random-target, "from start to target -> end": the target
is sampled in [-0.5, 0.5] rad and reaches the controller through the special 'args' item),
optionally writes those lines to --result, and draws the histogram of the final error
(final angle - target) to --png.
"""
from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import sim_node  # noqa: E402
from sim_node.sim import batch  # noqa: E402

WORLD = Path(__file__).resolve().parents[1] / "data" / "worlds" / "pendulum.yaml"
ITEM = "robots[0].config[0]"
DURATION = 5.0      # [s]


def sim_init(sim, target=0.0):
    """PID gains and the target angle [rad] (standing still) of the pendulum's controller."""
    controller = sim.controller(0)
    controller.setPIDGains([20], [8], [5])
    controller.setPIDCommand([target], [0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="number of simulations")
    parser.add_argument("--seed", type=int, default=0, help="seed of the start-angle sampler")
    parser.add_argument("--png", default="monte_carlo.png", help="histogram image to write")
    parser.add_argument("--result", help="also write the per-run lines to this text file")
    parser.add_argument("--random-target", action="store_true",
                        help="sample the target angle in [-0.5, 0.5] rad too (the 'args' item)")
    parser.add_argument("--processes", type=int, help="worker processes (default: all cores)")
    options = parser.parse_args(argv)

    world = sim_node.WorldModel()
    world.readFile(WORLD)
    rng = random.Random(options.seed)
    samplers = {ITEM: lambda: rng.uniform(-math.pi, math.pi)}
    if options.random_target:
        samplers["args"] = lambda: (rng.uniform(-0.5, 0.5),)
        return_items = ["robots[0].config"]
    else:
        return_items = ["robots[0].config", "robots[0].velocity"]

    start = time.perf_counter()
    runs = batch.monteCarloSim(world, DURATION, samplers, options.runs, return_items,
                               simInit=sim_init, processes=options.processes)
    elapsed = time.perf_counter() - start

    lines, errors = [], []
    for initial, result in runs:
        end = float(result[return_items[0]][0])
        if options.random_target:
            target = initial["args"][0]
            lines.append(f"from {initial[ITEM]:.6f} to {target:.6f} -> {end:.6f}")
        else:
            target = 0.0
            lines.append(f"{initial[ITEM]:.6f} -> {end:.6f}")
        errors.append(end - target)
    print("\n".join(lines))
    print(f"{options.runs} runs of {DURATION:g} s in {elapsed:.2f} s "
          f"({options.runs / elapsed:.0f} simulations/s); final |error| <= "
          f"{max(map(abs, errors), default=0.0):.4f} rad")
    if options.result:
        Path(options.result).write_text("\n".join(lines) + "\n")

    figure, axes = plt.subplots(figsize=(6, 4))
    axes.hist(errors, bins=20)
    axes.set_xlabel("final angle - target [rad]")
    axes.set_ylabel("runs")
    axes.set_title(f"PID pendulum after {DURATION:g} s, {options.runs} random starts")
    figure.tight_layout()
    figure.savefig(options.png)
    print(f"histogram: {options.png}")


if __name__ == "__main__":
    main()
