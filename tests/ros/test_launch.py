"""launch/sim.launch.py: its arguments are the node's parameters with the node's defaults, it
starts the executable the package installs, and (where launch_ros and an installed sim_node
exist, i.e. a colcon workspace) it launches a node that runs.

launch / launch_ros are not on PyPI: without them the file is read as source (ast), which is
how the checks below catch a misspelt parameter, a wrong default or an executable that is not
installed before a ROS user does.
"""
import ast
import configparser
import importlib.util
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from node_harness import Client, NodeProcess, REPO, in_process_node, next_domain, ros_env

LAUNCH_FILE = REPO / "launch" / "sim.launch.py"
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
DOCUMENTED_ARGUMENTS = {"world", "real_time_factor", "physics_dt", "lockstep", "record",
                        "viewer", "viewer_port", "viewer_host", "viewer_rate", "use_sim_time"}
TYPES = {"str": str, "float": float, "bool": bool, "int": int}


def _source_tree() -> ast.Module:
    return ast.parse(LAUNCH_FILE.read_text(), filename=str(LAUNCH_FILE))


def _node_arguments(tree) -> dict:
    """NODE_ARGUMENTS of the launch file: name -> (type, default text, description)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["NODE_ARGUMENTS"]:
            table = {}
            for key, value in zip(node.value.keys, node.value.values):
                value_type, default, description = value.elts
                table[key.value] = (TYPES[value_type.id], default.value, description.value)
            return table
    raise AssertionError("launch/sim.launch.py has no NODE_ARGUMENTS table")


def _calls(tree, name: str) -> list:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == name]


def _keywords(call) -> dict:
    return {k.arg: k.value for k in call.keywords}


def _declared_arguments(tree) -> set:
    """Names of DeclareLaunchArgument calls: literal ones and the NODE_ARGUMENTS loop."""
    names = set()
    for call in _calls(tree, "DeclareLaunchArgument"):
        first = call.args[0]
        if isinstance(first, ast.Constant):
            names.add(first.value)
        elif isinstance(first, ast.Name) and first.id == "name":
            names |= set(_node_arguments(tree))
    return names


def _convert(text: str, value_type: type):
    """A launch argument's text as launch_ros converts it for value_type (yaml booleans)."""
    if value_type is bool:
        return {"true": True, "false": False}[text.lower()]
    return value_type(text)


def _parameters_of_a_node(overrides: dict) -> dict:
    """The parameters of a SimNode built in this process with these parameter overrides
    (pendulum world, no plugins; no simulation thread, no executor), alone on this machine."""
    with in_process_node(PENDULUM_WORLD, **overrides) as node:
        return {name: parameter.value
                for name, parameter in node.get_parameters_by_prefix("").items()}


@pytest.fixture(scope="module")
def node_parameters():
    """The parameters of a node started without parameters."""
    return _parameters_of_a_node({})


def test_launch_file_declares_the_documented_arguments():
    tree = _source_tree()
    assert _declared_arguments(tree) == DOCUMENTED_ARGUMENTS
    documentation = ast.get_docstring(tree) + (REPO / "launch" / "README.md").read_text()
    for name in DOCUMENTED_ARGUMENTS:
        assert re.search(rf"\b{name}\b", documentation), f"argument {name} is not documented"


def test_every_node_argument_is_a_node_parameter_with_the_nodes_default(node_parameters):
    """Launching without arguments runs the node as `sim_node` without parameters does: the
    launch defaults, given to a node, leave every parameter as it reads without them (e.g.
    physics_dt '0.0' means the world file's step, which the node then reports)."""
    arguments = _node_arguments(_source_tree())
    for name, (value_type, _, _) in arguments.items():
        assert name in node_parameters, f"the node declares no parameter '{name}'"
        assert type(node_parameters[name]) is value_type, (name, node_parameters[name])
    launched = _parameters_of_a_node({name: _convert(default, value_type)
                                      for name, (value_type, default, _) in arguments.items()})
    assert launched == node_parameters
    assert "use_sim_time" in node_parameters        # every rclpy node has it


def test_launch_node_is_the_installed_executable_named_sim():
    tree = _source_tree()
    [node] = _calls(tree, "Node")
    keywords = {k: v.value for k, v in _keywords(node).items() if isinstance(v, ast.Constant)}
    assert keywords["name"] == "sim"
    # the ROS package (package.xml, CMake project) and its console script
    package_xml = ElementTree.parse(REPO / "package.xml").getroot()
    assert keywords["package"] == package_xml.findtext("name") == "sim_node"
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert re.search(rf"^project\({keywords['package']}\)", cmake, re.M)
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    scripts = dict((part.strip() for part in line.split("=", 1)) for line in
                   setup["options.entry_points"]["console_scripts"].strip().splitlines())
    module, function = scripts[keywords["executable"]].split(":")
    assert callable(getattr(importlib.import_module(module), function))
    # `ros2 run/launch` look in lib/<package>; the launch directory is installed to share/
    assert 'SCRIPTS_DESTINATION "lib/${PROJECT_NAME}"' in cmake
    assert re.search(r"foreach\(_dir [^)]*\blaunch\b[^)]*\)", cmake)
    assert 'DESTINATION "share/${PROJECT_NAME}"' in cmake


