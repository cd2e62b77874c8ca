"""The example scripts run as documented."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_dynamics_tour_runs_and_recovers_the_acceleration():
    done = subprocess.run([sys.executable, str(REPO / "examples" / "dynamics_tour.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "batch RNEA: (10000, 8)" in done.stdout
    line = next(line for line in done.stdout.splitlines() if "recovers ddq to" in line)
    assert float(line.split()[-1]) < 1e-9


def test_monte_carlo_example_prints_every_run_and_writes_a_png_histogram(tmp_path):
    from PIL import Image

    png = tmp_path / "histogram.png"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "monte_carlo.py"), "--runs",
                           "10", "--seed", "3", "--png", str(png)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = [line.split(" -> ") for line in done.stdout.splitlines() if " -> " in line]
    assert len(runs) == 10
    starts = [float(start) for start, _ in runs]
    assert all(-3.1416 <= s <= 3.1416 for s in starts) and len(set(starts)) == 10
    assert all(abs(float(end)) < 0.05 for _, end in runs)     # PID brings it near 0 in 5 s
    with Image.open(png) as image:
        image.verify()
        assert image.format == "PNG" and image.size[0] > 100


def test_simulation_tour_runs_the_seeds_examples_with_real_effects():
    done = subprocess.run([sys.executable, str(REPO / "examples" / "simulation_tour.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    milestone = next(line for line in lines if line.startswith("milestones done"))
    assert "remaining 0.0 s" in milestone and float(milestone.split()[-2]) < 5e-3
    # 4 N up on a 0.2 kg box resting on the table, for 10 ms: v = (4 / 0.2 - 9.81) 0.01
    speed = float(next(line for line in lines if line.startswith("pushed box")).split()[-2])
    assert abs(speed - (4.0 / 0.2 - 9.81) * 0.01) < 1e-3
    # kinematic: 0.05 m/s for 1 s from its resting height 0.77 m
    rose = float(next(line for line in lines if line.startswith("kinematic capsule")).split()[-2])
    assert abs(rose - 0.82) < 2e-3
    # the table carries the 0.2 kg box: the force on the table from it is its weight, down
    line = next(line for line in lines if "table - red_box: contact force" in line)
    force = [float(x) for x in line.split("[")[1].split("]")[0].split(",")]
    assert abs(force[0]) < 1e-3 and abs(force[1]) < 1e-3 and abs(force[2] + 0.2 * 9.81) < 1e-3
