"""sim_node/Ant-v0: the four-legged ant of pybullet_data's mjcf/ant.xml on a ground plane.

The robot is built here from the MJCF file's dimensions (the ant's URDF written in code: no
MJCF loader needed, no file read): a torso sphere of radius 0.25 m; per leg a capsule welded to
the torso, a hip capsule on a vertical hinge (hip_i, +-40 degrees) and a foot capsule on a hinge
about the horizontal axis across the leg (ankle_i, the file's ranges); capsules of radius 0.08 m
placed by the file's `fromto`; masses and inertias of uniform solids of the file's density
(5 kg/m^3: `inertiafromgeom`), joint damping 1 N m s/rad; floating base.

Action: Box(-1, 1, (8,)), the joint torques / 15 N m (GEAR) in the robot's joint order
(hip_1, ankle_1, hip_2, ... ankle_4). ant.xml's gear of 150 relies on MuJoCo's armature of
1 kg m^2 per joint, which a URDF cannot carry: on the bare 0.04-0.07 kg limbs 150 N m throws the
ant a metre up and needs adaptive steps; 15 N m keeps joint speeds within ~15 rad/s (the
damping's terminal speed) with normal steps. A step lasts 0.02 s (4
physics substeps of 5 ms). Observation (27,) float64: torso height [m], torso orientation
(x, y, z, w), torso linear and angular velocity (in the torso's axes) [m/s, rad/s], the 8 joint
positions [rad] and velocities [rad/s]. Reward: forward velocity of the torso along x [m/s]
+ 1 while healthy - 0.5 |action|^2; terminated when the torso height leaves [0.2, 1.0] m;
truncated after 1000 steps. Reset: the MJCF file's init_qpos (hips 0, ankles +-1 rad, torso at
0.62 m, the feet just above the ground) plus a uniform +-0.1 rad per joint, at rest.
"""
from __future__ import annotations

import math

import gymnasium
import numpy as np

from sim_node.engine.api import ActuatorMode
from sim_node.gym.base import Task, TaskEnv
from sim_node.model.world import WorldModel
from sim_node.sim.simulator import Simulator

PHYSICS_DT = 0.005              # [s]
SUBSTEPS = 4
GEAR = 15.0                     # [N m] torque at |action| = 1 (see the README's decisions)
DENSITY = 5.0                   # [kg/m^3] ant.xml's geom density
RADIUS = 0.08                   # [m] every leg capsule's
DAMPING = 1.0                   # [N m s/rad] ant.xml's joint default
INIT_JOINTS = np.array([0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0])    # ant.xml init_qpos
INIT_HEIGHT = 0.62              # [m] torso centre: the lowest foot ~3 cm above the ground, so the
                                # first step after a reset touches nothing (no warm start carried)
INITIAL_RANGE = 0.1             # [rad]
HEALTHY_Z = (0.2, 1.0)          # [m]
CTRL_COST = 0.5
MAX_EPISODE_STEPS = 1000
SPACING = 5.0                   # [m] between the copies along x (an ant spans ~1.8 m): apart
                                # along the broadphase's sweep axis, so that it pairs each ant's
                                # bodies with their own and the ground's only
GROUND_GROUP, ANT_GROUP = 1, 2  # collision filter bits
# per leg: direction of its capsules in the torso plane, ankle axis, ankle range [deg]
LEGS = (((1, 1), (-1, 1, 0), (30, 100)), ((-1, 1), (1, 1, 0), (-100, -30)),
        ((-1, -1), (-1, 1, 0), (-100, -30)), ((1, -1), (1, 1, 0), (30, 100)))


