"""Fuzz of the node's services and command topics (hypothesis) against one node process: random
and hostile fields for every service (names, regular expressions, poses and twists with NaN and
huge values, step counts up to 2^64 - 1, paths, byte payloads for restore_state, URDF text)
and for the command topics, in batches. After each batch the node must answer a cheap service,
its /clock must advance once it plays, and no message received on joint_states, /tf or
~/contacts may carry NaN (or infinity) — and the node process must still be running.

Profiles: the CI profile sends FUZZ_BATCHES_CI batches of BATCH inputs (a few hundred inputs,
bounded time); SIM_NODE_FUZZ_INPUTS=N (e.g. 10000) sends about N. The count of inputs sent is
printed at the end of the module (pytest -s) and written to SIM_NODE_FUZZ_REPORT when set.
"""
from __future__ import annotations

import math
import os
import struct
import time

import pytest
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Twist, Vector3, Wrench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from simulation_interfaces.msg import (Bounds, EntityCategory, EntityFilters, EntityState,
                                       Resource, Result, SimulationState)
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntitiesStates,
                                       GetEntityState, GetSimulationState, ResetSimulation,
                                       SetEntityState, SetSimulationState, SpawnEntity,
                                       StepSimulation)
from std_msgs.msg import Float64MultiArray, Header
from tf2_msgs.msg import TFMessage

from node_harness import PENDULUM, REPO, Client, NodeProcess, next_domain
from sim_node.msg import Contacts
from sim_node.srv import (ApplyWrench, Record, RestoreState, SaveState, SetPadding,
                          SetRealTimeFactor, SetSurface)

pytestmark = [pytest.mark.ros]

BATCH = 20                      # inputs per batch (one hypothesis example)
FUZZ_BATCHES_CI = 15            # 300 inputs in the CI profile
INPUTS = int(os.environ.get("SIM_NODE_FUZZ_INPUTS", "0")) or BATCH * FUZZ_BATCHES_CI
# [s] a request not answered by then fails (except a long step request, interrupted at the
# check); the answer-within-2-s bounds are test_safety.py's, here the slowest answer of each
# kind is reported (with other processes loading the machine a few seconds happen)
ANSWER_TIMEOUT = 30.0
STEP_WAIT = 2.0                 # [s] a step request is left running after this
U64 = 2 ** 64 - 1
WORLD = f"""
simulation: {{physics_dt: 0.001}}
robots:
{PENDULUM}rigid_objects:
  - name: box
    geometry: {{box: [0.2, 0.2, 0.2]}}
    mass: 2.0
    pose: {{position: [1.0, 0.0, 0.1], orientation: [0, 0, 0, 1]}}
  - name: faller
    geometry: {{sphere: 0.05}}
    mass: 0.5
    pose: {{position: [-2.0, 0.0, 3.0], orientation: [0, 0, 0, 1]}}
terrains:
  - name: ground
    geometry: {{plane: {{normal: [0, 0, 1], offset: 0.0}}}}
"""
ENTITIES = ["pendulum", "box", "faller", "ground"]
BLOCK = (REPO / "tests" / "ros" / "data" / "block.urdf").read_text()
ARM = REPO / "tests" / "ros" / "data" / "two_link_arm.urdf"
# best effort: the test process cannot read every per-step message at real_time_factor 0, and
# a reliable reader that far behind would make the node's writers block (its own behaviour
# then: tests/ros/test_safety.py); the NaN check reads what arrives
WATCH_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
KEEP = 1000
PAYLOAD = "fuzz-payload.bin"     # restore_state's payloads, written by the test

# -- strategies --------------------------------------------------------------------------------
hostile_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e308, -1e308, 1e-308, 5e-324, 1e9, 1e10, 2000.0,
                     1e4, 1e4 + 1, math.nan, math.inf, -math.inf]),
    st.floats(-10.0, 10.0))
names = st.one_of(st.sampled_from(ENTITIES + ["", "box_1", "pendulum/link1", "a" * 300]),
                  st.text(max_size=40), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}",
                                                      fullmatch=True))
regexes = st.one_of(st.sampled_from(["(a+)+$", "(a|aa)+$", "(.*)*x", r"(a)\1", "(?<=a)b",
                                     "[[:alpha:]]+", "^b", "a{1000}", "(", "[", "\\", "",
                                     "(((((((((((a)))))))))))", "x" * 5000]),
                    st.text(max_size=60))
paths = st.one_of(st.sampled_from(["/dev/zero", "/dev/urandom", "/proc/self/status", "/",
                                   "../x", "../../etc/passwd", "a/../../b", "\x00", "x\ny",
                                   "state.bin", "dir/state.bin", "", ".", "~", "a" * 300,
                                   "/etc/passwd", "/tmp"]),
                  st.text(max_size=40))
