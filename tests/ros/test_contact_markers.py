"""~/contact_markers (contact_markers:=true): one arrow per contact from its point along its
force, MARKER_FORCE_SCALE metres per newton, after a DELETEALL; in the world frame, stamped
with sim time."""
import numpy as np
import pytest
from visualization_msgs.msg import Marker

from sim_node.ros.contacts import MARKER_FORCE_SCALE, ContactPublisher

pytestmark = pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")


def test_an_arrow_per_contact_along_its_force():
    values = np.array([[0.1, 0.2, 0.75, 0, 0, 1, 0.001, 0.0, 0.0, 1.962],
                       [-0.3, 0.0, 0.0, 0, 0, 1, 0.002, 1.0, -2.0, 30.0]])
    markers = ContactPublisher._marker_array(2.5, values).markers
    assert markers[0].action == Marker.DELETEALL
    assert len(markers) == 3
    for marker, row in zip(markers[1:], values):
        assert marker.type == Marker.ARROW and marker.header.frame_id == "world"
        assert (marker.header.stamp.sec, marker.header.stamp.nanosec) == (2, 500_000_000)
        start, end = ([p.x, p.y, p.z] for p in marker.points)
        assert start == row[:3].tolist()
        assert np.allclose(end, row[:3] + MARKER_FORCE_SCALE * row[7:], rtol=0, atol=1e-15)
    assert len({m.id for m in markers[1:]}) == 2


def test_no_contacts_clear_the_arrows():
    markers = ContactPublisher._marker_array(0.0, np.zeros((0, 10))).markers
    assert [m.action for m in markers] == [Marker.DELETEALL]
