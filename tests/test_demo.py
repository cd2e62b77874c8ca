"""The README's main job (headless demo on the default world) runs and reports real motion."""
import re
import subprocess
import sys

from sim_node.demo import run


def test_demo_on_default_world_holds_and_moves_the_arm():
    lines = []
    world = run(duration=2.0, out=lines.append)
    text = "\n".join(lines)
    assert "default.yaml" in text and "robot arm" in text and "terrain table" in text
    errors = [float(m) for m in re.findall(r"-> error ([-+0-9.e]+)", text)]
    assert errors and max(abs(e) for e in errors) < 0.01, text
    arm = world.robot("arm")
    q = arm.getConfig()
    assert q[arm.structure.joint_q_index["joint1"]] > 0.49


def test_command_line_demo_and_bad_world_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sim_node", "demo", "--duration", "0.2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Loaded" in done.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("robots: [{name: x}]\n")
    done = subprocess.run([sys.executable, "-m", "sim_node", "demo", "--world", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert f"{bad}:1: robots[0] ('x'): missing required key 'urdf'" in done.stderr
