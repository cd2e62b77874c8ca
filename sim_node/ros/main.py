"""`sim_node` (or `ros2 run sim_node sim_node`): run the simulation node until interrupted."""
from __future__ import annotations

import sys


def run_node(argv=None) -> int:
    import rclpy
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

    from sim_node.model.errors import ModelLoadError
    from sim_node.ros.node import SimNode

    rclpy.init(args=argv)
    try:
        try:
            node = SimNode()
        except (ModelLoadError, LookupError, ValueError, TypeError) as error:
            print(f"sim_node: cannot start: {error}", file=sys.stderr)
            return 2
        executor = MultiThreadedExecutor(num_threads=3)
        executor.add_node(node)
        node.start()
        node.get_logger().info(
            f"simulating {node.world} at physics_dt {node.physics_dt} s, real-time factor "
            f"{node.real_time_factor:g}{' (paused)' if node.paused else ''}")
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            node.stop()
            executor.shutdown()
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return 0
