"""sim_node/PandaReach-v0: bring the Franka Panda's grasp point (pybullet_data's
franka_panda/panda.urdf, fixed base at the origin) to a goal position.

Action: Box(-1, 1, (7,)), delta joint positions: each step moves the PID targets of the seven
arm joints by 0.05 rad x action, clipped to the joint limits (the fingers hold 0.02 m). A step
lasts 1/24 s (10 physics substeps of 1/240 s, PyBullet's default step) under the robot's
default PID gains (sim_node.sim.gains). Observation (20,) float64: the arm's joint positions
(7) [rad] and velocities (7) [rad/s], the grasp point (panda_grasptarget) (3) and the goal (3)
[m] in the robot's base frame. Reward: minus the distance grasp point - goal [m] (dense);
terminated on success, the grasp point within 5 cm of the goal (info["is_success"]); truncated
after 50 steps. Reset: the arm at its ready pose plus a uniform +-0.1 rad per joint, at rest;
the goal uniform in the box [0.3, 0.6] x [-0.3, 0.3] x [0.1, 0.6] m.
"""
from __future__ import annotations

import gymnasium
import numpy as np

from sim_node.engine.api import Data, kinematics
from sim_node.gym.base import Task, TaskEnv, pybullet_data_urdf
from sim_node.model.world import WorldModel
from sim_node.sim.simulator import Simulator

PHYSICS_DT = 1.0 / 240.0        # [s]
SUBSTEPS = 10
MAX_DELTA = 0.05                # [rad] target change per step at |action| = 1
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])    # [rad]
FINGERS = 0.02                  # [m] each finger's opening
INITIAL_RANGE = 0.1             # [rad] around READY
GOAL_LOW = np.array([0.3, -0.3, 0.1])
GOAL_HIGH = np.array([0.6, 0.3, 0.6])
SUCCESS_DISTANCE = 0.05         # [m]
MAX_EPISODE_STEPS = 50
EE_LINK = "panda_grasptarget"


class PandaReachTask(Task):
    name = "sim_node/PandaReach-v0"
    dt = PHYSICS_DT * SUBSTEPS
    max_episode_steps = MAX_EPISODE_STEPS

    def __init__(self, copies: int):
        super().__init__(copies)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (7,), np.float64)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (20,), np.float64)
        world = WorldModel()
        world.simulation.physics_dt = PHYSICS_DT
        urdf = pybullet_data_urdf("franka_panda", "panda.urdf")
        for i in range(self.copies):
            robot = world.makeRobot(urdf, True, name=f"panda_{i}")
            robot.setConfig(np.concatenate((READY, (FINGERS,))))   # finger 2 mimics 1
            world.add(robot)
        self.world = world
        robot = world.robot(0)
        lower, upper = robot.getJointLimits()
        self._lower, self._upper = lower[:7], upper[:7]
        self._ee = robot.link(EE_LINK).getIndex()
        self.sim = Simulator(world)
        # every copy at the origin, colliding with nothing (no self collision, no floor, as
        # PyBullet loads the arm): each copy's arithmetic is exactly the single environment's
        self.filter_collisions([world.robot(i) for i in range(self.copies)], 0, 0)
        scene = self.sim.engine
        self._scene = scene
        self._q, self._v = scene.robot_q, scene.robot_v
        self._q_des, self._iterm = scene.robot_q_des, scene.robot_iterm
        self.goals = np.zeros((self.copies, 3))     # [m] base frame
        # each copy's kinematics model and a Data of the task's own for its forward
        # kinematics (the engine's function on the simulated q, without the Simulator's
        # per-call lookups: the grasp points are read at every step)
        self._kinematics = [(world.robot(r).model, Data(world.robot(r).model))
                            for r in range(self.copies)]

    def reset_copies(self, indices, rngs):
        for r, rng in zip(indices, rngs):
            q = np.clip(READY + rng.uniform(-INITIAL_RANGE, INITIAL_RANGE, 7),
                        self._lower, self._upper)
            self.goals[r] = rng.uniform(GOAL_LOW, GOAL_HIGH)
            self._q[r][:7] = q
            self._q[r][7:] = FINGERS
            self._v[r][:] = 0.0
            self._q_des[r][:] = self._q[r]
            self._iterm[r][:] = 0.0
        self._scene.refresh()

    def apply(self, actions):
        targets = np.array([q[:7] for q in self._q_des])
        targets = np.clip(targets + MAX_DELTA * actions, self._lower, self._upper)
        for q_des, target in zip(self._q_des, targets):
            q_des[:7] = target

    def observe(self):
        q = np.array([q[:7] for q in self._q])
        v = np.array([v[:7] for v in self._v])
        return np.concatenate((q, v, self.grasp_points(), self.goals), axis=1)

    def grasp_points(self) -> np.ndarray:
        """(N, 3) [m] the grasp points (base frame = world: every base is at the origin)."""
        out = np.empty((self.copies, 3))
        for r, ((model, data), q) in enumerate(zip(self._kinematics, self._q)):
            out[r] = kinematics.frames(model, data, q)[1][self._ee]
        return out

    def evaluate(self, obs):
        distance = np.linalg.norm(obs[:, 14:17] - obs[:, 17:20], axis=1)
        success = distance < SUCCESS_DISTANCE
        return -distance, success, success

    def camera(self):
        return (1.6, -1.2, 1.0), (0.3, 0.0, 0.4)


class PandaReachEnv(TaskEnv):
    """sim_node/PandaReach-v0 (see the module docstring)."""
    task_class = PandaReachTask
