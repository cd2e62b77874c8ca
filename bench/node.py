"""Node benchmark: the simulation node as a separate process over DDS, the 7-DOF arm at 1 kHz.

The node (`python -m sim_node`) runs data/worlds/arm.yaml (the arm of the default world alone,
physics_dt 1 ms; its only robot, so its topics are at the root) with real_time_factor 0 and its
default robot plugins: joint_states, /tf and /clock published every step. This process talks to
it over DDS on a domain of its own, on this machine only.

N1 free run       ~/status at 2 Hz; RTF = sim time over wall time between the status messages of
                  a window (their sim_time over their arrival time here). Twice: with no other
                  subscriber, and with this process subscribed to joint_states, /tf and /clock
                  (counting what arrives).
N2 lockstep       lockstep on /effort_commands; this process is the topic-based controller:
                  for every joint_states it publishes PD torques (default.yaml's kp, kd; no
                  integral term, so the arm sags a little) toward the pose of the first state.
                  Measured here per step k:
                    cycle      arrival of joint_states k -> arrival of joint_states k + 1: one
                               round trip state -> controller -> command -> node step -> state
                    controller arrival of joint_states k -> its command published
                  and, derived, the DDS transport both ways (state to here, command to the
                  node) = cycle - controller - the node's step time (1 / N1's steps per
                  second without subscribers); the steps per second in lockstep.
                  Check: the node publishes the state stamped t_k in step k, before that step
                  applies the commands it holds, and reports as effort the torque of the last
                  physics step (after the effort limits), so the command computed from the
                  state t_k is applied at step k + 1 exactly when the joint_states stamped
                  t_{k+2} reports it as its effort. Counted value for value.
N3 pacing         real_time_factor 1, then 2 set at run time (parameter service), then 0.5
                  through ~/set_real_time_factor: sim time over wall time between the ~/status
                  messages (5 Hz) of a window, against the target, and the real-time factor the
                  status messages report (each over the wall time since the one before) against
                  that measurement. (These were timing asserts in tests/ros/test_node_rate.py;
                  the tests now check what the node is told and reports, not the wall clock.)
N4 sensors        data/worlds/default.yaml as shipped (issue 12): the arm with its RGB-D camera
                  (640 x 480, 30 Hz), the mobile base with its lidar (360 rays, 10 Hz), the
                  default plugins, real_time_factor 0; RTF as N1 (no command sent), and this
                  process subscribed (best effort) to the camera's image_raw and the scan: the
                  rate of their header stamps in sim time (30 and 10 when no frame is skipped),
                  and the plugins' mean wall time per call from ~/status.
The first 0.5 s of sim time of each run is warm-up (not measured).

Targets (issue 5): RTF >= 10 at real_time_factor 0; in lockstep the command for step k is
applied at step k + 1 (every step); paced runs within 10 % of their target, the reported
real-time factor within 10 % of the measured one. Issue 12: N4's RTF >= 5.

    python bench/node.py [--seconds 10] [--only N1,N2,N3,N4] [--json out.json]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ARM_WORLD = REPO / "data" / "worlds" / "arm.yaml"
DEFAULT_WORLD = REPO / "data" / "worlds" / "default.yaml"
SENSOR_TOPICS = {"/arm/camera/image_raw": 30.0, "/mobile_base/scan": 10.0}   # N4: [Hz] set
TARGET_SENSOR_RTF = 5.0
DT_NS = 1_000_000                   # arm.yaml's physics_dt
WARM_UP_NS = 500 * DT_NS
TARGET_RTF = 10.0
STATES, EFFORT = "/joint_states", "/effort_commands"       # the world's only robot: at the root
PACED = (("parameter", 1.0), ("parameter", 2.0), ("service", 0.5))   # N3: how set, target
DOMAIN = 60 + os.getpid() % 40      # a domain of its own (<= 101: DDS ports below the ephemeral range)
START_TIMEOUT = 120.0               # [s] node start and discovery on a loaded machine


class Node:
    """The node process on DOMAIN, stopped with SIGINT (its log kept for errors)."""

    def __init__(self, **params):
        command = [sys.executable, "-m", "sim_node", "--ros-args"]
        for name, value in params.items():
            text = str(value).lower() if isinstance(value, bool) else (
                "[" + ",".join(f"'{v}'" for v in value) + "]" if isinstance(value, list)
                else str(value))
            command += ["-p", f"{name}:={text}"]
        self.log = tempfile.NamedTemporaryFile("w+", prefix="sim_node_", suffix=".log")
        self.process = subprocess.Popen(command, env=ros_env(), stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        cwd=REPO)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.seek(0)
        return self.log.read()


def ros_env() -> dict:
    return dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")


class Client:
    """An rclpy node of this process on DOMAIN, spun on a thread."""

    def __init__(self):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN)
        self.node = rclpy.create_node("bench_node", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while not self._stop.is_set() and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:           # the context is going down
                return

    def play(self):
        """~/set_simulation_state(PLAYING): after the endpoints made before it are known to
        the node (DDS announces them in creation order)."""
        from simulation_interfaces.msg import SimulationState
        from simulation_interfaces.srv import SetSimulationState

        client = self.node.create_client(SetSimulationState, "/sim/set_simulation_state")
        if not client.wait_for_service(timeout_sec=START_TIMEOUT):
            raise TimeoutError("the node did not come up")
        future = client.call_async(SetSimulationState.Request(
            state=SimulationState(state=SimulationState.STATE_PLAYING)))
        deadline = time.monotonic() + START_TIMEOUT
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError("set_simulation_state did not answer")
            time.sleep(0.01)
        if future.result().result.result != 1:
            raise RuntimeError(future.result().result.error_message)

    def close(self):
        # the spinning thread first: a context shut down under spin_once segfaults
        self._stop.set()
        self.thread.join(timeout=30)
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def deep_qos():
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)


# -- N1: free run ------------------------------------------------------------------------------
def free_run(seconds: float, subscribed: bool) -> dict:
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from sim_node.msg import SimStatus

    node = Node(world=str(ARM_WORLD), real_time_factor=0.0, paused=True, status_rate=2.0)
    client = Client()
    try:
        status = []
        counts = {STATES: 0, "/tf": 0, "/clock": 0}
        client.node.create_subscription(
            SimStatus, "/sim/status", lambda m: status.append((time.monotonic(), m)), 100)
        if subscribed:
            for topic, kind in ((STATES, JointState), ("/tf", TFMessage), ("/clock", Clock)):
                def count(message, topic=topic):
                    counts[topic] += 1
                client.node.create_subscription(kind, topic, count, deep_qos())
        client.play()
        deadline = time.monotonic() + START_TIMEOUT
        while not any(ns(m.sim_time) >= WARM_UP_NS for _, m in status):
            if time.monotonic() > deadline:
                raise TimeoutError("no ~/status past the warm-up")
            time.sleep(0.05)
        start = len(status)
        start_counts = dict(counts)
        time.sleep(seconds)
        window = status[start - 1:]
        (wall0, first), (wall1, last) = window[0], window[-1]
        sim = (ns(last.sim_time) - ns(first.sim_time)) * 1e-9
        steps = last.step_count - first.step_count
        return {"rtf": sim / (wall1 - wall0), "steps_per_s": steps / (wall1 - wall0),
                "received_per_step": {t: (counts[t] - start_counts[t]) / max(steps, 1)
                                      for t in counts} if subscribed else None}
    finally:
        client.close()
        log = node.stop()
        if "Traceback" in log:
            print(log, file=sys.stderr)


# -- N4: the default world's sensors -----------------------------------------------------------
def sensor_run(seconds: float) -> dict:
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image, LaserScan

    from sim_node.msg import SimStatus

    node = Node(world=str(DEFAULT_WORLD), real_time_factor=0.0, paused=True, status_rate=2.0)
    client = Client()
    try:
        status, stamps = [], {topic: [] for topic in SENSOR_TOPICS}
        client.node.create_subscription(
            SimStatus, "/sim/status", lambda m: status.append((time.monotonic(), m)), 100)
        for topic, kind in zip(SENSOR_TOPICS, (Image, LaserScan)):
            client.node.create_subscription(
                kind, topic, lambda m, t=topic: stamps[t].append(ns(m.header.stamp)),
                qos_profile_sensor_data)
        client.play()
        deadline = time.monotonic() + START_TIMEOUT
        while not any(ns(m.sim_time) >= WARM_UP_NS for _, m in status):
            if time.monotonic() > deadline:
                raise TimeoutError("no ~/status past the warm-up")
            time.sleep(0.05)
        start = len(status)
        time.sleep(seconds)
        window = status[start - 1:]
        (wall0, first), (wall1, last) = window[0], window[-1]
        t0, t1 = ns(first.sim_time), ns(last.sim_time)
        sim = (t1 - t0) * 1e-9
        rates = {topic: sum(t0 <= s < t1 for s in got) / sim for topic, got in stamps.items()}
        plugins = {f"{p.name}[{p.robot}]": p.mean_time_us for p in last.plugins}
        return {"rtf": sim / (wall1 - wall0), "steps_per_s": (last.step_count
                                                               - first.step_count)
                / (wall1 - wall0), "sensor_rates": rates, "plugin_mean_us": plugins}
    finally:
        client.close()
        log = node.stop()
        if "Traceback" in log:
            print(log, file=sys.stderr)


# -- N2: lockstep -------------------------------------------------------------------------------
def arm_gains(names) -> tuple[np.ndarray, np.ndarray]:
    """kp, kd of default.yaml's arm for these joints (the world the bench's arm comes from)."""
    [arm] = [r for r in yaml.safe_load(ARM_WORLD.read_text())["robots"] if r["name"] == "arm"]
    gains = arm["controller"]
    return (np.array([gains["kp"][n] for n in names]),
            np.array([gains["kd"][n] for n in names]))


def lockstep_run(seconds: float) -> dict:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    node = Node(world=str(ARM_WORLD), real_time_factor=0.0, paused=True, status_rate=0.0,
                lockstep=True, lockstep_topics=[EFFORT], lockstep_timeout=5.0)
    client = Client()
    steps = round(seconds * 1e9 / DT_NS) + WARM_UP_NS // DT_NS
    arrival, published, commands, efforts = {}, {}, {}, {}
    done = threading.Event()
    try:
        publisher = client.node.create_publisher(Float64MultiArray, EFFORT, deep_qos())
        control = {}

        def on_state(message):
            now = time.monotonic()
            k = ns(message.header.stamp) // DT_NS
            arrival[k] = now
            efforts[k] = np.array(message.effort)
            if not control:
                control["kp"], control["kd"] = arm_gains(message.name)
                control["q0"] = np.array(message.position)      # hold the start pose
            tau = (control["kp"] * (control["q0"] - np.array(message.position))
                   - control["kd"] * np.array(message.velocity))
            commands[k] = tau
            publisher.publish(Float64MultiArray(data=tau.tolist()))
            published[k] = time.monotonic()
            if k >= steps:
                done.set()

        client.node.create_subscription(JointState, STATES, on_state, deep_qos())
        client.play()
        if not done.wait(START_TIMEOUT + 20 * seconds):
            raise TimeoutError(f"lockstep: {len(arrival)} of {steps} steps")
    finally:
        client.close()
        log = node.stop()
    first = WARM_UP_NS // DT_NS
    ks = [k for k in range(first, steps) if k in arrival and k + 1 in arrival]
    cycle = np.array([arrival[k + 1] - arrival[k] for k in ks]) * 1e3
    controller = np.array([published[k] - arrival[k] for k in ks]) * 1e3
    applied = sum(np.array_equal(efforts.get(k + 2), commands[k]) for k in range(steps - 1))
    return {"steps": steps, "missing_states": sum(k not in arrival for k in range(steps + 1)),
            "applied_next_step": int(applied), "checked": steps - 1,
            "timeouts_logged": log.count("lockstep: no command on"),
            "cycle_ms": percentiles(cycle), "controller_ms": percentiles(controller),
            "steps_per_s": 1e3 / cycle.mean(), "steps_per_s_median": 1e3 / np.median(cycle)}


# -- N3: pacing --------------------------------------------------------------------------------
def set_real_time_factor(client, route: str, factor: float):
    """Through the parameter service (`ros2 param set /sim real_time_factor`) or
    ~/set_real_time_factor."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    from sim_node.srv import SetRealTimeFactor

    if route == "parameter":
        srv, name = SetParameters, "/sim/set_parameters"
        request = SetParameters.Request(parameters=[Parameter(
            name="real_time_factor", value=ParameterValue(
                type=ParameterType.PARAMETER_DOUBLE, double_value=factor))])
    else:
        srv, name = SetRealTimeFactor, "/sim/set_real_time_factor"
        request = SetRealTimeFactor.Request(real_time_factor=factor)
    service = client.node.create_client(srv, name)
    if not service.wait_for_service(timeout_sec=START_TIMEOUT):
        raise TimeoutError(f"{name} not available")
    future = service.call_async(request)
    deadline = time.monotonic() + START_TIMEOUT
    while not future.done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} did not answer")
        time.sleep(0.01)
    client.node.destroy_client(service)


