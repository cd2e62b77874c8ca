"""link_height (sensor): the height [m] of a robot link's centre of mass above the world's
z = 0, as std_msgs/Float64 on ``<robot name>/<topic>`` (topic "link_height" by default), at
`rate` [Hz] of sim time (0: every control step).

An example of a third-party plugin: it lives in its own distribution and registers through the
``sim_node.sensors`` entry-point group (see pyproject.toml), using only sim_node's public plugin
API (SensorEmulator, its Config, the PluginContext).

Readings: link_height [m].
"""
from __future__ import annotations

from dataclasses import dataclass

from std_msgs.msg import Float64

from sim_node.sim.simulation import SensorEmulator


class LinkHeight(SensorEmulator):
    """Publishes the height of a link's centre of mass (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """link: a link of the plugin's robot; rate [Hz] (0: every control step); topic."""
        link: str
        rate: float = 10.0
        topic: str = "link_height"

        def __post_init__(self):
            super().__post_init__()
            if not self.rate >= 0.0:
                raise ValueError(f"rate must be a frequency >= 0 [Hz], got {self.rate}")
            if self.rate > 0.0:
                object.__setattr__(self, "period", 1.0 / self.rate)

    def configure(self, ctx, config):
        if ctx.robot is None:
            raise ValueError("link_height is a robot plugin")
        super().configure(ctx, config)
        robot = ctx.sim.getWorld().robot(ctx.robot)
        self._link = robot.link(config.link)
        self._publisher = None
        if ctx.create_publisher is not None:
            self._publisher = ctx.create_publisher(Float64, f"{robot.getName()}/{config.topic}",
                                                   10)

    def reset(self, scope):
        """Stateless: every reading comes from the simulator."""

    def update(self, t=None):
        R, p = self.ctx.sim.body(self._link).getTransform()     # frame at the centre of mass
        height = float(p[2])
        if self._publisher is not None:
            self._publisher.publish(Float64(data=height))
        return {"link_height": height}

    def shutdown(self):
        self._publisher = None
