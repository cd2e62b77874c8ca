"""~/contacts (sim_node/Contacts) and, optionally, ~/contact_markers (visualization_msgs)."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from sim_node.model.robot import RobotModelLink
from sim_node.msg import Contacts
from sim_node.ros.cdr import ContactsCDR
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
        self._encoder = ContactsCDR(WORLD_FRAME)
        self._name_cache: dict[int, tuple] = {}
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

    def arrays(self):
        """The contacts of the last step: names (entity1, link1, entity2, link2) per contact,
        and values (n, 10): position, normal, depth, force (sim_node/Contact's numbers)."""
        c = self.node.sim.getAllContacts()
        names = []
        for id1, id2 in zip(c["id1"].tolist(), c["id2"].tolist()):
            for id_ in (id1, id2):
                if id_ not in self._name_cache:
                    self._name_cache[id_] = self._names(id_)
            names.append(self._name_cache[id1] + self._name_cache[id2])
        values = np.column_stack([c["point"], c["normal"], c["depth"], c["force"]]) \
            if names else np.zeros((0, 10))
        return names, values

    def publish(self, t: float):
        names, values = self.arrays()
        self._pub.publish(self._encoder.encode(t, names, values))
        if self._markers is not None:
            self._markers.publish(self._marker_array(t, values))

    def world_changed(self):
        """Entities were added or removed: world IDs name other entities."""
        self._name_cache = {}

    @staticmethod
    def _marker_array(t: float, values: np.ndarray) -> MarkerArray:
        markers = MarkerArray(markers=[Marker(action=Marker.DELETEALL)])
        for i, row in enumerate(values):
            arrow = Marker()
            arrow.header.stamp = time_msg(t)
            arrow.header.frame_id = WORLD_FRAME
            arrow.ns, arrow.id, arrow.type = "contact_forces", i, Marker.ARROW
            start, force = row[0:3], row[7:10]
            arrow.points = [Point(x=float(a), y=float(b), z=float(c))
                            for a, b, c in (start, start + MARKER_FORCE_SCALE * force)]
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.005, 0.01, 0.01
            arrow.color.r, arrow.color.a = 1.0, 1.0
            markers.markers.append(arrow)
        return markers
