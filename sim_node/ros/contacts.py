"""~/contacts (sim_node/Contacts) and, optionally, ~/contact_markers (visualization_msgs)."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from sim_node.model.robot import RobotModelLink
from sim_node.msg import Contact, Contacts
from sim_node.ros.frames import WORLD_FRAME
from sim_node.ros.stamps import time_msg

MARKER_FORCE_SCALE = 0.01       # [m/N] length of a force arrow


class ContactPublisher:
    """Publishes the contacts of the last step at `rate` [Hz] of sim time (0: every step)."""

    def __init__(self, node, rate: float, markers: bool):
        self.node = node
        self.rate = rate
        self._next = 0.0
        self._pub = node.create_publisher(Contacts, "~/contacts", 10)
        self._markers = (node.create_publisher(MarkerArray, "~/contact_markers", 10)
                         if markers else None)

    def _names(self, id_: int) -> tuple[str, str]:
        entity = self.node.world.getEntity(int(id_))
        if isinstance(entity, RobotModelLink):
            return entity.getRobot().getName(), entity.getName()
        return entity.getName(), ""

    def after_step(self, t: float):
        if t + 1e-12 < self._next:
            return
        self._next = t + 1.0 / self.rate if self.rate > 0 else 0.0
        self.publish(t)

    def message(self, t: float) -> Contacts:
        c = self.node.sim.getAllContacts()
        message = Contacts()
        message.header.stamp = time_msg(t)
        message.header.frame_id = WORLD_FRAME
        names = {}
        for i in range(len(c["depth"])):
            contact = Contact()
            for id_ in (c["id1"][i], c["id2"][i]):
                if id_ not in names:
                    names[id_] = self._names(id_)
            contact.entity1, contact.link1 = names[c["id1"][i]]
            contact.entity2, contact.link2 = names[c["id2"][i]]
            contact.position.x, contact.position.y, contact.position.z = c["point"][i].tolist()
            contact.normal.x, contact.normal.y, contact.normal.z = c["normal"][i].tolist()
            contact.depth = float(c["depth"][i])
            contact.force.x, contact.force.y, contact.force.z = c["force"][i].tolist()
            message.contacts.append(contact)
        return message

    def publish(self, t: float):
        message = self.message(t)
        self._pub.publish(message)
        if self._markers is not None:
            self._markers.publish(self._marker_array(message))

    @staticmethod
    def _marker_array(message: Contacts) -> MarkerArray:
        markers = MarkerArray(markers=[Marker(action=Marker.DELETEALL)])
        for i, contact in enumerate(message.contacts):
            arrow = Marker()
            arrow.header = message.header
            arrow.ns, arrow.id, arrow.type = "contact_forces", i, Marker.ARROW
            start = np.array([contact.position.x, contact.position.y, contact.position.z])
            force = np.array([contact.force.x, contact.force.y, contact.force.z])
            arrow.points = [Point(x=float(a), y=float(b), z=float(c))
                            for a, b, c in (start, start + MARKER_FORCE_SCALE * force)]
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.005, 0.01, 0.01
            arrow.color.r, arrow.color.a = 1.0, 1.0
            markers.markers.append(arrow)
        return markers
