"""Running the simulation node as a separate process over real DDS, and talking to it.

Every node gets its own ROS_DOMAIN_ID and stays on this machine
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST); `NodeProcess` stops it (SIGINT to its process
group, then SIGKILL) however the test ends. `Client` is an rclpy node in the test process on
the same domain, spun in a background thread, with helpers to wait for messages and call
services.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

REPO = Path(__file__).resolve().parents[2]
# What an ament prefix holds for sim_node, in the pip setup's prefix (.venv/ros/install) and in a
# colcon install alike: what ament_index, `ros2 run`, `ros2 launch` and `ros2 pkg` look up.
INSTALL_LAYOUT = (
    "share/ament_index/resource_index/packages/sim_node",
    "share/sim_node/package.xml",
    "lib/sim_node/sim_node",
    "share/sim_node/launch/sim.launch.py",
    "share/sim_node/data/worlds/default.yaml",
    f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages/sim_node/msg/"
    "_sim_status.py",
)

# ROS_DOMAIN_ID: SIM_NODE_TEST_DOMAINS=FIRST-LAST (default 1-101: on Linux a higher domain's DDS
# ports reach into the ephemeral port range, where the kernel may hand them to other sockets:
# flaky discovery). Suites running at the same time on one machine are kept apart by giving
# each its own range; within a range, consecutive ids from a per-process start.
DOMAINS_VARIABLE = "SIM_NODE_TEST_DOMAINS"


def domain_range(text: str | None = None) -> range:
    """The ROS_DOMAIN_IDs tests may use, from `text` (default: $SIM_NODE_TEST_DOMAINS)."""
    text = os.environ.get(DOMAINS_VARIABLE, "1-101") if text is None else text
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", text.strip())
    domains = range(int(match[1]), int(match[2] or match[1]) + 1) if match else range(0)
    if not domains or domains.stop > 233:
        raise ValueError(f"{DOMAINS_VARIABLE}={text!r}: expected FIRST-LAST, ROS domain ids "
                         f"with 0 <= FIRST <= LAST <= 232 (e.g. 1-50)")
    return domains


_DOMAINS = domain_range()
_domains = itertools.count(os.getpid())


def next_domain() -> int:
    return _DOMAINS[next(_domains) % len(_DOMAINS)]


def ros_env(domain: int, base: dict | None = None, **extra) -> dict:
    """`base` (default: this process's environment) on `domain`, on this machine only."""
    env = dict(os.environ if base is None else base, ROS_DOMAIN_ID=str(domain),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", OPENBLAS_NUM_THREADS="1",
               PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


@contextlib.contextmanager
def in_process_node(world_file=None, **parameters):
    """A SimNode built in this process (no simulation thread, no executor until asked), alone
    on this machine on a domain of its own: the world file (None: the node's default world),
    `parameters` as overrides (default_plugins none unless given; a parameter given as None:
    the node's default). Stopped, destroyed and its context shut down after."""
    import pytest
    from rclpy.parameter import Parameter

    from sim_node.model.world import WorldModel
    from sim_node.ros.node import SimNode

    domain = next_domain()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ros_env(domain).items():
            patch.setenv(name, value)
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        world = None
        if world_file is not None:
            world = WorldModel()
            world.readFile(str(world_file))
        node = None
        try:
            node = SimNode(world=world, context=context, parameter_overrides=[
                Parameter(name, value=value)
                for name, value in {"default_plugins": [""], **parameters}.items()
                if value is not None])
            yield node
        finally:
            if node is not None:
                node.stop()
                node.destroy_node()
            context.try_shutdown()


class NodeProcess:
    """`python -m sim_node <args> --ros-args <params>` in its own process group (`executable`
    instead of `python -m sim_node`; `env` instead of this process's environment)."""

    def __init__(self, domain: int, params: dict | None = None, args=(), extra_env=None,
                 log_path: Path | None = None, executable=None, env: dict | None = None):
        command = [*(executable or [sys.executable, "-m", "sim_node"]), *args, "--ros-args"]
        for name, value in (params or {}).items():
            command += ["-p", f"{name}:={_param_text(value)}"]
        self.log_path = log_path
        self._log = open(log_path, "w") if log_path else subprocess.DEVNULL
        base = os.environ if env is None else env
        self.process = subprocess.Popen(command, env=ros_env(domain, base, **(extra_env or {})),
                                        stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True, cwd=REPO)

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path else ""

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGINT)
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except ProcessLookupError:
                pass
        if self._log is not subprocess.DEVNULL:
            self._log.close()
        return self.process.returncode

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(f"'{v}'" if isinstance(v, str) else _param_text(v)
                              for v in value) + "]"
    return str(value)


LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


class Client:
    """A test-side node on `domain`: subscriptions that keep what arrives, service calls."""

    def __init__(self, domain: int, name: str = "test_client"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self._clients = {}           # (service type, name) -> client (call)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received: dict[str, list] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stop.is_set() and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:           # the context is going down
                return

    def subscribe(self, msg_type, topic: str, qos=10, keep: int = 100000):
        """Collect messages of `topic` (with their wall receive time) into received[topic]."""
        self.received[topic] = []

        def store(message):
            with self._lock:
                box = self.received[topic]
                box.append((time.monotonic(), message))
                if len(box) > keep:
                    del box[0]
        self.node.create_subscription(msg_type, topic, store, qos)

    def messages(self, topic: str) -> list:
        with self._lock:
            return [m for _, m in self.received.get(topic, [])]

    def wait_for(self, topic: str, count: int = 1, timeout: float = 20.0,
                 predicate=None) -> list:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [m for m in self.messages(topic) if predicate is None or predicate(m)]
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise TimeoutError(f"{count} message(s) on {topic} not received within {timeout} s "
                           f"(got {len(self.messages(topic))})")

    def call(self, srv_type, name: str, request, timeout: float = 20.0):
        # one client per service, kept: a new client's request can reach the server before
        # the server's response writer has matched the client's reader, and DDS then drops the
        # response (seen under load in a clean-clone run: get_entity_state unanswered for
        # 20 s); a kept client is matched both ways after its first answer
        key = (srv_type, name)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self.node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"service {name} not available within {timeout} s")
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"service {name} did not answer within {timeout} s")
            time.sleep(0.005)
        return future.result()

    def publisher(self, msg_type, topic: str, qos=10):
        return self.node.create_publisher(msg_type, topic, qos)

    def close(self):
        # the spinning thread stops first (spin_once returns within its 0.05 s timeout), then
        # the node and the context go: shutting the context down under a thread waiting in
        # spin_once freed the wait set it was using (a segfault in a clean-clone CI run)
        self._stop.set()
        self._thread.join(timeout=30)
        if self._thread.is_alive():
            raise RuntimeError("the test client's spinning thread did not stop within 30 s")
        # the context (its DDS participant) first, as before: its readers leave the node's
        # writers at once (a node at real_time_factor 0 publishing to a reader that stopped
        # taking its messages did not stop on SIGINT within 10 s otherwise, once in a
        # clean-clone run)
        self.context.try_shutdown()
        self.executor.shutdown()
        self.node.destroy_node()