step_counts = st.one_of(st.sampled_from([0, 1, 2, 10, U64, 2 ** 63, 2 ** 32]),
                        st.integers(0, 200))
urdf_texts = st.one_of(
    st.sampled_from([BLOCK, BLOCK[:200], BLOCK.replace("0.4", "nan"),
                     BLOCK.replace("0.1 0.1 0.1", "1e308 1e308 1e308"),
                     BLOCK.replace("0.1 0.1 0.1", "0 0 0"),
                     BLOCK.replace('<mass value="0.4"/>', '<mass value="-1"/>'),
                     "<robot/>", "<robot name='x'><link name='a'></robot>",
                     '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b '
                     '"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;'
                     '&b;">]><robot name="&c;"/>', "\x00\xff", "not xml"]),
    st.text(max_size=200).map(lambda t: f"<robot name='f'>{t}</robot>"))


def _pose(values):
    p = Pose()
    p.position = Point(x=values[0], y=values[1], z=values[2])
    p.orientation = Quaternion(x=values[3], y=values[4], z=values[5], w=values[6])
    return p


poses = st.one_of(st.lists(hostile_floats, min_size=7, max_size=7).map(_pose),
                  st.just(_pose([0, 0, 1, 0, 0, 0, 1])))
vectors = st.lists(hostile_floats, min_size=3, max_size=3).map(
    lambda v: Vector3(x=v[0], y=v[1], z=v[2]))


def _request(kind, **fields):
    return (kind, fields)


requests = st.one_of(
    st.builds(lambda f, c: _request("get_entities", filters=EntityFilters(
        filter=f, categories=[EntityCategory(category=x) for x in c])),
        regexes, st.lists(st.integers(0, 255), max_size=3)),
    st.builds(lambda f, t: _request("get_entities_states", filters=EntityFilters(
        filter=f, bounds=Bounds(type=t))), regexes, st.integers(0, 255)),
    st.builds(lambda n: _request("get_entity_state", entity=n), names),
    st.builds(lambda n, p, w, v, sp, stw, f: _request(
        "set_entity_state", entity=n, set_pose=sp, set_twist=stw,
        state=EntityState(header=Header(frame_id=f), pose=p, twist=Twist(linear=w,
                                                                          angular=v))),
        names, poses, vectors, vectors, st.booleans(), st.booleans(),
        st.sampled_from(["", "world", "map"])),
    st.builds(lambda n, text, uri, p, r, ns: _request(
        "spawn_entity", name=n, allow_renaming=r, entity_namespace=ns,
        entity_resource=Resource(resource_string=text, uri=uri),
        initial_pose=PoseStamped(pose=p)),
        names, urdf_texts, st.one_of(st.just(""), paths, st.just(str(ARM))), poses,
        st.booleans(), st.one_of(st.just(""), names)),
    st.builds(lambda n: _request("delete_entity", entity=n), names),
    st.builds(lambda s: _request("reset_simulation", scope=s), st.integers(0, 255)),
    st.builds(lambda s: _request("set_simulation_state", state=SimulationState(state=s)),
              st.one_of(st.integers(0, 255), st.sampled_from([0, 1, 2, 3]))),
    st.builds(lambda n: _request("step_simulation", steps=n), step_counts),
    st.builds(lambda f: _request("set_real_time_factor", real_time_factor=f), hostile_floats),
    st.builds(lambda i, p: _request("save_state", id=i, path=p), st.text(max_size=20), paths),
    st.builds(lambda i, p: _request("restore_state", id=i, path=p), st.text(max_size=20), paths),
    st.builds(lambda data: _request("restore_bytes", data=data), st.binary(max_size=300)),
    st.builds(lambda flips: _request("restore_mutated", flips=flips),
              st.lists(st.tuples(st.integers(0, 10 ** 6), hostile_floats), min_size=1,
                       max_size=4)),
    st.builds(lambda n, link, f, t, p, up, d: _request(
        "apply_wrench", entity=n, link=link, wrench=Wrench(force=f, torque=t),
        point=Point(x=p.x, y=p.y, z=p.z), use_point=up, duration=d),
        names, st.one_of(st.just(""), names), vectors, vectors, vectors, st.booleans(),
        hostile_floats),
    st.builds(lambda n, link, a, b, c, d: _request(
        "set_surface", entity=n, link=link, k_restitution=a, k_friction=b, k_stiffness=c,
        k_damping=d), names, st.one_of(st.just(""), names), hostile_floats, hostile_floats,
        hostile_floats, hostile_floats),
    st.builds(lambda n, p: _request("set_padding", entity=n, padding=p), names,
              hostile_floats),
    st.builds(lambda s, d: _request("record", start=s, directory=d), st.booleans(), paths),
    st.builds(lambda topic, v: _request("publish_array", topic=topic, data=v),
              st.sampled_from(["position_commands", "velocity_commands", "effort_commands"]),
              st.lists(hostile_floats, max_size=3)),
    st.builds(lambda n, p, v, e: _request("publish_joint_command", names=n, position=p,
                                          velocity=v, effort=e),
              st.lists(st.one_of(st.just("joint1"), st.text(max_size=8)), max_size=2),
              st.lists(hostile_floats, max_size=2), st.lists(hostile_floats, max_size=2),
              st.lists(hostile_floats, max_size=2)),
)

