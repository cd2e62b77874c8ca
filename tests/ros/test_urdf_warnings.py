"""What the loaders repaired reaches the node's log: file, line and the repair (issue 10 §1)."""
import pytest
from node_harness import start_node
from rosgraph_msgs.msg import Clock

# an odd XML declaration (line 1) and a visual sphere of radius 0 (line 5): both repaired
REPAIRED = """<?xml version="0.0"?>
<robot name="block">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><sphere radius="0"/></geometry></visual>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
</robot>
"""


@pytest.fixture
def repaired_urdf(tmp_path):
    path = tmp_path / "block.urdf"
    path.write_text(REPAIRED)
    return path


def test_the_node_logs_every_urdf_repair_with_file_and_line(tmp_path_factory, repaired_urdf):
    node, client = start_node(tmp_path_factory, "urdf_warnings", {"world": str(repaired_urdf)})
    try:
        client.subscribe(Clock, "/clock")
        assert client.wait_for("/clock", 10, timeout=60.0)
    finally:
        client.close()
        assert node.stop() == 0
    lines = [line for line in node.log().splitlines() if "repaired while loading" in line]
    assert any(f"{repaired_urdf}:1:" in line and "version" in line for line in lines), lines
    assert any(f"{repaired_urdf}:5:" in line and "radius" in line for line in lines), lines
    assert all("WARN" in line for line in lines)
