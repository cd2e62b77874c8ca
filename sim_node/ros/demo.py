"""The main job: the simulation node on a world, commanded over ROS topics, recorded to a bag.

    sim_node demo [--world PATH] [--duration S] [--real-time-factor X] [--bag DIR]

Starts the node (a separate process, `python -m sim_node`, on this machine's ROS domain with
discovery kept on localhost) recording a rosbag2 directory, then runs a demo controller in this
process: every fixed-base robot's joints follow slow sinusoids around their start through
`<ns>/position_commands`, every robot with a `cmd_vel` subscription (diff_drive) drives a
circle. At the end it stops the node and prints a summary: the real-time factor, the topics
with their measured rates, the contacts seen, the bag with its topics and message counts.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

AMPLITUDE = 0.25        # [rad] of the joint sinusoids
PERIOD = 4.0            # [s] of sim time


def parse(argv):
    parser = argparse.ArgumentParser(prog="sim_node demo", description=__doc__.splitlines()[0])
    parser.add_argument("--world", help="world YAML or URDF (default: the embedded default world)")
    parser.add_argument("--duration", type=float, default=6.0, help="simulated seconds")
    parser.add_argument("--real-time-factor", type=float, default=1.0,
                        help="target sim time / wall time (0: as fast as possible)")
    parser.add_argument("--bag", help="bag directory to write (default: a new temporary one)")
    return parser.parse_args(argv)


class _Controller:
    """Subscribes to the robots' joint states and the node's status and contacts; sends
    position commands (sinusoids about the first state seen) and cmd_vel."""

    def __init__(self, node, robots):
        from geometry_msgs.msg import Twist
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        from sim_node.msg import Contacts, SimStatus

        self.node = node
        self.start = {}
        self.counts: dict[str, list] = {}
        self.contact_pairs = set()
        self.status = None
        self.sim_time = 0.0
        self._lock = threading.Lock()
        self._publishers = {}
        self._twist = Twist
        self._array = Float64MultiArray
        for namespace, fixed_base, drives in robots:
            topic = f"/{namespace}/joint_states" if namespace else "/joint_states"
            node.create_subscription(JointState, topic,
                                     lambda m, ns=namespace, fb=fixed_base: self._joints(ns, fb, m),
                                     10)
            if fixed_base:
                self._publishers[namespace] = node.create_publisher(
                    Float64MultiArray, f"/{namespace}/position_commands", 10)
            if drives:
                self._publishers[namespace + "/cmd_vel"] = node.create_publisher(
                    Twist, f"/{namespace}/cmd_vel", 10)
        node.create_subscription(Clock, "/clock", self._clock, 10)
        node.create_subscription(Contacts, "/sim/contacts", self._contacts, 10)
        node.create_subscription(SimStatus, "/sim/status", self._status, 10)

    def _count(self, topic: str):
        with self._lock:
            self.counts.setdefault(topic, []).append(time.monotonic())

    def _clock(self, message):
        self._count("/clock")
        self.sim_time = message.clock.sec + message.clock.nanosec * 1e-9

    def _contacts(self, message):
        self._count("/sim/contacts")
        for c in message.contacts:
            self.contact_pairs.add(tuple(sorted((c.entity1, c.entity2))))

    def _status(self, message):
        self._count("/sim/status")
        self.status = message

    def _joints(self, namespace: str, fixed_base: bool, message):
        self._count(f"/{namespace}/joint_states")
        t = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        if namespace not in self.start:
            self.start[namespace] = list(message.position)
        if fixed_base:
            phase = 2 * math.pi * t / PERIOD
            target = [q + AMPLITUDE * math.sin(phase + 0.7 * j)
                      for j, q in enumerate(self.start[namespace])]
            self._publishers[namespace].publish(self._array(data=target))
        drive = self._publishers.get(namespace + "/cmd_vel")
        if drive is not None:
            twist = self._twist()
            twist.linear.x, twist.angular.z = 0.2, 0.4
            drive.publish(twist)

    def rates(self, since: float) -> dict:
        with self._lock:
            return {topic: len([s for s in stamps if s >= since]) / (time.monotonic() - since)
                    for topic, stamps in self.counts.items()}


def _robots(world_path):
    """(namespace, fixed base, drives with cmd_vel) of every robot of the world file."""
    from sim_node.model.world import WorldModel

    world = WorldModel()
    world.readFile(world_path)
    out = []
    for r in range(world.numRobots()):
        robot = world.robot(r)
        plugins = {p["name"] for p in robot.settings.get("plugins", [])}
        out.append((robot.settings.get("namespace", robot.getName()).strip("/"),
                    not robot.isFloatingBase(), "diff_drive" in plugins))
    return world, out


def main(argv=None) -> int:
    import rclpy

    from sim_node.resources import default_world

    args = parse(argv)
    world_path = Path(args.world or default_world())
    world, robots = _robots(world_path)
    bag = Path(args.bag) if args.bag else Path(tempfile.mkdtemp(prefix="sim_node_demo_")) / "bag"
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    command = [sys.executable, "-m", "sim_node", "--ros-args", "-p", f"world:={world_path}",
               "-p", f"real_time_factor:={args.real_time_factor}", "-p", f"record:={bag}"]
    print(f"starting the node on {world_path} ({world}), recording to {bag}")
    process = subprocess.Popen(command, env=env, start_new_session=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env.get("ROS_DOMAIN_ID", "0")))
    node = rclpy.create_node("demo_controller", context=context)
    controller = _Controller(node, robots)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    wall = time.monotonic()
    try:
        while controller.sim_time < args.duration and process.poll() is None:
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() - wall > 30 + 5 * args.duration and controller.sim_time == 0:
                print("error: the node published no /clock", file=sys.stderr)
                return 1
        measured = controller.rates(wall + 1.0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            process.wait(20)
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    return _summary(controller, measured, bag, process.returncode)


def _summary(controller, rates, bag, returncode) -> int:
    status = controller.status
    print(f"node exited with code {returncode}")
    if status is not None:
        print(f"sim time {controller.sim_time:.2f} s, steps {status.step_count}, real-time factor "
              f"{status.real_time_factor:.2f} (target {status.target_real_time_factor:g}), engine "
              f"{status.engine_status_string}")
    print("topics (messages per wall second):")
    for topic, rate in sorted(rates.items()):
        print(f"  {topic:40s} {rate:9.1f}")
    print(f"contacts seen ({len(controller.contact_pairs)} pairs):")
    for a, b in sorted(controller.contact_pairs):
        print(f"  {a} - {b}")
    from rosbags.highlevel import AnyReader

    with AnyReader([bag]) as reader:
        print(f"bag {bag}: {reader.message_count} messages, {reader.duration * 1e-9:.2f} s")
        for connection in sorted(reader.connections, key=lambda c: c.topic):
            print(f"  {connection.topic:40s} {connection.msgtype:35s} {connection.msgcount}")
    return 0 if returncode == 0 else 1
