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

from sim_node.engine.api import ActuatorMode
from sim_node.engine.stepper import RobotStep
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
        # both joints torque driven (the pole's torque stays 0); an action writes the cart's
        # feed-forward force in place, the engine's own array (no validation pass per step)
        for r in range(self.copies):
            scene.set_commands(r, int(ActuatorMode.TORQUE), tau_ff=np.zeros(2))
        self._q, self._v, self._tau = scene.robot_q, scene.robot_v, scene.robot_tau_ff
        self._scene = scene

    def reset_copies(self, indices, rngs):
        for r, rng in zip(indices, rngs):
            x, x_dot, theta, theta_dot = rng.uniform(-INITIAL_RANGE, INITIAL_RANGE, 4)
            self._q[r][:] = (x, theta)
            self._v[r][:] = (x_dot, theta_dot)
            self._tau[r][:] = 0.0
        self._scene.refresh()

    # apply / observe / evaluate have a path for one copy (the single environment, whose step
    # is mostly this Python) doing the same arithmetic on scalars
    def apply(self, actions):
        if self.copies == 1:
            a = actions[0, 0] if self.continuous else actions[0]
            self._tau[0][0] = FORCE * a if self.continuous else FORCE * (2 * int(a) - 1)
            return
        force = FORCE * actions[:, 0] if self.continuous else FORCE * (2 * actions - 1)
        for tau, f in zip(self._tau, force.tolist()):
            tau[0] = f

    def observe(self):
        n = self.copies
        obs = np.empty((n, 4))              # per copy (x, x_dot, theta, theta_dot)
        if n == 1:
            obs[0, 0::2] = self._q[0]
            obs[0, 1::2] = self._v[0]
        else:
            obs[:, 0::2] = np.concatenate(self._q).reshape(n, 2)
            obs[:, 1::2] = np.concatenate(self._v).reshape(n, 2)
        return obs

    def evaluate(self, obs):
        if self.copies == 1:
            x, theta = obs[0, 0], obs[0, 2]
            return np.ones(1), np.array((abs(x) > X_LIMIT or abs(theta) > THETA_LIMIT,)), None
        terminated = (np.abs(obs[:, 0]) > X_LIMIT) | (np.abs(obs[:, 2]) > THETA_LIMIT)
        return np.ones(self.copies), terminated, None

    def camera(self):
        return (0.0, -4.0, 0.6), (0.0, 0.0, 0.5)


class CartPoleEnv(TaskEnv):
    """sim_node/CartPole-v0 (see the module docstring); continuous=True for a force in [-1, 1]
    x 10 N.

    Its step is one engine call (sim_node.engine.stepper.RobotStep: the force written, the 4
    substeps taken, the observation read and the bounds checked), the same arithmetic as the
    task's step (Simulator.simulate of DT, which takes the same substeps): physics is ~1 us of
    it, and the Python around it would otherwise be most of the step. The task has no
    controllers, sensors or held wrenches, which is all Simulator.simulate adds to the engine's
    step; the task's Simulator.getStatus is not updated by it (the step's own status is
    RobotStep.status)."""
    task_class = CartPoleTask

    def __init__(self, render_mode: str | None = None, **options):
        super().__init__(render_mode, **options)
        # observation (x, x_dot, theta, theta_dot) from (q, v) = (x, theta, x_dot, theta_dot);
        # the episode ends beyond |x| = X_LIMIT or |theta| = THETA_LIMIT; action k of the
        # Discrete space pushes with (2 k - 1) FORCE (the pole's torque stays 0)
        self._kernel = RobotStep(self.task.sim.engine, 0, DT, SUBSTEPS, (0, 2, 1, 3),
                                 (X_LIMIT, THETA_LIMIT), ((-FORCE, 0.0), (FORCE, 0.0)))
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
