"""Command line.

    sim_node [--ros-args ...]           the simulation node (same as `sim_node node`)
    sim_node demo [...]                 the main job: the node on a world, commanded over ROS
                                        topics by a demo controller, recorded to a bag, summed up
                                        (sim_node/ros/demo.py)
    sim_node replay BAG [...]           replay a recorded bag (sim_node/ros/replay.py)
    sim_node view [--node /sim] [--port 8080]   show a running node (or a bag played by
                                        `sim_node replay --states`) in the browser
                                        (sim_node/ros/view.py)
    sim_node tour [--world PATH] [--duration S]   headless tour of the Simulator API, no ROS
"""
from __future__ import annotations

import argparse
import sys

SUBCOMMANDS = ("node", "demo", "replay", "view", "tour")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help"):
        from sim_node.ros.main import run_node

        return run_node(["sim_node", *argv])
    if argv[0] == "node":
        from sim_node.ros.main import run_node

        return run_node(["sim_node", *argv[1:]])
    if argv[0] == "demo":
        from sim_node.ros.demo import main as demo

        return demo(argv[1:])
    if argv[0] == "replay":
        from sim_node.ros.replay import main as replay

        return replay(argv[1:])
    if argv[0] == "view":
        from sim_node.ros.view import main as view

        return view(argv[1:])
    parser = argparse.ArgumentParser(prog="sim_node", description="sim_node robot simulator")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("node", help="the simulation node (ROS arguments after --ros-args)")
    commands.add_parser("demo", help="the node on a world, commanded over topics by a demo "
                        "controller, recorded to a bag (sim_node demo --help)")
    commands.add_parser("replay", help="replay a recorded bag (sim_node replay --help)")
    commands.add_parser("view", help="show a running node in the browser (sim_node view "
                        "--help)")
    tour = commands.add_parser("tour", help="headless tour of the Simulator API on a world file "
                               "(default world if none given), no ROS")
    tour.add_argument("--world", help="world YAML or URDF (default: the embedded default world)")
    tour.add_argument("--duration", type=float, default=4.0, help="simulated seconds")
    args = parser.parse_args(argv)
    from sim_node.model.errors import ModelLoadError
    from sim_node.tour import run

    try:
        run(args.world, args.duration)
    except ModelLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
