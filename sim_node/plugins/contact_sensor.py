"""contact_sensor (sensor): a bumper on a robot link or a rigid object.

Published at every update, relative to the robot's namespace (a world plugin: no prefix):
    <topic>           sim_node/Contacts: the raw contacts of the body at the last physics
                      step, each oriented so that body 1 is the sensor's body (normal from the
                      other body into it, force on it [N], world frame); header.frame_id
                      "world", stamp the sim time. An empty list: not touching.
    <topic>/pressed   std_msgs/Bool: the debounced state.
The raw state is "touching": some contact inside the boundary layers (depth > 0) whose normal
force is at least force_threshold [N] (none at the sensor's reset time: no physics step since).
The debounced state switches to the raw state once the raw state has differed from it at every
update for `debounce` [s] of sim time, counted from the first such update (debounce 0: the raw
state).

Config: link (a link of the plugin's robot) or rigid_object (a rigid object's name), exactly
one; rate [Hz] of sim time (default 50; 0: every control step); debounce [s] (>= 0, default
0.04); force_threshold [N] (default 0); topic (default "bumper"). Links welded by fixed joints
form one body: the sensor reports the contacts of the whole body.

Readings: <topic>_touching, <topic>_pressed (bool). State: the debounced state, the sim time
since which the raw state has disagreed with it, and the reset time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from std_msgs.msg import Bool

from sim_node.model.robot import RobotModelLink
from sim_node.msg import Contact, Contacts
from sim_node.plugins.common import (TIME_TOLERANCE, body_world_id, rate_to_period, robot_of,
                                     topic_name)
from sim_node.ros.namespaces import WORLD_FRAME
from sim_node.ros.stamps import time_msg
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 10


def _names(world, id_: int) -> tuple[str, str]:
    # (entity, link) names of a world ID, as in sim_node/Contact
    entity = world.getEntity(int(id_))
    if isinstance(entity, RobotModelLink):
        return entity.getRobot().getName(), entity.getName()
    return entity.getName(), ""


class ContactSensor(SensorEmulator):
    """Raw and debounced contact state of one body (module docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """link or rigid_object (one of them); rate [Hz]; debounce [s] of sim time;
        force_threshold [N]; topic."""
        link: str = ""
        rigid_object: str = ""
        rate: float = 50.0
        debounce: float = 0.04
        force_threshold: float = 0.0
        topic: str = "bumper"

        def __post_init__(self):
            super().__post_init__()
            rate_to_period(self)
            if bool(self.link) == bool(self.rigid_object):
                raise ValueError("give the body as link (a link of the robot) or rigid_object "
                                 "(a rigid object's name), exactly one")
            if not 0.0 <= self.debounce < math.inf:
                raise ValueError(f"debounce must be a time >= 0 [s], got {self.debounce}")
            if not self.force_threshold >= 0.0:
                raise ValueError(f"force_threshold must be a force >= 0 [N], got "
                                 f"{self.force_threshold}")

    def configure(self, ctx, config):
        super().configure(ctx, config)
        if config.link:
            robot = robot_of(ctx)
            if robot is None:
                raise ValueError("contact_sensor: a world plugin senses a rigid_object; link "
                                 "needs a robot plugin")
            self._entity = robot.link(config.link)          # KeyError listing the links
        else:
            self._entity = ctx.sim.getWorld().rigidObject(config.rigid_object)
        topic = topic_name(ctx, config.topic)
        self._keys = (f"{config.topic}_touching", f"{config.topic}_pressed")
        self._contacts_pub = self._pressed_pub = None
        if ctx.create_publisher is not None:
            self._contacts_pub = ctx.create_publisher(Contacts, topic, QUEUE_DEPTH)
            self._pressed_pub = ctx.create_publisher(Bool, f"{topic}/pressed", QUEUE_DEPTH)

    def reset(self, scope):
        """Released, the raw state agreeing."""
        self.pressed = False
        self._since = None      # sim time [s] since which the raw state differs from `pressed`

    def contacts(self, t: float) -> dict:
        """The body's contacts at the last physics step before sim time t: other (k,) world
        IDs of the other bodies, point (k, 3) [m], normal (k, 3) into the sensor's body, depth
        (k,) [m], force (k, 3) on the sensor's body [N]."""
        sim = self.ctx.sim
        c = sim.getAllContacts()        # none right after a reset: no step since
        own = body_world_id(sim, self._entity.getID())
        first, second = c["id1"] == own, c["id2"] == own
        keep = (first | second) & (c["id1"] != c["id2"])
        sign = np.where(first, 1.0, -1.0)[keep][:, None]
        return {"other": np.where(first, c["id2"], c["id1"])[keep], "point": c["point"][keep],
                "normal": c["normal"][keep] * sign, "depth": c["depth"][keep],
                "force": c["force"][keep] * sign}

    def update(self, t=None):
        sim, config = self.ctx.sim, self.config
        t = sim.getTime() if t is None else t
        found = self.contacts(t)
        normal_force = np.einsum("ij,ij->i", found["force"], found["normal"])
        touching = bool(np.any((found["depth"] > 0.0) & (normal_force >= config.force_threshold)))
        if touching == self.pressed:
            self._since = None
        else:
            self._since = t if self._since is None else self._since
            if t - self._since + TIME_TOLERANCE >= config.debounce:
                self.pressed, self._since = touching, None
        if self._contacts_pub is not None:
            self._contacts_pub.publish(self._message(t, found))
            self._pressed_pub.publish(Bool(data=self.pressed))
        return {self._keys[0]: touching, self._keys[1]: self.pressed}

    def _message(self, t: float, found: dict) -> Contacts:
        world = self.ctx.sim.getWorld()
        own = _names(world, self._entity.getID())
        message = Contacts()
        message.header.stamp = time_msg(t)
        message.header.frame_id = WORLD_FRAME
        for i in range(len(found["depth"])):
            contact = Contact()
            contact.entity1, contact.link1 = own
            contact.entity2, contact.link2 = _names(world, found["other"][i])
            contact.position.x, contact.position.y, contact.position.z = found["point"][i].tolist()
            contact.normal.x, contact.normal.y, contact.normal.z = found["normal"][i].tolist()
            contact.depth = float(found["depth"][i])
            contact.force.x, contact.force.y, contact.force.z = found["force"][i].tolist()
            message.contacts.append(contact)
        return message

    def get_state(self) -> dict:
        return {"pressed": self.pressed, "since": self._since}

    def set_state(self, state: dict):
        try:
            pressed, since = bool(state["pressed"]), state["since"]
            since = None if since is None else float(since)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"contact_sensor: bad state ({error})") from None
        self.pressed, self._since = pressed, since

    def shutdown(self):
        self._contacts_pub = self._pressed_pub = None