def paced_run(seconds: float) -> list:
    from sim_node.msg import SimStatus

    node = Node(world=str(ARM_WORLD), real_time_factor=1.0, paused=True, status_rate=5.0)
    client = Client()
    rows = []
    try:
        status = []
        client.node.create_subscription(
            SimStatus, "/sim/status", lambda m: status.append((time.monotonic(), m)), 100)
        client.play()
        for route, factor in PACED:
            set_real_time_factor(client, route, factor)
            # the first status that reports the new target, then the warm-up of sim time
            deadline = time.monotonic() + START_TIMEOUT
            while not status or status[-1][1].target_real_time_factor != factor:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no ~/status with target {factor}")
                time.sleep(0.05)
            start = len(status)
            time.sleep(seconds)
            window = status[start:]
            (wall0, first), (wall1, last) = window[0], window[-1]
            measured = (ns(last.sim_time) - ns(first.sim_time)) * 1e-9 / (wall1 - wall0)
            reported = float(np.mean([m.real_time_factor for _, m in window[1:]]))
            rows.append({"route": route, "target": factor, "measured": measured,
                         "reported": reported})
    finally:
        client.close()
        log = node.stop()
        if "Traceback" in log:
            print(log, file=sys.stderr)
    return rows


def percentiles(values) -> dict:
    return {"median": float(np.median(values)), "p99": float(np.percentile(values, 99)),
            "max": float(values.max())}


