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
