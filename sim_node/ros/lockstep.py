"""Lockstep: step k + 1 waits until the command topics delivered the commands of step k.

Plugins subscribe through ``subscription_factory``, which counts every delivered message per
topic after the plugin's callback has taken it. Before a step the simulation thread marks the
counts; before the next one it waits until each lockstep topic has delivered a message since
that mark (or the timeout passes: then it warns, throttled, and steps on). The lockstep topics
are the ``lockstep_topics`` parameter, or else every plugin command topic that has a publisher;
the warning says so when a configured topic is none of the plugins' command topics (a typo).
A callback that raises is logged and does not reach the node. ``close`` ends a wait at once (the
node stopping must not wait out the timeout for a controller that is gone).
"""
from __future__ import annotations

import threading
import time


class Lockstep:
    def __init__(self, node, enabled: bool, topics: list, timeout: float):
        self.node = node
        self.enabled = enabled
        self.timeout = timeout
        self._configured = [node.resolve_topic_name(t) for t in topics]
        self._counts: dict[str, int] = {}
        self._marks: dict[str, int] = {}
        self._subscriptions: dict[str, object] = {}
        self._condition = threading.Condition()
        self._last_warning = 0.0
        self._closed = False
        self.timeouts = 0

    def subscription_factory(self, msg_type, topic: str, callback, qos=10, **kwargs):
        """create_subscription for plugins: deliveries counted for lockstep, errors contained."""
        name = self.node.resolve_topic_name(topic)
        logger = self.node.get_logger()

        def delivered(message):
            try:
                callback(message)
            except Exception as error:      # a plugin's bug must not take the node down
                logger.error(f"subscription {name}: {type(error).__name__}: {error}")
            with self._condition:
                self._counts[name] = self._counts.get(name, 0) + 1
                self._condition.notify_all()

        subscription = self.node.create_subscription(msg_type, topic, delivered, qos, **kwargs)
        self._counts.setdefault(name, 0)
        self._subscriptions[name] = subscription
        return subscription

    def forget(self, subscription):
        """A subscription destroyed (its robot deleted): no longer waited for."""
        for name, known in list(self._subscriptions.items()):
            if known is subscription:
                del self._subscriptions[name]

    def topics(self) -> list:
        if self._configured:
            return self._configured
        return [name for name in self._subscriptions if self.node.count_publishers(name) > 0]

    def mark(self, step: int):
        """Before step `step` is taken: the deliveries so far."""
        if self.enabled:
            with self._condition:
                self._marks = dict(self._counts)

    def close(self):
        """End the current wait and every later one at once, without a warning."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def wait(self, step: int):
        """Before step `step` (> 0): until every lockstep topic delivered since the mark."""
        if not self.enabled or step == 0:
            return
        topics = self.topics()
        if not topics:
            return
        deadline = time.monotonic() + self.timeout

        def ready():
            return all(self._counts.get(t, 0) > self._marks.get(t, 0) for t in topics)

        with self._condition:
            while not ready():
                left = deadline - time.monotonic()
                if self._closed:
                    return
                if left <= 0.0:
                    break
                self._condition.wait(left)
            else:
                return
        self.timeouts += 1
        now = time.monotonic()
        if now - self._last_warning > 5.0:
            self._last_warning = now
            missing = [t for t in topics if self._counts.get(t, 0) <= self._marks.get(t, 0)]
            unknown = [t for t in missing if t not in self._subscriptions]
            hint = (f"; no plugin subscribes {', '.join(unknown)} (lockstep_topics must name "
                    f"command topics: {', '.join(self._subscriptions)})" if unknown else "")
            self.node.get_logger().warning(
                f"lockstep: no command on {', '.join(missing)} within {self.timeout} s for "
                f"step {step - 1}; stepping on ({self.timeouts} timeouts so far){hint}")
