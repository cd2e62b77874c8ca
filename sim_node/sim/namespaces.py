"""The namespace rule: where each robot's topics and TF frames live (DESIGN.md §6).

A robot's namespace, first match wins:
    1. an override given when the rule is applied (the node parameter ``robot_namespaces``)
    2. the robot's own ``settings.namespace`` (world-file key ``namespace``; a spawned robot:
       its requested namespace)
    3. the root when the world holds one robot (``/joint_states``, ``/robot_description``,
       frames ``<link>``: what robot_state_publisher, rviz and ros2_control expect), else the
       robot's name (``/<name>/joint_states``, frames ``<name>/<link>``)
Namespaces are relative (to the node's namespace): '' is the root; a leading or trailing '/'
is dropped.

The rule is applied once, when the simulation is built from the world (``assign_namespaces``):
robots spawned or deleted later move nobody's topics. A robot whose namespace was never
assigned gets the rule for the world it is in now (``robot_namespace``).

Frame names follow the namespace: ``world`` for the world, ``<namespace>/<link>`` for a robot's
links (``<link>`` at the root), as robot_state_publisher's frame_prefix does; rigid objects and
terrains by their names.
"""
from __future__ import annotations

import re
from dataclasses import replace

WORLD_FRAME = "world"
# a relative namespace: name tokens separated by '/' ('' = the root)
NAMESPACE_PATTERN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?\Z")
NAMESPACE_RULE = ("tokens [A-Za-z_][A-Za-z0-9_]* separated by '/'; '' or '/' for the root")


def robot_namespace(robot) -> str:
    """The namespace of a robot (a RobotModel), relative, without leading or trailing '/'
    ('' for the root)."""
    namespace = robot.settings.namespace
    if namespace is not None:
        return namespace.strip("/")
    alone = robot.world is None or robot.world.numRobots() == 1
    return "" if alone else robot.getName()


def robot_prefix(robot) -> str:
    """``<namespace>/`` of a robot ('' at the root): the prefix of its topics and frames."""
    namespace = robot_namespace(robot)
    return f"{namespace}/" if namespace else ""


def link_frame(robot, link_index: int) -> str:
    """The TF frame of a robot's link."""
    return robot_prefix(robot) + robot.structure.link_names[link_index]


def check_namespace(namespace: str, what: str) -> str:
    """A namespace without leading or trailing '/'; ValueError naming `what` when it is not a
    valid relative ROS namespace."""
    stripped = namespace.strip("/")
    if not NAMESPACE_PATTERN.match(stripped):
        raise ValueError(f"{what}: namespace '{namespace}' is not a valid ROS namespace "
                         f"({NAMESPACE_RULE})")
    return stripped


def namespace_owner(world, namespace: str, robots=None):
    """The robot of `world` (or of `robots`) whose namespace is `namespace`, or None."""
    robots = robots if robots is not None else [world.robot(r) for r in range(world.numRobots())]
    for robot in robots:
        if robot_namespace(robot) == namespace:
            return robot
    return None


def assign_namespaces(world, overrides: dict | None = None) -> dict:
    """Apply the rule to every robot of `world` and keep the result in its settings (so that
    later spawns and deletes do not move it). overrides: {robot name: namespace}. Returns
    {robot name: namespace}. ValueError when a namespace is not a valid ROS namespace or two
    robots would share one (their topics would mix)."""
    robots = [world.robot(r) for r in range(world.numRobots())]
    overrides = overrides or {}
    assigned, owner = {}, {}
    for robot in robots:
        name = robot.getName()
        namespace = check_namespace(overrides.get(name, robot_namespace(robot)),
                                    f"robot '{name}'")
        if namespace in owner:
            raise ValueError(f"robots '{owner[namespace]}' and '{name}' would share the "
                             f"namespace '/{namespace}'; give one of them its own (world file "
                             f"key namespace, or the parameter robot_namespaces)")
        owner[namespace] = name
        assigned[name] = namespace
    for robot in robots:
        robot.settings = replace(robot.settings, namespace=assigned[robot.getName()])
    return assigned
