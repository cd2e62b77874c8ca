"""A third-party plugin in a distribution of its own (tests/plugins/third_party) registers through
the sim_node.sensors entry points: installed into a temporary directory, a process with that
directory on PYTHONPATH discovers it by name from a world file and runs it; the heights it
publishes match the swinging pendulum's closed form. Without the directory it is unknown."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from plugin_helpers import REPO

SOURCE = Path(__file__).resolve().parent / "third_party"
PENDULUM_URDF = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
PENDULUM_COM = 0.441535433071               # pendulum.urdf: centre of mass below the pivot [m]
PIVOT_HEIGHT = 1.0

# run in the subprocess: load the world, record what the plugins publish, swing the pendulum
SCRIPT = """
import json, sys
from sim_node import WorldModel
from sim_node.sim.plugin import available_plugins
from sim_node.sim.simulation import SimpleSimulator

world = WorldModel()
world.readFile(sys.argv[1])
published = []
def create_publisher(msg_type, topic, qos):
    class Publisher:
        def publish(self, message):
            published.append([topic, type(message).__name__, sim.getTime(), message.data])
    return Publisher()
sim = SimpleSimulator(world, default_plugins=[], create_publisher=create_publisher)
sim.controller(0).setJointCommands(["joint1"], "torque", tfeedforward=[0.0])
sim.setActualConfig(0, [1.2])
angles = {}
for _ in range(500):
    angles[round(sim.getTime(), 9)] = float(sim.getActualConfig(0)[0])
    sim.simulate(0.001)
print(json.dumps({"sensors": available_plugins("sim_node.sensors"), "published": published,
                  "angles": angles,
                  "plugins": [[p.ctx.name, type(p).__module__, p.enabled, p.error]
                              for p in sim.getPlugins()]}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example distribution installed (offline, no dependencies) into a temporary
    directory; built from a copy so that the source tree stays clean."""
    tmp = tmp_path_factory.mktemp("third_party")
    source = shutil.copytree(SOURCE, tmp / "source")
    target = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                    "--no-index", "--quiet", "--target", str(target), str(source)],
                   check=True, capture_output=True, text=True, timeout=300)
    return target


def _world(tmp_path) -> Path:
    path = tmp_path / "pendulum.yaml"
    path.write_text(f"""simulation: {{physics_dt: 0.001}}
robots:
  - name: pendulum
    urdf: {PENDULUM_URDF}
    plugins:
      - {{name: link_height, config: {{link: link1, rate: 50.0}}}}
""")
    return path


def _run(world: Path, pythonpath: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", SCRIPT, str(world)], env=env, cwd=world.parent,
                          capture_output=True, text=True, timeout=300)


def test_an_installed_third_party_sensor_is_discovered_and_runs(installed, tmp_path):
    result = _run(_world(tmp_path), str(installed))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert "link_height" in out["sensors"] and "imu" in out["sensors"]
    assert out["plugins"] == [["link_height", "sim_node_example_plugin", True, None]]
    published = out["published"]
    assert {(topic, kind) for topic, kind, _, _ in published} == {("pendulum/link_height",
                                                                  "Float64")}
    times = [t for _, _, t, _ in published]
    np.testing.assert_allclose(times, np.arange(25) * 0.02, atol=1e-9)     # 50 Hz, 0.5 s
    # the centre of mass of a pendulum at angle q: PENDULUM_COM below the pivot, turned by q
    for _, _, t, height in published:
        q = out["angles"][str(round(t, 9))]
        assert height == pytest.approx(PIVOT_HEIGHT - PENDULUM_COM * np.cos(q), abs=1e-9)
    heights = [h for *_, h in published]
    assert max(heights) - min(heights) > 0.1            # it swings


def test_without_the_distribution_the_plugin_name_is_unknown(tmp_path):
    result = _run(_world(tmp_path), None)
    assert result.returncode != 0
    assert "no sensor or actuator plugin named 'link_height'" in result.stderr
