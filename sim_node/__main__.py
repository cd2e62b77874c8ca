"""Command line: ``sim_node demo [--world PATH] [--duration S]``."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="sim_node", description="sim_node robot simulator")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="headless demo on a world file (default world if "
                               "none given): loads it, simulates it, prints what happened")
    demo.add_argument("--world", help="world YAML or URDF (default: the embedded default world)")
    demo.add_argument("--duration", type=float, default=4.0, help="simulated seconds")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from sim_node.demo import run
        from sim_node.model.errors import ModelLoadError

        try:
            run(args.world, args.duration)
        except ModelLoadError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
