"""The namespace rule: where each robot's topics and TF frames live.

A robot's namespace, first match wins:
    1. the node parameter ``robot_namespaces``: entries ``ROBOT=NAMESPACE``
    2. the robot's ``namespace`` key in the world file (a spawned robot: its entity_namespace)
    3. the root when the world holds one robot (``/joint_states``, ``/robot_description``,
       ``/joint_commands`` ..., frames ``<link>``: what robot_state_publisher, rviz and
       ros2_control expect), else the robot's name (``/<name>/joint_states``, frames
       ``<name>/<link>``)
Namespaces are relative to the node's namespace; '' and '/' both mean its root.

The rule is applied once, when the simulation is built from the world (``assign_namespaces``,
at node start and in a replay of its bag): robots spawned or deleted later move nobody's
topics. A robot whose namespace was never assigned (a plain SimpleSimulator) gets the rule
for the world it is in now (``robot_namespace``).
"""
from __future__ import annotations

import re

# a relative ROS namespace: name tokens separated by '/' ('' = the root)
_NAMESPACE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?\Z")


def robot_namespace(robot) -> str:
    """The namespace of a robot (a RobotModel), relative, without leading or trailing '/'
    ('' for the root)."""
    namespace = robot.settings.get("namespace")
    if namespace is not None:
        return namespace.strip("/")
    alone = robot.world is None or robot.world.numRobots() == 1
    return "" if alone else robot.getName()


def robot_prefix(robot) -> str:
    """``<namespace>/`` of a robot ('' at the root): the prefix of its topics and frames."""
    namespace = robot_namespace(robot)
    return f"{namespace}/" if namespace else ""


def parse_overrides(entries, robot_names) -> dict:
    """{robot name: namespace} of ``robot_namespaces`` entries 'ROBOT=NAMESPACE' (empty
    entries ignored); ValueError naming a malformed entry or an unknown robot."""
    overrides = {}
    for entry in entries:
        if not entry:
            continue
        name, separator, namespace = entry.partition("=")
        if not separator:
            raise ValueError(f"robot_namespaces entry '{entry}' is not ROBOT=NAMESPACE (e.g. "
                             f"'arm=/' for the root, 'arm=left_arm')")
        if name not in robot_names:
            raise ValueError(f"robot_namespaces entry '{entry}': no robot '{name}' in the "
                             f"world (robots: {', '.join(robot_names) or 'none'})")
        overrides[name] = namespace
    return overrides


def assign_namespaces(world, overrides=()) -> dict:
    """Apply the rule to every robot of `world` and keep the result in its settings (so that
    later spawns and deletes do not move it). overrides: ``robot_namespaces`` entries.
    Returns {robot name: namespace}. ValueError when a namespace is not a valid ROS namespace
    or two robots would share one (their topics would mix)."""
    robots = [world.robot(r) for r in range(world.numRobots())]
    parsed = parse_overrides(overrides, [robot.getName() for robot in robots])
    assigned, owner = {}, {}
    for robot in robots:
        name = robot.getName()
        namespace = parsed.get(name, robot_namespace(robot)).strip("/")
        if not _NAMESPACE.match(namespace):
            raise ValueError(f"robot '{name}': namespace '{namespace}' is not a valid ROS "
                             f"namespace (tokens [A-Za-z_][A-Za-z0-9_]* separated by '/'; "
                             f"'' or '/' for the root)")
        if namespace in owner:
            raise ValueError(f"robots '{owner[namespace]}' and '{name}' would share the "
                             f"namespace '/{namespace}'; give one of them its own (world file "
                             f"key namespace, or the parameter robot_namespaces)")
        owner[namespace] = name
        assigned[name] = namespace
    for robot in robots:
        robot.settings["namespace"] = assigned[robot.getName()]
    return assigned
