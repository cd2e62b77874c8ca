"""The node's publishers survive the middleware refusing a message (sim_node/ros/node.py
_GuardedPublish): found by the service fuzz, a reliable reader far behind made a publish on
/tf fail with RCLError ("cannot publish data", the writer timed out), which paused the
simulation; in a plugin it would have disabled the plugin. In process, with the publish
failing on purpose (the DDS condition is not reproducible on demand)."""
from __future__ import annotations

import pytest
from rclpy._rclpy_pybind11 import RCLError

from sim_node.ros.node import _GuardedPublish


class _Node:
    publish_tap = None      # the node's viewer hook (SimNode.publish_tap): none here

    def __init__(self):
        self.failures = []

    def publish_failed(self, topic, error):
        self.failures.append((topic, str(error)))


def test_a_refused_publish_is_reported_not_raised():
    node, sent = _Node(), []

    def publish(message):
        if message == "refused":
            raise RCLError("Failed to publish: cannot publish data")
        sent.append(message)
    guarded = _GuardedPublish(publish, "/tf", node)
    guarded("first")
    guarded("refused")
    guarded("second")
    assert sent == ["first", "second"]
    assert node.failures == [("/tf", "Failed to publish: cannot publish data")]


def test_other_errors_still_raise():
    def publish(message):
        raise TypeError("a bug, not the middleware")
    with pytest.raises(TypeError):
        _GuardedPublish(publish, "/tf", _Node())("x")
