"""`sim_node` (or `ros2 run sim_node sim_node`): run the simulation node until interrupted.

SIGINT and SIGTERM stop it in order: the simulation thread after its current step, the
recording (its bag closed), the executor, then the ROS context. rclpy's own signal handler is
not installed: it would shut the context down under a simulation thread that is still
publishing.

A node that cannot start (a bad world file, a parameter outside its bounds) prints one line,
``sim_node: cannot start: <what>: <problem>``, naming the file and line where there is one and
no Python exception names, and exits with code 2."""
from __future__ import annotations

import signal
import sys
import threading


def run_node(argv=None) -> int:
    import rclpy
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from sim_node.ros.node import SimNode, load_problem, one_line

    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    starting = True

    def on_signal(*_):
        stop.set()
        if starting:        # still loading (or waiting for robot_description_topic)
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            node = SimNode()
        except KeyboardInterrupt:
            return 0
        except Exception as error:      # noqa: BLE001 (one line, exit 2: module docstring)
            print(f"sim_node: cannot start: {one_line(load_problem(error))}", file=sys.stderr)
            return 2
        starting = False
        executor = MultiThreadedExecutor(num_threads=3)
        executor.add_node(node)

        def spin():
            try:
                executor.spin()
            except ExternalShutdownException:
                pass
            finally:
                stop.set()
        spinner = threading.Thread(target=spin, name="executor", daemon=True)
        spinner.start()
        node.start()
        node.get_logger().info(
            f"simulating {node.world} at physics_dt {node.physics_dt} s, real-time factor "
            f"{node.real_time_factor:g}{' (paused)' if node.paused else ''}")
        try:
            while not stop.wait(0.2):
                pass
        finally:
            node.stop()
            executor.shutdown()
            spinner.join()
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 0
