"""Gymnasium benchmark: env steps per second of sim_node.gym's environments, single and vector
(N copies in one world, one Simulator.simulate per step), against the same tasks written as
pybullet_envs writes its environments, on real PyBullet in the same process.

Tasks (the docstrings of sim_node/gym/cartpole.py, panda_reach.py, ant.py say them exactly):
  CartPole    cartpole.urdf, +-10 N on the cart, 0.02 s a step in 4 physics substeps.
  PandaReach  panda.urdf (fixed base), 7 joint-position targets moved by 0.05 rad x action under
              a PD, 1/24 s a step in 10 substeps of 1/240 s, observation with the grasp point.
  Ant         the ant of mjcf/ant.xml on a plane, 8 joint torques, 0.02 s a step in 4
              substeps of 5 ms.

How each side runs (actions drawn beforehand from a seeded generator; episodes reset as they
end; only the stepping loop is timed, best of --repeat runs after a warm-up). Like is compared
with like: both single environments are gymnasium.Env classes driven by the same loop, once
through gymnasium.make's wrappers (TimeLimit, OrderEnforcing, PassiveEnvChecker) on both sides
and once unwrapped (env.unwrapped on both, the loop counting the time limit).
  sim_node single   gymnasium.make(id) (its .unwrapped for the unwrapped row), env.reset() at
                    episode ends.
  sim_node vector   gymnasium.make_vec(id, N, vectorization_mode="vector_entry_point"): one
                    world of N copies, one step call for N env steps, autoreset inside; and
                    with workers=2: the copies in two worlds stepped at the same time in two
                    threads (the engine's step releases the GIL), one per core.
  PyBullet single   a gymnasium.Env written as pybullet_envs writes its environments (their
                    CartPoleBulletEnv / locomotion envs, on gymnasium instead of the old gym
                    package), registered here and built by gymnasium.make: p.connect(p.DIRECT),
                    loadURDF / loadMJCF once; per step setJointMotorControl2 / Array
                    (TORQUE_CONTROL force, or POSITION_CONTROL targets for the Panda), one
                    stepSimulation with setTimeStep(step) and
                    setPhysicsEngineParameter(numSubSteps) giving the same substeps,
                    getJointState(s) (and getLinkState / getBasePositionAndOrientation /
                    getBaseVelocity) for the observation array, the reward and done as sim_node
                    computes them; reset by resetJointState / resetBasePositionAndOrientation
                    (not pybullet_envs' resetSimulation + reload, which would cost PyBullet more).
                    The ant is pybullet_data's mjcf/ant.xml through loadMJCF (PyBullet's own
                    masses; the same 15 N m torque scale).
  PyBullet N-world  the same with N robots in one PyBullet world (one stepSimulation per N env
                    steps, per-robot calls for commands and observations): PyBullet's own
                    version of the vector trick.
Ratio = sim_node env steps/s / PyBullet single-env steps/s of the same row (vector rows: against
PyBullet's gymnasium.make single environment; the issue's goal: >= 5x).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gymnasium  # noqa: E402
import pybullet as pb  # noqa: E402
import pybullet_data  # noqa: E402

import sim_node.gym  # noqa: E402,F401
from sim_node.gym import ant, cartpole, panda_reach  # noqa: E402

GOAL = 5.0


# -- the same tasks on PyBullet ------------------------------------------------------------
class PyBulletTask:
    """N robots of one task in one PyBullet DIRECT client (N = 1: pybullet_envs' loop). Per robot
    k: command(k, action) before the step, outcome(k, action) -> (obs, reward, done) after it."""

    def __init__(self, n: int):
        self.n = n
        self.c = pb.connect(pb.DIRECT)
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self.c)
        self.steps = np.zeros(n, dtype=int)

    def substeps(self, dt, n):
        # one stepSimulation = dt [s] in n substeps of dt / n (PyBullet splits its time step
        # into numSubSteps)
        pb.setTimeStep(dt, physicsClientId=self.c)
        pb.setPhysicsEngineParameter(numSubSteps=n, physicsClientId=self.c)

    def isolate(self, group=0, mask=0):
        # as sim_node's copies: the robots collide with nothing (group / mask 0 on every link)
        for b in self.ids:
            for link in range(-1, pb.getNumJoints(b, physicsClientId=self.c)):
                pb.setCollisionFilterGroupMask(b, link, group, mask, physicsClientId=self.c)

    def close(self):
        pb.disconnect(self.c)

    def step(self, actions):
        """N-world step: every robot commanded, one stepSimulation, every outcome; done (N,)."""
        for k, a in enumerate(actions):
            self.command(k, a)
        pb.stepSimulation(physicsClientId=self.c)
        return np.array([self.outcome(k, a)[2] for k, a in enumerate(actions)])

    def run(self, actions, limit, rng):
        """Step through actions (T, n, ...), resetting robots whose episode ended."""
        for k in range(self.n):
            self.reset(k, rng)
        for a in actions:
            done = self.step(a)
            self.steps += 1
            for k in np.flatnonzero(done | (self.steps >= limit)):
                self.reset(k, rng)
                self.steps[k] = 0


class PyBulletEnv(gymnasium.Env):
    """The single environment of a PyBulletTask, written as pybullet_envs writes theirs (e.g.
    CartPoleBulletEnv.step: set the motor, stepSimulation, read the joint states, build the
    observation array, reward and done): a gymnasium.Env, so that gymnasium.make wraps it
    exactly as it wraps sim_node's (TimeLimit, OrderEnforcing, PassiveEnvChecker)."""

    def __init__(self, task_class, env_id):
        spaces = gymnasium.make(env_id).unwrapped
        self.action_space, self.observation_space = spaces.action_space, spaces.observation_space
        self.task = task_class(1)
        self._command, self._outcome = self.task.command, self.task.outcome
        self._c = self.task.c

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.task.reset(0, self.np_random)
        return self._outcome(0, None)[0], {}

    def step(self, action):
        self._command(0, action)
        pb.stepSimulation(physicsClientId=self._c)
        obs, reward, done = self._outcome(0, action)
        return obs, reward, done, False, {}

    def close(self):
        self.task.close()


class PyBulletCartPole(PyBulletTask):
    def __init__(self, n):
        super().__init__(n)
        c = self.c
        pb.setGravity(0, 0, -cartpole.GRAVITY, physicsClientId=c)
        self.substeps(cartpole.DT, cartpole.SUBSTEPS)
        self.ids = [pb.loadURDF("cartpole.urdf", useFixedBase=True, physicsClientId=c)
                    for _ in range(n)]
        self.isolate()
        for b in self.ids:      # free joints: PyBullet's default velocity motors off
            for j in (0, 1):
                pb.setJointMotorControl2(b, j, pb.VELOCITY_CONTROL, force=0, physicsClientId=c)

    def reset(self, k, rng):
        x, x_dot, theta, theta_dot = rng.uniform(-0.05, 0.05, 4)
        pb.resetJointState(self.ids[k], 0, x, x_dot, physicsClientId=self.c)
        pb.resetJointState(self.ids[k], 1, theta, theta_dot, physicsClientId=self.c)

    def command(self, k, a):
        pb.setJointMotorControl2(self.ids[k], 0, pb.TORQUE_CONTROL,
                                 force=cartpole.FORCE if a == 1 else -cartpole.FORCE,
                                 physicsClientId=self.c)

    def outcome(self, k, a):
        b, c = self.ids[k], self.c
        x, x_dot = pb.getJointState(b, 0, physicsClientId=c)[0:2]
        theta, theta_dot = pb.getJointState(b, 1, physicsClientId=c)[0:2]
        obs = np.array((x, x_dot, theta, theta_dot))
        return obs, 1.0, abs(x) > cartpole.X_LIMIT or abs(theta) > cartpole.THETA_LIMIT


class PyBulletPanda(PyBulletTask):
    def __init__(self, n):
        super().__init__(n)
        c = self.c
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        self.substeps(panda_reach.PHYSICS_DT * panda_reach.SUBSTEPS, panda_reach.SUBSTEPS)
        self.ids = [pb.loadURDF("franka_panda/panda.urdf", useFixedBase=True,
                                physicsClientId=c) for _ in range(n)]
        self.isolate()
        info = [pb.getJointInfo(self.ids[0], j, physicsClientId=c)
                for j in range(pb.getNumJoints(self.ids[0], physicsClientId=c))]
        self.ee = [i[12].decode() for i in info].index(panda_reach.EE_LINK)
        self.lower = np.array([i[8] for i in info[:7]])
        self.upper = np.array([i[9] for i in info[:7]])
        self.targets = np.zeros((n, 7))
        self.goals = np.zeros((n, 3))
        self.joints = list(range(7))

    def reset(self, k, rng):
        q = np.clip(panda_reach.READY + rng.uniform(-0.1, 0.1, 7), self.lower, self.upper)
        self.goals[k] = rng.uniform(panda_reach.GOAL_LOW, panda_reach.GOAL_HIGH)
        for j in range(7):
            pb.resetJointState(self.ids[k], j, q[j], 0.0, physicsClientId=self.c)
        self.targets[k] = q

    def command(self, k, a):
        self.targets[k] = np.clip(self.targets[k] + panda_reach.MAX_DELTA * a, self.lower,
                                  self.upper)
        pb.setJointMotorControlArray(self.ids[k], self.joints, pb.POSITION_CONTROL,
                                     targetPositions=self.targets[k].tolist(),
                                     physicsClientId=self.c)

    def outcome(self, k, a):
        b, c = self.ids[k], self.c
        states = pb.getJointStates(b, self.joints, physicsClientId=c)
        ee = pb.getLinkState(b, self.ee, computeForwardKinematics=True, physicsClientId=c)[4]
        obs = np.concatenate(([s[0] for s in states], [s[1] for s in states], ee,
                              self.goals[k]))
        distance = float(np.linalg.norm(obs[14:17] - obs[17:20]))
        return obs, -distance, distance < panda_reach.SUCCESS_DISTANCE


class PyBulletAnt(PyBulletTask):
    def __init__(self, n):
        super().__init__(n)
        c = self.c
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        self.substeps(ant.PHYSICS_DT * ant.SUBSTEPS, ant.SUBSTEPS)
        plane = pb.loadURDF("plane.urdf", physicsClientId=c)
        pb.setCollisionFilterGroupMask(plane, -1, ant.GROUND_GROUP,
                                       ant.GROUND_GROUP | ant.ANT_GROUP, physicsClientId=c)
        self.ids = [pb.loadMJCF("mjcf/ant.xml", physicsClientId=c)[0] for _ in range(n)]
        self.isolate(ant.ANT_GROUP, ant.GROUND_GROUP)     # (ants apart, as sim_node's)
        names = [pb.getJointInfo(self.ids[0], j, physicsClientId=c)[1].decode()
                 for j in range(pb.getNumJoints(self.ids[0], physicsClientId=c))]
        self.joints = [names.index(f"{kind}_{k}") for k in range(1, 5)
                       for kind in ("hip", "ankle")]
        for b in self.ids:
            pb.setJointMotorControlArray(b, self.joints, pb.VELOCITY_CONTROL,
                                         forces=[0.0] * 8, physicsClientId=c)

    def reset(self, k, rng):
        q = ant.INIT_JOINTS + rng.uniform(-0.1, 0.1, 8)
        b = self.ids[k]
        pb.resetBasePositionAndOrientation(b, (ant.SPACING * k, 0, ant.INIT_HEIGHT),
                                           (0, 0, 0, 1), physicsClientId=self.c)
        pb.resetBaseVelocity(b, (0, 0, 0), (0, 0, 0), physicsClientId=self.c)
        for j, value in zip(self.joints, q):
            pb.resetJointState(b, j, value, 0.0, physicsClientId=self.c)

    def command(self, k, a):
        pb.setJointMotorControlArray(self.ids[k], self.joints, pb.TORQUE_CONTROL,
                                     forces=(ant.GEAR * a).tolist(), physicsClientId=self.c)

    def outcome(self, k, a):
        b, c = self.ids[k], self.c
        position, orientation = pb.getBasePositionAndOrientation(b, physicsClientId=c)
        linear, angular = pb.getBaseVelocity(b, physicsClientId=c)
        states = pb.getJointStates(b, self.joints, physicsClientId=c)
        obs = np.concatenate(((position[2],), orientation, linear, angular,
                              [s[0] for s in states], [s[1] for s in states]))
        healthy = ant.HEALTHY_Z[0] <= obs[0] <= ant.HEALTHY_Z[1]
        # (the x velocity of the base for sim_node's (x - x_before) / dt)
        ctrl = 0.0 if a is None else ant.CTRL_COST * float(np.square(a).sum())
        return obs, linear[0] + healthy - ctrl, not healthy


TASKS = {
    "CartPole": ("sim_node/CartPole-v0", PyBulletCartPole, cartpole.MAX_EPISODE_STEPS),
    "PandaReach": ("sim_node/PandaReach-v0", PyBulletPanda, panda_reach.MAX_EPISODE_STEPS),
    "Ant": ("sim_node/Ant-v0", PyBulletAnt, ant.MAX_EPISODE_STEPS),
}


# -- timing --------------------------------------------------------------------------------
def _actions(space, n, steps, seed=0):
    rng = np.random.default_rng(seed)
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(0, space.n, (steps, n))
    return rng.uniform(space.low, space.high, (steps, n, *space.shape))


CLOCK = time.perf_counter      # --cpu-time: time.process_time


def _best(run, repeat):
    run()   # warm-up
    best = math.inf
    for _ in range(repeat):
        start = CLOCK()
        run()
        best = min(best, CLOCK() - start)
    return best


def _make(env_id, name, task_class, limit):
    """(sim_node's env, PyBullet's env), both from gymnasium.make (TimeLimit, OrderEnforcing,
    PassiveEnvChecker): the PyBullet one registered here as bench/PyBullet<name>-v0."""
    pb_id = f"bench/PyBullet{name}-v0"
    if pb_id not in gymnasium.registry:
        gymnasium.register(pb_id, entry_point=PyBulletEnv, max_episode_steps=limit,
                           kwargs=dict(task_class=task_class, env_id=env_id))
    return gymnasium.make(env_id), gymnasium.make(pb_id)


def single(env, steps, limit, repeat, unwrapped):
    """env steps/s of one environment driven by the same loop on either side: through
    gymnasium.make's wrappers, or its .unwrapped env with the loop counting the time limit."""
    if unwrapped:
        env = env.unwrapped
    actions = _actions(env.action_space, 1, steps)[:, 0]

    def run():
        env.reset(seed=0)
        k = 0
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            k += 1
            if terminated or truncated or k >= limit:
                env.reset()
                k = 0
    return steps / _best(run, repeat)


def sim_node_vector(env_id, n, steps, repeat, workers=1):
    envs = gymnasium.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                              workers=workers)
    actions = _actions(envs.single_action_space, n, steps)

    def run():
        envs.reset(seed=0)
        for a in actions:
            envs.step(a)
    return n * steps / _best(run, repeat)


