"""The CDR encoders of the per-step topics (sim_node/ros/cdr.py) against two independent
implementations: rclpy's deserializer (the C typesupport the subscribers use) reads the bytes
back to the values encoded, and the bytes equal what rclpy's serializer writes for the same
message, up to the trailing padding it adds; rosbags' strict reader (which rejects trailing
bytes) reads them too, as bag readers will."""
import math

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from sim_node.msg import Contacts
from sim_node.ros.cdr import ClockCDR, ContactsCDR, JointStateCDR, TFMessageCDR

pytestmark = pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")

TIMES = [0.0, 0.001, 1.2345678915, 4294.967295, 1e6 + 0.999999999]


def _ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


KILTED = get_typestore(Stores.ROS2_KILTED)


def _same_as_rclpy(data: bytes, message, type_name: str | None = None):
    """rclpy's serializer writes the same bytes, except in alignment padding (ours zero, its
    whatever the buffer held) and trailing padding; rosbags reads the bytes to the end."""
    reference = serialize_message(message)
    assert 0 <= len(reference) - len(data) < 8
    assert all(a == b or b == 0 for a, b in zip(reference, data))
    if type_name is not None:
        KILTED.deserialize_cdr(data, type_name)     # raises on a length mismatch


@pytest.mark.parametrize("t", TIMES)
def test_clock(t):
    data = ClockCDR().encode(t)
    message = deserialize_message(data, Clock)
    sec = math.floor(t)
    assert (message.clock.sec, message.clock.nanosec) == (sec, round((t - sec) * 1e9))
    _same_as_rclpy(data, message, "rosgraph_msgs/msg/Clock")


def test_joint_state():
    rng = np.random.default_rng(1)
    names = ["joint1", "a_longer_joint_name", "j"]
    encoder = JointStateCDR(names, frame_id="base")
    for t in TIMES:
        p, v, e = rng.normal(size=(3, 3))
        data = encoder.encode(t, p, v, e)
        message = deserialize_message(data, JointState)
        assert message.name == names and message.header.frame_id == "base"
        assert message.position.tolist() == p.tolist()
        assert message.velocity.tolist() == v.tolist()
        assert message.effort.tolist() == e.tolist()
        _same_as_rclpy(data, message, "sensor_msgs/msg/JointState")


def test_tf_message():
    rng = np.random.default_rng(2)
    frames = [("world", "box"), ("arm/link1", "arm/link2"), ("w", "odd_length_name")]
    encoder = TFMessageCDR(frames)
    for t in TIMES:
        translation, rotation = rng.normal(size=(3, 3)), rng.normal(size=(3, 4))
        data = encoder.encode(t, translation, rotation)
        message = deserialize_message(data, TFMessage)
        assert [(x.header.frame_id, x.child_frame_id) for x in message.transforms] == frames
        for x, p, q in zip(message.transforms, translation, rotation):
            assert _ns(x.header.stamp) == _ns(message.transforms[0].header.stamp)
            tr, r = x.transform.translation, x.transform.rotation
            assert [tr.x, tr.y, tr.z] == p.tolist() and [r.x, r.y, r.z, r.w] == q.tolist()
        _same_as_rclpy(data, message, "tf2_msgs/msg/TFMessage")


@pytest.mark.parametrize("frame_id", ["world", "map", ""])
def test_contacts_of_any_count_and_names(frame_id):
    rng = np.random.default_rng(3)
    encoder = ContactsCDR(frame_id)
    pool = [("arm", "link7", "table", ""), ("red_box", "", "table", ""),
            ("mobile_base", "left_wheel", "ground", ""), ("a", "bb", "ccc", "dddd")]
    typestore = get_typestore(Stores.ROS2_KILTED)
    types = get_types_from_msg(
        "string entity1\nstring link1\nstring entity2\nstring link2\n"
        "geometry_msgs/Point position\ngeometry_msgs/Vector3 normal\nfloat64 depth\n"
        "geometry_msgs/Vector3 force", "sim_node/msg/Contact")
    types.update(get_types_from_msg("std_msgs/Header header\nsim_node/Contact[] contacts",
                                    "sim_node/msg/Contacts"))
    typestore.register(types)
    for t, n in zip(TIMES, [0, 1, 2, 7, 20]):
        names = [pool[k] for k in rng.integers(0, len(pool), n)]
        values = rng.normal(size=(n, 10))
        data = encoder.encode(t, names, values)
        message = deserialize_message(data, Contacts)
        assert message.header.frame_id == frame_id
        assert len(message.contacts) == n
        for c, key, row in zip(message.contacts, names, values):
            assert (c.entity1, c.link1, c.entity2, c.link2) == key
            assert [c.position.x, c.position.y, c.position.z, c.normal.x, c.normal.y,
                    c.normal.z, c.depth, c.force.x, c.force.y, c.force.z] == row.tolist()
        _same_as_rclpy(data, message)
        # rosbags, given the message definitions, reads exactly these bytes
        read = typestore.deserialize_cdr(data, "sim_node/msg/Contacts")
        assert len(read.contacts) == n
        assert [c.depth for c in read.contacts] == values[:, 6].tolist()
