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