def pybullet(task_class, n, steps, limit, repeat, space):
    task = task_class(n)
    actions = _actions(space, n, steps)
    try:
        return n * steps / _best(lambda: task.run(actions, limit, np.random.default_rng(0)),
                                 repeat)
    finally:
        task.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[16, 64],
                        help="vector sizes N (default 16 64)")
    parser.add_argument("--steps", type=int, default=2000,
                        help="env steps per timed run of a single env (vector runs: this many "
                             "env steps over the N copies, at least 20 vector steps)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by this process's CPU time instead of the wall clock: on a "
                             "machine loaded by other processes it measures what a free core "
                             "would give (not meaningful for the 2-thread rows, whose CPU time "
                             "sums both threads)")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter
    print(f"gymnasium {gymnasium.__version__}, PyBullet {pb.getAPIVersion()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"{'CPU time' if args.cpu_time else 'wall clock'}")
    print(f"\n| task | env | sim_node [env steps/s] | PyBullet single [env steps/s] | "
          f"PyBullet N-world [env steps/s] | ratio vs PyBullet single | goal {GOAL:g}x |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name in args.only:
        env_id, task_class, limit = TASKS[name]
        ours_env, pb_env = _make(env_id, name, task_class, limit)
        space = ours_env.action_space
        steps = args.steps
        reference = None
        for unwrapped in (False, True):
            theirs = single(pb_env, steps, limit, args.repeat, unwrapped)
            ours = single(ours_env, steps, limit, args.repeat, unwrapped)
            reference = reference or theirs
            kind = "single, unwrapped" if unwrapped else "single, gymnasium.make"
            print(f"| {name} | {kind} | {ours:,.0f} | {theirs:,.0f} | | {ours / theirs:.2f} "
                  f"| {'met' if ours >= GOAL * theirs else 'not met'} |", flush=True)
        pb_env.close()
        for n in args.sizes:
            vector_steps = max(20, steps // n)
            world = pybullet(task_class, n, vector_steps, limit, args.repeat, space)
            for workers in (1,) if args.cpu_time else (1, 2):
                ours = sim_node_vector(env_id, n, vector_steps, args.repeat, workers)
                print(f"| {name} | vector N={n}{', 2 worlds in 2 threads' if workers == 2 else ''}"
                      f" | {ours:,.0f} | {reference:,.0f} | {world:,.0f} | {ours / reference:.2f} "
                      f"| {'met' if ours >= GOAL * reference else 'not met'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