def test_simulation_node_stays_off_sim_time_and_the_rest_follow_the_argument():
    tree = _source_tree()
    [set_parameter] = _calls(tree, "SetParameter")
    keywords = _keywords(set_parameter)
    assert keywords["name"].value == "use_sim_time"
    assert _calls(keywords["value"], "LaunchConfiguration")[0].args[0].value == "use_sim_time"
    [node] = _calls(tree, "Node")
    overrides = [ast.literal_eval(d) for d in ast.walk(_keywords(node)["parameters"])
                 if isinstance(d, ast.Dict) and all(isinstance(k, ast.Constant) for k in d.keys)]
    assert {"use_sim_time": False} in overrides
    # the override must come after the launch-wide value: launch_ros passes global parameters
    # first and the node's own after them, and the last one wins
    description = next(n for n in ast.walk(tree) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Name) and n.func.id == "LaunchDescription")
    order = [e.id if isinstance(e, ast.Name) else getattr(e, "func", None) and e.func.id
             for e in description.args[0].elts if not isinstance(e, ast.Starred)]
    assert order == ["SetParameter", "simulation"]


# -- with launch_ros (a ROS 2 install) ------------------------------------------------------
def _load_launch_module():
    spec = importlib.util.spec_from_file_location("sim_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_description_evaluates_with_launch_ros():
    launch = pytest.importorskip("launch")
    pytest.importorskip("launch_ros")
    from launch.utilities import perform_substitutions

    description = _load_launch_module().generate_launch_description()
    context = launch.LaunchContext()
    defaults = {argument.name: perform_substitutions(context, argument.default_value)
                for argument in description.get_launch_arguments()}
    assert set(defaults) == DOCUMENTED_ARGUMENTS
    assert defaults["use_sim_time"] == "true"
    for name, (_, default, _) in _load_launch_module().NODE_ARGUMENTS.items():
        assert defaults[name] == default


LAUNCHER = """
import sys
from launch import LaunchDescription, LaunchService
from launch.actions import IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource


def report(context):
    # what a node launched after the include gets as launch-wide parameters
    print("ros_params after the include:", context.launch_configurations.get("ros_params"),
          flush=True)


arguments = [tuple(a.split(":=", 1)) for a in sys.argv[2:]]
service = LaunchService()
service.include_launch_description(LaunchDescription([
    IncludeLaunchDescription(PythonLaunchDescriptionSource(sys.argv[1]),
                             launch_arguments=arguments),
    OpaqueFunction(function=report),
]))
sys.exit(service.run())
"""


class LaunchProcess(NodeProcess):
    """`sim.launch.py` under a LaunchService, in its own process group (stopped like a node:
    SIGINT to the group, so the launcher takes the node down with it)."""

    def __init__(self, domain: int, arguments: dict, log_path: Path):
        self.log_path = log_path
        self._log = open(log_path, "w")
        command = [sys.executable, "-c", LAUNCHER, str(LAUNCH_FILE),
                   *(f"{k}:={v}" for k, v in arguments.items())]
        self.process = subprocess.Popen(command, env=ros_env(domain), stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        cwd=REPO)


def test_launched_node_runs_with_the_arguments_on_its_own_clock(tmp_path):
    pytest.importorskip("launch")
    pytest.importorskip("launch_ros")
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python
    from rosgraph_msgs.msg import Clock

    try:
        prefix = Path(get_package_prefix("sim_node"))
    except PackageNotFoundError:
        pytest.skip("sim_node is not installed in an ament prefix (colcon build) here")
    if not (prefix / "lib" / "sim_node" / "sim_node").is_file():
        pytest.skip(f"{prefix} has no lib/sim_node/sim_node (an interfaces-only install)")
    domain = next_domain()
    launched = LaunchProcess(domain, {"world": PENDULUM_WORLD, "real_time_factor": "0",
                                      "viewer_host": "0.0.0.0"},
                             tmp_path / "launch.log")
    client = Client(domain)
    try:
        client.subscribe(Clock, "/clock")
        client.wait_for("/clock", 10, timeout=60)
        names = ["world", "real_time_factor", "lockstep", "use_sim_time", "viewer_host"]
        values = client.call(GetParameters, "/sim/get_parameters",
                             GetParameters.Request(names=names)).values
        got = {name: parameter_value_to_python(value) for name, value in zip(names, values)}
        assert got == {"world": str(PENDULUM_WORLD), "real_time_factor": 0.0,
                       "lockstep": False, "use_sim_time": False, "viewer_host": "0.0.0.0"}
        assert "ros_params after the include: {'use_sim_time': True}" in launched.log()
    finally:
        client.close()
        launched.stop()


# -- the viewer's parameters -------------------------------------------------------------------
def test_the_viewer_is_off_and_would_serve_this_machine_on_8080_by_default(node_parameters):
    assert (node_parameters["viewer"], node_parameters["viewer_port"],
            node_parameters["viewer_host"], node_parameters["viewer_rate"]) == \
        (False, 8080, "127.0.0.1", 15.0)


def _node_with_viewer(**viewer):
    """(node.viewer, node.sim.getTime() after one step) of a node started with viewer:=true
    and these parameters, in this process."""
    with in_process_node(PENDULUM_WORLD, viewer=True, **viewer) as node:
        node.request_steps(1)
        return node.viewer, node.sim.getTime()


@pytest.mark.parametrize("host", ["not a host", "300.1.1.1", "", "a..b", "-x"])
def test_a_malformed_viewer_host_is_refused_and_the_node_runs_without_its_viewer(host):
    from sim_node.ros.view import check_address

    with pytest.raises(ValueError, match=r"viewer host .*not an IP address or host name; "
                                         r"valid: e\.g\. 127\.0\.0\.1"):
        check_address(host, 0)
    viewer, sim_time = _node_with_viewer(viewer_host=host, viewer_port=0)
    assert viewer is None
    assert sim_time == pytest.approx(0.001)         # one pendulum step: the node runs


@pytest.mark.parametrize("rate", [0.0, -1.0, 30.5, float("nan"), float("inf")])
def test_a_viewer_rate_outside_0_30_hz_is_refused_and_the_node_runs_without_its_viewer(rate):
    viewer, sim_time = _node_with_viewer(viewer_rate=rate, viewer_port=0)
    assert viewer is None
    assert sim_time == pytest.approx(0.001)         # one pendulum step: the node runs


def test_the_viewer_draws_at_viewer_rate():
    viewer, _ = _node_with_viewer(viewer_rate=5.0, viewer_port=0)
    assert viewer is not None and viewer.drawing.period == pytest.approx(0.2)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "0.0.0.0"])
