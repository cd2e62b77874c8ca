"""~/status (sim_node/SimStatus): sim time, real-time factors, pause, steps, engine status and
the health and cost of every plugin, at `rate` [Hz] of wall time.

engine_status is the worst since the last message: a blow-up the node recovered from in between
is reported (STATUS_UNSTABLE, engine_status_string saying when it happened, which good state
was restored and how many recoveries there were), not only the status of the last step."""
from __future__ import annotations

import time

from sim_node.msg import PluginStatus, SimStatus
from sim_node.ros.stamps import time_msg


class StatusPublisher:
    def __init__(self, node, rate: float):
        self.node = node
        self.rate = rate
        self._next = time.monotonic()
        self._pub = node.create_publisher(SimStatus, "~/status", 10)
        self._plugin_counts = {}

    def after_step(self):
        now = time.monotonic()
        if self.rate <= 0 or now < self._next:
            return
        self._next = now + 1.0 / self.rate
        self.publish()

    def message(self) -> SimStatus:
        node, sim = self.node, self.node.sim
        t = sim.getTime()
        status = SimStatus()
        status.header.stamp = time_msg(t)
        status.sim_time = time_msg(t)
        status.real_time_factor = float(node._rate.update(t))
        status.target_real_time_factor = float(node.real_time_factor)
        status.paused = bool(node.paused)
        status.step_count = int(node.step_count)
        engine_status, text = node.engine_report()
        status.engine_status = int(engine_status)
        status.engine_status_string = text
        for plugin in sim.getPlugins():
            entry = PluginStatus()
            entry.name = plugin.ctx.name if plugin.ctx else type(plugin).__name__
            if plugin.ctx is not None and plugin.ctx.robot is not None:
                robot = sim.getWorld().robot(plugin.ctx.robot)
                entry.robot = robot.getName()
            entry.enabled = bool(plugin.enabled)
            entry.error = plugin.error or ""
            calls, total = self._plugin_counts.get(id(plugin), (0, 0.0))
            new_calls, new_total = plugin.calls - calls, plugin.total_time - total
            entry.mean_time_us = float(new_total / new_calls * 1e6) if new_calls else 0.0
            self._plugin_counts[id(plugin)] = (plugin.calls, plugin.total_time)
            status.plugins.append(entry)
        return status

    def publish(self):
        self._pub.publish(self.message())