SERVICES = {
    "get_entities": GetEntities, "get_entities_states": GetEntitiesStates,
    "get_entity_state": GetEntityState, "set_entity_state": SetEntityState,
    "spawn_entity": SpawnEntity, "delete_entity": DeleteEntity,
    "reset_simulation": ResetSimulation, "set_simulation_state": SetSimulationState,
    "step_simulation": StepSimulation, "set_real_time_factor": SetRealTimeFactor,
    "save_state": SaveState, "restore_state": RestoreState, "apply_wrench": ApplyWrench,
    "set_surface": SetSurface, "set_padding": SetPadding, "record": Record,
}


# -- the node under fuzz -----------------------------------------------------------------------
class Fuzzed:
    def __init__(self, base):
        (base / "world.yaml").write_text(WORLD)
        self.data = base / "data"
        self.data.mkdir()
        domain = next_domain()
        self.node = NodeProcess(domain, {
            "world": str(base / "world.yaml"), "real_time_factor": 0.0, "status_rate": 0.0,
            "data_dir": str(self.data), "max_read_size": 1_000_000, "tf_rate": 50.0,
            "contacts_rate": 50.0}, log_path=base / "node.log")
        self.watch = Client(domain, "fuzz_watch")       # subscriptions only
        self.caller = Client(domain, "fuzz_caller")     # requests only
        for msg_type, topic in ((Clock, "/clock"), (JointState, "/pendulum/joint_states"),
                                (TFMessage, "/tf"), (Contacts, "/sim/contacts")):
            self.watch.subscribe(msg_type, topic, WATCH_QOS, keep=KEEP)
        self.clients = {name: self.caller.node.create_client(srv, f"/sim/{name}")
                        for name, srv in SERVICES.items()}
        for client in self.clients.values():
            assert client.wait_for_service(timeout_sec=30.0)
        self.publishers = {kind: self.caller.publisher(Float64MultiArray, f"/pendulum/{kind}")
                           for kind in ("position_commands", "velocity_commands",
                                        "effort_commands")}
        self.joint_commands = self.caller.publisher(JointState, "/pendulum/joint_commands")
        self.sent = 0
        self.slowest: dict[str, float] = {}     # [s] the slowest answer of each service
        self.good_state = None

    def send(self, kind: str, fields: dict):
        self.sent += 1
        if kind == "publish_array":
            self.publishers[fields["topic"]].publish(Float64MultiArray(data=fields["data"]))
            return
        if kind == "publish_joint_command":
            self.joint_commands.publish(JointState(
                name=fields["names"], position=fields["position"], velocity=fields["velocity"],
                effort=fields["effort"]))
            return
        if kind == "restore_bytes":
            (self.data / PAYLOAD).write_bytes(fields["data"])
            kind, fields = "restore_state", {"path": PAYLOAD}
        elif kind == "restore_mutated":
            state = bytearray(self._good_state())
            (size,) = struct.unpack_from("<Q", state, 8)
            for k, value in fields["flips"]:
                offset = 16 + size + 8 * (k % max(1, (len(state) - 16 - size) // 8))
                state[offset:offset + 8] = struct.pack("<d", value)
            (self.data / PAYLOAD).write_bytes(bytes(state))
            kind, fields = "restore_state", {"path": PAYLOAD}
        self.call(kind, fields)

    def call(self, kind: str, fields: dict, timeout: float = ANSWER_TIMEOUT):
        future = self.clients[kind].call_async(SERVICES[kind].Request(**fields))
        start = time.monotonic()
        if kind == "step_simulation":
            timeout = STEP_WAIT
        while not future.done():
            if time.monotonic() > start + timeout:
                # only a step request may take this long (it is interrupted at the check)
                assert kind == "step_simulation", f"{kind} not answered within {timeout} s"
                return None
            time.sleep(0.002)
        latency = time.monotonic() - start
        self.slowest[kind] = max(self.slowest.get(kind, 0.0), latency)
        return future.result()

    def _good_state(self) -> bytes:
        if self.good_state is None:
            response = self.call("save_state", {"path": "good.bin"})
            assert response.success, response.message
            self.good_state = (self.data / "good.bin").read_bytes()
        return self.good_state

    def check(self):
        """The node is alive, answers, plays on, and published no NaN."""
        assert self.node.process.poll() is None, "the node died:\n" + self.node.log()[-3000:]
        self.call("record", {"start": False})
        self.call("set_real_time_factor", {"real_time_factor": 0.0})
        # surfaces and paddings are settings a reset keeps: put back, a destabilising
        # combination within the bounds would otherwise make every later step blow up (the
        # node then pauses and says so; README "Safety and bounds")
        for name in ENTITIES:
            self.call("set_padding", {"entity": name, "padding": 0.0025})
            self.call("set_surface", {"entity": name, "k_friction": 0.5,
                                      "k_stiffness": math.inf, "k_damping": math.inf})
        reset = self.call("reset_simulation", {"scope": 0})
        assert reset.result.result == Result.OK, reset.result.error_message
        # play after the reset: a state the fuzz left (finite, within the bounds) may blow up at
        # its first step, and the node then pauses again (README "Safety and bounds"); played
        # before the reset, it stayed paused at the initial state (a falsifying CI example)
        state = self.call("set_simulation_state",
                          {"state": SimulationState(state=SimulationState.STATE_PLAYING)})
        assert state is not None
        answer = self.call("get_entities", {"filters": EntityFilters()})
        assert answer.result.result == Result.OK
        assert set(ENTITIES) <= set(answer.entities)
        # sim time advancing: 10 ms beyond the latest clock seen, or beyond a lower one once
        # the reset's restart arrives: the clock read first may be a batch's, far ahead (a
        # restored state's time may be up to 1e9 s; a 10k run timed out waiting beyond one)
        since = _latest_clock(self.watch)
        deadline = time.monotonic() + 30.0
        while (latest := _latest_clock(self.watch)) <= since + 0.01:
            assert time.monotonic() < deadline, (
                f"the clock does not advance while playing (at {latest} s, from {since} s); "
                f"node alive: {self.node.process.poll() is None}; its log ends:\n"
                + self.node.log()[-3000:])
            since = min(since, latest)
            time.sleep(0.01)
        for topic in self.watch.received:       # the last KEEP messages of each
            for message in self.watch.messages(topic):
                assert _finite(message), f"{topic} carried NaN or infinity: {message}"

    def close(self):
        self.caller.close()
        self.watch.close()
        return self.node.stop()


def _latest_clock(client) -> float:
    messages = client.messages("/clock")
    if not messages:
        return -1.0
    return messages[-1].clock.sec + messages[-1].clock.nanosec * 1e-9


def _finite(message) -> bool:
    if isinstance(message, JointState):
        values = [*message.position, *message.velocity, *message.effort]
    elif isinstance(message, TFMessage):
        values = [x for t in message.transforms for x in (
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z,
            t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
            t.transform.rotation.w)]
    elif isinstance(message, Contacts):
        values = [x for c in message.contacts for x in (
            c.position.x, c.position.y, c.position.z, c.normal.x, c.normal.y, c.normal.z,
            c.depth, c.force.x, c.force.y, c.force.z)]
    else:
        return True
    return all(math.isfinite(x) for x in values)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    target = Fuzzed(tmp_path_factory.mktemp("fuzz"))
    start = time.monotonic()
    try:
        target.check()
        yield target
    finally:
        elapsed = time.monotonic() - start
        code = target.close()
        slowest = ", ".join(f"{k} {v:.2f}" for k, v in sorted(
            target.slowest.items(), key=lambda item: -item[1])[:5])
        report = (f"fuzz: {target.sent} inputs in {elapsed:.0f} s, node exit code {code}; "
                  f"slowest answers [s]: {slowest}")
        print("\n" + report)
        if os.environ.get("SIM_NODE_FUZZ_REPORT"):
            with open(os.environ["SIM_NODE_FUZZ_REPORT"], "a") as out:
                out.write(report + "\n")
        assert code == 0, "the node did not stop cleanly on SIGINT"


@settings(max_examples=max(1, INPUTS // BATCH), deadline=None, derandomize=False,
          suppress_health_check=list(HealthCheck), database=None)
@given(batch=st.lists(requests, min_size=BATCH, max_size=BATCH))
def test_hostile_requests_never_stop_stall_or_poison_the_node(fuzzed, batch):
    for kind, fields in batch:
        fuzzed.send(kind, fields)
    fuzzed.check()
