"""The README's main job (headless demo on the default world) runs and reports real motion."""
import re
import subprocess
import sys

from sim_node.demo import run


def test_demo_on_default_world_moves_the_arm_and_settles_the_objects_on_the_table():
    lines = []
    world = run(duration=2.0, out=lines.append)
    text = "\n".join(lines)
    assert "default.yaml" in text and "robot arm" in text and "terrain table" in text
    arm_error = float(re.search(r"robot arm: joint error max ([-+0-9.e]+)", text).group(1))
    assert arm_error < 0.05, text                     # PD sag only, no collapse
    for name in ("red_box", "green_cylinder", "blue_ball", "yellow_capsule"):
        assert f"{name} - table" in text or f"table - {name}" in text, text
        speed = float(re.search(rf"{name} +settled at .*\(speed ([-+0-9.e]+) m/s\)", text).group(1))
        assert speed < 1e-4
    assert "arm/" not in text.split("touching pairs seen")[1].split("red_box  ")[0]   # arm touches nothing
    arm = world.robot("arm")
    q = arm.getConfig()
    assert q[arm.structure.joint_q_index["joint1"]] > 0.45


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
