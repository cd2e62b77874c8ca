"""sim_node/CartPole-v0: the cart-pole of pybullet_data's cartpole.urdf (pybullet_envs'
CartPoleBulletEnv task, with Gymnasium CartPole's constants).

The cart slides on the prismatic joint slider_to_cart (x [m]), the pole turns freely on the
continuous joint cart_to_pole (theta [rad] about +y: 0 upright, positive tips the pole towards
+x). An action pushes the cart with a constant force over the step: Discrete(2), 0 = -10 N,
1 = +10 N; or with continuous=True a Box(-1, 1, (1,)) scaled by 10 N. Every step lasts 0.02 s
(4 physics substeps of 5 ms), gravity 9.8 m/s^2. Observation (x, x_dot, theta, theta_dot)
float64; reward 1 per step; terminated when |theta| > 12 degrees or |x| > 2.4 m; truncated
after 500 steps (the registration's TimeLimit). Reset draws the four state values uniformly in
[-0.05, 0.05].
"""
from __future__ import annotations

import math

import gymnasium
import numpy as np

from sim_node.engine.api import ActuatorMode, RobotStep
from sim_node.gym.base import Task, TaskEnv, pybullet_data_urdf
from sim_node.model.world import WorldModel
from sim_node.sim.simulator import Simulator

FORCE = 10.0                    # [N] the push of one action
DT = 0.02                       # [s] per step
SUBSTEPS = 4                    # physics substeps per step
GRAVITY = 9.8                   # [m/s^2]
THETA_LIMIT = math.radians(12.0)
X_LIMIT = 2.4                   # [m]
INITIAL_RANGE = 0.05            # initial state values uniform in +-this
MAX_EPISODE_STEPS = 500


class CartPoleTask(Task):
    name = "sim_node/CartPole-v0"
    dt = DT
    max_episode_steps = MAX_EPISODE_STEPS

    def __init__(self, copies: int, continuous: bool = False):
        super().__init__(copies)
        if not isinstance(continuous, bool):
            raise ValueError(f"{self.name}: continuous must be a bool, got {continuous!r}")
        self.continuous = continuous
        self.action_space = (gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float64) if continuous
                             else gymnasium.spaces.Discrete(2))
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float64)
        world = WorldModel()
        world.simulation.physics_dt = DT / SUBSTEPS
        world.simulation.gravity = (0.0, 0.0, -GRAVITY)
        urdf = pybullet_data_urdf("cartpole.urdf")
        for i in range(self.copies):
            world.add(world.makeRobot(urdf, True, name=f"cartpole_{i}"))
        self.world = world
        self.sim = Simulator(world)
        self.sim.setGravity((0.0, 0.0, -GRAVITY))
        # every copy at the same place, colliding with nothing (the task has no contacts): each
        # copy's arithmetic is then exactly the single environment's, and the broadphase has
        # no body to sweep
        self.filter_collisions([world.robot(i) for i in range(self.copies)], 0, 0)
        scene = self.sim.engine
        # both joints torque driven (the pole's torque stays 0); a step is one engine call
        # (sim_node.engine.stepper.RobotStep): the copies' forces written, the 4 substeps
        # taken, the observations (x, x_dot, theta, theta_dot) read from (q, v) = (x, theta,
        # x_dot, theta_dot) and the episode bounds |x| <= X_LIMIT, |theta| <= THETA_LIMIT
        # checked. Its substeps are Simulator.simulate(DT)'s (the task has no controllers,
        # sensors or held wrenches, all simulate adds; the Simulator's getStatus is not updated:
        # the step's status is self.kernel.status). Action k of Discrete(2) pushes with
        # (2 k - 1) FORCE.
        for r in range(self.copies):
            scene.set_commands(r, int(ActuatorMode.TORQUE), tau_ff=np.zeros(2))
        self.kernel = RobotStep(scene, range(self.copies), DT, SUBSTEPS, (0, 2, 1, 3),
                                (X_LIMIT, THETA_LIMIT), ((-FORCE, 0.0), (FORCE, 0.0)))
        self._q, self._v, self._tau = scene.robot_q, scene.robot_v, scene.robot_tau_ff
        self._scene = scene

    def reset_copies(self, indices, rngs):
        for r, rng in zip(indices, rngs):
            x, x_dot, theta, theta_dot = rng.uniform(-INITIAL_RANGE, INITIAL_RANGE, 4)
            self._q[r][:] = (x, theta)
            self._v[r][:] = (x_dot, theta_dot)
            self._tau[r][:] = 0.0
        self._scene.refresh()

    def step(self, actions):
        if self.continuous:
            obs, terminated = self.kernel.step_dofs(0, FORCE * actions[:, 0])
        else:
            obs, terminated = self.kernel.step_choices(np.ascontiguousarray(actions))
        return obs, np.ones(self.copies), terminated, None

    def observe(self):
        return self.kernel.observe()

    def camera(self):
        return (0.0, -4.0, 0.6), (0.0, 0.0, 0.5)


class CartPoleEnv(TaskEnv):
    """sim_node/CartPole-v0 (see the module docstring); continuous=True for a force in [-1, 1]
    x 10 N.

    Its step is the task's one engine call (CartPoleTask.kernel) with nothing around it but
    the action's check: physics is ~1 us of a step, and Python would otherwise be most of it."""
    task_class = CartPoleTask

    def __init__(self, render_mode: str | None = None, **options):
        super().__init__(render_mode, **options)
        self._kernel = self.task.kernel
        self._continuous = self.task.continuous

    def step(self, action):
        if not self._ready:
            raise RuntimeError(f"{self.task.name}: call reset() before step()")
        # an int / numpy int64 within Discrete(2) steps at once; anything else goes through
        # the task's full check (which raises on a bad action) first
        result = None if self._continuous else self._kernel.step_choice(action)
        if result is None:
            actions = self.task.check_actions(action, batched=False)
            result = (self._kernel.step_dof(0, FORCE * actions[0, 0]) if self._continuous
                      else self._kernel.step_choice(int(actions[0])))
        obs, terminated = result
        return obs, 1.0, terminated, False, {}
