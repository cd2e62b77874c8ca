"""The pip setup's ament prefix (.venv/ros/install) is a complete install of the package: what
the ROS 2 command-line tools look up there works without them (ros2cli, launch and launch_ros
are not on PyPI), the way they look it up.

    ament index     get_package_prefix / get_package_share_directory / the resource index find
                    sim_node in the prefix, with its package.xml
    ros2 pkg executables / ros2 run     the executables are the executable files under
                    <prefix>/lib/sim_node (ros2pkg's get_executable_paths): exactly `sim_node`,
                    and run from a bare shell (no venv, no env.sh) it starts the node: /clock
                    arrives, step by step, and SIGINT stops it with exit code 0
    ros2 launch sim_node sim.launch.py  the file is found under the package's share directory
                    (ros2launch's get_share_file_path_from_package) and is the repository's
    env.sh          a foreign CPython 3.11 (the distribution's /usr/bin/python3, not the venv's)
                    in a shell that sourced only env.sh imports sim_node.msg, tf2_msgs and
                    simulation_interfaces from the prefix, and receives /sim/status of a running
                    node by type name as `ros2 topic echo /sim/status` does
The prefix holds what a colcon install holds (node_harness.INSTALL_LAYOUT; the colcon build in
tests/ros/test_interfaces.py checks its install against the same list).
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from ament_index_python.packages import (get_package_prefix, get_package_share_directory,
                                         get_resource, get_resources)
from rosgraph_msgs.msg import Clock

from node_harness import (DEEP, INSTALL_LAYOUT, REPO, Client, NodeProcess, next_domain, ns,
                          ros_env)

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]

PREFIX = Path(sys.prefix) / "ros" / "install"
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
SYSTEM_PYTHON = Path("/usr/bin/python3")
# a shell with nothing of this project in it
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
            "LANG": "C.UTF-8"}


def executable_paths(package: str) -> list[str]:
    """What `ros2 pkg executables <package>` lists and `ros2 run` chooses from (ros2pkg's
    get_executable_paths): the executable files under <prefix>/lib/<package>, hidden
    directories skipped."""
    base = Path(get_package_prefix(package)) / "lib" / package
    paths = []
    for directory, subdirectories, files in os.walk(base):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        paths += [os.path.join(directory, f) for f in sorted(files)
                  if os.access(os.path.join(directory, f), os.X_OK)]
    return paths


def share_file(package: str, name: str) -> list[Path]:
    """Where `ros2 launch <package> <name>` finds the file (ros2launch's
    get_share_file_path_from_package: every match under the package's share directory)."""
    return [Path(directory, name) for directory, _, files
            in os.walk(get_package_share_directory(package)) if name in files]


def foreign_python() -> Path:
    """A CPython 3.11 that is not this venv's: the distribution's, or else the venv's base."""
    for candidate in (SYSTEM_PYTHON, Path(sys._base_executable)):
        if candidate.is_file():
            version = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                     capture_output=True, text=True, env=BARE_ENV).stdout
            if version.strip() == "(3, 11)":
                return candidate
    pytest.skip("no CPython 3.11 besides the venv's (the ROS wheels' extensions are cp311)")


def in_env_sh(command: str, domain: int) -> dict:
    """A bare shell's environment after `source env.sh` (and `command` run in it)."""
    return subprocess.run(["bash", "-c", f"source {REPO / 'env.sh'} && {command}"],
                          env=ros_env(domain, BARE_ENV), capture_output=True, text=True,
                          timeout=120, cwd="/")


# -- the ament index ---------------------------------------------------------------------------
def test_the_package_is_in_the_ament_index_with_its_share_directory():
    assert Path(get_package_prefix("sim_node")) == PREFIX
    assert Path(get_package_share_directory("sim_node")) == PREFIX / "share" / "sim_node"
    assert Path(get_resources("packages")["sim_node"]) == PREFIX
    content, prefix = get_resource("packages", "sim_node")
    assert Path(prefix) == PREFIX
    manifest = ElementTree.parse(PREFIX / "share" / "sim_node" / "package.xml").getroot()
    assert manifest.findtext("name") == "sim_node"
    assert manifest.findtext("version") == \
        ElementTree.parse(REPO / "package.xml").getroot().findtext("version")
    for path in INSTALL_LAYOUT:
        assert (PREFIX / path).exists(), path


