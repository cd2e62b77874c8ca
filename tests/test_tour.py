"""`sim_node tour` (the Simulator API without ROS, headless, on the default world) runs and
reports real motion."""
import re
import subprocess
import sys

from sim_node.tour import run


def test_tour_on_default_world_moves_the_robots_and_settles_the_objects_on_the_table():
    lines = []
    world = run(duration=2.0, out=lines.append)
    text = "\n".join(lines)
    assert "default.yaml" in text and "robot arm" in text and "terrain table" in text
    assert "status normal" in text
    # the milestone is reached (PID with its integral term: no gravity sag left)
    arm_error = float(re.search(r"robot arm: joint error max ([-+0-9.e]+)", text).group(1))
    assert arm_error < 5e-3, text
    pairs = text.split("touching pairs seen")[1].split("settled at")[0]
    for name in ("red_box", "green_cylinder", "blue_ball", "yellow_capsule"):
        assert f"{name} - table" in pairs or f"table - {name}" in pairs, text
        speed = float(re.search(rf"{name} +settled at .*\(speed ([-+0-9.e]+) m/s\)", text).group(1))
        assert speed < 1e-4
    assert "arm" not in pairs                                   # the arm touches nothing
    arm = world.robot("arm")
    q = arm.getConfig()
    assert q[arm.structure.joint_q_index["joint1"]] > 0.49
    # the mobile base drove forward: wheels at 2 rad/s for 1 s, radius 0.08 m: 0.16 m, plus
    # some rocking forward on its caster after the wheels stop
    base_x = world.robot("mobile_base").getConfig()[0]
    assert 0.15 < base_x < 0.22, text


def test_command_line_tour_and_bad_world_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sim_node", "tour", "--duration", "0.2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Loaded" in done.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("robots: [{name: x}]\n")
    done = subprocess.run([sys.executable, "-m", "sim_node", "tour", "--world", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert f"{bad}:1: robots[0] ('x'): missing required key 'urdf'" in done.stderr
