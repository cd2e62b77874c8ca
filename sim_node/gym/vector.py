"""TaskVectorEnv: N copies of a sim_node.gym task stepped by ONE engine step per env step
(Simulator.simulate, or for CartPole the engine's one-call RobotStep).

The copies live in one world, placed so that they never touch (sim_node.gym.base.Task), so the
engine steps them all in one call and the step path reads and writes the engine's per-robot
arrays (no Simulator or controller method per copy). Copy i behaves exactly as a single
environment reset with seed + i and given the same actions (tests/gym/test_vector.py checks it
bit for bit): each copy has its own random generator, draws its initial state from it as the
single environment does, and has its own episode step count for the time limit.

Autoreset is gymnasium's AutoresetMode.SAME_STEP: a copy whose episode ends (terminated or
truncated) in a step is reset at the end of that same step; the step returns its reward and
terminated / truncated flags, the new episode's first observation in `obs`, and the last
observation of the ended episode in infos["final_obs"] (infos["_final_obs"] marks the copies).
No copy is ever stepped past the end of its episode, so its next episode starts from exactly
the state a single environment's reset() gives.
"""
from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sim_node.gym.base import Task


class TaskGroup(Task):
    """The copies of a task split over `workers` worlds (Simulators) whose steps run at the
    same time in threads: the engine's step releases the GIL, so each world's physics gets a
    core. Copy k of the group is copy k - offset of the world holding it; each world's copies
    are as in one world, so the group equals single environments exactly as one world does."""

    def __init__(self, task_class: type, copies: int, workers: int, **options):
        from concurrent.futures import ThreadPoolExecutor

        sizes = [copies // workers + (1 if w < copies % workers else 0) for w in range(workers)]
        self.parts = [task_class(size, **options) for size in sizes]
        first = self.parts[0]
        self.name, self.dt = first.name, first.dt
        self.max_episode_steps = first.max_episode_steps
        self.action_space, self.observation_space = first.action_space, first.observation_space
        self.copies = copies
        self.sim = None
        self._bounds = np.cumsum([0] + sizes)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="sim_node.gym")

    def _split(self, indices, values):
        # {part: (local indices, values)} of global copy indices
        out = {}
        for i, value in zip(indices, values):
            w = int(np.searchsorted(self._bounds, i, side="right")) - 1
            local, vals = out.setdefault(w, ([], []))
            local.append(i - self._bounds[w])
            vals.append(value)
        return out

    def reset_copies(self, indices, rngs):
        for w, (local, part_rngs) in self._split(indices, rngs).items():
            self.parts[w].reset_copies(local, part_rngs)

    def step(self, actions):
        b = self._bounds
        futures = [self._pool.submit(part.step, actions[b[w]:b[w + 1]])
                   for w, part in enumerate(self.parts)]
        results = [f.result() for f in futures]
        obs, reward, terminated, success = (
            np.concatenate([r[k] for r in results]) if results[0][k] is not None else None
            for k in range(4))
        return obs, reward, terminated, success

    def observe(self):
        return np.concatenate([part.observe() for part in self.parts])

    def close(self):
        self._pool.shutdown()


class TaskVectorEnv(VectorEnv):
    """num_envs copies of `task_class` (a sim_node.gym.base.Task) in one world; `options` go to
    the task (e.g. continuous=True for CartPole). max_episode_steps: the truncation length
    (None: the task's). workers: the copies split over this many worlds stepped at the same
    time in threads (sim_node.gym.vector.TaskGroup), one per core; 1 (default) is one world,
    one engine step per step."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task_class: type, num_envs: int, max_episode_steps: int | None = None,
                 workers: int = 1, **options):
        if not (isinstance(task_class, type) and issubclass(task_class, Task)):
            raise ValueError(f"task_class must be a sim_node.gym.base.Task subclass, "
                             f"got {task_class!r}")
        if not isinstance(workers, (int, np.integer)) or isinstance(workers, bool) \
                or not 1 <= workers <= max(1, num_envs if isinstance(num_envs, int) else 1):
            raise ValueError(f"workers must be an int in [1, num_envs], got {workers!r}")
        self.task = (task_class(num_envs, **options) if workers == 1
                     else TaskGroup(task_class, num_envs, int(workers), **options))
        self.num_envs = self.task.copies
        self.single_observation_space = self.task.observation_space
        self.single_action_space = self.task.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        limit = self.task.max_episode_steps if max_episode_steps is None else max_episode_steps
        if not isinstance(limit, (int, np.integer)) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"max_episode_steps must be an int >= 1, got {limit!r}")
        self.max_episode_steps = int(limit)
        self._rngs = None
        self._steps = np.zeros(self.num_envs, dtype=np.int64)

    def reset(self, *, seed: int | list | None = None, options: dict | None = None):
        """Reset every copy: seed an int (copy i gets seed + i), a list of num_envs seeds or
        None; a copy without a seed keeps drawing from its own generator (fresh entropy the
        first time)."""
        n = self.num_envs
        # VectorEnv's own generator (np_random: seeded by an int seed, as gymnasium's are)
        super().reset(seed=int(seed) if isinstance(seed, (int, np.integer)) else None)
        if seed is None:
            seeds = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"reset: seed must be an int, None or a list of {n} seeds, "
                                 f"got {len(seeds)} seeds")
        if self._rngs is None or seed is not None:
            self._rngs = [seeding.np_random(s)[0] if s is not None or self._rngs is None
                          else self._rngs[i] for i, s in enumerate(seeds)]
        self.task.reset_copies(range(n), self._rngs)
        self._steps[:] = 0
        return self.task.observe(), {}

    def step(self, actions):
        if self._rngs is None:
            raise RuntimeError(f"{self.task.name}: call reset() before step()")
        task = self.task
        obs, reward, terminated, success = task.step(task.check_actions(actions, batched=True))
        self._steps += 1
        truncated = self._steps >= self.max_episode_steps    # as gymnasium's TimeLimit
        infos = {}
        if success is not None:
            infos["is_success"] = success
            infos["_is_success"] = np.ones(self.num_envs, dtype=bool)
        ended = np.flatnonzero(terminated | truncated)
        if ended.size:
            final = np.full(self.num_envs, None, dtype=object)
            for i in ended:
                final[i] = obs[i].copy()
            task.reset_copies(ended.tolist(), [self._rngs[i] for i in ended])
            obs = task.observe()
            self._steps[ended] = 0
            mask = np.zeros(self.num_envs, dtype=bool)
            mask[ended] = True
            infos["final_obs"], infos["_final_obs"] = final, mask
        return obs, reward, terminated, truncated, infos

    def close_extras(self, **kwargs):
        if isinstance(self.task, TaskGroup):
            self.task.close()
        self.task = None


# gymnasium's vector entry points of the registered ids (sim_node/gym/__init__.py)
def cartpole_vector(num_envs: int = 1, **options) -> TaskVectorEnv:
    from sim_node.gym.cartpole import CartPoleTask
    return TaskVectorEnv(CartPoleTask, num_envs, **options)


def panda_reach_vector(num_envs: int = 1, **options) -> TaskVectorEnv:
    from sim_node.gym.panda_reach import PandaReachTask
    return TaskVectorEnv(PandaReachTask, num_envs, **options)


def ant_vector(num_envs: int = 1, **options) -> TaskVectorEnv:
    from sim_node.gym.ant import AntTask
    return TaskVectorEnv(AntTask, num_envs, **options)
