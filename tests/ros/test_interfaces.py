"""The ROS interfaces: sim_node's own msg/srv, and tf2_msgs / simulation_interfaces (built from
vendor/ where the pip wheels lack them) are importable, match the published definitions, and
travel over DDS. The last test builds the whole repository with colcon, as a ROS user would.

Published references: type hashes (RIHS01, over field names and types) and constants of
ros2/geometry2 tf2_msgs (Kilted) and simulation_interfaces 1.6.1 (Kilted, ros2-gbp), as found in
code generated from those releases.
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from node_harness import INSTALL_LAYOUT, next_domain

ROOT = Path(__file__).resolve().parents[2]

# Generated message code imports rosidl_parser, whose lark-parser 0.12 imports the deprecated
# sre_parse module; nothing this project can change.
pytestmark = pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")

SIMULATION_INTERFACES = {
    "msg": ["Bounds", "EntityCategory", "EntityFilters", "EntityInfo", "EntityState",
            "NamedPose", "Resource", "Result", "SimulationState", "SimulatorFeatures",
            "SpawnEntity", "SpawnResult", "Spawnable", "TagsFilter", "WorldResource"],
    "srv": ["DeleteEntity", "GetAvailableWorlds", "GetCurrentWorld", "GetEntities",
            "GetEntitiesStates", "GetEntityBounds", "GetEntityInfo", "GetEntityState",
            "GetNamedPoseBounds", "GetNamedPoses", "GetSimulationState", "GetSimulatorFeatures",
            "GetSpawnables", "LoadWorld", "ResetSimulation", "SetEntityInfo", "SetEntityState",
            "SetSimulationState", "SpawnEntities", "SpawnEntity", "StepSimulation",
            "UnloadWorld"],
    "action": ["SimulateSteps"],
}
TF2_MSGS = {"msg": ["TFMessage", "TF2Error"], "srv": ["FrameGraph"], "action": ["LookupTransform"]}

# Type hashes of the published packages (from their generated code).
PUBLISHED_TYPE_HASHES = {
    "tf2_msgs/msg/TFMessage": "e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
    "simulation_interfaces/msg/Bounds":
        "e8624fe51f0f5548197542697d924c5699ac7198f1e4c68e50c3ca2af73f5b3f",
    "simulation_interfaces/msg/EntityFilters":
        "8e7b12e8ea062f14c55de4877221fe1b7cd9749665a7ad8a4ab855fc4b148303",
    "simulation_interfaces/msg/EntityState":
        "2e0464a85eb80a939025075d6c20761eca6a4cb9d6baf2c0ba373467c8b598d0",
    "simulation_interfaces/msg/Resource":
        "2bb1939cf80f8d2f284afba53cbec60b5ff33759bd39b714128ea8867a34c51a",
    "simulation_interfaces/msg/Result":
        "cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17",
}
# Hash prefixes (first 8 bytes) of further published types.
PUBLISHED_TYPE_HASH_PREFIXES = {
    "simulation_interfaces/msg/EntityCategory": "43bdf7933fddf75f",
    "simulation_interfaces/msg/EntityInfo": "3b9a2e7fa00f9a59",
    "simulation_interfaces/msg/NamedPose": "b32da2a039b1840f",
    "simulation_interfaces/msg/SimulationState": "bb9f87ccdd98fba1",
    "simulation_interfaces/msg/SimulatorFeatures": "8b101c8529bc0ea3",
    "simulation_interfaces/msg/Spawnable": "8675aa686f0df1ed",
    "simulation_interfaces/msg/TagsFilter": "5c3efc51e8ed04c2",
    "simulation_interfaces/msg/WorldResource": "e3b65ecf904b9b11",
    "simulation_interfaces/srv/GetAvailableWorlds": "ce5589b5523f2732",
    "simulation_interfaces/srv/GetEntitiesStates": "0a76170d0c1c90e1",
    "simulation_interfaces/srv/GetSimulationState": "3362dcebee4b1afe",
    "simulation_interfaces/srv/GetSpawnables": "3e25fd827d8bcbd9",
    "simulation_interfaces/srv/LoadWorld": "87d0ded1bfddb40a",
    "simulation_interfaces/srv/ResetSimulation": "4ce285d7ff9b8ac7",
    "simulation_interfaces/srv/SpawnEntity": "66860313e11009fa",
    "simulation_interfaces/srv/StepSimulation": "913fe0653690ce6b",
}


def _import_type(package, kind, name):
    module = __import__(f"{package}.{kind}", fromlist=[name])
    return getattr(module, name)


def _type_hash(type_name):
    """RIHS01 hash of an installed interface, from the JSON rosidl installs next to it."""
    from ament_index_python.packages import get_package_share_directory
    package, kind, name = type_name.split("/")
    description = Path(get_package_share_directory(package), kind, f"{name}.json")
    hashes = json.loads(description.read_text())["type_hashes"]
    entry = next(h for h in hashes if h["type_name"] == type_name)
    return entry["hash_string"].removeprefix("RIHS01_")


def test_every_own_definition_file_has_a_generated_python_type():
    definitions = sorted((ROOT / "msg").glob("*.msg")) + sorted((ROOT / "srv").glob("*.srv")) \
        + sorted((ROOT / "action").glob("*.action"))
    assert {p.stem for p in definitions} >= {"Contact", "Contacts", "SimStatus", "PluginStatus"}
    for path in definitions:
        interface = _import_type("sim_node", path.suffix[1:], path.stem)
        assert interface.__module__.startswith(f"sim_node.{path.suffix[1:]}.")


@pytest.mark.parametrize("package, interfaces", [
    ("tf2_msgs", TF2_MSGS), ("simulation_interfaces", SIMULATION_INTERFACES)])
def test_every_upstream_interface_of_the_release_imports(package, interfaces):
    for kind, names in interfaces.items():
        for name in names:
            _import_type(package, kind, name)


@pytest.mark.parametrize("type_name", sorted(PUBLISHED_TYPE_HASHES))
def test_type_hash_equals_the_published_one(type_name):
    assert _type_hash(type_name) == PUBLISHED_TYPE_HASHES[type_name]


@pytest.mark.parametrize("type_name", sorted(PUBLISHED_TYPE_HASH_PREFIXES))
def test_type_hash_starts_like_the_published_one(type_name):
    assert _type_hash(type_name).startswith(PUBLISHED_TYPE_HASH_PREFIXES[type_name])


def test_simulation_interfaces_constants_equal_the_published_values():
    from simulation_interfaces.msg import (Bounds, EntityCategory, Result, SimulationState,
                                           SimulatorFeatures, SpawnResult, TagsFilter)
    from simulation_interfaces.srv import (GetAvailableWorlds, GetCurrentWorld, LoadWorld,
                                           ResetSimulation, SetEntityState, SetSimulationState,
                                           SpawnEntities, SpawnEntity, StepSimulation,
                                           UnloadWorld)

    def constants(cls, names):
        return {name: getattr(cls, name) for name in names}

    assert constants(Result, ["FEATURE_UNSUPPORTED", "OK", "NOT_FOUND", "INCORRECT_STATE",
                              "OPERATION_FAILED"]) == dict(
        FEATURE_UNSUPPORTED=0, OK=1, NOT_FOUND=2, INCORRECT_STATE=3, OPERATION_FAILED=4)
    features = dict(
        SPAWNING=0, DELETING=1, NAMED_POSES=2, POSE_BOUNDS=3, ENTITY_TAGS=4, ENTITY_BOUNDS=5,
        ENTITY_BOUNDS_BOX=6, ENTITY_BOUNDS_CONVEX=7, ENTITY_CATEGORIES=8,
        SPAWNING_RESOURCE_STRING=9, ENTITY_STATE_GETTING=10, ENTITY_STATE_SETTING=11,
        ENTITY_INFO_GETTING=12, ENTITY_INFO_SETTING=13, SPAWNABLES=14, SIMULATION_RESET=20,
        SIMULATION_RESET_TIME=21, SIMULATION_RESET_STATE=22, SIMULATION_RESET_SPAWNED=23,
        SIMULATION_STATE_GETTING=24, SIMULATION_STATE_SETTING=25, SIMULATION_STATE_PAUSE=26,
        STEP_SIMULATION_SINGLE=31, STEP_SIMULATION_MULTIPLE=32, STEP_SIMULATION_ACTION=33,
        WORLD_LOADING=40, WORLD_RESOURCE_STRING=41, WORLD_TAGS=42, WORLD_UNLOADING=43,
        WORLD_INFO_GETTING=44, AVAILABLE_WORLDS=45, SPAWNING_ENTITIES=50)
    assert constants(SimulatorFeatures, features) == features
    assert constants(SimulationState, ["STATE_STOPPED", "STATE_PLAYING", "STATE_PAUSED",
                                       "STATE_QUITTING", "STATE_NO_WORLD",
                                       "STATE_LOADING_WORLD"]) == dict(
        STATE_STOPPED=0, STATE_PLAYING=1, STATE_PAUSED=2, STATE_QUITTING=3, STATE_NO_WORLD=4,
        STATE_LOADING_WORLD=5)
    assert constants(ResetSimulation.Request, ["SCOPE_DEFAULT", "SCOPE_TIME", "SCOPE_STATE",
                                               "SCOPE_SPAWNED", "SCOPE_ALL"]) == dict(
        SCOPE_DEFAULT=0, SCOPE_TIME=1, SCOPE_STATE=2, SCOPE_SPAWNED=4, SCOPE_ALL=255)
    assert constants(EntityCategory, ["CATEGORY_OBJECT", "CATEGORY_ROBOT", "CATEGORY_HUMAN",
                                      "CATEGORY_DYNAMIC_OBJECT", "CATEGORY_STATIC_OBJECT"]) == \
        dict(CATEGORY_OBJECT=0, CATEGORY_ROBOT=1, CATEGORY_HUMAN=2, CATEGORY_DYNAMIC_OBJECT=4,
             CATEGORY_STATIC_OBJECT=5)
    assert constants(Bounds, ["TYPE_EMPTY", "TYPE_BOX", "TYPE_CONVEX_HULL", "TYPE_SPHERE"]) == \
        dict(TYPE_EMPTY=0, TYPE_BOX=1, TYPE_CONVEX_HULL=2, TYPE_SPHERE=3)
    assert (TagsFilter.FILTER_MODE_ANY, TagsFilter.FILTER_MODE_ALL) == (0, 1)
    spawn_codes = dict(NAME_NOT_UNIQUE=101, NAME_INVALID=102, UNSUPPORTED_FORMAT=103,
                       NO_RESOURCE=104, NAMESPACE_INVALID=105, RESOURCE_PARSE_ERROR=106,
                       MISSING_ASSETS=107, UNSUPPORTED_ASSETS=108, INVALID_POSE=109)
    assert constants(SpawnEntity.Response, spawn_codes) == spawn_codes
    assert constants(SpawnResult, spawn_codes) == spawn_codes
    assert SpawnEntities.Response.ENTITIES_SPAWN_FAILED == 150
    assert SetEntityState.Response.INVALID_POSE == 101
    assert constants(SetSimulationState.Response, ["ALREADY_IN_TARGET_STATE",
                                                   "STATE_TRANSITION_ERROR",
                                                   "INCORRECT_TRANSITION"]) == dict(
        ALREADY_IN_TARGET_STATE=101, STATE_TRANSITION_ERROR=102, INCORRECT_TRANSITION=103)
    world_codes = dict(UNSUPPORTED_FORMAT=101, NO_RESOURCE=102, RESOURCE_PARSE_ERROR=103,
                       MISSING_ASSETS=104, UNSUPPORTED_ASSETS=105, UNSUPPORTED_ELEMENTS=106)
    assert constants(LoadWorld.Response, world_codes) == world_codes
    assert GetAvailableWorlds.Response.DEFAULT_SOURCES_FAILED == 101
    assert GetCurrentWorld.Response.NO_WORLD_LOADED == 101
    assert UnloadWorld.Response.NO_WORLD_LOADED == 101
    assert StepSimulation.Request().steps == 1   # the published default


def test_tf2_error_codes_equal_the_published_values():
    from tf2_msgs.msg import TF2Error
    names = ["NO_ERRORS", "LOOKUP_ERROR", "CONNECTIVITY_ERROR", "EXTRAPOLATION_ERROR",
             "INVALID_ARGUMENT_ERROR", "TIMEOUT_ERROR", "TRANSFORM_ERROR"]
    assert [getattr(TF2Error, name) for name in names] == list(range(7))


def test_typesupport_of_every_package_loads_and_round_trips():
    """Serialising goes through the C typesupport libraries of each locally built package."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sim_node.msg import Contact, Contacts
    from simulation_interfaces.action import SimulateSteps
    from simulation_interfaces.srv import SpawnEntity
    from tf2_msgs.msg import TFMessage
    from geometry_msgs.msg import TransformStamped

    messages = [
        Contacts(contacts=[Contact(entity1="box", link2="base", depth=0.001)]),
        TFMessage(transforms=[TransformStamped(child_frame_id="box")]),
        SpawnEntity.Request(name="box", allow_renaming=True),
        SimulateSteps.Goal(steps=10),
    ]
    for message in messages:
        assert deserialize_message(serialize_message(message), type(message)) == message