def _capsule(a, b):
    """URDF <inertial>, <visual> and <collision> of a capsule from point a to b (link frame)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    h = float(np.linalg.norm(d))
    centre = (a + b) / 2
    # the capsule's axis (URDF: local z) turned onto d: pitch 90 deg, then yaw in the plane
    rpy = f"0 {math.pi / 2!r} {math.atan2(d[1], d[0])!r}"
    r = RADIUS
    m_cyl = DENSITY * math.pi * r * r * h
    m_half = DENSITY * 2.0 / 3.0 * math.pi * r ** 3           # one hemisphere
    izz = m_cyl * r * r / 2 + 2 * m_half * 2 * r * r / 5
    ixx = (m_cyl * (r * r / 4 + h * h / 12)
           + 2 * m_half * (83.0 / 320.0 * r * r + (h / 2 + 3 * r / 8) ** 2))
    xyz = " ".join(repr(float(c)) for c in centre)
    origin = f'<origin xyz="{xyz}" rpy="{rpy}"/>'
    geometry = f'<geometry><capsule radius="{r!r}" length="{h!r}"/></geometry>'
    return (f'<inertial>{origin}<mass value="{m_cyl + 2 * m_half!r}"/>'
            f'<inertia ixx="{ixx!r}" iyy="{ixx!r}" izz="{izz!r}" ixy="0" ixz="0" iyz="0"/>'
            f'</inertial><visual>{origin}{geometry}</visual>'
            f'<collision>{origin}{geometry}</collision>')


def ant_urdf() -> str:
    """The ant of mjcf/ant.xml as URDF text (see the module docstring)."""
    r = 0.25
    m = DENSITY * 4.0 / 3.0 * math.pi * r ** 3
    i = 2.0 / 5.0 * m * r * r
    parts = ['<robot name="ant"><link name="torso">'
             f'<inertial><mass value="{m!r}"/><inertia ixx="{i!r}" iyy="{i!r}" izz="{i!r}" '
             'ixy="0" ixz="0" iyz="0"/></inertial>'
             f'<visual><geometry><sphere radius="{r}"/></geometry></visual>'
             f'<collision><geometry><sphere radius="{r}"/></geometry></collision></link>']
    for k, ((sx, sy), axis, (lo, hi)) in enumerate(LEGS, start=1):
        step = (0.2 * sx, 0.2 * sy, 0.0)
        n = math.sqrt(axis[0] ** 2 + axis[1] ** 2)
        parts.append(
            f'<link name="aux_{k}_geom">{_capsule((0, 0, 0), step)}</link>'
            f'<joint name="aux_{k}_weld" type="fixed"><parent link="torso"/>'
            f'<child link="aux_{k}_geom"/></joint>'
            f'<link name="aux_{k}">{_capsule((0, 0, 0), step)}</link>'
            f'<joint name="hip_{k}" type="revolute"><parent link="torso"/>'
            f'<child link="aux_{k}"/><origin xyz="{step[0]} {step[1]} 0"/><axis xyz="0 0 1"/>'
            f'<limit lower="{math.radians(-40)!r}" upper="{math.radians(40)!r}" '
            f'effort="{GEAR}" velocity="100"/><dynamics damping="{DAMPING}"/></joint>'
            f'<link name="foot_{k}">{_capsule((0, 0, 0), (2 * step[0], 2 * step[1], 0))}</link>'
            f'<joint name="ankle_{k}" type="revolute"><parent link="aux_{k}"/>'
            f'<child link="foot_{k}"/><origin xyz="{step[0]} {step[1]} 0"/>'
            f'<axis xyz="{axis[0] / n!r} {axis[1] / n!r} 0"/>'
            f'<limit lower="{math.radians(lo)!r}" upper="{math.radians(hi)!r}" '
            f'effort="{GEAR}" velocity="100"/><dynamics damping="{DAMPING}"/></joint>')
    parts.append("</robot>")
    return "".join(parts)


GROUND = ('<robot name="ground"><link name="ground"><collision><geometry>'
          '<plane normal="0 0 1"/></geometry></collision></link></robot>')


class AntTask(Task):
    name = "sim_node/Ant-v0"
    dt = PHYSICS_DT * SUBSTEPS
    max_episode_steps = MAX_EPISODE_STEPS

    def __init__(self, copies: int):
        super().__init__(copies)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (8,), np.float64)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (27,), np.float64)
        world = WorldModel()
        world.simulation.physics_dt = PHYSICS_DT
        world.loadTerrain(GROUND, name="ground")
        urdf = ant_urdf()
        self.origins = np.zeros((self.copies, 2))
        self.origins[:, 0] = SPACING * np.arange(self.copies)
        for k in range(self.copies):
            world.add(world.makeRobot(urdf, False, name=f"ant_{k}",
                                      t=(*self.origins[k], INIT_HEIGHT)))
        self.world = world
        lower, upper = world.robot(0).getJointLimits()
        self._lower, self._upper = lower[7:], upper[7:]
        self.sim = Simulator(world)
        # the ants collide with the ground, never with each other (they may walk across)
        self.filter_collisions([world.terrain("ground")], GROUND_GROUP, GROUND_GROUP | ANT_GROUP)
        self.filter_collisions([world.robot(k) for k in range(self.copies)], ANT_GROUP,
                               GROUND_GROUP)
        scene = self.sim.engine
        for r in range(self.copies):
            scene.set_commands(r, int(ActuatorMode.TORQUE), tau_ff=np.zeros(8))
        self._scene = scene
        self._q, self._v, self._tau = scene.robot_q, scene.robot_v, scene.robot_tau_ff
        self._x = np.zeros(self.copies)     # torso x before the step [m]
        self._ctrl = np.zeros(self.copies)  # the step's control cost

    def reset_copies(self, indices, rngs):
        for r, rng in zip(indices, rngs):
            joints = np.clip(INIT_JOINTS + rng.uniform(-INITIAL_RANGE, INITIAL_RANGE, 8),
                             self._lower, self._upper)
            self._q[r][:] = (*self.origins[r], INIT_HEIGHT, 0.0, 0.0, 0.0, 1.0, *joints)
            self._v[r][:] = 0.0
            self._tau[r][:] = 0.0
        self._scene.refresh()

    def apply(self, actions):
        torques = GEAR * actions
        for tau, t in zip(self._tau, torques):
            tau[6:] = t
        self._x = np.array([q[0] for q in self._q])
        self._ctrl = CTRL_COST * np.sum(actions * actions, axis=1)

    def observe(self):
        q, v = np.array(self._q), np.array(self._v)
        return np.concatenate((q[:, 2:7], v[:, :6], q[:, 7:], v[:, 6:]), axis=1)

    def evaluate(self, obs):
        x = np.array([q[0] for q in self._q])
        healthy = (obs[:, 0] >= HEALTHY_Z[0]) & (obs[:, 0] <= HEALTHY_Z[1])
        reward = (x - self._x) / self.dt + healthy - self._ctrl
        return reward, ~healthy, None

    def camera(self):
        x, y = self._q[0][0], self._q[0][1]
        return (x + 2.5, y - 2.5, 1.8), (x, y, 0.3)


class AntEnv(TaskEnv):
    """sim_node/Ant-v0 (see the module docstring)."""
    task_class = AntTask
