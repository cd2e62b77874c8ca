"""The scene of the lidar and camera tests: a sensor mast before a wall.

The mast is a fixed-base robot without collision geometry (its sensors never see it): a
continuous joint ``pan`` about +z at height MAST_HEIGHT above its base carries the link
``head`` (1 kg) and, fixed to it at the same origin, the frameless link ``sensor``. The robot
stands at (MAST_X, MAST_Y, 0) turned by `yaw` about +z; at pan = 0 the sensor frame is the
base's turned frame lifted by MAST_HEIGHT. Terrains: the ground plane z = 0 and a wall, the
half-space x >= WALL_X. Optionally a cube (rigid object ``cube``, 1 kg) standing on the ground;
world files give objects no colour, the camera paints them from its palette by entity ID.
"""
from __future__ import annotations

from pathlib import Path

MAST_HEIGHT = 0.5
MAST_X, MAST_Y = 0.5, -0.25
WALL_X = 3.0

MAST_URDF = f"""<?xml version="1.0"?>
<robot name="mast">
  <link name="world"/>
  <link name="head">
    <inertial><mass value="1.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="pan" type="continuous">
    <origin xyz="0 0 {MAST_HEIGHT}"/><parent link="world"/><child link="head"/>
    <axis xyz="0 0 1"/><limit effort="50" velocity="10"/>
  </joint>
  <link name="sensor"/>
  <joint name="sensor_mount" type="fixed">
    <parent link="head"/><child link="sensor"/>
  </joint>
</robot>
"""

def write_scene(tmp_path: Path, plugins: str, yaw: float = 0.0, cube=None) -> Path:
    """The scene's world file, the mast's plugins given as YAML list items indented 6 spaces;
    cube: None or (x, y, size) of a cube standing on the ground (its faces on the axes)."""
    import math

    urdf = tmp_path / "mast.urdf"
    urdf.write_text(MAST_URDF)
    qz, qw = math.sin(yaw / 2), math.cos(yaw / 2)
    text = f"""simulation: {{physics_dt: 0.001}}
robots:
  - name: mast
    urdf: {urdf}
    namespace: mast
    fixed_base: true
    pose: {{position: [{MAST_X}, {MAST_Y}, 0.0], orientation: [0.0, 0.0, {qz}, {qw}]}}
    controller: {{kp: {{pan: 50.0}}, ki: {{pan: 0.0}}, kd: {{pan: 5.0}}}}
    plugins:
{plugins}"""
    if cube is not None:
        x, y, size = cube
        text += f"""rigid_objects:
  - name: cube
    geometry: {{box: [{size}, {size}, {size}]}}
    mass: 1.0
    pose: {{position: [{x}, {y}, {size / 2}], orientation: [0.0, 0.0, 0.0, 1.0]}}
"""
    text += f"""terrains:
  - name: ground
    geometry: {{plane: {{normal: [0.0, 0.0, 1.0], offset: 0.0}}}}
  - name: wall
    geometry: {{plane: {{normal: [-1.0, 0.0, 0.0], offset: {-WALL_X}}}}}
"""
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    return path