# -- report --------------------------------------------------------------------------------------
def report(results: dict):
    if "N1" in results:
        report_free_run(results)
    if "N2" in results:
        report_lockstep(results)
    if "N4" in results:
        report_sensors(results["N4"])
    if "N3" in results:
        print("\nN3: pacing (real_time_factor set at run time), ~/status at 5 Hz")
        print(f"  {'set through':12s} {'target':>7s} {'measured':>9s} {'reported':>9s}  verdict "
              f"(within 10 %)")
        for row in results["N3"]:
            ok = (abs(row["measured"] - row["target"]) <= 0.1 * row["target"]
                  and abs(row["reported"] - row["measured"]) <= 0.1 * row["measured"])
            print(f"  {row['route']:12s} {row['target']:7.2f} {row['measured']:9.3f} "
                  f"{row['reported']:9.3f}  {'met' if ok else 'NOT met'}")


def report_free_run(results: dict):
    print(f"\nN1: 7-DOF arm (data/worlds/arm.yaml), physics_dt 1 ms, real_time_factor 0, "
          f"joint_states + /tf + /clock every step")
    print(f"  {'subscribers':32s} {'RTF':>7s} {'steps/s':>9s} {'target':>8s}  verdict")
    for name, row in (("none", results["N1"]), ("joint_states,/tf,/clock here",
                                                results["N1 subscribed"])):
        print(f"  {name:32s} {row['rtf']:7.2f} {row['steps_per_s']:9,.0f} "
              f"{'>= ' + format(TARGET_RTF, 'g'):>8s}  "
              f"{'met' if row['rtf'] >= TARGET_RTF else 'NOT met'}")
    received = results["N1 subscribed"]["received_per_step"]
    print("  received here per step: " + ", ".join(f"{t} {v:.3f}" for t, v in received.items()))