@pytest.fixture
def ros_context(monkeypatch):
    """An rclpy context on this machine only, in a domain no other test run uses."""
    import rclpy
    domain_id = next_domain()
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    try:
        yield context
    finally:
        context.try_shutdown()


def test_contacts_message_travels_over_dds(ros_context):
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sim_node.msg import Contact, Contacts

    node = Node("test_interfaces_contacts", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    received = []
    try:
        publisher = node.create_publisher(Contacts, "contacts", 10)
        node.create_subscription(Contacts, "contacts", received.append, 10)
        sent = Contacts(contacts=[Contact(entity1="robot", link1="foot", entity2="ground",
                                          depth=0.002)])
        sent.header.frame_id = "world"
        deadline = time.monotonic() + 20.0
        while not received and time.monotonic() < deadline:
            publisher.publish(sent)   # again until discovery has matched the endpoints
            executor.spin_once(timeout_sec=0.1)
        assert received, "no Contacts message arrived within 20 s"
        assert received[0] == sent
    finally:
        executor.shutdown()
        node.destroy_node()


def _colcon():
    tool = ROOT / ".venv" / "ros" / "colcon" / "bin" / "colcon"
    return str(tool) if tool.exists() else shutil.which("colcon")


@pytest.mark.slow
@pytest.mark.ros
def test_colcon_build_of_the_repository_installs_a_runnable_package(tmp_path):
    """What a ROS user gets from `colcon build` in a workspace that contains this repository."""
    colcon = _colcon()
    if colcon is None:
        pytest.skip("colcon not found (./dev setup installs it into .venv/ros/colcon)")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "sim_node").symlink_to(ROOT)
    venv = Path(sys.prefix)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               AMENT_PREFIX_PATH=str(venv), CMAKE_PREFIX_PATH=str(venv))
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    fix = ROOT / "cmake" / "pip_wheels_fix.cmake"   # needed against the pip wheels only
    result = subprocess.run(
        [colcon, "build", "--base-paths", "src", "--event-handlers", "console_cohesion+",
         "--cmake-args", *generator, f"-DCMAKE_PROJECT_INCLUDE={fix}", "-DBUILD_TESTING=OFF",
         f"-DPython3_EXECUTABLE={sys.executable}"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=600)
    assert result.returncode == 0, result.stdout[-5000:]

    install = tmp_path / "install" / "sim_node"
    package = install / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
        / "site-packages" / "sim_node"
    # One merged package: the hand-written __init__.py, the generated msg/srv, the engine.
    assert (package / "__init__.py").read_text() == \
        (ROOT / "sim_node" / "__init__.py").read_text()
    assert (package / "msg" / "_contacts.py").is_file()
    assert (package / "srv" / "__init__.py").is_file()
    built = tmp_path / "build" / "sim_node" / "cython_engine" / "lib" / "sim_node" / "engine"
    for pyx in (ROOT / "sim_node" / "engine").glob("*.pyx"):
        modules = list(built.glob(f"{pyx.stem}.*.so"))   # built by CMake, not copied from the tree
        assert len(modules) == 1, f"CMake built no module for {pyx.name}"
        installed = package / "engine" / modules[0].name
        assert installed.read_bytes() == modules[0].read_bytes()
    executable = install / "lib" / "sim_node" / "sim_node"
    assert executable.is_file() and os.access(executable, os.X_OK)
    # the layout of the pip setup's prefix (tests/ros/test_install.py)
    for path in INSTALL_LAYOUT:
        assert (install / path).exists(), path
    assert not (install / "share" / "sim_node" / "launch").is_symlink()   # os.walk-able

    # The installed tree on its own (as after `source install/setup.bash`) imports and runs.
    env.update(PYTHONPATH=str(package.parent),
               AMENT_PREFIX_PATH=f"{install}{os.pathsep}{venv}",
               LD_LIBRARY_PATH=f"{install / 'lib'}{os.pathsep}{env.get('LD_LIBRARY_PATH', '')}")
    check = ("import sim_node.msg, sim_node.engine; "
             "print(sim_node.msg.__file__, sim_node.msg.Contacts())")
    result = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith(str(package)), result.stdout
    result = subprocess.run([str(executable), "--help"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout
