"""The TF frames of a simulated world: which are static (/tf_static) and which move (/tf).

Frame names: ``world`` for the world; a robot's links ``<namespace>/<link>`` (the link name
alone when the namespace is the root; the namespace rule: sim_node/sim/namespaces.py), as
robot_state_publisher's frame_prefix does; rigid objects and terrains by their names.

A robot at the root namespace whose URDF roots at a link named ``world`` (the URDF convention
for a fixed base) has that link as the world frame itself, as with robot_state_publisher: no
world -> world transform; the links attached to it are published relative to the world frame,
at their places in the simulation (its pose in the world file included).

Static, published once with transient-local durability (and again after a reset or a spawn):
world -> every terrain; world -> the root link of every fixed-base robot; with ``links``, every
link attached to its parent by a fixed joint. Moving, published with each step's stamp: world ->
every rigid object; world -> the root link of every floating-base robot; with ``links``, every
link attached to its parent by a movable joint (what robot_state_publisher would add from
joint_states: set ``links`` false when one runs).
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage

from sim_node.ros.cdr import TFMessageCDR
from sim_node.ros.namespaces import WORLD_FRAME, link_frame
from sim_node.ros.stamps import time_msg

__all__ = ["WORLD_FRAME", "WorldFrames", "link_frame"]


class _RobotFrames:
    """Frames of one robot: link indices and their parents (-1: the world)."""

    def __init__(self, r: int):
        self.robot = r
        self.links, self.parents, self.pairs = [], [], []

    def add(self, robot, link: int, parent: int):
        self.links.append(link)
        self.parents.append(parent)
        self.pairs.append((WORLD_FRAME if parent < 0 else link_frame(robot, parent),
                           link_frame(robot, link)))

    def freeze(self):
        self.links = np.array(self.links, dtype=np.intp)
        self.parents = np.array(self.parents, dtype=np.intp)
        self.out = np.empty((len(self.links), 7))

    def poses(self, sim) -> np.ndarray:
        return sim.getLinkPoses(self.robot, self.links, self.parents, self.out)


class WorldFrames:
    """Static and moving frames of a Simulator's world (see the module docstring)."""

    def __init__(self, sim, links: bool = True):
        self.sim = sim
        world = sim.getWorld()
        self._terrains = [world.terrain(i) for i in range(world.numTerrains())]
        self._static_robots, self._moving_robots = [], []
        for r in range(world.numRobots()):
            robot = world.robot(r)
            st = robot.structure
            static, moving = _RobotFrames(r), _RobotFrames(r)
            for link, parent in enumerate(st.link_parent):
                if parent < 0:
                    if link_frame(robot, link) == WORLD_FRAME:
                        continue        # the URDF's root link 'world' is the world frame
                    (moving if robot.isFloatingBase() else static).add(robot, link, -1)
                elif links:
                    if link_frame(robot, parent) == WORLD_FRAME:
                        parent = -1     # its children hang off the world, where they are
                    fixed = robot.urdf.joints[st.link_joint[link]].type == "fixed"
                    (static if fixed else moving).add(robot, link, parent)
            for frames, group in ((static, self._static_robots), (moving, self._moving_robots)):
                if frames.links:
                    frames.freeze()
                    group.append(frames)
        self._objects = [(WORLD_FRAME, world.rigidObject(i).getName())
                         for i in range(world.numRigidObjects())]
        pairs = self._objects + [pair for f in self._moving_robots for pair in f.pairs]
        self._moving = TFMessageCDR(pairs)
        self.moving_count = len(pairs)
        self._block = np.empty((len(pairs), 7))

    def moving(self, t: float) -> bytes:
        """The moving frames at sim time t, serialized (tf2_msgs/TFMessage)."""
        block, row = self._block, 0
        if self._objects:
            row = len(self._objects)
            block[:row] = self.sim.getRigidObjectPoses()
        for frames in self._moving_robots:
            n = len(frames.links)
            block[row:row + n] = frames.poses(self.sim)
            row += n
        return self._moving.encode(t, block[:, :3], block[:, 3:])

    def static(self, t: float) -> TFMessage:
        """The static frames (tf2_msgs/TFMessage), stamped t."""
        entries = [((WORLD_FRAME, terrain.getName()), pose)
                   for terrain, pose in zip(self._terrains, self.sim.getTerrainPoses())]
        for frames in self._static_robots:
            entries += list(zip(frames.pairs, frames.poses(self.sim).copy()))
        message = TFMessage()
        for (parent, child), pose in entries:
            ts = TransformStamped()
            ts.header.stamp = time_msg(t)
            ts.header.frame_id = parent
            ts.child_frame_id = child
            translation, rotation = ts.transform.translation, ts.transform.rotation
            translation.x, translation.y, translation.z = (float(v) for v in pose[:3])
            rotation.x, rotation.y, rotation.z, rotation.w = (float(v) for v in pose[3:])
            message.transforms.append(ts)
        return message