def report_sensors(row: dict):
    print("\nN4: default world with its camera (640 x 480, 30 Hz) and lidar (360 rays, 10 Hz), "
          "real_time_factor 0")
    ok = row["rtf"] >= TARGET_SENSOR_RTF
    print(f"  RTF {row['rtf']:.2f} ({row['steps_per_s']:,.0f} steps/s), target >= "
          f"{TARGET_SENSOR_RTF:g}: {'met' if ok else 'NOT met'}")
    for topic, rate in row["sensor_rates"].items():
        print(f"  {topic:28s} {rate:6.1f} Hz of sim time received (set {SENSOR_TOPICS[topic]:g})")
    print("  plugins, mean wall time per call: " + ", ".join(
        f"{name} {us:.0f} us" for name, us in sorted(row["plugin_mean_us"].items())))


def report_lockstep(results: dict):
    lock = results["N2"]
    print(f"\nN2: lockstep on {EFFORT}, PD controller in this process, "
          f"{lock['steps']} steps")
    print(f"  {'per step [ms]':32s} {'median':>8s} {'p99':>8s} {'max':>8s}")
    for name, key in (("cycle (state -> state)", "cycle_ms"),
                      ("controller (state -> command)", "controller_ms")):
        row = lock[key]
        print(f"  {name:32s} {row['median']:8.3f} {row['p99']:8.3f} {row['max']:8.3f}")
    if "N1" in results:
        step_ms = 1e3 / results["N1"]["steps_per_s"]
        transport = lock["cycle_ms"]["median"] - lock["controller_ms"]["median"] - step_ms
        print(f"  {'transport both ways (derived)':32s} {transport:8.3f}   (cycle - controller "
              f"- node step {step_ms:.3f} ms, medians)")
    print(f"  steps/s in lockstep: {lock['steps_per_s']:,.0f} (RTF {lock['steps_per_s'] / 1e3:.2f})"
          f", at the median cycle {lock['steps_per_s_median']:,.0f}; states missing: "
          f"{lock['missing_states']}; lockstep timeouts logged: {lock['timeouts_logged']}")
    ok = lock["applied_next_step"] == lock["checked"]
    print(f"  command for step k applied at step k + 1: {lock['applied_next_step']} of "
          f"{lock['checked']} steps (target: all): {'met' if ok else 'NOT met'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="measured wall time of each free run, and sim time of the "
                             "lockstep run [s]")
    parser.add_argument("--only", default="N1,N2,N3,N4",
                        help="comma-separated runs (default: N1,N2,N3,N4)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    runs = {name.strip().upper() for name in args.only.split(",")}
    if not runs <= {"N1", "N2", "N3", "N4"}:
        parser.error(f"--only: runs are N1, N2, N3, N4; got {args.only}")
    results = {}
    if "N1" in runs:
        results["N1"] = free_run(args.seconds, False)
        results["N1 subscribed"] = free_run(args.seconds, True)
    if "N2" in runs:
        results["N2"] = lockstep_run(args.seconds)
    if "N3" in runs:
        results["N3"] = paced_run(min(args.seconds, 3.0))
    if "N4" in runs:
        results["N4"] = sensor_run(args.seconds)
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