def test_well_formed_viewer_hosts_are_accepted(host):
    from sim_node.ros.view import check_address

    check_address(host, 8080)


def test_a_viewer_port_in_use_is_an_error_naming_it_and_the_node_runs_on():
    import socket

    from sim_node.ros.view import serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"cannot serve on 127\.0\.0\.1:{port}: port {port} "
                                          r"is in use"):
            serve("127.0.0.1", port)
        viewer, sim_time = _node_with_viewer(viewer_port=port)
        assert viewer is None and sim_time == pytest.approx(0.001)
        # sim_node view says the same and exits 2
        done = subprocess.run([sys.executable, "-m", "sim_node", "view", "--port", str(port)],
                              env=ros_env(next_domain()), capture_output=True, text=True,
                              timeout=120, cwd=REPO)
    assert done.returncode == 2
    assert f"port {port} is in use" in done.stderr, done.stderr


def test_an_address_not_of_this_machine_is_an_error_not_a_hang():
    from sim_node.ros.view import serve

    # TEST-NET-1 (RFC 5737): never a local address; viser alone tried port after port
    with pytest.raises(OSError, match=r"cannot serve on 192\.0\.2\.1:0: "):
        serve("192.0.2.1", 0)


def test_the_launch_file_forwards_the_viewer_arguments_to_the_node():
    tree = _source_tree()
    arguments = _node_arguments(tree)
    assert {name: arguments[name][:2] for name in ("viewer", "viewer_port", "viewer_host",
                                                   "viewer_rate")} == \
        {"viewer": (bool, "false"), "viewer_port": (int, "8080"),
         "viewer_host": (str, "127.0.0.1"), "viewer_rate": (float, "15.0")}
    # each NODE_ARGUMENTS entry becomes a parameter of the Node from its LaunchConfiguration
    [node] = _calls(tree, "Node")
    comprehension = next(n for n in ast.walk(_keywords(node)["parameters"])
                         if isinstance(n, ast.Name) and n.id == "parameters")
    assert comprehension is not None
    [parameters] = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["parameters"]]
    assert isinstance(parameters.value, ast.DictComp)
    assert "NODE_ARGUMENTS" in ast.unparse(parameters.value.generators[0].iter)
    assert "LaunchConfiguration(name)" in ast.unparse(parameters.value.value)