def test_the_launch_file_and_the_data_are_the_repositorys():
    [launch_file] = share_file("sim_node", "sim.launch.py")
    assert launch_file == PREFIX / "share" / "sim_node" / "launch" / "sim.launch.py"
    assert launch_file.read_text() == (REPO / "launch" / "sim.launch.py").read_text()
    share = Path(get_package_share_directory("sim_node"))
    for world in (REPO / "data" / "worlds").glob("*.yaml"):
        assert (share / "data" / "worlds" / world.name).read_bytes() == world.read_bytes()


# -- ros2 pkg executables / ros2 run -------------------------------------------------------------
def test_ros2_pkg_executables_lists_the_sim_node_executable():
    assert [Path(p).name for p in executable_paths("sim_node")] == ["sim_node"]
    [launcher] = executable_paths("sim_node")
    text = Path(launcher).read_text()
    assert text.startswith("#!/bin/sh\n")
    assert f'exec "{sys.executable}" -m sim_node "$@"' in text


def test_ros2_run_starts_the_node_from_a_bare_shell_and_sigint_stops_it(tmp_path):
    """`ros2 run sim_node sim_node --ros-args ...` with nothing set up: the executable the
    ament index gives, in an environment without the venv, env.sh or AMENT_PREFIX_PATH."""
    [executable] = executable_paths("sim_node")
    domain = next_domain()
    node = NodeProcess(domain, {"world": str(PENDULUM_WORLD), "real_time_factor": 0.0,
                                "default_plugins": [""]},
                       executable=[executable], env=BARE_ENV, log_path=tmp_path / "node.log")
    client = Client(domain)
    try:
        client.subscribe(Clock, "/clock", DEEP)
        stamps = [ns(m.clock) for m in client.wait_for("/clock", 20, timeout=120)]
        # the pendulum world's 1 ms steps (running free, the node may outrun this client: on
        # the grid and increasing, not necessarily every one)
        assert all(t % 1_000_000 == 0 for t in stamps)
        assert all(b > a for a, b in zip(stamps, stamps[1:]))
    finally:
        client.close()
        code = node.stop(timeout=30)
    assert code == 0, node.log()
    assert "Traceback" not in node.log()


# -- env.sh: another interpreter ------------------------------------------------------------------
def test_env_sh_lets_another_python_import_the_interfaces_from_the_prefix():
    python = foreign_python()
    modules = ("sim_node.msg", "tf2_msgs.msg", "simulation_interfaces.srv")
    script = f"import importlib; [print(importlib.import_module(m).__file__) for m in {modules}]"
    result = in_env_sh(f'{python} -c "{script}"', next_domain())
    assert result.returncode == 0, result.stdout + result.stderr
    # the very files this interpreter imports: the generated code in the prefix (tf2_msgs and
    # simulation_interfaces where the setup built them, else the wheels')
    files = [Path(line) for line in result.stdout.split()]
    assert files == [Path(importlib.import_module(m).__file__) for m in modules]
    assert files[0].is_relative_to(PREFIX / "lib" / "python3.11" / "site-packages")


ECHO = """
import importlib, sys, time
import rclpy
from rclpy.qos import QoSProfile

def get_message(name):   # rosidl_runtime_py.utilities.get_message, as `ros2 topic echo` uses
    package, kind, type_name = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), type_name)

rclpy.init()
node = rclpy.create_node("echo")
received = []
node.create_subscription(get_message("sim_node/msg/SimStatus"), "/sim/status",
                         received.append, QoSProfile(depth=10))
deadline = time.monotonic() + 120
while not received and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.1)
status = received[0]
print(type(status).__module__, status.step_count, status.sim_time.sec, status.sim_time.nanosec)
"""


def test_env_sh_lets_another_python_echo_the_status_topic(tmp_path):
    """`ros2 topic echo /sim/status` from a `ros2` of another interpreter: the type resolved by
    name from the prefix, its typesupport loaded, a message received."""
    python = foreign_python()
    domain = next_domain()
    (tmp_path / "echo.py").write_text(ECHO)
    node = NodeProcess(domain, {"world": str(PENDULUM_WORLD), "real_time_factor": 0.0,
                                "status_rate": 10.0, "default_plugins": [""]},
                       log_path=tmp_path / "node.log")
    try:
        result = in_env_sh(f"{python} {tmp_path / 'echo.py'}", domain)
    finally:
        node.stop(timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr + node.log()
    module, step_count, sec, nanosec = result.stdout.split()
    assert module == "sim_node.msg._sim_status"
    # a status reports its own sim time: step_count steps of 1 ms
    assert int(step_count) * 1_000_000 == int(sec) * 1_000_000_000 + int(nanosec)
