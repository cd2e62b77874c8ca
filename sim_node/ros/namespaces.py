"""The namespace rule as the node applies it: its parameter ``robot_namespaces`` (entries
``ROBOT=NAMESPACE``) overrides the rule of sim_node/sim/namespaces.py, which decides where each
robot's topics and TF frames live (one robot: the root; several: each its name; a world-file
``namespace`` key overrides either way). Plugins use these names for their topics and frames.
"""
from __future__ import annotations

from sim_node.sim import namespaces as rule
from sim_node.sim.namespaces import WORLD_FRAME, link_frame, robot_namespace, robot_prefix

__all__ = ["WORLD_FRAME", "assign_namespaces", "link_frame", "parse_overrides",
           "robot_namespace", "robot_prefix"]


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


def assign_namespaces(world, entries=()) -> dict:
    """The rule applied to every robot of `world` (sim_node.sim.namespaces.assign_namespaces)
    with the ``robot_namespaces`` entries as overrides; {robot name: namespace}."""
    names = [world.robot(r).getName() for r in range(world.numRobots())]
    return rule.assign_namespaces(world, parse_overrides(entries, names))
