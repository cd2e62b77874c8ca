"""The new plugins inside the node, over real DDS: the mobile base of the default world (its
world-file entry, on open ground, with a bumper on its left wheel added) driven by cmd_vel; the
IMU, odometry, odom frame and bumper arrive on their topics, stamped in sim time on their rate
grids."""
from __future__ import annotations

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import Twist, Vector3
from nav_msgs.msg import Odometry
from node_harness import DEEP, NO_PLUGINS, ns, start_node
from plugin_helpers import DIFF_DRIVE_URDF, G, GROUND, REPO
from sensor_msgs.msg import Imu
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

pytestmark = [pytest.mark.ros,
              pytest.mark.filterwarnings("ignore:module 'sre_:DeprecationWarning")]


def _world(tmp_path):
    world = yaml.safe_load((REPO / "data" / "worlds" / "default.yaml").read_text())
    [base] = [r for r in world["robots"] if r["name"] == "mobile_base"]
    base["urdf"] = str(DIFF_DRIVE_URDF)
    base["pose"]["position"] = [0.0, 0.0, 0.085]
    for entry in base["plugins"]:
        if entry["name"] == "diff_drive":
            entry["config"].update(publish_tf=True, cmd_timeout=0.0)   # a command holds
    base["plugins"].append({"name": "contact_sensor",
                            "config": {"link": "left_wheel", "rate": 20.0, "debounce": 0.0}})
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump({"simulation": {"physics_dt": 0.001}, "robots": [base]})
                    + GROUND)
    return path


def _on_grid(stamps_ns, period_ns) -> bool:
    return len(stamps_ns) > 0 and all(s % period_ns == 0 for s in stamps_ns)


def test_the_mobile_base_plugins_publish_in_sim_time_and_drive(tmp_path_factory):
    path = _world(tmp_path_factory.mktemp("world"))
    node, client = start_node(tmp_path_factory, "plugins", {
        "world": str(path), "real_time_factor": 1.0, "default_plugins": NO_PLUGINS})
    try:
        client.subscribe(Imu, "/mobile_base/imu", DEEP)
        client.subscribe(Odometry, "/mobile_base/odom", DEEP)
        client.subscribe(TFMessage, "/tf", DEEP)
        client.subscribe(Bool, "/mobile_base/bumper/pressed", DEEP)
        # resting (after 0.5 s of sim time to settle): the IMU reads +g up
        imu = client.wait_for("/mobile_base/imu", 1, 120.0,
                              lambda m: ns(m.header.stamp) >= 500_000_000)[0]
        assert imu.header.frame_id == "mobile_base/base_link"
        np.testing.assert_allclose([imu.linear_acceleration.x, imu.linear_acceleration.y,
                                    imu.linear_acceleration.z], [0.0, 0.0, G], atol=0.05)
        # drive: publish until the odometry shows the commanded speed
        publisher = client.publisher(Twist, "/mobile_base/cmd_vel")
        command = Twist(linear=Vector3(x=0.3))

        def moving(message):
            publisher.publish(command)
            return abs(message.twist.twist.linear.x - 0.3) < 0.01
        odom = client.wait_for("/mobile_base/odom", 1, 120.0, moving)[0]
        assert (odom.header.frame_id, odom.child_frame_id) == ("mobile_base/odom",
                                                              "mobile_base/base_link")
        later = client.wait_for("/mobile_base/odom", 1, 120.0,
                                lambda m: ns(m.header.stamp) >= ns(odom.header.stamp) + 10**9)
        assert later[0].pose.pose.position.x > odom.pose.pose.position.x + 0.25
        # stamps: sim time, on each plugin's rate grid (imu 100 Hz, odom 50 Hz)
        assert _on_grid([ns(m.header.stamp) for m in client.messages("/mobile_base/imu")],
                        10_000_000)
        assert _on_grid([ns(m.header.stamp) for m in client.messages("/mobile_base/odom")],
                        20_000_000)
        odom_frames = [t for m in client.messages("/tf") for t in m.transforms
                       if t.child_frame_id == "mobile_base/odom"]
        assert odom_frames and all(t.header.frame_id == "world" for t in odom_frames)
        assert _on_grid([ns(t.header.stamp) for t in odom_frames], 20_000_000)
        # the left wheel stands on the ground throughout
        pressed = client.wait_for("/mobile_base/bumper/pressed", 10, 60.0)
        assert all(m.data for m in pressed[2:])
    finally:
        client.close()
        node.stop()