# -- shared by the node tests -----------------------------------------------------------------
# the robots: entry of the node tests' worlds: the one-link pendulum under PID in a namespace
PENDULUM = f"""  - name: pendulum
    urdf: {REPO}/data/robots/pendulum/pendulum.urdf
    namespace: pendulum
    initial_config: {{joint1: 0.5}}
    controller: {{kp: 20.0, ki: 8.0, kd: 5.0}}
"""
NO_PLUGINS = [""]                   # default_plugins: none (ROS has no empty string list)
# High-rate topics: a deep reader queue, so that a busy test process loses no message.
DEEP = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)


def ns(stamp) -> int:
    """A builtin_interfaces Time in nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def received(client: "Client", topic: str, since: float = 0.0) -> list:
    """(wall receive time [s, monotonic], message) of `topic` received at or after `since`."""
    return [(wall, m) for wall, m in list(client.received.get(topic, [])) if wall >= since]


def _parameter_value(value):
    from rcl_interfaces.msg import ParameterType, ParameterValue

    if isinstance(value, float):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
    return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)


def set_parameter(client: "Client", name: str, value):
    """SetParameters on /sim (what `ros2 param set /sim name value` sends): the result."""
    from rcl_interfaces.msg import Parameter
    from rcl_interfaces.srv import SetParameters

    request = SetParameters.Request(parameters=[Parameter(name=name,
                                                          value=_parameter_value(value))])
    [result] = client.call(SetParameters, "/sim/set_parameters", request).results
    return result


def get_parameter(client: "Client", name: str):
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    [value] = client.call(GetParameters, "/sim/get_parameters",
                          GetParameters.Request(names=[name])).values
    return parameter_value_to_python(value)


def start_node(tmp_path_factory, name: str, params: dict):
    """A node process with these parameters on a fresh domain, its log in a temporary
    directory, and a client on that domain."""
    domain = next_domain()
    log = tmp_path_factory.mktemp(name) / "node.log"
    return NodeProcess(domain, params, log_path=log), Client(domain)


# -- the node's services, as the service tests call them ----------------------------------------
def call(client, srv_type, service, /, timeout: float = 20.0, **fields):
    """The answer of the node's /sim/<service> to a request with these fields (through the
    client, or its `.caller` when it has one)."""
    caller = getattr(client, "caller", client)
    return caller.call(srv_type, f"/sim/{service}", srv_type.Request(**fields), timeout=timeout)


def step(client, steps: int):
    """step_simulation of `steps` steps, which must succeed."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation

    result = call(client, StepSimulation, "step_simulation", steps=steps).result
    assert result.result == Result.OK, result.error_message


def entity(client, name: str):
    """get_entity_state of `name` (an EntityState), which must succeed."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import GetEntityState

    response = call(client, GetEntityState, "get_entity_state", entity=name)
    assert response.result.result == Result.OK, response.result.error_message
    return response.state


def sim_time(client, reference: str = "ground") -> float:
    """The node's sim time [s] now: the stamp of an entity's state."""
    stamp = entity(client, reference).header.stamp
    return stamp.sec + stamp.nanosec * 1e-9
